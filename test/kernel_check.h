// Compile one kernel of a strategy through the JIT and compare it with codes::apply_matrix.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "codes/gf.h"
#include "codes/matrix.h"
#include "codes/reference_codec.h"
#include "guarded_buffer.h"
#include "ir_builders/kernel_builder.h"
#include "jit_test_util.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Target/TargetMachine.h"

namespace ecjit::test {

// Odd lengths of the pipeline tests (klauspost's testDataSizes).
inline const size_t kLengths[] = {1, 15, 16, 31, 4651, 10001, 100003};

// `len` rounded to whole l-bit symbols, at least one symbol.
inline size_t symbol_len(size_t len, unsigned l) {
  const size_t s = l / 8;
  return len < s ? s : len - len % s;
}

// m x k, fixed seed; about 15% zeros and 15% ones so the skeleton's special cases are hit,
// 25% with 2..4 set bits (short constants: clmul-mixed takes them by shifts, the dense rest
// by the instruction, both kinds in one output), the rest uniform over [2, 2^l).
inline codes::Matrix random_matrix(const codes::Field &f, unsigned k, unsigned m, uint64_t seed) {
  std::mt19937_64 rng(seed);
  codes::Matrix M(m, k);
  for (uint64_t &a : M.a) {
    const unsigned pick = unsigned(rng() % 100);
    if (pick < 15) a = 0;
    else if (pick < 30) a = 1;
    else if (pick < 55) {  // a few set bits (an encoder's short constants): 2..4 random bits
      a = 0;
      const unsigned bits = 2 + unsigned(rng() % 3);
      for (unsigned i = 0; i < bits; ++i) a |= uint64_t(1) << (rng() % f.bits());
      if (a < 2) a = 2;
    } else
      a = 2 + rng() % (f.mask() - 1);
  }
  return M;
}

// JIT-compiles `desc` (its symbol is made up here) with `strategy` for `target_name` at `level`.
inline void compile_desc(ir::KernelDesc desc, const std::string &target_name,
                         ir::Strategy strategy, jit::OptLevel level, Kernel *out,
                         ir::BuildOptions options = {}) {
  init_session();
  auto info = resolve_target(target_name);
  ASSERT_TRUE(bool(info)) << target_name << ": " << err_text(info.takeError());
  static int counter = 0;
  const codes::Matrix &M = desc.coeffs;
  desc.symbol = ir::kernel_symbol(
      ir::strategy_name(strategy),
      "gf" + std::to_string(desc.field.bits()) + "_" + std::to_string(M.cols) + "x" +
          std::to_string(M.rows) + (desc.has_pre() ? "_pre" + std::to_string(desc.pre.rows) : "") +
          "_" + std::to_string(counter++),
      target_name);
  auto ctx = std::make_unique<llvm::LLVMContext>();
  auto mod = ir::build_kernel(*ctx, desc, *info, strategy, options);
  ASSERT_TRUE(bool(mod)) << err_text(mod.takeError());
  auto tm = jit::make_target_machine(*info, level);
  ASSERT_TRUE(bool(tm)) << err_text(tm.takeError());
  llvm::Error opt = jit::optimize(**mod, **tm, level);
  ASSERT_FALSE(bool(opt)) << err_text(std::move(opt));
  auto compiled = session()->add(std::move(ctx), std::move(*mod), desc.symbol);
  ASSERT_TRUE(bool(compiled)) << err_text(compiled.takeError());
  out->compiled = std::move(*compiled);
  out->fn = reinterpret_cast<KernelFn>(out->compiled->address());
  out->info = *info;
  ASSERT_NE(out->fn, nullptr);
}

// JIT-compiles out = M * in over f with `strategy` for `target_name` at `level`.
inline void compile_kernel(const codes::Field &f, const codes::Matrix &M,
                           const std::string &target_name, ir::Strategy strategy,
                           jit::OptLevel level, Kernel *out, ir::BuildOptions options = {}) {
  compile_desc(ir::KernelDesc{f, M, ""}, target_name, strategy, level, out, options);
}

// Runs the kernel on buffers flush against a guard page (`gap` bytes before it) and compares
// every output byte with codes::apply_matrix. Outputs start as 0xA5 (never read). With a
// first stage `pre` (KernelDesc::pre), the expected outputs are computed in two scalar
// steps: t = pre * in, then M * [in; t].
inline void check_kernel(const codes::Field &f, const codes::Matrix &M, const Kernel &kernel,
                         const std::string &what, size_t len, size_t gap, uint64_t seed,
                         const codes::Matrix &pre = codes::Matrix()) {
  const unsigned k = pre.rows ? pre.cols : M.cols, m = M.rows;
  std::mt19937_64 rng(seed ^ (len * 0x9E3779B97F4A7C15ull));
  std::vector<std::unique_ptr<GuardedBuffer>> in, out;
  std::vector<const uint8_t *> in_ptrs;
  std::vector<uint8_t *> out_ptrs;
  for (unsigned c = 0; c < k; ++c) {
    in.push_back(std::make_unique<GuardedBuffer>(len, gap));
    ASSERT_TRUE(in.back()->ok());
    for (size_t i = 0; i < len; ++i) in.back()->data()[i] = uint8_t(rng());
    in_ptrs.push_back(in.back()->data());
  }
  for (unsigned r = 0; r < m; ++r) {
    out.push_back(std::make_unique<GuardedBuffer>(len, gap));
    ASSERT_TRUE(out.back()->ok());
    memset(out.back()->data(), 0xA5, len);
    out_ptrs.push_back(out.back()->data());
  }
  std::vector<std::vector<uint8_t>> want(m, std::vector<uint8_t>(len));
  std::vector<uint8_t *> want_ptrs;
  for (auto &w : want) want_ptrs.push_back(w.data());
  std::vector<std::vector<uint8_t>> t(pre.rows, std::vector<uint8_t>(len));
  std::vector<const uint8_t *> x = in_ptrs;
  if (pre.rows) {
    std::vector<uint8_t *> t_ptrs;
    for (auto &v : t) t_ptrs.push_back(v.data());
    codes::apply_matrix(f, pre, in_ptrs.data(), t_ptrs.data(), len);
    for (auto &v : t) x.push_back(v.data());
  }
  codes::apply_matrix(f, M, x.data(), want_ptrs.data(), len);

  kernel.fn(in_ptrs.data(), out_ptrs.data(), len);

  for (unsigned r = 0; r < m; ++r) {
    size_t bad = len;
    for (size_t i = 0; i < len && bad == len; ++i)
      if (out_ptrs[r][i] != want[r][i]) bad = i;
    ASSERT_EQ(bad, len) << what << ": gf(2^" << f.bits() << ") k=" << k << " m=" << m
                        << (pre.rows ? " pre rows=" + std::to_string(pre.rows) : std::string())
                        << " (vector_bits " << kernel.info.vector_bits << ", cpu "
                        << kernel.info.cpu << ") len=" << len << " gap=" << gap << " output "
                        << r << " byte " << bad << ": got " << int(out_ptrs[r][bad])
                        << " want " << int(want[r][bad]);
  }
}

}  // namespace ecjit::test
