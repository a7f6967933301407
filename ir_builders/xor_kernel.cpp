// build_xor_kernel: block loop, packet loop, the program's XORs unrolled in between.
#include "ir_builders/xor_kernel.h"

#include <algorithm>
#include <functional>

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
  // XOR is bitwise: lanes of the widest width the target's vectors have natively (Hexagon
  // HVX has no 64-bit lanes; <16 x i64> there is split lane by lane, a compile of minutes).
  const unsigned lane = std::min(64u, std::max(8u, target.max_lane_bits));
  llvm::Type *vty = vb == 8 ? static_cast<llvm::Type *>(b.getInt64Ty())
                            : llvm::FixedVectorType::get(b.getIntNTy(lane), vb * 8 / lane);
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
  llvm::BasicBlock *blk_latch = block("block.next");
  llvm::BasicBlock *done = block("done");
  const bool two_loops = desc.packet >= kXorPreloadPacketBytes;
  llvm::Value *long_shards =
      two_loops ? b.CreateICmpUGE(len, size(kXorPreloadShardBytes), "long.shards") : nullptr;
  b.CreateCondBr(b.CreateICmpEQ(end, size(0)), done, blk_head);

  b.SetInsertPoint(blk_head);
  llvm::PHINode *boff = b.CreatePHI(size_ty, 2, "boff");
  boff->addIncoming(size(0), entry);

  const codes::XorProgram &p = desc.program;
  std::vector<llvm::Value *> val(p.values(), nullptr);
  // One loop over the packet positions 0, vb, 2 vb, ... (and, when vb does not divide the
  // packet, packet - vb), the whole program in its body, output by output: each output's
  // expression tree emitted depth first (op values shared by several outputs computed once,
  // at first need), then stored at once.
  // In place (preload false): an input packet is loaded at each use: between two stores
  // (which may alias it as far as LLVM knows) its loads are merged, across them they stay
  // separate loads, which the x86 back end folds into the XORs' memory operands. Stores as
  // early as possible and inputs re-read from their buffers keep the live values of a
  // 400-op schedule within the vector registers instead of spilling them (RS(10,4) w=8 on
  // AVX2: 320 spill moves with all loads first, 0 here).
  // Preloaded: every input vector of the position loaded first. With large packets the
  // k x w input packets are k x w streams a packet apart; on shards past the caches, loads
  // spread over the body left most of their misses unoverlapped. Zen 3, GB/s encode /
  // reconstruct of 2 lost, in place -> preloaded (whose spills go to the stack, in L1):
  // liberation k=10 w=11 1 MiB shards, 2 KiB packets 4.1 / 6.0 -> 7.0 / 9.3, 1 KiB 7.5 / 10.2
  // -> 10.6 / 14.4; cauchy-good RS(10,4) w=8 2 KiB 2.5 / 6.0 -> 6.2 / 9.2, 1 KiB even. At
  // 64-256 KiB shards in place wins (cauchy-good 2 KiB 64 KiB: 14.1 / 31.2 against 9.8 / 21.8).
  auto emit_loop = [&](llvm::BasicBlock *loop, bool preload) {
    b.SetInsertPoint(loop);
    llvm::PHINode *step = b.CreatePHI(size_ty, 2, "step");
    step->addIncoming(size(0), blk_head);
    const uint64_t steps = (desc.packet + vb - 1) / vb;
    llvm::Value *poff = b.CreateMul(step, size(vb));
    if (desc.packet % vb != 0) poff = b.CreateBinaryIntrinsic(llvm::Intrinsic::umin, poff, size(desc.packet - vb));
    llvm::Value *at = b.CreateAdd(boff, poff, "at");
    auto address = [&](llvm::Value *base, const codes::PacketRef &r) {
      return b.CreateInBoundsGEP(b.getInt8Ty(), base, b.CreateAdd(at, size(uint64_t(r.index) * desc.packet)));
    };
    auto load_input = [&](uint32_t v) -> llvm::Value * {
      return b.CreateAlignedLoad(vty, address(in_ptr[desc.inputs[v].shard], desc.inputs[v]), align1);
    };
    std::fill(val.begin(), val.end(), nullptr);
    if (preload)
      for (uint32_t v = 0; v < p.inputs; ++v) val[v] = load_input(v);
    std::function<llvm::Value *(uint32_t)> value = [&](uint32_t v) -> llvm::Value * {
      if (v < p.inputs && !preload) return load_input(v);
      if (!val[v]) {
        const codes::XorProgram::Op &op = p.ops[v - p.inputs];
        llvm::Value *x = value(op.a);
        llvm::Value *y = value(op.b);
        val[v] = b.CreateXor(x, y);
      }
      return val[v];
    };
    for (size_t r = 0; r < p.outputs.size(); ++r) {
      const uint32_t v = p.outputs[r];
      llvm::Value *x = v == codes::XorProgram::kZero ? llvm::Constant::getNullValue(vty) : value(v);
      llvm::Value *dst = address(out_ptr[desc.outputs[r].shard], desc.outputs[r]);
      if (desc.accumulate) x = b.CreateXor(b.CreateAlignedLoad(vty, dst, align1), x);
      b.CreateAlignedStore(x, dst, align1);
    }
    llvm::Value *next = b.CreateAdd(step, size(1), "step.next", true, true);
    step->addIncoming(next, b.GetInsertBlock());
    mark_loop_as_final(b.CreateCondBr(b.CreateICmpULT(next, size(steps)), loop, blk_latch), true);
  };
  llvm::BasicBlock *in_place = block(kMainLoopBlock);
  if (two_loops) {
    llvm::BasicBlock *preloaded = block("vloop.preload");
    b.CreateCondBr(long_shards, preloaded, in_place);
    emit_loop(preloaded, true);
  } else {
    b.CreateBr(in_place);
  }
  emit_loop(in_place, false);

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
