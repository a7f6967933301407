// FftCodec operations beyond encode / reconstruct: read planning, delta update, partial encode, verify, the generator.
#include <algorithm>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "codes/rs_fft_program.h"
#include "runtime/fft_codec.h"
#include "runtime/shard_checks.h"

namespace ecjit::runtime {
namespace {

// Scratch of update / encode_partial / verify per call: runs of at most 64 KiB per shard,
// fewer bytes per run when many shards take part.
constexpr size_t kRunBudget = size_t(4) << 20;
constexpr size_t kMaxRun = size_t(64) << 10;

size_t run_bytes(size_t shards) {
  return std::clamp<size_t>(kRunBudget / std::max<size_t>(shards, 1) / 64 * 64, 64, kMaxRun);
}

std::string num(size_t v) { return std::to_string(v); }

}  // namespace

Result<ShardSet> FftCodec::minimum_to_decode(const ShardSet &wanted, const ShardSet &available) const {
  const unsigned n = this->n(), k = spec_.k;
  if (wanted.invalid() || available.invalid() || wanted.end_index() > n || available.end_index() > n)
    return Status(StatusCode::kInvalidArgument,
                  "minimum_to_decode: a shard index is out of range (n = " + num(n) + ")");
  if (available.includes(wanted)) return wanted;
  if (available.size() < k)
    return Status(StatusCode::kTooManyErasures,
                  num(available.size()) + " shards available; " + spec_.to_string() + " needs " + num(k));
  // MDS: any k shards determine the data. The available wanted shards, then the lowest
  // available indices (originals first) up to k - or, where that reads no more shards, k
  // that let the encoder's transforms be inverted for the missing wanted ones (the decode
  // reads those: runtime/fft_engine.h).
  ShardSet result = wanted & available;
  std::vector<bool> present(n, false);
  for (unsigned s : available.to_vector()) present[s] = true;
  std::vector<unsigned> missing;
  for (unsigned s : wanted.to_vector())
    if (!present[s]) missing.push_back(s);
  if (std::optional<codes::fft::InverseReads> inv =
          codes::fft::inverse_decode_reads(k, spec_.m, present, missing, geometry_.gf, kernels_.inverse_bound())) {
    ShardSet with = result;
    for (unsigned s : inv->sources) with.insert(s);
    if (with.size() <= std::max(k, result.size())) return with;
  }
  unsigned count = result.size();
  for (unsigned s : available.to_vector()) {
    if (count >= k) break;
    if (result.contains(s)) continue;
    result.insert(s);
    ++count;
  }
  return result;
}

void FftCodec::add_encoded(const unsigned *idx, size_t count, const uint8_t *const *a, const uint8_t *const *b,
                           uint8_t *const *acc, size_t len) const {
  const unsigned k = spec_.k, m = spec_.m;
  const size_t deltas = b ? count : 0;
  const size_t step = run_bytes(deltas + m + 1);
  // [deltas][m encoded runs][one zero run for the unchanged originals]
  std::vector<uint8_t> buf((deltas + m + 1) * step, 0);
  uint8_t *const zero = buf.data() + (deltas + m) * step;
  std::vector<const uint8_t *> in(k, zero);
  std::vector<uint8_t *> out(m);
  for (unsigned r = 0; r < m; ++r) out[r] = buf.data() + (deltas + r) * step;
  for (size_t off = 0; off < len; off += step) {  // run starts are chunk starts (step % 64 == 0)
    const size_t part = std::min(step, len - off);
    for (size_t i = 0; i < count; ++i) {
      if (!b) {
        in[idx[i]] = a[i] + off;
        continue;
      }
      uint8_t *d = buf.data() + i * step;
      for (size_t t = 0; t < part; ++t) d[t] = uint8_t(a[i][off + t] ^ b[i][off + t]);
      in[idx[i]] = d;
    }
    run(Job{}, in.data(), k, out.data(), m, part);
    for (unsigned r = 0; r < m; ++r)
      for (size_t t = 0; t < part; ++t) acc[r][off + t] ^= out[r][t];
  }
}

Status FftCodec::update(const ShardSet &changed, Span<const uint8_t *const> old_data,
                        Span<const uint8_t *const> new_data, Span<uint8_t *const> parity, size_t len) const {
  const unsigned k = spec_.k, m = spec_.m;
  if (changed.invalid() || changed.size() == 0 || changed.end_index() > k)
    return Status(StatusCode::kInvalidArgument,
                  "update: the changed set must name 1.." + num(k) + " data shards, each < k = " + num(k));
  const std::vector<unsigned> idx = changed.to_vector();
  const unsigned j = unsigned(idx.size());
  if (old_data.size != j || new_data.size != j || parity.size != m)
    return Status(StatusCode::kShardCount, "update of " + num(j) + " data shards takes " + num(j) + " old, " +
                                               num(j) + " new and " + num(m) + " parity shards; got " +
                                               num(old_data.size) + ", " + num(new_data.size) + " and " +
                                               num(parity.size));
  if (!old_data.data || !new_data.data || !parity.data)
    return Status(StatusCode::kNullPointer, "update: a shard pointer array is null");
  for (unsigned i = 0; i < j; ++i)
    if (!old_data[i] || !new_data[i])
      return Status(StatusCode::kNullPointer, "update: old or new shard " + num(i) + " is null");
  for (unsigned r = 0; r < m; ++r)
    if (!parity[r]) return Status(StatusCode::kNullPointer, "update: parity shard " + num(r) + " is null");
  ECJIT_RETURN_IF_ERROR(check_distinct_outputs(
      "update", {"parity shard", parity.data, m},
      {{"old data shard", old_data.data, j}, {"new data shard", new_data.data, j}}));
  ECJIT_RETURN_IF_ERROR(check_len("update", len));
  add_encoded(idx.data(), j, old_data.data, new_data.data, parity.data, len);
  return Status::Ok();
}

Status FftCodec::encode_partial(unsigned data_index, const uint8_t *shard, Span<uint8_t *const> parity_acc,
                                size_t len) const {
  ECJIT_RETURN_IF_ERROR(check_partial_shards(spec_, data_index, shard, parity_acc));
  ECJIT_RETURN_IF_ERROR(check_len("encode_partial", len));
  add_encoded(&data_index, 1, &shard, nullptr, parity_acc.data, len);
  return Status::Ok();
}

Result<bool> FftCodec::verify(Span<const uint8_t *const> shards, size_t len, size_t *mismatch_offset) const {
  const unsigned n = this->n(), k = spec_.k, m = spec_.m;
  if (shards.size != n)
    return Status(StatusCode::kShardCount,
                  "verify: " + spec_.to_string() + " has " + num(n) + " shards; got " + num(shards.size));
  if (!shards.data) return Status(StatusCode::kNullPointer, "verify: shard pointer array is null");
  for (unsigned s = 0; s < n; ++s)
    if (!shards[s]) return Status(StatusCode::kNullPointer, "verify: shard " + num(s) + " is null");
  ECJIT_RETURN_IF_ERROR(check_len("verify", len));
  const size_t step = run_bytes(m);
  std::vector<uint8_t> buf(size_t(m) * step);
  std::vector<const uint8_t *> in(k);
  std::vector<uint8_t *> out(m);
  for (unsigned r = 0; r < m; ++r) out[r] = buf.data() + r * step;
  for (size_t off = 0; off < len; off += step) {
    const size_t part = std::min(step, len - off);
    for (unsigned i = 0; i < k; ++i) in[i] = shards[i] + off;
    run(Job{}, in.data(), k, out.data(), m, part);
    size_t first = part;  // the first differing byte of any parity shard in this run
    for (unsigned r = 0; r < m; ++r) {
      const uint8_t *have = shards[k + r] + off;
      if (std::memcmp(out[r], have, std::min(first, part)) == 0) continue;
      for (size_t t = 0; t < first; ++t)
        if (out[r][t] != have[t]) {
          first = t;
          break;
        }
    }
    if (first < part) {
      if (mismatch_offset) *mismatch_offset = off + first;
      return false;
    }
  }
  if (mismatch_offset) *mismatch_offset = len;
  return true;
}

Status FftCodec::signature(const uint8_t *, size_t, Span<uint64_t>) const {
  return Status(StatusCode::kUnsupported,
                spec_.to_string() + ": algebraic signatures need GF(2^l) symbols stored as little-endian words; "
                                    "rs-fft's are reed-solomon-simd's Cantor-basis elements split over low and "
                                    "high byte halves; use verify()");
}

Result<bool> FftCodec::verify_by_signatures(Span<const uint64_t>, unsigned) const {
  return Status(StatusCode::kUnsupported,
                spec_.to_string() + ": rs-fft has no algebraic signatures (see signature()); use verify()");
}

const std::vector<uint64_t> &FftCodec::parity_matrix() const {
  std::call_once(matrix_once_, [this] {
    const unsigned k = spec_.k, m = spec_.m;
    if (size_t(k) * m > kMaxMatrixEntries) return;
    // Column j = encode(e_j), one element per shard, through the transforms that see e_j:
    // O(k C log C) instead of k full encodes.
    const codes::fft::Geometry &g = geometry_;
    const size_t C = g.chunk;
    std::vector<uint64_t> a(size_t(k) * m);
    codes::fft::Shards w(2 * C, 1);
    for (unsigned j = 0; j < k; ++j) {
      w.zero(0, 2 * C);
      if (g.rate == codes::fft::Rate::kHigh) {  // e_j's chunk, interpolated, then FFT_0
        const size_t c0 = j / C * C;
        w[j - c0][0] = 1;
        codes::fft::ifft(w, 0, C, std::min<size_t>(C, k - c0), c0 + C, g.gf);
        codes::fft::fft(w, 0, C, m, 0, g.gf);
        for (unsigned r = 0; r < m; ++r) a[size_t(r) * k + j] = w[r][0];
        continue;
      }
      w[j][0] = 1;  // low rate: coefficients, then every recovery chunk
      codes::fft::ifft(w, 0, C, k, 0);
      for (size_t c0 = 0; c0 < m; c0 += C) {
        const size_t count = std::min<size_t>(C, m - c0);
        for (size_t i = 0; i < C; ++i) w[C + i][0] = w[i][0];
        codes::fft::fft(w, C, C, count, c0 + C);
        for (size_t r = 0; r < count; ++r) a[(c0 + r) * k + j] = w[C + r][0];
      }
    }
    matrix_ = std::move(a);
  });
  return matrix_;
}

}  // namespace ecjit::runtime
