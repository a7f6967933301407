// build_fft_kernel: a column loop with the rs-fft program unrolled in its body, multiplies as nibble lookups or GFNI affine transforms.
#include "ir_builders/fft_kernel.h"

#include <array>
#include <functional>
#include <optional>
#include <vector>

#include "codes/rs_fft.h"
#include "codes/rs_fft_program.h"
#include "fft/mul_tables.h"
#include "fft/step.h"
#include "ir_builders/fft_column.h"
#include "ir_builders/fft_step_kernel.h"
#include "ir_builders/kernel_abi.h"
#include "ir_builders/kernel_builder.h"
#include "ir_builders/target_features.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/IntrinsicsAArch64.h"
#include "llvm/IR/IntrinsicsX86.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/Error.h"
#include "llvm/TargetParser/Triple.h"

namespace ecjit::ir {
namespace {

namespace fft = codes::fft;

llvm::Error make_error(const std::string &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), "build_fft_kernel: " + msg);
}

// Runs the ops of `p` on `slot` values. A slot that is still null when an op touches it is
// first given by `fetch` (its input column, loaded only now, so that inputs are live only from
// their first use); after op i, `retire(i)` may store the slots that op touched last.
void run_ops(ColumnEmitter &e, const fft::Program &p, std::vector<Planes> &slot,
             const std::function<void(uint32_t)> &fetch, const std::function<void(size_t)> &retire) {
  auto get = [&](uint32_t x) -> Planes & {
    if (!slot[x].lo) fetch(x);
    return slot[x];
  };
  for (size_t i = 0; i < p.ops.size(); ++i) {
    const fft::Op &op = p.ops[i];
    switch (op.kind) {
      case fft::OpKind::kFft: {
        Planes &a = get(op.a);
        Planes &c = get(op.b);
        if (op.log != fft::lch_field(p.gf).modulus) a = e.xor_(a, e.mul(c, e.constant_tables(op.log)));
        c = e.xor_(c, a);
        break;
      }
      case fft::OpKind::kIfft: {
        Planes &a = get(op.a);
        Planes &c = get(op.b);
        c = e.xor_(c, a);
        if (op.log != fft::lch_field(p.gf).modulus) a = e.xor_(a, e.mul(c, e.constant_tables(op.log)));
        break;
      }
      case fft::OpKind::kXor:
        get(op.a) = e.xor_(get(op.a), get(op.b));
        break;
      case fft::OpKind::kCopy:
        slot[op.a] = get(op.b);
        break;
      case fft::OpKind::kZero:
        slot[op.a] = e.zero();
        break;
      case fft::OpKind::kMulLog:
        get(op.a) = e.mul(get(op.a), e.constant_tables(op.log));
        break;
    }
    retire(i);
  }
}

// Index of the last op that touches each slot (-1: none).
std::vector<int64_t> last_touch(const fft::Program &p) {
  std::vector<int64_t> last(p.work_count, -1);
  for (size_t i = 0; i < p.ops.size(); ++i) {
    const fft::Op &op = p.ops[i];
    last[op.a] = int64_t(i);
    if (op.kind == fft::OpKind::kFft || op.kind == fft::OpKind::kIfft || op.kind == fft::OpKind::kXor ||
        op.kind == fft::OpKind::kCopy)
      last[op.b] = int64_t(i);
  }
  return last;
}

}  // namespace

bool fft_kernel_supported(const TargetInfo &target) { return fft_shuffle_for(target) != FftShuffle::kNone; }

const char *fft_multiply_name(const TargetInfo &target) {
  switch (fft_shuffle_for(target)) {
    case FftShuffle::kGfni:
      return "gfni";
    case FftShuffle::kNone:
      return "none";
    default:
      return "split-table";
  }
}

bool fft_multiplies_by_gfni(const TargetInfo &target) { return fft_shuffle_for(target) == FftShuffle::kGfni; }

size_t fft_kernel_slots(const FftKernelDesc &desc) {
  if (desc.steps()) return 1;
  Result<fft::Geometry> g = fft::geometry(desc.k, desc.m, desc.gf);
  if (!g.ok()) return 0;
  if (desc.kind == FftKernelDesc::Kind::kDecode) return g->decode_work;
  if (desc.kind == FftKernelDesc::Kind::kInverse) {
    std::optional<fft::Program> p =
        fft::inverse_decode_program(desc.k, desc.m, desc.sources, desc.targets, fft::Order::kLayers, desc.gf);
    return p ? p->work_count : 0;
  }
  const size_t count = g->rate == fft::Rate::kHigh ? desc.k : desc.m;
  return (count + g->chunk - 1) / g->chunk * g->chunk;
}

llvm::Expected<std::unique_ptr<llvm::Module>> build_fft_kernel(llvm::LLVMContext &ctx,
                                                               const FftKernelDesc &desc,
                                                               const TargetInfo &target) {
  if (desc.steps())
    return build_fft_step_kernel(ctx, desc.symbol, target, desc.gf,
                                 desc.kind == FftKernelDesc::Kind::kSteps ? sched::FftStepKinds::kAll : sched::FftStepKinds::kTransforms);
  if (desc.symbol.empty()) return make_error("empty symbol name");
  const FftShuffle shuffle = fft_shuffle_for(target);
  if (shuffle == FftShuffle::kNone)
    return make_error(fft_unsupported_message(target));
  Result<fft::Geometry> geo = fft::geometry(desc.k, desc.m, desc.gf);
  if (!geo.ok()) return make_error(geo.status().message());
  const fft::Geometry &g = *geo;
  const bool decode = desc.kind == FftKernelDesc::Kind::kDecode;

  // The program on work slots, and which slot each shard pointer reads or writes.
  fft::Program prog;
  prog.gf = desc.gf;
  std::vector<int64_t> in_slot, out_slot;  // per pointer index: its work slot
  if (desc.kind == FftKernelDesc::Kind::kInverse) {
    std::optional<fft::Program> p =
        fft::inverse_decode_program(desc.k, desc.m, desc.sources, desc.targets, fft::Order::kDepthFirst, desc.gf);
    if (!p) return make_error("the encoder's transforms cannot be inverted for these sources and targets");
    prog = std::move(*p);
    // Pointer i reads shard sources[i], pointer t writes shard targets[t].
    for (unsigned s : desc.sources) {
      in_slot.push_back(-1);  // a source the program does not read keeps its pointer, unread
      for (const fft::Binding &bd : prog.inputs)
        if (bd.shard == s) in_slot.back() = bd.slot;
    }
    for (unsigned t : desc.targets)
      for (const fft::Binding &bd : prog.outputs)
        if (bd.shard == t) out_slot.push_back(bd.slot);
    if (out_slot.size() != desc.targets.size()) return make_error("inverse: a target has no output");
  } else if (!decode) {
    Result<fft::Program> p = fft::encode_program(desc.k, desc.m, fft::Order::kDepthFirst, desc.gf);
    if (!p.ok()) return make_error(p.status().message());
    prog = std::move(*p);
    in_slot.assign(desc.k, -1);
    out_slot.assign(desc.m, -1);
    for (const fft::Binding &bd : prog.inputs) in_slot[bd.shard] = bd.slot;
    for (const fft::Binding &bd : prog.outputs) out_slot[bd.shard - desc.k] = bd.slot;
  } else {
    prog.work_count = uint32_t(g.decode_work);
    fft::append_decode_core(prog, g, fft::Order::kDepthFirst);
    // Pointer x is point x; only the points that hold a shard are read and written.
    for (unsigned s = 0; s < desc.k + desc.m; ++s) {
      const size_t x = s < desc.k ? g.original_pos + s : g.recovery_pos + (s - desc.k);
      in_slot.push_back(int64_t(x));
    }
    out_slot = in_slot;
  }

  auto mod = std::make_unique<llvm::Module>(desc.symbol, ctx);
  mod->setTargetTriple(target.triple);
  llvm::IRBuilder<> b(ctx);
  llvm::IntegerType *size_ty = kernel_size_type(ctx, target);
  llvm::PointerType *ptr = llvm::PointerType::getUnqual(ctx);
  std::vector<llvm::Type *> params = {ptr, ptr};
  if (decode) params.push_back(ptr);
  params.push_back(size_ty);
  auto *fty = llvm::FunctionType::get(b.getVoidTy(), params, false);
  llvm::Function *fn = create_kernel_function(*mod, fty, desc.symbol, target);
  const unsigned len_arg = decode ? 3 : 2;
  fn->getArg(0)->setName("in");
  fn->getArg(1)->setName("out");
  if (decode) fn->getArg(2)->setName("tables");
  fn->getArg(len_arg)->setName("len");
  for (unsigned i = 0; i < len_arg; ++i) {
    fn->getArg(i)->addAttr(llvm::Attribute::NoCapture);
    fn->getArg(i)->addAttr(llvm::Attribute::ReadOnly);
  }
  auto size = [&](uint64_t v) { return llvm::ConstantInt::get(size_ty, v); };
  auto block = [&](const char *name) { return llvm::BasicBlock::Create(ctx, name, fn); };
  const llvm::Align ptr_align(size_ty->getBitWidth() / 8);

  llvm::BasicBlock *entry = block("entry");
  b.SetInsertPoint(entry);
  // Pointer tables: in[x] / out[x] for decode are indexed by point, encode by shard.
  auto load_ptr = [&](unsigned arg, uint64_t i, const std::string &name) {
    return b.CreateAlignedLoad(ptr, b.CreateConstInBoundsGEP1_64(ptr, fn->getArg(arg), i), ptr_align, name);
  };
  std::vector<llvm::Value *> in_ptr(in_slot.size()), out_ptr(out_slot.size());
  for (size_t i = 0; i < in_slot.size(); ++i)
    in_ptr[i] = load_ptr(0, decode ? uint64_t(in_slot[i]) : i, "in" + std::to_string(i));
  for (size_t i = 0; i < out_slot.size(); ++i)
    out_ptr[i] = load_ptr(1, decode ? uint64_t(out_slot[i]) : i, "out" + std::to_string(i));
  llvm::Value *len = fn->getArg(len_arg);
  llvm::Value *end = b.CreateAnd(len, size(~uint64_t(kFftColumn - 1)), "end");
  llvm::BasicBlock *body = block(kMainLoopBlock);
  llvm::BasicBlock *done = block("done");
  b.CreateCondBr(b.CreateICmpEQ(end, size(0)), done, body);

  b.SetInsertPoint(body);
  llvm::PHINode *off = b.CreatePHI(size_ty, 2, "off");
  off->addIncoming(size(0), entry);
  ColumnEmitter e(b, shuffle, fft_whole_column_vectors(target), desc.gf);
  auto at = [&](llvm::Value *base) { return b.CreateInBoundsGEP(b.getInt8Ty(), base, off); };
  auto runtime_tables = [&](uint64_t index) {
    return e.load_tables(b.CreateConstInBoundsGEP1_64(b.getInt8Ty(), fn->getArg(2), index * sched::kFftMulTableBytes));
  };

  std::vector<Planes> slot(prog.work_count);
  std::vector<int64_t> reader(prog.work_count, -1);  // pointer index whose column a slot starts as
  for (size_t i = 0; i < in_slot.size(); ++i)
    if (in_slot[i] >= 0) reader[size_t(in_slot[i])] = int64_t(i);
  auto fetch = [&](uint32_t x) {
    if (reader[x] < 0) {  // a point that holds no shard (decode): zero
      slot[x] = e.zero();
      return;
    }
    Planes v = e.load(at(in_ptr[size_t(reader[x])]));
    if (decode) v = e.mul(v, runtime_tables(x));
    slot[x] = v;
  };
  auto store = [&](size_t i) {
    Planes v = slot[size_t(out_slot[i])];
    if (!v.lo) {  // an output no op touched: its input as it is
      fetch(uint32_t(out_slot[i]));
      v = slot[size_t(out_slot[i])];
    }
    llvm::BasicBlock *next = nullptr;
    if (decode) {  // out[x] == nullptr: not wanted
      llvm::BasicBlock *st = block("store");
      next = block("next");
      b.CreateCondBr(b.CreateIsNull(out_ptr[i]), next, st);
      b.SetInsertPoint(st);
      v = e.mul(v, runtime_tables(g.decode_work + uint64_t(out_slot[i])));
    }
    e.store(v, at(out_ptr[i]));
    if (next) {
      b.CreateBr(next);
      b.SetInsertPoint(next);
    }
  };
  // Each output is stored right after the last op that touches its slot (outputs no op
  // touches, after the program), so finished columns do not stay live.
  const std::vector<int64_t> last = last_touch(prog);
  std::vector<std::vector<size_t>> stores_after(prog.ops.size() + 1);
  for (size_t i = 0; i < out_slot.size(); ++i) {
    const int64_t l = last[size_t(out_slot[i])];
    stores_after[l < 0 ? prog.ops.size() : size_t(l)].push_back(i);
  }
  run_ops(e, prog, slot, fetch, [&](size_t i) {
    for (size_t o : stores_after[i]) store(o);
  });
  for (size_t o : stores_after[prog.ops.size()]) store(o);
  llvm::Value *next_off = b.CreateAdd(off, size(kFftColumn), "off.next", true, true);
  off->addIncoming(next_off, b.GetInsertBlock());
  mark_loop_as_final(b.CreateCondBr(b.CreateICmpULT(next_off, end), body, done), true);

  b.SetInsertPoint(done);
  b.CreateRetVoid();
  if (llvm::Error err = verify_kernel_module(*mod, "build_fft_kernel")) return std::move(err);
  return std::move(mod);
}

}  // namespace ecjit::ir
