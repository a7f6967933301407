// kernel_self_test: seeded inputs, the kernel and codes::apply_matrix side by side, byte for byte.
#include "jit/kernel_self_test.h"

#include <algorithm>
#include <cstring>
#include <random>
#include <vector>

#include "codes/coeff_layout.h"
#include "codes/reference_codec.h"
#include "codes/rs_fft.h"
#include "codes/rs_fft_program.h"
#include "fft/mul_tables.h"
#include "fft/schedule.h"
#include "ir_builders/lowering.h"

namespace ecjit::jit {
namespace {

using KernelFn = void (*)(const uint8_t *const *, uint8_t *const *, size_t);
using ShapeFn = void (*)(const uint8_t *const *, uint8_t *const *, size_t, const uint8_t *);
using FftDecodeFn = void (*)(const uint8_t *const *, uint8_t *const *, const uint8_t *, size_t);
using FftStepFn = void (*)(uint8_t *const *, const sched::FftStep *, size_t, const uint8_t *, size_t);

#if defined(__clang__)
__attribute__((no_sanitize("function")))
#endif
void call(void *fn, const uint8_t *const *in, uint8_t *const *out, size_t len,
          const uint8_t *coeffs) {
  if (coeffs) reinterpret_cast<ShapeFn>(fn)(in, out, len, coeffs);
  else reinterpret_cast<KernelFn>(fn)(in, out, len);
}

#if defined(__clang__)
__attribute__((no_sanitize("function")))
#endif
void call_fft_decode(void *fn, const uint8_t *const *in, uint8_t *const *out, const uint8_t *tables,
                     size_t len) {
  reinterpret_cast<FftDecodeFn>(fn)(in, out, tables, len);
}

#if defined(__clang__)
__attribute__((no_sanitize("function")))
#endif
void call_fft_steps(void *fn, uint8_t *const *ptr, const sched::FftSchedule &s, size_t bytes) {
  reinterpret_cast<FftStepFn>(fn)(ptr, s.steps.data(), s.steps.size(), s.tables.data(), bytes);
}

}  // namespace

void run_fft_schedule(void *fn, const sched::FftSchedule &s, std::vector<std::vector<uint8_t>> &shards, size_t len) {
  // Scratch tiles evenly spaced, as the runtime's decode core has them (derivative-fused steps
  // whose groups are all scratch take their offset loop; those with an output slot, the other).
  const size_t stride = len + 64;
  std::vector<uint8_t> scratch(s.slots * stride);
  std::vector<uint8_t *> ptr;
  for (uint32_t x = 0; x < s.slots; ++x)
    ptr.push_back(s.slot_shard[x] >= 0 ? shards[size_t(s.slot_shard[x])].data() : scratch.data() + x * stride);
  for (auto &v : shards) ptr.push_back(v.data());
  call_fft_steps(fn, ptr.data(), s, len);
}

namespace {

// `len` bytes at `offset` past a 64-byte boundary, with kGuard bytes of a fixed pattern on
// either side: a kernel that writes before or past its shard is caught, and the offset puts
// the buffer where the kernel's contract allows (aligned for streaming stores, else one
// symbol off every vector boundary).
class GuardedBuffer {
 public:
  static constexpr size_t kGuard = 64;
  static constexpr uint8_t kPattern = 0xa5;
  GuardedBuffer(size_t len, size_t offset) : mem_(len + offset + 2 * kGuard + 64, kPattern), len_(len) {
    const uintptr_t base = reinterpret_cast<uintptr_t>(mem_.data()) + kGuard;
    data_ = mem_.data() + ((base + 63) & ~uintptr_t(63)) - reinterpret_cast<uintptr_t>(mem_.data()) + offset;
  }
  uint8_t *data() { return data_; }
  const uint8_t *data() const { return data_; }
  bool guards_intact() const {
    const uint8_t *begin = data_, *end = data_ + len_;
    return std::all_of(mem_.data(), begin, [](uint8_t b) { return b == kPattern; }) &&
           std::all_of(end, mem_.data() + mem_.size(), [](uint8_t b) { return b == kPattern; });
  }

 private:
  std::vector<uint8_t> mem_;
  uint8_t *data_ = nullptr;
  size_t len_ = 0;
};

// The lengths that take each path of a kernel with `contract`: the main loop twice, the
// one-vector loop and an overlapping last vector; one vector and a bit; the shortest allowed
// (a shard shorter than a vector, where the contract has one). Each a multiple of
// len_multiple and at least min_len.
std::vector<size_t> self_test_lengths(const ir::KernelContract &c, size_t symbol) {
  const size_t unit = std::max(c.len_multiple, symbol);
  std::vector<size_t> out;
  for (size_t want : {2 * c.step_bytes + c.vector_bytes + 5 * symbol, c.vector_bytes + symbol,
                      std::max(c.min_len, unit)}) {
    size_t len = want / unit * unit;
    if (len < c.min_len) len = (c.min_len + unit - 1) / unit * unit;
    if (len && std::find(out.begin(), out.end(), len) == out.end()) out.push_back(len);
  }
  return out;
}

}  // namespace

bool kernel_matches_desc(const CompiledKernel &kernel, const ir::KernelDesc &desc,
                         ir::Strategy strategy, const ir::KernelContract &contract) {
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
  // Inputs one symbol off a vector boundary (kernels load unaligned); outputs too where the
  // contract allows, else aligned as it demands.
  const size_t out_offset = contract.out_align > 1 ? 0 : sb;
  for (size_t len : self_test_lengths(contract, sb)) {
    std::vector<GuardedBuffer> in, out;
    for (unsigned c = 0; c < (delta ? 2 * k : k); ++c) in.emplace_back(len, sb);
    for (unsigned r = 0; r < m; ++r) out.emplace_back(len, out_offset);
    std::vector<std::vector<uint8_t>> want(m, std::vector<uint8_t>(len)), x(k, std::vector<uint8_t>(len));
    std::vector<std::vector<uint8_t>> in_copy;
    for (auto &v : in) {
      std::generate(v.data(), v.data() + len, [&] { return uint8_t(rng()); });
      in_copy.emplace_back(v.data(), v.data() + len);
    }
    for (unsigned r = 0; r < m; ++r) std::generate(out[r].data(), out[r].data() + len, [&] { return uint8_t(rng()); });
    for (unsigned c = 0; c < k; ++c)
      for (size_t i = 0; i < len; ++i) x[c][i] = delta ? in_copy[2 * c][i] ^ in_copy[2 * c + 1][i] : in_copy[c][i];
    std::vector<const uint8_t *> in_p, x_p;
    std::vector<uint8_t *> out_p, want_p;
    for (auto &v : in) in_p.push_back(v.data());
    for (auto &v : x) x_p.push_back(v.data());
    for (auto &v : out) out_p.push_back(v.data());
    for (auto &v : want) want_p.push_back(v.data());
    codes::apply_matrix(f, M, x_p.data(), want_p.data(), len);
    if (desc.output == ir::OutputMode::kAccumulate)
      for (unsigned r = 0; r < m; ++r)
        for (size_t i = 0; i < len; ++i) want[r][i] ^= out[r].data()[i];
    call(kernel.address(), in_p.data(), out_p.data(), len, desc.runtime_coeffs ? prepared.data() : nullptr);
    for (unsigned r = 0; r < m; ++r)
      if (!std::equal(want[r].begin(), want[r].end(), out[r].data()) || !out[r].guards_intact()) return false;
    for (size_t c = 0; c < in.size(); ++c)
      if (!std::equal(in_copy[c].begin(), in_copy[c].end(), in[c].data()) || !in[c].guards_intact()) return false;
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

namespace {

// The step kernel on rs-fft (k, m)'s encode and (core: a kernel of every kind) one decode, two-
// and three-layer steps both, against codes::fft's reference (fft_kernel_matches_desc).
bool fft_steps_match(const CompiledKernel &kernel, unsigned k, unsigned m, codes::fft::Gf gf, bool core) {
  namespace fft = codes::fft;
  const size_t len = 128;
  std::mt19937_64 rng(0x57e95);
  std::vector<std::vector<uint8_t>> want(k + m, std::vector<uint8_t>(len)), got;
  for (unsigned i = 0; i < k; ++i)
    for (auto &b : want[i]) b = uint8_t(rng());
  std::vector<const uint8_t *> orig;
  std::vector<uint8_t *> rec;
  for (unsigned i = 0; i < k; ++i) orig.push_back(want[i].data());
  for (unsigned j = 0; j < m; ++j) rec.push_back(want[k + j].data());
  if (!fft::encode_bytes(k, m, len, orig.data(), rec.data(), gf).ok()) return false;
  got = want;
  // Two- and three-layer steps both (the runtime builds the latter where they pay).
  for (bool radix8 : {false, true}) {
    for (unsigned j = 0; j < m; ++j) std::fill(got[k + j].begin(), got[k + j].end(), 0x5a);
    Result<sched::FftSchedule> enc = sched::fft_encode_schedule(k, m, true, radix8, gf);
    if (!enc.ok()) return false;
    run_fft_schedule(kernel.address(), *enc, got, len);
    if (got != want) return false;
    if (!core) continue;
    std::vector<bool> present(k + m, true), wanted(k + m, false);
    for (unsigned s : {0u, 3u, 6u}) {
      present[s] = false;
      wanted[s] = true;
      std::fill(got[s].begin(), got[s].end(), 0xa5);
    }
    Result<sched::FftSchedule> dec = sched::fft_decode_schedule(k, m, present, wanted, radix8, gf);
    if (!dec.ok()) return false;
    run_fft_schedule(kernel.address(), *dec, got, len);
    if (got != want) return false;
  }
  return true;
}

}  // namespace

bool fft_kernel_matches_desc(const CompiledKernel &kernel, const ir::FftKernelDesc &desc) {
  namespace fft = codes::fft;
  const fft::Gf gf = desc.gf;
  if (desc.steps()) {
    // Encode and (all kinds) one decode of 5:3 and 8:8 (a core whose derivative runs in its
    // FFT's first pass: kFftStepFft4D and Fft8D steps).
    for (auto [k, m] : {std::pair{5u, 3u}, std::pair{8u, 8u}})
      if (!fft_steps_match(kernel, k, m, gf, desc.kind == ir::FftKernelDesc::Kind::kSteps)) return false;
    return true;
  }
  Result<fft::Geometry> g = fft::geometry(desc.k, desc.m, gf);
  if (!g.ok()) return false;
  const unsigned k = desc.k, m = desc.m, n = k + m;
  const size_t len = 128;  // two columns
  std::mt19937_64 rng(0xff7c0de);
  std::vector<std::vector<uint8_t>> shard(n, std::vector<uint8_t>(len));
  for (unsigned i = 0; i < k; ++i)
    for (auto &b : shard[i]) b = uint8_t(rng());
  std::vector<const uint8_t *> orig(k);
  std::vector<uint8_t *> rec(m);
  for (unsigned i = 0; i < k; ++i) orig[i] = shard[i].data();
  for (unsigned j = 0; j < m; ++j) rec[j] = shard[k + j].data();
  if (!fft::encode_bytes(k, m, len, orig.data(), rec.data(), gf).ok()) return false;
  std::vector<std::vector<uint8_t>> got(n, std::vector<uint8_t>(len, 0x5a));
  if (desc.kind == ir::FftKernelDesc::Kind::kInverse) {  // its targets from its sources
    std::vector<const uint8_t *> in;
    std::vector<uint8_t *> out;
    for (unsigned s : desc.sources) {
      if (s >= n) return false;
      in.push_back(shard[s].data());
    }
    for (unsigned t : desc.targets) {
      if (t >= n) return false;
      out.push_back(got[t].data());
    }
    call(kernel.address(), in.data(), out.data(), len, nullptr);
    for (unsigned t : desc.targets)
      if (got[t] != shard[t]) return false;
    return true;
  }
  if (desc.kind == ir::FftKernelDesc::Kind::kEncode) {
    std::vector<uint8_t *> out(m);
    for (unsigned j = 0; j < m; ++j) out[j] = got[j].data();
    call(kernel.address(), orig.data(), out.data(), len, nullptr);
    for (unsigned j = 0; j < m; ++j)
      if (got[j] != shard[k + j]) return false;
    return true;
  }
  // Decode: the first m shards (originals first) lost, every one restored.
  std::vector<bool> present(n, true);
  for (unsigned s = 0; s < m; ++s) present[s] = false;
  Result<std::vector<uint16_t>> logs = fft::locator_logs(k, m, present, gf);
  if (!logs.ok()) return false;
  const size_t points = g->decode_work;
  std::vector<uint8_t> tables(2 * points * sched::kFftMulTableBytes, 0);
  std::vector<const uint8_t *> in(points, shard[n - 1].data());
  std::vector<uint8_t *> out(points, nullptr);
  for (unsigned s = 0; s < n; ++s) {
    const size_t x = s < k ? g->original_pos + s : g->recovery_pos + (s - k);
    if (present[s]) {
      in[x] = shard[s].data();
      sched::fft_mul_tables((*logs)[x], tables.data() + x * sched::kFftMulTableBytes, gf);
    } else {
      out[x] = got[s].data();
      sched::fft_mul_tables(uint16_t(fft::lch_field(gf).modulus - (*logs)[x]),
                            tables.data() + (points + x) * sched::kFftMulTableBytes, gf);
    }
  }
  call_fft_decode(kernel.address(), in.data(), out.data(), tables.data(), len);
  for (unsigned s = 0; s < n; ++s)
    if (!present[s] && got[s] != shard[s]) return false;
  return true;
}

}  // namespace ecjit::jit
