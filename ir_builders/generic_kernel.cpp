// build_generic_kernel: run-time coefficient matrix, clmul-shift with masks from the coefficient bits.
#include "ir_builders/generic_kernel.h"

#include "ir_builders/clmul_shift.h"

#include <vector>

#include "ir_builders/kernel_abi.h"
#include "ir_builders/kernel_builder.h"
#include "ir_builders/lowering.h"
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
  return llvm::createStringError(llvm::inconvertibleErrorCode(), "build_generic_kernel: " + msg);
}

// Emits the function. Control flow (VB = bytes per vector, n = len rounded down to symbols,
// vend = n rounded down to vectors):
//   entry: rows == 0 -> done; vend != 0 -> vloop; else -> tailchk
//   vloop: body(<vector>, off) for off = 0, VB, ... < vend  -> tailchk
//   tailchk: vend < n -> tail, else done
//   tail:  body(iL, off) for off = vend, vend + sb, ... < n -> done
// body(ty, off) is: for r < rows { lo = hi = 0; for c < cols { acc(in[c][off], coeffs[r][c]) }
// store reduce(lo, hi) to out[r][off] }.
class GenericEmitter {
 public:
  GenericEmitter(llvm::Module &mod, const codes::Field &field, const TargetInfo &target)
      : ctx_(mod.getContext()), mod_(mod), field_(field), target_(target), b_(ctx_) {}

  void emit(const std::string &symbol, unsigned vector_bits);

 private:
  void emit_body(llvm::Type *ty, llvm::Value *off);
  // One coefficient: lo ^= (x << i) & mask_i, hi ^= (x >> (l - i)) & mask_i for i < l.
  void accumulate(llvm::Type *ty, llvm::Value *x, llvm::Value *a, llvm::Value *&lo,
                  llvm::Value *&hi);
  llvm::Value *reduce(llvm::Value *lo, llvm::Value *hi);
  llvm::Value *mask_of(llvm::Type *ty, llvm::Value *bit);
  llvm::BasicBlock *block(const llvm::Twine &name) {
    return llvm::BasicBlock::Create(ctx_, name, fn_);
  }
  llvm::Value *size(uint64_t v) { return llvm::ConstantInt::get(size_ty_, v); }

  llvm::LLVMContext &ctx_;
  llvm::Module &mod_;
  const codes::Field &field_;
  const TargetInfo &target_;
  llvm::IRBuilder<> b_;
  llvm::Function *fn_ = nullptr;
  llvm::IntegerType *size_ty_ = nullptr;
  llvm::Value *coeffs_ = nullptr, *rows_ = nullptr, *cols_ = nullptr;
  llvm::Value *in_ = nullptr, *out_ = nullptr;
};

llvm::Value *GenericEmitter::mask_of(llvm::Type *ty, llvm::Value *bit) {
  // bit is an iL 0 or 1; the mask is all ones in every lane where it is 1.
  llvm::Value *m = b_.CreateNeg(bit);
  if (auto *vty = llvm::dyn_cast<llvm::FixedVectorType>(ty))
    return b_.CreateVectorSplat(vty->getNumElements(), m);
  if (ty->getIntegerBitWidth() != field_.bits()) return b_.CreateSExt(m, ty);  // packed
  return m;
}

void GenericEmitter::accumulate(llvm::Type *ty, llvm::Value *x, llvm::Value *a,
                                llvm::Value *&lo, llvm::Value *&hi) {
  const unsigned l = field_.bits();
  llvm::Type *el = a->getType();
  for (unsigned i = 0; i < l; ++i) {
    llvm::Value *bit = b_.CreateAnd(i ? b_.CreateLShr(a, llvm::ConstantInt::get(el, i)) : a,
                                    llvm::ConstantInt::get(el, 1));
    llvm::Value *m = mask_of(ty, bit);
    lo = b_.CreateXor(lo, b_.CreateAnd(i ? lane_shl(b_, x, i, l) : x, m));
    if (i) hi = b_.CreateXor(hi, b_.CreateAnd(lane_lshr(b_, x, l - i, l), m));
  }
}

// Barrett reduction of hi:lo by the field's constant polynomial (clmul-shift's).
llvm::Value *GenericEmitter::reduce(llvm::Value *lo, llvm::Value *hi) {
  return barrett_reduce(b_, field_, lo, hi);
}

void GenericEmitter::emit_body(llvm::Type *ty, llvm::Value *off) {
  const std::string tag = ty->isVectorTy() || ty->getIntegerBitWidth() != field_.bits() ? "v" : "s";
  llvm::PointerType *ptr = llvm::PointerType::getUnqual(ctx_);
  llvm::Type *i8 = b_.getInt8Ty();
  llvm::Type *el = b_.getIntNTy(field_.bits());
  const llvm::Align ptr_align(size_ty_->getBitWidth() / 8), align1(1);
  llvm::Constant *zero_v = llvm::Constant::getNullValue(ty);

  // for r < rows (rows > 0 was checked on entry)
  llvm::BasicBlock *pre = b_.GetInsertBlock();
  llvm::BasicBlock *row = block(tag + ".row");
  llvm::BasicBlock *col = block(tag + ".col");
  llvm::BasicBlock *row_end = block(tag + ".rowend");
  llvm::BasicBlock *exit = block(tag + ".exit");
  b_.CreateBr(row);
  b_.SetInsertPoint(row);
  llvm::PHINode *r = b_.CreatePHI(size_ty_, 2, tag + ".r");
  r->addIncoming(size(0), pre);
  llvm::Value *row_base = b_.CreateMul(r, cols_);
  b_.CreateCondBr(b_.CreateICmpEQ(cols_, size(0)), row_end, col);

  b_.SetInsertPoint(col);
  llvm::PHINode *c = b_.CreatePHI(size_ty_, 2, tag + ".c");
  llvm::PHINode *lo = b_.CreatePHI(ty, 2, tag + ".lo");
  llvm::PHINode *hi = b_.CreatePHI(ty, 2, tag + ".hi");
  c->addIncoming(size(0), row);
  lo->addIncoming(zero_v, row);
  hi->addIncoming(zero_v, row);
  llvm::Value *src = b_.CreateAlignedLoad(ptr, b_.CreateInBoundsGEP(ptr, in_, c), ptr_align);
  llvm::Value *x = b_.CreateAlignedLoad(ty, b_.CreateInBoundsGEP(i8, src, off), align1);
  llvm::Value *a_at = b_.CreateMul(b_.CreateAdd(row_base, c), size(field_.bytes()));
  llvm::Value *a = b_.CreateAlignedLoad(el, b_.CreateInBoundsGEP(i8, coeffs_, a_at), align1);
  llvm::Value *lo_next = lo, *hi_next = hi;
  accumulate(ty, x, a, lo_next, hi_next);
  llvm::Value *c_next = b_.CreateAdd(c, size(1), "", /*HasNUW=*/true);
  llvm::BasicBlock *col_latch = b_.GetInsertBlock();
  c->addIncoming(c_next, col_latch);
  lo->addIncoming(lo_next, col_latch);
  hi->addIncoming(hi_next, col_latch);
  b_.CreateCondBr(b_.CreateICmpULT(c_next, cols_), col, row_end);

  b_.SetInsertPoint(row_end);
  llvm::PHINode *lo_end = b_.CreatePHI(ty, 2);
  llvm::PHINode *hi_end = b_.CreatePHI(ty, 2);
  lo_end->addIncoming(zero_v, row);
  lo_end->addIncoming(lo_next, col_latch);
  hi_end->addIncoming(zero_v, row);
  hi_end->addIncoming(hi_next, col_latch);
  llvm::Value *y = reduce(lo_end, hi_end);
  llvm::Value *dst = b_.CreateAlignedLoad(ptr, b_.CreateInBoundsGEP(ptr, out_, r), ptr_align);
  b_.CreateAlignedStore(y, b_.CreateInBoundsGEP(i8, dst, off), align1);
  llvm::Value *r_next = b_.CreateAdd(r, size(1), "", /*HasNUW=*/true);
  r->addIncoming(r_next, b_.GetInsertBlock());
  b_.CreateCondBr(b_.CreateICmpULT(r_next, rows_), row, exit);
  b_.SetInsertPoint(exit);
}

void GenericEmitter::emit(const std::string &symbol, unsigned vector_bits) {
  size_ty_ = kernel_size_type(ctx_, target_);
  llvm::PointerType *ptr = llvm::PointerType::getUnqual(ctx_);
  llvm::Type *i32 = b_.getInt32Ty();
  auto *fty = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx_),
                                      {ptr, i32, i32, ptr, ptr, size_ty_}, false);
  fn_ = create_kernel_function(mod_, fty, symbol, target_);
  static const char *const kNames[] = {"coeffs", "rows", "cols", "in", "out", "len"};
  for (unsigned i = 0; i < 6; ++i) {
    fn_->getArg(i)->setName(kNames[i]);
    fn_->getArg(i)->addAttr(llvm::Attribute::NoUndef);
  }
  for (unsigned i : {0u, 3u, 4u}) {
    fn_->getArg(i)->addAttr(llvm::Attribute::NoCapture);
    fn_->getArg(i)->addAttr(llvm::Attribute::ReadOnly);
  }

  b_.SetInsertPoint(block("entry"));
  coeffs_ = fn_->getArg(0);
  rows_ = b_.CreateZExtOrTrunc(fn_->getArg(1), size_ty_, "rows.n");
  cols_ = b_.CreateZExtOrTrunc(fn_->getArg(2), size_ty_, "cols.n");
  in_ = fn_->getArg(3);
  out_ = fn_->getArg(4);
  llvm::Value *len = fn_->getArg(5);

  const unsigned l = field_.bits(), sb = field_.bytes();
  const uint64_t vb = vector_bits / 8;  // a power of two: 8, 16, 32, 64, 128
  llvm::Type *el = b_.getIntNTy(l);
  llvm::Type *vec_ty = vector_bits <= 64
                           ? static_cast<llvm::Type *>(b_.getIntNTy(vector_bits))
                           : llvm::FixedVectorType::get(el, vector_bits / l);
  llvm::Value *n = sb == 1 ? len : b_.CreateAnd(len, llvm::ConstantInt::getSigned(size_ty_, -int64_t(sb)), "n");
  llvm::Value *vend = b_.CreateAnd(n, llvm::ConstantInt::getSigned(size_ty_, -int64_t(vb)), "vend");

  llvm::BasicBlock *done = llvm::BasicBlock::Create(ctx_, "done");
  llvm::BasicBlock *start = block("start");
  llvm::BasicBlock *vloop = block(kMainLoopBlock);
  llvm::BasicBlock *tailchk = block("tailchk");
  llvm::BasicBlock *tail = block("tail");
  llvm::BasicBlock *entry = b_.GetInsertBlock();
  b_.CreateCondBr(b_.CreateICmpEQ(rows_, size(0)), done, start);
  b_.SetInsertPoint(start);
  b_.CreateCondBr(b_.CreateICmpNE(vend, size(0)), vloop, tailchk);
  (void)entry;

  b_.SetInsertPoint(vloop);
  llvm::PHINode *voff = b_.CreatePHI(size_ty_, 2, "voff");
  voff->addIncoming(size(0), start);
  emit_body(vec_ty, voff);
  llvm::Value *vnext = b_.CreateAdd(voff, size(vb), "vnext", /*HasNUW=*/true);
  voff->addIncoming(vnext, b_.GetInsertBlock());
  b_.CreateCondBr(b_.CreateICmpULT(vnext, vend), vloop, tailchk);

  b_.SetInsertPoint(tailchk);
  b_.CreateCondBr(b_.CreateICmpULT(vend, n), tail, done);

  b_.SetInsertPoint(tail);
  llvm::PHINode *toff = b_.CreatePHI(size_ty_, 2, "toff");
  toff->addIncoming(vend, tailchk);
  emit_body(el, toff);
  llvm::Value *tnext = b_.CreateAdd(toff, size(sb), "tnext", /*HasNUW=*/true);
  toff->addIncoming(tnext, b_.GetInsertBlock());
  b_.CreateCondBr(b_.CreateICmpULT(tnext, n), tail, done);

  done->insertInto(fn_);
  b_.SetInsertPoint(done);
  b_.CreateRetVoid();
}

}  // namespace

llvm::Expected<std::unique_ptr<llvm::Module>> build_generic_kernel(llvm::LLVMContext &ctx,
                                                                   const codes::Field &field,
                                                                   const TargetInfo &target,
                                                                   const std::string &symbol) {
  const unsigned l = field.bits();
  if (symbol.empty()) return make_error("empty symbol name");
  const unsigned vector_bits = l > target.max_lane_bits ? 64 : target.vector_bits;
  if (vector_bits < l || vector_bits % l != 0 || vector_bits > 4096 ||
      (vector_bits & (vector_bits - 1)) != 0)
    return make_error("vector width " + std::to_string(vector_bits) +
                      " bits does not hold whole " + std::to_string(l) + "-bit symbols");
  if (llvm::Error err = check_symbol_byte_order(l, target, "build_generic_kernel"))
    return std::move(err);
  auto mod = std::make_unique<llvm::Module>(symbol, ctx);
  mod->setTargetTriple(target.triple);
  GenericEmitter(*mod, field, target).emit(symbol, vector_bits);
  if (llvm::Error err = verify_kernel_module(*mod, "build_generic_kernel"))
    return std::move(err);
  return std::move(mod);
}

}  // namespace ecjit::ir
