// Algebraic signature kernels: per-lane Horner evaluation of eq. 2.34 with JIT-constant powers.
#include "ir_builders/signature_builder.h"

#include <string>
#include <vector>

#include "llvm/IR/Constants.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/TargetParser/Triple.h"

namespace ecjit::ir {
namespace {

// Distinct loop ID that keeps LLVM from unrolling or vectorizing (as kernel_builder.cpp).
llvm::MDNode *no_transform_loop(llvm::LLVMContext &ctx) {
  llvm::Metadata *no_unroll =
      llvm::MDNode::get(ctx, llvm::MDString::get(ctx, "llvm.loop.unroll.disable"));
  llvm::Metadata *no_vec = llvm::MDNode::get(
      ctx, {llvm::MDString::get(ctx, "llvm.loop.vectorize.enable"),
            llvm::ConstantAsMetadata::get(llvm::ConstantInt::getFalse(ctx))});
  llvm::MDNode *id = llvm::MDNode::getDistinct(ctx, {nullptr, no_unroll, no_vec});
  id->replaceOperandWith(0, id);
  return id;
}

}  // namespace

// Control flow (VB = bytes per vector, n = len rounded down to symbols, whole = n - n % VB):
//   entry: n % VB != 0 -> vtail (zeroed stack vector <- the last n % VB bytes; acc_i = it)
//   join:  whole == 0 -> vstore, else the loop from off = whole - VB down to 0:
//          acc_i = acc_i * alpha_i^N ^ load(off)
//   vstore: out[0][i * VB ...] = acc_i
void emit_signature_kernel(llvm::Module &mod, const KernelDesc &desc, const TargetInfo &target,
                           MultiplyLowering &lowering, unsigned vector_lanes) {
  llvm::LLVMContext &ctx = mod.getContext();
  llvm::IRBuilder<> b(ctx);
  const llvm::Triple triple(target.triple);
  const bool narrow = triple.isArch32Bit() || triple.isArch16Bit();
  llvm::IntegerType *size_ty = llvm::Type::getIntNTy(ctx, narrow ? 32 : 64);
  llvm::PointerType *ptr = llvm::PointerType::getUnqual(ctx);
  auto *fty = llvm::FunctionType::get(b.getVoidTy(), {ptr, ptr, size_ty}, false);
  llvm::Function *fn =
      llvm::Function::Create(fty, llvm::GlobalValue::ExternalLinkage, desc.symbol, mod);
  fn->addFnAttr(llvm::Attribute::NoUnwind);
  fn->addFnAttr("no-builtin-memcpy");
  fn->addFnAttr("no-builtin-memset");
  if (!target.cpu.empty()) fn->addFnAttr("target-cpu", target.cpu);
  if (!target.features.empty()) fn->addFnAttr("target-features", target.features);
  for (unsigned i = 0; i < 2; ++i) {
    fn->getArg(i)->addAttr(llvm::Attribute::NoAlias);
    fn->getArg(i)->addAttr(llvm::Attribute::NoCapture);
    fn->getArg(i)->addAttr(llvm::Attribute::ReadOnly);
  }
  fn->getArg(0)->setName("in");
  fn->getArg(1)->setName("out");
  llvm::Value *len = fn->getArg(2);
  len->setName("len");

  const unsigned l = desc.field.bits(), sb = l / 8, comps = desc.coeffs.rows;
  const unsigned vector_bits = vector_lanes * l;
  llvm::Type *sym_ty = b.getIntNTy(l);
  llvm::Type *ty = vector_bits <= 64 ? static_cast<llvm::Type *>(b.getIntNTy(vector_bits))
                                     : llvm::FixedVectorType::get(sym_ty, vector_lanes);
  const uint64_t vb = uint64_t(vector_lanes) * sb;
  llvm::Type *i8 = b.getInt8Ty();
  const llvm::Align align1(1), ptr_align(size_ty->getBitWidth() / 8);
  std::vector<uint64_t> beta(comps);
  for (unsigned i = 0; i < comps; ++i) beta[i] = desc.field.pow(desc.coeffs.at(i, 0), vector_lanes);

  auto block = [&](const char *name) { return llvm::BasicBlock::Create(ctx, name, fn); };
  llvm::BasicBlock *entry = block("entry");
  b.SetInsertPoint(entry);
  llvm::AllocaInst *stack = b.CreateAlloca(llvm::ArrayType::get(i8, vb), nullptr, "stack");
  stack->setAlignment(llvm::Align(16));
  llvm::Value *in = b.CreateAlignedLoad(ptr, fn->getArg(0), ptr_align, "in0");
  llvm::Value *out = b.CreateAlignedLoad(ptr, fn->getArg(1), ptr_align, "out0");
  llvm::Value *n =
      sb == 1 ? len : b.CreateAnd(len, llvm::ConstantInt::getSigned(size_ty, -int64_t(sb)), "n");
  llvm::Constant *zero = llvm::ConstantInt::get(size_ty, 0);
  llvm::Constant *vbc = llvm::ConstantInt::get(size_ty, vb);
  llvm::Value *rem = b.CreateURem(n, vbc, "rem");
  llvm::Value *whole = b.CreateSub(n, rem, "whole");
  llvm::BasicBlock *tail = block("vtail");
  llvm::BasicBlock *copy = block("copy");
  llvm::BasicBlock *tail_end = block("vtail.end");
  llvm::BasicBlock *join = block("join");
  b.CreateCondBr(b.CreateICmpNE(rem, zero), tail, join);

  // The last, partial vector: zero-padded on the stack (padding adds nothing to eq. 2.34).
  b.SetInsertPoint(tail);
  b.CreateAlignedStore(llvm::Constant::getNullValue(ty), stack, llvm::Align(16));
  llvm::Value *src = b.CreateInBoundsGEP(i8, in, whole);
  b.CreateBr(copy);
  b.SetInsertPoint(copy);
  llvm::PHINode *i = b.CreatePHI(size_ty, 2, "i");
  i->addIncoming(zero, tail);
  b.CreateStore(b.CreateLoad(i8, b.CreateInBoundsGEP(i8, src, i)), b.CreateInBoundsGEP(i8, stack, i));
  llvm::Value *i_next = b.CreateAdd(i, llvm::ConstantInt::get(size_ty, 1), "i.next", true);
  i->addIncoming(i_next, copy);
  llvm::BranchInst *cbr = b.CreateCondBr(b.CreateICmpULT(i_next, rem), copy, tail_end);
  cbr->setMetadata(llvm::LLVMContext::MD_loop, no_transform_loop(ctx));
  b.SetInsertPoint(tail_end);
  llvm::Value *last = b.CreateAlignedLoad(ty, stack, llvm::Align(16), "last");
  b.CreateBr(join);

  b.SetInsertPoint(join);
  std::vector<llvm::PHINode *> acc0(comps);
  for (unsigned c = 0; c < comps; ++c) {
    acc0[c] = b.CreatePHI(ty, 2, "acc0." + std::to_string(c));
    acc0[c]->addIncoming(llvm::Constant::getNullValue(ty), entry);
    acc0[c]->addIncoming(last, tail_end);
  }
  llvm::BasicBlock *loop = block("sigloop");
  llvm::BasicBlock *store = block("vstore");
  llvm::Value *start = b.CreateSub(whole, vbc, "start");  // used only when whole >= VB
  b.CreateCondBr(b.CreateICmpNE(whole, zero), loop, store);

  b.SetInsertPoint(loop);
  llvm::PHINode *off = b.CreatePHI(size_ty, 2, "off");
  off->addIncoming(start, join);
  std::vector<llvm::PHINode *> acc(comps);
  for (unsigned c = 0; c < comps; ++c) {
    acc[c] = b.CreatePHI(ty, 2, "acc." + std::to_string(c));
    acc[c]->addIncoming(acc0[c], join);
  }
  llvm::Value *x = b.CreateAlignedLoad(ty, b.CreateInBoundsGEP(i8, in, off), align1, "x");
  std::vector<llvm::Value *> next(comps);
  for (unsigned c = 0; c < comps; ++c) {
    llvm::Value *scaled = acc[c];
    if (beta[c] != 1) {
      lowering.begin_output(b, ty);
      lowering.accumulate(acc[c], beta[c]);
      scaled = lowering.finish_output();
    }
    next[c] = b.CreateXor(scaled, x, "acc.next." + std::to_string(c));
  }
  llvm::BasicBlock *latch = b.GetInsertBlock();
  for (unsigned c = 0; c < comps; ++c) acc[c]->addIncoming(next[c], latch);
  off->addIncoming(b.CreateSub(off, vbc, "off.next"), latch);
  llvm::BranchInst *br = b.CreateCondBr(b.CreateICmpEQ(off, zero), store, loop);
  br->setMetadata(llvm::LLVMContext::MD_loop, no_transform_loop(ctx));

  b.SetInsertPoint(store);
  std::vector<llvm::PHINode *> fin(comps);
  for (unsigned c = 0; c < comps; ++c) {
    fin[c] = b.CreatePHI(ty, 2, "sig." + std::to_string(c));
    fin[c]->addIncoming(acc0[c], join);
    fin[c]->addIncoming(next[c], latch);
  }
  for (unsigned c = 0; c < comps; ++c)
    b.CreateAlignedStore(fin[c], b.CreateConstInBoundsGEP1_64(i8, out, c * vb), align1);
  b.CreateRetVoid();
}

}  // namespace ecjit::ir
