// target_spec_test: TargetSpec parsing, round trips, errors, host masking and resolution.
#include "ir_builders/target_features.h"
#include "jit/target_spec.h"

#include <gtest/gtest.h>

#include <string>
#include <system_error>

#include "jit/pipeline.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"

namespace ecjit::jit {
namespace {

const char *const kExamples[] = {
    "host",          "host-avx512f,-avx512bw", "x86_64",          "x86_64-v3",
    "x86_64-v3+gfni", "x86_64+avx512bw,+gfni", "aarch64+neon",    "armv7",
    "hexagon-v68",   "hexagon-v68+hvx",        "riscv64",         "riscv64-v",
    "x86_64-v2",     "x86_64-v4",              "hexagon-v66+hvx", "hexagon-v73",
    "aarch64",
};

bool host_is_x86_64() { return llvm::Triple(llvm::sys::getProcessTriple()).getArch() == llvm::Triple::x86_64; }

TargetSpec parse_ok(const std::string &text) {
  auto spec = TargetSpec::parse(text);
  if (!spec) {
    ADD_FAILURE() << text << ": " << llvm::toString(spec.takeError());
    return TargetSpec{};
  }
  return *spec;
}

ir::TargetInfo resolve_ok(const std::string &text) {
  TargetSpec spec = parse_ok(text);
  auto info = spec.resolve();
  if (!info) {
    ADD_FAILURE() << text << ": " << llvm::toString(info.takeError());
    return ir::TargetInfo{};
  }
  return *info;
}

// The error message of a parse that must fail, and its error code.
std::string error_text(const std::string &text, std::error_code *code = nullptr) {
  auto spec = TargetSpec::parse(text);
  if (spec) {
    ADD_FAILURE() << "'" << text << "' parsed as '" << spec->to_string() << "'";
    return "";
  }
  std::string message;
  llvm::handleAllErrors(spec.takeError(), [&](const llvm::ErrorInfoBase &info) {
    message = info.message();
    if (code) *code = info.convertToErrorCode();
  });
  return message;
}

TEST(TargetSpec, ExamplesParseAndRoundTrip) {
  for (const char *text : kExamples) {
    SCOPED_TRACE(text);
    TargetSpec spec = parse_ok(text);
    auto again = TargetSpec::parse(spec.to_string());
    ASSERT_TRUE(static_cast<bool>(again)) << llvm::toString(again.takeError());
    EXPECT_EQ(*again, spec) << spec.to_string() << " vs " << again->to_string();
  }
}

TEST(TargetSpec, ToStringKeepsWrittenForm) {
  EXPECT_EQ(parse_ok("host-avx512f,-avx512bw").to_string(), "host-avx512f,-avx512bw");
  EXPECT_EQ(parse_ok("x86_64-v3+gfni").to_string(), "x86_64-v3+gfni");
  TargetSpec spec = parse_ok("x86_64+avx512bw,+gfni");
  EXPECT_EQ(spec.base, "x86_64");
  ASSERT_EQ(spec.changes.size(), 2u);
  EXPECT_EQ(spec.changes[0], "+avx512bw");
  EXPECT_EQ(spec.changes[1], "+gfni");
}

TEST(TargetSpec, BaseNamesWithDashesWinOverMasks) {
  EXPECT_EQ(parse_ok("x86_64-v3").base, "x86_64-v3");
  EXPECT_TRUE(parse_ok("x86_64-v3").changes.empty());
  EXPECT_EQ(parse_ok("riscv64-v").base, "riscv64-v");
  TargetSpec masked = parse_ok("riscv64-v-v");
  EXPECT_EQ(masked.base, "riscv64-v");
  ASSERT_EQ(masked.changes.size(), 1u);
  EXPECT_EQ(masked.changes[0], "-v");
  EXPECT_EQ(parse_ok("host-avx2").base, "host");
}

TEST(TargetSpec, HvxAliasExpandsWithBaseVersion) {
  TargetSpec spec = parse_ok("hexagon-v68+hvx");
  ASSERT_EQ(spec.changes.size(), 2u);
  EXPECT_EQ(spec.changes[0], "+hvxv68");
  EXPECT_EQ(spec.changes[1], "+hvx-length128b");
  EXPECT_EQ(parse_ok("hexagon-v73+hvx").changes[0], "+hvxv73");
  EXPECT_NE(error_text("x86_64+hvx").find("hexagon"), std::string::npos);
}

// `hexagon` (what LLVM's -march and `ecjit aot --help` say) is the documented default base
// hexagon-v68; a dash after it still names a base, never a removed feature.
TEST(TargetSpec, PlainHexagonIsAnAliasOfV68) {
  EXPECT_EQ(parse_ok("hexagon").base, "hexagon-v68");
  TargetSpec hvx = parse_ok("hexagon+hvx");
  EXPECT_EQ(hvx.base, "hexagon-v68");
  ASSERT_FALSE(hvx.changes.empty());
  EXPECT_EQ(hvx.changes[0], "+hvxv68");
  EXPECT_NE(error_text("hexagon-v99").find("unknown target base 'hexagon-v99'"), std::string::npos);
  EXPECT_NE(error_text("hexagon-hvx").find("unknown target base"), std::string::npos);
  EXPECT_NE(error_text("sparc64").find("hexagon (= hexagon-v68)"), std::string::npos);
}

TEST(TargetSpec, UnknownBaseListsKnownBases) {
  std::error_code code;
  std::string message = error_text("sparc64+vis", &code);
  EXPECT_EQ(code, std::errc::invalid_argument);
  EXPECT_NE(message.find("sparc64"), std::string::npos) << message;
  for (const std::string &base : TargetSpec::known_bases()) {
    EXPECT_NE(message.find(base), std::string::npos) << base << " missing from: " << message;
  }
  EXPECT_NE(error_text("hexagon-v99").find("known bases"), std::string::npos);
}

TEST(TargetSpec, UnknownFeatureSuggestsNames) {
  std::error_code code;
  std::string message = error_text("x86_64+avx512-bw", &code);
  EXPECT_EQ(code, std::errc::invalid_argument);
  EXPECT_NE(message.find("avx512-bw"), std::string::npos) << message;
  EXPECT_NE(message.find("avx512bw"), std::string::npos) << message;
  EXPECT_NE(error_text("aarch64+avx2").find("unknown feature 'avx2'"), std::string::npos);
  EXPECT_NE(error_text("host-notafeature").find("notafeature"), std::string::npos);
  // "-v5" is read as a mask on x86_64, and v5 is no x86 feature.
  EXPECT_NE(error_text("x86_64-v5").find("unknown feature 'v5'"), std::string::npos);
}

TEST(TargetSpec, MalformedStrings) {
  const char *const bad[] = {"",         "x86_64+",      "+avx2",          "x86_64,avx2",
                             "x86_64+avx2,", "x86_64+avx2,gfni", "x86_64+avx2,,+gfni",
                             "host-",    "x86_64+av x2", "-avx2",          "x86_64+avx2+gfni"};
  for (const char *text : bad) {
    SCOPED_TRACE(text);
    std::error_code code;
    std::string message = error_text(text, &code);
    EXPECT_FALSE(message.empty());
    EXPECT_EQ(code, std::errc::invalid_argument) << message;
  }
  EXPECT_NE(error_text("x86_64,avx2").find("expected '+' or '-'"), std::string::npos);
  EXPECT_NE(error_text("+avx2").find("no base"), std::string::npos);
  EXPECT_NE(error_text("x86_64+").find("empty feature"), std::string::npos);
}

TEST(TargetSpec, ResolveForeignBasesMakesTargetMachines) {
  struct Case {
    const char *spec;
    llvm::Triple::ArchType arch;
    unsigned vector_bits;
  };
  const Case cases[] = {
      {"x86_64", llvm::Triple::x86_64, 128},
      {"x86_64-v2", llvm::Triple::x86_64, 128},
      {"x86_64-v3", llvm::Triple::x86_64, 256},
      {"x86_64-v3+gfni", llvm::Triple::x86_64, 256},
      {"x86_64-v4", llvm::Triple::x86_64, 512},
      {"x86_64+avx512bw,+gfni", llvm::Triple::x86_64, 512},
      {"x86_64-v4-avx512bw", llvm::Triple::x86_64, 256},
      {"x86_64-sse2", llvm::Triple::x86_64, 64},
      {"aarch64", llvm::Triple::aarch64, 128},
      {"aarch64-neon", llvm::Triple::aarch64, 64},
      {"armv7", llvm::Triple::arm, 128},
      {"armv7-neon", llvm::Triple::arm, 64},
      {"hexagon-v66", llvm::Triple::hexagon, 64},
      {"hexagon-v68", llvm::Triple::hexagon, 64},
      {"hexagon-v68+hvx", llvm::Triple::hexagon, 1024},
      {"hexagon-v68+hvxv68,+hvx-length64b", llvm::Triple::hexagon, 512},
      {"hexagon-v73+hvx", llvm::Triple::hexagon, 1024},
      {"riscv64", llvm::Triple::riscv64, 64},
      {"riscv64-v", llvm::Triple::riscv64, 128},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.spec);
    ir::TargetInfo info = resolve_ok(c.spec);
    EXPECT_EQ(llvm::Triple(info.triple).getArch(), c.arch) << info.triple;
    EXPECT_EQ(info.vector_bits, c.vector_bits) << info.features;
    EXPECT_GT(info.vector_regs, 0u);
    auto tm = make_target_machine(info, OptLevel::kO2);
    ASSERT_TRUE(static_cast<bool>(tm)) << llvm::toString(tm.takeError());
    EXPECT_EQ((*tm)->getTargetTriple().getArch(), c.arch);
    EXPECT_EQ((*tm)->getTargetCPU(), info.cpu);
  }
}

TEST(TargetSpec, ForeignFeaturesAreAppendedInOrder) {
  ir::TargetInfo info = resolve_ok("x86_64-v3+gfni,-avx2");
  EXPECT_EQ(info.cpu, "x86-64-v3");
  EXPECT_EQ(info.features, "+gfni,-avx2");
  EXPECT_EQ(info.vector_bits, 128u);
  EXPECT_EQ(resolve_ok("riscv64-v").features, "+m,+a,+f,+d,+c,+v");
}

TEST(TargetSpec, HostResolvesToProcess) {
  ir::TargetInfo info = resolve_ok("host");
  EXPECT_EQ(info.triple, llvm::sys::getProcessTriple());
  EXPECT_EQ(info.cpu, llvm::sys::getHostCPUName().str());
  EXPECT_FALSE(info.features.empty());
  EXPECT_GE(info.vector_bits, 64u);
}

// Lower tiers are forced by masking host features, never by global state.
TEST(TargetSpec, MaskedHostReportsLowerTiers) {
  if (!host_is_x86_64()) GTEST_SKIP() << "x86-64 host tiers";
  ir::TargetInfo host = resolve_ok("host");
  // What the resolved host has (LLVM's implications applied: ECJIT_HOST_MASK may hide some).
  const bool has_avx512bw = ir::has_feature(host, "avx512bw");
  const bool has_avx2 = ir::has_feature(host, "avx2");
  if (has_avx512bw) {
    EXPECT_EQ(host.vector_bits, 512u);
    ir::TargetInfo masked = resolve_ok("host-avx512f");
    EXPECT_LT(masked.vector_bits, host.vector_bits);
    EXPECT_EQ(masked.vector_bits, 256u);
  } else if (has_avx2) {
    EXPECT_EQ(host.vector_bits, 256u);
  }
  // Masking a feature the host lacks changes nothing.
  ir::TargetInfo no512 = resolve_ok("host-avx512f,-avx512bw");
  EXPECT_EQ(no512.vector_bits, has_avx512bw ? 256u : host.vector_bits);
  EXPECT_NE(no512.features.find("-avx512f"), std::string::npos);

  ir::TargetInfo avx = resolve_ok("host-avx2");
  EXPECT_EQ(avx.vector_bits, 128u);
  EXPECT_LT(avx.vector_bits, host.vector_bits);
  // The mask appears once, after the host's features, so it wins.
  llvm::StringRef features(avx.features);
  EXPECT_TRUE(features.ends_with("-avx2")) << avx.features;
  EXPECT_FALSE(features.contains("+avx2,")) << avx.features;

  EXPECT_EQ(resolve_ok("host-avx2,-sse2").vector_bits, 64u);
  EXPECT_EQ(resolve_ok("host-sse2").vector_bits, 64u);  // implications: avx2 needs sse2
}

TEST(TargetSpec, ResolveRejectsHandBuiltBadSpecs) {
  TargetSpec unknown_base{"vax", {}};
  auto info = unknown_base.resolve();
  ASSERT_FALSE(static_cast<bool>(info));
  EXPECT_NE(llvm::toString(info.takeError()).find("known bases"), std::string::npos);

  TargetSpec unknown_feature{"x86_64", {"+nope"}};
  auto info2 = unknown_feature.resolve();
  ASSERT_FALSE(static_cast<bool>(info2));
  EXPECT_NE(llvm::toString(info2.takeError()).find("nope"), std::string::npos);
}

}  // namespace
}  // namespace ecjit::jit
