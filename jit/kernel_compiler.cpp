// KernelCompiler: ir_builders -> PassBuilder pipeline -> text / code / LLJIT, in one place.
#include "jit/kernel_compiler.h"

#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"

namespace ecjit::jit {

ir::Strategy resolve_strategy(ir::Strategy requested, const ir::TargetInfo &target,
                              unsigned field_bits) {
  if (requested != ir::Strategy::kAuto) return requested;
  (void)target;
  (void)field_bits;
  return ir::Strategy::kClmulShift;  // the only lowering so far: portable to every target
}

llvm::Expected<BuiltModule> build_module(const CompileRequest &req, bool optimize_it) {
  if (llvm::Error e = init_llvm_targets()) return std::move(e);
  BuiltModule out;
  out.ctx = std::make_unique<llvm::LLVMContext>();
  const ir::Strategy strategy = resolve_strategy(req.strategy, req.target, req.desc.field.bits());
  auto module = ir::build_kernel(*out.ctx, req.desc, req.target, strategy);
  if (!module) return module.takeError();
  out.module = std::move(*module);
  if (optimize_it) {
    auto tm = make_target_machine(req.target, req.opt);
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
  auto tm = make_target_machine(req.target, req.opt);
  if (!tm) return tm.takeError();
  return emit(*built->module, **tm, kind);
}

llvm::Expected<std::unique_ptr<CompiledKernel>> jit_kernel(JitSession &session,
                                                           const CompileRequest &req,
                                                           double *compile_seconds) {
  const auto t0 = std::chrono::steady_clock::now();
  auto built = build_module(req, true);
  if (!built) return built.takeError();
  auto kernel = session.add(std::move(built->ctx), std::move(built->module), req.desc.symbol);
  if (compile_seconds)
    *compile_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return kernel;
}

}  // namespace ecjit::jit
