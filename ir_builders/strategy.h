// Strategy: the lowering of constant Galois-field multiplies into IR (the table of strategies in README.md).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "codes/coeff_layout.h"

namespace ecjit::ir {

enum class Strategy {
  kAuto,        // let the caller (tuner) pick; resolved before a builder runs
  kClmulShift,  // Nešković 2018, ch. 5.2: shifts + XORs into lo/hi accumulators, one Barrett
                // reduction per output vector (eq. 3.25)
  kSplitTable,  // nibble tables per constant, looked up with PSHUFB / VPSHUFB / TBL
                // (GF(2^8), GF(2^16); SSSE3, AVX2, AVX-512BW, AArch64 NEON)
  kGfni,        // GF(2) affine transforms of bytes, VGF2P8AFFINEQB (x86 GFNI; GF(2^8), wider
                // fields as 8x8 bit-matrix blocks on byte planes)
  kClmulInsn,   // carry-less multiply instruction, PCLMULQDQ / VPCLMULQDQ (x86; GF(2^32),
                // GF(2^64)), unreduced sums reduced once per output
  kClmulMixed,  // clmul-insn for constants with many set bits, clmul-shift's shifts and XORs
                // for the others, summed unreduced and reduced once per output
};

const char *strategy_name(Strategy s);
std::optional<Strategy> parse_strategy(const std::string &name);
// Every strategy name parse_strategy accepts, "auto" first, in table order (for help texts
// and error messages).
std::vector<std::string> known_strategies();

// The prepared-coefficient layout a shape kernel of `strategy` (a shape_strategy) reads.
// Inline and LLVM-free: the drop-in prepares coefficients without linking the IR builders.
inline codes::CoeffLayout runtime_layout(Strategy strategy) {
  switch (strategy) {
    case Strategy::kGfni:
      return codes::CoeffLayout::kGfniMatrices;
    case Strategy::kClmulInsn:
    case Strategy::kClmulMixed:
      return codes::CoeffLayout::kClmulConstant;
    default:
      return codes::CoeffLayout::kNibbleTables;
  }
}

}  // namespace ecjit::ir
