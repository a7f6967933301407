// kernel_request: parses the code, target, strategy and erasure options shared by ir, asm and stats.
#include "tools/kernel_request.h"

#include "jit/array_planner.h"
#include "jit/xor_planner.h"

#include "jit/decoder_planner.h"
#include "jit/kernel_service.h"

#include <algorithm>
#include <functional>

#include "codes/decode.h"
#include "codes/families.h"
#include "ir_builders/fft_kernel.h"
#include "ir_builders/kernel_builder.h"
#include "ir_builders/lowering.h"
#include "jit/kernel_compiler.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/Error.h"
#include "llvm/Target/TargetMachine.h"

namespace ecjit::tools {

std::optional<KernelTarget> resolve_target(const std::string &text, std::string *error) {
  auto target = jit::TargetSpec::parse(text);
  if (!target) {
    *error = "target '" + text + "': " + error_message(target.takeError());
    return std::nullopt;
  }
  auto info = target->resolve();
  if (!info) {
    *error = "target '" + text + "': " + error_message(info.takeError());
    return std::nullopt;
  }
  return KernelTarget{*target, *info};
}

std::string strategy_list() {
  std::string out;
  for (const std::string &name : ir::known_strategies()) out += (out.empty() ? "" : ", ") + name;
  return out;
}

std::vector<Option> kernel_options() {
  return {
      {"spec", "S", "code, e.g. rs-vand:k=10,m=4,gf=8 (required)"},
      {"target", "T",
       "target: host, host-avx2 (SSE tier), x86_64-v3, aarch64+neon, armv7, hexagon-v68+hvx, "
       "riscv64, ... (default host)"},
      {"strategy", "X", "lowering strategy: " + strategy_list() + " (default auto)"},
      {"opt", "O", "optimization level O0, O1, O2 or O3 (default O3)"},
      {"unroll", "U", "vectors per input in one step of the main loop, 1..8 (default 1; --op shape: the runtime's, 2 with 32 vector registers where the accumulators fit)"},
      {"op", "OP",
       "encode, decode, or shape: the kernel that serves first calls of any erasure set (k "
       "inputs, --outputs R, coefficients as data) (default encode); rs-fft: encode, decode "
       "(the decode core every erasure set shares), steps (the schedule executor) or transform-steps (its kinds for encodes)"},
      {"outputs", "R", "shape only: number of outputs, 1..8 (default min(m, 8))"},
      {"erased", "LIST",
       "decode only: missing shards, e.g. 0,3 or 0-3,7 (default: the first m shards)"},
  };
}

bool parse_opt_level(const std::string &text, jit::OptLevel *out) {
  static const jit::OptLevel kLevels[] = {jit::OptLevel::kO0, jit::OptLevel::kO1,
                                          jit::OptLevel::kO2, jit::OptLevel::kO3};
  if (text.size() != 2 || (text[0] != 'O' && text[0] != 'o') || text[1] < '0' || text[1] > '3')
    return false;
  *out = kLevels[text[1] - '0'];
  return true;
}

const char *opt_level_name(jit::OptLevel level) {
  switch (level) {
    case jit::OptLevel::kO0: return "O0";
    case jit::OptLevel::kO1: return "O1";
    case jit::OptLevel::kO2: return "O2";
    case jit::OptLevel::kO3: return "O3";
  }
  return "O?";
}

std::string error_message(llvm::Error err) { return one_line(llvm::toString(std::move(err))); }

namespace {


std::optional<codes::LinearCode> build(const std::string &spec_text, std::string *error) {
  Result<codes::LinearCode> code = codes::build_code(spec_text);
  if (!code.ok()) {
    *error = "spec '" + spec_text + "': " + code.status().message();
    return std::nullopt;
  }
  return std::move(*code);
}

KernelRequest assemble(codes::LinearCode code, std::string op, std::vector<unsigned> erased,
                       KernelTarget target, ir::Strategy strategy, jit::OptLevel opt,
                       const codes::Matrix &coeffs) {
  const std::string symbol = ir::kernel_symbol(op, code.spec.to_string(), target.spec.to_string());
  const ir::Strategy resolved = jit::resolve_strategy(strategy, target.info, code.field.bits());
  jit::CompileRequest req{ir::KernelDesc{code.field, coeffs, symbol}, target.info, strategy, opt};
  const CodeSpec spec = code.spec;
  return KernelRequest{spec, std::move(code), std::nullopt, std::nullopt, "", std::move(op), std::move(erased),
                       std::move(target.spec), resolved, std::move(req)};
}

// --erased (default: shards 0..m-1) of a code with n shards: the set ascending and the
// present mask. false with a message on a bad index or an empty set.
bool parse_erased(const Args &args, unsigned n, unsigned m, std::vector<unsigned> *erased,
                  std::vector<bool> *present, std::string *error) {
  erased->clear();
  if (args.has("erased")) {
    if (!parse_index_list(args.get("erased"), erased, error)) return false;
  } else {
    for (unsigned s = 0; s < m && s < n; ++s) erased->push_back(s);
  }
  std::sort(erased->begin(), erased->end());
  present->assign(n, true);
  for (unsigned s : *erased) {
    if (s >= n) {
      *error = "--erased: shard " + std::to_string(s) + " does not exist (the code has " + std::to_string(n) +
               " shards, 0.." + std::to_string(n - 1) + ")";
      return false;
    }
    (*present)[s] = false;
  }
  if (erased->empty()) {
    *error = "--erased: no shard is missing; nothing to decode";
    return false;
  }
  return true;
}

// What a bit-matrix and an array code's request share: --strategy auto only, no --outputs or
// --unroll, the target and level, --op encode | decode (--erased: n shards, by default the
// first default_erased), and the xor kernel of the plan `plans` makes (erased empty: the
// encoder's). `codes` names the kind of code in messages. spec, bits and array are left to
// the caller.
std::optional<KernelRequest> xor_kernel_request(
    const Args &args, const std::string &codes, unsigned n, unsigned default_erased,
    const std::function<Result<jit::XorPlan>(const std::vector<bool> &, const std::vector<unsigned> &,
                                             const std::string &)> &plans,
    std::string *error) {
  if (args.get("strategy", "auto") != "auto") {
    *error = "--strategy: " + codes + " have one lowering, xor (leave --strategy at auto)";
    return std::nullopt;
  }
  if (args.has("outputs") || args.has("unroll")) {
    *error = std::string("--") + (args.has("outputs") ? "outputs" : "unroll") + " does not apply to " + codes;
    return std::nullopt;
  }
  std::optional<KernelTarget> target = resolve_target(args.get("target", "host"), error);
  if (!target) return std::nullopt;
  jit::OptLevel opt = jit::OptLevel::kO3;
  if (!parse_opt_level(args.get("opt", "O3"), &opt)) {
    *error = "--opt '" + args.get("opt") + "' is not one of O0, O1, O2, O3";
    return std::nullopt;
  }
  const std::string op = args.get("op", "encode");
  std::vector<unsigned> erased;
  std::vector<bool> present(n, true);
  if (op == "encode") {
    if (args.has("erased")) {
      *error = "--erased applies to --op decode only";
      return std::nullopt;
    }
  } else if (op == "decode") {
    if (!parse_erased(args, n, default_erased, &erased, &present, error)) return std::nullopt;
  } else {
    *error = "--op '" + op + "' is not encode or decode (" + codes + " have no shape kernels)";
    return std::nullopt;
  }
  Result<jit::XorPlan> plan = plans(present, erased, target->spec.to_string());
  if (!plan.ok()) {
    *error = "--op " + op + ": " + plan.status().to_string();
    return std::nullopt;
  }
  jit::CompileRequest req = jit::xor_compile_request(plan->desc, target->info, opt);
  return KernelRequest{CodeSpec(), std::nullopt, std::nullopt, std::nullopt, codes::schedule_name(plan->schedule),
                       plan->op, std::move(erased), std::move(target->spec), ir::Strategy::kAuto,
                       std::move(req)};
}

// --spec of a bit-matrix family: the xor kernel of --op encode | decode.
std::optional<KernelRequest> make_xor_request(const Args &args, const CodeSpec &spec, std::string *error) {
  Result<codes::BitMatrixCode> code = codes::build_bitmatrix_code(spec);
  if (!code.ok()) {
    *error = "spec '" + args.get("spec") + "': " + code.status().message();
    return std::nullopt;
  }
  std::optional<KernelRequest> r = xor_kernel_request(
      args, "bit-matrix codes", code->n(), code->m,
      [&](const std::vector<bool> &present, const std::vector<unsigned> &erased, const std::string &target_name) {
        return erased.empty() ? jit::xor_encoder_plan(*code, target_name)
                              : jit::xor_decoder_plan(*code, present, erased, target_name, /*best=*/true);
      },
      error);
  if (!r) return std::nullopt;
  r->spec = code->spec;
  r->bits = std::move(*code);
  return r;
}

// --spec of an array code (xcode, bpcode): its encoder, or with --op decode the rebuild of the
// --erased disks (default: disk 0), planned as ArrayCodec plans them (best schedule).
std::optional<KernelRequest> make_array_request(const Args &args, const codes::ArraySpec &spec, std::string *error) {
  Result<codes::ArrayLayout> layout = codes::array_layout(spec.family, spec.p);
  if (!layout.ok()) {
    *error = "spec '" + args.get("spec") + "': " + layout.status().message();
    return std::nullopt;
  }
  std::optional<KernelRequest> r = xor_kernel_request(
      args, "array codes", layout->disks, 1,
      [&](const std::vector<bool> &, const std::vector<unsigned> &erased, const std::string &target_name) {
        uint64_t failed = 0;
        for (unsigned d : erased) failed |= uint64_t(1) << d;
        return erased.empty() ? jit::array_encoder_plan(spec, *layout, target_name)
                              : jit::array_rebuild_plan(spec, *layout, failed, target_name, /*best=*/true);
      },
      error);
  if (r) r->array = spec;
  return r;
}

// --spec rs-fft: --op encode (the unrolled encoder), decode (the decode core every erasure
// pattern shares, multipliers as data), steps (the schedule executor every code shares) or transform-steps.
// The lowering follows the target: GFNI affine blocks where it has them, else nibble lookups.
std::optional<KernelRequest> make_fft_request(const Args &args, const CodeSpec &spec, std::string *error) {
  for (const char *o : {"outputs", "unroll", "erased"})
    if (args.has(o)) {
      *error = std::string("--") + o + " does not apply to rs-fft (its decode core serves every erasure "
                                       "pattern, its multipliers as data)";
      return std::nullopt;
    }
  if (args.get("strategy", "auto") != "auto") {
    *error = "--strategy: rs-fft's multiplies follow the target (gfni where it has GFNI, else split-table); "
             "leave --strategy at auto";
    return std::nullopt;
  }
  std::optional<KernelTarget> target = resolve_target(args.get("target", "host"), error);
  if (!target) return std::nullopt;
  if (!ir::fft_kernel_supported(target->info)) {
    *error = "--target " + target->spec.to_string() + ": no rs-fft kernels there (they need GFNI with AVX2 "
             "or a 16-entry byte shuffle: x86 SSSE3 / AVX2, AArch64 NEON)";
    return std::nullopt;
  }
  jit::OptLevel opt = jit::OptLevel::kO3;
  if (!parse_opt_level(args.get("opt", "O3"), &opt)) {
    *error = "--opt '" + args.get("opt") + "' is not one of O0, O1, O2, O3";
    return std::nullopt;
  }
  const std::string op = args.get("op", "encode");
  const codes::fft::Gf gf = codes::fft::gf_of_bits(spec.gf);
  ir::FftKernelDesc d{ir::FftKernelDesc::Kind::kEncode, spec.k, spec.m, "", {}, {}, gf};
  if (op == "decode") d.kind = ir::FftKernelDesc::Kind::kDecode;
  else if (op == "steps") d = {ir::FftKernelDesc::Kind::kSteps, 0, 0, "", {}, {}, gf};
  else if (op == "transform-steps") d = {ir::FftKernelDesc::Kind::kTransformSteps, 0, 0, "", {}, {}, gf};
  else if (op != "encode") {
    *error = "--op '" + op + "' is not encode, decode, steps or transform-steps for rs-fft";
    return std::nullopt;
  }
  const size_t slots = ir::fft_kernel_slots(d);
  if (slots == 0 || slots > jit::kMaxFftKernelSlots) {
    *error = "--op " + op + ": rs-fft k=" + std::to_string(spec.k) + ",m=" + std::to_string(spec.m) + " needs " +
             std::to_string(slots) + " work slots, more than the " + std::to_string(jit::kMaxFftKernelSlots) +
             " an unrolled kernel takes (larger codes run on the step kernel through Jit::codec(); "
             "`ecjit asm --op steps` prints it)";
    return std::nullopt;
  }
  const std::string prefix = ir::fft_symbol_prefix(gf);  // the runtime's names
  const std::string name = op == "steps"             ? prefix + "steps"
                           : op == "transform-steps" ? prefix + "transform_steps"
                                         : prefix + op + "__k" + std::to_string(spec.k) + "_m" + std::to_string(spec.m);
  d.symbol = name;
  jit::CompileRequest req = jit::fft_compile_request(d, target->info, opt);
  return KernelRequest{spec, std::nullopt, std::nullopt, std::nullopt, "", op == "decode" ? "decode_core" : op,
                       {}, std::move(target->spec), ir::Strategy::kAuto, std::move(req)};
}

}  // namespace

std::optional<KernelRequest> make_encode_request(const std::string &spec_text,
                                                 const std::string &target_text,
                                                 jit::OptLevel opt, std::string *error) {
  std::optional<codes::LinearCode> code = build(spec_text, error);
  if (!code) return std::nullopt;
  std::optional<KernelTarget> target = resolve_target(target_text, error);
  if (!target) return std::nullopt;
  const codes::Matrix parity = code->parity;
  return assemble(std::move(*code), "encode", {}, std::move(*target), ir::Strategy::kAuto, opt,
                  parity);
}

std::optional<KernelRequest> make_kernel_request(const Args &args, std::string *error) {
  if (!args.has("spec")) {
    *error = "--spec is required, e.g. --spec rs-vand:k=10,m=4,gf=8";
    return std::nullopt;
  }
  Result<CodeSpec> parsed = CodeSpec::parse(args.get("spec"));
  if (parsed.ok() && codes::codec_kind(*parsed) == codes::CodecKind::kBitmatrix)
    return make_xor_request(args, *parsed, error);
  if (parsed.ok() && codes::codec_kind(*parsed) == codes::CodecKind::kFft)
    return make_fft_request(args, *parsed, error);
  if (!parsed.ok())
    if (Result<codes::ArraySpec> array = codes::parse_array_spec(args.get("spec")); array.ok())
      return make_array_request(args, *array, error);
  std::optional<codes::LinearCode> code = build(args.get("spec"), error);
  if (!code) return std::nullopt;
  std::optional<KernelTarget> target = resolve_target(args.get("target", "host"), error);
  if (!target) return std::nullopt;

  const std::string strategy_text = args.get("strategy", "auto");
  std::optional<ir::Strategy> strategy = ir::parse_strategy(strategy_text);
  if (!strategy) {
    *error = "unknown strategy '" + strategy_text + "'; known: " + strategy_list() +
             " ('auto' picks one per field and target)";
    return std::nullopt;
  }
  jit::OptLevel opt = jit::OptLevel::kO3;
  if (!parse_opt_level(args.get("opt", "O3"), &opt)) {
    *error = "--opt '" + args.get("opt") + "' is not one of O0, O1, O2, O3";
    return std::nullopt;
  }
  uint64_t unroll = 1;
  if (!parse_u64(args.get("unroll", "1"), &unroll) || unroll < 1 || unroll > 8) {
    *error = "--unroll '" + args.get("unroll") + "' is not a number of vectors 1..8";
    return std::nullopt;
  }

  const std::string op = args.get("op", "encode");
  if (op == "encode") {
    if (args.has("outputs")) {
      *error = "--outputs applies to --op shape only";
      return std::nullopt;
    }
    if (args.has("erased")) {
      *error = "--erased applies to --op decode only";
      return std::nullopt;
    }
    const codes::Matrix parity = code->parity;
    KernelRequest r =
        assemble(std::move(*code), "encode", {}, std::move(*target), *strategy, opt, parity);
    r.req.unroll = unsigned(unroll);
    return r;
  }
  if (op == "shape") {
    uint64_t outputs = std::min(code->m, 8u);
    if (args.has("outputs") && (!parse_u64(args.get("outputs"), &outputs) || outputs < 1 || outputs > 8)) {
      *error = "--outputs '" + args.get("outputs") + "' is not a number of outputs 1..8";
      return std::nullopt;
    }
    const std::optional<ir::Strategy> shape = ir::pick_shape_strategy(
        *strategy, jit::resolve_strategy(*strategy, target->info, code->field.bits()), code->field, target->info);
    if (!shape) {
      *error = std::string("no shape kernel for GF(2^") + std::to_string(code->field.bits()) +
               ") with strategy " + strategy_text + " on target " + target->spec.to_string() +
               " (shape kernels: split-table, gfni, clmul-insn)";
      return std::nullopt;
    }
    const std::string name = "shape_" + std::string(ir::strategy_name(*shape)) + "_k" +
                             std::to_string(code->k) + "_r" + std::to_string(outputs);
    KernelRequest r = assemble(std::move(*code), name, {}, std::move(*target), *shape, opt,
                               codes::Matrix(unsigned(outputs), code->k));
    r.req = jit::shape_compile_request(r.code->field, r.code->k, unsigned(outputs), /*accumulate=*/false, *shape,
                                       r.req.target, opt, std::move(r.req.desc.symbol));
    if (args.has("unroll")) r.req.unroll = unsigned(unroll);  // else the runtime's
    return r;
  }
  if (op != "decode") {
    *error = "--op '" + op + "' is not encode, decode or shape";
    return std::nullopt;
  }
  if (args.has("outputs")) {
    *error = "--outputs applies to --op shape only";
    return std::nullopt;
  }
  std::vector<unsigned> erased;
  std::vector<bool> present;
  if (!parse_erased(args, code->n(), code->m, &erased, &present, error)) return std::nullopt;
  // The runtime's decoder for this set: the same planner, name and two-stage choice, built as
  // a default Jit builds it (promoted behind shape kernels where they serve the code).
  const std::string target_name = target->spec.to_string();
  auto default_field = codes::Field::make(code->field.bits());  // as KernelService picks it
  const jit::DecoderUse use =
      default_field.ok() &&
              jit::shape_kernels_serve(
                  *code, ir::pick_shape_strategy(*strategy,
                                                 jit::resolve_strategy(*strategy, target->info, code->field.bits()),
                                                 *default_field, target->info))
          ? jit::DecoderUse::kPromoted
          : jit::DecoderUse::kPerSet;
  Result<jit::DecoderPlan> plan =
      jit::plan_decoder(*code, present, erased, target->info, target_name, *strategy, use, opt);
  if (!plan.ok()) {
    *error = "decode of shards " + join_indices(erased) + ": " + plan.status().to_string();
    return std::nullopt;
  }
  KernelRequest r = assemble(std::move(*code), plan->op, std::move(erased), std::move(*target),
                             *strategy, opt, plan->request.desc.coeffs);
  r.req.desc.pre = plan->request.desc.pre;
  r.req.desc.whole_vectors = plan->request.desc.whole_vectors;
  r.req.codegen = plan->request.codegen;
  r.req.unroll = unsigned(unroll);
  return r;
}

llvm::Expected<std::string> assembly_of(const KernelRequest &r, jit::BuiltModule &built) {
  auto tm = jit::make_target_machine(r.req.target, r.req.opt);
  if (!tm) return tm.takeError();
  (*tm)->Options.MCOptions.AsmVerbose = true;
  return jit::emit(*built.module, **tm, jit::EmitKind::kAssembly, r.req.codegen);
}

llvm::Expected<std::string> kernel_assembly(const KernelRequest &r) {
  auto built = jit::build_module(r.req, true);
  if (!built) return built.takeError();
  return assembly_of(r, *built);
}

std::string describe(const KernelRequest &r) {
  std::string s = "spec " + (r.array ? r.array->to_string() : r.spec.to_string()) + ", op " + r.op;
  s += ", target " + r.target.to_string() + " (" + r.req.target.triple + ", cpu " +
       r.req.target.cpu + ", " + std::to_string(r.req.target.vector_bits) + "-bit vectors)";
  if (r.req.fft_kernel)
    s += std::string(", strategy fft (multiplies by ") + ir::fft_multiply_name(r.req.target) + ")";
  else if (r.req.xor_kernel)
    s += ", strategy xor (schedule " + r.schedule + ", " + std::to_string(r.req.xor_kernel->program.xors()) +
         " XORs per " + (r.array ? "stripe)" : "block position)");
  else
    s += ", strategy " + std::string(ir::strategy_name(r.resolved_strategy));
  s += ", " + std::string(opt_level_name(r.req.opt));
  if (r.req.unroll > 1) s += ", unroll " + std::to_string(r.req.unroll);
  return s;
}

}  // namespace ecjit::tools
