// `ecjit aot`: writes an object (or assembly / IR) plus a C99 header for a target without LLVM.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <set>

#include "codes/coeff_layout.h"
#include "codes/decode.h"
#include "codes/families.h"
#include "codes/rs_fft_program.h"
#include "ir_builders/fft_kernel.h"
#include "ir_builders/fft_step_kernel.h"
#include "jit/aot_writer.h"
#include "llvm/Support/FileSystem.h"
#include "jit/decoder_planner.h"
#include "jit/xor_planner.h"
#include "ir_builders/lowering.h"
#include "tools/aot_array.h"
#include "tools/aot_header.h"
#include "tools/commands.h"
#include "tools/kernel_request.h"

namespace ecjit::tools {
namespace {

CommandDef aot_def() {
  CommandDef d;
  d.name = "aot";
  d.synopsis =
      "--spec S --target T [--strategy X] [--opt O] [--op encode|shape|steps] [--decoders \"0,3;1,2\"] "
      "[--generic] [--inputs L --outputs L --accumulate M] -o FILE [--header FILE] [--emit obj|asm|ll] "
      "[--runtime-c DIR] [--prefix P]";
  d.summary = "write an object file and a C header with the kernels for a target (ahead of time)";
  d.details =
      "Compiles, with the JIT's own build path, the encoder of the code, one specialised decoder\n"
      "per erasure set in --decoders (sets separated by ';', shards by ','; each decoder rebuilds\n"
      "the erased shards from the first k present ones) and with --generic a kernel that takes its\n"
      "coefficient matrix at run time, links them into one module and writes it for --target as an\n"
      "ELF object (--emit obj, default), assembly (asm) or LLVM IR (ll). --header writes a C99 header\n"
      "declaring every symbol with the kernel ABI, the code's parameters, its parity matrix and the\n"
      "decoder table. --runtime-c DIR also writes DIR/<prefix>_runtime.c: GF arithmetic, matrix\n"
      "inversion and the decode matrix of any erasure set for the generic kernel (C99, no libc).\n"
      "--op shape writes shape kernels instead: one per (inputs, outputs, accumulate) of --inputs x\n"
      "--outputs x --accumulate over the field of --spec, each taking its coefficients at run time\n"
      "(prepared in the strategy's layout; the header has the table of kernels). ecjit's drop-in\n"
      "libisal.so.2 is built with such objects so its first calls never wait for the JIT.\n"
      "--op steps (rs-fft specs) writes the field's two step kernels for the target, the executors\n"
      "of rs-fft step programs that serve every (k, m); libecjit is built with them so a new rs-fft\n"
      "codec serves at once. Their ABI is internal to the ecjit build that writes them.\n"
      "An array code (--spec xcode:p=7, bpcode:p=7[,element=B]) gives its encoder and, per set in\n"
      "--decoders, the rebuild of those failed disks (in place on the disk array) and a degraded\n"
      "read of each lost disk into a buffer; the header's <prefix>_read_range reads any byte range.\n"
      "Output is deterministic. Targets: x86_64[-v2|-v3|-v4], aarch64, armv7, hexagon-v66/v68/v73\n"
      "(+hvx for 128-byte HVX), riscv64, riscv64-v, with +feature/-feature changes; see\n"
      "docs/targets.md. '-o' is accepted for --output.";
  d.options = {
      {"spec", "S", "code, e.g. rs-vand:k=10,m=4,gf=8 (required)"},
      {"target", "T", "target, e.g. aarch64, armv7, hexagon-v68+hvx, riscv64, x86_64-v3 (required)"},
      {"strategy", "X", "lowering strategy: " + strategy_list() + " (default auto)"},
      {"opt", "O", "optimization level O0, O1, O2 or O3 (default O3)"},
      {"op", "OP", "encode (default: the encoder plus --decoders), shape (shape kernels only) or steps (rs-fft step kernels)"},
      {"inputs", "LIST", "--op shape: input counts, e.g. 1,2,4,8 (default k of --spec)"},
      {"outputs", "LIST", "--op shape: output counts 1..8, e.g. 1,2,3,4 (default 1..min(m, 8))"},
      {"accumulate", "M", "--op shape: no (out = C x in), yes (out ^= C x in) or both (default)"},
      {"decoders", "SETS", "erasure sets to specialise decoders for, e.g. \"0,3;1,2,11\" (array codes: failed disks)"},
      {"generic", "", "also emit the generic kernel (coefficient matrix as an argument)"},
      {"output", "FILE", "output file (also -o FILE; '-' = stdout for asm and ll)"},
      {"header", "FILE", "write the C99 header to FILE"},
      {"emit", "KIND", "obj (default), asm or ll"},
      {"runtime-c", "DIR", "write <prefix>_runtime.c into DIR"},
      {"prefix", "P", "C identifier prefix of the header's names (default ecjit_<spec>)"},
      {"sizes", "", "print the code size of every kernel (obj only)"},
  };
  return d;
}

bool write_file(const std::string &path, const std::string &bytes) {
  if (path == "-") {
    return std::fwrite(bytes.data(), 1, bytes.size(), stdout) == bytes.size();
  }
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) return false;
  f.write(bytes.data(), std::streamsize(bytes.size()));
  return bool(f);
}

// "0,3;1,2" -> {{0,3},{1,2}}, each sorted. Empty items are errors.
bool parse_decoder_sets(const std::string &text, std::vector<std::vector<unsigned>> *out,
                        std::string *error) {
  size_t start = 0;
  while (start <= text.size()) {
    const size_t semi = std::min(text.find(';', start), text.size());
    std::vector<unsigned> set;
    if (!parse_index_list(text.substr(start, semi - start), &set, error)) {
      *error = "--decoders: " + *error;
      return false;
    }
    std::sort(set.begin(), set.end());
    if (std::find(out->begin(), out->end(), set) != out->end()) {
      *error = "--decoders: erasure set {" + join_indices(set) + "} listed twice";
      return false;
    }
    out->push_back(set);
    start = semi + 1;
  }
  return true;
}

std::string known_bases_text() {
  std::string s;
  for (const std::string &b : jit::TargetSpec::known_bases()) s += (s.empty() ? "" : ", ") + b;
  return s;
}

// "1,2,4" of --inputs / --outputs into `out`, each within [lo, hi].
bool parse_counts(const Args &args, const char *name, unsigned lo, unsigned hi,
                  std::vector<unsigned> *out, std::string *error) {
  if (!parse_index_list(args.get(name), out, error)) {
    *error = std::string("--") + name + ": " + *error;
    return false;
  }
  for (unsigned v : *out)
    if (v < lo || v > hi) {
      *error = std::string("--") + name + ": " + std::to_string(v) + " is not in " + std::to_string(lo) +
               ".." + std::to_string(hi);
      return false;
    }
  return true;
}

// --op shape: the requests of every (inputs, outputs, accumulate) and the header text. `base`
// is the shape request of `ecjit ir --op shape` (strategy, target, opt, field).
bool shape_kernels(const Args &args, const KernelRequest &base, const std::string &prefix,
                   const std::string &target, const std::string &target_details,
                   jit::AotRequest *request, std::string *header, std::string *error) {
  const codes::LinearCode &code = *base.code;
  std::vector<unsigned> inputs{code.k}, outputs;
  for (unsigned r = 1; r <= std::min(code.m, 8u); ++r) outputs.push_back(r);
  if (args.has("inputs") && !parse_counts(args, "inputs", 1, 255, &inputs, error)) return false;
  if (args.has("outputs") && !parse_counts(args, "outputs", 1, 8, &outputs, error)) return false;
  const std::string acc = args.get("accumulate", "both");
  if (acc != "no" && acc != "yes" && acc != "both") {
    *error = "--accumulate '" + acc + "' is not no, yes or both";
    return false;
  }
  const ir::Strategy strategy = base.req.strategy;
  const codes::CoeffLayout layout = ir::runtime_layout(strategy);
  AotShapeContents contents{code.field, prefix, target, target_details, ir::strategy_name(strategy), "",
                            unsigned(codes::coeff_bytes(layout, code.field)), opt_level_name(base.req.opt), {}};
  switch (layout) {
    case codes::CoeffLayout::kNibbleTables:
      contents.layout_text = code.field.bits() == 8
                                 ? "16-byte nibble tables (c * v then c * (v << 4), v < 16: ISA-L's "
                                   "ec_init_tables layout)"
                                 : "8 16-byte nibble tables, table 2n + h = byte h of c * (v << 4n), "
                                   "v < 16, stored in the order 0, 4, 1, 5, 2, 6, 3, 7";
      break;
    case codes::CoeffLayout::kGfniMatrices:
      contents.layout_text = "GFNI 8x8 bit-matrices (VGF2P8AFFINEQB operands; GF(2^8): the matrix twice)";
      break;
    case codes::CoeffLayout::kClmulConstant:
      contents.layout_text = "the coefficient as a little-endian qword";
      break;
  }
  request->kernels.clear();
  for (const bool accumulate : {false, true}) {
    if ((acc == "no" && accumulate) || (acc == "yes" && !accumulate)) continue;
    for (unsigned in : inputs)
      for (unsigned out : outputs) {
        jit::CompileRequest req = jit::shape_compile_request(
            code.field, in, out, accumulate, strategy, base.req.target, base.req.opt,
            prefix + "_k" + std::to_string(in) + "_r" + std::to_string(out) + (accumulate ? "_acc" : ""));
        contents.shapes.push_back({in, out, accumulate, req.desc.symbol});
        request->kernels.push_back(std::move(req));
      }
  }
  *header = aot_shape_header_text(contents);
  return true;
}

std::string prefix_message(const std::string &prefix) {
  return "--prefix '" + prefix + "' is not a C identifier (letters, digits, '_'; starting with a letter; at most 64 "
         "characters)";
}

// Emits `request` as `kind` and writes it with the header (and the runtime C file when asked
// for): every file or none. `what` names the code in an error. Returns the exit status.
int write_outputs(const CommandDef &def, const Args &args, const jit::AotRequest &request, jit::AotEmit kind,
                  const std::string &header_text, const std::string &runtime_c_name,
                  const std::string &runtime_c_text, const std::string &what) {
  // Assembly keeps LLVM's comments (IR block names such as %vloop) for reading and llvm-mca.
  llvm::Expected<std::string> out = jit::aot_emit(request, kind, /*verbose_asm=*/true);
  if (!out) return runtime_error(def.name, what + ": " + error_message(out.takeError()));
  // Every file or none: each is written to a temporary beside it and renamed only once all
  // are written (a failed header write no longer leaves an object that has no header).
  std::vector<std::pair<std::string, std::string>> files = {{args.get("output"), *out}};
  if (args.has("header")) files.push_back({args.get("header"), header_text});
  if (args.has("runtime-c")) files.push_back({args.get("runtime-c") + "/" + runtime_c_name, runtime_c_text});
  for (size_t i = 0; i < files.size(); ++i)
    for (size_t j = i + 1; j < files.size(); ++j)
      if (files[i].first == files[j].first ||
          (files[i].first != "-" && llvm::sys::fs::equivalent(files[i].first, files[j].first)))
        return usage_error(def.name, "'" + files[i].first + "' is given for two outputs (" +
                                         (i == 0 ? "-o" : "--header") + " and " +
                                         (j == 1 ? "--header" : "--runtime-c") +
                                         "); each needs its own file");
  std::vector<std::string> temps;
  auto discard = [&] {
    for (const std::string &t : temps) std::remove(t.c_str());
  };
  for (const auto &[path, bytes] : files) {
    if (path == "-") continue;  // stdout, written after the files
    const std::string tmp = path + ".tmp-ecjit-" + std::to_string(getpid());
    temps.push_back(tmp);
    if (!write_file(tmp, bytes)) {
      discard();
      return runtime_error(def.name, "cannot write '" + path + "'");
    }
  }
  for (size_t i = 0, t = 0; i < files.size(); ++i) {
    if (files[i].first == "-") continue;
    if (std::rename(temps[t].c_str(), files[i].first.c_str()) != 0) {
      discard();
      return runtime_error(def.name, "cannot write '" + files[i].first + "'");
    }
    temps[t++].clear();
  }
  if (files[0].first == "-" && !write_file("-", files[0].second))
    return runtime_error(def.name, "cannot write to stdout");
  if (args.has("sizes")) {
    auto sizes = jit::function_sizes(*out);
    if (!sizes) return runtime_error(def.name, error_message(sizes.takeError()));
    for (const auto &[name, bytes] : *sizes) std::printf("%8llu  %s\n", (unsigned long long)bytes, name.c_str());
  }
  return 0;
}

}  // namespace

int cmd_aot(int argc, char **argv) {
  const CommandDef def = aot_def();
  // "-o FILE" is the conventional spelling; the shared parser knows only "--" options.
  std::vector<std::string> words(argv, argv + argc);
  for (std::string &w : words)
    if (w == "-o") w = "--output";
  std::vector<char *> ptrs;
  for (std::string &w : words) ptrs.push_back(w.data());

  Args args;
  if (std::optional<int> done = parse_command(def, int(ptrs.size()), ptrs.data(), &args))
    return *done;
  std::string error;
  if (!args.has("target"))
    return usage_error(def.name, "--target is required, e.g. --target aarch64 (bases: " +
                                     known_bases_text() + ")");
  if (!args.has("output")) return usage_error(def.name, "-o FILE (--output) is required");
  const std::string emit_text = args.get("emit", "obj");
  jit::AotEmit kind;
  if (emit_text == "obj") kind = jit::AotEmit::kObject;
  else if (emit_text == "asm") kind = jit::AotEmit::kAssembly;
  else if (emit_text == "ll") kind = jit::AotEmit::kIR;
  else return usage_error(def.name, "--emit '" + emit_text + "' is not obj, asm or ll");
  if (kind == jit::AotEmit::kObject && args.get("output") == "-")
    return usage_error(def.name, "an object cannot go to stdout; give -o FILE");
  const std::string op = args.get("op", "encode");
  if (op != "encode" && op != "shape" && op != "steps")
    return usage_error(def.name, "--op '" + op + "' is not encode, shape or steps");
  const bool shapes = op == "shape", steps = op == "steps";
  for (const char *o : {"inputs", "outputs", "accumulate"})
    if (!shapes && args.has(o)) return usage_error(def.name, std::string("--") + o + " applies to --op shape only");
  for (const char *o : {"decoders", "generic", "runtime-c"})
    if (shapes && args.has(o)) return usage_error(def.name, std::string("--") + o + " does not apply to --op shape");
  if (args.has("sizes") && kind != jit::AotEmit::kObject)
    return usage_error(def.name, "--sizes needs --emit obj");

  std::string spec_text = args.get("spec");
  std::vector<std::vector<unsigned>> sets;
  if (args.has("decoders") && !parse_decoder_sets(args.get("decoders"), &sets, &error))
    return usage_error(def.name, error);
  const Result<CodeSpec> parsed = CodeSpec::parse(spec_text);
  // An element-level array code (xcode, bpcode; not a codec spec): encoder and rebuilds.
  if (!parsed.ok()) {
    // A family of codes::array_layout (any has a layout at p = 7) with bad parameters: say so
    // rather than that it is not a codec spec.
    Result<codes::ArraySpec> array = codes::parse_array_spec(spec_text);
    if (!array.ok() && codes::array_layout(spec_text.substr(0, spec_text.find(':')), 7).ok())
      return usage_error(def.name, "spec '" + spec_text + "': " + array.status().message());
    if (array.ok()) {
      if (shapes) return usage_error(def.name, "--op shape is for codes over GF(2^l); " + array->to_string() +
                                                   " has an encoder and rebuilds (--decoders: failed-disk sets)");
      for (const char *o : {"generic", "runtime-c"})
        if (args.has(o))
          return usage_error(def.name, std::string("--") + o + " is for codes over GF(2^l); " + array->to_string() +
                                           "'s rebuilds are fixed with --decoders");
      if (const std::string st = args.get("strategy", "auto"); st != "auto" && st != "xor")
        return usage_error(def.name, "--strategy '" + st + "': an array code's kernels are XOR schedules (auto)");
      jit::OptLevel opt = jit::OptLevel::kO3;
      if (!parse_opt_level(args.get("opt", "O3"), &opt))
        return usage_error(def.name, "--opt '" + args.get("opt") + "' is not one of O0, O1, O2, O3");
      const std::string prefix = args.get("prefix", default_prefix(array->to_string()));
      if (!is_c_identifier(prefix)) return usage_error(def.name, prefix_message(prefix));
      jit::AotRequest request;
      std::string header_text;
      if (!array_aot_request(*array, args.get("target"), opt, sets, prefix, &request, &header_text, &error))
        return usage_error(def.name, error);
      return write_outputs(def, args, request, kind, header_text, "", "", array->to_string());
    }
  }

  const bool fft = parsed.ok() && codes::codec_kind(*parsed) == codes::CodecKind::kFft;
  if (steps && !fft) return usage_error(def.name, "--op steps is for rs-fft specs (e.g. rs-fft:k=32,m=32,gf=8)");
  if (steps && args.has("decoders"))
    return usage_error(def.name, "--decoders does not apply to --op steps: the step kernels serve every erasure set");
  if (fft)
    for (const char *o : {"generic", "runtime-c", "op"})
      if (args.has(o) && !(std::string(o) == "op" && (op == "encode" || op == "steps")))
        return usage_error(def.name, std::string("--") + o + " does not apply to rs-fft: its object carries the "
                                     "encoder and --decoders (the sets the inverted encoder takes), or with "
                                     "--op steps its field's step kernels, only");

  // The encoder request: the same options and naming as `ecjit ir/asm` (kernel_request.h).
  std::vector<std::string> kr_words;
  for (const char *o : {"spec", "target", "strategy", "opt"})
    if (args.has(o)) {
      kr_words.push_back(std::string("--") + o);
      kr_words.push_back(args.get(o));
    }
  if (shapes) kr_words.insert(kr_words.end(), {"--op", "shape", "--outputs", "1"});
  std::vector<char *> kr_ptrs;
  for (std::string &w : kr_words) kr_ptrs.push_back(w.data());
  CommandDef kr_def;
  kr_def.name = def.name;
  kr_def.options = kernel_options();
  Args kr_args;
  if (!kr_args.parse(kr_def, int(kr_ptrs.size()), kr_ptrs.data(), &error))
    return usage_error(def.name, error);
  std::optional<KernelRequest> enc = make_kernel_request(kr_args, &error);
  if (!enc) return usage_error(def.name, error);
  const std::string spec = enc->spec.to_string(), target = enc->target.to_string();
  std::string prefix = args.get("prefix", default_prefix(spec));
  if (!is_c_identifier(prefix)) return usage_error(def.name, prefix_message(prefix));
  jit::AotRequest request;
  request.target = enc->req.target;
  request.opt = enc->req.opt;
  request.kernels.push_back(enc->req);
  request.module_name = prefix;
  const std::string target_details =
      request.target.triple + ", cpu " + request.target.cpu +
      (request.target.features.empty() ? "" : ", " + request.target.features) + ", " +
      std::to_string(request.target.vector_bits) + "-bit vectors";
  // The header, and the runtime C file when asked for (symbol codes only).
  std::string header_text, runtime_c_name, runtime_c_text;
  if (shapes) {
    if (!shape_kernels(args, *enc, prefix, target, target_details, &request, &header_text, &error))
      return usage_error(def.name, error);
  } else if (steps) {
    const codes::fft::Gf gf = enc->req.fft_kernel->gf;
    FftStepsAotContents contents{gf == codes::fft::Gf::k8, prefix, target, target_details,
                                 ir::fft_multiply_name(enc->req.target), ir::fft_radix8_steps(enc->req.target),
                                 enc->req.target.vector_bits, opt_level_name(enc->req.opt),
                                 prefix + "_transform_steps", prefix + "_steps"};
    request.kernels.clear();
    for (const auto &[kind, symbol] : {std::pair{ir::FftKernelDesc::Kind::kTransformSteps, contents.transform_steps_symbol},
                                       std::pair{ir::FftKernelDesc::Kind::kSteps, contents.steps_symbol}})
      request.kernels.push_back(
          jit::fft_compile_request({kind, 0, 0, symbol, {}, {}, gf}, enc->req.target, enc->req.opt));
    header_text = aot_fft_steps_header_text(contents);
  } else if (fft) {
    const unsigned k = enc->spec.k, m = enc->spec.m;
    FftAotContents contents{k, m, enc->req.fft_kernel->gf == codes::fft::Gf::k8, spec, prefix, target, target_details,
                            ir::fft_multiply_name(enc->req.target), opt_level_name(enc->req.opt),
                            enc->req.symbol(), {}};
    for (const std::vector<unsigned> &erased : sets) {
      std::vector<bool> present(k + m, true);
      for (unsigned s : erased) {
        if (s >= k + m)
          return usage_error(def.name, "--decoders: shard " + std::to_string(s) +
                                           " does not exist (the code has shards 0.." + std::to_string(k + m - 1) +
                                           ")");
        present[s] = false;
      }
      // The decode of a fixed set with no erasure-locator transform on the board: the
      // encoder's transforms inverted, the sets that allow it (codes/rs_fft_program.h).
      const std::optional<std::vector<unsigned>> sources =
          erased.size() <= m ? codes::fft::inverse_decode_sources(k, m, present, erased, enc->req.fft_kernel->gf)
                             : std::nullopt;
      if (!sources)
        return usage_error(
            def.name, "--decoders: erasure set {" + join_indices(erased) + "}: an rs-fft decoder ahead of time "
                      "inverts the encoder, which needs every recovery shard and the lost originals inside one "
                      "whole chunk of " + std::to_string(codes::fft::geometry(k, m, enc->req.fft_kernel->gf)->chunk) +
                      " originals (high rate, m a power of two), or every original or one whole recovery chunk "
                      "present (low rate); other sets decode with Jit::codec() or reed-solomon-simd on a host");
      jit::CompileRequest req = enc->req;
      ir::FftKernelDesc d{ir::FftKernelDesc::Kind::kInverse, k, m,
                          ir::kernel_symbol(jit::decoder_op(erased, *sources), spec, target), *sources, erased,
                          enc->req.fft_kernel->gf};
      req.desc.symbol = d.symbol;
      req.fft_kernel = std::make_shared<const ir::FftKernelDesc>(std::move(d));
      contents.decoders.push_back({erased, *sources, req.desc.symbol});
      request.kernels.push_back(std::move(req));
    }
    header_text = aot_fft_header_text(contents);
  } else if (enc->bits) {
    const codes::BitMatrixCode &code = *enc->bits;
    if (args.has("generic") || args.has("runtime-c"))
      return usage_error(def.name, std::string("--") + (args.has("generic") ? "generic" : "runtime-c") +
                                       " is for codes over GF(2^l); a bit-matrix code's decoders are "
                                       "fixed with --decoders");
    XorAotContents contents{code, prefix, target, target_details, opt_level_name(enc->req.opt),
                            enc->req.symbol(), enc->schedule + ", " +
                                std::to_string(enc->req.xor_kernel->program.xors()) + " XORs per block position",
                            {}};
    for (const std::vector<unsigned> &erased : sets) {
      std::vector<bool> present(code.n(), true);
      for (unsigned s : erased) {
        if (s >= code.n())
          return usage_error(def.name, "--decoders: shard " + std::to_string(s) +
                                           " does not exist (the code has shards 0.." + std::to_string(code.n() - 1) + ")");
        present[s] = false;
      }
      // As the runtime promotes a set: the best schedule of its decode bit-matrix.
      Result<jit::XorPlan> plan = jit::xor_decoder_plan(code, present, erased, target, /*best=*/true);
      if (!plan.ok())
        return usage_error(def.name, "--decoders: erasure set {" + join_indices(erased) + "}: " +
                                         plan.status().to_string());
      if (plan->sources.size() > code.k)
        return usage_error(def.name, "--decoders: erasure set {" + join_indices(erased) + "} reads " +
                                         std::to_string(plan->sources.size()) + " shards, more than k (not MDS there)");
      jit::CompileRequest req = enc->req;
      req.xor_kernel = std::make_shared<const ir::XorKernelDesc>(plan->desc);
      contents.decoders.push_back({erased, plan->sources, plan->desc.symbol});
      request.kernels.push_back(std::move(req));
    }
    header_text = aot_xor_header_text(contents);
  } else {
    const codes::LinearCode &code = *enc->code;
    AotContents contents{code, prefix, target, target_details, ir::strategy_name(enc->resolved_strategy),
                         opt_level_name(enc->req.opt), enc->req.desc.symbol, {}, "", false};
    for (const std::vector<unsigned> &erased : sets) {
      std::vector<bool> present(code.n(), true);
      for (unsigned s : erased) {
        if (s >= code.n())
          return usage_error(def.name, "--decoders: shard " + std::to_string(s) +
                                           " does not exist (the code has shards 0.." +
                                           std::to_string(code.n() - 1) + ")");
        present[s] = false;
      }
      // AOT decoders keep the direct map: the two-stage one (same ABI) is not yet run by the
      // emulated foreign-ISA tests (test/aot). Named and planned as the runtime does.
      Result<jit::DecoderPlan> plan = jit::plan_decoder(code, present, erased, enc->req.target, target,
                                                        enc->req.strategy, jit::DecoderUse::kAheadOfTime,
                                                        enc->req.opt,
                                                        /*two_stage=*/false);
      if (!plan.ok())
        return usage_error(def.name, "--decoders: erasure set {" + join_indices(erased) +
                                         "}: " + plan.status().to_string());
      jit::CompileRequest req = enc->req;
      req.desc.coeffs = plan->request.desc.coeffs;
      req.desc.pre = codes::Matrix();
      req.desc.symbol = plan->request.desc.symbol;
      contents.decoders.push_back({plan->plan.targets, plan->plan.sources, req.desc.symbol});
      request.kernels.push_back(std::move(req));
    }
    if (args.has("generic")) {
      contents.generic_symbol = ir::kernel_symbol("generic", spec, target);
      request.generic = jit::GenericKernelRequest{code.field, contents.generic_symbol};
    }
    contents.runtime_c = args.has("runtime-c");
    header_text = aot_header_text(contents);
    if (contents.runtime_c) {
      runtime_c_name = aot_runtime_c_name(contents);
      runtime_c_text = aot_runtime_c_text(contents);
    }
  }

  return write_outputs(def, args, request, kind, header_text, runtime_c_name, runtime_c_text, describe(*enc));
}

}  // namespace ecjit::tools
