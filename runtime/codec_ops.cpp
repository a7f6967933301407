// CodecImpl operations beyond encode/reconstruct: read planning, delta update, partial encode,
// fused verify, algebraic signatures.
#include <string>

#include "runtime/codec_impl.h"
#include "runtime/parallel_kernel.h"
#include "runtime/shard_checks.h"

namespace ecjit::runtime {

Result<ShardSet> CodecImpl::minimum_to_decode(const ShardSet &wanted,
                                              const ShardSet &available) const {
  const unsigned n = code_.n(), k = code_.k;
  if (wanted.invalid() || available.invalid() || wanted.end_index() > n ||
      available.end_index() > n)
    return Status(StatusCode::kInvalidArgument,
                  "minimum_to_decode: a shard index is out of range (n = " + std::to_string(n) + ")");
  if (available.includes(wanted)) return wanted;
  // Shards a local check repairs: read their checks' shards (an LRC's group), not k, as
  // rebuild() runs them.
  if (std::shared_ptr<const codes::LocalPlan> local = local_plan(available, wanted - available)) {
    ShardSet read = wanted & available;
    for (unsigned s : local->reads) read.insert(s);
    return read;
  }
  if (available.size() < k)
    return Status(StatusCode::kTooManyErasures,
                  std::to_string(available.size()) + " shards available; " +
                      code_.spec.to_string() + " needs " + std::to_string(k));
  // Preference order: available wanted shards (they are read anyway), then data, then parity.
  std::vector<unsigned> order;
  const ShardSet forced = wanted & available;
  for (unsigned s : forced.to_vector()) order.push_back(s);
  for (unsigned s = 0; s < n; ++s)
    if (available.contains(s) && !forced.contains(s)) order.push_back(s);
  // Greedy over the generator rows (a matroid): a shard is taken when its row is independent
  // of the rows taken so far, or when it is wanted.
  const codes::Field &f = code_.field;
  std::vector<std::vector<uint64_t>> basis;
  std::vector<unsigned> pivots;
  ShardSet result;
  for (unsigned s : order) {
    if (basis.size() == k && !forced.contains(s)) break;
    std::vector<uint64_t> row = code_.generator_row(s);
    for (size_t b = 0; b < basis.size(); ++b) {
      const uint64_t e = row[pivots[b]];
      if (e == 0) continue;
      for (unsigned c = 0; c < k; ++c) row[c] ^= f.mul(e, basis[b][c]);
    }
    unsigned piv = 0;
    while (piv < k && row[piv] == 0) ++piv;
    if (piv < k) {
      const uint64_t inv = f.inv(row[piv]);
      for (unsigned c = 0; c < k; ++c) row[c] = f.mul(row[c], inv);
      basis.push_back(std::move(row));
      pivots.push_back(piv);
      result.insert(s);
    } else if (forced.contains(s)) {
      result.insert(s);
    }
  }
  if (basis.size() < k)
    return Status(StatusCode::kSingular, "the available shards of " + code_.spec.to_string() +
                                             " do not determine the data");
  return result;
}

Status CodecImpl::update(const ShardSet &changed, Span<const uint8_t *const> old_data,
                         Span<const uint8_t *const> new_data, Span<uint8_t *const> parity,
                         size_t len) const {
  const unsigned k = code_.k, m = code_.m, sb = code_.field.bytes();
  if (changed.invalid() || changed.size() == 0 || changed.end_index() > k)
    return Status(StatusCode::kInvalidArgument,
                  "update: the changed set must name 1.." + std::to_string(k) +
                      " data shards, each < k = " + std::to_string(k));
  const unsigned j = changed.size();
  if (old_data.size != j || new_data.size != j || parity.size != m)
    return Status(StatusCode::kShardCount,
                  "update of " + std::to_string(j) + " data shards takes " + std::to_string(j) +
                      " old, " + std::to_string(j) + " new and " + std::to_string(m) +
                      " parity shards; got " + std::to_string(old_data.size) + ", " +
                      std::to_string(new_data.size) + " and " + std::to_string(parity.size));
  if (!old_data.data || !new_data.data || !parity.data)
    return Status(StatusCode::kNullPointer, "update: a shard pointer array is null");
  for (unsigned i = 0; i < j; ++i)
    if (!old_data[i] || !new_data[i])
      return Status(StatusCode::kNullPointer, "update: old or new shard " + std::to_string(i) + " is null");
  for (unsigned r = 0; r < m; ++r)
    if (!parity[r]) return Status(StatusCode::kNullPointer, "update: parity shard " + std::to_string(r) + " is null");
  if (Status st = check_distinct_outputs("update", {"parity shard", parity.data, m},
                                         {{"old data shard", old_data.data, j},
                                          {"new data shard", new_data.data, j}});
      !st.ok())
    return st;
  if (len % sb) return shard_size_error(len, sb);
  std::array<const uint8_t *, 2 * kStackShards> in_stack;
  std::vector<const uint8_t *> in_heap;
  const uint8_t **in = in_stack.data();
  if (j > kStackShards) {
    in_heap.resize(2 * size_t(j));
    in = in_heap.data();
  }
  for (unsigned i = 0; i < j; ++i) {
    in[2 * i] = old_data[i];
    in[2 * i + 1] = new_data[i];
  }
  if (deltas_) {
    auto set = deltas_->find(/*pairs=*/true, changed);
    if (!set.ok()) return set.status();
    if (len) deltas_->run(*set, in, parity.data, len);
    return Status::Ok();
  }
  auto op = ops_.get(OpKey(OpKey::kUpdate, changed), [&]() -> Result<std::shared_ptr<const OpKernel>> {
    std::vector<unsigned> cols = changed.to_vector();
    codes::Matrix coeffs(m, unsigned(cols.size()));
    for (unsigned r = 0; r < m; ++r)
      for (size_t c = 0; c < cols.size(); ++c) coeffs.at(r, unsigned(c)) = code_.parity.at(r, cols[c]);
    KernelMode mode;
    mode.output = ir::OutputMode::kAccumulate;
    mode.input = ir::InputMode::kDelta;
    mode.shared = false;
    auto kernel = jit_->kernel(code_.spec, "update_d" + join_indices(cols), code_.field, coeffs, mode);
    if (!kernel.ok()) return kernel.status();
    return std::shared_ptr<const OpKernel>(
        std::make_shared<OpKernel>(OpKernel{std::move(cols), {}, std::move(*kernel)}));
  });
  if (!op.ok()) return op.status();
  if (len == 0) return Status::Ok();
  run_kernel(*jit_, (*op)->kernel.fn, in, 2 * size_t(j), parity.data, m, len);
  return Status::Ok();
}

Status CodecImpl::encode_partial(unsigned data_index, const uint8_t *shard,
                                 Span<uint8_t *const> parity_acc, size_t len) const {
  const unsigned m = code_.m, sb = code_.field.bytes();
  ECJIT_RETURN_IF_ERROR(check_partial_shards(code_.spec, data_index, shard, parity_acc));
  if (len % sb) return shard_size_error(len, sb);
  if (deltas_) {
    auto set = deltas_->find(/*pairs=*/false, ShardSet{data_index});
    if (!set.ok()) return set.status();
    if (len) deltas_->run(*set, &shard, parity_acc.data, len);
    return Status::Ok();
  }
  auto op = ops_.get(OpKey(OpKey::kPartial, ShardSet{data_index}), [&]() -> Result<std::shared_ptr<const OpKernel>> {
    codes::Matrix coeffs(m, 1);
    for (unsigned r = 0; r < m; ++r) coeffs.at(r, 0) = code_.parity.at(r, data_index);
    KernelMode mode;
    mode.output = ir::OutputMode::kAccumulate;
    mode.shared = false;
    auto kernel = jit_->kernel(code_.spec, "partial_d" + std::to_string(data_index), code_.field,
                               coeffs, mode);
    if (!kernel.ok()) return kernel.status();
    return std::shared_ptr<const OpKernel>(
        std::make_shared<OpKernel>(OpKernel{{data_index}, {}, std::move(*kernel)}));
  });
  if (!op.ok()) return op.status();
  if (len) run_kernel(*jit_, (*op)->kernel.fn, &shard, 1, parity_acc.data, m, len);
  return Status::Ok();
}

Result<Kernel> CodecImpl::lazy_kernel(
    Kernel *slot, const std::function<void(std::string *, codes::Matrix *)> &describe,
    const KernelMode &mode) const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (slot->code) return *slot;
  std::string what;
  codes::Matrix coeffs;
  describe(&what, &coeffs);
  auto kernel = jit_->kernel(code_.spec, what, code_.field, coeffs, mode);
  if (!kernel.ok()) return kernel.status();
  *slot = std::move(*kernel);
  return *slot;
}

Result<bool> CodecImpl::verify(Span<const uint8_t *const> shards, size_t len,
                               size_t *mismatch_offset) const {
  const unsigned n = code_.n(), sb = code_.field.bytes();
  if (shards.size != n)
    return Status(StatusCode::kShardCount, "verify: " + code_.spec.to_string() + " has " +
                                               std::to_string(n) + " shards; got " +
                                               std::to_string(shards.size));
  if (!shards.data) return Status(StatusCode::kNullPointer, "verify: shard pointer array is null");
  for (unsigned s = 0; s < n; ++s)
    if (!shards[s]) return Status(StatusCode::kNullPointer, "verify: shard " + std::to_string(s) + " is null");
  if (len % sb) return shard_size_error(len, sb);
  KernelMode mode;
  mode.output = ir::OutputMode::kVerify;
  auto kernel = lazy_kernel(
      &verifier_,
      [this](std::string *what, codes::Matrix *coeffs) {
        *what = "verify";
        *coeffs = code_.parity;
      },
      mode);
  if (!kernel.ok()) return kernel.status();
  const size_t off = len ? run_verify(*jit_, kernel->verify_fn, shards.data, n, len) : 0;
  if (mismatch_offset) *mismatch_offset = off;
  return off == len;
}

void CodecImpl::build_tables() const {
  const unsigned l = code_.field.bits();
  if (l > 16) return;
  const uint64_t order = code_.field.order();
  log_.assign(size_t(1) << l, 0);
  exp_.assign(2 * order, 0);
  uint64_t x = 1;
  for (uint64_t e = 0; e < order; ++e) {
    exp_[e] = exp_[e + order] = uint32_t(x);
    log_[x] = uint32_t(e);
    x = code_.field.mul(x, 2);
  }
}

uint64_t CodecImpl::fast_mul(uint64_t a, uint64_t b) const {
  if (code_.field.bits() > 16) return code_.field.mul(a, b);
  if (a == 0 || b == 0) return 0;
  return exp_[log_[a] + log_[b]];
}

Status CodecImpl::signature(const uint8_t *shard, size_t len, Span<uint64_t> sig) const {
  const unsigned comps = unsigned(sig.size), sb = code_.field.bytes();
  if (comps == 0 || sig.size > kMaxSignatureComponents)
    return Status(StatusCode::kInvalidArgument,
                  "signature: " + std::to_string(sig.size) + " components; 1.." +
                      std::to_string(kMaxSignatureComponents) + " supported");
  if (!shard || !sig.data) return Status(StatusCode::kNullPointer, "signature: null shard or output");
  if (len % sb) return shard_size_error(len, sb);
  std::call_once(tables_once_, [this] { build_tables(); });
  const codes::Field &f = code_.field;
  KernelMode mode;
  mode.output = ir::OutputMode::kSignature;
  auto kernel = lazy_kernel(
      &signers_[comps - 1],
      [&f, comps](std::string *what, codes::Matrix *base) {
        *what = "sig_n" + std::to_string(comps);
        *base = codes::Matrix(comps, 1);
        for (unsigned i = 0; i < comps; ++i) base->at(i, 0) = f.pow(2, i + 1);  // alpha^(i+1)
      },
      mode);
  if (!kernel.ok()) return kernel.status();
  const unsigned lanes = kernel->vector_lanes;
  const size_t vb = size_t(lanes) * sb;
  alignas(64) uint8_t acc[kMaxSignatureComponents * 512];  // widest vector: 4096 bits
  if (comps * vb > sizeof acc) return Status(StatusCode::kInternal, "signature lanes exceed the buffer");
  uint8_t *out = acc;
  kernel->fn(&shard, &out, len);
  // sig_i = sum_t alpha_i^t * acc_i[t]; Horner over the lanes from the top.
  uint64_t alpha = 1;
  for (unsigned i = 0; i < comps; ++i) {
    alpha = fast_mul(alpha, 2);  // alpha_i = alpha^(i+1), the kernel's base
    uint64_t s = 0;
    for (unsigned t = lanes; t-- > 0;) {
      uint64_t v = 0;
      for (unsigned b = 0; b < sb; ++b) v |= uint64_t(acc[i * vb + size_t(t) * sb + b]) << (8 * b);
      s = fast_mul(s, alpha) ^ v;
    }
    sig[i] = s;
  }
  return Status::Ok();
}

Result<bool> CodecImpl::verify_by_signatures(Span<const uint64_t> sigs,
                                             unsigned components) const {
  const unsigned n = code_.n(), k = code_.k, m = code_.m;
  if (components == 0 || components > kMaxSignatureComponents)
    return Status(StatusCode::kInvalidArgument,
                  "verify_by_signatures: " + std::to_string(components) + " components; 1.." +
                      std::to_string(kMaxSignatureComponents) + " supported");
  if (sigs.size != size_t(n) * components)
    return Status(StatusCode::kShardCount,
                  "verify_by_signatures: expected " + std::to_string(size_t(n) * components) +
                      " signature values (n x components); got " + std::to_string(sigs.size));
  if (!sigs.data) return Status(StatusCode::kNullPointer, "verify_by_signatures: null signatures");
  for (size_t i = 0; i < sigs.size; ++i)
    if (sigs[i] & ~code_.field.mask())
      return Status(StatusCode::kInvalidArgument,
                    "verify_by_signatures: value " + std::to_string(i) + " is not in the field");
  std::call_once(tables_once_, [this] { build_tables(); });
  bool ok = true;
  for (unsigned r = 0; r < m; ++r)
    for (unsigned i = 0; i < components; ++i) {
      uint64_t want = 0;
      for (unsigned c = 0; c < k; ++c)
        want ^= fast_mul(code_.parity.at(r, c), sigs[size_t(c) * components + i]);
      ok &= want == sigs[size_t(k + r) * components + i];
    }
  return ok;
}

}  // namespace ecjit::runtime
