// TargetSpec: parsing, printing and resolving target strings through data tables of bases and tiers.
#include "jit/target_spec.h"

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <system_error>
#include <utility>

#include "jit/pipeline.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/MC/MCInstrInfo.h"
#include "llvm/MC/MCSchedule.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"

namespace ecjit::jit {
namespace {

// A named starting point. An empty triple means "detect the host".
struct BaseRow {
  const char *name;
  const char *triple;
  const char *cpu;
  const char *features;  // LLVM feature string the base always has
  const char *hvx;       // HVX version feature for the "hvx" alias ("" if none)
};

constexpr BaseRow kBases[] = {
    {"host", "", "", "", ""},
    {"x86_64", "x86_64-unknown-linux-gnu", "x86-64", "", ""},
    {"x86_64-v2", "x86_64-unknown-linux-gnu", "x86-64-v2", "", ""},
    {"x86_64-v3", "x86_64-unknown-linux-gnu", "x86-64-v3", "", ""},
    {"x86_64-v4", "x86_64-unknown-linux-gnu", "x86-64-v4", "", ""},
    {"aarch64", "aarch64-unknown-linux-gnu", "generic", "+neon", ""},
    {"armv7", "armv7a-unknown-linux-gnueabihf", "generic", "+neon,+vfp3", ""},
    {"hexagon-v66", "hexagon-unknown-linux-musl", "hexagonv66", "", "hvxv66"},
    {"hexagon-v68", "hexagon-unknown-linux-musl", "hexagonv68", "", "hvxv68"},
    {"hexagon-v73", "hexagon-unknown-linux-musl", "hexagonv73", "", "hvxv73"},
    {"riscv64", "riscv64-unknown-linux-gnu", "generic-rv64", "+m,+a,+f,+d,+c", ""},
    // LLVM lowers fixed-length vectors to RVV only up to the guaranteed VLEN; +v implies
    // Zvl128b, so 128 bits is the width a kernel can count on without -riscv-v-vector-bits-min.
    {"riscv64-v", "riscv64-unknown-linux-gnu", "generic-rv64", "+m,+a,+f,+d,+c,+v", ""},
};

// Plain architecture names (as LLVM's -march spells them) standing for a documented default
// base. An alias applies when the text is the name alone or the name followed by '+'
// features: "hexagon-v99" stays an unknown base, never "hexagon" minus a feature "v99".
struct AliasRow {
  const char *name;
  const char *base;
};
constexpr AliasRow kAliases[] = {{"hexagon", "hexagon-v68"}};

// Vector tiers per architecture, widest first; the first whose features are all on wins.
struct VectorTier {
  const char *features;  // checked with MCSubtargetInfo::checkFeatures (implications honoured)
  unsigned bits;
  unsigned regs;
  // LLVM opcode names of the tier's carry-less multiply and vector XOR, whose costs in the
  // CPU's scheduling model give TargetInfo::clmul_cost_xors (nullptr: no such instruction).
  const char *clmul = nullptr;
  const char *vxor = nullptr;
};

constexpr VectorTier kX86Tiers[] = {
    {"+avx512bw,+avx512f", 512, 32, "VPCLMULQDQZrri", "VPXORQZrr"},
    {"+avx2", 256, 16, "VPCLMULQDQYrri", "VPXORYrr"},
    {"+sse2", 128, 16, "PCLMULQDQrri", "PXORrr"}};
constexpr VectorTier kNeonTiers[] = {{"+neon", 128, 32, "PMULLv1i64", "EORv16i8"}};
constexpr VectorTier kArmTiers[] = {{"+neon", 128, 16}};
constexpr VectorTier kHexagonTiers[] = {{"+hvx-length128b", 1024, 32},
                                        {"+hvx-length64b", 512, 32}};
constexpr VectorTier kRiscvTiers[] = {{"+v", 128, 32}};

struct ArchRow {
  llvm::Triple::ArchType arch;
  llvm::ArrayRef<VectorTier> tiers;
  unsigned scalar_regs;  // general-purpose registers when no tier applies (64-bit lanes)
};

const ArchRow kArches[] = {
    {llvm::Triple::x86_64, kX86Tiers, 16},     {llvm::Triple::aarch64, kNeonTiers, 31},
    {llvm::Triple::arm, kArmTiers, 14},        {llvm::Triple::hexagon, kHexagonTiers, 32},
    {llvm::Triple::riscv64, kRiscvTiers, 31},
};

constexpr unsigned kScalarBits = 64;
constexpr unsigned kDefaultScalarRegs = 16;
constexpr size_t kSuggestions = 6;

llvm::Error spec_error(const llvm::Twine &message) {
  return llvm::createStringError(std::make_error_code(std::errc::invalid_argument), message);
}

const BaseRow *find_base(llvm::StringRef name) {
  for (const BaseRow &row : kBases) {
    if (name == row.name) return &row;
  }
  return nullptr;
}

std::string known_bases_text() {
  std::string out;
  for (const BaseRow &row : kBases) {
    if (!out.empty()) out += ", ";
    out += row.name;
  }
  for (const AliasRow &alias : kAliases) out += std::string(", ") + alias.name + " (= " + alias.base + ")";
  return out;
}

std::string base_triple(const BaseRow &row) {
  return *row.triple ? std::string(row.triple) : llvm::sys::getProcessTriple();
}

std::string base_cpu(const BaseRow &row) {
  return *row.triple ? std::string(row.cpu) : llvm::sys::getHostCPUName().str();
}

// The subtarget for triple/cpu/features; errors when the backend is not in this LLVM.
llvm::Expected<std::unique_ptr<llvm::MCSubtargetInfo>> make_subtarget(const std::string &triple,
                                                                      const std::string &cpu,
                                                                      const std::string &features) {
  if (auto err = init_llvm_targets()) return std::move(err);
  std::string error;
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target) {
    return llvm::createStringError(std::errc::not_supported,
                                   "this LLVM has no backend for '%s': %s", triple.c_str(),
                                   error.c_str());
  }
  std::unique_ptr<llvm::MCSubtargetInfo> sti(
      target->createMCSubtargetInfo(triple, cpu, features));
  if (!sti) {
    return llvm::createStringError(std::errc::not_supported,
                                   "no subtarget info for '%s' cpu '%s'", triple.c_str(),
                                   cpu.c_str());
  }
  return std::move(sti);
}

// Reciprocal throughput in cycles of the opcode called `name` on sti's CPU, from LLVM's
// scheduling model; 0 when the model has no number for it (no per-instruction model, an
// unknown name, or a variant class that needs the operands to resolve).
double reciprocal_throughput(const llvm::MCSubtargetInfo &sti, const llvm::MCInstrInfo &mii,
                             llvm::StringRef name) {
  const llvm::MCSchedModel &model = sti.getSchedModel();
  if (!model.hasInstrSchedModel()) return 0;
  for (unsigned op = 0; op < mii.getNumOpcodes(); ++op) {
    if (mii.getName(op) != name) continue;
    const llvm::MCSchedClassDesc *desc = model.getSchedClassDesc(mii.get(op).getSchedClass());
    if (!desc || !desc->isValid() || desc->isVariant()) return 0;
    return llvm::MCSchedModel::getReciprocalThroughput(sti, *desc);
  }
  return 0;
}

// TargetInfo::clmul_cost_xors for a tier on sti's CPU (0 = unknown).
double clmul_cost_xors(const std::string &triple, const llvm::MCSubtargetInfo &sti,
                       const VectorTier &tier) {
  if (!tier.clmul || !tier.vxor) return 0;
  std::string error;
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target) return 0;
  std::unique_ptr<llvm::MCInstrInfo> mii(target->createMCInstrInfo());
  if (!mii) return 0;
  const double clmul = reciprocal_throughput(sti, *mii, tier.clmul);
  const double vxor = reciprocal_throughput(sti, *mii, tier.vxor);
  return clmul > 0 && vxor > 0 ? clmul / vxor : 0;
}

// Checks every change's feature name against the feature table of the base's target.
llvm::Error validate_features(const BaseRow &base, const std::vector<std::string> &changes) {
  if (changes.empty()) return llvm::Error::success();
  auto sti = make_subtarget(base_triple(base), base_cpu(base), "");
  if (!sti) return sti.takeError();
  llvm::ArrayRef<llvm::SubtargetFeatureKV> table = (*sti)->getAllProcessorFeatures();
  for (const std::string &change : changes) {
    llvm::StringRef name = llvm::StringRef(change).drop_front();
    const bool known = llvm::any_of(
        table, [&](const llvm::SubtargetFeatureKV &kv) { return name == kv.Key; });
    if (known) continue;
    // Suggest the nearest names so a typo ("avx512-bw") is one look away from its fix.
    std::vector<std::pair<unsigned, llvm::StringRef>> near;
    for (const llvm::SubtargetFeatureKV &kv : table) {
      near.emplace_back(name.edit_distance(kv.Key), kv.Key);
    }
    std::sort(near.begin(), near.end());
    std::string hint;
    for (size_t i = 0; i < near.size() && i < kSuggestions; ++i) {
      hint += (i ? ", " : "") + near[i].second.str();
    }
    return spec_error("unknown feature '" + name + "' for target base '" + base.name +
                      "' (" + base_triple(base) + "); known features include: " + hint);
  }
  return llvm::Error::success();
}

// Expands aliases in place; returns an error when an alias does not fit the base.
llvm::Error expand_aliases(const BaseRow &base, std::vector<std::string> &changes) {
  std::vector<std::string> out;
  for (std::string &change : changes) {
    if (change == "+hvx") {
      if (!*base.hvx) {
        return spec_error(llvm::Twine("feature alias 'hvx' needs a hexagon base, not '") +
                          base.name + "'");
      }
      out.push_back(std::string("+") + base.hvx);
      out.push_back("+hvx-length128b");
    } else {
      out.push_back(std::move(change));
    }
  }
  changes = std::move(out);
  return llvm::Error::success();
}

bool is_feature_char(char c) {
  return llvm::isAlnum(c) || c == '.' || c == '_' || c == '-';
}

// The full feature string: the base's (or host's) features, then the changes in order.
std::string resolved_features(const BaseRow &base, const std::vector<std::string> &changes) {
  std::vector<std::string> items;
  if (*base.triple) {
    llvm::SmallVector<llvm::StringRef, 8> base_items;
    llvm::StringRef(base.features).split(base_items, ',', -1, false);
    for (llvm::StringRef item : base_items) items.push_back(item.str());
  } else {
    // The host map is self-consistent, so its order does not matter; sort it for stable
    // strings and leave out what a change names (the change comes later and wins anyway).
    llvm::StringMap<bool> host = llvm::sys::getHostCPUFeatures();
    for (const auto &entry : host) {
      llvm::StringRef name = entry.getKey();
      const bool changed = llvm::any_of(
          changes, [&](const std::string &c) { return llvm::StringRef(c).drop_front() == name; });
      if (!changed) items.push_back((entry.getValue() ? "+" : "-") + name.str());
    }
    std::sort(items.begin(), items.end(), [](const std::string &a, const std::string &b) {
      return llvm::StringRef(a).drop_front() < llvm::StringRef(b).drop_front();
    });
    // After every detected feature, so that LLVM also turns off what the hidden ones imply.
    for (const std::string &hidden : host_mask().changes) items.push_back(hidden);
  }
  items.insert(items.end(), changes.begin(), changes.end());
  return llvm::join(items, ",");
}

}  // namespace

llvm::Expected<TargetSpec> TargetSpec::parse(const std::string &text) {
  for (const AliasRow &alias : kAliases) {
    const llvm::StringRef t(text), name(alias.name);
    if (t.starts_with(name) && (t.size() == name.size() || t[name.size()] == '+'))
      return parse(alias.base + t.drop_front(name.size()).str());
  }
  llvm::StringRef s(text);
  if (s.empty()) return spec_error("empty target string; known bases: " + known_bases_text());
  if (s.front() == '+' || s.front() == '-') {
    return spec_error("target '" + s + "' has no base before its features; known bases: " +
                      known_bases_text());
  }
  // Base names contain '-', so take the longest known base followed by the end, '+' or '-'.
  const BaseRow *base = nullptr;
  const BaseRow *prefix_only = nullptr;
  for (const BaseRow &row : kBases) {
    llvm::StringRef name(row.name);
    if (!s.starts_with(name)) continue;
    const bool ends = s.size() == name.size() || s[name.size()] == '+' || s[name.size()] == '-';
    const BaseRow *&slot = ends ? base : prefix_only;
    if (!slot || name.size() > llvm::StringRef(slot->name).size()) slot = &row;
  }
  if (!base) {
    if (prefix_only) {
      return spec_error("malformed target '" + s + "': expected '+' or '-' after base '" +
                        prefix_only->name + "'");
    }
    llvm::StringRef name = s.take_until([](char c) { return c == '+' || c == ','; });
    return spec_error("unknown target base '" + name + "'; known bases: " + known_bases_text());
  }

  TargetSpec spec;
  spec.base = base->name;
  llvm::StringRef rest = s.drop_front(spec.base.size());
  if (!rest.empty()) {
    llvm::SmallVector<llvm::StringRef, 8> items;
    rest.split(items, ',');  // keeps empty items so "a,,b" and "x86_64+" are reported
    for (llvm::StringRef item : items) {
      if (item.empty() || (item.front() != '+' && item.front() != '-')) {
        return spec_error("malformed target '" + s + "': feature '" + item +
                          "' must start with '+' or '-'");
      }
      llvm::StringRef name = item.drop_front();
      if (name.empty()) {
        return spec_error("malformed target '" + s + "': empty feature name after '" +
                          item.take_front() + "'");
      }
      if (!llvm::all_of(name, is_feature_char)) {
        return spec_error("malformed target '" + s + "': bad character in feature '" + name +
                          "'");
      }
      spec.changes.push_back(item.str());
    }
  }
  if (auto err = expand_aliases(*base, spec.changes)) return std::move(err);
  if (auto err = validate_features(*base, spec.changes)) return std::move(err);
  return spec;
}

const HostMask &host_mask() {
  // Never destroyed: a Jit's background thread may resolve "host" while exit handlers run.
  static const HostMask *const mask = new HostMask([] {
    HostMask m;
    const char *env = std::getenv("ECJIT_HOST_MASK");
    if (!env || !*env) return m;
    auto spec = TargetSpec::parse(std::string("host") + (env[0] == '-' || env[0] == '+' ? "" : "-") + env);
    if (!spec) {
      m.error = "ECJIT_HOST_MASK '" + std::string(env) + "': " + llvm::toString(spec.takeError());
      return m;
    }
    for (const std::string &c : spec->changes) {
      if (c[0] != '-') {
        m.error = "ECJIT_HOST_MASK '" + std::string(env) + "': '" + c +
                  "' adds a feature; the mask only hides features (\"-gfni,-avx512f\")";
        return m;
      }
    }
    m.changes = spec->changes;
    return m;
  }());
  return *mask;
}

llvm::StringMap<bool> host_features() {
  llvm::StringMap<bool> host = llvm::sys::getHostCPUFeatures();
  for (const std::string &hidden : host_mask().changes) host[llvm::StringRef(hidden).drop_front()] = false;
  return host;
}

std::string TargetSpec::to_string() const {
  std::string out = base;
  for (size_t i = 0; i < changes.size(); ++i) {
    if (i) out += ',';
    out += changes[i];
  }
  return out;
}

llvm::Expected<ir::TargetInfo> TargetSpec::resolve() const {
  const BaseRow *row = find_base(base);
  if (!row) return spec_error("unknown target base '" + base + "'; known bases: " + known_bases_text());
  if (auto err = validate_features(*row, changes)) return std::move(err);

  ir::TargetInfo info;
  info.triple = base_triple(*row);
  info.cpu = base_cpu(*row);
  info.features = resolved_features(*row, changes);

  auto sti = make_subtarget(info.triple, info.cpu, info.features);
  if (!sti) return sti.takeError();
  const llvm::Triple::ArchType arch = llvm::Triple(info.triple).getArch();
  info.vector_bits = kScalarBits;
  info.vector_regs = kDefaultScalarRegs;
  for (const ArchRow &arch_row : kArches) {
    if (arch_row.arch != arch) continue;
    info.vector_regs = arch_row.scalar_regs;
    for (const VectorTier &tier : arch_row.tiers) {
      if ((*sti)->checkFeatures(tier.features)) {
        info.vector_bits = tier.bits;
        info.vector_regs = tier.regs;
        info.clmul_cost_xors = clmul_cost_xors(info.triple, **sti, tier);
        break;
      }
    }
  }
  // HVX has no 64-bit lanes: 64-bit symbols in HVX vectors make the backend crawl, so
  // wider symbols go through scalar registers there.
  if (arch == llvm::Triple::hexagon && info.vector_bits > kScalarBits) info.max_lane_bits = 32;
  return info;
}

std::vector<std::string> TargetSpec::known_bases() {
  std::vector<std::string> out;
  for (const BaseRow &row : kBases) out.push_back(row.name);
  return out;
}

}  // namespace ecjit::jit
