// AOT writer: several kernels for one target, linked into one module and emitted as an object, assembly or IR.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "codes/gf.h"
#include "jit/kernel_compiler.h"
#include "llvm/Support/Error.h"

namespace ecjit::jit {

// The generic kernel of an AOT object (ir::build_generic_kernel): coefficients at run time.
struct GenericKernelRequest {
  codes::Field field;
  std::string symbol;
};

// What goes into one object file. Every kernel must have the same target and opt level as
// `target` / `opt`, and every symbol must be distinct.
struct AotRequest {
  ir::TargetInfo target;
  OptLevel opt = OptLevel::kO3;
  std::vector<CompileRequest> kernels;          // specialised encoders / decoders
  std::optional<GenericKernelRequest> generic;  // with --generic
  std::string module_name = "ecjit_aot";        // the object's source file name
};

enum class AotEmit { kObject, kAssembly, kIR };

// Builds each specialised kernel exactly as the JIT does (build_module: the same builders and
// the same O-level pipeline), the generic kernel with ir::build_generic_kernel and the same
// pipeline, links the optimized modules into one (in request order) and emits it: an ELF
// object, assembly text (verbose_asm adds LLVM's block comments, e.g. "%vloop") or textual
// IR. Output is a pure function of the request (no time stamps, no host paths).
// Errors (llvm::Error): anything build_module, the builders, the linker or the code
// generator report; std::errc::invalid_argument for an empty request, mismatched targets or
// a symbol given twice. Thread-safe (every call has its own contexts).
llvm::Expected<std::string> aot_emit(const AotRequest &request, AotEmit kind,
                                     bool verbose_asm = false);

// (symbol, size in bytes) of every defined function symbol of an object image, in symbol
// table order. Errors: the bytes are not an object file LLVM can read.
llvm::Expected<std::vector<std::pair<std::string, uint64_t>>> function_sizes(
    const std::string &object);

}  // namespace ecjit::jit
