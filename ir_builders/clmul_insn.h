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

// clmul-mixed: the same instruction for constants with more than clmul_mixed_short_bits(field)
// set bits, clmul-shift's shifts and XORs (emit_shift_sums) for the others; both kinds of
// product go into one unreduced sum per output and one reduction. Where an instruction product
// costs about as much as that many set bits of shifts and XORs (Zen 3: one 256-bit
// VPCLMULQDQ per 2 cycles), a code's short constants (an rs-vand encoder's, a two-stage
// decoder's syndromes) go by shifts and its dense ones (the inverse stage) by the instruction,
// with both execution-port groups busy. Same fields, targets and errors as clmul-insn.
llvm::Expected<std::unique_ptr<MultiplyLowering>> make_clmul_mixed_lowering(
    const codes::Field &field, const TargetInfo &target);
// Set bits up to which clmul-mixed multiplies by shifts and XORs.
unsigned clmul_mixed_short_bits(const codes::Field &field);

}  // namespace ecjit::ir
