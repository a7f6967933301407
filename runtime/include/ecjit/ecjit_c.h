/* ecjit C API: the C++ Jit / Codec behind opaque handles, for C callers and FFI (C99). */
#ifndef ECJIT_ECJIT_C_H
#define ECJIT_ECJIT_C_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Status codes: the values of ecjit::StatusCode (stable). Every int-returning call returns
 * one; on failure nothing has been written and ecjit_last_error() holds the message. */
#define ECJIT_OK 0
#define ECJIT_INVALID_SPEC 1
#define ECJIT_INVALID_ARGUMENT 2   /* also: a shard index out of range or listed twice */
#define ECJIT_NULL_POINTER 3
#define ECJIT_SHARD_COUNT 4
#define ECJIT_SHARD_SIZE 5
#define ECJIT_TOO_MANY_ERASURES 6
#define ECJIT_SINGULAR 7
#define ECJIT_UNSUPPORTED_TARGET 8
#define ECJIT_UNSUPPORTED 9
#define ECJIT_JIT_FAILURE 10
#define ECJIT_INTERNAL 11
#define ECJIT_IO_ERROR 12

typedef struct ecjit_jit ecjit_jit;     /* owns the JIT session and kernel caches */
typedef struct ecjit_codec ecjit_codec; /* one code; immutable, thread-safe */
typedef struct ecjit_array_codec ecjit_array_codec; /* an array code at element level; likewise */

typedef struct ecjit_jit_options {
  const char *target;        /* "host" (default when NULL), "host-avx2", ... */
  const char *strategy;      /* "auto" (default when NULL), "clmul-shift", ... */
  unsigned opt_level;        /* 0..3 */
  size_t max_cached_kernels; /* per codec, >= 1 (see ecjit::JitOptions) */
  int disk_cache;            /* nonzero: use the on-disk kernel cache */
  unsigned threads;          /* threads per call for large buffers, 0 = per hardware thread */
  int tune;                  /* nonzero: time the candidate strategies under "auto" */
  int tune_in_background;    /* nonzero: tune on a background thread (tiered) */
} ecjit_jit_options;

/* Fills the defaults of ecjit::JitOptions. */
void ecjit_jit_options_init(ecjit_jit_options *options);

/* The message of the last failed call on this thread ("" if none); valid until the next
 * ecjit call on this thread. */
const char *ecjit_last_error(void);
/* Short name of a status code, e.g. "too-many-erasures". */
const char *ecjit_status_name(int code);

/* options may be NULL (defaults). *out receives a handle to free with ecjit_jit_destroy.
 * Errors: ECJIT_NULL_POINTER, ECJIT_UNSUPPORTED_TARGET, ECJIT_INVALID_ARGUMENT,
 * ECJIT_JIT_FAILURE. */
int ecjit_jit_create(const ecjit_jit_options *options, ecjit_jit **out);
void ecjit_jit_destroy(ecjit_jit *jit); /* NULL is ignored; live codecs keep the JIT alive */
/* Blocks until background tunings queued so far have swapped their winners in
 * (ecjit::Jit::wait_for_tuning). NULL is ignored. */
void ecjit_jit_wait_for_tuning(ecjit_jit *jit);

/* spec: e.g. "rs-vand:k=10,m=4,gf=8". Errors: ECJIT_NULL_POINTER, ECJIT_INVALID_SPEC,
 * ECJIT_JIT_FAILURE. */
int ecjit_codec_create(ecjit_jit *jit, const char *spec, ecjit_codec **out);
void ecjit_codec_destroy(ecjit_codec *codec); /* NULL is ignored */
unsigned ecjit_codec_k(const ecjit_codec *codec);
unsigned ecjit_codec_m(const ecjit_codec *codec);
/* The unit of every len: the symbol, or a bit-matrix code's block of w x packet bytes. */
unsigned ecjit_codec_symbol_bytes(const ecjit_codec *codec);
/* The codec's spec in canonical form, owned by the codec (valid until it is destroyed; NULL
 * for NULL). With packet=auto it names the packet chosen: what readers of the data need. */
const char *ecjit_codec_spec(const ecjit_codec *codec);

/* The calls below have the contracts of the ecjit::Codec methods of the same names
 * (runtime/include/ecjit/codec.h, docs/operations.md). Shard arrays: data k, parity m,
 * shards n = k + m pointers. present: n bytes, nonzero = present. Index lists: shard
 * indices, each at most once (ECJIT_INVALID_ARGUMENT otherwise). */
int ecjit_encode(const ecjit_codec *codec, const uint8_t *const *data, uint8_t *const *parity,
                 size_t len);
int ecjit_reconstruct(const ecjit_codec *codec, uint8_t *const *shards,
                      const unsigned char *present, size_t len);
int ecjit_reconstruct_data(const ecjit_codec *codec, uint8_t *const *shards,
                           const unsigned char *present, size_t len);
int ecjit_reconstruct_some(const ecjit_codec *codec, const unsigned *wanted, size_t wanted_count,
                           uint8_t *const *shards, const unsigned char *present, size_t len);
/* out: room for n indices; *out_count receives how many were written (ascending). */
int ecjit_minimum_to_decode(const ecjit_codec *codec, const unsigned *wanted,
                            size_t wanted_count, const unsigned *available,
                            size_t available_count, unsigned *out, size_t *out_count);
/* changed: data indices in any order; old_data[i] / new_data[i] belong to changed[i]. */
int ecjit_update(const ecjit_codec *codec, const unsigned *changed, size_t count,
                 const uint8_t *const *old_data, const uint8_t *const *new_data,
                 uint8_t *const *parity, size_t len);
int ecjit_encode_partial(const ecjit_codec *codec, unsigned data_index, const uint8_t *shard,
                         uint8_t *const *parity_acc, size_t len);
/* *matches: 1 when the parity matches the data, else 0; mismatch_offset may be NULL. */
int ecjit_verify(const ecjit_codec *codec, const uint8_t *const *shards, size_t len,
                 int *matches, size_t *mismatch_offset);
int ecjit_signature(const ecjit_codec *codec, const uint8_t *shard, size_t len, uint64_t *sig,
                    unsigned components);
int ecjit_verify_by_signatures(const ecjit_codec *codec, const uint64_t *sigs,
                               unsigned components, int *matches);

/* Array codes whose parity shares the disks with the data (ecjit::ArrayCodec,
 * runtime/include/ecjit/array_codec.h): spec "xcode:p=7[,element=64]", families xcode,
 * bpcode, rdp, evenodd. disks: ecjit_array_codec_disks() pointers; len a multiple of
 * rows x element bytes. The calls have the contracts of the ArrayCodec methods. */
int ecjit_array_codec_create(ecjit_jit *jit, const char *spec, ecjit_array_codec **out);
void ecjit_array_codec_destroy(ecjit_array_codec *codec); /* NULL is ignored */
unsigned ecjit_array_codec_disks(const ecjit_array_codec *codec);
unsigned ecjit_array_codec_rows(const ecjit_array_codec *codec);
size_t ecjit_array_codec_element_bytes(const ecjit_array_codec *codec);
/* 1 when cell (row, disk) holds parity, else 0 (also for a NULL codec or out of range). */
int ecjit_array_codec_is_parity(const ecjit_array_codec *codec, unsigned row, unsigned disk);
int ecjit_array_encode(const ecjit_array_codec *codec, uint8_t *const *disks, size_t len);
/* present: disks bytes, nonzero = present. */
int ecjit_array_reconstruct(const ecjit_array_codec *codec, uint8_t *const *disks,
                            const unsigned char *present, size_t len);
/* A degraded read of [offset, offset + size) of one disk (ArrayCodec::read): absent disks'
 * pointers may be NULL; cells_read may be NULL. */
int ecjit_array_read(const ecjit_array_codec *codec, const uint8_t *const *disks,
                     const unsigned char *present, size_t len, unsigned disk, size_t offset,
                     size_t size, uint8_t *out, size_t *cells_read);
/* *matches: 1 when every parity cell matches; mismatch_offset / mismatch_disk may be NULL. */
int ecjit_array_verify(const ecjit_array_codec *codec, const uint8_t *const *disks, size_t len,
                       int *matches, size_t *mismatch_offset, unsigned *mismatch_disk);
int ecjit_array_update(const ecjit_array_codec *codec, uint8_t *const *disks, unsigned disk,
                       const uint8_t *new_data, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* ECJIT_ECJIT_C_H */
