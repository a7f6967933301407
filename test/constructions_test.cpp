// Code constructions against ISA-L and Jerasure (Debian libraries linked here), MDS results.
#include <gtest/gtest.h>

#include <isa-l/erasure_code.h>
#include <jerasure.h>
#include <jerasure/cauchy.h>
#include <jerasure/reed_sol.h>

#include <cstdlib>
#include <vector>

#include "codes/constructions.h"
#include "codes/linear_code.h"
#include "codes/matrix.h"
#include "codes/mds.h"

using namespace ecjit::codes;

namespace {

LinearCode code(const std::string &spec) {
  auto c = build_code(spec);
  EXPECT_TRUE(c.ok()) << spec << ": " << c.status().to_string();
  return *c;
}

std::string km(unsigned k, unsigned m) { return "k=" + std::to_string(k) + ",m=" + std::to_string(m); }

TEST(Isal, RsMatrixBitForBit) {
  for (unsigned k = 1; k <= 32; ++k)
    for (unsigned m = 1; m <= 16 && k + m <= 255; ++m) {
      std::vector<unsigned char> a((k + m) * k);
      gf_gen_rs_matrix(a.data(), int(k + m), int(k));
      LinearCode c = code("isal-rs:" + km(k, m));
      for (unsigned i = 0; i < m; ++i)
        for (unsigned j = 0; j < k; ++j)
          ASSERT_EQ(c.parity.at(i, j), a[(k + i) * k + j]) << k << "," << m;
    }
}

TEST(Isal, CauchyMatrixBitForBit) {
  for (unsigned k = 1; k <= 64; k += (k < 16 ? 1 : 7))
    for (unsigned m = 1; m <= 32 && k + m <= 255; ++m) {
      std::vector<unsigned char> a((k + m) * k);
      gf_gen_cauchy1_matrix(a.data(), int(k + m), int(k));
      LinearCode c = code("isal-cauchy:" + km(k, m));
      for (unsigned i = 0; i < m; ++i)
        for (unsigned j = 0; j < k; ++j)
          ASSERT_EQ(c.parity.at(i, j), a[(k + i) * k + j]) << k << "," << m;
    }
}

TEST(Isal, InvertMatrixAgrees) {
  Field f = *Field::make(8);
  srand(7);
  int singular_seen = 0;
  for (unsigned n = 1; n <= 24; ++n)
    for (int rep = 0; rep < 20; ++rep) {
      Matrix A(n, n);
      std::vector<unsigned char> in(n * n), out(n * n);
      for (unsigned i = 0; i < n * n; ++i) in[i] = (unsigned char)(A.a[i] = rand() & (rep % 4 ? 0xFF : 0x3));
      std::vector<unsigned char> copy = in;
      const int isal_rc = gf_invert_matrix(copy.data(), out.data(), int(n));
      auto ours = invert(f, A);
      ASSERT_EQ(isal_rc == 0, ours.ok()) << "n=" << n;
      if (!ours.ok()) {
        ++singular_seen;
        continue;
      }
      for (unsigned i = 0; i < n * n; ++i) ASSERT_EQ(ours->a[i], out[i]);
      EXPECT_EQ(multiply(f, A, *ours), Matrix::identity(n));
    }
  EXPECT_GT(singular_seen, 0) << "the sample should include singular matrices";
}

TEST(Jerasure, VandermondeCodingMatrixBitForBit) {
  for (unsigned w : {8u, 16u, 32u})
    for (unsigned k = 1; k <= 20; ++k)
      for (unsigned m = 1; m <= 8; ++m) {
        int *jm = reed_sol_vandermonde_coding_matrix(int(k), int(m), int(w));
        ASSERT_NE(jm, nullptr);
        LinearCode c = code("jerasure-vand:" + km(k, m) + ",gf=" + std::to_string(w));
        for (unsigned i = 0; i < m * k; ++i)
          ASSERT_EQ(c.parity.a[i], uint64_t(uint32_t(jm[i]))) << "w=" << w << " k=" << k << " m=" << m;
        free(jm);
      }
}

TEST(Jerasure, CauchyOriginalBitForBit) {
  for (unsigned w : {8u, 16u, 32u})
    for (unsigned k = 1; k <= 16; ++k)
      for (unsigned m = 1; m <= 6; ++m) {
        int *jm = cauchy_original_coding_matrix(int(k), int(m), int(w));
        ASSERT_NE(jm, nullptr);
        LinearCode c = code("rs-cauchy:" + km(k, m) + ",gf=" + std::to_string(w));
        for (unsigned i = 0; i < m * k; ++i) ASSERT_EQ(c.parity.a[i], uint64_t(uint32_t(jm[i])));
        free(jm);
      }
}

TEST(RsVand, IsSystematicFormOfTheVandermondeMatrix) {
  // Independent of the construction: [I; A] and V (eq. 2.25) span the same code, so
  // every row of V is a combination of the rows of [I; A] with coefficients V_top rows:
  // V = [I; A] * V_top.
  for (unsigned gf : {8u, 16u}) {
    LinearCode c = code("rs-vand:k=5,m=3,gf=" + std::to_string(gf));
    Matrix V(8, 5), top(5, 5);
    for (unsigned i = 0; i < 8; ++i)
      for (unsigned j = 0; j < 5; ++j) V.at(i, j) = c.field.pow(i, j);
    for (unsigned i = 0; i < 5; ++i)
      for (unsigned j = 0; j < 5; ++j) top.at(i, j) = V.at(i, j);
    EXPECT_EQ(multiply(c.field, c.generator(), top), V);
  }
}

TEST(Raidz, MatchesEquation62) {
  LinearCode c = code("raidz:k=4,m=3");
  // alpha = 2; row Q = alpha^3, alpha^2, alpha, 1; row R = alpha^6, alpha^4, alpha^2, 1.
  EXPECT_EQ(c.parity.a, (std::vector<uint64_t>{1, 1, 1, 1, 8, 4, 2, 1, 64, 16, 4, 1}));
}

TEST(Mds, FamiliesThatAreMds) {
  for (const char *s : {"rs-vand:k=10,m=4", "rs-vand:k=6,m=6", "rs-vand:k=12,m=4,gf=16",
                        "rs-cauchy:k=10,m=4", "rs-cauchy:k=16,m=6", "isal-cauchy:k=10,m=4",
                        "isal-rs:k=10,m=4", "jerasure-vand:k=10,m=4", "raidz:k=20,m=3",
                        "rs-cauchy:k=8,m=4,gf=64"}) {
    MdsReport r = check_mds(code(s));
    EXPECT_TRUE(r.mds) << s << ": " << r.to_string();
    EXPECT_TRUE(r.exhaustive) << s;
    EXPECT_GT(r.checked, 0u);
  }
}

TEST(Mds, FlagsIsalVandermondeBeyondItsLimits) {
  // ISA-L documents gf_gen_rs_matrix as not always invertible for large k+m; e.g. k=26, m=6
  // contains a singular square submatrix.
  bool found = false;
  for (unsigned k = 20; k <= 40 && !found; ++k) {
    MdsReport r = check_mds(code("isal-rs:" + km(k, 6)), 50000000);
    if (!r.mds) {
      found = true;
      EXPECT_FALSE(r.bad_rows.empty());
      EXPECT_EQ(r.bad_rows.size(), r.bad_cols.size());
      // The reported submatrix really is singular.
      LinearCode c = code("isal-rs:" + km(k, 6));
      Matrix M(unsigned(r.bad_rows.size()), unsigned(r.bad_rows.size()));
      for (unsigned i = 0; i < M.rows; ++i)
        for (unsigned j = 0; j < M.cols; ++j) M.at(i, j) = c.parity.at(r.bad_rows[i], r.bad_cols[j]);
      EXPECT_FALSE(is_invertible(c.field, M));
    }
  }
  EXPECT_TRUE(found) << "isal-rs with m=6 should stop being MDS for some k <= 40";
}

TEST(Mds, FlagsASingularUserMatrix) {
  MdsReport r = check_mds(code("matrix:k=2,m=2,a=1.1/2.2"));
  EXPECT_FALSE(r.mds);
  EXPECT_NE(r.to_string().find("NOT MDS"), std::string::npos);
}

TEST(Mds, SamplesWhenTooManySubmatrices) {
  MdsReport r = check_mds(code("rs-cauchy:k=40,m=12"), 2000);
  EXPECT_FALSE(r.exhaustive);
  EXPECT_TRUE(r.mds);
  EXPECT_EQ(r.checked, 2000u);
  EXPECT_NE(r.to_string().find("sampled"), std::string::npos);
}

}  // namespace

// A wide code's count of square submatrices saturates at 2^64 - 1: the report says "more
// than" that many instead of claiming the exact figure.
TEST(CheckMds, SaturatedSubmatrixCountSaysMoreThan) {
  const ecjit::codes::MdsReport r = ecjit::codes::check_mds(code("rs-cauchy:k=200,m=56"), 1000);
  EXPECT_FALSE(r.exhaustive);
  EXPECT_EQ(r.total, ~uint64_t(0));
  EXPECT_NE(r.to_string().find("of more than 18446744073709551615 square submatrices"), std::string::npos)
      << r.to_string();
}
