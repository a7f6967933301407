// InputOrder: group each input's products across outputs so its derived values die early.
#include "ir_builders/input_order.h"

#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Instruction.h"

namespace ecjit::ir {

void InputOrder::begin_output(llvm::IRBuilderBase &b) {
  if (b.GetInsertBlock() != block_) {
    block_ = b.GetInsertBlock();
    derived_.clear();
    group_end_.clear();
    outputs_in_pass_ = 0;
  }
  if (++outputs_in_pass_ > pass_outputs_) {  // start a new pass over the inputs
    group_end_.clear();
    outputs_in_pass_ = 1;
  }
}

void InputOrder::place(llvm::IRBuilderBase &b, llvm::Value *x,
                       std::initializer_list<llvm::Value *> accs) {
  place_range(b, x, accs.begin(), accs.size());
}

void InputOrder::place(llvm::IRBuilderBase &b, llvm::Value *x,
                       const std::vector<llvm::Value *> &accs) {
  place_range(b, x, accs.data(), accs.size());
}

void InputOrder::place_range(llvm::IRBuilderBase &b, llvm::Value *x, llvm::Value *const *accs,
                             size_t n) {
  auto it = group_end_.find(x);
  if (it == group_end_.end() || it->second->getParent() != b.GetInsertBlock()) return;
  llvm::Instruction *anchor = it->second;
  for (size_t i = 0; i < n; ++i) {
    auto *inst = llvm::dyn_cast_or_null<llvm::Instruction>(accs[i]);
    if (inst && inst != anchor && !inst->comesBefore(anchor)) return;  // would not dominate
  }
  if (llvm::Instruction *next = anchor->getNextNode())
    b.SetInsertPoint(next);
  else
    b.SetInsertPoint(anchor->getParent());
}

void InputOrder::end_group(llvm::IRBuilderBase &b, llvm::Value *x) {
  group_end_[x] = &*std::prev(b.GetInsertPoint());
}

}  // namespace ecjit::ir
