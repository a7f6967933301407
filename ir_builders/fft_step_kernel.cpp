// build_fft_step_kernel: a step loop with a tile loop per step kind; rs-fft encode / decode schedules as its data.
#include "ir_builders/fft_step_kernel.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include "codes/rs_fft.h"
#include "codes/rs_fft_program.h"
#include "fft/mul_tables.h"
#include "fft/order.h"
#include "fft/step.h"
#include "ir_builders/fft_column.h"
#include "ir_builders/kernel_abi.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/Error.h"

namespace ecjit::ir {

// The step instruction set this file lowers.
using namespace sched;

namespace {

namespace fft = codes::fft;

llvm::Error make_error(const std::string &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), "build_fft_step_kernel: " + msg);
}

// The struct offsets of an XOR step's source fields (fft_xor_sources), in 32-bit words, for
// the kernel's loads.
constexpr unsigned kXorSourceWord[kFftMaxXorSources] = {
    offsetof(FftStep, b) / 4,  offsetof(FftStep, dist) / 4,   offsetof(FftStep, b2) / 4,
    offsetof(FftStep, table) / 4, offsetof(FftStep, table0) / 4, offsetof(FftStep, table1) / 4};

}  // namespace

bool fft_radix8_steps(const TargetInfo &target) { return fft_whole_column_vectors(target); }

llvm::Expected<std::unique_ptr<llvm::Module>> build_fft_step_kernel(llvm::LLVMContext &ctx,
                                                                    const std::string &symbol,
                                                                    const TargetInfo &target, fft::Gf gf,
                                                                    FftStepKinds kinds) {
  if (symbol.empty()) return make_error("empty symbol name");
  const FftShuffle shuffle = fft_shuffle_for(target);
  if (shuffle == FftShuffle::kNone)
    return make_error(fft_unsupported_message(target));
  auto mod = std::make_unique<llvm::Module>(symbol, ctx);
  mod->setTargetTriple(target.triple);
  llvm::IRBuilder<> b(ctx);
  llvm::IntegerType *size_ty = kernel_size_type(ctx, target);
  llvm::PointerType *ptr = llvm::PointerType::getUnqual(ctx);
  auto *fty = llvm::FunctionType::get(b.getVoidTy(), {ptr, ptr, size_ty, ptr, size_ty}, false);
  llvm::Function *fn = create_kernel_function(*mod, fty, symbol, target);
  static const char *const kNames[] = {"ptr", "steps", "count", "tables", "bytes"};
  for (unsigned i = 0; i < 5; ++i) fn->getArg(i)->setName(kNames[i]);
  for (unsigned i : {0u, 1u, 3u}) {
    fn->getArg(i)->addAttr(llvm::Attribute::NoCapture);
    fn->getArg(i)->addAttr(llvm::Attribute::ReadOnly);
  }
  llvm::Value *steps = fn->getArg(1), *count = fn->getArg(2), *tables = fn->getArg(3), *bytes = fn->getArg(4);
  auto size = [&](uint64_t v) { return llvm::ConstantInt::get(size_ty, v); };
  auto block = [&](const std::string &name) { return llvm::BasicBlock::Create(ctx, name, fn); };
  const llvm::Align ptr_align(size_ty->getBitWidth() / 8);

  llvm::BasicBlock *entry = block("entry");
  llvm::BasicBlock *head = block("step");
  llvm::BasicBlock *next = block("step.next");
  llvm::BasicBlock *next2 = block("step.next2");  // after an IFFT step run together with the next record's FFT
  llvm::BasicBlock *done = block("done");
  b.SetInsertPoint(entry);
  b.CreateCondBr(b.CreateOr(b.CreateICmpEQ(count, size(0)), b.CreateICmpULT(bytes, size(kFftColumn))), done, head);

  b.SetInsertPoint(head);
  llvm::PHINode *i = b.CreatePHI(size_ty, 3, "i");
  i->addIncoming(size(0), entry);
  llvm::Value *rec = b.CreateInBoundsGEP(b.getInt8Ty(), steps, b.CreateMul(i, size(sizeof(FftStep))));
  // Field idx (in 32-bit words) of this step's record, or (record 1) of the next one.
  auto field = [&](unsigned idx, const char *name, unsigned record = 0) {
    llvm::Value *v = b.CreateAlignedLoad(
        b.getInt32Ty(), b.CreateConstInBoundsGEP1_64(b.getInt8Ty(), rec, record * sizeof(FftStep) + 4 * idx),
        llvm::Align(4), name);
    return b.CreateZExt(v, size_ty);
  };
  llvm::Value *kind = b.CreateTrunc(field(0, "kind"), b.getInt32Ty());
  auto pointer = [&](llvm::Value *index) {
    return b.CreateAlignedLoad(ptr, b.CreateInBoundsGEP(ptr, fn->getArg(0), index), ptr_align);
  };
  llvm::Value *pa = pointer(field(1, "a"));
  llvm::Value *pb = pointer(field(2, "b"));
  llvm::Value *tab = b.CreateInBoundsGEP(b.getInt8Ty(), tables, b.CreateMul(field(3, "t"), size(kFftMulTableBytes)));
  llvm::SwitchInst *sw = b.CreateSwitch(kind, next, 24);
  ColumnEmitter e(b, shuffle, fft_whole_column_vectors(target), gf);

  // An encode's copies read their shards tile after tile: the same column of the next tile,
  // B + bytes, is asked for ahead (Zen 5: encode +3%; a prefetch past a shard's end does not
  // fault). Not in the three-source steps: a matrix decode's (their sources' next tiles, three
  // per column) lost 30%. A decode's first multiplies ask for a later step's shard instead
  // (kFftStepMul's dist).
  auto prefetch_next_tile = [&](llvm::Value *B) {
    b.CreateIntrinsic(llvm::Intrinsic::prefetch, {ptr},
                      {b.CreateGEP(b.getInt8Ty(), B, bytes), b.getInt32(0), b.getInt32(1), b.getInt32(1)});
  };

  // One kind: `setup` in its own block (pointers, multiplier tables), then a loop over the
  // tile's columns running `body` at byte offset off (straight-line code: no blocks of its own).
  // The loop over the tile's columns from the block `from` (the insertion point, left
  // unterminated), running `body` at byte offset off.
  auto emit_loop = [&](const std::string &name, const std::function<void(llvm::Value *)> &body,
                       llvm::BasicBlock *exit = nullptr) {
    llvm::BasicBlock *from = b.GetInsertBlock();
    llvm::BasicBlock *loop = block(name);
    b.CreateBr(loop);
    b.SetInsertPoint(loop);
    llvm::PHINode *off = b.CreatePHI(size_ty, 2, "off");
    off->addIncoming(size(0), from);
    body(off);  // may end in a block of its own (the latch)
    llvm::Value *noff = b.CreateAdd(off, size(kFftColumn), "off.next", true, true);
    off->addIncoming(noff, b.GetInsertBlock());
    mark_loop_as_final(
        b.CreateCondBr(b.CreateICmpULT(b.CreateAdd(noff, size(kFftColumn - 1)), bytes), loop, exit ? exit : next));
  };
  auto emit_kind = [&](uint32_t k, const std::string &name, const std::function<void()> &setup,
                       const std::function<void(llvm::Value *)> &body) {
    llvm::BasicBlock *pre = block(name + ".pre");
    sw->addCase(b.getInt32(k), pre);
    b.SetInsertPoint(pre);
    setup();
    if (body) emit_loop(name, body);  // else setup made its loops
  };
  auto at = [&](llvm::Value *p, llvm::Value *off) { return b.CreateInBoundsGEP(b.getInt8Ty(), p, off); };
  auto tables_at = [&](unsigned f) {
    return e.load_tables(b.CreateInBoundsGEP(b.getInt8Ty(), tables, b.CreateMul(field(f, "t"), size(kFftMulTableBytes))));
  };

  // The two-pointer kinds: A = ptr[a], B = ptr[b], the multiplier's tables (if any) loaded once.
  auto emit_case = [&](FftStepKind k, const char *name, bool uses_tables,
                       const std::function<void(llvm::Value *, llvm::Value *, const std::array<llvm::Value *, 8> &)> &body) {
    std::array<llvm::Value *, 8> t{};
    emit_kind(
        k, name, [&] { if (uses_tables) t = e.load_tables(tab); },
        [&](llvm::Value *off) { body(at(pa, off), at(pb, off), t); });
  };
  emit_case(kFftStepFft, "fft", true, [&](llvm::Value *A, llvm::Value *B, const std::array<llvm::Value *, 8> &t) {
    Planes x = e.load(A), y = e.load(B);
    x = e.xor_(x, e.mul(y, t));
    e.store(x, A);
    e.store(e.xor_(y, x), B);
  });
  emit_case(kFftStepIfft, "ifft", true, [&](llvm::Value *A, llvm::Value *B, const std::array<llvm::Value *, 8> &t) {
    Planes x = e.load(A), y = e.load(B);
    y = e.xor_(y, x);
    e.store(y, B);
    e.store(e.xor_(x, e.mul(y, t)), A);
  });
  emit_case(kFftStepXor, "xor", false, [&](llvm::Value *A, llvm::Value *B, const std::array<llvm::Value *, 8> &) {
    e.store(e.xor_(e.load(A), e.load(B)), A);
  });
  emit_case(kFftStepCopy, "copy", false, [&](llvm::Value *A, llvm::Value *B, const std::array<llvm::Value *, 8> &) {
    prefetch_next_tile(B);
    e.store(e.load(B), A);
  });
  emit_case(kFftStepZero, "zero", false, [&](llvm::Value *A, llvm::Value *, const std::array<llvm::Value *, 8> &) {
    e.store(e.zero(), A);
  });
  emit_case(kFftStepMulAdd, "muladd", true, [&](llvm::Value *A, llvm::Value *B, const std::array<llvm::Value *, 8> &t) {
    e.store(e.xor_(e.load(A), e.mul(e.load(B), t)), A);
  });
  {
    // dist = 1 + p: the same column of ptr[p] asked for (prefetcht0) - the shard a later step
    // reads (prefetch_shard_reads); dist 0 asks for the column this step loads (one
    // load-port uop, no traffic, no second loop).
    std::array<llvm::Value *, 8> t{};
    llvm::Value *soon = nullptr;
    emit_kind(
        kFftStepMul, "mul",
        [&] {
          t = e.load_tables(tab);
          llvm::Value *d = field(4, "prefetch");
          soon = pointer(b.CreateSelect(b.CreateICmpNE(d, size(0)), b.CreateSub(d, size(1)), field(2, "b")));
        },
        [&](llvm::Value *off) {
          b.CreateIntrinsic(llvm::Intrinsic::prefetch, {ptr}, {at(soon, off), b.getInt32(0), b.getInt32(3), b.getInt32(1)});
          e.store(e.mul(e.load(at(pb, off)), t), at(pa, off));
        });
  }

  // Two or three layers on four or eight slots: pointers a + j dist, the step's multipliers,
  // one column of each slot at a time through fft_step_butterflies. Two loops: in place, and
  // (b != 0) loading from ptr[b + j dist], whose sixteen pointers the in-place loop would
  // otherwise carry too (x86's GPRs: a spill per column). An IFFT step whose next record is
  // the FFT step of the same slots (pair_transforms puts an encode's two top passes so) runs
  // both in one pass where the target holds both steps' multipliers in registers (whole
  // columns: 8 slots and 14 multipliers of 32 zmm), then skips that record.
  const bool pairs = fft_whole_column_vectors(target);
  const unsigned words[7] = {offsetof(FftStep, table) / 4,  offsetof(FftStep, table0) / 4,
                             offsetof(FftStep, table1) / 4, offsetof(FftStep, table2) / 4,
                             offsetof(FftStep, table3) / 4, offsetof(FftStep, table4) / 4,
                             offsetof(FftStep, table5) / 4};
  // Butterflies in place on x: A ^= B T; B ^= A (FFT) or B ^= A; A ^= B T (IFFT).
  auto run_butterflies = [&](std::array<Planes, 8> &x, const FftStepButterfly *order, unsigned n, bool forward,
                             const std::array<std::array<llvm::Value *, 8>, 7> &tt) {
    for (unsigned i = 0; i < n; ++i) {
      Planes &u = x[order[i].u], &v = x[order[i].v];
      const std::array<llvm::Value *, 8> &m = tt[order[i].multiplier];
      if (forward) {
        u = e.xor_(u, e.mul(v, m));
        v = e.xor_(v, u);
      } else {
        v = e.xor_(v, u);
        u = e.xor_(u, e.mul(v, m));
      }
    }
  };
  auto emit_layers = [&](FftStepKind k, const char *name) {
    FftStepButterfly bfs[12], fwd_bfs[12];
    const unsigned n = fft_step_butterflies(k, bfs), slots = fft_step_slots(k), multipliers = slots - 1;
    const bool fwd = k == kFftStepFft4 || k == kFftStepFft8;
    const FftStepKind partner = k == kFftStepIfft4 ? kFftStepFft4 : kFftStepFft8;  // for an IFFT kind
    fft_step_butterflies(partner, fwd_bfs);
    const bool may_pair = pairs && !fwd;
    std::array<llvm::Value *, 8> p, q, r;  // stored to; loaded from (p in place); XORed into
    constexpr unsigned words_into = offsetof(FftStep, into) / 4;
    std::array<std::array<llvm::Value *, 8>, 7> t, t2;  // t2: the paired FFT step's
    llvm::Value *a = nullptr, *dist = nullptr;
    auto run = [&](std::array<Planes, 8> &x, const FftStepButterfly *order, bool forward,
                   const std::array<std::array<llvm::Value *, 8>, 7> &tt) {
      run_butterflies(x, order, n, forward, tt);
    };
    auto body_of = [&](bool paired) {
      return [&, paired](llvm::Value *off) {
        std::array<llvm::Value *, 8> col;
        std::array<Planes, 8> x;
        for (unsigned j = 0; j < slots; ++j) {
          col[j] = at(p[j], off);
          x[j] = e.load(at(q[j], off));
        }
        run(x, bfs, fwd, t);
        if (paired) run(x, fwd_bfs, true, t2);
        for (unsigned j = 0; j < slots; ++j) e.store(x[j], col[j]);
      };
    };
    // The loops of one source (q set): the step alone, and where it may pair, a check of the
    // next record and the pair's loop.
    auto loops = [&](const std::string &tag) {
      // into != 0: the results XORed into ptr[into - 1 + j dist].
      llvm::BasicBlock *acc = block(name + tag + ".into.pre");
      llvm::BasicBlock *store = block(name + tag + ".store");
      llvm::Value *into = field(words_into, "into");
      b.CreateCondBr(b.CreateICmpEQ(into, size(0)), store, acc);
      b.SetInsertPoint(acc);
      llvm::Value *first = b.CreateSub(into, size(1));
      for (unsigned j = 0; j < slots; ++j) r[j] = pointer(b.CreateAdd(first, b.CreateMul(dist, size(j))));
      emit_loop(name + tag + ".into", [&](llvm::Value *off) {
        std::array<Planes, 8> x;
        for (unsigned j = 0; j < slots; ++j) x[j] = e.load(at(q[j], off));
        run(x, bfs, fwd, t);
        for (unsigned j = 0; j < slots; ++j) {
          llvm::Value *col = at(r[j], off);
          e.store(e.xor_(e.load(col), x[j]), col);
        }
      });
      b.SetInsertPoint(store);
      if (!may_pair) return emit_loop(name + tag, body_of(false));
      llvm::BasicBlock *peek = block(name + tag + ".peek");
      llvm::BasicBlock *alone = block(name + tag + ".alone");
      llvm::BasicBlock *both = block(name + tag + ".pair.pre");
      b.CreateCondBr(b.CreateICmpULT(b.CreateAdd(i, size(1)), count), peek, alone);
      b.SetInsertPoint(peek);
      llvm::Value *same = b.CreateAnd(
          b.CreateAnd(b.CreateICmpEQ(field(0, "kind2", 1), size(partner)), b.CreateICmpEQ(field(1, "a2", 1), a)),
          b.CreateAnd(b.CreateICmpEQ(field(4, "dist2", 1), dist), b.CreateICmpEQ(field(2, "b2", 1), size(0))));
      b.CreateCondBr(same, both, alone);
      b.SetInsertPoint(both);
      for (unsigned j = 0; j < multipliers; ++j)
        t2[j] = e.load_tables(b.CreateInBoundsGEP(
            b.getInt8Ty(), tables, b.CreateMul(field(words[j], "t2", 1), size(kFftMulTableBytes))));
      emit_loop(name + tag + ".pair", body_of(true), next2);
      b.SetInsertPoint(alone);
      emit_loop(name + tag, body_of(false));
    };
    emit_kind(k, name, [&] {
      a = field(1, "a"), dist = field(4, "dist");
      for (unsigned j = 0; j < slots; ++j) p[j] = pointer(b.CreateAdd(a, b.CreateMul(dist, size(j))));
      for (unsigned j = 0; j < multipliers; ++j) t[j] = tables_at(words[j]);
      llvm::Value *from = field(2, "b");
      llvm::BasicBlock *sourced = block(std::string(name) + ".from.pre");
      llvm::BasicBlock *in_place = block(std::string(name) + ".inplace.pre");
      b.CreateCondBr(b.CreateICmpEQ(from, size(0)), in_place, sourced);
      b.SetInsertPoint(sourced);
      for (unsigned j = 0; j < slots; ++j) q[j] = pointer(b.CreateAdd(from, b.CreateMul(dist, size(j))));
      loops(".from");
      b.SetInsertPoint(in_place);
      q = p;
      loops("");
    }, nullptr);
  };
  // Derivative-fused FFT steps: the slots' derivative (in-group sums in registers, then the
  // other groups' columns, a loop over the groups gathered in the step's set-up), then the
  // FFT butterflies; in place. Where every group lies at one distance from the step's slots
  // in memory (a decode core's scratch tiles: FftEngine keeps them evenly spaced), a group
  // costs one offset and its columns' loads per column; else its eight pointers too.
  llvm::Value *groups_ptrs = nullptr;  // the step function's stack array of groups
  // A Top step's own part (kFftStepTop4D / Top8D's formula) of its slots' columns x: y.
  auto top_local = [&](const std::array<Planes, 8> &x, std::array<Planes, 8> &y, unsigned slots,
                       const std::array<std::array<llvm::Value *, 8>, 7> &t) {
    // e(u, v) = (u + v) T taking (u, v) to (u + e, v + e); T = t[0].
    auto move_across = [&](Planes &u, Planes &v) {
      const Planes d = e.mul(e.xor_(u, v), t[0]);
      u = e.xor_(u, d);
      v = e.xor_(v, d);
    };
    if (slots == 4) {
      std::array<Planes, 4> q = {x[0], x[1], x[2], x[3]};
      move_across(q[0], q[1]);
      move_across(q[2], q[3]);
      for (unsigned j = 0; j < 4; ++j) y[j] = e.xor_(e.xor_(x[j], x[j ^ 1]), q[j ^ 2]);
      return;
    }
    // The lowest layer's butterflies, (X0,X1) by T2 .. (X6,X7) by T5: kFftStepFft8's last four.
    FftStepButterfly bfs[12];
    fft_step_butterflies(kFftStepFft8, bfs);
    const FftStepButterfly *lowest = bfs + 8;
    std::array<Planes, 8> tt = x, q, z;
    run_butterflies(tt, lowest, 4, false, t);
    q = tt;
    for (unsigned j : {0u, 1u, 4u, 5u}) move_across(q[j], q[j + 2]);
    for (unsigned j = 0; j < 8; ++j) z[j] = e.xor_(tt[j ^ 2], q[j ^ 4]);
    run_butterflies(z, lowest, 4, true, t);
    for (unsigned j = 0; j < 8; ++j) y[j] = e.xor_(x[j ^ 1], z[j]);
  };
  auto emit_derivative_layers = [&](FftStepKind k, const char *name) {
    FftStepButterfly bfs[12];
    const unsigned n = fft_step_butterflies(k, bfs), slots = fft_step_slots(k), multipliers = slots - 1;
    const bool top = k == kFftStepTop4D || k == kFftStepTop8D;
    std::array<llvm::Value *, 8> p;
    std::array<std::array<llvm::Value *, 8>, 7> t;
    llvm::Value *groups = nullptr;  // the count gathered
    const std::string tag(name);
    auto address = [&](llvm::Value *q) { return b.CreatePtrToInt(q, size_ty); };
    // One column: load, derivative, butterflies, store. even: the groups by offset.
    // written: the slots stored (a Top step's b: every slot, or one half).
    auto body_of = [&](bool even, unsigned written) {
      return [&, even, written](llvm::Value *off) {
        auto keeps = [&](unsigned j) { return (written >> j & 1) != 0; };
        std::array<Planes, 8> x, y;
        for (unsigned j = 0; j < slots; ++j) x[j] = e.load(at(p[j], off));
        if (top) {
          top_local(x, y, slots, t);
        } else {
          for (unsigned j = 0; j < slots; ++j) {
            y[j] = x[j];
            for (unsigned c = 1; c < slots; c <<= 1)
              if (!(j & c)) y[j] = e.xor_(y[j], x[j | c]);
          }
        }
        llvm::BasicBlock *head_block = b.GetInsertBlock();
        llvm::BasicBlock *loop = block(tag + (even ? ".even" : ".ptrs") + ".xor");
        llvm::BasicBlock *after = block(tag + (even ? ".even" : ".ptrs") + ".bf");
        b.CreateCondBr(b.CreateICmpEQ(groups, size(0)), after, loop);
        b.SetInsertPoint(loop);
        llvm::PHINode *gi = b.CreatePHI(size_ty, 2, "g");
        gi->addIncoming(size(0), head_block);
        std::array<std::array<llvm::PHINode *, 2>, 8> acc{};
        std::array<Planes, 8> sum, upd;
        for (unsigned j = 0; j < slots; ++j) {
          if (!keeps(j)) continue;
          acc[j][0] = b.CreatePHI(y[j].lo->getType(), 2);
          acc[j][0]->addIncoming(y[j].lo, head_block);
          sum[j].lo = acc[j][0];
          if (y[j].hi) {
            acc[j][1] = b.CreatePHI(y[j].hi->getType(), 2);
            acc[j][1]->addIncoming(y[j].hi, head_block);
            sum[j].hi = acc[j][1];
          }
        }
        llvm::Value *row = b.CreateMul(gi, size(9));  // a group's record: its offset, then 8 pointers
        llvm::Value *delta = even ? b.CreateAlignedLoad(size_ty, b.CreateInBoundsGEP(size_ty, groups_ptrs, row),
                                                        ptr_align)
                                  : nullptr;
        for (unsigned j = 0; j < slots; ++j) {
          if (!keeps(j)) continue;
          llvm::Value *src =
              even ? b.CreateGEP(b.getInt8Ty(), p[j], b.CreateAdd(off, delta))  // another slot's tile: not inbounds
                   : at(b.CreateAlignedLoad(ptr, b.CreateInBoundsGEP(ptr, groups_ptrs, b.CreateAdd(row, size(1 + j))),
                                            ptr_align),
                        off);
          upd[j] = e.xor_(sum[j], e.load(src));
        }
        llvm::Value *gnext = b.CreateAdd(gi, size(1));
        gi->addIncoming(gnext, loop);
        for (unsigned j = 0; j < slots; ++j) {
          if (!keeps(j)) continue;
          acc[j][0]->addIncoming(upd[j].lo, loop);
          if (acc[j][1]) acc[j][1]->addIncoming(upd[j].hi, loop);
        }
        b.CreateCondBr(b.CreateICmpULT(gnext, groups), loop, after);
        b.SetInsertPoint(after);
        for (unsigned j = 0; j < slots; ++j)
          if (keeps(j)) x[j] = e.merge(y[j], head_block, upd[j], loop);
        if (!top) run_butterflies(x, bfs, n, true, t);
        for (unsigned j = 0; j < slots; ++j)
          if (keeps(j)) e.store(x[j], at(p[j], off));
      };
    };
    // Its own function, called from the step's case: its stack array and registers stay out of
    // the other kinds' loops (in the one function they cost an encode ~12%: Zen 5, GF(2^8)
    // 128:128). The builder's context (fn, rec, tables, bytes, next) points into it meanwhile.
    llvm::BasicBlock *call = block(tag + ".call");
    sw->addCase(b.getInt32(k), call);
    llvm::Function *step_fn = create_kernel_function(
        *mod, llvm::FunctionType::get(b.getVoidTy(), {ptr, ptr, ptr, size_ty}, false), symbol + "." + tag, target);
    step_fn->setLinkage(llvm::GlobalValue::InternalLinkage);
    step_fn->addFnAttr(llvm::Attribute::NoInline);
    b.SetInsertPoint(call);
    b.CreateCall(step_fn, {fn->getArg(0), rec, tables, bytes});
    b.CreateBr(next);
    llvm::Function *const kernel_fn = fn;
    llvm::Value *const kernel_rec = rec, *const kernel_tables = tables, *const kernel_bytes = bytes;
    llvm::BasicBlock *const kernel_next = next;
    fn = step_fn;
    rec = step_fn->getArg(1);
    tables = step_fn->getArg(2);
    bytes = step_fn->getArg(3);
    llvm::BasicBlock *body_entry = block("entry");
    next = block("done");
    b.SetInsertPoint(next);
    b.CreateRetVoid();
    b.SetInsertPoint(body_entry);
    // The other groups, gathered once per step: per group (fft_derivative_groups) the offset of
    // its first slot from the step's, then its eight pointers.
    groups_ptrs = b.CreateAlloca(size_ty, size(9 * kFftMaxDerivativeGroups), "groups");
    {
      llvm::Value *a = field(1, "a"), *dist = field(4, "dist");
      for (unsigned j = 0; j < slots; ++j) p[j] = pointer(b.CreateAdd(a, b.CreateMul(dist, size(j))));
      for (unsigned j = 0; j < multipliers; ++j)
        if (!top || j == 0 || j >= 3) t[j] = tables_at(words[j]);  // Top: table, table2 .. table5
      // for (bit = 1; bit < dist; bit <<= 1) if (!(a & bit)) gather group a + bit: its eight
      // pointers, the offset of its first from p[0], and whether the others share it.
      llvm::BasicBlock *from = b.GetInsertBlock();
      llvm::BasicBlock *scan = block(tag + ".groups");
      llvm::BasicBlock *add = block(tag + ".groups.add");
      llvm::BasicBlock *step = block(tag + ".groups.next");
      llvm::BasicBlock *ready = block(tag + ".groups.done");
      b.CreateCondBr(b.CreateICmpULT(size(1), dist), scan, ready);
      b.SetInsertPoint(scan);
      llvm::PHINode *bit = b.CreatePHI(size_ty, 2, "bit");
      llvm::PHINode *got = b.CreatePHI(size_ty, 2, "got");
      llvm::PHINode *even = b.CreatePHI(b.getInt1Ty(), 2, "even");
      bit->addIncoming(size(1), from);
      got->addIncoming(size(0), from);
      even->addIncoming(b.getTrue(), from);
      b.CreateCondBr(b.CreateICmpEQ(b.CreateAnd(a, bit), size(0)), add, step);
      b.SetInsertPoint(add);
      llvm::Value *g = b.CreateAdd(a, bit), *row = b.CreateMul(got, size(9)), *d0 = nullptr, *same = even;
      for (unsigned j = 0; j < slots; ++j) {
        llvm::Value *q = pointer(b.CreateAdd(g, b.CreateMul(dist, size(j))));
        b.CreateAlignedStore(q, b.CreateInBoundsGEP(ptr, groups_ptrs, b.CreateAdd(row, size(1 + j))), ptr_align);
        llvm::Value *d = b.CreateSub(address(q), address(p[j]));
        if (j == 0) d0 = d;
        else same = b.CreateAnd(same, b.CreateICmpEQ(d, d0));
      }
      b.CreateAlignedStore(d0, b.CreateInBoundsGEP(size_ty, groups_ptrs, row), ptr_align);
      llvm::Value *got_add = b.CreateAdd(got, size(1));
      b.CreateBr(step);
      b.SetInsertPoint(step);
      llvm::PHINode *got_next = b.CreatePHI(size_ty, 2, "got.next");
      llvm::PHINode *even_next = b.CreatePHI(b.getInt1Ty(), 2, "even.next");
      got_next->addIncoming(got, scan);
      got_next->addIncoming(got_add, add);
      even_next->addIncoming(even, scan);
      even_next->addIncoming(same, add);
      llvm::Value *bit_next = b.CreateShl(bit, size(1));
      bit->addIncoming(bit_next, step);
      got->addIncoming(got_next, step);
      even->addIncoming(even_next, step);
      b.CreateCondBr(b.CreateICmpULT(bit_next, dist), scan, ready);
      b.SetInsertPoint(ready);
      llvm::PHINode *total = b.CreatePHI(size_ty, 2, "groups.count");
      total->addIncoming(size(0), from);
      total->addIncoming(got_next, step);
      llvm::PHINode *all_even = b.CreatePHI(b.getInt1Ty(), 2, "groups.even");
      all_even->addIncoming(b.getTrue(), from);
      all_even->addIncoming(even_next, step);
      groups = total;
      auto emit_loops = [&](const std::string &name, unsigned written) {
        llvm::BasicBlock *by_offset = block(name + ".even.pre");
        llvm::BasicBlock *by_pointer = block(name + ".ptrs.pre");
        b.CreateCondBr(all_even, by_offset, by_pointer);
        b.SetInsertPoint(by_offset);
        emit_loop(name + ".even", body_of(true, written));
        b.SetInsertPoint(by_pointer);
        emit_loop(name + ".ptrs", body_of(false, written));
      };
      const unsigned every = (1u << slots) - 1, low = (1u << slots / 2) - 1;
      if (!top) {
        emit_loops(tag, every);
      } else {  // b: every slot written, the low half (1) or the high half (2)
        llvm::BasicBlock *whole = block(tag + ".whole"), *lows = block(tag + ".low"), *highs = block(tag + ".high");
        llvm::SwitchInst *half = b.CreateSwitch(b.CreateTrunc(field(2, "half"), b.getInt32Ty()), whole, 2);
        half->addCase(b.getInt32(1), lows);
        half->addCase(b.getInt32(2), highs);
        b.SetInsertPoint(whole);
        emit_loops(tag + ".whole", every);
        b.SetInsertPoint(lows);
        emit_loops(tag + ".low", low);
        b.SetInsertPoint(highs);
        emit_loops(tag + ".high", every & ~low);
      }
    }
    fn = kernel_fn;
    rec = kernel_rec;
    tables = kernel_tables;
    bytes = kernel_bytes;
    next = kernel_next;
  };
  const bool core = kinds == FftStepKinds::kAll;  // the decode core's kinds (fft_step_kind_is_core_only)
  if (core) {
    emit_derivative_layers(kFftStepFft4D, "fft4d");
    emit_derivative_layers(kFftStepFft8D, "fft8d");
    emit_derivative_layers(kFftStepTop4D, "top4d");
    emit_derivative_layers(kFftStepTop8D, "top8d");
  }
  emit_layers(kFftStepFft4, "fft4");
  emit_layers(kFftStepIfft4, "ifft4");
  emit_layers(kFftStepFft8, "fft8");
  emit_layers(kFftStepIfft8, "ifft8");

  // A decode's ends in its first IFFT and last FFT steps (kFftStepIfft4In .. Fft8Out): per
  // slot a multiplier from the table array at ptr[b2] (loaded once per step) and a shard
  // pointer, null where the point is read nowhere (In: the slot is 0) or restored nowhere
  // (Out: nothing stored). The null tests are per column, each the same for the whole step
  // (predicted after its first columns), so an absent point costs no multiply: half the
  // points of a decode are read, a quarter to a half restored.
  auto emit_end_layers = [&](FftStepKind k, const char *name) {
    FftStepButterfly bfs[12];
    const unsigned n = fft_step_butterflies(k, bfs), slots = fft_step_slots(k), multipliers = slots - 1;
    const bool in = fft_step_inverse(k);
    const std::string tag(name);
    std::array<llvm::Value *, 8> p, q, absent, soon;
    std::array<std::array<llvm::Value *, 8>, 8> mul;
    std::array<std::array<llvm::Value *, 8>, 7> t;
    // One column; `ahead`: an In step's prefetches of the shards soon[j] (into != 0).
    auto body_of = [&](bool ahead) {
      return [&, ahead](llvm::Value *off) {
        std::array<Planes, 8> x;
        for (unsigned j = 0; j < slots && ahead; ++j)
          b.CreateIntrinsic(llvm::Intrinsic::prefetch, {ptr},
                            {b.CreateGEP(b.getInt8Ty(), soon[j], off), b.getInt32(0), b.getInt32(3), b.getInt32(1)});
        for (unsigned j = 0; j < slots; ++j) {
          if (!in) {
            x[j] = e.load(at(p[j], off));
            continue;
          }
          llvm::BasicBlock *from = b.GetInsertBlock();
          llvm::BasicBlock *read = block(tag + ".read"), *join = block(tag + ".slot");
          b.CreateCondBr(absent[j], join, read);
          b.SetInsertPoint(read);
          const Planes y = e.mul(e.load(at(q[j], off)), mul[j]);
          llvm::BasicBlock *read_end = b.GetInsertBlock();
          b.CreateBr(join);
          b.SetInsertPoint(join);
          x[j] = e.merge(e.zero(), from, y, read_end);
        }
        run_butterflies(x, bfs, n, !in, t);
        for (unsigned j = 0; j < slots; ++j) {
          if (in) {
            e.store(x[j], at(p[j], off));
            continue;
          }
          llvm::BasicBlock *write = block(tag + ".write"), *join = block(tag + ".slot");
          b.CreateCondBr(absent[j], join, write);
          b.SetInsertPoint(write);
          e.store(e.mul(x[j], mul[j]), at(q[j], off));
          b.CreateBr(join);
          b.SetInsertPoint(join);
        }
      };
    };
    emit_kind(k, name, [&] {
      llvm::Value *a = field(1, "a"), *dist = field(4, "dist"), *shards = field(2, "b");
      llvm::Value *array = pointer(field(offsetof(FftStep, b2) / 4, "tables.of.slots"));
      for (unsigned j = 0; j < slots; ++j) {
        llvm::Value *x = b.CreateAdd(a, b.CreateMul(dist, size(j)));
        p[j] = pointer(x);
        q[j] = pointer(b.CreateAdd(shards, b.CreateMul(dist, size(j))));
        absent[j] = b.CreateICmpEQ(q[j], llvm::ConstantPointerNull::get(ptr));
        mul[j] = e.load_tables(b.CreateInBoundsGEP(b.getInt8Ty(), array, b.CreateMul(x, size(kFftMulTableBytes))));
      }
      for (unsigned j = 0; j < multipliers; ++j) t[j] = tables_at(words[j]);
      if (!in) return emit_loop(tag, body_of(false));
      // into = 1 + p: the same columns of ptr[p + j dist] asked for (prefetch_shard_reads).
      llvm::Value *into = field(offsetof(FftStep, into) / 4, "prefetch");
      llvm::BasicBlock *ask = block(tag + ".ahead.pre"), *plain = block(tag + ".plain.pre");
      b.CreateCondBr(b.CreateICmpEQ(into, size(0)), plain, ask);
      b.SetInsertPoint(ask);
      for (unsigned j = 0; j < slots; ++j) soon[j] = pointer(b.CreateAdd(b.CreateSub(into, size(1)), b.CreateMul(dist, size(j))));
      emit_loop(tag + ".ahead", body_of(true));
      b.SetInsertPoint(plain);
      emit_loop(tag, body_of(false));
    }, nullptr);
  };
  if (core) {
    emit_end_layers(kFftStepIfft4In, "ifft4in");
    emit_end_layers(kFftStepIfft8In, "ifft8in");
    emit_end_layers(kFftStepFft4Out, "fft4out");
    emit_end_layers(kFftStepFft8Out, "fft8out");
  }

  // Three sources into A: pointers b, dist, b2 with tables t, t0, t1; A read once (add) or not.
  auto emit_three = [&](FftStepKind k, const char *name) {
    std::array<llvm::Value *, 3> src;
    std::array<std::array<llvm::Value *, 8>, 3> t;
    emit_kind(k, name, [&] {
      src = {pb, pointer(field(4, "b1")), pointer(field(7, "b2"))};
      t = {tables_at(3), tables_at(5), tables_at(6)};
    }, [&](llvm::Value *off) {
      llvm::Value *A = at(pa, off);
      Planes x[3];
      for (unsigned j = 0; j < 3; ++j) x[j] = e.load(at(src[j], off));
      const Planes sum = e.mul_sum(x, t.data(), 3);
      e.store(k == kFftStepMulAdd3 ? e.xor_(e.load(A), sum) : sum, A);
    });
  };
  emit_three(kFftStepMul3, "mul3");
  emit_three(kFftStepMulAdd3, "muladd3");

  // 2 .. 6 sources XORed into A (fft_xor_sources' fields).
  auto emit_xors = [&](unsigned sources) {
    std::vector<llvm::Value *> src;
    emit_kind(kFftStepXor2 + (sources - 2), "xor" + std::to_string(sources), [&] {
      for (unsigned j = 0; j < sources; ++j) src.push_back(pointer(field(kXorSourceWord[j], "src")));
    }, [&](llvm::Value *off) {
      llvm::Value *A = at(pa, off);
      Planes sum = e.load(A);
      for (llvm::Value *p : src) sum = e.xor_(sum, e.load(at(p, off)));
      e.store(sum, A);
    });
  };
  for (unsigned sources = 2; sources <= kFftMaxXorSources; ++sources) emit_xors(sources);

  b.SetInsertPoint(next);
  llvm::Value *inext = b.CreateAdd(i, size(1), "i.next", true, true);
  i->addIncoming(inext, next);
  mark_loop_as_final(b.CreateCondBr(b.CreateICmpULT(inext, count), head, done));
  b.SetInsertPoint(next2);
  llvm::Value *inext2 = b.CreateAdd(i, size(2), "i.next2", true, true);
  i->addIncoming(inext2, next2);
  mark_loop_as_final(b.CreateCondBr(b.CreateICmpULT(inext2, count), head, done));
  b.SetInsertPoint(done);
  b.CreateRetVoid();
  if (llvm::Error err = verify_kernel_module(*mod, "build_fft_step_kernel")) return std::move(err);
  return std::move(mod);
}

}  // namespace ecjit::ir
