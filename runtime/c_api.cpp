// The C API (ecjit/ecjit_c.h): opaque handles over Jit / Codec, Status codes as ints.
#include "ecjit/ecjit_c.h"

#include <algorithm>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "ecjit/ecjit.h"

struct ecjit_jit {
  std::shared_ptr<ecjit::Jit> jit;
};
struct ecjit_codec {
  std::shared_ptr<const ecjit::Codec> codec;
  std::string spec;  // codec->spec().to_string(), for ecjit_codec_spec
};
struct ecjit_array_codec {
  std::shared_ptr<const ecjit::ArrayCodec> codec;
};

namespace {

using ecjit::Status;
using ecjit::StatusCode;

static_assert(ECJIT_OK == int(StatusCode::kOk) && ECJIT_INVALID_SPEC == int(StatusCode::kInvalidSpec) &&
                  ECJIT_INVALID_ARGUMENT == int(StatusCode::kInvalidArgument) &&
                  ECJIT_NULL_POINTER == int(StatusCode::kNullPointer) &&
                  ECJIT_SHARD_COUNT == int(StatusCode::kShardCount) &&
                  ECJIT_SHARD_SIZE == int(StatusCode::kShardSize) &&
                  ECJIT_TOO_MANY_ERASURES == int(StatusCode::kTooManyErasures) &&
                  ECJIT_SINGULAR == int(StatusCode::kSingular) &&
                  ECJIT_UNSUPPORTED_TARGET == int(StatusCode::kUnsupportedTarget) &&
                  ECJIT_UNSUPPORTED == int(StatusCode::kUnsupported) &&
                  ECJIT_JIT_FAILURE == int(StatusCode::kJitFailure) &&
                  ECJIT_INTERNAL == int(StatusCode::kInternal) &&
                  ECJIT_IO_ERROR == int(StatusCode::kIoError),
              "C status codes must equal ecjit::StatusCode");

thread_local std::string g_last_error;

int report(const Status &st) {
  g_last_error = st.ok() ? std::string() : st.to_string();
  return int(st.code());
}

int fail(StatusCode code, const std::string &msg) { return report(Status(code, msg)); }

// A C index list as a ShardSet: each index < limit, at most once.
int to_set(const unsigned *idx, size_t count, unsigned limit, const char *what, ecjit::ShardSet *out) {
  if (count && !idx) return fail(StatusCode::kNullPointer, std::string(what) + " is null");
  for (size_t i = 0; i < count; ++i) {
    if (idx[i] >= limit)
      return fail(StatusCode::kInvalidArgument, std::string(what) + ": index " +
                                                    std::to_string(idx[i]) + " >= " +
                                                    std::to_string(limit));
    if (out->contains(idx[i]))
      return fail(StatusCode::kInvalidArgument,
                  std::string(what) + ": index " + std::to_string(idx[i]) + " listed twice");
    out->insert(idx[i]);
  }
  return ECJIT_OK;
}

std::vector<bool> to_mask(const unsigned char *present, unsigned n) {
  std::vector<bool> mask(n);
  for (unsigned i = 0; i < n; ++i) mask[i] = present[i] != 0;
  return mask;
}

#define ECJIT_C_CHECK_ARRAY(c)                                                     \
  do {                                                                             \
    if (!(c)) return fail(StatusCode::kNullPointer, "array codec handle is null"); \
  } while (0)

#define ECJIT_C_CHECK_CODEC(c)                                               \
  do {                                                                       \
    if (!(c)) return fail(StatusCode::kNullPointer, "codec handle is null"); \
  } while (0)

}  // namespace

extern "C" {

void ecjit_jit_options_init(ecjit_jit_options *o) {
  if (!o) return;
  const ecjit::JitOptions d;
  o->target = nullptr;
  o->strategy = nullptr;
  o->opt_level = d.opt_level;
  o->max_cached_kernels = d.max_cached_kernels;
  o->disk_cache = d.disk_cache ? 1 : 0;
  o->threads = d.threads;
  o->tune = d.tune ? 1 : 0;
  o->tune_in_background = d.tune_in_background ? 1 : 0;
}

const char *ecjit_last_error(void) { return g_last_error.c_str(); }

const char *ecjit_status_name(int code) {
  if (code < 0 || code > int(StatusCode::kIoError)) return "unknown";
  return ecjit::status_code_name(StatusCode(code));
}

int ecjit_jit_create(const ecjit_jit_options *options, ecjit_jit **out) {
  if (!out) return fail(StatusCode::kNullPointer, "out is null");
  *out = nullptr;
  ecjit::JitOptions o;
  if (options) {
    if (options->target) o.target = options->target;
    if (options->strategy) o.strategy = options->strategy;
    o.opt_level = options->opt_level;
    o.max_cached_kernels = options->max_cached_kernels;
    o.disk_cache = options->disk_cache != 0;
    o.threads = options->threads;
    o.tune = options->tune != 0;
    o.tune_in_background = options->tune_in_background != 0;
  }
  auto jit = ecjit::Jit::create(o);
  if (!jit.ok()) return report(jit.status());
  *out = new (std::nothrow) ecjit_jit{std::move(*jit)};
  if (!*out) return fail(StatusCode::kInternal, "out of memory");
  return report(Status::Ok());
}

void ecjit_jit_destroy(ecjit_jit *jit) { delete jit; }

void ecjit_jit_wait_for_tuning(ecjit_jit *jit) {
  if (jit) jit->jit->wait_for_tuning();
}

int ecjit_codec_create(ecjit_jit *jit, const char *spec, ecjit_codec **out) {
  if (!out) return fail(StatusCode::kNullPointer, "out is null");
  *out = nullptr;
  if (!jit || !spec) return fail(StatusCode::kNullPointer, "jit handle or spec is null");
  auto codec = jit->jit->codec(std::string(spec));
  if (!codec.ok()) return report(codec.status());
  const std::string resolved = (*codec)->spec().to_string();
  *out = new (std::nothrow) ecjit_codec{std::move(*codec), resolved};
  if (!*out) return fail(StatusCode::kInternal, "out of memory");
  return report(Status::Ok());
}

void ecjit_codec_destroy(ecjit_codec *codec) { delete codec; }
unsigned ecjit_codec_k(const ecjit_codec *c) { return c ? c->codec->k() : 0; }
unsigned ecjit_codec_m(const ecjit_codec *c) { return c ? c->codec->m() : 0; }
unsigned ecjit_codec_symbol_bytes(const ecjit_codec *c) { return c ? c->codec->symbol_bytes() : 0; }
const char *ecjit_codec_spec(const ecjit_codec *c) { return c ? c->spec.c_str() : nullptr; }

int ecjit_encode(const ecjit_codec *c, const uint8_t *const *data, uint8_t *const *parity,
                 size_t len) {
  ECJIT_C_CHECK_CODEC(c);
  return report(c->codec->encode({data, c->codec->k()}, {parity, c->codec->m()}, len));
}

int ecjit_reconstruct(const ecjit_codec *c, uint8_t *const *shards, const unsigned char *present,
                      size_t len) {
  ECJIT_C_CHECK_CODEC(c);
  if (!present) return fail(StatusCode::kNullPointer, "present is null");
  return report(c->codec->reconstruct({shards, c->codec->n()}, to_mask(present, c->codec->n()), len));
}

int ecjit_reconstruct_data(const ecjit_codec *c, uint8_t *const *shards,
                           const unsigned char *present, size_t len) {
  ECJIT_C_CHECK_CODEC(c);
  if (!present) return fail(StatusCode::kNullPointer, "present is null");
  return report(
      c->codec->reconstruct_data({shards, c->codec->n()}, to_mask(present, c->codec->n()), len));
}

int ecjit_reconstruct_some(const ecjit_codec *c, const unsigned *wanted, size_t wanted_count,
                           uint8_t *const *shards, const unsigned char *present, size_t len) {
  ECJIT_C_CHECK_CODEC(c);
  ecjit::ShardSet w;
  if (int st = to_set(wanted, wanted_count, c->codec->n(), "wanted", &w)) return st;
  if (!present) return fail(StatusCode::kNullPointer, "present is null");
  return report(c->codec->reconstruct_some(w, {shards, c->codec->n()},
                                           to_mask(present, c->codec->n()), len));
}

int ecjit_minimum_to_decode(const ecjit_codec *c, const unsigned *wanted, size_t wanted_count,
                            const unsigned *available, size_t available_count, unsigned *out,
                            size_t *out_count) {
  ECJIT_C_CHECK_CODEC(c);
  if (!out || !out_count) return fail(StatusCode::kNullPointer, "out or out_count is null");
  ecjit::ShardSet w, a;
  if (int st = to_set(wanted, wanted_count, c->codec->n(), "wanted", &w)) return st;
  if (int st = to_set(available, available_count, c->codec->n(), "available", &a)) return st;
  auto r = c->codec->minimum_to_decode(w, a);
  if (!r.ok()) return report(r.status());
  size_t i = 0;
  for (unsigned s : r->to_vector()) out[i++] = s;
  *out_count = i;
  return report(Status::Ok());
}

int ecjit_update(const ecjit_codec *c, const unsigned *changed, size_t count,
                 const uint8_t *const *old_data, const uint8_t *const *new_data,
                 uint8_t *const *parity, size_t len) {
  ECJIT_C_CHECK_CODEC(c);
  ecjit::ShardSet set;
  if (int st = to_set(changed, count, c->codec->k(), "changed", &set)) return st;
  if (count && (!old_data || !new_data))
    return fail(StatusCode::kNullPointer, "old_data or new_data is null");
  // The C++ call takes old/new in ascending index order.
  std::vector<std::pair<unsigned, size_t>> order;
  for (size_t i = 0; i < count; ++i) order.emplace_back(changed[i], i);
  std::sort(order.begin(), order.end());
  std::vector<const uint8_t *> olds, news;
  for (auto &o : order) {
    olds.push_back(old_data[o.second]);
    news.push_back(new_data[o.second]);
  }
  return report(c->codec->update(set, olds, news, {parity, c->codec->m()}, len));
}

int ecjit_encode_partial(const ecjit_codec *c, unsigned data_index, const uint8_t *shard,
                         uint8_t *const *parity_acc, size_t len) {
  ECJIT_C_CHECK_CODEC(c);
  return report(c->codec->encode_partial(data_index, shard, {parity_acc, c->codec->m()}, len));
}

int ecjit_verify(const ecjit_codec *c, const uint8_t *const *shards, size_t len, int *matches,
                 size_t *mismatch_offset) {
  ECJIT_C_CHECK_CODEC(c);
  if (!matches) return fail(StatusCode::kNullPointer, "matches is null");
  auto r = c->codec->verify({shards, c->codec->n()}, len, mismatch_offset);
  if (!r.ok()) return report(r.status());
  *matches = *r ? 1 : 0;
  return report(Status::Ok());
}

int ecjit_signature(const ecjit_codec *c, const uint8_t *shard, size_t len, uint64_t *sig,
                    unsigned components) {
  ECJIT_C_CHECK_CODEC(c);
  return report(c->codec->signature(shard, len, {sig, components}));
}

int ecjit_verify_by_signatures(const ecjit_codec *c, const uint64_t *sigs, unsigned components,
                               int *matches) {
  ECJIT_C_CHECK_CODEC(c);
  if (!matches) return fail(StatusCode::kNullPointer, "matches is null");
  auto r = c->codec->verify_by_signatures({sigs, size_t(c->codec->n()) * components}, components);
  if (!r.ok()) return report(r.status());
  *matches = *r ? 1 : 0;
  return report(Status::Ok());
}

int ecjit_array_codec_create(ecjit_jit *jit, const char *spec, ecjit_array_codec **out) {
  if (!out) return fail(StatusCode::kNullPointer, "out is null");
  *out = nullptr;
  if (!jit || !spec) return fail(StatusCode::kNullPointer, "jit handle or spec is null");
  auto codec = jit->jit->array_codec(std::string(spec));
  if (!codec.ok()) return report(codec.status());
  *out = new (std::nothrow) ecjit_array_codec{std::move(*codec)};
  if (!*out) return fail(StatusCode::kInternal, "out of memory");
  return report(Status::Ok());
}

void ecjit_array_codec_destroy(ecjit_array_codec *codec) { delete codec; }
unsigned ecjit_array_codec_disks(const ecjit_array_codec *c) { return c ? c->codec->disks() : 0; }
unsigned ecjit_array_codec_rows(const ecjit_array_codec *c) { return c ? c->codec->rows() : 0; }
size_t ecjit_array_codec_element_bytes(const ecjit_array_codec *c) { return c ? c->codec->element_bytes() : 0; }
int ecjit_array_codec_is_parity(const ecjit_array_codec *c, unsigned row, unsigned disk) {
  return c && c->codec->is_parity(row, disk) ? 1 : 0;
}

int ecjit_array_encode(const ecjit_array_codec *c, uint8_t *const *disks, size_t len) {
  ECJIT_C_CHECK_ARRAY(c);
  return report(c->codec->encode({disks, c->codec->disks()}, len));
}

int ecjit_array_reconstruct(const ecjit_array_codec *c, uint8_t *const *disks, const unsigned char *present,
                            size_t len) {
  ECJIT_C_CHECK_ARRAY(c);
  if (!present) return fail(StatusCode::kNullPointer, "present is null");
  return report(c->codec->reconstruct({disks, c->codec->disks()}, to_mask(present, c->codec->disks()), len));
}

int ecjit_array_read(const ecjit_array_codec *c, const uint8_t *const *disks, const unsigned char *present,
                     size_t len, unsigned disk, size_t offset, size_t size, uint8_t *out, size_t *cells_read) {
  ECJIT_C_CHECK_ARRAY(c);
  if (!present) return fail(StatusCode::kNullPointer, "present is null");
  return report(c->codec->read({disks, c->codec->disks()}, to_mask(present, c->codec->disks()), len, disk, offset,
                               size, out, cells_read));
}

int ecjit_array_verify(const ecjit_array_codec *c, const uint8_t *const *disks, size_t len, int *matches,
                       size_t *mismatch_offset, unsigned *mismatch_disk) {
  ECJIT_C_CHECK_ARRAY(c);
  if (!matches) return fail(StatusCode::kNullPointer, "matches is null");
  auto r = c->codec->verify({disks, c->codec->disks()}, len, mismatch_offset, mismatch_disk);
  if (!r.ok()) return report(r.status());
  *matches = *r ? 1 : 0;
  return report(Status::Ok());
}

int ecjit_array_update(const ecjit_array_codec *c, uint8_t *const *disks, unsigned disk, const uint8_t *new_data,
                       size_t len) {
  ECJIT_C_CHECK_ARRAY(c);
  return report(c->codec->update({disks, c->codec->disks()}, disk, new_data, len));
}

}  // extern "C"
