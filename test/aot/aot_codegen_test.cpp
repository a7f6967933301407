// Codegen checks of `ecjit aot` objects (after Halide's simd_op_check), plus the tool's determinism and argument errors.
//
// Each check disassembles an emitted object with llvm-objdump and looks for the instructions
// of the target's tier, and for the absence of those of any higher tier: NEON on AArch64 and
// ARMv7, HVX vector registers on Hexagon with +hvx and VLIW packets of several instructions on
// every Hexagon object, RVV on riscv64-v, and the SSE / AVX2 / AVX-512 split of the x86-64
// tiers.
#include <gtest/gtest.h>

#include <regex>
#include <sstream>
#include <vector>

#include "test/aot/aot_test_util.h"

namespace ecjit::aot_test {
namespace {

struct Check {
  std::string target;
  std::string spec;
  std::vector<std::string> must;      // regexes each matched by some instruction line
  std::vector<std::string> must_not;  // regexes no instruction line may match
};

void PrintTo(const Check &c, std::ostream *os) { *os << c.target << " " << c.spec; }

const char *kGf8 = "rs-vand:k=10,m=4,gf=8";
const char *kGf16 = "rs-cauchy:k=8,m=3,gf=16";

std::vector<Check> checks() {
  const std::string avx = R"(\bv[a-z0-9]+\s)";  // any VEX / EVEX instruction (vpxor, vmovdqu, ...)
  std::vector<Check> v;
  for (const char *spec : {kGf8, kGf16}) {
    // AArch64 NEON: 128-bit vector XOR and shifts / table lookups on v registers.
    v.push_back({"aarch64", spec, {R"(\beor\s+v\d+\.16b)", R"(\b(ushr|shl|tbl)\s+v\d+\.)"}, {R"(\bz\d+\.)"}});
    // ARMv7 NEON (hard float): veor on q registers, vector loads.
    v.push_back({"armv7", spec, {R"(\bveor\s+q\d+)", R"(\bvld1\.)"}, {}});
    // Hexagon HVX: vector memory and XOR on v registers, VLIW packets.
    v.push_back({"hexagon-v68+hvx", spec, {R"(\bvmem\()", R"(\bv\d+\s*=\s*vxor\(v\d+\s*,\s*v\d+\))"}, {}});
    // Hexagon scalar: no HVX at all.
    v.push_back({"hexagon-v68", spec, {R"(\bxor\(r\d+:\d+\s*,\s*r\d+:\d+\))"}, {R"(\bvmem\()", R"(\bv\d+\s*=)"}});
    // RISC-V: RVV only with -v.
    v.push_back({"riscv64-v", spec, {R"(\bvxor\.vv\b)", R"(\bvle(8|16)\.v\b)"}, {}});
    v.push_back({"riscv64", spec, {R"(\bxor\s)"}, {R"(\bv[a-z]+\.v[vxi]?\b)"}});
    // x86-64 tiers: SSE2 only / SSE4.2 / AVX2 / AVX-512, nothing from above the tier.
    v.push_back({"x86_64", spec, {R"(\bpxor\s+%xmm)"}, {avx, R"(%ymm)", R"(%zmm)", R"(\bpshufb\b)"}});
    v.push_back({"x86_64-v2", spec, {R"(\bpxor\s+%xmm)"}, {avx, R"(%ymm)", R"(%zmm)"}});
    v.push_back({"x86_64-v3", spec, {R"(\bvpxor\s.*%ymm)"}, {R"(%zmm)", R"(\bvpternlog)", R"(\{%k\d\})"}});
    v.push_back({"x86_64-v4", spec, {R"(%zmm)"}, {}});
  }
  return v;
}

std::string check_name(const ::testing::TestParamInfo<Check> &i) {
  return ident(i.param.target + "__" + i.param.spec);
}

// Instruction lines of llvm-objdump -d (address, ':', text), without the address.
std::vector<std::string> instructions(const std::string &disassembly) {
  std::vector<std::string> out;
  std::stringstream ss(disassembly);
  std::string line;
  static const std::regex insn(R"(^\s*[0-9a-f]+:\s*(.*)$)");
  std::smatch m;
  while (std::getline(ss, line))
    if (std::regex_match(line, m, insn)) out.push_back(m[1]);
  return out;
}

bool require_objdump() {
  return *ECJIT_LLVM_OBJDUMP && exists(ECJIT_LLVM_OBJDUMP);
}

class AotCodegen : public ::testing::TestWithParam<Check> {};

TEST_P(AotCodegen, UsesTheTiersInstructionsAndNoneAbove) {
  const Check &c = GetParam();
  if (!require_objdump()) {
    if (allow_skip()) GTEST_SKIP() << "llvm-objdump-19 not found";
    FAIL() << "llvm-objdump-19 not found (run scripts/setup.sh)";
  }
  const std::string dir = fresh_dir("cg_" + check_name({c, 0}));
  ASSERT_EQ(ecjit_aot("--spec " + sh(c.spec) + " --target " + sh(c.target) +
                          " --decoders 0,1 --generic -o " + sh(dir + "/codec.o"),
                      dir),
            0)
      << read_file(dir + "/aot.err");
  ASSERT_EQ(run(sh(ECJIT_LLVM_OBJDUMP) + " -d --no-show-raw-insn " + sh(dir + "/codec.o") + " > " +
                sh(dir + "/codec.dis")),
            0);
  const std::vector<std::string> insns = instructions(read_file(dir + "/codec.dis"));
  ASSERT_GT(insns.size(), 20u);
  const std::string where = c.target + " " + c.spec + " (disassembly: " + dir + "/codec.dis)";
  for (const std::string &re : c.must) {
    const std::regex r(re);
    bool found = false;
    for (const std::string &i : insns) found = found || std::regex_search(i, r);
    EXPECT_TRUE(found) << where << ": no instruction matches " << re;
  }
  for (const std::string &re : c.must_not) {
    const std::regex r(re);
    for (const std::string &i : insns)
      if (std::regex_search(i, r)) {
        ADD_FAILURE() << where << ": '" << i << "' matches the forbidden " << re;
        break;
      }
  }
  if (c.target.rfind("hexagon", 0) == 0) {
    // VLIW packets: llvm-objdump opens a packet with '{' and closes it with '}'. Count the
    // packets holding more than one instruction (Nešković 2018, appendix B).
    size_t multi = 0, packets = 0, in_packet = 0;
    for (const std::string &i : insns) {
      if (i.find('{') != std::string::npos) in_packet = 0;
      ++in_packet;
      if (i.find('}') != std::string::npos) {
        ++packets;
        if (in_packet > 1) ++multi;
      }
    }
    EXPECT_GT(packets, 10u) << where;
    EXPECT_GT(multi * 3, packets) << where << ": only " << multi << " of " << packets
                                  << " packets hold more than one instruction";
  }
}

INSTANTIATE_TEST_SUITE_P(Tiers, AotCodegen, ::testing::ValuesIn(checks()), check_name);

// The same request gives the same bytes (object, assembly, IR, header, runtime C).
TEST(AotTool, OutputIsDeterministic) {
  const std::string dir = fresh_dir("determinism");
  for (const char *emit : {"obj", "asm", "ll"}) {
    for (const char *run_name : {"a", "b"}) {
      const std::string base = dir + "/" + run_name + "." + emit;
      ASSERT_EQ(ecjit_aot("--spec rs-cauchy:k=6,m=3,gf=16 --target hexagon-v68+hvx --decoders '0,7;2' "
                          "--generic --emit " + std::string(emit) + " -o " + sh(base) + " --header " +
                          sh(base + ".h"),
                          dir),
                0)
          << read_file(dir + "/aot.err");
    }
    const std::string a = read_file(dir + "/a." + emit), b = read_file(dir + "/b." + emit);
    EXPECT_FALSE(a.empty());
    EXPECT_TRUE(a == b) << emit << " differs between two runs";
    EXPECT_TRUE(read_file(dir + "/a." + emit + ".h") == read_file(dir + "/b." + emit + ".h"));
  }
}

// Bad arguments: exit status 2 and one line on stderr naming the problem.
TEST(AotTool, BadArgumentsExitTwoWithOneLine) {
  const std::string dir = fresh_dir("badargs");
  const std::string o = " -o " + sh(dir + "/x.o");
  const struct {
    std::string args;
    std::string expect;  // in the message
  } kCases[] = {
      {"--spec rs-vand:k=4,m=2 --target sparc64" + o, "hexagon-v68"},  // lists the known bases
      {"--spec rs-vand:k=4,m=2 --target aarch64+nosuchfeature" + o, "nosuchfeature"},
      {"--spec rs-vand:k=4,m=2" + o, "--target is required"},
      {"--spec rs-vand:k=4,m=2 --target aarch64", "-o FILE"},
      {"--spec rs-vand:k=4,m=2 --target aarch64 --emit exe" + o, "--emit"},
      {"--spec rs-vand:k=4,m=2 --target aarch64 --decoders 0,9" + o, "shard 9"},
      {"--spec rs-vand:k=4,m=2 --target aarch64 --decoders 0,1,2" + o, "too-many-erasures"},
      {"--spec rs-vand:k=4,m=2 --target aarch64 --decoders '0;0'" + o, "twice"},
      {"--spec rs-vand:k=4,m=2 --target aarch64 --op decode" + o, "--op"},
      {"--spec rs-vand:k=4,m=2 --target aarch64 --prefix 9x" + o, "--prefix"},
      {"--spec nope --target aarch64" + o, "spec"},
  };
  for (const auto &c : kCases) {
    EXPECT_EQ(ecjit_aot(c.args, dir), 2) << c.args;
    const std::string err = read_file(dir + "/aot.err");
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << c.args << ": " << err;
    EXPECT_NE(err.find(c.expect), std::string::npos) << c.args << ": " << err;
  }
}

}  // namespace
}  // namespace ecjit::aot_test
