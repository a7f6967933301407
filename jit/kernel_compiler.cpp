// KernelCompiler: ir_builders -> PassBuilder pipeline -> text / code / LLJIT, in one place.
#include "jit/kernel_compiler.h"

#include "jit/kernel_self_test.h"

#include "codes/gf.h"
#include "ir_builders/clmul_insn.h"
#include "ir_builders/gfni_affine.h"
#include "ir_builders/lowering.h"
#include "ir_builders/split_table.h"

#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Triple.h"

namespace ecjit::jit {

ir::Strategy resolve_strategy(ir::Strategy requested, const ir::TargetInfo &target,
                              unsigned field_bits) {
  if (requested != ir::Strategy::kAuto) return requested;
  // gfni where the CPU has it, for GF(2^8..32) (RS(10,4), 64 KiB, AVX-512 + GFNI: 2x
  // split-table on GF(2^8) and GF(2^16), 1.4x clmul-shift on GF(2^32); even with
  // clmul-shift on GF(2^64)); then split-table where it beats clmul-shift: GF(2^8) with a
  // byte shuffle (SSSE3 / AVX2 / AVX-512BW / NEON), GF(2^16) with AVX-512BW
  // (ir::split_table_preferred); clmul-shift, portable to every target, everywhere else.
  auto field = codes::Field::make(field_bits);
  if (!field.ok()) return ir::Strategy::kClmulShift;
  if (field_bits <= 32 && ir::gfni_supported(*field, target)) return ir::Strategy::kGfni;
  // clmul-insn with 512-bit VPCLMULQDQ for GF(2^64) (2x gfni and clmul-shift on the Xeon)
  // and GF(2^32) without GFNI - where the multiply is cheap next to shifts and XORs (at
  // most kClmulInsnMaxCost XORs in the CPU's scheduling model: Ice Lake, Tiger Lake,
  // Sapphire and Granite Rapids 2; unknown, 0, keeps it). On Zen 4 and Zen 5 it costs 4
  // (one VPCLMULQDQ zmm per 2 cycles), and on Zen 4 clmul-mixed runs 2-3x faster than
  // clmul-insn (RS(10,4), 64 KiB: GF(2^64) 13.5 vs 6.9 GB/s, GF(2^32) 14.0 vs 4.3). Not
  // with 256 bits: on Zen 3 clmul-shift is 2.7x clmul-insn on GF(2^32) and 1.5x on GF(2^64).
  // There (x86, 128 / 256 bits) clmul-mixed: rs-vand's short encoder constants by shifts
  // (the same kernel as clmul-shift), dense ones (Cauchy matrices, decoders' inverses) by
  // the instruction; RS(10,4) reconstruct of 4 data shards 2x clmul-shift on GF(2^64),
  // 1.1x on GF(2^32).
  constexpr double kClmulInsnMaxCost = 3;
  if (ir::clmul_insn_supported(*field, target)) {
    if (target.vector_bits >= 512 && target.clmul_cost_xors <= kClmulInsnMaxCost)
      return ir::Strategy::kClmulInsn;
    if (llvm::Triple(target.triple).isX86()) return ir::Strategy::kClmulMixed;
  }
  if (ir::split_table_preferred(*field, target)) return ir::Strategy::kSplitTable;
  return ir::Strategy::kClmulShift;
}

CompileRequest xor_compile_request(const ir::XorKernelDesc &kernel, const ir::TargetInfo &target,
                                   OptLevel opt) {
  CompileRequest req{ir::KernelDesc{*codes::Field::make(8), codes::Matrix(), kernel.symbol}, target,
                     ir::Strategy::kAuto, opt};
  req.xor_kernel = std::make_shared<const ir::XorKernelDesc>(kernel);
  return req;
}

CompileRequest shape_compile_request(const codes::Field &field, unsigned inputs, unsigned outputs,
                                     bool accumulate, ir::Strategy strategy, const ir::TargetInfo &target,
                                     OptLevel opt, std::string symbol) {
  CompileRequest req{ir::KernelDesc{field, codes::Matrix(outputs, inputs), std::move(symbol)}, target, strategy,
                     opt};
  req.desc.runtime_coeffs = true;
  if (accumulate) req.desc.output = ir::OutputMode::kAccumulate;
  req.unroll = ir::shape_unroll(strategy, field, target, outputs);
  return req;
}

CompileRequest fft_compile_request(const ir::FftKernelDesc &kernel, const ir::TargetInfo &target,
                                   OptLevel opt) {
  CompileRequest req{ir::KernelDesc{*codes::Field::make(8), codes::Matrix(), kernel.symbol}, target,
                     ir::Strategy::kAuto, opt};
  req.fft_kernel = std::make_shared<const ir::FftKernelDesc>(kernel);
  return req;
}

namespace {

// The code-shape options a request's kernel is built with (build_module) and checked under
// (kernel_contract in jit_kernel's self-test of a loaded object).
ir::BuildOptions build_options(const CompileRequest &req) {
  ir::BuildOptions options;
  options.unroll = req.unroll;
  return options;
}

}  // namespace

llvm::Expected<BuiltModule> build_module(const CompileRequest &req, bool optimize_it) {
  if (llvm::Error e = init_llvm_targets()) return std::move(e);
  BuiltModule out;
  out.ctx = std::make_unique<llvm::LLVMContext>();
  const ir::Strategy strategy = resolve_strategy(req.strategy, req.target, req.desc.field.bits());
  const ir::BuildOptions options = build_options(req);
  auto module = req.xor_kernel   ? ir::build_xor_kernel(*out.ctx, *req.xor_kernel, req.target)
                : req.fft_kernel ? ir::build_fft_kernel(*out.ctx, *req.fft_kernel, req.target)
                                 : ir::build_kernel(*out.ctx, req.desc, req.target, strategy, options);
  if (!module) return module.takeError();
  out.module = std::move(*module);
  if (optimize_it) {
    auto tm = thread_target_machine(req.target, req.opt);
    if (!tm) return tm.takeError();
    if (llvm::Error e = optimize(*out.module, **tm, req.opt)) return std::move(e);
  }
  return out;
}

llvm::Expected<std::string> kernel_ir(const CompileRequest &req, bool optimize_it) {
  auto built = build_module(req, optimize_it);
  if (!built) return built.takeError();
  std::string text;
  llvm::raw_string_ostream os(text);
  built->module->print(os, nullptr);
  os.flush();
  return text;
}

llvm::Expected<std::string> kernel_code(const CompileRequest &req, EmitKind kind) {
  auto built = build_module(req, true);
  if (!built) return built.takeError();
  auto tm = thread_target_machine(req.target, req.opt);
  if (!tm) return tm.takeError();
  return emit(*built->module, **tm, kind, req.codegen);
}

namespace {

// The key of a bit-matrix kernel: target, opt level, block shape, packet maps, program.
std::string xor_cache_key(const CompileRequest &req) {
  const ir::XorKernelDesc &d = *req.xor_kernel;
  std::string k = DiskCache::build_identity();
  k += "|" + req.target.triple + "|" + req.target.cpu + "|" + req.target.features + "|v" +
       std::to_string(req.target.vector_bits) + "|xor|O" + std::to_string(int(req.opt)) + "|w" +
       std::to_string(d.w) + "|p" + std::to_string(d.packet) + (d.accumulate ? "|acc" : "") + "|in";
  for (const codes::PacketRef &r : d.inputs) k += std::to_string(r.shard) + "." + std::to_string(r.index) + ",";
  k += "|out";
  for (const codes::PacketRef &r : d.outputs) k += std::to_string(r.shard) + "." + std::to_string(r.index) + ",";
  k += "|ops";
  for (const codes::XorProgram::Op &op : d.program.ops) k += std::to_string(op.a) + "^" + std::to_string(op.b) + ",";
  k += "|res";
  for (uint32_t v : d.program.outputs) k += std::to_string(v) + ",";
  return k + "|" + d.symbol;
}

std::string list(const std::vector<unsigned> &v) {
  std::string s;
  for (unsigned x : v) s += std::to_string(x) + ".";
  return s;
}

// The key of an rs-fft kernel: target, opt level, kind, field, k and m (the code is fixed by
// them), and an inverse's sources and targets.
std::string fft_cache_key(const CompileRequest &req) {
  const ir::FftKernelDesc &d = *req.fft_kernel;
  return DiskCache::build_identity() + "|" + req.target.triple + "|" + req.target.cpu + "|" +
         req.target.features + "|v" + std::to_string(req.target.vector_bits) + "|fft|O" +
         std::to_string(int(req.opt)) + (d.kind == ir::FftKernelDesc::Kind::kDecode  ? "|dec"
          : d.kind == ir::FftKernelDesc::Kind::kSteps ? "|steps"
          : d.kind == ir::FftKernelDesc::Kind::kTransformSteps ? "|tsteps"
          : d.kind == ir::FftKernelDesc::Kind::kInverse ? "|inv"
                                                       : "|enc") + "|gf" + std::to_string(int(d.gf)) + "|k" +
         std::to_string(d.k) + "|m" + std::to_string(d.m) + "|" + d.symbol +
         (d.kind == ir::FftKernelDesc::Kind::kInverse ? "|s" + list(d.sources) + "|t" + list(d.targets) : "");
}

}  // namespace

std::string kernel_cache_key(const CompileRequest &req) {
  if (req.xor_kernel) return xor_cache_key(req);
  if (req.fft_kernel) return fft_cache_key(req);
  std::string k = DiskCache::build_identity();
  const ir::Strategy strategy = resolve_strategy(req.strategy, req.target, req.desc.field.bits());
  k += "|" + req.target.triple + "|" + req.target.cpu + "|" + req.target.features + "|v" +
       std::to_string(req.target.vector_bits) + "|r" + std::to_string(req.target.vector_regs) +
       "|lane" + std::to_string(req.target.max_lane_bits) + "|" + ir::strategy_name(strategy) +
       "|O" + std::to_string(int(req.opt)) + "|u" + std::to_string(req.unroll) + "|gf" +
       std::to_string(req.desc.field.bits()) + "/" + std::to_string(req.desc.field.poly()) + "|" +
       std::to_string(req.desc.coeffs.rows) + "x" +
       std::to_string(req.desc.coeffs.cols) + "|";
  for (uint64_t c : req.desc.coeffs.a) k += std::to_string(c) + ",";
  if (req.desc.has_pre()) {  // a first stage changes the map coeffs is applied to
    k += "|pre" + std::to_string(req.desc.pre.rows) + "x" + std::to_string(req.desc.pre.cols) + "|";
    for (uint64_t c : req.desc.pre.a) k += std::to_string(c) + ",";
  }
  k += "|mode" + std::to_string(int(req.desc.output)) + "." + std::to_string(int(req.desc.input));
  if (req.desc.streaming_stores) k += "|nt";
  if (req.desc.runtime_coeffs) k += "|shape";  // coefficients as data (entries unused)
  if (req.desc.whole_vectors) k += "|wv";  // no path for shards shorter than a vector
  if (req.codegen == Codegen::kNoSchedulers) k += "|nosched";
  k += "|" + req.desc.symbol;
  return k;
}

llvm::Expected<std::unique_ptr<CompiledKernel>> jit_kernel(JitSession &session,
                                                           const CompileRequest &req,
                                                           double *compile_seconds,
                                                           const DiskCache *disk, bool *from_disk) {
  const auto t0 = std::chrono::steady_clock::now();
  auto done = [&](llvm::Expected<std::unique_ptr<CompiledKernel>> k) {
    if (k) (*k)->describe({resolve_strategy(req.strategy, req.target, req.desc.field.bits()), req.unroll, "",
                                 DecisionSource::kStatic, {}});
    if (compile_seconds)
      *compile_seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return k;
  };
  if (from_disk) *from_disk = false;
  if (!disk) {  // the same object the disk cache would hold: codegen at req.opt, not the session's
    auto object = kernel_code(req, EmitKind::kObject);
    if (!object) return object.takeError();
    return done(session.add_object(llvm::MemoryBuffer::getMemBufferCopy(*object, req.symbol()), req.symbol()));
  }
  const std::string key = kernel_cache_key(req);
  if (auto cached = disk->load(key)) {
    auto k = session.add_object(std::move(cached), req.symbol());
    // A stored object serves only once it computes the request's map on every path its
    // code has, called within its contract (a streaming-store kernel on aligned whole lines):
    // an entry with the right key and checksum may still hold another kernel (forged by a
    // writer of the directory, see DiskCache). A mismatch is a rebuild, never a call.
    const ir::Strategy strategy = resolve_strategy(req.strategy, req.target, req.desc.field.bits());
    const bool matches = k && (req.xor_kernel   ? xor_kernel_matches_desc(**k, *req.xor_kernel)
                               : req.fft_kernel ? fft_kernel_matches_desc(**k, *req.fft_kernel)
                                                : kernel_matches_desc(**k, req.desc, strategy,
                                                                      ir::kernel_contract(req.desc, req.target,
                                                                                          build_options(req))));
    if (matches) {
      if (from_disk) *from_disk = true;
      return done(std::move(k));
    }
    if (!k) llvm::consumeError(k.takeError());  // unusable entry: rebuild and overwrite it
  }
  auto object = kernel_code(req, EmitKind::kObject);
  if (!object) return object.takeError();
  auto buffer = llvm::MemoryBuffer::getMemBufferCopy(*object, req.symbol());
  disk->store(key, *buffer);
  return done(session.add_object(std::move(buffer), req.symbol()));
}

}  // namespace ecjit::jit
