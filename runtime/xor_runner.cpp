// XorRunner: linear-scan slots for the program's values, chunked XOR loops.
#include "runtime/xor_runner.h"

#include <algorithm>
#include <cstring>

namespace ecjit::runtime {
namespace {

// dst = a ^ b over n bytes (n a multiple of 8), 32 bytes per step where it can.
void xor2(uint8_t *dst, const uint8_t *a, const uint8_t *b, size_t n) {
  typedef uint64_t v4 __attribute__((vector_size(32), aligned(1)));
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    v4 x, y;
    std::memcpy(&x, a + i, 32);
    std::memcpy(&y, b + i, 32);
    x ^= y;
    std::memcpy(dst + i, &x, 32);
  }
  for (; i + 8 <= n; i += 8) {
    uint64_t x, y;
    std::memcpy(&x, a + i, 8);
    std::memcpy(&y, b + i, 8);
    x ^= y;
    std::memcpy(dst + i, &x, 8);
  }
}

}  // namespace

XorRunner::XorRunner(ir::XorKernelDesc desc) : desc_(std::move(desc)) {
  const codes::XorProgram &p = desc_.program;
  // Last op reading each value; outputs are read after the last op (ops.size()); -1: unused.
  std::vector<int64_t> last(p.values(), -1);
  for (size_t i = 0; i < p.ops.size(); ++i) last[p.ops[i].a] = last[p.ops[i].b] = int64_t(i);
  for (uint32_t v : p.outputs)
    if (v != codes::XorProgram::kZero) last[v] = int64_t(p.ops.size());
  std::vector<int32_t> free_slots;
  slot_.assign(p.ops.size(), -1);
  for (size_t i = 0; i < p.ops.size(); ++i) {
    // Operands read for the last time here give their slots back first: the XOR reads both
    // operands of a position before it writes it, so the result may take one of them.
    const uint32_t a = p.ops[i].a, b = p.ops[i].b;
    if (a >= p.inputs && last[a] == int64_t(i)) free_slots.push_back(slot_[a - p.inputs]);
    if (b >= p.inputs && b != a && last[b] == int64_t(i)) free_slots.push_back(slot_[b - p.inputs]);
    if (!free_slots.empty()) {
      slot_[i] = free_slots.back();
      free_slots.pop_back();
    } else {
      slot_[i] = int32_t(slots_++);
    }
    if (last[p.inputs + i] < 0) free_slots.push_back(slot_[i]);  // never read
  }
}

void XorRunner::run(const uint8_t *const *in, uint8_t *const *out, size_t len) const {
  const codes::XorProgram &p = desc_.program;
  const size_t packet = desc_.packet, block = size_t(desc_.w) * packet;
  thread_local std::vector<uint8_t> scratch;
  if (scratch.size() < size_t(slots_) * kChunk) scratch.resize(size_t(slots_) * kChunk);
  for (size_t b = 0; b + block <= len; b += block)
    for (size_t off = 0; off < packet; off += kChunk) {
      const size_t n = std::min<size_t>(kChunk, packet - off);
      auto at = [&](uint32_t v) -> const uint8_t * {
        if (v < p.inputs) return in[desc_.inputs[v].shard] + b + size_t(desc_.inputs[v].index) * packet + off;
        return scratch.data() + size_t(slot_[v - p.inputs]) * kChunk;
      };
      for (size_t i = 0; i < p.ops.size(); ++i)
        xor2(scratch.data() + size_t(slot_[i]) * kChunk, at(p.ops[i].a), at(p.ops[i].b), n);
      for (size_t r = 0; r < p.outputs.size(); ++r) {
        uint8_t *dst = out[desc_.outputs[r].shard] + b + size_t(desc_.outputs[r].index) * packet + off;
        const uint32_t v = p.outputs[r];
        if (desc_.accumulate) {
          if (v != codes::XorProgram::kZero) xor2(dst, dst, at(v), n);
        } else if (v == codes::XorProgram::kZero) {
          std::memset(dst, 0, n);
        } else {
          std::memmove(dst, at(v), n);
        }
      }
    }
}

}  // namespace ecjit::runtime
