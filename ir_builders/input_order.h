// InputOrder: places a lowering's products input by input instead of output by output (internal).
#pragma once

#include <cstddef>
#include <initializer_list>
#include <unordered_map>
#include <vector>

namespace llvm {
class BasicBlock;
class IRBuilderBase;
class Instruction;
class Value;
}  // namespace llvm

namespace ecjit::ir {

// The kernel skeleton asks for products output by output. A lowering that derives values
// from each input once (nibble indices, byte planes, rotations) and emits in that order
// keeps every input's derived values live across all outputs, which spills (k x d vectors).
// InputOrder places instead this output's product with x right after the previous output's
// product with x (the "group" of x), when this output's accumulators are already defined
// there; else at the builder's insertion point. Values are unchanged, only their order within
// the block: input by input with up to `pass_outputs` accumulators live; more outputs start
// a new pass of groups. It also keeps each input's derived values, per block.
// Not thread-safe; one object per lowering.
class InputOrder {
 public:
  explicit InputOrder(unsigned pass_outputs) : pass_outputs_(pass_outputs ? pass_outputs : 1) {}

  // Call at begin_output: a new block forgets groups and derived values; a full pass
  // starts a new one.
  void begin_output(llvm::IRBuilderBase &b);
  // Moves b's insertion point after x's group when every non-null value of accs is defined
  // before that point; else leaves it. Call under an InsertPointGuard.
  void place(llvm::IRBuilderBase &b, llvm::Value *x, std::initializer_list<llvm::Value *> accs);
  void place(llvm::IRBuilderBase &b, llvm::Value *x, const std::vector<llvm::Value *> &accs);
  // Records the instruction before b's insertion point as the end of x's group.
  void end_group(llvm::IRBuilderBase &b, llvm::Value *x);
  // The derived values of x in this block: `make()` runs on the first request only (at the
  // builder's insertion point, which then dominates every later product of x).
  template <typename Make>
  const std::vector<llvm::Value *> &derived(llvm::Value *x, Make make) {
    auto it = derived_.find(x);
    if (it == derived_.end()) it = derived_.emplace(x, make()).first;
    return it->second;
  }

 private:
  void place_range(llvm::IRBuilderBase &b, llvm::Value *x, llvm::Value *const *accs, std::size_t n);

  unsigned pass_outputs_;
  unsigned outputs_in_pass_ = 0;
  llvm::BasicBlock *block_ = nullptr;
  std::unordered_map<llvm::Value *, llvm::Instruction *> group_end_;
  std::unordered_map<llvm::Value *, std::vector<llvm::Value *>> derived_;
};

}  // namespace ecjit::ir
