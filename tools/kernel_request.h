// kernel_request: turns the shared --spec/--target/--strategy/--opt/--op/--erased options into a CompileRequest.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "codes/array_layout.h"
#include "codes/bitmatrix_code.h"
#include "codes/linear_code.h"
#include "jit/kernel_compiler.h"
#include "jit/target_spec.h"
#include "tools/args.h"

namespace llvm {
class Error;
}

namespace ecjit::tools {

// The options every kernel-inspecting subcommand (ir, asm, stats) accepts.
std::vector<Option> kernel_options();

// A parsed and resolved --target.
struct KernelTarget {
  jit::TargetSpec spec;
  ir::TargetInfo info;
};
// Parses and resolves a target text; nullopt with a one-line message naming it.
std::optional<KernelTarget> resolve_target(const std::string &text, std::string *error);

// The strategy names --strategy accepts, comma-separated (ir::known_strategies()).
std::string strategy_list();

// A kernel to inspect: the code, which map of it (encode or the decoder of an erasure set)
// and how it is compiled.
struct KernelRequest {
  CodeSpec spec;
  std::optional<codes::LinearCode> code;     // symbol codes
  std::optional<codes::BitMatrixCode> bits;  // bit-matrix codes: req.xor_kernel is set
  std::optional<codes::ArraySpec> array;     // array codes (spec unset): req.xor_kernel is set
  std::string schedule;                      // bit-matrix codes: the schedule's name
  std::string op;                 // "encode" or jit::decoder_op ("decode_t<i>_.._s<j>_..", as the runtime;
                                  // bit-matrix codes: jit::xor_decoder_plan's; array codes "rebuild_d<i>_..")
  std::vector<unsigned> erased;   // decode only: the missing shards, ascending
  jit::TargetSpec target;
  ir::Strategy resolved_strategy = ir::Strategy::kClmulShift;
  jit::CompileRequest req;
};

// Builds the request from parsed options. On a bad argument returns nullopt with a one-line
// message (the caller exits 2). A bit-matrix spec gives its xor kernel (encode, or the
// compiled decoder of --erased as the runtime promotes it); --op shape and --strategy other
// than auto are refused for those.
std::optional<KernelRequest> make_kernel_request(const Args &args, std::string *error);

// The encoder of a spec text on a target at a level, strategy auto (used by sweeps).
std::optional<KernelRequest> make_encode_request(const std::string &spec_text,
                                                 const std::string &target_text,
                                                 jit::OptLevel opt, std::string *error);

// Assembly of an optimized module for r's target (code generation consumes the module).
// Verbose: LLVM's comments, among them the IR name of each basic block ("# %vloop").
llvm::Expected<std::string> assembly_of(const KernelRequest &r, jit::BuiltModule &built);
// Builds the module at r.req.opt and returns its verbose assembly.
llvm::Expected<std::string> kernel_assembly(const KernelRequest &r);

// "O0".."O3" <-> OptLevel.
bool parse_opt_level(const std::string &text, jit::OptLevel *out);
const char *opt_level_name(jit::OptLevel level);

// One line naming spec, op, target (triple, cpu, vector width), strategy and level.
std::string describe(const KernelRequest &r);

// Consumes an llvm::Error into a one-line message.
std::string error_message(llvm::Error err);

}  // namespace ecjit::tools
