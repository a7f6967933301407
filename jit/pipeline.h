// The compile pipeline shared by JIT and AOT: TargetMachine, PassBuilder optimization, emission.
#pragma once

#include <memory>
#include <string>

#include "ir_builders/target_info.h"
#include "llvm/Support/Error.h"

namespace llvm {
class Module;
class TargetMachine;
}  // namespace llvm

namespace ecjit::jit {

enum class OptLevel { kO0, kO1, kO2, kO3 };

// Initializes every LLVM target compiled into this LLVM, once (thread-safe, cheap after
// the first call). Errors: std::errc::not_supported when the host backend is missing.
llvm::Error init_llvm_targets();

// A new TargetMachine for the resolved target (PIC, default code model, codegen level from
// `level`; riscv64 with +d uses the lp64d ABI). The caller owns it; a TargetMachine must
// not be used by two threads at once. Errors: std::errc::not_supported when this LLVM has
// no backend for the triple or rejects the CPU.
llvm::Expected<std::unique_ptr<llvm::TargetMachine>> make_target_machine(
    const ir::TargetInfo &target, OptLevel level);

// The calling thread's own TargetMachine for (target, level), made on first use and kept
// until the thread exits: compiles on one thread share it (and its subtarget, whose
// lowering tables cost ~0.5 ms to build) instead of making one or two per kernel. Never
// hand it to another thread. Errors: those of make_target_machine.
llvm::Expected<llvm::TargetMachine *> thread_target_machine(const ir::TargetInfo &target, OptLevel level);

// Which IR passes optimize() runs above O0: kKernel for the builders' unrolled kernels (CSE
// and CFG clean-up only, keeping the order the builder chose), kDefault for loop code such as
// the generic kernel (LLVM's default pipeline at the level).
enum class Passes { kKernel, kDefault };

// Sets the module's triple and data layout from `tm`, verifies it, then runs the passes of
// `kind` at `level` (O0 keeps the redundant form), with the TargetMachine's TTI so costs
// are real. The loop and SLP vectorizers and the loop unroller never run: the builders' IR
// is already vector code, unrolled as asked. The level also sets code generation's level
// (make_target_machine). Errors: std::errc::invalid_argument when the module fails
// verification (with the verifier's message). Thread-safe for distinct modules and
// TargetMachines.
llvm::Error optimize(llvm::Module &module, llvm::TargetMachine &tm, OptLevel level,
                     Passes kind = Passes::kKernel);

enum class EmitKind { kAssembly, kObject };
// Code generation to a memory buffer: assembly text or an ELF/COFF/Mach-O object. Runs the
// codegen passes over the module (which may change it; do not reuse it afterwards). An
// empty triple/data layout is taken from `tm`. Errors: std::errc::invalid_argument for a
// module with another target's data layout, std::errc::not_supported when the target
// cannot emit `kind`.
//   kFull: LLVM's code generator as configured by `tm`.
//   kNoSchedulers: on x86, without its pre- and post-RA instruction schedulers (elsewhere
//     kFull): for kernels compiled per erasure set, where compile time is paid per set. On
//     Zen 5 they were 15% of RS(10,4)'s decoder compile (3.1 -> 2.6 ms) and moved none of its
//     rates (83-108 GB/s at 64 KiB, 67-81 at 1 MiB either way); they do matter elsewhere -
//     liberation's 2 KiB-packet XOR encoder at 1 MiB runs 85 GB/s with them, 50 without.
enum class Codegen { kFull, kNoSchedulers };
llvm::Expected<std::string> emit(llvm::Module &module, llvm::TargetMachine &tm, EmitKind kind,
                                 Codegen codegen = Codegen::kFull);

}  // namespace ecjit::jit
