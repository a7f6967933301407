// build_tiled_kernel: coefficient tables in the module, run-time loops over tiles of outputs and over inputs.
#include "ir_builders/tiled_kernel.h"

#include <algorithm>
#include <string>
#include <vector>

#include "codes/matrix.h"
#include "ir_builders/generic_kernel.h"
#include "ir_builders/gfni_affine.h"
#include "ir_builders/kernel_abi.h"
#include "ir_builders/split_table.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/Error.h"

namespace ecjit::ir {
namespace {

llvm::Error make_error(const std::string &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), "build_tiled_kernel: " + msg);
}

constexpr unsigned kMaxTileRows = 8;

// How a tile multiplies: the table of each (output, input) coefficient, what is made once
// per input vector, one product from a table entry, and an output's last step.
class TileProducts {
 public:
  virtual ~TileProducts() = default;
  // Vector registers besides the tile's accumulators (what one input's products keep live).
  virtual unsigned live_registers() const = 0;
  // Bytes of one coefficient's entry, and the table of every entry, row-major (r, c).
  virtual uint64_t entry_bytes() const = 0;
  virtual llvm::Constant *table(llvm::LLVMContext &ctx, const KernelDesc &desc) const = 0;
  virtual std::vector<llvm::Value *> prepare(llvm::IRBuilderBase &b, llvm::Value *x) const = 0;
  // The product of the prepared input with the coefficient whose entry is at `entry`.
  virtual llvm::Value *product(llvm::IRBuilderBase &b, const std::vector<llvm::Value *> &prepared,
                               llvm::Value *entry) const = 0;
  virtual llvm::Value *finish(llvm::IRBuilderBase &b, llvm::Value *acc) const { return acc; }
};

// GFNI: per rotation t of the L byte planes one affine transform by the block matrix
// A_{j, j + t} of the coefficient, its pattern of max(L, 2) qwords broadcast to the vector.
// GF(2^8) stores its one matrix twice: a 64-bit pattern would be folded into the affine
// instruction as an EVEX {1to8} broadcast operand, and LLVM 19 encodes that operand's
// compressed displacement scaled by the vector size instead of 8 (a wrong address as soon
// as the offset is not 0). A 128-bit pattern is loaded by its own broadcast instruction.
class GfniTileProducts : public TileProducts {
 public:
  GfniTileProducts(const codes::Field &field, const TargetInfo &target)
      : field_(field), target_(target), planes_(field.bits() / 8), pattern_(std::max(planes_, 2u)),
        vb_(target.vector_bits / 8) {}
  unsigned live_registers() const override { return planes_ + 3; }
  uint64_t entry_bytes() const override { return uint64_t(planes_) * pattern_ * 8; }
  llvm::Constant *table(llvm::LLVMContext &ctx, const KernelDesc &desc) const override {
    std::vector<uint64_t> q;
    q.reserve(size_t(desc.coeffs.rows) * desc.coeffs.cols * planes_ * pattern_);
    for (unsigned r = 0; r < desc.coeffs.rows; ++r)
      for (unsigned c = 0; c < desc.coeffs.cols; ++c)
        for (unsigned t = 0; t < planes_; ++t)
          for (unsigned j = 0; j < pattern_; ++j)
            q.push_back(ir::gfni_block_matrix(field_, desc.coeffs.at(r, c), j % planes_, (j + t) % planes_));
    return llvm::ConstantDataArray::get(ctx, q);
  }
  std::vector<llvm::Value *> prepare(llvm::IRBuilderBase &b, llvm::Value *x) const override {
    return gfni_rotations(b, x, planes_);
  }
  llvm::Value *product(llvm::IRBuilderBase &b, const std::vector<llvm::Value *> &rot,
                       llvm::Value *entry) const override {
    auto *pattern_ty = llvm::FixedVectorType::get(b.getInt64Ty(), pattern_);
    auto *byte_vec = llvm::FixedVectorType::get(b.getInt8Ty(), vb_);
    std::vector<int> splat(vb_ / 8);
    for (unsigned i = 0; i < splat.size(); ++i) splat[i] = int(i % pattern_);
    llvm::Value *sum = nullptr;
    for (unsigned t = 0; t < planes_; ++t) {
      llvm::Value *at = b.CreateConstInBoundsGEP1_64(b.getInt64Ty(), entry, uint64_t(t) * pattern_);
      llvm::Value *pat = b.CreateAlignedLoad(pattern_ty, at, llvm::Align(8));
      llvm::Value *mat = b.CreateBitCast(b.CreateShuffleVector(pat, splat), byte_vec);
      llvm::Value *v = b.CreateIntrinsic(llvm::Intrinsic::ID(gfni_affine_intrinsic(target_)), {}, {rot[t], mat, b.getInt8(0)});
      sum = sum ? b.CreateXor(sum, v) : v;
    }
    return sum;
  }
  llvm::Value *finish(llvm::IRBuilderBase &b, llvm::Value *acc) const override {
    return gfni_untranspose(b, acc, planes_);
  }

 private:
  codes::Field field_;
  const TargetInfo &target_;
  const unsigned planes_, pattern_, vb_;
};

// Split tables (GF(2^8)): per coefficient c the 16-byte tables T_lo[v] = c v and
// T_hi[v] = c (v << 4), each loaded and repeated in every 128-bit lane; per input vector
// its low and high nibbles; per product two byte shuffles (PSHUFB / TBL) and their XOR.
class SplitTileProducts : public TileProducts {
 public:
  SplitTileProducts(const codes::Field &field, const TargetInfo &target)
      : field_(field), shuffle_(split_table_shuffle(target)), vb_(target.vector_bits / 8) {}
  unsigned live_registers() const override { return 4; }
  uint64_t entry_bytes() const override { return 32; }
  llvm::Constant *table(llvm::LLVMContext &ctx, const KernelDesc &desc) const override {
    std::vector<uint8_t> t;
    t.reserve(size_t(desc.coeffs.rows) * desc.coeffs.cols * 32);
    for (unsigned r = 0; r < desc.coeffs.rows; ++r)
      for (unsigned c = 0; c < desc.coeffs.cols; ++c)
        for (unsigned shift : {0u, 4u})
          for (unsigned v = 0; v < 16; ++v) t.push_back(uint8_t(field_.mul(desc.coeffs.at(r, c), v << shift)));
    return llvm::ConstantDataArray::get(ctx, t);
  }
  std::vector<llvm::Value *> prepare(llvm::IRBuilderBase &b, llvm::Value *x) const override {
    llvm::Value *low = llvm::ConstantInt::get(x->getType(), 0x0f);
    return {b.CreateAnd(x, low), b.CreateAnd(b.CreateLShr(x, llvm::ConstantInt::get(x->getType(), 4)), low)};
  }
  llvm::Value *product(llvm::IRBuilderBase &b, const std::vector<llvm::Value *> &nibbles,
                       llvm::Value *entry) const override {
    auto *lane = llvm::FixedVectorType::get(b.getInt8Ty(), 16);
    std::vector<int> repeat(vb_);
    for (unsigned i = 0; i < vb_; ++i) repeat[i] = int(i % 16);
    llvm::Value *sum = nullptr;
    for (unsigned h = 0; h < 2; ++h) {
      llvm::Value *t = b.CreateAlignedLoad(lane, b.CreateConstInBoundsGEP1_64(b.getInt8Ty(), entry, 16 * h),
                                           llvm::Align(1));
      if (vb_ != 16) t = b.CreateShuffleVector(t, repeat);
      llvm::Value *v = split_table_lookup(b, shuffle_, t, nibbles[h]);
      sum = sum ? b.CreateXor(sum, v) : v;
    }
    return sum;
  }

 private:
  codes::Field field_;
  ByteShuffle shuffle_;
  const unsigned vb_;
};

// Emits the tiled kernel into a module (see the header). Holds the per-build IR state.
class TiledEmitter {
 public:
  TiledEmitter(llvm::Module &mod, const KernelDesc &desc, const TargetInfo &target, const TileProducts &products)
      : ctx_(mod.getContext()), mod_(mod), desc_(desc), target_(target), products_(products), b_(ctx_),
        planes_(desc.field.bits() / 8), vb_(target.vector_bits / 8), k_(desc.coeffs.cols),
        m_(desc.coeffs.rows) {
    const unsigned live = products.live_registers();
    const unsigned regs = target.vector_regs > live + 1 ? target.vector_regs - live : 1;
    rows_ = std::min({kMaxTileRows, m_, regs});
  }

  void emit() {
    size_ty_ = kernel_size_type(ctx_, target_);
    ptr_ = llvm::PointerType::getUnqual(ctx_);
    byte_vec_ = llvm::FixedVectorType::get(b_.getInt8Ty(), vb_);
    auto *fty = llvm::FunctionType::get(b_.getVoidTy(), {ptr_, ptr_, size_ty_}, false);
    fn_ = create_kernel_function(mod_, fty, desc_.symbol, target_);
    in_ = fn_->getArg(0);
    out_ = fn_->getArg(1);
    make_tables();

    b_.SetInsertPoint(block("entry"));
    stage_in_ = stack(vb_, "stage.in");
    stage_out_ = stack(vb_ * rows_, "stage.out");
    n_ = b_.CreateAnd(fn_->getArg(2), llvm::ConstantInt::getSigned(size_ty_, -int64_t(planes_)), "n");
    llvm::BasicBlock *done = llvm::BasicBlock::Create(ctx_, "done");
    llvm::BasicBlock *nonempty = block("nonempty"), *big = block("big"), *small = block("small");
    b_.CreateCondBr(b_.CreateICmpEQ(n_, size(0)), done, nonempty);
    b_.SetInsertPoint(nonempty);
    b_.CreateCondBr(b_.CreateICmpUGE(n_, size(vb_)), big, small);
    for (bool staged : {false, true}) {
      b_.SetInsertPoint(staged ? small : big);
      emit_vectors(staged);
      b_.CreateBr(done);
    }
    done->insertInto(fn_);
    b_.SetInsertPoint(done);
    b_.CreateRetVoid();
  }

 private:
  llvm::BasicBlock *block(const char *name) { return llvm::BasicBlock::Create(ctx_, name, fn_); }
  llvm::Constant *size(uint64_t v) { return llvm::ConstantInt::get(size_ty_, v); }

  llvm::Value *stack(unsigned bytes, const char *name) {
    llvm::AllocaInst *a = b_.CreateAlloca(llvm::ArrayType::get(b_.getInt8Ty(), bytes), nullptr, name);
    a->setAlignment(llvm::Align(16));
    return a;
  }

  // Every coefficient's entry (TileProducts::table), row-major.
  void make_tables() {
    llvm::Constant *init = products_.table(ctx_, desc_);
    tables_ = new llvm::GlobalVariable(mod_, init->getType(), /*isConstant=*/true,
                                       llvm::GlobalValue::PrivateLinkage, init, "tile.tables");
    tables_->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
    tables_->setAlignment(llvm::Align(64));
  }

  // The shard vector by vector, every output tile per vector (the inputs' vectors stay in
  // cache across the tiles). Not staged: vectors at 0, VB, ..., the last one at n - VB
  // (overlapping; outputs are only written). Staged (n < VB): one vector through the stack.
  void emit_vectors(bool staged) {
    llvm::BasicBlock *pre = b_.GetInsertBlock(), *vloop = block("vloop");
    llvm::Value *last = staged ? size(0) : b_.CreateSub(n_, size(vb_), "last");
    b_.CreateBr(vloop);
    b_.SetInsertPoint(vloop);
    llvm::PHINode *off = b_.CreatePHI(size_ty_, 2, "off");
    off->addIncoming(size(0), pre);
    emit_all_rows(off, staged);
    llvm::BasicBlock *vexit = block("vloop.exit");
    llvm::Value *next = b_.CreateBinaryIntrinsic(llvm::Intrinsic::umin, b_.CreateAdd(off, size(vb_)), last);
    off->addIncoming(next, b_.GetInsertBlock());
    mark_loop_as_final(b_.CreateCondBr(b_.CreateICmpEQ(off, last), vexit, vloop));
    b_.SetInsertPoint(vexit);
  }

  // Full tiles in a run-time loop, then the last partial tile.
  void emit_all_rows(llvm::Value *off, bool staged) {
    const unsigned full = m_ / rows_, rest = m_ % rows_;
    if (full == 1) {
      emit_tile(off, size(0), rows_, staged);
    } else if (full > 1) {
      llvm::BasicBlock *pre = b_.GetInsertBlock(), *loop = block("tiles");
      b_.CreateBr(loop);
      b_.SetInsertPoint(loop);
      llvm::PHINode *t = b_.CreatePHI(size_ty_, 2, "tile");
      t->addIncoming(size(0), pre);
      emit_tile(off, b_.CreateMul(t, size(rows_)), rows_, staged);
      llvm::Value *next = b_.CreateAdd(t, size(1));
      t->addIncoming(next, b_.GetInsertBlock());
      llvm::BasicBlock *exit = block("tiles.exit");
      mark_loop_as_final(b_.CreateCondBr(b_.CreateICmpULT(next, size(full)), loop, exit));
      b_.SetInsertPoint(exit);
    }
    if (rest) emit_tile(off, size(uint64_t(full) * rows_), rest, staged);
  }

  // dst[0, count) = src[0, count), one byte per iteration (no libc call).
  void emit_copy(llvm::Value *dst, llvm::Value *src, llvm::Value *count) {
    llvm::BasicBlock *pre = b_.GetInsertBlock(), *loop = block("copy"), *exit = block("copy.exit");
    b_.CreateBr(loop);
    b_.SetInsertPoint(loop);
    llvm::PHINode *i = b_.CreatePHI(size_ty_, 2, "i");
    i->addIncoming(size(0), pre);
    llvm::Type *i8 = b_.getInt8Ty();
    b_.CreateStore(b_.CreateLoad(i8, b_.CreateInBoundsGEP(i8, src, i)), b_.CreateInBoundsGEP(i8, dst, i));
    llvm::Value *next = b_.CreateAdd(i, size(1));
    i->addIncoming(next, loop);
    mark_loop_as_final(b_.CreateCondBr(b_.CreateICmpULT(next, count), loop, exit));
    b_.SetInsertPoint(exit);
  }

  // Outputs rb .. rb + rows - 1 at byte offset `off` (staged: the stack buffers).
  void emit_tile(llvm::Value *off, llvm::Value *rb, unsigned rows, bool staged) {
    llvm::BasicBlock *entry = b_.GetInsertBlock();
    // The inputs: acc[r] ^= M(rb + r, c) x_c (TileProducts::product).
    llvm::BasicBlock *cloop = block("inputs");
    b_.CreateBr(cloop);
    b_.SetInsertPoint(cloop);
    llvm::PHINode *c = b_.CreatePHI(size_ty_, 2, "c");
    c->addIncoming(size(0), entry);
    std::vector<llvm::PHINode *> acc(rows);
    for (unsigned r = 0; r < rows; ++r) {
      acc[r] = b_.CreatePHI(byte_vec_, 2, "acc");
      acc[r]->addIncoming(llvm::Constant::getNullValue(byte_vec_), entry);
    }
    llvm::Value *src = b_.CreateAlignedLoad(ptr_, b_.CreateInBoundsGEP(ptr_, in_, c), ptr_align());
    if (staged) {
      b_.CreateAlignedStore(llvm::Constant::getNullValue(byte_vec_), stage_in_, llvm::Align(1));
      emit_copy(stage_in_, src, n_);
      src = stage_in_;
    } else {
      src = b_.CreateInBoundsGEP(b_.getInt8Ty(), src, off);
    }
    llvm::Value *x = b_.CreateAlignedLoad(byte_vec_, src, llvm::Align(1), "x");
    const std::vector<llvm::Value *> prepared = products_.prepare(b_, x);
    std::vector<llvm::Value *> sum(rows);
    for (unsigned r = 0; r < rows; ++r) {
      llvm::Value *row = b_.CreateAdd(rb, size(r));
      llvm::Value *at = b_.CreateMul(b_.CreateAdd(b_.CreateMul(row, size(k_)), c), size(products_.entry_bytes()));
      llvm::Value *entry = b_.CreateInBoundsGEP(b_.getInt8Ty(), tables_, at);
      sum[r] = b_.CreateXor(acc[r], products_.product(b_, prepared, entry));
    }
    llvm::Value *c_next = b_.CreateAdd(c, size(1));
    llvm::BasicBlock *latch = b_.GetInsertBlock(), *cexit = block("inputs.exit");
    c->addIncoming(c_next, latch);
    for (unsigned r = 0; r < rows; ++r) acc[r]->addIncoming(sum[r], latch);
    mark_loop_as_final(b_.CreateCondBr(b_.CreateICmpULT(c_next, size(k_)), cloop, cexit));

    b_.SetInsertPoint(cexit);
    for (unsigned r = 0; r < rows; ++r) {
      llvm::Value *dst = b_.CreateAlignedLoad(
          ptr_, b_.CreateInBoundsGEP(ptr_, out_, b_.CreateAdd(rb, size(r))), ptr_align());
      llvm::Value *y = products_.finish(b_, sum[r]);
      if (staged) {
        llvm::Value *stage = b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), stage_out_, uint64_t(r) * vb_);
        b_.CreateAlignedStore(y, stage, llvm::Align(1));
        emit_copy(dst, stage, n_);
      } else {
        b_.CreateAlignedStore(y, b_.CreateInBoundsGEP(b_.getInt8Ty(), dst, off), llvm::Align(1));
      }
    }
  }

  llvm::Align ptr_align() const { return llvm::Align(size_ty_->getBitWidth() / 8); }

  llvm::LLVMContext &ctx_;
  llvm::Module &mod_;
  const KernelDesc &desc_;
  const TargetInfo &target_;
  const TileProducts &products_;
  llvm::IRBuilder<> b_;
  const unsigned planes_, vb_, k_, m_;
  unsigned rows_ = 1;  // outputs per tile
  llvm::IntegerType *size_ty_ = nullptr;
  llvm::PointerType *ptr_ = nullptr;
  llvm::Type *byte_vec_ = nullptr;
  llvm::Function *fn_ = nullptr;
  llvm::Value *in_ = nullptr, *out_ = nullptr, *n_ = nullptr;
  llvm::Value *stage_in_ = nullptr, *stage_out_ = nullptr;
  llvm::GlobalVariable *tables_ = nullptr;
};

// The kernel ABI around build_generic_kernel's function, with the matrix as a constant.
void emit_generic_wrapper(llvm::Module &mod, const KernelDesc &desc, const TargetInfo &target,
                          llvm::Function *generic) {
  llvm::LLVMContext &ctx = mod.getContext();
  const unsigned sb = desc.field.bytes();
  std::vector<uint8_t> bytes;
  bytes.reserve(desc.coeffs.a.size() * sb);
  for (uint64_t a : desc.coeffs.a)
    for (unsigned i = 0; i < sb; ++i) bytes.push_back(uint8_t(a >> (8 * i)));
  llvm::Constant *init = llvm::ConstantDataArray::get(ctx, bytes);
  auto *coeffs = new llvm::GlobalVariable(mod, init->getType(), true,
                                          llvm::GlobalValue::PrivateLinkage, init, "coeffs");
  generic->setLinkage(llvm::GlobalValue::InternalLinkage);
  llvm::IntegerType *size_ty = kernel_size_type(ctx, target);
  llvm::PointerType *ptr = llvm::PointerType::getUnqual(ctx);
  auto *fty = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), {ptr, ptr, size_ty}, false);
  llvm::Function *fn = create_kernel_function(mod, fty, desc.symbol, target);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", fn));
  b.CreateCall(generic, {coeffs, b.getInt32(desc.coeffs.rows), b.getInt32(desc.coeffs.cols),
                         fn->getArg(0), fn->getArg(1), fn->getArg(2)});
  b.CreateRetVoid();
}

}  // namespace

bool kernel_is_tiled(const KernelDesc &desc, const BuildOptions &options) {
  if (desc.output != OutputMode::kOverwrite || desc.input != InputMode::kPlain) return false;
  const uint64_t products = codes::count_products(desc.coeffs) + codes::count_products(desc.pre);
  const uint64_t blocks = uint64_t(desc.field.bytes()) * desc.field.bytes();
  return products * blocks > options.max_unrolled_products;
}

llvm::Expected<std::unique_ptr<llvm::Module>> build_tiled_kernel(llvm::LLVMContext &ctx,
                                                                 const KernelDesc &request,
                                                                 const TargetInfo &target,
                                                                 Strategy strategy) {
  if (request.output != OutputMode::kOverwrite || request.input != InputMode::kPlain)
    return make_error("only plain overwrite kernels (encode, decode) are tiled");
  // The tiled loops walk one coefficient table over the inputs: a first stage is composed in.
  KernelDesc desc = request;
  if (desc.has_pre()) {
    if (desc.pre.rows == 0 || desc.pre.cols == 0 ||
        desc.pre.a.size() != size_t(desc.pre.rows) * desc.pre.cols ||
        desc.coeffs.cols != desc.pre.cols + desc.pre.rows)
      return make_error("the first stage (pre) does not fit the coefficient matrix");
    desc = one_stage(desc);
  }
  if (desc.coeffs.rows == 0 || desc.coeffs.cols == 0)
    return make_error("an empty matrix has nothing to tile");
  std::unique_ptr<llvm::Module> mod;
  if (strategy == Strategy::kGfni) {
    if (!gfni_supported(desc.field, target))
      return make_error("strategy 'gfni' cannot serve GF(2^" + std::to_string(desc.field.bits()) +
                        ") on target '" + target.triple + "' (" + std::to_string(target.vector_bits) +
                        "-bit vectors)");
    mod = std::make_unique<llvm::Module>(desc.symbol, ctx);
    mod->setTargetTriple(target.triple);
    TiledEmitter(*mod, desc, target, GfniTileProducts(desc.field, target)).emit();
  } else if (strategy == Strategy::kSplitTable && desc.field.bits() == 8 &&
             split_table_shuffle(target) != ByteShuffle::kNone) {
    mod = std::make_unique<llvm::Module>(desc.symbol, ctx);
    mod->setTargetTriple(target.triple);
    TiledEmitter(*mod, desc, target, SplitTileProducts(desc.field, target)).emit();
  } else {
    const std::string inner = desc.symbol + "_generic";
    auto generic = build_generic_kernel(ctx, desc.field, target, inner);
    if (!generic) return generic.takeError();
    mod = std::move(*generic);
    emit_generic_wrapper(*mod, desc, target, mod->getFunction(inner));
  }
  if (llvm::Error err = verify_kernel_module(*mod, "build_tiled_kernel")) return std::move(err);
  return std::move(mod);
}

}  // namespace ecjit::ir
