// kernel_abi: size type, function declaration and checks shared by the kernel builders.
#include "ir_builders/kernel_abi.h"

#include <vector>

#include "llvm/IR/Constants.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Metadata.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/TargetParser/Triple.h"

namespace ecjit::ir {

llvm::IntegerType *kernel_size_type(llvm::LLVMContext &ctx, const TargetInfo &target) {
  const llvm::Triple triple(target.triple);
  const bool narrow = triple.isArch32Bit() || triple.isArch16Bit();
  return llvm::Type::getIntNTy(ctx, narrow ? 32 : 64);
}

llvm::Function *create_kernel_function(llvm::Module &mod, llvm::FunctionType *fty,
                                       const std::string &symbol, const TargetInfo &target) {
  llvm::Function *fn =
      llvm::Function::Create(fty, llvm::GlobalValue::ExternalLinkage, symbol, mod);
  fn->addFnAttr(llvm::Attribute::NoUnwind);
  fn->addFnAttr("no-builtin-memcpy");
  fn->addFnAttr("no-builtin-memmove");
  fn->addFnAttr("no-builtin-memset");
  if (!target.cpu.empty()) fn->addFnAttr("target-cpu", target.cpu);
  if (!target.features.empty()) fn->addFnAttr("target-features", target.features);
  return fn;
}

llvm::Error check_symbol_byte_order(unsigned bits, const TargetInfo &target,
                                    const std::string &builder) {
  const llvm::Triple triple(target.triple);
  if (bits > 8 && triple.getArch() != llvm::Triple::UnknownArch && !triple.isLittleEndian())
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   builder + ": big-endian target '" + target.triple +
                                       "': symbols of " + std::to_string(bits) +
                                       " bits are stored little-endian");
  return llvm::Error::success();
}

llvm::Error verify_kernel_module(const llvm::Module &mod, const std::string &builder) {
  std::string msg;
  llvm::raw_string_ostream os(msg);
  if (llvm::verifyModule(mod, &os)) {
    os.flush();
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   builder + ": generated IR does not verify: " + msg);
  }
  return llvm::Error::success();
}

void mark_loop_as_final(llvm::BranchInst *br, bool no_pipelining) {
  llvm::LLVMContext &ctx = br->getContext();
  llvm::Metadata *no_unroll =
      llvm::MDNode::get(ctx, llvm::MDString::get(ctx, "llvm.loop.unroll.disable"));
  llvm::Metadata *no_vec = llvm::MDNode::get(
      ctx, {llvm::MDString::get(ctx, "llvm.loop.vectorize.enable"),
            llvm::ConstantAsMetadata::get(llvm::ConstantInt::getFalse(ctx))});
  llvm::Metadata *no_interleave = llvm::MDNode::get(
      ctx, {llvm::MDString::get(ctx, "llvm.loop.interleave.count"),
            llvm::ConstantAsMetadata::get(llvm::ConstantInt::get(llvm::Type::getInt32Ty(ctx), 1))});
  std::vector<llvm::Metadata *> ops = {nullptr, no_unroll, no_vec, no_interleave};
  if (no_pipelining)
    ops.push_back(llvm::MDNode::get(ctx, {llvm::MDString::get(ctx, "llvm.loop.pipeline.disable"),
                                          llvm::ConstantAsMetadata::get(llvm::ConstantInt::getTrue(ctx))}));
  llvm::MDNode *id = llvm::MDNode::getDistinct(ctx, ops);
  id->replaceOperandWith(0, id);
  br->setMetadata(llvm::LLVMContext::MD_loop, id);
}

}  // namespace ecjit::ir
