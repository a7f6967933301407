// ir_stats: counts XOR, shift and AND instructions of a kernel module (LLVM Core only).
#include "ir_builders/ir_stats.h"

#include "llvm/IR/Function.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Module.h"

namespace ecjit::ir {

IrStats count_ir_ops(const llvm::Function &function, const std::string &block_prefix) {
  IrStats s;
  for (const llvm::BasicBlock &bb : function) {
    if (!block_prefix.empty() && !bb.getName().starts_with(block_prefix)) continue;
    for (const llvm::Instruction &inst : bb) {
      ++s.instructions;
      switch (inst.getOpcode()) {
        case llvm::Instruction::Xor: ++s.xors; break;
        case llvm::Instruction::Shl:
        case llvm::Instruction::LShr:
        case llvm::Instruction::AShr: ++s.shifts; break;
        case llvm::Instruction::And: ++s.ands; break;
        case llvm::Instruction::Load: ++s.loads; break;
        case llvm::Instruction::Store: ++s.stores; break;
        default: break;
      }
    }
  }
  return s;
}

IrStats count_ir_ops(const llvm::Module &module, const std::string &block_prefix) {
  IrStats total;
  for (const llvm::Function &fn : module) {
    if (fn.isDeclaration()) continue;
    const IrStats s = count_ir_ops(fn, block_prefix);
    total.xors += s.xors;
    total.shifts += s.shifts;
    total.ands += s.ands;
    total.loads += s.loads;
    total.stores += s.stores;
    total.instructions += s.instructions;
  }
  return total;
}

}  // namespace ecjit::ir
