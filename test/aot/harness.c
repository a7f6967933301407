/* harness.c: runs the kernels of an `ecjit aot --prefix codec` object on a foreign ISA and prints every shard as hex.
 *
 * Built by test/aot/aot_emulated_test.cpp with a cross compiler against codec.h (the AOT
 * header), linked with the AOT object and the runtime C file, and run under qemu-user. For
 * each length it fills the k data shards with fixed pseudo-random bytes and prints:
 *   L <len> <misalign>                  a new length (buffers start <misalign> bytes past alignment)
 *   I <shard> <hex>                     a data shard
 *   P <shard> <hex>                     a parity shard from the encoder
 *   D <erased> <shard> <hex>            a shard rebuilt by the specialised decoder of <erased>
 *   C <erased> <rc> <sources> <hex>     the runtime C's decode matrix for <erased>
 *   G <erased> <shard> <hex>            a shard rebuilt by the generic kernel with that matrix
 *   Q <shard> <hex>                     a parity shard from the generic kernel with the parity matrix
 *   E <what>                            a kernel wrote past len (guard bytes changed)
 *   R <failed> <disk> <offset> <hex>    an array code's ranged degraded read (run_reads)
 *   X <status>                          the end (status 0)
 * <erased> and <sources> are comma-separated shard lists, "-" when empty. An array code's
 * header (CODEC_DISKS) gets its own loop (below): I, P and D lines over disks. The host test
 * recomputes everything with the reference codec and compares byte for byte.
 * Compile with -DECJIT_FREESTANDING for targets without a C library (Hexagon): then the
 * harness has its own _start and makes the write / exit_group system calls itself.
 * No division or modulo anywhere (Hexagon has no divide instruction, and no compiler-rt).
 */
#include <stddef.h>
#include <stdint.h>

#include "codec.h"

#ifdef ECJIT_FREESTANDING
#if !defined(__hexagon__)
#error "the freestanding harness knows the system calls of Hexagon Linux only"
#endif
static long sys_call3(long nr, long a, long b, long c) {
  register long r0 __asm__("r0") = a;
  register long r1 __asm__("r1") = b;
  register long r2 __asm__("r2") = c;
  register long r6 __asm__("r6") = nr;
  __asm__ volatile("trap0(#1)" : "+r"(r0) : "r"(r1), "r"(r2), "r"(r6) : "memory");
  return r0;
}
static void sys_write(const char *p, size_t n) {
  while (n > 0) {
    long w = sys_call3(64 /* write */, 1, (long)p, (long)n);
    if (w <= 0) return;
    p += w;
    n -= (size_t)w;
  }
}
static void sys_exit(int status) {
  for (;;) sys_call3(94 /* exit_group */, status, 0, 0);
}
/* The compiler may emit calls to these even in freestanding code. */
void *memset(void *d, int c, size_t n);
void *memcpy(void *d, const void *s, size_t n);
void *memmove(void *d, const void *s, size_t n);
void *memset(void *d, int c, size_t n) {
  volatile unsigned char *p = (volatile unsigned char *)d;
  while (n--) *p++ = (unsigned char)c;
  return d;
}
void *memcpy(void *d, const void *s, size_t n) {
  volatile unsigned char *p = (volatile unsigned char *)d;
  const unsigned char *q = (const unsigned char *)s;
  while (n--) *p++ = *q++;
  return d;
}
void *memmove(void *d, const void *s, size_t n) {
  volatile unsigned char *p = (volatile unsigned char *)d;
  const unsigned char *q = (const unsigned char *)s;
  if (p < q) {
    while (n--) *p++ = *q++;
  } else {
    while (n--) p[n] = q[n];
  }
  return d;
}
#else
#include <unistd.h>
static void sys_write(const char *p, size_t n) {
  while (n > 0) {
    ssize_t w = write(1, p, n);
    if (w <= 0) return;
    p += w;
    n -= (size_t)w;
  }
}
static void sys_exit(int status) { _exit(status); }
#endif

#define SB CODEC_SYMBOL_BYTES
#ifdef CODEC_BLOCK_BYTES
/* A bit-matrix code: lengths are whole blocks of W x PACKET bytes (SB is the block). */
#define MAX_SYMBOLS 9
#else
#define MAX_SYMBOLS 4651
#endif
#define GUARD 64
#define MAX_BYTES (MAX_SYMBOLS * SB)
/* 64 bytes of slack before the front guard, 1 of misalignment, rounded up */
#define SLOT (MAX_BYTES + 2 * GUARD + 64 + 8)
#define GUARD_BYTE 0xA5

/* Symbols per shard; bytes = symbols * SB. 1: one symbol; 31, 200: shorter than / a few
 * vectors; 4651: many vectors plus an odd remainder. */
#ifdef CODEC_BLOCK_BYTES
static const unsigned kLengths[] = {1, 2, 3, 9};
#else
static const unsigned kLengths[] = {1, 31, 200, 4651};
#endif

/* ---- buffered output ---- */
static char out_buf[1 << 16];
static size_t out_len;
static void flush_out(void) {
  sys_write(out_buf, out_len);
  out_len = 0;
}
static void put_char(char c) {
  if (out_len == sizeof out_buf) flush_out();
  out_buf[out_len++] = c;
}
static void put_str(const char *s) {
  while (*s) put_char(*s++);
}
static void put_uint(unsigned long v) {
  char tmp[24];
  int n = 0;
  do {
    /* v / 10 by repeated subtraction: no divide instruction needed, and the numbers are small */
    unsigned long q = 0, r = v;
    while (r >= 10) {
      r -= 10;
      ++q;
    }
    tmp[n++] = (char)('0' + r);
    v = q;
  } while (v);
  while (n) put_char(tmp[--n]);
}
static void put_hex(const uint8_t *p, size_t n) {
  static const char digits[] = "0123456789abcdef";
  size_t i;
  for (i = 0; i < n; ++i) {
    put_char(digits[p[i] >> 4]);
    put_char(digits[p[i] & 15]);
  }
}
static void put_list(const unsigned *v, unsigned n) {
  unsigned i;
  if (n == 0) put_char('-');
  for (i = 0; i < n; ++i) {
    if (i) put_char(',');
    put_uint(v[i]);
  }
}

/* ---- data ---- */
static uint64_t rng_state;
static uint64_t rng_next(void) { /* xorshift64* */
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return rng_state * 0x2545F4914F6CDD1Dull;
}

/* Every buffer lives in a slot with GUARD bytes of GUARD_BYTE before and after its data. */
static uint8_t shard_mem[CODEC_N][SLOT];  /* the k data shards, then the m parity shards */
static uint8_t work_mem[CODEC_N][SLOT];   /* outputs of decoders */
static uint8_t *shard[CODEC_N];
static uint8_t *work[CODEC_N];
static size_t cur_len;
static int failed;

static void arm_guards(uint8_t *const *bufs, unsigned n, size_t len) {
  unsigned i;
  size_t j;
  for (i = 0; i < n; ++i) {
    for (j = 0; j < GUARD; ++j) bufs[i][(ptrdiff_t)j - GUARD] = GUARD_BYTE;
    for (j = 0; j < len + GUARD; ++j) bufs[i][j] = GUARD_BYTE;
  }
}
static void check_guards(uint8_t *const *bufs, unsigned n, size_t len, const char *what) {
  unsigned i;
  size_t j;
  for (i = 0; i < n; ++i)
    for (j = 0; j < GUARD; ++j)
      if (bufs[i][(ptrdiff_t)j - GUARD] != GUARD_BYTE || bufs[i][len + j] != GUARD_BYTE) {
        put_str("E ");
        put_str(what);
        put_str(" buffer ");
        put_uint(i);
        put_str(bufs[i][(ptrdiff_t)j - GUARD] != GUARD_BYTE ? " before " : " after ");
        put_uint(j);
        put_char('\n');
        failed = 1;
        return;
      }
}

static void print_shard(const char *tag, const unsigned *set, unsigned nset, unsigned s,
                        const uint8_t *p) {
  put_str(tag);
  put_char(' ');
  if (set) {
    put_list(set, nset);
    put_char(' ');
  }
  put_uint(s);
  put_char(' ');
  put_hex(p, cur_len);
  put_char('\n');
}

/* Length li: buffers placed (odd lengths also start at odd addresses), the L line printed,
 * the generator seeded and the shards' guards armed. Returns the length in bytes. */
static size_t start_length(unsigned li) {
  const size_t len = (size_t)kLengths[li] * SB;
  const unsigned misalign = li & 1 ? 1 : 0;
  unsigned s;
  cur_len = len;
  for (s = 0; s < CODEC_N; ++s) {
    shard[s] = shard_mem[s] + GUARD + 64 + misalign;
    work[s] = work_mem[s] + GUARD + 64 + misalign;
  }
  put_str("L ");
  put_uint(len);
  put_char(' ');
  put_uint(misalign);
  put_char('\n');
  rng_state = 0x9E3779B97F4A7C15ull ^ ((uint64_t)(li + 1) << 32);
  arm_guards(shard, CODEC_N, len);
  return len;
}

#ifdef CODEC_DISKS
/* An array code (xcode, bpcode, ...): every kernel works in place on the disk array. For each
 * length (whole stripes) every disk is filled with pseudo-random bytes, data and parity cells
 * alike, and printed as "I <disk> <hex>"; the encoder runs and every disk is printed as "P";
 * then per rebuild the encoded disks are copied, the failed ones overwritten with other
 * bytes, the rebuild runs and each failed disk is printed as "D <failed> <disk> <hex>"; then
 * each read kernel's ranged reads (run_reads) as R lines. */
#ifdef CODEC_READ_COUNT
/* Ranged degraded reads through codec_read_range with read r's failed disks absent (NULL in
 * the disk array, so a read of them faults): of the lost disk the whole disk, all but its first
 * and last byte, a range across two cells and one across two stripes (or inside the only one);
 * of a present disk all but a few bytes; then kRandomReads ranges of the lost disk drawn at
 * random. Each printed as "R <failed> <disk> <offset> <hex>", read into a guarded buffer
 * (partial stripes through a guarded scratch stripe). */
#define kRandomReads 8
static uint8_t read_mem[SLOT];
static uint8_t scratch_mem[CODEC_STRIPE_BYTES + 2 * GUARD];
/* A number in [0, n), n >= 1, without a division: masked draws until one fits. */
static size_t draw_below(size_t n) {
  size_t mask = 0;
  while (mask < n - 1) mask = mask << 1 | 1;
  for (;;) {
    const size_t v = (size_t)(rng_next() >> 16) & mask;
    if (v < n) return v;
  }
}
static void run_reads(const struct codec_read *r, size_t len, unsigned misalign) {
  const size_t S = CODEC_STRIPE_BYTES, E = CODEC_ELEMENT;
  const uint8_t *disks[CODEC_DISKS];
  uint8_t *out = read_mem + GUARD + 64 + misalign, *scratch = scratch_mem + GUARD;
  unsigned s, k, present = 0, all[CODEC_DISKS];
  size_t ranges[5 + kRandomReads][2];
  for (s = 0; s < CODEC_DISKS; ++s) disks[s] = shard[s], all[s] = s;
  for (s = 0; s < r->n_failed; ++s) disks[r->failed[s]] = 0;
  while (!disks[present]) ++present;
  ranges[0][0] = 0, ranges[0][1] = len;
  ranges[1][0] = 1, ranges[1][1] = len - 2;
  ranges[2][0] = E + 1, ranges[2][1] = len - (E + 1) < E ? len - (E + 1) : E;
  ranges[3][0] = len > S ? S - 5 : 2, ranges[3][1] = len > S ? 10 : 3;
  ranges[4][0] = 3, ranges[4][1] = len - 7;
  for (k = 5; k < 5 + kRandomReads; ++k) {
    ranges[k][0] = draw_below(len);
    ranges[k][1] = 1 + draw_below(len - ranges[k][0]);
  }
  for (k = 0; k < 5 + kRandomReads; ++k) {
    const unsigned disk = k == 4 ? present : r->disk;
    size_t j;
    int rc;
    for (j = 0; j < GUARD; ++j) scratch_mem[j] = scratch_mem[GUARD + S + j] = GUARD_BYTE;
    arm_guards(&out, 1, ranges[k][1]);
    rc = codec_read_range(disks, r->failed, r->n_failed, disk, len, ranges[k][0], ranges[k][1], out, scratch);
    check_guards(&out, 1, ranges[k][1], "read");
    for (j = 0; j < GUARD; ++j)
      if (scratch_mem[j] != GUARD_BYTE || scratch_mem[GUARD + S + j] != GUARD_BYTE) {
        put_str("E read scratch\n");
        failed = 1;
        break;
      }
    if (rc != CODEC_READ_OK) {
      put_str("E read status ");
      put_uint((unsigned long)(-rc));
      put_char('\n');
      failed = 1;
      continue;
    }
    put_str("R ");
    put_list(r->failed, r->n_failed);
    put_char(' ');
    put_uint(disk);
    put_char(' ');
    put_uint((unsigned long)ranges[k][0]);
    put_char(' ');
    put_hex(out, ranges[k][1]);
    put_char('\n');
  }
  /* The refusals: a range past len, no kernel with every disk failed, no scratch for a part. */
  if (codec_read_range(disks, r->failed, r->n_failed, r->disk, len, 1, len, out, scratch) != CODEC_READ_RANGE ||
      codec_read_range(disks, all, CODEC_DISKS, r->disk, len, 0, len, out, scratch) != CODEC_READ_NO_KERNEL ||
      codec_read_range(disks, r->failed, r->n_failed, r->disk, len, 1, 2, out, 0) != CODEC_READ_SCRATCH) {
    put_str("E read refusals\n");
    failed = 1;
  }
}
#endif

static int harness_main(void) {
  unsigned li, i, s;
  (void)i; /* unused by an encoder-only object (rs-fft) */
  for (li = 0; li < sizeof kLengths / sizeof kLengths[0]; ++li) {
    const size_t len = start_length(li);
    size_t j;
    for (s = 0; s < CODEC_N; ++s) {
      for (j = 0; j < len; ++j) shard[s][j] = (uint8_t)(rng_next() >> 56);
      print_shard("I", 0, 0, s, shard[s]);
    }
    CODEC_ENCODE((const uint8_t *const *)shard, shard, len);
    check_guards(shard, CODEC_N, len, "encode");
    for (s = 0; s < CODEC_N; ++s) print_shard("P", 0, 0, s, shard[s]);
    for (i = 0; i < CODEC_DECODER_COUNT; ++i) {
      const struct codec_decoder *d = &codec_decoders[i];
      arm_guards(work, CODEC_N, len);
      for (s = 0; s < CODEC_N; ++s)
        for (j = 0; j < len; ++j) work[s][j] = shard[s][j];
      for (s = 0; s < d->n_erased; ++s)
        for (j = 0; j < len; ++j) work[d->erased[s]][j] = (uint8_t)(rng_next() >> 56);
      d->fn((const uint8_t *const *)work, work, len);
      check_guards(work, CODEC_N, len, "rebuild");
      for (s = 0; s < d->n_erased; ++s) print_shard("D", d->erased, d->n_erased, d->erased[s], work[d->erased[s]]);
    }
#ifdef CODEC_READ_COUNT
    for (i = 0; i < CODEC_READ_COUNT; ++i) run_reads(&codec_reads[i], len, li & 1);
#endif
  }
  put_str("X ");
  put_uint((unsigned long)failed);
  put_char('\n');
  flush_out();
  return failed;
}
#else
#if CODEC_HAS_GENERIC && CODEC_HAS_RUNTIME_C
static uint8_t coeff_mem[CODEC_M * CODEC_K * SB + 1];

static void run_generic(const unsigned *erased, unsigned ne) {
  unsigned char present[CODEC_N];
  unsigned sources[CODEC_K], targets[CODEC_M], nt = 0, i;
  const uint8_t *in[CODEC_K];
  uint8_t *out[CODEC_M];
  uint8_t *coeffs = coeff_mem + 1; /* deliberately misaligned */
  int rc;
  for (i = 0; i < CODEC_N; ++i) present[i] = 1;
  for (i = 0; i < ne; ++i) present[erased[i]] = 0;
  rc = codec_decode_matrix(present, sources, targets, &nt, coeffs);
  put_str("C ");
  put_list(erased, ne);
  put_char(' ');
  put_uint((unsigned long)(rc < 0 ? 100 - rc : rc));
  put_char(' ');
  if (rc != CODEC_RT_OK) {
    put_str("- -\n");
    return;
  }
  put_list(sources, CODEC_K);
  put_char(' ');
  put_hex(coeffs, (size_t)nt * CODEC_K * SB);
  put_char('\n');
  for (i = 0; i < CODEC_K; ++i) in[i] = shard[sources[i]];
  for (i = 0; i < nt; ++i) out[i] = work[i];
  arm_guards(work, nt, cur_len);
  CODEC_GENERIC(coeffs, nt, CODEC_K, in, out, cur_len);
  check_guards(work, nt, cur_len, "generic");
  for (i = 0; i < nt; ++i) print_shard("G", erased, ne, targets[i], out[i]);
}
#endif

static int harness_main(void) {
  unsigned li, i, s;
  (void)i; /* unused by an encoder-only object (rs-fft) */
  for (li = 0; li < sizeof kLengths / sizeof kLengths[0]; ++li) {
    const size_t len = start_length(li);
    for (s = 0; s < CODEC_K; ++s) {
      size_t j;
      for (j = 0; j < len; ++j) shard[s][j] = (uint8_t)(rng_next() >> 56);
      print_shard("I", 0, 0, s, shard[s]);
    }
    /* encode */
    CODEC_ENCODE((const uint8_t *const *)shard, shard + CODEC_K, len);
    check_guards(shard, CODEC_N, len, "encode");
    for (s = CODEC_K; s < CODEC_N; ++s) print_shard("P", 0, 0, s, shard[s]);
#if CODEC_DECODER_COUNT > 0
    /* every specialised decoder */
    for (i = 0; i < CODEC_DECODER_COUNT; ++i) {
      const struct codec_decoder *d = &codec_decoders[i];
      const uint8_t *in[CODEC_K];
      unsigned j;
      for (j = 0; j < CODEC_K; ++j) in[j] = shard[d->inputs[j]];
      arm_guards(work, d->n_erased, len);
      d->fn(in, work, len);
      check_guards(work, d->n_erased, len, "decoder");
      for (j = 0; j < d->n_erased; ++j) print_shard("D", d->erased, d->n_erased, d->erased[j], work[j]);
    }
#endif
#if CODEC_HAS_GENERIC
    /* the generic kernel as an encoder: the parity matrix as little-endian symbols */
    {
      static uint8_t pm[CODEC_M * CODEC_K * SB];
      unsigned r, c, b;
      for (r = 0; r < CODEC_M; ++r)
        for (c = 0; c < CODEC_K; ++c)
          for (b = 0; b < SB; ++b)
            pm[(r * CODEC_K + c) * SB + b] = (uint8_t)((uint64_t)codec_parity_matrix[r][c] >> (8 * b));
      arm_guards(work, CODEC_M, len);
      CODEC_GENERIC(pm, CODEC_M, CODEC_K, (const uint8_t *const *)shard, work, len);
      check_guards(work, CODEC_M, len, "generic encode");
      for (s = 0; s < CODEC_M; ++s) print_shard("Q", 0, 0, CODEC_K + s, work[s]);
    }
#endif
#if CODEC_HAS_GENERIC && CODEC_HAS_RUNTIME_C
    /* the generic kernel: the decoders' sets, every single erasure, the last m shards
     * (all parity), the first m shards, and one too many */
    for (i = 0; i < CODEC_DECODER_COUNT; ++i)
      run_generic(codec_decoders[i].erased, codec_decoders[i].n_erased);
    for (s = 0; s < CODEC_N; ++s) run_generic(&s, 1);
    {
      unsigned set[CODEC_M + 1];
      for (i = 0; i < CODEC_M; ++i) set[i] = CODEC_K + i;
      run_generic(set, CODEC_M);
      for (i = 0; i <= CODEC_M && i < CODEC_N; ++i) set[i] = i;
      run_generic(set, CODEC_M);
      if (CODEC_M + 1 <= CODEC_N) run_generic(set, CODEC_M + 1);
    }
#endif
  }
  put_str("X ");
  put_uint((unsigned long)failed);
  put_char('\n');
  flush_out();
  return failed;
}
#endif /* CODEC_DISKS */

#ifdef ECJIT_FREESTANDING
void _start(void);
void _start(void) { sys_exit(harness_main()); }
#else
int main(void) {
  sys_exit(harness_main());
  return 1;
}
#endif
