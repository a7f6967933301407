// has_feature: CPU features plus the feature string, with LLVM's x86 implications.
#include "ir_builders/target_features.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/TargetParser/Triple.h"
#include "llvm/TargetParser/X86TargetParser.h"

namespace ecjit::ir {

namespace {

// The x86 features on for a CPU name plus a feature string, implications applied.
llvm::StringMap<bool> x86_features(const TargetInfo &target, llvm::ArrayRef<llvm::StringRef> items) {
  llvm::StringMap<bool> on;
  if (llvm::X86::parseArchX86(target.cpu) != llvm::X86::CK_None) {
    llvm::SmallVector<llvm::StringRef, 64> cpu_features;
    llvm::X86::getFeaturesForCPU(target.cpu, cpu_features, /*NeedPlus=*/false);
    for (llvm::StringRef f : cpu_features) {  // the parser sets what f implies, not f
      on[f] = true;
      llvm::X86::updateImpliedFeatures(f, true, on);
    }
  }
  for (llvm::StringRef item : items) {
    if (item.size() < 2 || (item[0] != '+' && item[0] != '-')) continue;
    const llvm::StringRef name = item.drop_front();
    on[name] = item[0] == '+';  // the parser updates only the features implied by it
    llvm::X86::updateImpliedFeatures(name, item[0] == '+', on);
  }
  return on;
}

}  // namespace

bool has_feature(const TargetInfo &target, const std::string &feature) {
  llvm::SmallVector<llvm::StringRef, 32> items;
  llvm::StringRef(target.features).split(items, ',', -1, /*KeepEmpty=*/false);

  if (llvm::Triple(target.triple).isX86()) {
    // Builders ask once per multiply (a decoder: 40 times); resolving the implications
    // each time was 3% of a decoder's compile. The last target asked on this thread is kept.
    struct Last {
      std::string cpu, features;
      llvm::StringMap<bool> on;
      bool valid = false;
    };
    thread_local Last last;
    if (!last.valid || last.cpu != target.cpu || last.features != target.features) {
      last.on = x86_features(target, items);
      last.cpu = target.cpu;
      last.features = target.features;
      last.valid = true;
    }
    auto it = last.on.find(feature);
    return it != last.on.end() && it->second;
  }

  bool enabled = false;
  for (llvm::StringRef item : items)
    if (item.size() >= 2 && item.drop_front() == feature) enabled = item[0] == '+';
  return enabled;
}

}  // namespace ecjit::ir
