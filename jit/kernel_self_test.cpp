// kernel_self_test: seeded inputs, the kernel and codes::apply_matrix side by side, byte for byte.
#include "jit/kernel_self_test.h"

#include <cstring>
#include <random>
#include <vector>

#include "codes/coeff_layout.h"
#include "codes/reference_codec.h"
#include "ir_builders/lowering.h"

namespace ecjit::jit {
namespace {

using KernelFn = void (*)(const uint8_t *const *, uint8_t *const *, size_t);
using ShapeFn = void (*)(const uint8_t *const *, uint8_t *const *, size_t, const uint8_t *);

#if defined(__clang__)
__attribute__((no_sanitize("function")))
#endif
void call(void *fn, const uint8_t *const *in, uint8_t *const *out, size_t len,
          const uint8_t *coeffs) {
  if (coeffs) reinterpret_cast<ShapeFn>(fn)(in, out, len, coeffs);
  else reinterpret_cast<KernelFn>(fn)(in, out, len);
}

}  // namespace

bool kernel_matches_desc(const CompiledKernel &kernel, const ir::KernelDesc &desc,
                         ir::Strategy strategy) {
  if (desc.output != ir::OutputMode::kOverwrite && desc.output != ir::OutputMode::kAccumulate)
    return true;
  const codes::Field &f = desc.field;
  const unsigned sb = f.bytes(), k = desc.sources(), m = desc.coeffs.rows;
  const bool delta = desc.input == ir::InputMode::kDelta;
  std::mt19937_64 rng(0x5e1f7e57);
  // The map: a shape kernel takes any matrix, so one is drawn; others compute their own.
  codes::Matrix M = desc.has_pre() ? ir::one_stage(desc).coeffs : desc.coeffs;
  std::vector<uint8_t> prepared;
  if (desc.runtime_coeffs) {
    for (uint64_t &a : M.a) a = rng() & f.mask();
    codes::prepare_matrix(ir::runtime_layout(strategy), f, M, &prepared);
  }
  for (size_t len : {size_t(3 * 64 + 5 * 8), size_t(sb)}) {
    len = len / sb * sb;
    std::vector<std::vector<uint8_t>> in(delta ? 2 * k : k, std::vector<uint8_t>(len));
    std::vector<std::vector<uint8_t>> out(m, std::vector<uint8_t>(len)), want = out, x(k, std::vector<uint8_t>(len));
    for (auto &v : in)
      for (auto &b : v) b = uint8_t(rng());
    for (unsigned r = 0; r < m; ++r)
      for (size_t i = 0; i < len; ++i) out[r][i] = uint8_t(rng());
    for (unsigned c = 0; c < k; ++c)
      for (size_t i = 0; i < len; ++i) x[c][i] = delta ? in[2 * c][i] ^ in[2 * c + 1][i] : in[c][i];
    std::vector<const uint8_t *> in_p, x_p;
    std::vector<uint8_t *> out_p, want_p;
    for (auto &v : in) in_p.push_back(v.data());
    for (auto &v : x) x_p.push_back(v.data());
    for (auto &v : out) out_p.push_back(v.data());
    for (auto &v : want) want_p.push_back(v.data());
    codes::apply_matrix(f, M, x_p.data(), want_p.data(), len);
    if (desc.output == ir::OutputMode::kAccumulate)
      for (unsigned r = 0; r < m; ++r)
        for (size_t i = 0; i < len; ++i) want[r][i] ^= out[r][i];
    call(kernel.address(), in_p.data(), out_p.data(), len, desc.runtime_coeffs ? prepared.data() : nullptr);
    if (out != want) return false;
  }
  return true;
}

bool xor_kernel_matches_desc(const CompiledKernel &kernel, const ir::XorKernelDesc &desc) {
  std::mt19937_64 rng(0x0a5c4ed);
  const size_t block = size_t(desc.w) * desc.packet, len = 2 * block;
  std::vector<std::vector<uint8_t>> in(desc.in_pointers(), std::vector<uint8_t>(len));
  std::vector<std::vector<uint8_t>> out(desc.out_pointers(), std::vector<uint8_t>(len));
  for (auto *group : {&in, &out})
    for (auto &v : *group)
      for (auto &b : v) b = uint8_t(rng());
  std::vector<std::vector<uint8_t>> want = out;
  std::vector<uint8_t> packet_out(desc.packet);
  for (size_t b = 0; b < len; b += block) {
    std::vector<const uint8_t *> ip;
    for (const codes::PacketRef &r : desc.inputs) ip.push_back(in[r.shard].data() + b + size_t(r.index) * desc.packet);
    std::vector<std::vector<uint8_t>> res(desc.outputs.size(), std::vector<uint8_t>(desc.packet));
    std::vector<uint8_t *> op;
    for (auto &v : res) op.push_back(v.data());
    codes::run_program(desc.program, ip.data(), op.data(), desc.packet);
    for (size_t r = 0; r < desc.outputs.size(); ++r) {
      uint8_t *dst = want[desc.outputs[r].shard].data() + b + size_t(desc.outputs[r].index) * desc.packet;
      for (unsigned i = 0; i < desc.packet; ++i) dst[i] = desc.accumulate ? dst[i] ^ res[r][i] : res[r][i];
    }
  }
  std::vector<const uint8_t *> in_p;
  std::vector<uint8_t *> out_p;
  for (auto &v : in) in_p.push_back(v.data());
  for (auto &v : out) out_p.push_back(v.data());
  call(kernel.address(), in_p.data(), out_p.data(), len, nullptr);
  return out == want;
}

}  // namespace ecjit::jit
