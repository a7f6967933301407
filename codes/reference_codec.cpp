// The scalar reference codec: symbol-by-symbol matrix application with Field::mul.
#include "codes/reference_codec.h"

#include <cstring>
#include <string>

namespace ecjit::codes {

uint64_t load_symbol(const uint8_t *p, unsigned bytes) {
  uint64_t v = 0;
  for (unsigned b = 0; b < bytes; ++b) v |= uint64_t(p[b]) << (8 * b);
  return v;
}

void store_symbol(uint8_t *p, unsigned bytes, uint64_t v) {
  for (unsigned b = 0; b < bytes; ++b) p[b] = uint8_t(v >> (8 * b));
}

namespace {

// c * x for a fixed c, as the XOR of c * (byte_b(x) << 8b) over the bytes of x: exact,
// because multiplication by a constant is GF(2)-linear. Each table entry is a Field::mul.
struct ConstMul {
  unsigned bytes = 1;
  std::vector<uint64_t> t;  // bytes * 256
  ConstMul(const Field &f, uint64_t c) : bytes(f.bytes()), t(size_t(f.bytes()) * 256) {
    for (unsigned b = 0; b < bytes; ++b)
      for (unsigned v = 0; v < 256; ++v) t[b * 256 + v] = f.mul(c, uint64_t(v) << (8 * b));
  }
  uint64_t operator()(uint64_t x) const {
    uint64_t r = 0;
    for (unsigned b = 0; b < bytes; ++b) r ^= t[b * 256 + ((x >> (8 * b)) & 0xFF)];
    return r;
  }
};

Status check_len(const Field &f, size_t len) {
  if (len % f.bytes() != 0)
    return Status(StatusCode::kShardSize, "len = " + std::to_string(len) +
                                              " is not a multiple of the symbol size " +
                                              std::to_string(f.bytes()));
  return Status::Ok();
}

}  // namespace

void apply_matrix(const Field &f, const Matrix &M, const uint8_t *const *in, uint8_t *const *out,
                  size_t len) {
  const unsigned sb = f.bytes();
  for (unsigned r = 0; r < M.rows; ++r) {
    std::vector<ConstMul> muls;
    muls.reserve(M.cols);
    for (unsigned c = 0; c < M.cols; ++c) muls.emplace_back(f, M.at(r, c));
    for (size_t off = 0; off + sb <= len; off += sb) {
      uint64_t acc = 0;
      for (unsigned c = 0; c < M.cols; ++c) acc ^= muls[c](load_symbol(in[c] + off, sb));
      store_symbol(out[r] + off, sb, acc);
    }
  }
}

Status ref_encode(const LinearCode &code, const uint8_t *const *data, uint8_t *const *parity,
                  size_t len) {
  ECJIT_RETURN_IF_ERROR(check_len(code.field, len));
  if (!data || !parity) return Status(StatusCode::kNullPointer, "shard array is null");
  for (unsigned i = 0; i < code.k; ++i)
    if (!data[i]) return Status(StatusCode::kNullPointer, "data shard " + std::to_string(i) + " is null");
  for (unsigned i = 0; i < code.m; ++i)
    if (!parity[i])
      return Status(StatusCode::kNullPointer, "parity shard " + std::to_string(i) + " is null");
  apply_matrix(code.field, code.parity, data, parity, len);
  return Status::Ok();
}

Status ref_reconstruct(const LinearCode &code, uint8_t *const *shards,
                       const std::vector<bool> &present, size_t len) {
  ECJIT_RETURN_IF_ERROR(check_len(code.field, len));
  if (!shards) return Status(StatusCode::kNullPointer, "shard array is null");
  if (present.size() != code.n())
    return Status(StatusCode::kShardCount, "present has " + std::to_string(present.size()) +
                                               " entries; the code has " + std::to_string(code.n()));
  for (unsigned s = 0; s < code.n(); ++s)
    if (!shards[s]) return Status(StatusCode::kNullPointer, "shard " + std::to_string(s) + " is null");
  Result<DecodePlan> plan = plan_reconstruct(code, present);
  if (!plan.ok()) return plan.status();
  if (plan->targets.empty()) return Status::Ok();
  std::vector<const uint8_t *> in;
  std::vector<uint8_t *> out;
  for (unsigned s : plan->sources) in.push_back(shards[s]);
  for (unsigned t : plan->targets) out.push_back(shards[t]);
  apply_matrix(code.field, plan->coeffs, in.data(), out.data(), len);
  return Status::Ok();
}

}  // namespace ecjit::codes
