// GF(2^l) arithmetic: exhaustive GF(2^8)/GF(2^16) checks, ISA-L known answers, field axioms.
#include <gtest/gtest.h>

#include <isa-l/erasure_code.h>

#include <random>

#include "codes/gf.h"

using ecjit::StatusCode;
using ecjit::codes::Field;

namespace {

Field field(unsigned l, uint64_t poly = 0) {
  auto f = Field::make(l, poly);
  EXPECT_TRUE(f.ok()) << f.status().to_string();
  return *f;
}

TEST(Gf8, ExhaustiveMultiplyMatchesPlainAndIsal) {
  Field f = field(8);
  for (unsigned a = 0; a < 256; ++a)
    for (unsigned b = 0; b < 256; ++b) {
      const uint64_t r = f.mul(a, b);
      ASSERT_EQ(r, f.mul_plain(a, b)) << a << "*" << b;
      ASSERT_EQ(r, gf_mul((unsigned char)a, (unsigned char)b)) << a << "*" << b;
    }
}

TEST(Gf8, ExhaustiveInverseMatchesIsal) {
  Field f = field(8);
  EXPECT_EQ(f.inv(0), 0u);
  for (unsigned a = 1; a < 256; ++a) {
    ASSERT_EQ(f.mul(a, f.inv(a)), 1u) << a;
    ASSERT_EQ(f.inv(a), gf_inv((unsigned char)a)) << a;
  }
}

TEST(Gf8, BarrettConstantsOfNeskovic2018) {
  // Eq. 6.14: p(X) = X^8+X^4+X^3+X^2+1 gives p* = X^4+X^3+X^2+1, q+ = X^8+X^4+X^3+X^2.
  Field f = field(8, 0x11D);
  EXPECT_EQ(f.poly(), 0x1Du);
  EXPECT_EQ(f.qplus_low(), 0x1Cu);
}

TEST(Gf16, ExhaustiveInverse) {
  Field f = field(16);
  for (uint64_t a = 1; a < 65536; ++a) ASSERT_EQ(f.mul(a, f.inv(a)), 1u) << a;
}

TEST(Gf16, BarrettEqualsPlainOnRandomPairs) {
  Field f = field(16);
  std::mt19937_64 rng(16);
  for (int i = 0; i < 200000; ++i) {
    uint64_t a = rng() & 0xFFFF, b = rng() & 0xFFFF;
    ASSERT_EQ(f.mul(a, b), f.mul_plain(a, b));
  }
}

class GfWide : public ::testing::TestWithParam<unsigned> {};

TEST_P(GfWide, FieldAxiomsAndBarrett) {
  const unsigned l = GetParam();
  Field f = field(l);
  std::mt19937_64 rng(l);
  const uint64_t mask = f.mask();
  for (int i = 0; i < 20000; ++i) {
    uint64_t a = rng() & mask, b = rng() & mask, c = rng() & mask;
    ASSERT_EQ(f.mul(a, b), f.mul_plain(a, b));
    ASSERT_EQ(f.mul(a, b), f.mul(b, a));
    ASSERT_EQ(f.mul(f.mul(a, b), c), f.mul(a, f.mul(b, c)));
    ASSERT_EQ(f.mul(a, b ^ c), f.mul(a, b) ^ f.mul(a, c));
    ASSERT_EQ(f.mul(a, 1), a);
    if (a) ASSERT_EQ(f.mul(a, f.inv(a)), 1u);
  }
  // X generates the group: X^(2^l - 1) = 1, and Fermat: a^(2^l) = a.
  EXPECT_EQ(f.pow(2, f.order()), 1u);
  for (int i = 0; i < 100; ++i) {
    uint64_t a = rng() & mask;
    EXPECT_EQ(f.mul(f.pow(a, f.order()), a), a);
  }
}

INSTANTIATE_TEST_SUITE_P(All, GfWide, ::testing::Values(8u, 16u, 32u, 64u),
                         [](const auto &i) { return "gf" + std::to_string(i.param); });

TEST(GfPoly, DefaultsArePrimitive) {
  EXPECT_TRUE(ecjit::codes::is_primitive(8, 0x1D));
  EXPECT_TRUE(ecjit::codes::is_primitive(16, 0x100B));
  EXPECT_TRUE(ecjit::codes::is_primitive(32, 0x400007));
  EXPECT_TRUE(ecjit::codes::is_primitive(64, 0x1B));
}

TEST(GfPoly, AlternativePrimitivePolynomials) {
  // X^8+X^4+X^3+X+1 (AES, 0x11B) is irreducible but NOT primitive; 0x12D is primitive.
  EXPECT_FALSE(Field::make(8, 0x11B).ok());
  EXPECT_TRUE(Field::make(8, 0x12D).ok());
  Field f = field(8, 0x12D);
  for (unsigned a = 1; a < 256; ++a) ASSERT_EQ(f.mul(a, f.inv(a)), 1u);
  // The explicit and the implied X^l forms are the same field.
  EXPECT_TRUE(field(16, 0x1100B) == field(16, 0x100B));
}

TEST(GfPoly, RejectsNonPrimitiveAndBadDegree) {
  auto reducible = Field::make(8, 0x100);  // X^8: divisible by X
  ASSERT_FALSE(reducible.ok());
  EXPECT_EQ(reducible.status().code(), StatusCode::kInvalidSpec);
  EXPECT_NE(reducible.status().message().find("not primitive"), std::string::npos);
  EXPECT_FALSE(Field::make(8, 0x11C).ok());    // even: X divides it
  EXPECT_FALSE(Field::make(8, 0x31D).ok());    // degree 9
  EXPECT_FALSE(Field::make(16, 0x1100A).ok());
  EXPECT_FALSE(Field::make(64, 0x1A).ok());
  auto bad_l = Field::make(12);
  ASSERT_FALSE(bad_l.ok());
  EXPECT_EQ(bad_l.status().code(), StatusCode::kInvalidSpec);
}

TEST(Clmul, KnownProducts) {
  auto r = ecjit::codes::clmul64(0x3, 0x3);  // (X+1)^2 = X^2+1
  EXPECT_EQ(r.lo, 0x5u);
  EXPECT_EQ(r.hi, 0u);
  r = ecjit::codes::clmul64(uint64_t(1) << 63, uint64_t(1) << 63);  // X^126
  EXPECT_EQ(r.lo, 0u);
  EXPECT_EQ(r.hi, uint64_t(1) << 62);
}

}  // namespace
