// build_xor_kernel: block loop, packet loop, the program's XORs unrolled in between.
#include "ir_builders/xor_kernel.h"

#include <algorithm>

#include "ir_builders/kernel_abi.h"
#include "ir_builders/kernel_builder.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/Error.h"

namespace ecjit::ir {
namespace {

llvm::Error make_error(const std::string &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), "build_xor_kernel: " + msg);
}

llvm::Error check_desc(const XorKernelDesc &d) {
  if (d.symbol.empty()) return make_error("empty symbol name");
  if (d.w == 0 || d.packet == 0 || d.packet % 8 != 0)
    return make_error("packet of " + std::to_string(d.packet) + " bytes is not a multiple of 8");
  const codes::XorProgram &p = d.program;
  if (d.inputs.size() != p.inputs) return make_error("inputs do not match the program's");
  if (d.outputs.size() != p.outputs.size()) return make_error("outputs do not match the program's");
  for (size_t i = 0; i < p.ops.size(); ++i)
    if (p.ops[i].a >= p.inputs + i || p.ops[i].b >= p.inputs + i)
      return make_error("op " + std::to_string(i) + " reads a value not yet defined");
  for (uint32_t v : p.outputs)
    if (v != codes::XorProgram::kZero && v >= p.values()) return make_error("an output names no value");
  for (const codes::PacketRef &r : d.inputs)
    if (r.index >= d.w) return make_error("input packet index past w");
  for (const codes::PacketRef &r : d.outputs)
    if (r.index >= d.w) return make_error("output packet index past w");
  return llvm::Error::success();
}

}  // namespace

unsigned XorKernelDesc::in_pointers() const {
  unsigned n = 0;
  for (const codes::PacketRef &r : inputs) n = std::max(n, r.shard + 1);
  return n;
}

unsigned XorKernelDesc::out_pointers() const {
  unsigned n = 0;
  for (const codes::PacketRef &r : outputs) n = std::max(n, r.shard + 1);
  return n;
}

unsigned xor_kernel_vector_bytes(const XorKernelDesc &desc, const TargetInfo &target) {
  unsigned vb = std::max(8u, target.vector_bits / 8);
  if (desc.accumulate)
    while (desc.packet % vb != 0) vb /= 2;  // whole vectors only: no overlap when reading outputs
  else
    while (vb > desc.packet) vb /= 2;
  return vb;
}

llvm::Expected<std::unique_ptr<llvm::Module>> build_xor_kernel(llvm::LLVMContext &ctx,
                                                               const XorKernelDesc &desc,
                                                               const TargetInfo &target) {
  if (llvm::Error e = check_desc(desc)) return std::move(e);
  auto mod = std::make_unique<llvm::Module>(desc.symbol, ctx);
  mod->setTargetTriple(target.triple);
  llvm::IRBuilder<> b(ctx);
  llvm::IntegerType *size_ty = kernel_size_type(ctx, target);
  llvm::PointerType *ptr = llvm::PointerType::getUnqual(ctx);
  auto *fty = llvm::FunctionType::get(b.getVoidTy(), {ptr, ptr, size_ty}, false);
  llvm::Function *fn = create_kernel_function(*mod, fty, desc.symbol, target);
  static const char *const kNames[] = {"in", "out", "len"};
  for (unsigned i = 0; i < 3; ++i) {
    fn->getArg(i)->setName(kNames[i]);
    fn->getArg(i)->addAttr(llvm::Attribute::NoUndef);
  }
  for (unsigned i : {0u, 1u}) {
    fn->getArg(i)->addAttr(llvm::Attribute::NoCapture);
    fn->getArg(i)->addAttr(llvm::Attribute::ReadOnly);
  }
  auto size = [&](uint64_t v) { return llvm::ConstantInt::get(size_ty, v); };
  auto block = [&](const char *name) { return llvm::BasicBlock::Create(ctx, name, fn); };

  const unsigned vb = xor_kernel_vector_bytes(desc, target);
  llvm::Type *vty = vb == 8 ? static_cast<llvm::Type *>(b.getInt64Ty())
                            : llvm::FixedVectorType::get(b.getInt64Ty(), vb / 8);
  const uint64_t block_bytes = uint64_t(desc.w) * desc.packet;
  const llvm::Align ptr_align(size_ty->getBitWidth() / 8), align1(1);

  llvm::BasicBlock *entry = block("entry");
  b.SetInsertPoint(entry);
  std::vector<llvm::Value *> in_ptr(desc.in_pointers()), out_ptr(desc.out_pointers());
  for (unsigned i = 0; i < in_ptr.size(); ++i)
    in_ptr[i] = b.CreateAlignedLoad(ptr, b.CreateConstInBoundsGEP1_64(ptr, fn->getArg(0), i), ptr_align,
                                    "in" + std::to_string(i));
  for (unsigned i = 0; i < out_ptr.size(); ++i)
    out_ptr[i] = b.CreateAlignedLoad(ptr, b.CreateConstInBoundsGEP1_64(ptr, fn->getArg(1), i), ptr_align,
                                     "out" + std::to_string(i));
  llvm::Value *len = fn->getArg(2);
  llvm::Value *end = b.CreateSub(len, b.CreateURem(len, size(block_bytes)), "end");
  llvm::BasicBlock *blk_head = block("block");
  llvm::BasicBlock *body = block(kMainLoopBlock);
  llvm::BasicBlock *blk_latch = block("block.next");
  llvm::BasicBlock *done = block("done");
  b.CreateCondBr(b.CreateICmpEQ(end, size(0)), done, blk_head);

  b.SetInsertPoint(blk_head);
  llvm::PHINode *boff = b.CreatePHI(size_ty, 2, "boff");
  boff->addIncoming(size(0), entry);
  b.CreateBr(body);

  // Packet positions 0, vb, 2 vb, ... and, when vb does not divide the packet, packet - vb.
  b.SetInsertPoint(body);
  llvm::PHINode *step = b.CreatePHI(size_ty, 2, "step");
  step->addIncoming(size(0), blk_head);
  const uint64_t steps = (desc.packet + vb - 1) / vb;
  llvm::Value *poff = b.CreateMul(step, size(vb));
  if (desc.packet % vb != 0) poff = b.CreateBinaryIntrinsic(llvm::Intrinsic::umin, poff, size(desc.packet - vb));
  llvm::Value *at = b.CreateAdd(boff, poff, "at");
  auto address = [&](llvm::Value *base, const codes::PacketRef &r) {
    return b.CreateInBoundsGEP(b.getInt8Ty(), base, b.CreateAdd(at, size(uint64_t(r.index) * desc.packet)));
  };
  const codes::XorProgram &p = desc.program;
  std::vector<llvm::Value *> val(p.values(), nullptr);
  auto value = [&](uint32_t v) {
    if (!val[v]) val[v] = b.CreateAlignedLoad(vty, address(in_ptr[desc.inputs[v].shard], desc.inputs[v]), align1);
    return val[v];
  };
  for (size_t i = 0; i < p.ops.size(); ++i) {
    llvm::Value *x = value(p.ops[i].a);
    llvm::Value *y = value(p.ops[i].b);
    val[p.inputs + i] = b.CreateXor(x, y);
  }
  std::vector<llvm::Value *> results;
  for (uint32_t v : p.outputs)
    results.push_back(v == codes::XorProgram::kZero ? llvm::Constant::getNullValue(vty) : value(v));
  std::vector<llvm::Value *> old;  // accumulate: read every output before the first store
  if (desc.accumulate)
    for (const codes::PacketRef &r : desc.outputs)
      old.push_back(b.CreateAlignedLoad(vty, address(out_ptr[r.shard], r), align1));
  for (size_t r = 0; r < results.size(); ++r) {
    llvm::Value *x = desc.accumulate ? b.CreateXor(old[r], results[r]) : results[r];
    b.CreateAlignedStore(x, address(out_ptr[desc.outputs[r].shard], desc.outputs[r]), align1);
  }
  llvm::Value *next = b.CreateAdd(step, size(1), "step.next", true, true);
  step->addIncoming(next, b.GetInsertBlock());
  mark_loop_as_final(b.CreateCondBr(b.CreateICmpULT(next, size(steps)), body, blk_latch));

  b.SetInsertPoint(blk_latch);
  llvm::Value *bnext = b.CreateAdd(boff, size(block_bytes), "boff.next", true);
  boff->addIncoming(bnext, blk_latch);
  mark_loop_as_final(b.CreateCondBr(b.CreateICmpULT(bnext, end), blk_head, done));

  b.SetInsertPoint(done);
  b.CreateRetVoid();
  if (llvm::Error err = verify_kernel_module(*mod, "build_xor_kernel")) return std::move(err);
  return std::move(mod);
}

}  // namespace ecjit::ir
