/* The C API from plain C99: every operation round-trips against encode(), bad input gets its
 * specific status with nothing written. Exits nonzero on the first failure. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ecjit/ecjit_c.h"

#define K 6
#define M 3
#define N (K + M)
#define LEN 4651

static int failures = 0;
#define CHECK(cond)                                                              \
  do {                                                                           \
    if (!(cond)) {                                                               \
      fprintf(stderr, "%s:%d: CHECK failed: %s (%s)\n", __FILE__, __LINE__, #cond, \
              ecjit_last_error());                                               \
      ++failures;                                                                \
    }                                                                            \
  } while (0)

static unsigned char bufs[N][LEN], orig[N][LEN];

int main(void) {
  ecjit_jit_options opt;
  ecjit_jit *jit = NULL;
  ecjit_codec *codec = NULL;
  uint8_t *shards[N];
  const uint8_t *cshards[N];
  unsigned i, s;
  size_t b;
  uint32_t x = 12345;

  ecjit_jit_options_init(&opt);
  opt.disk_cache = 0;
  CHECK(ecjit_jit_create(&opt, &jit) == ECJIT_OK);
  CHECK(ecjit_codec_create(jit, "rs-vand:k=6,m=3,gf=8", &codec) == ECJIT_OK);
  CHECK(ecjit_codec_create(jit, "rs-vand:k=0", &(ecjit_codec *){NULL}) == ECJIT_INVALID_SPEC);
  if (!codec) return 1;
  CHECK(ecjit_codec_k(codec) == K && ecjit_codec_m(codec) == M);
  CHECK(strcmp(ecjit_codec_spec(codec), "rs-vand:k=6,m=3,gf=8") == 0);
  CHECK(ecjit_codec_spec(NULL) == NULL);
  {
    /* packet=auto: the codec's spec names the packet timed (one of 32 .. 2048 bytes). */
    ecjit_codec *ac = NULL;
    CHECK(ecjit_codec_create(jit, "cauchy-good:k=4,m=2,w=8,packet=auto", &ac) == ECJIT_OK);
    if (ac) {
      const char *spec = ecjit_codec_spec(ac);
      const char *packet = spec ? strstr(spec, ",packet=") : NULL;
      CHECK(packet != NULL && strstr(spec, "auto") == NULL);
      if (packet) {
        const long bytes = strtol(packet + 8, NULL, 10);
        CHECK(bytes >= 32 && bytes <= 2048 && (bytes & (bytes - 1)) == 0);
        CHECK(ecjit_codec_symbol_bytes(ac) == 8u * (unsigned)bytes);
      }
      ecjit_codec_destroy(ac);
    }
  }

  for (s = 0; s < N; ++s) {
    shards[s] = bufs[s];
    cshards[s] = bufs[s];
  }
  for (s = 0; s < K; ++s)
    for (b = 0; b < LEN; ++b) bufs[s][b] = (unsigned char)((x = x * 1103515245u + 12345u) >> 16);
  CHECK(ecjit_encode(codec, cshards, shards + K, LEN) == ECJIT_OK);
  memcpy(orig, bufs, sizeof bufs);

  { /* verify, then a flipped bit */
    int match = 0;
    size_t off = 0;
    CHECK(ecjit_verify(codec, cshards, LEN, &match, &off) == ECJIT_OK && match == 1 && off == LEN);
    bufs[7][100] ^= 4;
    CHECK(ecjit_verify(codec, cshards, LEN, &match, &off) == ECJIT_OK && match == 0 && off <= 100);
    bufs[7][100] ^= 4;
  }
  { /* reconstruct, reconstruct_data, reconstruct_some */
    unsigned char present[N];
    unsigned wanted[2] = {8, 1}, dup[2] = {1, 1}, bad[1] = {9};
    memset(present, 1, sizeof present);
    present[1] = present[4] = present[8] = 0;
    memset(bufs[1], 0, LEN), memset(bufs[4], 0, LEN), memset(bufs[8], 0, LEN);
    CHECK(ecjit_reconstruct(codec, shards, present, LEN) == ECJIT_OK);
    CHECK(memcmp(bufs, orig, sizeof bufs) == 0);
    memset(bufs[1], 0, LEN), memset(bufs[4], 0, LEN), memset(bufs[8], 0xEE, LEN);
    CHECK(ecjit_reconstruct_data(codec, shards, present, LEN) == ECJIT_OK);
    CHECK(memcmp(bufs[1], orig[1], LEN) == 0 && memcmp(bufs[4], orig[4], LEN) == 0 &&
          bufs[8][0] == 0xEE);
    memset(bufs[1], 0, LEN), memset(bufs[4], 0, LEN);
    CHECK(ecjit_reconstruct_some(codec, wanted, 2, shards, present, LEN) == ECJIT_OK);
    CHECK(memcmp(bufs[1], orig[1], LEN) == 0 && memcmp(bufs[8], orig[8], LEN) == 0 && bufs[4][0] == 0);
    memcpy(bufs[4], orig[4], LEN);
    CHECK(ecjit_reconstruct_some(codec, dup, 2, shards, present, LEN) == ECJIT_INVALID_ARGUMENT);
    CHECK(ecjit_reconstruct_some(codec, bad, 1, shards, present, LEN) == ECJIT_INVALID_ARGUMENT);
    present[0] = present[2] = 0;
    CHECK(ecjit_reconstruct(codec, shards, present, LEN) == ECJIT_TOO_MANY_ERASURES);
    CHECK(strstr(ecjit_last_error(), "too-many-erasures") != NULL);
    CHECK(memcmp(bufs, orig, sizeof bufs) == 0);
  }
  { /* minimum_to_decode */
    unsigned wanted[1] = {2}, avail[8] = {0, 1, 3, 4, 5, 6, 7, 8}, out[N];
    size_t count = 0;
    CHECK(ecjit_minimum_to_decode(codec, wanted, 1, avail, 8, out, &count) == ECJIT_OK);
    CHECK(count == K && out[0] == 0 && out[4] == 5 && out[5] == 6);
    CHECK(ecjit_minimum_to_decode(codec, avail, 1, avail, 8, out, &count) == ECJIT_OK);
    CHECK(count == 1 && out[0] == 0);
  }
  { /* update of shards 3 and 0 (unsorted), then encode_partial sums to encode */
    static unsigned char fresh[2][LEN], acc[M][LEN];
    unsigned changed[2] = {3, 0}, dup[2] = {0, 0};
    const uint8_t *olds[2] = {bufs[3], bufs[0]}, *news[2] = {fresh[0], fresh[1]};
    uint8_t *accs[M];
    int match = 0;
    memcpy(fresh[0], bufs[3], LEN);
    memcpy(fresh[1], bufs[0], LEN);
    for (b = 10; b < 900; ++b) fresh[0][b] ^= (unsigned char)b, fresh[1][b + 2000] ^= 0x5A;
    CHECK(ecjit_update(codec, dup, 2, olds, news, shards + K, LEN) == ECJIT_INVALID_ARGUMENT);
    CHECK(memcmp(bufs, orig, sizeof bufs) == 0);
    CHECK(ecjit_update(codec, changed, 2, olds, news, shards + K, LEN) == ECJIT_OK);
    memcpy(bufs[3], fresh[0], LEN);
    memcpy(bufs[0], fresh[1], LEN);
    CHECK(ecjit_verify(codec, cshards, LEN, &match, NULL) == ECJIT_OK && match == 1);
    for (i = 0; i < M; ++i) accs[i] = acc[i];
    for (s = K; s-- > 0;) CHECK(ecjit_encode_partial(codec, s, bufs[s], accs, LEN) == ECJIT_OK);
    for (i = 0; i < M; ++i) CHECK(memcmp(acc[i], bufs[K + i], LEN) == 0);
    CHECK(ecjit_encode_partial(codec, K, bufs[0], accs, LEN) == ECJIT_INVALID_ARGUMENT);
  }
  { /* signatures */
    uint64_t sigs[N * 2];
    int match = 0;
    for (s = 0; s < N; ++s) CHECK(ecjit_signature(codec, bufs[s], LEN, sigs + 2 * s, 2) == ECJIT_OK);
    CHECK(ecjit_verify_by_signatures(codec, sigs, 2, &match) == ECJIT_OK && match == 1);
    bufs[5][77] ^= 1;
    CHECK(ecjit_signature(codec, bufs[5], LEN, sigs + 10, 2) == ECJIT_OK);
    CHECK(ecjit_verify_by_signatures(codec, sigs, 2, &match) == ECJIT_OK && match == 0);
    CHECK(ecjit_signature(codec, bufs[5], LEN, sigs, 0) == ECJIT_INVALID_ARGUMENT);
    CHECK(ecjit_signature(codec, NULL, LEN, sigs, 1) == ECJIT_NULL_POINTER);
  }
  CHECK(ecjit_encode(NULL, cshards, shards + K, LEN) == ECJIT_NULL_POINTER);
  CHECK(strcmp(ecjit_status_name(ECJIT_SHARD_SIZE), "shard-size") == 0);
  { /* threads and tuning options reach the Jit; after tuning the parity is unchanged */
    ecjit_jit_options o2;
    ecjit_jit *j2 = NULL;
    ecjit_codec *c2 = NULL;
    uint8_t par[M][LEN];
    uint8_t *pp[M];
    ecjit_jit_options_init(&o2);
    CHECK(o2.threads == 1 && o2.tune == 1 && o2.tune_in_background == 1);
    o2.disk_cache = 0;
    o2.threads = 5000;
    CHECK(ecjit_jit_create(&o2, &j2) == ECJIT_INVALID_ARGUMENT);
    CHECK(strstr(ecjit_last_error(), "threads 5000") != NULL);
    o2.threads = 2;
    CHECK(ecjit_jit_create(&o2, &j2) == ECJIT_OK);
    CHECK(ecjit_codec_create(j2, "rs-vand:k=6,m=3,gf=8", &c2) == ECJIT_OK);
    ecjit_jit_wait_for_tuning(j2);
    ecjit_jit_wait_for_tuning(NULL);
    for (i = 0; i < M; ++i) pp[i] = par[i];
    CHECK(ecjit_encode(c2, cshards, pp, LEN) == ECJIT_OK);
    CHECK(ecjit_encode(codec, cshards, shards + K, LEN) == ECJIT_OK);
    for (i = 0; i < M; ++i) CHECK(memcmp(par[i], bufs[K + i], LEN) == 0);
    ecjit_codec_destroy(c2);
    ecjit_jit_destroy(j2);
  }

  ecjit_codec_destroy(codec);

  /* An XOR bit-matrix code through the same calls: lengths in blocks (w x packet bytes). */
  {
    ecjit_codec *xc = NULL;
    CHECK(ecjit_codec_create(jit, "cauchy-good:k=6,m=3,w=8,packet=64", &xc) == ECJIT_OK);
    if (xc) {
      const unsigned unit = ecjit_codec_symbol_bytes(xc); /* 8 x 64 = 512 */
      const size_t len = 8 * (size_t)unit;
      unsigned char *mem = malloc(N * len), *copy = malloc(N * len);
      unsigned char *xs[N];
      const unsigned char *cxs[N];
      unsigned char present[N];
      unsigned i;
      size_t j;
      CHECK(unit == 512);
      for (i = 0; i < N; ++i) {
        xs[i] = mem + i * len;
        cxs[i] = xs[i];
        present[i] = 1;
        for (j = 0; j < len; ++j) xs[i][j] = (unsigned char)(i * 37 + j * 11);
      }
      CHECK(ecjit_encode(xc, cxs, xs + K, len) == ECJIT_OK);
      CHECK(ecjit_encode(xc, cxs, xs + K, len - 8) == ECJIT_SHARD_SIZE);
      memcpy(copy, mem, N * len);
      present[0] = present[4] = present[7] = 0;
      memset(xs[0], 0, len);
      memset(xs[4], 0, len);
      memset(xs[7], 0, len);
      CHECK(ecjit_reconstruct(xc, xs, present, len) == ECJIT_OK);
      CHECK(memcmp(mem, copy, N * len) == 0);
      free(mem);
      free(copy);
    }
    ecjit_codec_destroy(xc);
  }
  /* An array code (X-Code p = 5: 5 disks of 5 rows, the last 2 rows parity) through the
   * array calls: encode, verify, a damaged byte found, two disks rebuilt, an update. */
  {
    ecjit_array_codec *ac = NULL;
    CHECK(ecjit_array_codec_create(jit, "xcode:p=9", &ac) == ECJIT_INVALID_SPEC && ac == NULL);
    CHECK(strstr(ecjit_last_error(), "prime") != NULL);
    CHECK(ecjit_array_codec_create(jit, "xcode:p=5,element=8", &ac) == ECJIT_OK);
    if (ac) {
      const unsigned disks = ecjit_array_codec_disks(ac), rows = ecjit_array_codec_rows(ac);
      const size_t stripe = rows * ecjit_array_codec_element_bytes(ac), len = 4 * stripe;
      unsigned char *mem = malloc(disks * len), *copy = malloc(disks * len), *fresh = malloc(len);
      unsigned char *ds[8];
      const unsigned char *cds[8];
      unsigned char present[8];
      unsigned i, bad_disk = 99;
      size_t j, off = 0;
      int match = -1;
      CHECK(disks == 5 && rows == 5 && stripe == 40);
      CHECK(ecjit_array_codec_is_parity(ac, 4, 0) == 1 && ecjit_array_codec_is_parity(ac, 0, 0) == 0);
      CHECK(ecjit_array_codec_is_parity(NULL, 4, 0) == 0 && ecjit_array_codec_is_parity(ac, 9, 0) == 0);
      for (i = 0; i < disks; ++i) {
        ds[i] = mem + i * len;
        cds[i] = ds[i];
        present[i] = 1;
        for (j = 0; j < len; ++j) ds[i][j] = (unsigned char)(i * 29 + j * 7);
      }
      CHECK(ecjit_array_encode(ac, ds, len) == ECJIT_OK);
      CHECK(ecjit_array_encode(ac, ds, len - 8) == ECJIT_SHARD_SIZE);
      CHECK(ecjit_array_verify(ac, cds, len, &match, &off, &bad_disk) == ECJIT_OK && match == 1);
      ds[3][stripe + 4 * 8 + 2] ^= 0x10; /* stripe 1, row 4 (parity), byte 2 of disk 3 */
      CHECK(ecjit_array_verify(ac, cds, len, &match, &off, &bad_disk) == ECJIT_OK && match == 0);
      CHECK(off == stripe + 4 * 8 + 2 && bad_disk == 3);
      ds[3][stripe + 4 * 8 + 2] ^= 0x10;
      memcpy(copy, mem, disks * len);
      present[1] = present[3] = 0;
      memset(ds[1], 0, len);
      memset(ds[3], 0, len);
      {  /* a degraded read of disk 1 with disks 1 and 3 absent (their pointers NULL) */
        const unsigned char *partial[8];
        unsigned char got[50];
        size_t cells = 0;
        for (i = 0; i < disks; ++i) partial[i] = present[i] ? cds[i] : NULL;
        CHECK(ecjit_array_read(ac, partial, present, len, 1, stripe + 3, sizeof got, got, &cells) == ECJIT_OK);
        CHECK(memcmp(got, copy + 1 * len + stripe + 3, sizeof got) == 0 && cells > 0);
        CHECK(ecjit_array_read(ac, partial, present, len, 1, len - 8, 9, got, NULL) == ECJIT_INVALID_ARGUMENT);
        CHECK(ecjit_array_read(ac, partial, NULL, len, 1, 0, 8, got, NULL) == ECJIT_NULL_POINTER);
      }
      CHECK(ecjit_array_reconstruct(ac, ds, present, len) == ECJIT_OK);
      CHECK(memcmp(mem, copy, disks * len) == 0);
      CHECK(ecjit_array_reconstruct(ac, ds, NULL, len) == ECJIT_NULL_POINTER);
      for (j = 0; j < len; ++j) fresh[j] = (unsigned char)(j * 13 + 1);
      CHECK(ecjit_array_update(ac, ds, 2, fresh, len) == ECJIT_OK);
      CHECK(ecjit_array_verify(ac, cds, len, &match, NULL, NULL) == ECJIT_OK && match == 1);
      CHECK(ds[2][0] == fresh[0] && ds[2][stripe + 8] == fresh[stripe + 8]); /* data cells written */
      CHECK(ecjit_array_update(ac, ds, 5, fresh, len) == ECJIT_INVALID_ARGUMENT);
      CHECK(ecjit_array_update(NULL, ds, 0, fresh, len) == ECJIT_NULL_POINTER);
      free(mem);
      free(copy);
      free(fresh);
    }
    ecjit_array_codec_destroy(ac);
    ecjit_array_codec_destroy(NULL);
  }
  ecjit_jit_destroy(jit);
  if (failures) fprintf(stderr, "%d checks failed\n", failures);
  else printf("c_api_test: all checks passed\n");
  return failures ? 1 : 0;
}
