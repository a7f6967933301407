// BitMatrixCode construction, reference encode/reconstruct, decode planning over GF(2).
#include "codes/bitmatrix_code.h"

#include <cstring>
#include <string>

#include "codes/xor_families.h"

namespace ecjit::codes {

BitMatrix BitMatrixCode::shard_rows(unsigned s) const {
  BitMatrix R(w, k * w);
  for (unsigned x = 0; x < w; ++x) {
    if (s < k) R.set(x, s * w + x);
    else
      for (unsigned wd = 0; wd < R.words(); ++wd) R.row(x)[wd] = parity.row((s - k) * w + x)[wd];
  }
  return R;
}

Result<BitMatrixCode> build_bitmatrix_code(const CodeSpec &spec) {
  Result<CodeSpec> checked = CodeSpec::parse(spec.to_string());
  if (!checked.ok()) return checked.status();
  const BitFamily *row = bit_family(checked->family);
  if (row == nullptr)
    return Status(StatusCode::kInvalidSpec, checked->to_string() + " is not a bit-matrix code");
  if (checked->packet_auto)
    return Status(StatusCode::kInvalidSpec,
                  checked->to_string() + ": packet=auto is chosen by timing when a Jit makes the codec "
                                         "(Jit::codec); give the packet in bytes here");
  BitMatrixCode code;
  code.spec = *checked;
  code.k = checked->k;
  code.m = checked->m;
  code.w = checked->w;
  code.packet = checked->packet;
  ECJIT_RETURN_IF_ERROR(row->build(*checked, &code.parity, &code.symbols));
  return code;
}

void apply_bitmatrix(const BitMatrix &M, const std::vector<PacketRef> &in,
                     const std::vector<PacketRef> &out, unsigned w, unsigned packet,
                     uint8_t *const *shards, size_t len) {
  const size_t block = size_t(w) * packet;
  for (size_t b = 0; b + block <= len; b += block)
    for (unsigned r = 0; r < M.rows; ++r) {
      uint8_t *dst = shards[out[r].shard] + b + size_t(out[r].index) * packet;
      std::memset(dst, 0, packet);
      for (unsigned c = 0; c < M.cols; ++c) {
        if (!M.get(r, c)) continue;
        const uint8_t *src = shards[in[c].shard] + b + size_t(in[c].index) * packet;
        for (unsigned i = 0; i < packet; ++i) dst[i] ^= src[i];
      }
    }
}

namespace {

Status check_len(const BitMatrixCode &code, size_t len) {
  if (len % code.block_bytes() != 0)
    return Status(StatusCode::kShardSize,
                  "len " + std::to_string(len) + " is not a multiple of the block, w x packet = " +
                      std::to_string(code.block_bytes()) + " bytes");
  return Status::Ok();
}

std::vector<PacketRef> packets_of(const std::vector<unsigned> &shards, unsigned w) {
  std::vector<PacketRef> p;
  for (unsigned s : shards)
    for (unsigned x = 0; x < w; ++x) p.push_back({s, x});
  return p;
}

}  // namespace

std::vector<PacketRef> BitDecodePlan::target_packets() const {
  return packets_of(targets, map.rows / (targets.empty() ? 1 : unsigned(targets.size())));
}

Status ref_bitmatrix_encode(const BitMatrixCode &code, const uint8_t *const *data,
                            uint8_t *const *parity, size_t len) {
  ECJIT_RETURN_IF_ERROR(check_len(code, len));
  std::vector<uint8_t *> shards(code.n());
  for (unsigned s = 0; s < code.n(); ++s) {
    shards[s] = s < code.k ? const_cast<uint8_t *>(data[s]) : parity[s - code.k];
    if (!shards[s]) return Status(StatusCode::kNullPointer, "shard " + std::to_string(s) + " is null");
  }
  std::vector<unsigned> d, p;
  for (unsigned s = 0; s < code.k; ++s) d.push_back(s);
  for (unsigned s = code.k; s < code.n(); ++s) p.push_back(s);
  apply_bitmatrix(code.parity, packets_of(d, code.w), packets_of(p, code.w), code.w, code.packet,
                  shards.data(), len);
  return Status::Ok();
}

Result<BitDecodePlan> plan_bitmatrix_decode(const BitMatrixCode &code, const std::vector<bool> &present,
                                            const std::vector<unsigned> &targets) {
  const unsigned kw = code.k * code.w;
  for (unsigned t : targets)
    if (t >= code.n() || present[t])
      return Status(StatusCode::kInvalidArgument, "target shard " + std::to_string(t) + " is present or out of range");
  // Greedy basis of the present shards' bit-rows, in shard order.
  BitBasis basis(kw);
  std::vector<PacketRef> sources;
  for (unsigned s = 0; s < code.n() && !basis.full(); ++s) {
    if (!present[s]) continue;
    const BitMatrix rows = code.shard_rows(s);
    for (unsigned x = 0; x < code.w && !basis.full(); ++x)
      if (basis.add(rows.row(x))) sources.push_back({s, x});
  }
  const unsigned rank = basis.rank();
  if (rank < kw)
    return Status(StatusCode::kTooManyErasures,
                  "the present shards hold " + std::to_string(rank) + " independent bit-rows; " +
                      std::to_string(kw) + " (k x w) are needed");
  // The inverse of the chosen rows maps the sources back to the data packets.
  BitMatrix S(kw, kw);
  for (unsigned i = 0; i < kw; ++i) {
    const BitMatrix rows = code.shard_rows(sources[i].shard);
    for (unsigned wd = 0; wd < S.words(); ++wd) S.row(i)[wd] = rows.row(sources[i].index)[wd];
  }
  Result<BitMatrix> inv = invert(S);
  if (!inv.ok()) return Status(StatusCode::kInternal, "decode plan: chosen bit-rows are singular");
  BitDecodePlan plan;
  plan.targets = targets;
  plan.sources = sources;
  for (const PacketRef &p : sources)
    if (plan.source_shards.empty() || plan.source_shards.back() != p.shard) plan.source_shards.push_back(p.shard);
  BitMatrix T(unsigned(targets.size()) * code.w, kw);
  for (size_t t = 0; t < targets.size(); ++t) {
    const BitMatrix rows = code.shard_rows(targets[t]);
    for (unsigned x = 0; x < code.w; ++x)
      for (unsigned wd = 0; wd < T.words(); ++wd) T.row(unsigned(t) * code.w + x)[wd] = rows.row(x)[wd];
  }
  plan.map = multiply(T, *inv);
  return plan;
}

Status ref_bitmatrix_reconstruct(const BitMatrixCode &code, uint8_t *const *shards,
                                 const std::vector<bool> &present, size_t len) {
  if (present.size() != code.n())
    return Status(StatusCode::kShardCount, "present has " + std::to_string(present.size()) +
                                               " entries, the code has " + std::to_string(code.n()) + " shards");
  ECJIT_RETURN_IF_ERROR(check_len(code, len));
  std::vector<unsigned> targets;
  for (unsigned s = 0; s < code.n(); ++s) {
    if (!shards[s]) return Status(StatusCode::kNullPointer, "shard " + std::to_string(s) + " is null");
    if (!present[s]) targets.push_back(s);
  }
  if (targets.empty()) return Status::Ok();
  Result<BitDecodePlan> plan = plan_bitmatrix_decode(code, present, targets);
  if (!plan.ok()) return plan.status();
  apply_bitmatrix(plan->map, plan->sources, plan->target_packets(), code.w, code.packet, shards, len);
  return Status::Ok();
}

}  // namespace ecjit::codes
