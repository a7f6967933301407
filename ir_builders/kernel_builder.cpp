// build_kernel: the loop skeleton shared by every strategy (loads, stores, loops, tail, ABI).
#include "ir_builders/kernel_builder.h"

#include <cstdio>
#include <vector>

#include "ir_builders/lowering.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/MDBuilder.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/TargetParser/Triple.h"

namespace ecjit::ir {
namespace {

llvm::Error make_error(const std::string &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), "build_kernel: " + msg);
}

// Emits one kernel function into a module. Holds the per-build IR state.
//
// Control flow (VB = bytes per vector, n = len rounded down to whole symbols):
//   entry:   n == 0 -> done;  n >= VB -> vbig;  else -> vsmall
//   vbig:    [unroll > 1: the unrolled loop "vloop" over whole U x VB blocks, then done if
//            nothing is left]  start = min(off, n - VB)                       -> vpre
//   vsmall:  copies the n bytes of every input into zeroed stack buffers       -> vpre
//            (or, for shapes whose (k + m) x VB bytes of buffers would exceed
//            BuildOptions::max_stack_tail_bytes, the scalar per-symbol loop "tail" over the
//            user buffers -> done)
//   vpre:    phis: the k input and m output base pointers (user or stack), start, last
//   vloop:   the one-vector body (the single copy of the unrolled k x m map);
//            off == last -> vexit, else off = min(off + VB, last). A remainder shorter
//            than VB is covered by a last vector that overlaps the previous one: outputs
//            are only written and never alias inputs, so rewriting those bytes is exact,
//            and n and VB are both whole symbols, so the overlap stays symbol-aligned.
//   vexit:   n < VB -> vcopy (copy n bytes of each stack output back), else done
class KernelEmitter {
 public:
  KernelEmitter(llvm::Module &mod, const KernelDesc &desc, const TargetInfo &target,
                MultiplyLowering &lowering)
      : ctx_(mod.getContext()), mod_(mod), desc_(desc), target_(target), lowering_(lowering),
        b_(ctx_) {}

  void emit(unsigned vector_lanes, const BuildOptions &options);

 private:
  using Ptrs = std::vector<llvm::Value *>;
  void declare_function();
  void make_alias_scopes();
  void load_buffer_pointers();
  // Loads `count` consecutive values of `ty` (`bytes` each) per input at byte offset `off`
  // from the bases `in`, computes every output and stores it at the same offset from `out`.
  void emit_body(llvm::Type *ty, unsigned bytes, unsigned count, llvm::Value *off,
                 const Ptrs &in, const Ptrs &out);
  llvm::Value *emit_output(llvm::Type *ty, unsigned row, const std::vector<llvm::Value *> &x);
  // A guarded, rotated loop: while (n - off >= step) { body(off); off += step; }.
  // Returns the offset after the loop; the builder is left in the exit block.
  llvm::Value *emit_loop(const char *name, llvm::Value *start, uint64_t step,
                         llvm::function_ref<void(llvm::Value *)> body);
  // dst[i][0, n) = src[i][0, n) for every pair, one byte per iteration (no libc call).
  void emit_copy(const char *name, const Ptrs &dst, const Ptrs &src);
  llvm::MDNode *loop_metadata();

  llvm::LLVMContext &ctx_;
  llvm::Module &mod_;
  const KernelDesc &desc_;
  const TargetInfo &target_;
  MultiplyLowering &lowering_;
  llvm::IRBuilder<> b_;

  llvm::Function *fn_ = nullptr;
  llvm::IntegerType *size_ty_ = nullptr;
  llvm::Value *len_ = nullptr;
  llvm::Value *n_ = nullptr;  // len rounded down to whole symbols
  Ptrs in_ptrs_, out_ptrs_;
  llvm::MDNode *load_scope_ = nullptr, *load_noalias_ = nullptr;
  std::vector<llvm::MDNode *> store_scope_, store_noalias_;
};

void KernelEmitter::declare_function() {
  const llvm::Triple triple(target_.triple);
  const bool narrow = triple.isArch32Bit() || triple.isArch16Bit();
  size_ty_ = llvm::Type::getIntNTy(ctx_, narrow ? 32 : 64);
  llvm::PointerType *ptr = llvm::PointerType::getUnqual(ctx_);
  auto *fty = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx_), {ptr, ptr, size_ty_}, false);
  fn_ = llvm::Function::Create(fty, llvm::GlobalValue::ExternalLinkage, desc_.symbol, mod_);
  fn_->addFnAttr(llvm::Attribute::NoUnwind);
  // The byte-copy loops of the short-shard path must stay loops: AOT objects for
  // freestanding targets have no memcpy / memset to call.
  fn_->addFnAttr("no-builtin-memcpy");
  fn_->addFnAttr("no-builtin-memmove");
  fn_->addFnAttr("no-builtin-memset");
  if (!target_.cpu.empty()) fn_->addFnAttr("target-cpu", target_.cpu);
  if (!target_.features.empty()) fn_->addFnAttr("target-features", target_.features);
  static const char *const kArgNames[] = {"in", "out", "len"};
  for (unsigned i = 0; i < 3; ++i) {
    llvm::Argument *arg = fn_->getArg(i);
    arg->setName(kArgNames[i]);
    arg->addAttr(llvm::Attribute::NoUndef);
    if (i < 2) {  // the pointer arrays: only read, never kept, not aliased by any store
      arg->addAttr(llvm::Attribute::NoAlias);
      arg->addAttr(llvm::Attribute::NoCapture);
      arg->addAttr(llvm::Attribute::ReadOnly);
    }
  }
  len_ = fn_->getArg(2);
}

// One scope for all input buffers and one per output buffer, so that the optimizer may
// reorder loads of the next vector above the stores of this one (the header's contract).
void KernelEmitter::make_alias_scopes() {
  llvm::MDBuilder mdb(ctx_);
  llvm::MDNode *domain = mdb.createAnonymousAliasScopeDomain("ecjit.kernel");
  llvm::MDNode *in_scope = mdb.createAnonymousAliasScope(domain, "in");
  std::vector<llvm::Metadata *> out_scopes;
  for (unsigned r = 0; r < desc_.coeffs.rows; ++r)
    out_scopes.push_back(
        mdb.createAnonymousAliasScope(domain, "out" + std::to_string(r)));
  load_scope_ = llvm::MDNode::get(ctx_, {in_scope});
  load_noalias_ = llvm::MDNode::get(ctx_, out_scopes);
  for (unsigned r = 0; r < desc_.coeffs.rows; ++r) {
    store_scope_.push_back(llvm::MDNode::get(ctx_, {out_scopes[r]}));
    std::vector<llvm::Metadata *> others{in_scope};
    for (unsigned o = 0; o < desc_.coeffs.rows; ++o)
      if (o != r) others.push_back(out_scopes[o]);
    store_noalias_.push_back(llvm::MDNode::get(ctx_, others));
  }
}

void KernelEmitter::load_buffer_pointers() {
  llvm::PointerType *ptr = llvm::PointerType::getUnqual(ctx_);
  const llvm::Align ptr_align(size_ty_->getBitWidth() / 8);
  auto load_all = [&](llvm::Value *array, unsigned n, const char *prefix, Ptrs &dst) {
    for (unsigned i = 0; i < n; ++i) {
      llvm::Value *slot = b_.CreateConstInBoundsGEP1_64(ptr, array, i);
      dst.push_back(b_.CreateAlignedLoad(ptr, slot, ptr_align, prefix + std::to_string(i)));
    }
  };
  load_all(fn_->getArg(0), desc_.coeffs.cols, "in", in_ptrs_);
  load_all(fn_->getArg(1), desc_.coeffs.rows, "out", out_ptrs_);
}

llvm::Value *KernelEmitter::emit_output(llvm::Type *ty, unsigned row,
                                        const std::vector<llvm::Value *> &x) {
  llvm::Value *plain = nullptr;  // sum of the inputs with coefficient 1
  bool lowered = false;
  for (unsigned c = 0; c < desc_.coeffs.cols; ++c) {
    const uint64_t a = desc_.coeffs.at(row, c);
    if (a == 0) continue;
    if (a == 1) {
      plain = plain ? b_.CreateXor(plain, x[c]) : x[c];
      continue;
    }
    if (!lowered) lowering_.begin_output(b_, ty);
    lowered = true;
    lowering_.accumulate(x[c], a);
  }
  llvm::Value *v = lowered ? lowering_.finish_output() : nullptr;
  if (plain) v = v ? b_.CreateXor(v, plain) : plain;
  return v ? v : llvm::Constant::getNullValue(ty);
}

void KernelEmitter::emit_body(llvm::Type *ty, unsigned bytes, unsigned count, llvm::Value *off,
                              const Ptrs &in, const Ptrs &out) {
  const unsigned k = desc_.coeffs.cols, m = desc_.coeffs.rows;
  const llvm::Align align1(1);
  llvm::Type *i8 = b_.getInt8Ty();
  std::vector<std::vector<llvm::Value *>> x(count, std::vector<llvm::Value *>(k));
  std::vector<llvm::Value *> offs(count);
  for (unsigned u = 0; u < count; ++u)
    offs[u] = u == 0 ? off : b_.CreateAdd(off, llvm::ConstantInt::get(size_ty_, u * bytes));
  for (unsigned u = 0; u < count; ++u)
    for (unsigned c = 0; c < k; ++c) {
      llvm::LoadInst *ld =
          b_.CreateAlignedLoad(ty, b_.CreateInBoundsGEP(i8, in[c], offs[u]), align1);
      ld->setMetadata(llvm::LLVMContext::MD_alias_scope, load_scope_);
      ld->setMetadata(llvm::LLVMContext::MD_noalias, load_noalias_);
      x[u][c] = ld;
    }
  for (unsigned u = 0; u < count; ++u)
    for (unsigned r = 0; r < m; ++r) {
      llvm::Value *v = emit_output(ty, r, x[u]);
      llvm::StoreInst *st =
          b_.CreateAlignedStore(v, b_.CreateInBoundsGEP(i8, out[r], offs[u]), align1);
      st->setMetadata(llvm::LLVMContext::MD_alias_scope, store_scope_[r]);
      st->setMetadata(llvm::LLVMContext::MD_noalias, store_noalias_[r]);
    }
}

// Distinct loop ID: no LLVM unrolling or vectorization. The body is already vector code of the
// shape the caller asked for (BuildOptions::unroll), and the other loops run a few bytes.
llvm::MDNode *KernelEmitter::loop_metadata() {
  llvm::Metadata *no_unroll = llvm::MDNode::get(ctx_, llvm::MDString::get(ctx_, "llvm.loop.unroll.disable"));
  llvm::Metadata *no_vec = llvm::MDNode::get(
      ctx_, {llvm::MDString::get(ctx_, "llvm.loop.vectorize.enable"),
             llvm::ConstantAsMetadata::get(llvm::ConstantInt::getFalse(ctx_))});
  llvm::Metadata *no_interleave = llvm::MDNode::get(
      ctx_, {llvm::MDString::get(ctx_, "llvm.loop.interleave.count"),
             llvm::ConstantAsMetadata::get(b_.getInt32(1))});
  llvm::MDNode *id = llvm::MDNode::getDistinct(ctx_, {nullptr, no_unroll, no_vec, no_interleave});
  id->replaceOperandWith(0, id);
  return id;
}

llvm::Value *KernelEmitter::emit_loop(const char *name, llvm::Value *start, uint64_t step,
                                      llvm::function_ref<void(llvm::Value *)> body) {
  llvm::BasicBlock *pre = b_.GetInsertBlock();
  auto *loop = llvm::BasicBlock::Create(ctx_, name, fn_);
  auto *exit = llvm::BasicBlock::Create(ctx_, std::string(name) + ".exit", fn_);
  llvm::Constant *step_c = llvm::ConstantInt::get(size_ty_, step);
  // start <= n always holds, so n - start cannot wrap.
  b_.CreateCondBr(b_.CreateICmpUGE(b_.CreateSub(n_, start), step_c), loop, exit);

  b_.SetInsertPoint(loop);
  llvm::PHINode *off = b_.CreatePHI(size_ty_, 2, std::string(name) + ".off");
  off->addIncoming(start, pre);
  body(off);
  llvm::Value *next = b_.CreateAdd(off, step_c, std::string(name) + ".next", /*HasNUW=*/true);
  llvm::BasicBlock *latch = b_.GetInsertBlock();
  llvm::Value *more = b_.CreateICmpUGE(b_.CreateSub(n_, next), step_c);
  llvm::BranchInst *br = b_.CreateCondBr(more, loop, exit);
  br->setMetadata(llvm::LLVMContext::MD_loop, loop_metadata());
  off->addIncoming(next, latch);

  b_.SetInsertPoint(exit);
  llvm::PHINode *end = b_.CreatePHI(size_ty_, 2, std::string(name) + ".end");
  end->addIncoming(start, pre);
  end->addIncoming(next, latch);
  return end;
}

void KernelEmitter::emit_copy(const char *name, const Ptrs &dst, const Ptrs &src) {
  llvm::Type *i8 = b_.getInt8Ty();
  emit_loop(name, llvm::ConstantInt::get(size_ty_, 0), 1, [&](llvm::Value *i) {
    for (size_t j = 0; j < dst.size(); ++j)
      b_.CreateStore(b_.CreateLoad(i8, b_.CreateInBoundsGEP(i8, src[j], i)),
                     b_.CreateInBoundsGEP(i8, dst[j], i));
  });
}

void KernelEmitter::emit(unsigned vector_lanes, const BuildOptions &options) {
  const unsigned unroll = options.unroll;
  declare_function();
  make_alias_scopes();
  b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", fn_));
  load_buffer_pointers();

  const unsigned k = desc_.coeffs.cols, m = desc_.coeffs.rows;
  const unsigned l = desc_.field.bits();
  const unsigned sym_bytes = l / 8;
  llvm::Type *scalar_ty = b_.getIntNTy(l);
  // Up to 64 bits there is no vector unit (TargetInfo): symbols packed into one integer
  // register (SWAR); the lowering masks its shifts at symbol boundaries (lane_shl/lane_lshr).
  const unsigned vector_bits = vector_lanes * l;
  llvm::Type *vec_ty = vector_bits <= 64 ? static_cast<llvm::Type *>(b_.getIntNTy(vector_bits))
                                         : llvm::FixedVectorType::get(scalar_ty, vector_lanes);
  const uint64_t vec_bytes = uint64_t(vector_lanes) * sym_bytes;
  // 0 < n < VB is possible only with more than one symbol per vector.
  const bool short_shards = vec_bytes > sym_bytes;
  const bool stack_tail =
      short_shards && uint64_t(k + m) * vec_bytes <= options.max_stack_tail_bytes;

  llvm::Constant *zero = llvm::ConstantInt::get(size_ty_, 0);
  llvm::Constant *vb = llvm::ConstantInt::get(size_ty_, vec_bytes);
  n_ = sym_bytes == 1
           ? len_
           : b_.CreateAnd(len_, llvm::ConstantInt::getSigned(size_ty_, -int64_t(sym_bytes)), "n");
  Ptrs stack_in, stack_out;
  if (stack_tail) {
    auto stack = [&](unsigned count, const char *name, Ptrs &dst) {
      llvm::AllocaInst *a = b_.CreateAlloca(llvm::ArrayType::get(b_.getInt8Ty(), count * vec_bytes),
                                            nullptr, name);
      a->setAlignment(llvm::Align(16));
      for (unsigned i = 0; i < count; ++i)
        dst.push_back(b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), a, i * vec_bytes));
    };
    stack(k, "stack.in", stack_in);
    stack(m, "stack.out", stack_out);
  }

  auto block = [&](const char *name) { return llvm::BasicBlock::Create(ctx_, name, fn_); };
  llvm::BasicBlock *done = llvm::BasicBlock::Create(ctx_, "done");  // placed last
  llvm::BasicBlock *nonempty = block("nonempty");
  llvm::BasicBlock *big = block("vbig");
  llvm::BasicBlock *small = short_shards ? block("vsmall") : nullptr;
  b_.CreateCondBr(b_.CreateICmpEQ(n_, zero), done, nonempty);
  b_.SetInsertPoint(nonempty);
  b_.CreateCondBr(b_.CreateICmpUGE(n_, vb), big, short_shards ? small : done);

  // Shards of at least one vector: [the unrolled loop,] then the start of the one-vector loop.
  b_.SetInsertPoint(big);
  llvm::Value *last = b_.CreateSub(n_, vb, "last");
  llvm::Value *start = zero;
  if (unroll > 1) {
    llvm::Value *off =
        emit_loop(kMainLoopBlock, zero, vec_bytes * unroll, [&](llvm::Value *o) {
          emit_body(vec_ty, unsigned(vec_bytes), unroll, o, in_ptrs_, out_ptrs_);
        });
    llvm::BasicBlock *rest = block("vrest");
    b_.CreateCondBr(b_.CreateICmpEQ(off, n_), done, rest);
    b_.SetInsertPoint(rest);
    start = b_.CreateBinaryIntrinsic(llvm::Intrinsic::umin, off, last, nullptr, "start");
  }
  llvm::BasicBlock *big_end = b_.GetInsertBlock();
  llvm::BasicBlock *pre = block("vpre");
  b_.CreateBr(pre);

  // Shards shorter than one vector.
  llvm::BasicBlock *small_end = nullptr;
  if (short_shards) {
    b_.SetInsertPoint(small);
    if (stack_tail) {
      for (llvm::Value *p : stack_in)
        b_.CreateAlignedStore(llvm::Constant::getNullValue(vec_ty), p, llvm::Align(1));
      emit_copy("copy.in", stack_in, in_ptrs_);
      small_end = b_.GetInsertBlock();
      b_.CreateBr(pre);
    } else {  // stack buffers too large: one symbol at a time, straight from the user buffers
      emit_loop("tail", zero, sym_bytes, [&](llvm::Value *o) {
        emit_body(scalar_ty, sym_bytes, 1, o, in_ptrs_, out_ptrs_);
      });
      b_.CreateBr(done);
    }
  }

  b_.SetInsertPoint(pre);
  auto merge = [&](llvm::Value *from_big, llvm::Value *from_small, const llvm::Twine &name) {
    if (!small_end) return from_big;
    llvm::PHINode *phi = b_.CreatePHI(from_big->getType(), 2, name);
    phi->addIncoming(from_big, big_end);
    phi->addIncoming(from_small, small_end);
    return static_cast<llvm::Value *>(phi);
  };
  Ptrs in_base(k), out_base(m);
  for (unsigned c = 0; c < k; ++c)
    in_base[c] = merge(in_ptrs_[c], small_end ? stack_in[c] : nullptr, "in.base" + llvm::Twine(c));
  for (unsigned r = 0; r < m; ++r)
    out_base[r] =
        merge(out_ptrs_[r], small_end ? stack_out[r] : nullptr, "out.base" + llvm::Twine(r));
  llvm::Value *first = merge(start, zero, "first");
  llvm::Value *final_off = merge(last, zero, "final");

  // The one-vector loop: the only copy of the body outside an unrolled main loop.
  llvm::BasicBlock *loop = block(unroll > 1 ? "vloop1" : kMainLoopBlock);
  llvm::BasicBlock *exit = block("vexit");
  b_.CreateBr(loop);
  b_.SetInsertPoint(loop);
  llvm::PHINode *off = b_.CreatePHI(size_ty_, 2, "off");
  off->addIncoming(first, pre);
  emit_body(vec_ty, unsigned(vec_bytes), 1, off, in_base, out_base);
  llvm::Value *next = b_.CreateBinaryIntrinsic(
      llvm::Intrinsic::umin, b_.CreateAdd(off, vb, "", /*HasNUW=*/true), final_off, nullptr,
      "next");
  llvm::BranchInst *br = b_.CreateCondBr(b_.CreateICmpEQ(off, final_off), exit, loop);
  br->setMetadata(llvm::LLVMContext::MD_loop, loop_metadata());
  off->addIncoming(next, b_.GetInsertBlock());

  b_.SetInsertPoint(exit);
  if (small_end) {
    llvm::BasicBlock *copy_out = block("vcopy");
    b_.CreateCondBr(b_.CreateICmpULT(n_, vb), copy_out, done);
    b_.SetInsertPoint(copy_out);
    emit_copy("copy.out", out_ptrs_, stack_out);
  }
  b_.CreateBr(done);

  done->insertInto(fn_);
  b_.SetInsertPoint(done);
  b_.CreateRetVoid();
}

}  // namespace

llvm::Expected<std::unique_ptr<llvm::Module>> build_kernel(llvm::LLVMContext &ctx,
                                                           const KernelDesc &desc,
                                                           const TargetInfo &target,
                                                           Strategy strategy,
                                                           const BuildOptions &options) {
  const unsigned l = desc.field.bits();
  const codes::Matrix &M = desc.coeffs;
  if (desc.symbol.empty()) return make_error("empty symbol name");
  if (M.a.size() != size_t(M.rows) * M.cols)
    return make_error("coefficient matrix has " + std::to_string(M.a.size()) +
                      " entries, expected rows x cols = " + std::to_string(M.rows) + " x " +
                      std::to_string(M.cols));
  for (unsigned r = 0; r < M.rows; ++r)
    for (unsigned c = 0; c < M.cols; ++c)
      if ((M.at(r, c) & ~desc.field.mask()) != 0)
        return make_error("coefficient (" + std::to_string(r) + ", " + std::to_string(c) +
                          ") = " + std::to_string(M.at(r, c)) + " is not in GF(2^" +
                          std::to_string(l) + ")");
  if (target.vector_bits < l || target.vector_bits % l != 0 || target.vector_bits > 4096)
    return make_error("vector width " + std::to_string(target.vector_bits) +
                      " bits does not hold whole " + std::to_string(l) + "-bit symbols");
  const llvm::Triple triple(target.triple);
  if (l > 8 && triple.getArch() != llvm::Triple::UnknownArch && !triple.isLittleEndian())
    return make_error("big-endian target '" + target.triple + "': symbols of " +
                      std::to_string(l) + " bits are stored little-endian");
  if (options.unroll < 1 || options.unroll > 8)
    return make_error("unroll " + std::to_string(options.unroll) + " not in 1..8");

  if (strategy == Strategy::kAuto) strategy = Strategy::kClmulShift;
  auto lowering = make_lowering(strategy, desc.field, target);
  if (!lowering) return lowering.takeError();

  auto mod = std::make_unique<llvm::Module>(desc.symbol, ctx);
  mod->setTargetTriple(target.triple);
  const unsigned vector_bits = l > target.max_lane_bits ? 64 : target.vector_bits;
  KernelEmitter(*mod, desc, target, **lowering).emit(vector_bits / l, options);

  std::string msg;
  llvm::raw_string_ostream os(msg);
  if (llvm::verifyModule(*mod, &os)) {
    os.flush();
    return make_error("generated IR does not verify: " + msg);
  }
  return std::move(mod);
}

std::string kernel_symbol(const std::string &op, const std::string &spec,
                          const std::string &target) {
  std::string name = "ecjit_" + op + "__" + spec + "__" + target;
  for (size_t i = 6; i < name.size(); ++i) {
    const char ch = name[i];
    const bool alnum = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                       (ch >= '0' && ch <= '9');
    if (!alnum) name[i] = '_';
  }
  if (name.size() <= kMaxSymbolLength) return name;
  uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a, 64-bit
  for (unsigned char ch : name) {
    h ^= ch;
    h *= 0x100000001b3ull;
  }
  char hex[17];
  snprintf(hex, sizeof hex, "%016llx", (unsigned long long)h);
  return name.substr(0, kMaxSymbolLength - 17) + "_" + hex;
}

}  // namespace ecjit::ir
