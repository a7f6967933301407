// AOT writer: build_module per kernel, bitcode into one context, llvm::Linker, then the shared emit().
#include "jit/aot_writer.h"

#include <set>
#include <system_error>

#include "ir_builders/generic_kernel.h"
#include "jit/pipeline.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Linker/Linker.h"
#include "llvm/Object/ELFObjectFile.h"
#include "llvm/Object/ObjectFile.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"

namespace ecjit::jit {
namespace {

llvm::Error aot_error(const std::string &msg) {
  return llvm::createStringError(std::make_error_code(std::errc::invalid_argument),
                                 "aot: " + msg);
}

bool same_target(const ir::TargetInfo &a, const ir::TargetInfo &b) {
  return a.triple == b.triple && a.cpu == b.cpu && a.features == b.features &&
         a.vector_bits == b.vector_bits;
}

// Moves `module` (of another context) into `ctx` through an in-memory bitcode image.
llvm::Expected<std::unique_ptr<llvm::Module>> transplant(const llvm::Module &module,
                                                         llvm::LLVMContext &ctx) {
  llvm::SmallVector<char, 0> bitcode;
  llvm::raw_svector_ostream os(bitcode);
  llvm::WriteBitcodeToFile(module, os);
  llvm::MemoryBufferRef ref(llvm::StringRef(bitcode.data(), bitcode.size()),
                            module.getModuleIdentifier());
  return llvm::parseBitcodeFile(ref, ctx);
}

}  // namespace

llvm::Expected<std::string> aot_emit(const AotRequest &request, AotEmit kind, bool verbose_asm) {
  if (request.kernels.empty() && !request.generic) return aot_error("no kernels requested");
  std::set<std::string> symbols;
  for (const CompileRequest &k : request.kernels) {
    if (!same_target(k.target, request.target) || k.opt != request.opt)
      return aot_error("kernel '" + k.symbol() + "' has another target or opt level");
    if (!symbols.insert(k.symbol()).second)
      return aot_error("symbol '" + k.symbol() + "' requested twice");
  }
  if (request.generic && !symbols.insert(request.generic->symbol).second)
    return aot_error("symbol '" + request.generic->symbol + "' requested twice");
  if (llvm::Error e = init_llvm_targets()) return std::move(e);

  auto ctx = std::make_unique<llvm::LLVMContext>();
  auto linked = std::make_unique<llvm::Module>(request.module_name, *ctx);
  linked->setSourceFileName(request.module_name);
  linked->setTargetTriple(request.target.triple);
  {
    auto tm = make_target_machine(request.target, request.opt);
    if (!tm) return tm.takeError();
    linked->setDataLayout((*tm)->createDataLayout());
  }
  llvm::Linker linker(*linked);
  auto link_in = [&](std::unique_ptr<llvm::Module> m) -> llvm::Error {
    if (linker.linkInModule(std::move(m)))
      return aot_error("linking the kernel modules failed");
    return llvm::Error::success();
  };

  // The specialised kernels: the JIT's own build path, module by module.
  for (const CompileRequest &k : request.kernels) {
    auto built = build_module(k, /*optimize_it=*/true);
    if (!built) return built.takeError();
    auto moved = transplant(*built->module, *ctx);
    if (!moved) return moved.takeError();
    if (llvm::Error e = link_in(std::move(*moved))) return std::move(e);
  }
  if (request.generic) {
    auto module = ir::build_generic_kernel(*ctx, request.generic->field, request.target,
                                           request.generic->symbol);
    if (!module) return module.takeError();
    auto tm = make_target_machine(request.target, request.opt);
    if (!tm) return tm.takeError();
    if (llvm::Error e = optimize(**module, **tm, request.opt, Passes::kDefault))
      return std::move(e);
    if (llvm::Error e = link_in(std::move(*module))) return std::move(e);
  }

  if (kind == AotEmit::kIR) {
    std::string text;
    llvm::raw_string_ostream os(text);
    linked->print(os, nullptr);
    os.flush();
    return text;
  }
  auto tm = make_target_machine(request.target, request.opt);
  if (!tm) return tm.takeError();
  if (verbose_asm) (*tm)->Options.MCOptions.AsmVerbose = true;
  return emit(*linked, **tm, kind == AotEmit::kObject ? EmitKind::kObject : EmitKind::kAssembly);
}

llvm::Expected<std::vector<std::pair<std::string, uint64_t>>> function_sizes(
    const std::string &object) {
  auto file = llvm::object::ObjectFile::createObjectFile(
      llvm::MemoryBufferRef(llvm::StringRef(object), "aot object"));
  if (!file) return file.takeError();
  std::vector<std::pair<std::string, uint64_t>> out;
  for (const llvm::object::SymbolRef &sym : (*file)->symbols()) {
    auto type = sym.getType();
    if (!type) return type.takeError();
    if (*type != llvm::object::SymbolRef::ST_Function) continue;
    auto name = sym.getName();
    if (!name) return name.takeError();
    const auto *elf = llvm::dyn_cast<llvm::object::ELFObjectFileBase>(file->get());
    const uint64_t size = elf ? llvm::object::ELFSymbolRef(sym).getSize() : 0;
    out.emplace_back(name->str(), size);
  }
  return out;
}

}  // namespace ecjit::jit
