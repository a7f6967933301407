// The compile pipeline shared by JIT and AOT: target init, TargetMachine, PassBuilder, emission.
#include "jit/pipeline.h"

#include <map>
#include <mutex>
#include <string>
#include <system_error>

#include "llvm/ADT/SmallVector.h"
#include "llvm/Analysis/CGSCCPassManager.h"
#include "llvm/Analysis/LoopAnalysisManager.h"
#include "llvm/CodeGen/MachineModuleInfo.h"
#include "llvm/CodeGen/Passes.h"
#include "llvm/CodeGen/TargetPassConfig.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PassManager.h"
#include "llvm/IR/Verifier.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/CodeGen.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"
#include "llvm/Transforms/Scalar/EarlyCSE.h"
#include "llvm/Transforms/Scalar/SimplifyCFG.h"

namespace ecjit::jit {
namespace {

llvm::CodeGenOptLevel codegen_level(OptLevel level) {
  switch (level) {
    case OptLevel::kO0: return llvm::CodeGenOptLevel::None;
    case OptLevel::kO1: return llvm::CodeGenOptLevel::Less;
    case OptLevel::kO2: return llvm::CodeGenOptLevel::Default;
    case OptLevel::kO3: return llvm::CodeGenOptLevel::Aggressive;
  }
  llvm_unreachable("bad OptLevel");
}

llvm::OptimizationLevel pass_level(OptLevel level) {
  switch (level) {
    case OptLevel::kO0: return llvm::OptimizationLevel::O0;
    case OptLevel::kO1: return llvm::OptimizationLevel::O1;
    case OptLevel::kO2: return llvm::OptimizationLevel::O2;
    case OptLevel::kO3: return llvm::OptimizationLevel::O3;
  }
  llvm_unreachable("bad OptLevel");
}

// True when the comma-separated feature string enables `feature` as its last word on it.
bool feature_enabled(llvm::StringRef features, llvm::StringRef feature) {
  bool on = false;
  llvm::SmallVector<llvm::StringRef, 64> items;
  features.split(items, ',', -1, false);
  for (llvm::StringRef item : items) {
    if (item.size() > 1 && item.drop_front() == feature) on = item.front() == '+';
  }
  return on;
}

}  // namespace

llvm::Error init_llvm_targets() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeAllTargetInfos();
    llvm::InitializeAllTargets();
    llvm::InitializeAllTargetMCs();
    llvm::InitializeAllAsmPrinters();
    llvm::InitializeAllAsmParsers();
  });
  // The host backend is the one every JIT needs; report its absence here, once, clearly.
  std::string error;
  if (!llvm::TargetRegistry::lookupTarget(llvm::sys::getProcessTriple(), error)) {
    return llvm::createStringError(std::errc::not_supported,
                                   "this LLVM has no backend for the host: %s", error.c_str());
  }
  return llvm::Error::success();
}

llvm::Expected<std::unique_ptr<llvm::TargetMachine>> make_target_machine(
    const ir::TargetInfo &target, OptLevel level) {
  if (auto err = init_llvm_targets()) return std::move(err);
  std::string error;
  const llvm::Target *llvm_target = llvm::TargetRegistry::lookupTarget(target.triple, error);
  if (!llvm_target) {
    return llvm::createStringError(std::errc::not_supported, "no LLVM backend for '%s': %s",
                                   target.triple.c_str(), error.c_str());
  }
  llvm::TargetOptions options;
  llvm::Triple triple(target.triple);
  // RISC-V: every riscv64 base has +d; use the matching hard-float ABI so .o files link
  // with ordinary rv64gc objects (kernels take no floating-point arguments either way).
  if (triple.getArch() == llvm::Triple::riscv64 && feature_enabled(target.features, "d")) {
    options.MCOptions.ABIName = "lp64d";
  }
  std::unique_ptr<llvm::TargetMachine> tm(llvm_target->createTargetMachine(
      target.triple, target.cpu, target.features, options, llvm::Reloc::PIC_, std::nullopt,
      codegen_level(level)));
  if (!tm) {
    return llvm::createStringError(std::errc::not_supported,
                                   "could not create a TargetMachine for '%s' cpu '%s'",
                                   target.triple.c_str(), target.cpu.c_str());
  }
  return std::move(tm);
}

llvm::Expected<llvm::TargetMachine *> thread_target_machine(const ir::TargetInfo &target,
                                                            OptLevel level) {
  // A handful of entries per thread at most (the host tiers, a few AOT targets).
  thread_local std::map<std::string, std::unique_ptr<llvm::TargetMachine>> machines;
  std::string key = target.triple + "|" + target.cpu + "|" + target.features + "|" +
                    std::to_string(int(level));
  auto it = machines.find(key);
  if (it != machines.end()) return it->second.get();
  auto tm = make_target_machine(target, level);
  if (!tm) return tm.takeError();
  return machines.emplace(std::move(key), std::move(*tm)).first->second.get();
}

llvm::Error optimize(llvm::Module &module, llvm::TargetMachine &tm, OptLevel level,
                     Passes kind) {
  module.setTargetTriple(tm.getTargetTriple().str());
  module.setDataLayout(tm.createDataLayout());
  {
    std::string message;
    llvm::raw_string_ostream os(message);
    if (llvm::verifyModule(module, &os)) {
      return llvm::createStringError(std::errc::invalid_argument, "invalid module '%s': %s",
                                     module.getName().str().c_str(), os.str().c_str());
    }
  }

  // LLVM's default pipeline at `level`, for loop code (the generic kernel). The loop and
  // SLP vectorizers and the loop unroller stay off: the IR is already vector code.
  llvm::PipelineTuningOptions tuning;
  tuning.LoopVectorization = false;
  tuning.SLPVectorization = false;
  tuning.LoopUnrolling = false;

  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder builder(&tm, tuning);
  builder.registerModuleAnalyses(mam);
  builder.registerCGSCCAnalyses(cgam);
  builder.registerFunctionAnalyses(fam);
  builder.registerLoopAnalyses(lam);
  builder.crossRegisterProxies(lam, fam, cgam, mam);

  llvm::ModulePassManager passes;
  if (level == OptLevel::kO0) {
    passes = builder.buildO0DefaultPipeline(llvm::OptimizationLevel::O0);
  } else if (kind == Passes::kDefault) {
    passes = builder.buildPerModuleDefaultPipeline(pass_level(level));
  } else {
    // The builders' kernels: straight-line vector code, unrolled and ordered as the
    // builder wants it (outputs' terms input by input, see ir_builders/lowering.h). What it
    // needs from LLVM is the CSE of the redundant shifts and loads (Nešković 2018, Fig. 5-4)
    // and a tidy CFG; the default pipeline's Reassociate and InstCombine rebuild every
    // output's XOR tree with all its shifts hoisted ahead and spill (RS(10,4) clmul-shift on
    // Zen 3: 4.5 -> 6.1 GB/s GF(2^16), 4.1 -> 6.2 GF(2^32), 3.6 -> 5.7 GF(2^64) without
    // them; split-table and clmul-insn unchanged). It also compiles faster.
    llvm::FunctionPassManager fpm;
    fpm.addPass(llvm::EarlyCSEPass(/*UseMemorySSA=*/true));
    fpm.addPass(llvm::SimplifyCFGPass());
    passes.addPass(llvm::createModuleToFunctionPassAdaptor(std::move(fpm)));
  }
  passes.run(module, mam);
  return llvm::Error::success();
}

llvm::Expected<std::string> emit(llvm::Module &module, llvm::TargetMachine &tm, EmitKind kind,
                                 Codegen codegen) {
  if (module.getTargetTriple().empty()) module.setTargetTriple(tm.getTargetTriple().str());
  if (module.getDataLayout().isDefault()) module.setDataLayout(tm.createDataLayout());
  if (module.getDataLayout() != tm.createDataLayout()) {
    return llvm::createStringError(std::errc::invalid_argument,
                                   "module '%s' has a data layout for another target than '%s'",
                                   module.getName().str().c_str(),
                                   tm.getTargetTriple().str().c_str());
  }

  llvm::SmallVector<char, 0> buffer;
  llvm::raw_svector_ostream os(buffer);
  // The legacy pass manager is still the only way LLVM 19 runs code generation.
  llvm::legacy::PassManager passes;
  const auto file_type = kind == EmitKind::kAssembly ? llvm::CodeGenFileType::AssemblyFile
                                                     : llvm::CodeGenFileType::ObjectFile;
  auto cannot = [&] {
    return llvm::createStringError(std::errc::not_supported, "target '%s' cannot emit this file type",
                                   tm.getTargetTriple().str().c_str());
  };
  if (codegen == Codegen::kNoSchedulers && tm.getTargetTriple().isX86()) {
    // addPassesToEmitFile's steps, with the schedulers taken out of its pass configuration
    // before the configuration adds its passes.
    auto &llvm_tm = static_cast<llvm::LLVMTargetMachine &>(tm);
    auto *mmi = new llvm::MachineModuleInfoWrapperPass(&llvm_tm);  // owned by `passes`
    llvm::TargetPassConfig *config = llvm_tm.createPassConfig(passes);
    config->setDisableVerify(true);
    config->disablePass(&llvm::MachineSchedulerID);
    config->disablePass(&llvm::PostMachineSchedulerID);
    config->disablePass(&llvm::PostRASchedulerID);
    passes.add(config);
    passes.add(mmi);
    if (config->addISelPasses()) return cannot();
    config->addMachinePasses();
    config->setInitialized();
    if (llvm_tm.addAsmPrinter(passes, os, nullptr, file_type, mmi->getMMI().getContext())) return cannot();
    passes.add(llvm::createFreeMachineFunctionPass());
  } else if (tm.addPassesToEmitFile(passes, os, nullptr, file_type)) {
    return cannot();
  }
  passes.run(module);
  return std::string(buffer.begin(), buffer.end());
}

}  // namespace ecjit::jit
