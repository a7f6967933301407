// ir_stats: instruction counts of generated kernels (XOR, shift, AND), as in Nešković 2018, Fig. 5-4.
#pragma once

#include <cstddef>
#include <string>

namespace llvm {
class Function;
class Module;
}  // namespace llvm

namespace ecjit::ir {

// Instruction counts; a vector instruction counts once, like a scalar one.
struct IrStats {
  size_t xors = 0;          // xor
  size_t shifts = 0;        // shl, lshr, ashr
  size_t ands = 0;          // and
  size_t loads = 0;
  size_t stores = 0;
  size_t instructions = 0;  // every instruction, including the above
};

// Counts over every defined function of `module`, or only over basic blocks whose name starts
// with `block_prefix` when it is not empty (e.g. kMainLoopBlock from kernel_builder.h for the
// main loop body). Reads the module only; safe to call concurrently on distinct modules.
IrStats count_ir_ops(const llvm::Module &module, const std::string &block_prefix = "");
IrStats count_ir_ops(const llvm::Function &function, const std::string &block_prefix = "");

}  // namespace ecjit::ir
