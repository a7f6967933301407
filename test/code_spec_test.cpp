// CodeSpec: parsing, canonical round trip, and one test per bad spec with its error.
#include <gtest/gtest.h>

#include <string>
#include <tuple>

#include "codes/bitmatrix_code.h"
#include "codes/families.h"
#include "codes/linear_code.h"
#include "codes/rs_auto.h"
#include "codes/rs_fft.h"
#include "ecjit/code_spec.h"

using ecjit::CodeFamily;
using ecjit::CodeSpec;
using ecjit::StatusCode;

namespace {

TEST(CodeSpec, ParsesAndRoundTrips) {
  const char *specs[] = {
      "rs-vand:k=10,m=4,gf=8",       "rs-vand:k=20,m=6,gf=16,poly=0x1100b",
      "rs-cauchy:k=10,m=4,gf=8",     "rs-cauchy:k=12,m=4,gf=64",
      "isal-rs:k=10,m=4",            "isal-cauchy:k=8,m=3,gf=8",
      "jerasure-vand:k=6,m=3,gf=32", "raidz:k=5,m=3",
      "rs-vand:k=4,m=2,gf=8,poly=0x12d",
      "matrix:k=3,m=2,gf=8,a=1.1.1/1.2.3",
      "matrix:k=2,m=1,gf=64,a=ffffffffffffffff.0x10",
      "rs-fft:k=32,m=32",            "rs-fft:k=4,m=2,gf=16",
      "rs-fft:k=32768,m=32768",      "rs-fft:k=65535,m=1",
      "rs-fft:k=1,m=65535",          "rs-fft:k=61440,m=4096",
  };
  for (const char *t : specs) {
    auto s = CodeSpec::parse(t);
    ASSERT_TRUE(s.ok()) << t << ": " << s.status().to_string();
    auto again = CodeSpec::parse(s->to_string());
    ASSERT_TRUE(again.ok()) << s->to_string();
    EXPECT_EQ(*again, *s) << t;
    EXPECT_EQ(again->to_string(), s->to_string());
  }
}

TEST(CodeSpec, CanonicalForm) {
  auto s = CodeSpec::parse("rs-vand:m=6,gf=16,k=20,poly=0x1100b");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->to_string(), "rs-vand:k=20,m=6,gf=16");  // the default polynomial is implied
  s = CodeSpec::parse("rs-vand:k=4,m=2,poly=0x2d");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->to_string(), "rs-vand:k=4,m=2,gf=8,poly=0x12d");
  s = CodeSpec::parse("matrix:k=2,m=2,a=0x1.0x2/3.4");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->to_string(), "matrix:k=2,m=2,gf=8,a=1.2/3.4");
  EXPECT_EQ(s->family, CodeFamily::kMatrix);
  EXPECT_EQ(s->matrix, (std::vector<uint64_t>{1, 2, 3, 4}));
}

// rs-fft: GF(2^16) by default, its own shard rule (reed-solomon-simd's), not a matrix code.
TEST(CodeSpec, RsFft) {
  auto s = CodeSpec::parse("rs-fft:m=4,k=10");
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  EXPECT_EQ(s->family, CodeFamily::kRsFft);
  EXPECT_EQ(s->gf, 16u);
  EXPECT_EQ(s->to_string(), "rs-fft:k=10,m=4,gf=16");
  EXPECT_EQ(*CodeSpec::parse(s->to_string()), *s);
  EXPECT_EQ(s->symbol_bytes(), 2u);
  // Past kMaxShards (every other family's limit) up to the crate's rule.
  auto wide = CodeSpec::parse("rs-fft:k=40000,m=8000");
  ASSERT_TRUE(wide.ok()) << wide.status().to_string();
  EXPECT_GT(wide->k + wide->m, ecjit::kMaxShards);
  // The spec is valid, but there is no parity matrix over a polynomial basis to build.
  auto code = ecjit::codes::build_code(*s);
  ASSERT_FALSE(code.ok());
  EXPECT_EQ(code.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(code.status().message().find("not a matrix code"), std::string::npos);
}

struct Bad {
  const char *spec;
  const char *needle;  // a piece of the message that says what is wrong
};

class BadSpec : public ::testing::TestWithParam<Bad> {};

TEST_P(BadSpec, IsRejectedWithItsMessage) {
  auto s = CodeSpec::parse(GetParam().spec);
  ASSERT_FALSE(s.ok()) << GetParam().spec;
  EXPECT_EQ(s.status().code(), StatusCode::kInvalidSpec);
  EXPECT_NE(s.status().message().find(GetParam().needle), std::string::npos)
      << GetParam().spec << " -> " << s.status().message();
  // Building from the text gives the same error: never a crash.
  auto c = ecjit::codes::build_code(GetParam().spec);
  EXPECT_FALSE(c.ok());
}

INSTANTIATE_TEST_SUITE_P(
    All, BadSpec,
    ::testing::Values(
        Bad{"", "expected <family>"}, Bad{"rs-vand", "expected <family>"},
        Bad{"reed:k=1,m=1", "unknown code family"}, Bad{"rs:k=10,m=4,gf=8", "rs takes k and m only"},
        Bad{"rs:k=10", "missing m="}, Bad{"rs:k=0,m=4", "k and m must be at least 1"},
        Bad{"rs:k=10,m=x", "is not a number"}, Bad{"rs:k=4,m=4,k=5", "given twice"},
        Bad{"rs:k=40000,m=40000", "no construction takes it"}, Bad{"rs-vand:k=0,m=4", "k must be at least 1"},
        Bad{"rs-vand:k=4,m=0", "m must be at least 1"}, Bad{"rs-vand:m=4", "missing k="},
        Bad{"rs-vand:k=4", "missing m="}, Bad{"rs-vand:k=4x,m=2", "not a decimal number"},
        Bad{"rs-vand:k=-4,m=2", "not a decimal number"},
        Bad{"rs-vand:k=99999999999999999999,m=2", "not a decimal number"},
        Bad{"rs-vand:k=4,m=2,gf=12", "gf=12 is not supported"},
        Bad{"rs-vand:k=4,m=2,speed=9", "unknown key 'speed'"},
        Bad{"rs-vand:k=4,m=2,k=5", "given twice"}, Bad{"rs-vand:k=4,,m=2", "not key=value"},
        Bad{"rs-vand:k=4,m=2,", "not key=value"}, Bad{"rs-vand:k=250,m=10", "k+m <= 2^8"},
        Bad{"rs-cauchy:k=200,m=57,gf=8", "k+m <= 2^8"},
        Bad{"rs-vand:k=4000,m=200,gf=16", "exceeds the limit"},
        Bad{"rs-vand:k=4,m=2,poly=0x11b", "not primitive"},
        Bad{"rs-vand:k=4,m=2,poly=0x31d", "degree above 8"},
        Bad{"rs-vand:k=4,m=2,poly=zz", "not a number"},
        // X^l alone: stripped of X^l nothing is left (it used to select the default silently).
        Bad{"rs-vand:k=4,m=2,poly=0x100", "X^8 (no lower terms) is not primitive"},
        Bad{"rs-cauchy:k=4,m=2,gf=16,poly=0x10000", "X^16 (no lower terms) is not primitive"},
        Bad{"rs-vand:k=4,m=2,gf=32,poly=0x100000000", "X^32 (no lower terms) is not primitive"},
        Bad{"matrix:k=2,m=1,gf=8,poly=0x100,a=1.2", "X^8 (no lower terms) is not primitive"},
        Bad{"isal-rs:k=4,m=2,gf=16", "GF(2^8) only"},
        Bad{"isal-cauchy:k=4,m=2,poly=0x12d", "poly cannot be changed"},
        Bad{"isal-rs:k=250,m=6", "k+m <= 255"},
        Bad{"jerasure-vand:k=4,m=2,gf=64", "w = 8, 16, 32"},
        Bad{"raidz:k=4,m=4", "m = 1 (P), 2 (PQ) or 3 (PQR)"},
        Bad{"raidz:k=4,m=2,gf=16", "GF(2^8) only"}, Bad{"raidz:k=300,m=1", "k <= 255"},
        Bad{"matrix:k=3,m=2,gf=8", "needs a="},
        Bad{"matrix:k=3,m=2,gf=8,a=1.1.1/1.2", "has 2 entries, row 0 has 3"},
        Bad{"matrix:k=3,m=2,gf=8,a=1.1.1", "1 x 3 but m x k = 2 x 3"},
        Bad{"matrix:k=2,m=1,gf=8,a=1.100", "not an element of GF(2^8)"},
        Bad{"matrix:k=2,m=1,gf=8,a=1.q", "not a hex number"},
        Bad{"rs-vand:k=2,m=1,a=1.1", "only valid for the matrix family"},
        Bad{"rs-vand:k=4000,m=200,gf=16", "rs-vand, like every family but rs-fft, takes k+m <= 4096"},
        Bad{"cauchy-good:k=4000,m=200,w=16", "takes k+m <= 4096"},
        // rs-fft: the crate's shard rule, its field only, no poly= or a=.
        Bad{"rs-fft:k=32769,m=32768", "min(next_pow2(k), next_pow2(m)) + max(k, m) = 65537 > 65536"},
        Bad{"rs-fft:k=65536,m=1", "= 65537 > 65536"},
        Bad{"rs-fft:k=40000,m=40000", "past reed-solomon-simd's limit"},
        Bad{"rs-fft:k=0,m=4", "k must be at least 1"},
        Bad{"rs-fft:k=200,m=57,gf=8", "k + next_pow2(m) = 264 > 256"},
        Bad{"rs-fft:k=6,m=250,gf=8", "past Leopard-RS's GF(2^8) limit"},
        Bad{"rs-fft:k=4,m=2,gf=32", "rs-fft runs over reed-solomon-simd's GF(2^16) (gf=16, the default) or Leopard-RS's GF(2^8)"},
        Bad{"rs-fft:k=4,m=2,poly=0x1002d", "unknown key 'poly'"},
        Bad{"rs-fft:k=4,m=2,poly=0x1002d", "no poly= and no a="},
        Bad{"rs-fft:k=2,m=1,a=1.1", "unknown key 'a'"},
        Bad{"rs-fft:k=4,m=2,w=8", "keys of rs-fft: k, m, gf"},
        Bad{"bitmatrix-of:of=rs-fft,k=4,m=2,w=16", "rs-fft has no matrix over a polynomial basis"}),
    [](const auto &info) { return "case" + std::to_string(info.index); });

}  // namespace

// packet=auto: kept as such by the spec (round trip, unequal to any explicit packet), refused
// by the code builders (a Jit resolves it by timing), and a misspelt value named.
// rs:k=,m= against measurement: encode and rebuild of m random lost shards, GB/s, `ecjit demo
// --spec S --size 64K --lose <m random shards> --seconds 0.5` (Zen 5 with AVX-512
// and GFNI, one thread) for rs-cauchy (GF(2^8)) and rs-fft. The model picks the construction
// whose 1 / encode + 1 / rebuild measured least at every point, and predicts each rate within
// 2x past 40 shards.
TEST(CodeSpec, RsChoosesTheConstructionTheMeasurementsFavour) {
  struct Point {
    unsigned k, m;
    double matrix_enc, matrix_dec, fft_enc, fft_dec;
  };
  // docs/performance.md, "rs: matrix or FFT": the FFT's rates are GF(2^8)'s where k + next_pow2(m)
  // <= 256, else GF(2^16)'s (200:56).
  const Point points[] = {
      {6, 3, 134.1, 144.3, 134.1, 52.1},   {10, 4, 121.5, 121.3, 138.5, 31.6}, {16, 4, 91.5, 86.4, 91.9, 26.1},
      {20, 10, 46.7, 38.6, 19.0, 12.5},    {32, 8, 53.4, 32.2, 35.0, 16.4},    {32, 32, 7.71, 5.42, 24.6, 8.52},
      {64, 16, 19.6, 11.96, 28.0, 7.44},   {64, 64, 3.24, 2.40, 24.0, 6.38},   {100, 28, 9.27, 5.21, 20.4, 7.17},
      {128, 128, 1.65, 1.43, 14.8, 4.82},  {200, 56, 4.12, 4.22, 16.1, 3.61},
  };
  for (const Point &p : points) {
    const std::string name = std::to_string(p.k) + ":" + std::to_string(p.m);
    const bool fft_measured = 1 / p.fft_enc + 1 / p.fft_dec < 1 / p.matrix_enc + 1 / p.matrix_dec;
    auto s = CodeSpec::parse("rs:k=" + std::to_string(p.k) + ",m=" + std::to_string(p.m));
    ASSERT_TRUE(s.ok()) << name << ": " << s.status().to_string();
    EXPECT_EQ(s->family, fft_measured ? CodeFamily::kRsFft : CodeFamily::kRsCauchy) << name << ": " << s->chosen_by;
    EXPECT_EQ(s->k, p.k);
    EXPECT_EQ(s->m, p.m);
    EXPECT_NE(s->chosen_by.find(s->to_string()), std::string::npos) << s->chosen_by;
    if (s->family == CodeFamily::kRsFft)  // Leopard-RS's GF(2^8) wherever its 256 points take the code
      EXPECT_EQ(s->gf, ecjit::codes::fft::geometry(p.k, p.m, ecjit::codes::fft::Gf::k8).ok() ? 8u : 16u) << name;
    if (p.k + p.m <= 40) continue;
    const ecjit::codes::RsCost mc = ecjit::codes::matrix_cost(p.k, p.m, 8), fc = ecjit::codes::fft_cost(p.k, p.m);
    for (const auto &[model, measured, what] :
         {std::make_tuple(mc.encode, p.matrix_enc, "matrix encode"), std::make_tuple(mc.decode, p.matrix_dec, "matrix rebuild"),
          std::make_tuple(fc.encode, p.fft_enc, "fft encode"), std::make_tuple(fc.decode, p.fft_dec, "fft rebuild")}) {
      const double ratio = (1 / model) / measured;
      EXPECT_TRUE(ratio > 0.5 && ratio < 2) << name << " " << what << ": model " << 1 / model << " GB/s, measured "
                                            << measured;
    }
  }
  // Past GF(2^8)'s 256 shards the matrix is GF(2^16); past kMaxShards only the FFT remains.
  auto wide = CodeSpec::parse("rs:k=300,m=20");
  ASSERT_TRUE(wide.ok());
  EXPECT_EQ(wide->family, CodeFamily::kRsFft);
  EXPECT_NE(wide->chosen_by.find("rs-cauchy:k=300,m=20,gf=16"), std::string::npos) << wide->chosen_by;
  auto widest = CodeSpec::parse("rs:k=8000,m=100");
  ASSERT_TRUE(widest.ok());
  EXPECT_EQ(widest->family, CodeFamily::kRsFft);
  EXPECT_NE(widest->chosen_by.find("the only construction"), std::string::npos) << widest->chosen_by;
  // The chosen spec is an ordinary spec: it round-trips, equal to the named one.
  EXPECT_EQ(*CodeSpec::parse(wide->to_string()), *wide);
}

TEST(CodeSpec, PacketAuto) {
  auto s = CodeSpec::parse("cauchy-good:k=4,m=2,w=8,packet=auto");
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  EXPECT_TRUE(s->packet_auto);
  EXPECT_EQ(s->to_string(), "cauchy-good:k=4,m=2,w=8,packet=auto");
  EXPECT_TRUE(*CodeSpec::parse(s->to_string()) == *s);
  EXPECT_FALSE(*CodeSpec::parse("cauchy-good:k=4,m=2,w=8,packet=64") == *s);
  EXPECT_FALSE(*CodeSpec::parse("cauchy-good:k=4,m=2,w=8") == *s);
  auto code = ecjit::codes::build_bitmatrix_code(*s);
  ASSERT_FALSE(code.ok());
  EXPECT_EQ(code.status().code(), StatusCode::kInvalidSpec);
  EXPECT_NE(code.status().message().find("packet=auto is chosen by timing when a Jit makes the codec"),
            std::string::npos)
      << code.status().message();
  auto bad = CodeSpec::parse("cauchy-good:k=4,m=2,w=8,packet=automatic");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("packet='automatic'"), std::string::npos) << bad.status().message();
  EXPECT_FALSE(CodeSpec::parse("rs-vand:k=4,m=2,packet=auto").ok());  // symbol codes have no packets
}


// The family registry: every row's name parses back to its family, names its kind, and a
// matrix row builds a code whose parity matrix has the spec's shape; every other layer
// dispatches on codec_kind alone.
TEST(CodeSpec, EveryRegistryRowParsesBuildsAndNamesItsKind) {
  using ecjit::codes::CodecKind;
  for (const ecjit::codes::SymbolFamily &row : ecjit::codes::symbol_families()) {
    // k = 3 data shards, m = 2 parity (lrc: one local group and one global parity; ceph-lrc:
    // one global parity and one group of l = 4 chunks and its local parity).
    const std::string shape = row.family == CodeFamily::kCephLrc ? ":k=3,m=1,l=4"
                              : row.read_keys                    ? ":k=3,l=1,r=1"
                                                                 : ":k=3,m=2";
    const std::string text = std::string(row.name) + shape +
                             (row.family == CodeFamily::kMatrix ? ",a=1.1.1/1.2.3" : "");
    auto spec = CodeSpec::parse(text);
    ASSERT_TRUE(spec.ok()) << text << ": " << spec.status().to_string();
    EXPECT_EQ(spec->family, row.family) << text;
    EXPECT_STREQ(ecjit::family_name(row.family), row.name);
    EXPECT_EQ(ecjit::codes::symbol_family(row.family), &row);
    EXPECT_EQ(ecjit::codes::codec_kind(*spec), row.kind) << text;
    auto code = ecjit::codes::build_code(*spec);
    if (row.kind == CodecKind::kMatrix) {
      ASSERT_TRUE(code.ok()) << text << ": " << code.status().to_string();
      EXPECT_EQ(code->parity.rows, 2u) << text;
      EXPECT_EQ(code->parity.cols, 3u) << text;
    } else {
      ASSERT_FALSE(code.ok()) << text;
      EXPECT_EQ(code.status().code(), StatusCode::kUnsupported) << text;
    }
  }
  EXPECT_EQ(ecjit::codes::codec_kind(*CodeSpec::parse("rs-vand:k=10,m=4")), CodecKind::kMatrix);
  EXPECT_EQ(ecjit::codes::codec_kind(*CodeSpec::parse("rs-fft:k=32,m=32,gf=8")), CodecKind::kFft);
  EXPECT_EQ(ecjit::codes::codec_kind(*CodeSpec::parse("cauchy-good:k=10,m=4,w=8")), CodecKind::kBitmatrix);
  EXPECT_EQ(ecjit::codes::codec_kind(*CodeSpec::parse("rdp:p=7")), CodecKind::kBitmatrix);
  EXPECT_EQ(ecjit::codes::codec_kind(*CodeSpec::parse("bitmatrix-of:of=rs-vand,k=4,m=2,w=8")), CodecKind::kBitmatrix);
  EXPECT_EQ(ecjit::codes::symbol_family(CodeFamily::kCauchyGood), nullptr);
  CodeFamily f;
  EXPECT_TRUE(ecjit::codes::find_family("liberation", &f));
  EXPECT_EQ(f, CodeFamily::kLiberation);
  EXPECT_FALSE(ecjit::codes::find_family("rs", &f));  // "rs:" chooses a family; it is none itself
  // bitmatrix-of expands matrix families only.
  auto fft_of = CodeSpec::parse("bitmatrix-of:of=rs-fft,k=4,m=2,w=8");
  ASSERT_FALSE(fft_of.ok());
  EXPECT_NE(fft_of.status().message().find("rs-fft has no matrix over a polynomial basis"), std::string::npos)
      << fft_of.status().message();
}
