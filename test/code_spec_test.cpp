// CodeSpec: parsing, canonical round trip, and one test per bad spec with its error.
#include <gtest/gtest.h>

#include "codes/linear_code.h"
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
        Bad{"reed:k=1,m=1", "unknown code family"}, Bad{"rs-vand:k=0,m=4", "k must be at least 1"},
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
        Bad{"rs-vand:k=2,m=1,a=1.1", "only valid for the matrix family"}),
    [](const auto &info) { return "case" + std::to_string(info.index); });

}  // namespace
