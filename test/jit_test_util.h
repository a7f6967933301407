// Helpers shared by the tests that run JIT-compiled kernels.
#pragma once

#include <gtest/gtest.h>

#include <cctype>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <ostream>
#include <sstream>
#include <string>

#include "jit/jit_session.h"
#include "jit/pipeline.h"
#include "jit/target_spec.h"
#include "llvm/Support/Error.h"

namespace ecjit::test {

// The kernel ABI: void(const uint8_t *const *in, uint8_t *const *out, size_t len).
using KernelFn = void (*)(const uint8_t *const *, uint8_t *const *, size_t);

// Calls JIT code. UBSan's -fsanitize=function reads a signature word in front of the
// callee, which JIT code does not have (it would fault at a page start), so opt out here.
#if defined(__clang__)
__attribute__((no_sanitize("function")))
#endif
inline void call_kernel(const jit::CompiledKernel &kernel, const uint8_t *const *in,
                        uint8_t *const *out, size_t len) {
  reinterpret_cast<KernelFn>(kernel.address())(in, out, len);
}

// Text of an llvm::Error (consumes it).
inline std::string err_text(llvm::Error e) { return llvm::toString(std::move(e)); }

// A JIT-compiled kernel plus the target that produced it (for messages).
struct Kernel {
  std::unique_ptr<jit::CompiledKernel> compiled;
  KernelFn fn = nullptr;
  ir::TargetInfo info;
};

// One JIT session shared by all tests of a binary, created on first use.
inline std::shared_ptr<jit::JitSession> &session() {
  static std::shared_ptr<jit::JitSession> s;
  return s;
}

inline void init_session() {
  if (session()) return;
  ASSERT_FALSE(bool(jit::init_llvm_targets()));
  auto s = jit::JitSession::create();
  ASSERT_TRUE(bool(s)) << err_text(s.takeError());
  session() = std::move(*s);
}

inline llvm::Expected<ir::TargetInfo> resolve_target(const std::string &name) {
  auto spec = jit::TargetSpec::parse(name);
  if (!spec) return spec.takeError();
  return spec->resolve();
}

// One parameter of a field x shape x target sweep: GF(2^l), k inputs, m outputs.
struct KernelCase {
  unsigned l, k, m;
  std::string target;
};

inline void PrintTo(const KernelCase &c, std::ostream *os) {
  *os << "gf" << c.l << "_" << c.k << "x" << c.m << "_" << c.target;
}

// The googletest name of a case: PrintTo (found by argument-dependent lookup) with every
// non-alphanumeric character as '_'.
template <typename Param>
std::string case_name(const testing::TestParamInfo<Param> &info) {
  std::ostringstream os;
  PrintTo(info.param, &os);
  std::string s = os.str();
  for (char &ch : s)
    if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return s;
}

// VGF2P8AFFINEQB on one byte, as the Intel SDM defines it (imm8 = 0): result bit t is the
// parity of (matrix byte 7 - t) AND x. The model the GFNI tests check matrices against.
inline uint8_t gfni_affine_byte(uint64_t a, uint8_t x) {
  uint8_t y = 0;
  for (unsigned t = 0; t < 8; ++t)
    if (__builtin_parity(unsigned((a >> (8 * (7 - t))) & x))) y |= uint8_t(1u << t);
  return y;
}

}  // namespace ecjit::test
