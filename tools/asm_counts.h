// asm_counts: XOR / shift / AND counts in assembly text per target family, and .text size of an object file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "llvm/Support/Error.h"

namespace ecjit::tools {

enum class AsmFamily { kX86, kAArch64, kArm, kHexagon, kRiscv, kOther };

// The family of an LLVM triple ("x86_64-...", "aarch64-...", "armv7a-...", "hexagon-...").
AsmFamily asm_family(const std::string &triple);
const char *asm_family_name(AsmFamily f);

// Machine instructions by kind. A vector instruction counts once, like a scalar one.
struct AsmCounts {
  size_t xors = 0;          // x86 xor/pxor/vpxor*/xorps/vpternlog*, AArch64 eor/eor3, ...
  size_t shifts = 0;        // x86 shl/shr/sar/ps{ll,rl,ra}*, AArch64 shl/ushr/lsl/..., and adds of
                            // a register to itself (x + x = x << 1, LLVM's lowering of shl 1)
  size_t ands = 0;          // x86 and/pand/vpand*/andn*, AArch64 and/bic, ...
  size_t instructions = 0;  // every instruction
};

struct AsmStats {
  AsmCounts all;        // every instruction in the text
  AsmCounts loop;       // instructions in basic blocks whose IR name starts with loop_block
  bool loop_found = false;
};

// Counts instructions of assembly text as LLVM prints it. Labels, directives and comments
// are skipped; LLVM's block comments ("# %vloop") attribute instructions to IR blocks.
AsmStats count_asm(const std::string &text, AsmFamily family, const std::string &loop_block);

// Sum of the sizes of the executable (text) sections of an object file image.
// Errors: the bytes are not an object file LLVM can read.
llvm::Expected<uint64_t> text_section_bytes(const std::string &object);

}  // namespace ecjit::tools
