// CodecImpl: argument checks, then a call into the JIT-compiled encoder or decoder.
#include "runtime/codec_impl.h"

#include <string>

namespace ecjit::runtime {
namespace {

// Up to this many shards the pointer arrays for a decode live on the stack.
constexpr size_t kStackShards = 512;

Status shard_size_error(size_t len, unsigned sb) {
  return Status(StatusCode::kShardSize, "len = " + std::to_string(len) +
                                            " is not a multiple of the symbol size " +
                                            std::to_string(sb) + " bytes");
}

}  // namespace

size_t ErasureKeyHash::operator()(const ErasureKey &k) const {
  uint64_t h = 1469598103934665603ULL;
  for (uint64_t w : k.bits) h = (h ^ w) * 1099511628211ULL;
  return size_t(h);
}

Result<std::shared_ptr<CodecImpl>> CodecImpl::make(std::shared_ptr<JitImpl> jit,
                                                   codes::LinearCode code) {
  std::shared_ptr<CodecImpl> c(new CodecImpl(std::move(jit), std::move(code)));
  auto enc = c->jit_->kernel(c->code_.spec, "encode", c->code_.field, c->code_.parity);
  if (!enc.ok()) return enc.status();
  c->encoder_ = std::move(*enc);
  return c;
}

Status CodecImpl::encode(Span<const uint8_t *const> data, Span<uint8_t *const> parity,
                         size_t len) const {
  const unsigned k = code_.k, m = code_.m, sb = code_.field.bytes();
  if (data.size != k || parity.size != m)
    return Status(StatusCode::kShardCount,
                  "encode of " + code_.spec.to_string() + " takes " + std::to_string(k) +
                      " data and " + std::to_string(m) + " parity shards; got " +
                      std::to_string(data.size) + " and " + std::to_string(parity.size));
  if ((data.size && !data.data) || (parity.size && !parity.data))
    return Status(StatusCode::kNullPointer, "shard pointer array is null");
  for (unsigned i = 0; i < k; ++i)
    if (!data[i]) return Status(StatusCode::kNullPointer, "data shard " + std::to_string(i) + " is null");
  for (unsigned i = 0; i < m; ++i)
    if (!parity[i]) return Status(StatusCode::kNullPointer, "parity shard " + std::to_string(i) + " is null");
  if (len % sb) return shard_size_error(len, sb);
  if (len) encoder_.fn(data.data, parity.data, len);
  return Status::Ok();
}

Status CodecImpl::check_shards(Span<uint8_t *const> shards, const std::vector<bool> &present,
                               size_t len, ErasureKey *key, unsigned *missing) const {
  const unsigned n = code_.n(), sb = code_.field.bytes();
  if (shards.size != n)
    return Status(StatusCode::kShardCount, code_.spec.to_string() + " has " + std::to_string(n) +
                                               " shards; got " + std::to_string(shards.size));
  if (present.size() != n)
    return Status(StatusCode::kShardCount, "present has " + std::to_string(present.size()) +
                                               " entries; the code has " + std::to_string(n) + " shards");
  if (n && !shards.data) return Status(StatusCode::kNullPointer, "shard pointer array is null");
  *missing = 0;
  for (unsigned s = 0; s < n; ++s) {
    if (!shards[s])
      return Status(StatusCode::kNullPointer,
                    std::string(present[s] ? "present" : "missing") + " shard " + std::to_string(s) +
                        " is null (missing shards need a buffer to be rebuilt into)");
    if (!present[s]) {
      key->bits[s / 64] |= uint64_t(1) << (s % 64);
      ++*missing;
    }
  }
  if (len % sb) return shard_size_error(len, sb);
  if (*missing > code_.m)
    return Status(StatusCode::kTooManyErasures,
                  std::to_string(*missing) + " shards missing; " + code_.spec.to_string() +
                      " can rebuild at most " + std::to_string(code_.m));
  return Status::Ok();
}

Result<std::shared_ptr<const CodecImpl::Decoder>> CodecImpl::decoder(
    const ErasureKey &key, const std::vector<bool> &present) const {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = decoders_.find(key);
    if (it != decoders_.end()) return it->second;
  }
  auto plan = codes::plan_reconstruct(code_, present);
  if (!plan.ok()) return plan.status();
  std::string what = "decode_e";
  for (size_t i = 0; i < plan->targets.size(); ++i)
    what += (i ? "_" : "") + std::to_string(plan->targets[i]);
  auto kernel = jit_->kernel(code_.spec, what, code_.field, plan->coeffs);
  if (!kernel.ok()) return kernel.status();
  auto d = std::make_shared<Decoder>(Decoder{std::move(*plan), std::move(*kernel)});
  std::lock_guard<std::mutex> lock(mutex_);
  auto [it, inserted] = decoders_.emplace(key, std::move(d));
  return it->second;
}

Status CodecImpl::reconstruct(Span<uint8_t *const> shards, const std::vector<bool> &present,
                              size_t len) const {
  ErasureKey key;
  unsigned missing = 0;
  ECJIT_RETURN_IF_ERROR(check_shards(shards, present, len, &key, &missing));
  if (missing == 0 || len == 0) return Status::Ok();
  auto d = decoder(key, present);
  if (!d.ok()) return d.status();
  const codes::DecodePlan &plan = (*d)->plan;
  std::array<const uint8_t *, kStackShards> in_stack;
  std::array<uint8_t *, kStackShards> out_stack;
  std::vector<const uint8_t *> in_heap;
  std::vector<uint8_t *> out_heap;
  const uint8_t **in = in_stack.data();
  uint8_t **out = out_stack.data();
  if (plan.sources.size() > kStackShards) {
    in_heap.resize(plan.sources.size());
    out_heap.resize(plan.targets.size());
    in = in_heap.data();
    out = out_heap.data();
  }
  for (size_t i = 0; i < plan.sources.size(); ++i) in[i] = shards[plan.sources[i]];
  for (size_t i = 0; i < plan.targets.size(); ++i) out[i] = shards[plan.targets[i]];
  (*d)->kernel.fn(in, out, len);
  return Status::Ok();
}

Status CodecImpl::prepare_reconstruct(const std::vector<bool> &present) const {
  std::vector<uint8_t> dummy(1);
  std::vector<uint8_t *> shards(code_.n(), dummy.data());
  ErasureKey key;
  unsigned missing = 0;
  ECJIT_RETURN_IF_ERROR(check_shards(shards, present, 0, &key, &missing));
  if (missing == 0) return Status::Ok();
  auto d = decoder(key, present);
  return d.ok() ? Status::Ok() : d.status();
}

KernelInfo CodecImpl::decoder_info(const std::vector<bool> &present) const {
  if (!prepare_reconstruct(present).ok()) return KernelInfo();
  std::vector<uint8_t> dummy(1);
  std::vector<uint8_t *> shards(code_.n(), dummy.data());
  ErasureKey key;
  unsigned missing = 0;
  if (!check_shards(shards, present, 0, &key, &missing).ok() || missing == 0) return encoder_.info;
  auto d = decoder(key, present);
  return d.ok() ? (*d)->kernel.info : KernelInfo();
}

}  // namespace ecjit::runtime
