// clmul-insn: constant multiply with the carry-less multiply instruction (PCLMULQDQ / VPCLMULQDQ / PMULL).
#pragma once

#include <memory>

#include "codes/gf.h"
#include "ir_builders/lowering.h"
#include "ir_builders/target_info.h"

namespace llvm {
template <typename T> class Expected;
}  // namespace llvm

namespace ecjit::ir {

// Whether clmul-insn can serve `field` on `target`: GF(2^32) or GF(2^64) on x86 with
// PCLMULQDQ at 128 bits, VPCLMULQDQ + AVX at 256, VPCLMULQDQ + AVX-512F at 512, or on
// little-endian AArch64 with PMULL (feature "aes") at 128 bits.
// Pure function of its arguments; thread-safe.
bool clmul_insn_supported(const codes::Field &field, const TargetInfo &target);

// The instruction multiplies one 64-bit lane of each 128-bit lane of x by the constant
// (its imm selects the low or high qword; PMULL / PMULL2 on AArch64) into a 128-bit product. Products are summed
// unreduced over all inputs of an output and reduced once per output vector (eq. 3.25),
// with the Barrett reduction of clmul-shift (barrett_reduce) on the low / high halves.
// GF(2^64): per product two multiplies (even and odd symbols of each 128-bit lane), two
// accumulators of 128-bit sums. GF(2^32): the qwords of x are split once per input into
// their low and high symbols (AND / shift, zero-extended), then four multiplies per product
// (each a 63-bit sum in the low qword of its lane), four accumulators. Finish: shuffles
// gather the low and high halves in symbol order, one reduction. Products are emitted input
// by input (InputOrder). Values other than the full vector (the scalar tail) go to
// clmul-shift. Errors (llvm::Error): a field or target clmul_insn_supported() rejects.
llvm::Expected<std::unique_ptr<MultiplyLowering>> make_clmul_insn_lowering(
    const codes::Field &field, const TargetInfo &target);

}  // namespace ecjit::ir
