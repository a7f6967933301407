// build_kernel: the loop skeleton shared by every strategy (loads, stores, loops, tail, ABI).
#include "ir_builders/kernel_builder.h"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <vector>

#include "ir_builders/kernel_abi.h"
#include "ir_builders/lowering.h"
#include "ir_builders/signature_builder.h"
#include "ir_builders/tiled_kernel.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/MDBuilder.h"
#include "llvm/IR/IntrinsicsX86.h"
#include "llvm/IR/Module.h"
#include "llvm/TargetParser/Triple.h"
#include "llvm/Support/Error.h"

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
//   vpre:    phis: the input and output pointer arrays (the caller's, or arrays of the stack
//            buffers), start, last; the k + m base pointers loaded from the arrays
//   vloop:   the one-vector body (the single copy of the unrolled k x m map);
//            off == last -> vexit, else off = min(off + VB, last). A remainder shorter
//            than VB is covered by a last vector that overlaps the previous one: outputs
//            are only written and never alias inputs, so rewriting those bytes is exact,
//            and n and VB are both whole symbols, so the overlap stays symbol-aligned.
//   vexit:   n < VB -> vcopy (copy n bytes of each stack output back), else done
// kVerify uses the same flow without outputs; every body ends in a branch to "mismatch"
// (which returns the body's offset) when a computed vector differs from the expected one.
// kAccumulate cannot overlap (outputs are read): [unrolled loop,] the one-vector loop over
// whole vectors, then the remainder at offset `whole` staged through the stack buffers
// ("vrem": copy in, one body, copy out back) or by the scalar tail.
class KernelEmitter {
 public:
  using Ptrs = std::vector<llvm::Value *>;
  KernelEmitter(llvm::Module &mod, const KernelDesc &desc, const TargetInfo &target,
                MultiplyLowering &lowering, size_t coeff_bytes = 0)
      : ctx_(mod.getContext()), mod_(mod), desc_(desc), target_(target), lowering_(lowering),
        coeff_bytes_(coeff_bytes),
        b_(ctx_),
        verify_(desc.output == OutputMode::kVerify),
        accumulate_(desc.output == OutputMode::kAccumulate),
        delta_(desc.input == InputMode::kDelta),
        streaming_(desc.streaming_stores),
        num_in_(desc.inputs()),
        num_out_(verify_ ? 0 : desc.coeffs.rows) {}

  void emit(unsigned vector_lanes, const BuildOptions &options);
  void emit_accumulate(llvm::Type *vec_ty, llvm::Type *scalar_ty, unsigned vec_bytes,
                       unsigned unroll, bool stack_tail, const Ptrs &stack_in,
                       const Ptrs &stack_out, llvm::BasicBlock *done);

 private:
  void declare_function();
  void make_alias_scopes();
  void load_buffer_pointers();
  // Loads `count` consecutive values of `ty` (`bytes` each) per input at byte offset `off`
  // from the bases `in`, computes every output and stores it at the same offset from `out`
  // (kAccumulate: XORs it into the loaded output; kVerify: compares it with the expected
  // input and branches to the mismatch block, leaving the builder in the matching path).
  void emit_body(llvm::Type *ty, unsigned bytes, unsigned count, llvm::Value *off,
                 const Ptrs &in, const Ptrs &out);
  // For every row r of M: sum_c M(r, c) * x[c] (M: desc_.coeffs, or desc_.pre for the
  // intermediates), emitted together by the lowering.
  std::vector<llvm::Value *> emit_outputs(llvm::Type *ty, const codes::Matrix &M,
                                          const std::vector<llvm::Value *> &x);
  // A guarded, rotated loop: while (n - off >= step) { body(off); off += step; }.
  // Returns the offset after the loop; the builder is left in the exit block.
  llvm::Value *emit_loop(const char *name, llvm::Value *start, uint64_t step,
                         llvm::function_ref<void(llvm::Value *)> body,
                         llvm::Value *end = nullptr);
  // One side of a staged copy: row j is the caller's pointer array[j] plus `offset` bytes
  // (offset null: none), or, with array null, the stack buffers at base + j x vec_bytes.
  struct CopyRows {
    llvm::Value *array = nullptr, *offset = nullptr, *base = nullptr;
    uint64_t vec_bytes = 0;
  };
  CopyRows caller_rows(unsigned arg, llvm::Value *offset = nullptr) {
    return CopyRows{fn_->getArg(arg), offset, nullptr, 0};
  }
  static CopyRows stack_rows(const Ptrs &buffers, uint64_t vec_bytes) {
    return CopyRows{nullptr, nullptr, buffers.empty() ? nullptr : buffers.front(), vec_bytes};
  }
  // dst row j [0, count) = src row j [0, count) for j < rows (count defaults to n), one byte
  // per iteration (no libc call). A loop over the rows around a one-byte loop: an unrolled
  // row per shard made LSR and ISel chew on 2 x rows induction uses - 1.7 of the 5.2 ms
  // RS(10,4)'s decoder took to compile on Zen 5, for a path only shards under one vector take.
  void emit_copy(const char *name, const CopyRows &dst, const CopyRows &src, unsigned rows,
                 llvm::Value *count = nullptr);
  // Places `done` (and kVerify's mismatch block) last and emits the returns.
  void finish(llvm::BasicBlock *done);

  llvm::LLVMContext &ctx_;
  llvm::Module &mod_;
  const KernelDesc &desc_;
  const TargetInfo &target_;
  MultiplyLowering &lowering_;
  const size_t coeff_bytes_;  // KernelDesc::runtime_coeffs: bytes per prepared coefficient
  llvm::IRBuilder<> b_;
  const bool verify_, accumulate_, delta_;
  const bool streaming_;  // non-temporal output stores (KernelDesc::streaming_stores)
  const unsigned num_in_, num_out_;  // user buffers: inputs (with kVerify's expected), outputs

  llvm::Function *fn_ = nullptr;
  llvm::BasicBlock *mismatch_ = nullptr;  // kVerify: returns the phi below
  llvm::PHINode *mismatch_off_ = nullptr;
  llvm::IntegerType *size_ty_ = nullptr;
  llvm::Value *len_ = nullptr;
  llvm::Value *coeffs_ = nullptr;  // KernelDesc::runtime_coeffs: the prepared coefficients
  llvm::Value *n_ = nullptr;  // len rounded down to whole symbols
  Ptrs in_ptrs_, out_ptrs_;
  llvm::MDNode *load_scope_ = nullptr, *load_noalias_ = nullptr;
  std::vector<llvm::MDNode *> store_scope_, store_noalias_;
};

void KernelEmitter::declare_function() {
  size_ty_ = kernel_size_type(ctx_, target_);
  llvm::PointerType *ptr = llvm::PointerType::getUnqual(ctx_);
  std::vector<llvm::Type *> params{ptr};
  std::vector<const char *> names{"in"};
  if (!verify_) {
    params.push_back(ptr);
    names.push_back("out");
  }
  params.push_back(size_ty_);
  names.push_back("len");
  if (desc_.runtime_coeffs) {
    params.push_back(ptr);
    names.push_back("coeffs");
  }
  auto *fty = llvm::FunctionType::get(verify_ ? static_cast<llvm::Type *>(size_ty_)
                                              : llvm::Type::getVoidTy(ctx_),
                                      params, false);
  // No memcpy / memset builtins: the byte-copy loops of the short-shard path stay loops.
  fn_ = create_kernel_function(mod_, fty, desc_.symbol, target_);
  for (unsigned i = 0; i < fn_->arg_size(); ++i) {
    llvm::Argument *arg = fn_->getArg(i);
    arg->setName(names[i]);
    arg->addAttr(llvm::Attribute::NoUndef);
    if (arg->getType()->isPointerTy()) {
      // The pointer arrays and the coefficient data: only read, never kept, not aliased
      // by any store.
      arg->addAttr(llvm::Attribute::NoAlias);
      arg->addAttr(llvm::Attribute::NoCapture);
      arg->addAttr(llvm::Attribute::ReadOnly);
    } else {
      len_ = arg;
    }
  }
  if (desc_.runtime_coeffs) coeffs_ = fn_->getArg(fn_->arg_size() - 1);
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
  load_all(fn_->getArg(0), num_in_, "in", in_ptrs_);
  if (!verify_) load_all(fn_->getArg(1), num_out_, "out", out_ptrs_);
}

std::vector<llvm::Value *> KernelEmitter::emit_outputs(llvm::Type *ty, const codes::Matrix &M,
                                                       const std::vector<llvm::Value *> &x) {
  std::vector<std::vector<Product>> products(M.rows);
  if (coeffs_) {  // every product, its data at (r * cols + c) * coefficient bytes
    for (unsigned r = 0; r < M.rows; ++r)
      for (unsigned c = 0; c < M.cols; ++c)
        products[r].push_back(Product{
            x[c], 2,
            b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), coeffs_,
                                          (uint64_t(r) * M.cols + c) * coeff_bytes_)});
    return lowering_.emit_outputs(b_, ty, products);
  }
  for (unsigned r = 0; r < M.rows; ++r)
    for (unsigned c = 0; c < M.cols; ++c)
      if (const uint64_t a = M.at(r, c)) products[r].push_back(Product{x[c], a});
  return lowering_.emit_outputs(b_, ty, products);
}

void KernelEmitter::emit_body(llvm::Type *ty, unsigned bytes, unsigned count, llvm::Value *off,
                              const Ptrs &in, const Ptrs &out) {
  // A shape kernel whose lowering takes several vectors at once: the step's vectors (a power
  // of two of them) as one value, so each coefficient is loaded once and applied to all of
  // them next to each other. As separate copies, the code generator merges the copies' loads of a coefficient and keeps
  // it live from the first copy to the last (512-bit GFNI, 10 inputs x 4 outputs: 20
  // coefficients spilled to the stack and reloaded, 1.6x the time of the unrolled encoder).
  if (coeffs_ && count > 1 && (count & (count - 1)) == 0 && ty->isVectorTy() &&
      lowering_.runtime_vector_multiples() && !streaming_ && !verify_ && !desc_.pre.rows) {
    auto *vt = llvm::cast<llvm::FixedVectorType>(ty);
    return emit_body(llvm::FixedVectorType::get(vt->getElementType(), vt->getNumElements() * count),
                     bytes * count, 1, off, in, out);
  }
  const unsigned k = desc_.sources(), m = desc_.coeffs.rows;
  const llvm::Align align1(1);
  llvm::Type *i8 = b_.getInt8Ty();
  std::vector<std::vector<llvm::Value *>> x(count, std::vector<llvm::Value *>(k));
  std::vector<llvm::Value *> offs(count);
  for (unsigned u = 0; u < count; ++u)
    offs[u] = u == 0 ? off : b_.CreateAdd(off, llvm::ConstantInt::get(size_ty_, u * bytes));
  auto load_in = [&](unsigned buf, unsigned u) {
    llvm::LoadInst *ld =
        b_.CreateAlignedLoad(ty, b_.CreateInBoundsGEP(i8, in[buf], offs[u]), align1);
    ld->setMetadata(llvm::LLVMContext::MD_alias_scope, load_scope_);
    ld->setMetadata(llvm::LLVMContext::MD_noalias, load_noalias_);
    return static_cast<llvm::Value *>(ld);
  };
  // Vector u's inputs (and first-stage intermediates), emitted where they are first needed:
  // loaded all at once, ten inputs x four vectors of 512 bits outlive the registers and the
  // code generator keeps them so (GF(2^64) shape kernels spilled ~60 products per step).
  auto load_vector = [&](unsigned u) {
    for (unsigned c = 0; c < k; ++c)
      x[u][c] = delta_ ? b_.CreateXor(load_in(2 * c, u), load_in(2 * c + 1, u)) : load_in(c, u);
    // The first stage: intermediates, appended to the vector's inputs (coeffs' columns k..).
    if (desc_.pre.rows) {
      const std::vector<llvm::Value *> mid = emit_outputs(ty, desc_.pre, x[u]);
      x[u].insert(x[u].end(), mid.begin(), mid.end());
    }
  };
  llvm::Value *diff = nullptr;  // kVerify: OR of (computed ^ expected)
  auto finish = [&](unsigned r, unsigned u, llvm::Value *v) {  // verify, or store output r
    if (verify_) {
      llvm::Value *d = b_.CreateXor(v, load_in(k * (delta_ ? 2 : 1) + r, u));
      diff = diff ? b_.CreateOr(diff, d) : d;
      return;
    }
    llvm::Value *ptr = b_.CreateInBoundsGEP(i8, out[r], offs[u]);
    if (accumulate_) {
      llvm::LoadInst *old = b_.CreateAlignedLoad(ty, ptr, align1);
      old->setMetadata(llvm::LLVMContext::MD_alias_scope, store_scope_[r]);
      old->setMetadata(llvm::LLVMContext::MD_noalias, store_noalias_[r]);
      v = b_.CreateXor(old, v);
    }
    llvm::StoreInst *st = b_.CreateAlignedStore(v, ptr, streaming_ ? llvm::Align(bytes) : align1);
    st->setMetadata(llvm::LLVMContext::MD_alias_scope, store_scope_[r]);
    st->setMetadata(llvm::LLVMContext::MD_noalias, store_noalias_[r]);
    if (streaming_)
      st->setMetadata(llvm::LLVMContext::MD_nontemporal,
                      llvm::MDNode::get(ctx_, llvm::ConstantAsMetadata::get(b_.getInt32(1))));
  };
  if (!streaming_) {  // each vector's outputs stored as soon as they are computed
    for (unsigned u = 0; u < count; ++u) {
      load_vector(u);
      const std::vector<llvm::Value *> v = emit_outputs(ty, desc_.coeffs, x[u]);
      for (unsigned r = 0; r < m; ++r) finish(r, u, v[r]);
    }
  } else {  // every value first, then the stores output by output: whole lines (see emit())
    std::vector<std::vector<llvm::Value *>> values(count);
    for (unsigned u = 0; u < count; ++u) load_vector(u), values[u] = emit_outputs(ty, desc_.coeffs, x[u]);
    for (unsigned r = 0; r < m; ++r)
      for (unsigned u = 0; u < count; ++u) finish(r, u, values[u][r]);
  }
  if (!verify_) return;
  llvm::Value *any = llvm::ConstantInt::getFalse(ctx_);
  if (diff) {
    const unsigned bits = unsigned(ty->getPrimitiveSizeInBits().getFixedValue());
    llvm::Value *flat = ty->isVectorTy() ? b_.CreateBitCast(diff, b_.getIntNTy(bits)) : diff;
    any = b_.CreateICmpNE(flat, llvm::Constant::getNullValue(flat->getType()), "mismatch.any");
  }
  auto *cont = llvm::BasicBlock::Create(ctx_, "match", fn_);
  b_.CreateCondBr(any, mismatch_, cont);
  mismatch_off_->addIncoming(off, b_.GetInsertBlock());
  b_.SetInsertPoint(cont);
}

llvm::Value *KernelEmitter::emit_loop(const char *name, llvm::Value *start, uint64_t step,
                                      llvm::function_ref<void(llvm::Value *)> body,
                                      llvm::Value *end_bound) {
  if (!end_bound) end_bound = n_;
  llvm::BasicBlock *pre = b_.GetInsertBlock();
  auto *loop = llvm::BasicBlock::Create(ctx_, name, fn_);
  auto *exit = llvm::BasicBlock::Create(ctx_, std::string(name) + ".exit", fn_);
  llvm::Constant *step_c = llvm::ConstantInt::get(size_ty_, step);
  // start <= end always holds, so end - start cannot wrap.
  b_.CreateCondBr(b_.CreateICmpUGE(b_.CreateSub(end_bound, start), step_c), loop, exit);

  b_.SetInsertPoint(loop);
  llvm::PHINode *off = b_.CreatePHI(size_ty_, 2, std::string(name) + ".off");
  off->addIncoming(start, pre);
  body(off);
  llvm::Value *next = b_.CreateAdd(off, step_c, std::string(name) + ".next", /*HasNUW=*/true);
  llvm::BasicBlock *latch = b_.GetInsertBlock();
  llvm::Value *more = b_.CreateICmpUGE(b_.CreateSub(end_bound, next), step_c);
  llvm::BranchInst *br = b_.CreateCondBr(more, loop, exit);
  mark_loop_as_final(br);
  off->addIncoming(next, latch);

  b_.SetInsertPoint(exit);
  llvm::PHINode *end = b_.CreatePHI(size_ty_, 2, std::string(name) + ".end");
  end->addIncoming(start, pre);
  end->addIncoming(next, latch);
  return end;
}

void KernelEmitter::emit_copy(const char *name, const CopyRows &dst, const CopyRows &src,
                              unsigned rows, llvm::Value *count) {
  llvm::Type *i8 = b_.getInt8Ty();
  llvm::PointerType *ptr = llvm::PointerType::getUnqual(ctx_);
  const llvm::Align ptr_align(size_ty_->getBitWidth() / 8);
  auto row = [&](const CopyRows &side, llvm::Value *j) -> llvm::Value * {
    if (!side.array)
      return b_.CreateInBoundsGEP(i8, side.base, b_.CreateMul(j, llvm::ConstantInt::get(size_ty_, side.vec_bytes)));
    llvm::Value *p = b_.CreateAlignedLoad(ptr, b_.CreateInBoundsGEP(ptr, side.array, j), ptr_align);
    return side.offset ? b_.CreateInBoundsGEP(i8, p, side.offset) : p;
  };
  emit_loop(
      (std::string(name) + ".rows").c_str(), llvm::ConstantInt::get(size_ty_, 0), 1,
      [&](llvm::Value *j) {
        llvm::Value *d = row(dst, j), *s = row(src, j);
        emit_loop(
            name, llvm::ConstantInt::get(size_ty_, 0), 1,
            [&](llvm::Value *i) {
              b_.CreateStore(b_.CreateLoad(i8, b_.CreateInBoundsGEP(i8, s, i)), b_.CreateInBoundsGEP(i8, d, i));
            },
            count ? count : n_);
      },
      llvm::ConstantInt::get(size_ty_, rows));
}

void KernelEmitter::emit(unsigned vector_lanes, const BuildOptions &options) {
  // Streaming stores fill whole 64-byte lines, one output after the other, per step of the
  // main loop: write-combining buffers then flush full lines. One vector per output per
  // step (256-bit: half a line) cost Zen 3 two thirds of its DRAM write bandwidth
  // (2.2 GB/s against 6.5 with cached stores at 16 MiB shards).
  const unsigned line_vectors =
      streaming_ ? std::max(1u, 64u / std::max(1u, target_.vector_bits / 8)) : 1u;
  const unsigned unroll = std::max(options.unroll, line_vectors);
  declare_function();
  make_alias_scopes();
  b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", fn_));
  load_buffer_pointers();

  const unsigned l = desc_.field.bits();
  const unsigned sym_bytes = l / 8;
  llvm::Type *scalar_ty = b_.getIntNTy(l);
  // Up to 64 bits there is no vector unit (TargetInfo): symbols packed into one integer
  // register (SWAR); the lowering masks its shifts at symbol boundaries (lane_shl/lane_lshr).
  const unsigned vector_bits = vector_lanes * l;
  llvm::Type *vec_ty = vector_bits <= 64 ? static_cast<llvm::Type *>(b_.getIntNTy(vector_bits))
                                         : llvm::FixedVectorType::get(scalar_ty, vector_lanes);
  const uint64_t vec_bytes = uint64_t(vector_lanes) * sym_bytes;
  // 0 < n < VB is possible only with more than one symbol per vector, and a whole_vectors
  // caller never passes it (the kernel traps instead).
  const bool short_shards = vec_bytes > sym_bytes && !desc_.whole_vectors;
  const bool trap_short = vec_bytes > sym_bytes && desc_.whole_vectors;
  // Shape kernels have no scalar form of their products: always through the stack.
  const bool stack_tail =
      short_shards && (desc_.runtime_coeffs ||
                       uint64_t(num_in_ + num_out_) * vec_bytes <= options.max_stack_tail_bytes);

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
      // Streaming kernels claim vector alignment for every output store (their contract
      // rules this path out, but the claim must hold wherever the store could run).
      a->setAlignment(llvm::Align(streaming_ ? vec_bytes : 16));
      for (unsigned i = 0; i < count; ++i)
        dst.push_back(b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), a, i * vec_bytes));
    };
    stack(num_in_, "stack.in", stack_in);
    if (num_out_) stack(num_out_, "stack.out", stack_out);
  }

  auto block = [&](const char *name) { return llvm::BasicBlock::Create(ctx_, name, fn_); };
  llvm::BasicBlock *done = llvm::BasicBlock::Create(ctx_, "done");  // placed last
  if (verify_) {
    mismatch_ = llvm::BasicBlock::Create(ctx_, "mismatch");
    llvm::IRBuilderBase::InsertPointGuard guard(b_);
    b_.SetInsertPoint(mismatch_);
    mismatch_off_ = b_.CreatePHI(size_ty_, 4, "mismatch.off");
  }
  if (accumulate_) {
    emit_accumulate(vec_ty, scalar_ty, unsigned(vec_bytes), unroll, stack_tail, stack_in,
                    stack_out, done);
    return;
  }
  llvm::BasicBlock *nonempty = block("nonempty");
  llvm::BasicBlock *big = block("vbig");
  llvm::BasicBlock *small = short_shards ? block("vsmall") : nullptr;
  b_.CreateCondBr(b_.CreateICmpEQ(n_, zero), done, nonempty);
  b_.SetInsertPoint(nonempty);
  llvm::BasicBlock *trap = trap_short ? block("short.trap") : nullptr;
  b_.CreateCondBr(b_.CreateICmpUGE(n_, vb), big, short_shards ? small : trap ? trap : done);
  if (trap) {
    b_.SetInsertPoint(trap);
    b_.CreateIntrinsic(llvm::Intrinsic::trap, {}, {});
    b_.CreateUnreachable();
  }

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
  llvm::Value *small_in_array = nullptr, *small_out_array = nullptr;
  if (short_shards) {
    b_.SetInsertPoint(small);
    if (stack_tail) {
      for (llvm::Value *p : stack_in)
        b_.CreateAlignedStore(llvm::Constant::getNullValue(vec_ty), p, llvm::Align(1));
      emit_copy("copy.in", stack_rows(stack_in, vec_bytes), caller_rows(0), num_in_);
      // The stack buffers' addresses as pointer arrays like the caller's (see vpre).
      // Static allocas, in the entry block: one in a later block is a dynamic stack
      // adjustment (Hexagon HVX kernels crashed under qemu with it).
      auto array_of = [&](const Ptrs &ptrs, const char *name) -> llvm::Value * {
        if (ptrs.empty()) return nullptr;
        llvm::PointerType *ptr = llvm::PointerType::getUnqual(ctx_);
        llvm::AllocaInst *a;
        {
          llvm::IRBuilderBase::InsertPointGuard guard(b_);
          llvm::BasicBlock *entry = &fn_->getEntryBlock();
          b_.SetInsertPoint(entry, entry->getFirstInsertionPt());
          a = b_.CreateAlloca(llvm::ArrayType::get(ptr, ptrs.size()), nullptr, name);
        }
        for (size_t i = 0; i < ptrs.size(); ++i)
          b_.CreateStore(ptrs[i], b_.CreateConstInBoundsGEP1_64(ptr, a, i));
        return a;
      };
      small_in_array = array_of(stack_in, "stack.in.ptrs");
      small_out_array = array_of(stack_out, "stack.out.ptrs");
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
  // The loop's buffers: the caller's, or the stack's when the shards are short. Merged as
  // the two pointer arrays, each pointer then loaded once here: phis of the k + m pointers
  // themselves made LLVM's register allocator rotate them through registers on every
  // iteration once they no longer fit (23 register moves per 32 bytes for RS(10,4)).
  Ptrs in_base = in_ptrs_, out_base = out_ptrs_;
  llvm::Value *first = start, *final_off = last;
  if (small_end) {
    llvm::PointerType *ptr = llvm::PointerType::getUnqual(ctx_);
    const llvm::Align ptr_align(size_ty_->getBitWidth() / 8);
    llvm::Value *in_array = merge(fn_->getArg(0), small_in_array, "in.array");
    llvm::Value *out_array =
        num_out_ ? merge(fn_->getArg(1), small_out_array, "out.array") : nullptr;
    first = merge(start, zero, "first");
    final_off = merge(last, zero, "final");
    auto reload = [&](llvm::Value *array, const char *name, Ptrs &dst) {
      for (unsigned i = 0; i < dst.size(); ++i)
        dst[i] = b_.CreateAlignedLoad(ptr, b_.CreateConstInBoundsGEP1_64(ptr, array, i),
                                      ptr_align, llvm::Twine(name) + ".base" + llvm::Twine(i));
    };
    reload(in_array, "in", in_base);
    if (num_out_) reload(out_array, "out", out_base);
  }

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
  mark_loop_as_final(br);
  off->addIncoming(next, b_.GetInsertBlock());

  b_.SetInsertPoint(exit);
  if (small_end && num_out_) {
    llvm::BasicBlock *copy_out = block("vcopy");
    b_.CreateCondBr(b_.CreateICmpULT(n_, vb), copy_out, done);
    b_.SetInsertPoint(copy_out);
    emit_copy("copy.out", caller_rows(1), stack_rows(stack_out, vec_bytes), num_out_);
  }
  b_.CreateBr(done);

  finish(done);
}

void KernelEmitter::finish(llvm::BasicBlock *done) {
  done->insertInto(fn_);
  b_.SetInsertPoint(done);
  if (!verify_) {
    if (streaming_) b_.CreateIntrinsic(llvm::Intrinsic::x86_sse_sfence, {}, {});
    b_.CreateRetVoid();
    return;
  }
  b_.CreateRet(len_);
  mismatch_->insertInto(fn_);
  b_.SetInsertPoint(mismatch_);
  b_.CreateRet(mismatch_off_);
}

void KernelEmitter::emit_accumulate(llvm::Type *vec_ty, llvm::Type *scalar_ty,
                                    unsigned vec_bytes, unsigned unroll, bool stack_tail,
                                    const Ptrs &stack_in, const Ptrs &stack_out,
                                    llvm::BasicBlock *done) {
  auto block = [&](const char *name) { return llvm::BasicBlock::Create(ctx_, name, fn_); };
  const unsigned sym_bytes = desc_.field.bytes();
  llvm::Constant *zero = llvm::ConstantInt::get(size_ty_, 0);
  llvm::BasicBlock *nonempty = block("nonempty");
  b_.CreateCondBr(b_.CreateICmpEQ(n_, zero), done, nonempty);
  b_.SetInsertPoint(nonempty);
  llvm::Value *off = zero;
  if (unroll > 1)
    off = emit_loop(kMainLoopBlock, off, uint64_t(vec_bytes) * unroll, [&](llvm::Value *o) {
      emit_body(vec_ty, vec_bytes, unroll, o, in_ptrs_, out_ptrs_);
    });
  off = emit_loop(unroll > 1 ? "vloop1" : kMainLoopBlock, off, vec_bytes, [&](llvm::Value *o) {
    emit_body(vec_ty, vec_bytes, 1, o, in_ptrs_, out_ptrs_);
  });
  if (vec_bytes == sym_bytes) {  // n is a whole number of vectors
    b_.CreateBr(done);
    finish(done);
    return;
  }
  // The remainder [off, n), shorter than one vector.
  llvm::BasicBlock *rem = block("vrem");
  b_.CreateCondBr(b_.CreateICmpEQ(off, n_), done, rem);
  b_.SetInsertPoint(rem);
  if (stack_tail) {
    llvm::Value *count = b_.CreateSub(n_, off, "rem.bytes");
    for (llvm::Value *p : stack_in)
      b_.CreateAlignedStore(llvm::Constant::getNullValue(vec_ty), p, llvm::Align(1));
    for (llvm::Value *p : stack_out)
      b_.CreateAlignedStore(llvm::Constant::getNullValue(vec_ty), p, llvm::Align(1));
    emit_copy("copy.in", stack_rows(stack_in, vec_bytes), caller_rows(0, off), num_in_, count);
    emit_copy("copy.acc", stack_rows(stack_out, vec_bytes), caller_rows(1, off), num_out_, count);
    emit_body(vec_ty, vec_bytes, 1, zero, stack_in, stack_out);
    emit_copy("copy.out", caller_rows(1, off), stack_rows(stack_out, vec_bytes), num_out_, count);
  } else {
    emit_loop("tail", off, sym_bytes, [&](llvm::Value *o) {
      emit_body(scalar_ty, sym_bytes, 1, o, in_ptrs_, out_ptrs_);
    });
  }
  b_.CreateBr(done);
  finish(done);
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
  auto check_matrix = [&](const codes::Matrix &A, const char *name) -> llvm::Error {
    if (A.a.size() != size_t(A.rows) * A.cols)
      return make_error(std::string(name) + " matrix has " + std::to_string(A.a.size()) +
                        " entries, expected rows x cols = " + std::to_string(A.rows) + " x " +
                        std::to_string(A.cols));
    for (unsigned r = 0; r < A.rows; ++r)
      for (unsigned c = 0; c < A.cols; ++c)
        if ((A.at(r, c) & ~desc.field.mask()) != 0)
          return make_error(std::string(name) + " (" + std::to_string(r) + ", " +
                            std::to_string(c) + ") = " + std::to_string(A.at(r, c)) +
                            " is not in GF(2^" + std::to_string(l) + ")");
    return llvm::Error::success();
  };
  if (llvm::Error err = check_matrix(M, "coefficient")) return std::move(err);
  if (desc.has_pre()) {
    if (desc.output != OutputMode::kOverwrite || desc.input != InputMode::kPlain)
      return make_error("a first stage (pre) is for plain overwrite kernels only");
    if (desc.pre.rows == 0 || desc.pre.cols == 0)
      return make_error("first stage (pre) of " + std::to_string(desc.pre.rows) + " x " +
                        std::to_string(desc.pre.cols) + ": no intermediates or no inputs");
    if (llvm::Error err = check_matrix(desc.pre, "first-stage (pre)")) return std::move(err);
    if (M.cols != desc.pre.cols + desc.pre.rows)
      return make_error("coefficient matrix has " + std::to_string(M.cols) +
                        " columns; a first stage of " + std::to_string(desc.pre.rows) + " x " +
                        std::to_string(desc.pre.cols) + " needs inputs + intermediates = " +
                        std::to_string(desc.pre.cols + desc.pre.rows));
  }
  if (target.vector_bits < l || target.vector_bits % l != 0 || target.vector_bits > 4096)
    return make_error("vector width " + std::to_string(target.vector_bits) +
                      " bits does not hold whole " + std::to_string(l) + "-bit symbols");
  if (llvm::Error err = check_symbol_byte_order(l, target, "build_kernel"))
    return std::move(err);
  if (options.unroll < 1 || options.unroll > 8)
    return make_error("unroll " + std::to_string(options.unroll) + " not in 1..8");
  if (desc.streaming_stores &&
      (desc.output != OutputMode::kOverwrite || !llvm::Triple(target.triple).isX86()))
    return make_error("streaming stores are for overwrite kernels on x86");
  if (desc.whole_vectors && desc.output != OutputMode::kOverwrite)
    return make_error("whole_vectors is for overwrite kernels (their last vector may overlap)");
  if (desc.output == OutputMode::kSignature) {
    if (M.cols != 1 || M.rows == 0 || desc.input != InputMode::kPlain)
      return make_error("a signature kernel takes one plain input and a column of base elements");
    for (unsigned r = 0; r < M.rows; ++r)
      if (M.at(r, 0) == 0) return make_error("signature base element " + std::to_string(r) + " is 0");
  }

  if (strategy == Strategy::kAuto) strategy = Strategy::kClmulShift;
  auto lowering = make_lowering(strategy, desc.field, target);
  if (!lowering) return lowering.takeError();
  if (desc.runtime_coeffs) {
    if (desc.has_pre() || desc.input != InputMode::kPlain || desc.streaming_stores ||
        (desc.output != OutputMode::kOverwrite && desc.output != OutputMode::kAccumulate))
      return make_error("a shape kernel (runtime_coeffs) is a plain overwrite or accumulate "
                        "kernel without a first stage or streaming stores");
    if (desc.coeffs.rows == 0 || desc.coeffs.cols == 0)
      return make_error("a shape kernel needs at least one input and one output");
    if (!shape_kernel_supported(strategy, desc.field, target))
      return make_error(std::string("strategy '") + strategy_name(strategy) +
                        "' has no run-time-coefficient form for GF(2^" + std::to_string(l) +
                        ") on this target (shape kernels: split-table, gfni, clmul-insn)");
    auto mod = std::make_unique<llvm::Module>(desc.symbol, ctx);
    mod->setTargetTriple(target.triple);
    KernelEmitter(*mod, desc, target, **lowering,
                  codes::coeff_bytes(runtime_layout(strategy), desc.field))
        .emit(kernel_vector_lanes(desc.field, target), options);
    if (llvm::Error err = verify_kernel_module(*mod, "build_kernel")) return std::move(err);
    return std::move(mod);
  }
  if (kernel_is_tiled(desc, options)) return build_tiled_kernel(ctx, desc, target, strategy);
  // A two-stage kernel runs as such only when its lowering finds it strictly cheaper (the
  // shift-and-XOR lowering pays per set bit of a constant, clmul-mixed per set bit up to a
  // cap, the others per product: MultiplyLowering::cost_model);
  // otherwise the composed one-stage map is emitted. Output is the same either way.
  std::optional<KernelDesc> flat;
  if (desc.has_pre()) {
    const codes::CostModel model = (*lowering)->cost_model();
    flat = one_stage(desc);
    if (codes::product_cost(desc.pre, model) + codes::product_cost(desc.coeffs, model) <
        codes::product_cost(flat->coeffs, model))
      flat.reset();
  }
  const KernelDesc &built = flat ? *flat : desc;

  auto mod = std::make_unique<llvm::Module>(built.symbol, ctx);
  mod->setTargetTriple(target.triple);
  if (built.output == OutputMode::kSignature)
    emit_signature_kernel(*mod, built, target, **lowering, kernel_vector_lanes(built.field, target));
  else
    KernelEmitter(*mod, built, target, **lowering)
        .emit(kernel_vector_lanes(built.field, target), options);

  if (llvm::Error err = verify_kernel_module(*mod, "build_kernel"))
    return std::move(err);
  return std::move(mod);
}

unsigned kernel_vector_lanes(const codes::Field &field, const TargetInfo &target) {
  const unsigned l = field.bits();
  const unsigned vector_bits = l > target.max_lane_bits ? 64 : target.vector_bits;
  return vector_bits / l;
}

size_t kernel_min_len(const KernelDesc &desc, const TargetInfo &target) {
  if (!desc.whole_vectors) return 1;
  return size_t(kernel_vector_lanes(desc.field, target)) * desc.field.bytes();
}

KernelContract kernel_contract(const KernelDesc &desc, const TargetInfo &target,
                               const BuildOptions &options) {
  KernelContract c;
  c.min_len = kernel_min_len(desc, target);
  c.len_multiple = desc.field.bytes();
  c.vector_bytes = size_t(kernel_vector_lanes(desc.field, target)) * desc.field.bytes();
  c.step_bytes = c.vector_bytes;
  // Tiled kernels walk one vector per step and store as ordinary kernels do.
  if (kernel_is_tiled(desc, options)) return c;
  unsigned unroll = options.unroll;
  if (desc.streaming_stores) {  // whole lines per step of the main loop, as emit() builds it
    c.len_multiple = c.out_align = kStreamingStoreAlign;
    unroll = std::max<unsigned>(unroll, unsigned(std::max<size_t>(1, kStreamingStoreAlign / c.vector_bytes)));
  }
  c.step_bytes = c.vector_bytes * unroll;
  return c;
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
