// KernelCompiler: the one path from a linear map to IR text, assembly, objects or JIT code.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "ir_builders/fft_kernel.h"
#include "ir_builders/kernel_builder.h"
#include "ir_builders/strategy.h"
#include "ir_builders/target_info.h"
#include "ir_builders/xor_kernel.h"
#include "jit/disk_cache.h"
#include "jit/jit_session.h"
#include "jit/pipeline.h"
#include "llvm/Support/Error.h"

namespace llvm {
class LLVMContext;
class Module;
}  // namespace llvm

namespace ecjit::jit {

// What to compile: a kernel description, for a resolved target, with a strategy and an
// optimization level. kAuto strategies must be resolved by the caller (resolve_strategy).
struct CompileRequest {
  ir::KernelDesc desc;
  ir::TargetInfo target;
  ir::Strategy strategy = ir::Strategy::kClmulShift;
  OptLevel opt = OptLevel::kO3;
  // Vectors per input in one step of the main loop (ir::BuildOptions::unroll, 1..8).
  unsigned unroll = 1;
  // A bit-matrix kernel instead (ir::build_xor_kernel): desc, strategy and unroll are then
  // unused; the symbol is xor_kernel->symbol.
  std::shared_ptr<const ir::XorKernelDesc> xor_kernel = nullptr;
  // An rs-fft kernel instead (ir::build_fft_kernel), likewise.
  std::shared_ptr<const ir::FftKernelDesc> fft_kernel = nullptr;
  // How code generation runs (jit::Codegen): kNoSchedulers for kernels compiled per erasure
  // set (KernelService's private kernels), kFull for the rest.
  Codegen codegen = Codegen::kFull;

  const std::string &symbol() const {
    return xor_kernel ? xor_kernel->symbol : fft_kernel ? fft_kernel->symbol : desc.symbol;
  }
};

// The request of a bit-matrix kernel: xor_kernel set, desc an empty GF(2^8) placeholder that
// nothing reads (CompileRequest::xor_kernel).
CompileRequest xor_compile_request(const ir::XorKernelDesc &kernel, const ir::TargetInfo &target,
                                   OptLevel opt);

// The request of a shape kernel (KernelDesc::runtime_coeffs): `outputs` x `inputs` over
// `field`, overwriting or accumulating, with the vectors per step of ir::shape_unroll - the
// one place the JIT's shape kernels, `ecjit aot --op shape` and `ecjit ir / asm --op shape`
// take their request from.
CompileRequest shape_compile_request(const codes::Field &field, unsigned inputs, unsigned outputs,
                                     bool accumulate, ir::Strategy strategy, const ir::TargetInfo &target,
                                     OptLevel opt, std::string symbol);

// The request of an rs-fft kernel (CompileRequest::fft_kernel), desc a placeholder likewise.
CompileRequest fft_compile_request(const ir::FftKernelDesc &kernel, const ir::TargetInfo &target,
                                   OptLevel opt);

// The strategy `kAuto` stands for on a target, for a field of `field_bits`.
ir::Strategy resolve_strategy(ir::Strategy requested, const ir::TargetInfo &target,
                              unsigned field_bits);

// A built and optimized module with the context that owns it.
struct BuiltModule {
  std::unique_ptr<llvm::LLVMContext> ctx;
  std::unique_ptr<llvm::Module> module;
};

// Builds the IR (ir_builders) and, when `optimize_it`, runs the pipeline at req.opt.
llvm::Expected<BuiltModule> build_module(const CompileRequest &req, bool optimize_it = true);

// Textual LLVM IR of the kernel, before (optimize_it = false) or after optimization.
llvm::Expected<std::string> kernel_ir(const CompileRequest &req, bool optimize_it = true);

// Assembly text or an object file of the optimized kernel, for any target LLVM has.
llvm::Expected<std::string> kernel_code(const CompileRequest &req, EmitKind kind);

// Everything the machine code of `req` depends on, as one string (the disk-cache key):
// ecjit build identity, LLVM version, target triple/CPU/features/widths, strategy, opt
// level, unroll depth, field, coefficients (and the first stage, KernelDesc::pre), modes,
// symbol.
std::string kernel_cache_key(const CompileRequest &req);

// JIT-compiles the kernel into `session` (the target must be runnable by this process).
// With a disk cache, a valid object stored under kernel_cache_key(req) is linked without
// building IR or compiling (*from_disk = true); otherwise the kernel is compiled to an
// object, stored, and linked. Without one the kernel is compiled to the same object (code
// generation at req.opt, as kernel_code) and linked: a request gives the same machine code
// with or without the disk cache. compile_seconds receives the wall time of the whole call.
llvm::Expected<std::unique_ptr<CompiledKernel>> jit_kernel(JitSession &session,
                                                           const CompileRequest &req,
                                                           double *compile_seconds = nullptr,
                                                           const DiskCache *disk = nullptr,
                                                           bool *from_disk = nullptr);

}  // namespace ecjit::jit
