// XOR bit-matrix codes against Debian's libJerasure 2: the families' bit-matrices, encode
// byte for byte through the public API, every erasure set, schedules checked symbolically,
// and the codec operations against the reference bit-matrix codec.
#include <gtest/gtest.h>

#include "ir_builders/xor_kernel.h"

#include <jerasure.h>
#include <jerasure/cauchy.h>
#include <jerasure/liberation.h>
#include <jerasure/reed_sol.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <atomic>
#include <random>
#include <thread>
#include <string>
#include <vector>

#include "background_gate.h"
#include "codes/bitmatrix_code.h"
#include "codes/gf_word.h"
#include "codes/mds.h"
#include "codes/xor_families.h"
#include "codes/xor_schedule.h"
#include "ecjit/ecjit.h"
#include "ir_builders/xor_kernel.h"

using namespace ecjit;
using codes::BitMatrix;
using codes::BitMatrixCode;

namespace {

BitMatrixCode code_of(const std::string &spec) {
  Result<BitMatrixCode> c = codes::build_bitmatrix_code(*CodeSpec::parse(spec));
  EXPECT_TRUE(c.ok()) << spec << ": " << c.status().to_string();
  return *c;
}

// Jerasure's bit-matrix (malloc'd ints, rows m*w, cols k*w) against ours, bit for bit.
void expect_same_bits(const BitMatrix &ours, int *theirs, unsigned rows, unsigned cols, const std::string &what) {
  ASSERT_NE(theirs, nullptr) << what;
  ASSERT_EQ(ours.rows, rows) << what;
  ASSERT_EQ(ours.cols, cols) << what;
  for (unsigned r = 0; r < rows; ++r)
    for (unsigned c = 0; c < cols; ++c)
      ASSERT_EQ(ours.get(r, c), theirs[size_t(r) * cols + c] != 0) << what << " row " << r << " col " << c;
  free(theirs);
}

std::string spec_text(const char *fam, unsigned k, unsigned m, unsigned w, unsigned packet = 8) {
  return std::string(fam) + ":k=" + std::to_string(k) + ",m=" + std::to_string(m) + ",w=" + std::to_string(w) +
         ",packet=" + std::to_string(packet);
}

std::shared_ptr<Jit> jit(uint64_t promote_after = 256ull << 20) {
  JitOptions o;
  o.disk_cache = false;
  o.promote_after_bytes = promote_after;
  auto j = Jit::create(o);
  EXPECT_TRUE(j.ok()) << j.status().to_string();
  return *j;
}

// n shards of len random bytes (data), parity from the reference codec.
struct Stripe {
  std::vector<std::vector<uint8_t>> shards;
  std::vector<uint8_t *> ptrs;
  Stripe(const BitMatrixCode &code, size_t len, uint64_t seed) : shards(code.n(), std::vector<uint8_t>(len)) {
    std::mt19937_64 rng(seed);
    for (unsigned s = 0; s < code.k; ++s)
      for (auto &b : shards[s]) b = uint8_t(rng());
    for (auto &v : shards) ptrs.push_back(v.data());
    EXPECT_TRUE(codes::ref_bitmatrix_encode(code, ptrs.data(), ptrs.data() + code.k, len).ok());
  }
  Stripe(const Stripe &o) : shards(o.shards) {
    for (auto &v : shards) ptrs.push_back(v.data());
  }
  Stripe &operator=(const Stripe &) = delete;
};

TEST(XorFields, JerasurePolynomialsAndArithmetic) {
  std::mt19937 rng(7);
  for (unsigned w = 2; w <= 32; ++w) {
    const uint32_t mask = w == 32 ? 0xffffffffu : (1u << w) - 1;
    EXPECT_EQ(codes::jerasure_poly(w), uint32_t(galois_single_multiply(int(1u << (w - 1)), 2, int(w))) & mask)
        << "w=" << w;
    Result<codes::WordField> f = codes::WordField::make(w);
    ASSERT_TRUE(f.ok()) << "w=" << w << ": " << f.status().to_string();
    for (int i = 0; i < 200; ++i) {
      const uint32_t a = rng() & mask, b = rng() & mask;
      ASSERT_EQ(f->mul(a, b), uint32_t(galois_single_multiply(int(a), int(b), int(w)))) << w << ": " << a << "*" << b;
      if (a) ASSERT_EQ(f->mul(a, f->inv(a)), 1u);
    }
  }
  EXPECT_FALSE(codes::WordField::make(8, 0x100).ok());  // x^8 alone: reducible
}

TEST(XorFamilies, CauchyMatricesBitForBit) {
  for (unsigned w : {3u, 4u, 5u, 7u, 8u, 10u, 11u, 12u, 16u})
    for (unsigned m : {2u, 3u, 4u})
      for (unsigned k : {1u, 2u, 5u, 6u, 10u, 13u}) {
        if (w < 32 && k + m > (1u << w)) continue;
        for (const char *fam : {"cauchy-orig", "cauchy-good"}) {
          const BitMatrixCode c = code_of(spec_text(fam, k, m, w));
          int *matrix = std::string(fam) == "cauchy-orig" ? cauchy_original_coding_matrix(int(k), int(m), int(w))
                                                          : cauchy_good_general_coding_matrix(int(k), int(m), int(w));
          ASSERT_NE(matrix, nullptr);
          for (unsigned i = 0; i < k * m; ++i) ASSERT_EQ(c.symbols[i], uint64_t(uint32_t(matrix[i]))) << fam << " " << w;
          expect_same_bits(c.parity, jerasure_matrix_to_bitmatrix(int(k), int(m), int(w), matrix), m * w, k * w,
                           spec_text(fam, k, m, w));
          free(matrix);
        }
      }
}

// m = 2: Jerasure's cauchy_best_r6 table (w <= 11 in Debian's libJerasure), reproduced as
// "fewest bit-matrix ones first"; wider words normalise the original matrix.
TEST(XorFamilies, CauchyGoodRaid6TableOrder) {
  for (unsigned w : {2u, 3u, 4u, 6u, 8u, 10u, 11u, 12u, 14u, 17u, 20u, 24u, 32u}) {
    const unsigned k = w <= 10 ? (1u << w) - 2 : w <= 12 ? 1023 : 40;
    int *matrix = cauchy_good_general_coding_matrix(int(k), 2, int(w));
    ASSERT_NE(matrix, nullptr);
    // The matrix itself: k w past the spec's 4096 bit-rows for most of these.
    const std::vector<uint64_t> ours = codes::cauchy_good_matrix(*codes::WordField::make(w), k, 2);
    for (unsigned i = 0; i < 2 * k; ++i) ASSERT_EQ(ours[i], uint64_t(uint32_t(matrix[i]))) << "w=" << w << " i=" << i;
    free(matrix);
  }
}

TEST(XorFamilies, Raid6CodesBitForBit) {
  for (unsigned w : {3u, 5u, 7u, 11u, 13u})
    for (unsigned k = 1; k <= w; ++k)
      expect_same_bits(code_of("liberation:k=" + std::to_string(k) + ",w=" + std::to_string(w)).parity,
                       liberation_coding_bitmatrix(int(k), int(w)), 2 * w, k * w, "liberation");
  for (unsigned w : {2u, 4u, 6u, 10u, 12u})
    for (unsigned k = 1; k <= w; ++k)
      expect_same_bits(code_of("blaum-roth:k=" + std::to_string(k) + ",w=" + std::to_string(w)).parity,
                       blaum_roth_coding_bitmatrix(int(k), int(w)), 2 * w, k * w, "blaum-roth");
  for (unsigned k = 1; k <= 8; ++k)
    expect_same_bits(code_of("liber8tion:k=" + std::to_string(k)).parity, liber8tion_coding_bitmatrix(int(k)), 16,
                     k * 8, "liber8tion");
  for (unsigned w : {8u, 16u, 32u}) {
    int *matrix = reed_sol_vandermonde_coding_matrix(6, 3, int(w));
    expect_same_bits(code_of("bitmatrix-of:of=jerasure-vand,k=6,m=3,w=" + std::to_string(w)).parity,
                     jerasure_matrix_to_bitmatrix(6, 3, int(w), matrix), 3 * w, 6 * w, "bitmatrix-of");
    free(matrix);
  }
}

// cauchy-opt: Zhou and Tian 2019's genetic search. Reproducible for a seed, MDS (a Cauchy matrix of
// distinct points), and never worse than the original points it starts from.
TEST(XorFamilies, CauchyOptIsReproducibleMdsAndNoWorse) {
  auto ops = [](const BitMatrix &M) {
    const codes::XorProgram p = codes::make_schedule(M, codes::XorSchedule::kUniformMatching);
    return 1.5 * double(p.xors()) + double(p.copies());
  };
  for (const char *km : {"k=6,m=2,w=4", "k=6,m=3,w=8", "k=10,m=4,w=8"}) {
    const BitMatrixCode a = code_of(std::string("cauchy-opt:") + km);
    const BitMatrixCode b = code_of(std::string("cauchy-opt:") + km + ",seed=1");
    EXPECT_EQ(a.parity, b.parity) << km;
    EXPECT_EQ(a.spec.to_string(), std::string("cauchy-opt:") + km + ",packet=64,seed=1");
    EXPECT_TRUE(codes::check_mds(a).mds) << km;
    EXPECT_TRUE(codes::check_mds(code_of(std::string("cauchy-opt:") + km + ",seed=99")).mds) << km;
    // Jerasure's original points, normalised: cauchy-good for m > 2 (for m = 2 Jerasure uses
    // its table instead, so compare with the normalised original there too).
    const codes::WordField f = *codes::WordField::make(a.w);
    std::vector<uint64_t> orig = codes::cauchy_original_matrix(f, a.k, a.m);
    codes::normalize_matrix(f, a.k, a.m, &orig);
    const BitMatrix start = codes::expand_symbols(orig, a.m, a.k, a.w, [&](uint64_t e) { return uint64_t(f.times_x(uint32_t(e))); });
    EXPECT_LE(ops(a.parity), ops(start)) << km;
  }
  auto j = jit();
  auto codec = j->codec("cauchy-opt:k=10,m=4,w=8,seed=3");
  ASSERT_TRUE(codec.ok());
  const BitMatrixCode c = code_of("cauchy-opt:k=10,m=4,w=8,seed=3");
  const size_t len = 2 * c.block_bytes();
  const Stripe want(c, len, 2);
  Stripe s = want;
  std::vector<const uint8_t *> in(s.ptrs.begin(), s.ptrs.begin() + c.k);
  ASSERT_TRUE((*codec)->encode({in.data(), in.size()}, {s.ptrs.data() + c.k, c.m}, len).ok());
  EXPECT_EQ(s.shards, want.shards);
  EXPECT_FALSE(CodeSpec::parse("cauchy-good:k=4,m=2,seed=3").ok());  // seed is cauchy-opt's
}

// The search's result written out (points=) is the same code with no search: the same
// bit-matrix and the same parity from a codec; the form parses back equal. Bad points are
// refused naming the rule.
TEST(XorFamilies, CauchyOptResolvedPointsAreTheSameCode) {
  const CodeSpec seeded = *CodeSpec::parse("cauchy-opt:k=10,m=4,w=8,seed=3");
  const CodeSpec resolved = codes::resolved_spec(seeded);
  ASSERT_EQ(resolved.points.size(), 14u);
  const std::string text = resolved.to_string();
  EXPECT_EQ(text.find("seed="), std::string::npos) << text;
  EXPECT_NE(text.find(",points="), std::string::npos) << text;
  Result<CodeSpec> again = CodeSpec::parse(text);
  ASSERT_TRUE(again.ok()) << again.status().to_string();
  EXPECT_EQ(*again, resolved);
  EXPECT_EQ(codes::resolved_spec(resolved), resolved);  // nothing left to search
  const BitMatrixCode a = code_of(seeded.to_string()), b = code_of(text);
  EXPECT_EQ(a.parity, b.parity);
  auto j = jit();
  auto codec = j->codec(text);
  ASSERT_TRUE(codec.ok()) << codec.status().to_string();
  const size_t len = 2 * a.block_bytes();
  const Stripe want(a, len, 8);
  Stripe s = want;
  std::vector<const uint8_t *> in(s.ptrs.begin(), s.ptrs.begin() + a.k);
  ASSERT_TRUE((*codec)->encode({in.data(), in.size()}, {s.ptrs.data() + a.k, a.m}, len).ok());
  EXPECT_EQ(s.shards, want.shards);
  // Other points are another (still MDS) code.
  const BitMatrixCode other = code_of("cauchy-opt:k=2,m=2,w=4,points=0.1.2.3");
  EXPECT_TRUE(codes::check_mds(other).mds);
  const std::pair<const char *, const char *> bad[] = {
      {"cauchy-opt:k=2,m=2,w=4,points=0.1.2", "m + k = 4"},
      {"cauchy-opt:k=2,m=2,w=4,points=0.1.2.2", "appears twice"},
      {"cauchy-opt:k=2,m=2,w=4,points=0.1.2.10", "not an element of GF(2^4)"},
      {"cauchy-opt:k=2,m=2,w=4,points=0.1.2.3,seed=2", "not both"},
      {"cauchy-good:k=2,m=2,w=4,points=0.1.2.3", "unknown key 'points'"},
  };
  for (const auto &[spec, rule] : bad) {
    Result<CodeSpec> r = CodeSpec::parse(spec);
    ASSERT_FALSE(r.ok()) << spec;
    EXPECT_NE(r.status().message().find(rule), std::string::npos) << spec << ": " << r.status().message();
  }
}

TEST(XorSpecs, RulesAreNamed) {
  const std::pair<const char *, const char *> bad[] = {
      {"liberation:k=4,w=8", "w prime"},        {"liberation:k=8,w=7", "k <= w"},
      {"blaum-roth:k=4,w=7", "w+1 prime"},      {"liber8tion:k=4,w=7", "w = 8 only"},
      {"liberation:k=4,m=3,w=7", "m = 2"},      {"cauchy-good:k=4,m=2,packet=12", "multiple of 8"},
      {"cauchy-good:k=4,m=2,packet=0", "multiple of 8"}, {"cauchy-orig:k=15,m=2,w=4", "k+m <= 2^w"},
      {"cauchy-orig:k=4,m=2,w=33", "w = 2..32"}, {"cauchy-good:k=4,m=2,gf=8", "unknown key 'gf'"},
      {"rs-vand:k=4,m=2,w=8", "unknown key 'w'"}, {"bitmatrix-of:of=cauchy-good,k=4,m=2", "symbol"},
      {"bitmatrix-of:of=rs-vand,k=4,m=2,w=12", "w = 8, 16 or 32"}, {"liberation:k=4", "missing w="},
      {"cauchy-good:k=4000,m=96,w=16", "k*w <= 4096"}, {"cauchy-good:m=2,w=8", "missing k="},
      {"rdp:m=2", "or give p= alone"},          {"xcode:p=7", "Jit::array_codec(\"xcode:p=7\")"},
      {"bpcode:p=7", "array code"},
  };
  for (const auto &[text, rule] : bad) {
    Result<CodeSpec> s = CodeSpec::parse(text);
    ASSERT_FALSE(s.ok()) << text;
    EXPECT_EQ(s.status().code(), StatusCode::kInvalidSpec) << text;
    EXPECT_NE(s.status().message().find(rule), std::string::npos) << text << ": " << s.status().message();
  }
  // The word key alone: the family's full width (the short spec names, rdp:p=7).
  const std::pair<const char *, const char *> full[] = {
      {"rdp:p=7", "rdp:k=6,p=7"},          {"evenodd:p=5", "evenodd:k=5,p=5"},
      {"star:p=7", "star:k=7,p=7"},        {"liberation:w=7", "liberation:k=7,w=7"},
      {"blaum-roth:w=6", "blaum-roth:k=6,w=6"}, {"liber8tion:w=8", "liber8tion:k=8,w=8"},
  };
  for (const auto &[text, same] : full) {
    Result<CodeSpec> a = CodeSpec::parse(text), b = CodeSpec::parse(same);
    ASSERT_TRUE(a.ok()) << text << ": " << a.status().to_string();
    ASSERT_TRUE(b.ok()) << same;
    EXPECT_EQ(*a, *b) << text;
    EXPECT_EQ(code_of(text).parity.bits, code_of(same).parity.bits) << text;
  }
  Result<CodeSpec> lib = CodeSpec::parse("liberation:k=7,w=7");
  ASSERT_TRUE(lib.ok());
  EXPECT_EQ(lib->to_string(), "liberation:k=7,m=2,w=7,packet=64");
  for (const char *text : {"liberation:k=7,w=7", "cauchy-good:k=10,m=4,w=8,packet=64",
                           "bitmatrix-of:of=matrix,k=2,m=2,w=8,a=1.2/3.4", "bitmatrix-of:of=rs-vand,k=3,m=2,w=16,poly=0x1002d"}) {
    Result<CodeSpec> s = CodeSpec::parse(text);
    ASSERT_TRUE(s.ok()) << text << ": " << s.status().to_string();
    Result<CodeSpec> again = CodeSpec::parse(s->to_string());
    ASSERT_TRUE(again.ok()) << s->to_string();
    EXPECT_EQ(*again, *s) << s->to_string();
  }
}

TEST(XorSchedules, EveryScheduleComputesItsMatrix) {
  std::mt19937_64 rng(11);
  std::vector<BitMatrix> matrices = {code_of("cauchy-good:k=10,m=4,w=8").parity, code_of("liberation:k=7,w=7").parity,
                                     code_of("cauchy-orig:k=6,m=3,w=5").parity};
  for (unsigned rows : {1u, 7u, 24u})
    for (unsigned cols : {1u, 9u, 70u, 130u}) {
      BitMatrix M(rows, cols);
      for (unsigned r = 0; r < rows; ++r)
        for (unsigned c = 0; c < cols; ++c) M.set(r, c, rng() % 3 == 0);
      matrices.push_back(M);
    }
  for (const BitMatrix &M : matrices)
    for (codes::XorSchedule s : {codes::XorSchedule::kDumb, codes::XorSchedule::kSmart,
                                 codes::XorSchedule::kUniformMatching, codes::XorSchedule::kWeightedMatching}) {
      codes::XorProgram p = codes::make_schedule(M, s);
      ASSERT_TRUE(codes::check_program(p, M).ok()) << codes::schedule_name(s) << " " << M.rows << "x" << M.cols;
      if (!p.ops.empty()) {  // a changed operand must be caught
        codes::XorProgram bad = p;
        bad.ops.back().b = bad.ops.back().b == 0 ? 1 : 0;
        if (bad.ops.back().a != bad.ops.back().b) EXPECT_FALSE(codes::check_program(bad, M).ok());
      }
    }
  const BitMatrix rs = code_of("cauchy-good:k=10,m=4,w=8").parity;
  const size_t dumb = codes::make_schedule(rs, codes::XorSchedule::kDumb).xors();
  EXPECT_EQ(codes::dumb_xors(rs), dumb);
  const size_t smart = codes::make_schedule(rs, codes::XorSchedule::kSmart).xors();
  const size_t wm = codes::make_schedule(rs, codes::XorSchedule::kWeightedMatching).xors();
  EXPECT_LT(smart, dumb);
  EXPECT_LT(wm, smart);
  RecordProperty("rs_10_4_xors", std::to_string(dumb) + "/" + std::to_string(smart) + "/" + std::to_string(wm));
}

// Our encoder (JIT) against jerasure_schedule_encode and jerasure_bitmatrix_encode.
TEST(XorCodec, EncodeMatchesJerasure) {
  auto j = jit();
  std::mt19937_64 rng(3);
  const char *specs[] = {"cauchy-good:k=10,m=4,w=8", "cauchy-orig:k=6,m=3,w=5", "liberation:k=7,w=7",
                         "blaum-roth:k=6,w=6",        "liber8tion:k=8",          "cauchy-good:k=5,m=2,w=4",
                         "bitmatrix-of:of=jerasure-vand,k=5,m=3,w=8"};
  for (const char *base : specs)
    for (unsigned packet : {8u, 24u, 40u, 64u, 2048u}) {
      const std::string spec = std::string(base) + ",packet=" + std::to_string(packet);
      const BitMatrixCode c = code_of(spec);
      auto codec = j->codec(spec);
      ASSERT_TRUE(codec.ok()) << spec << ": " << codec.status().to_string();
      int *bm = static_cast<int *>(malloc(sizeof(int) * c.parity.rows * c.parity.cols));
      for (unsigned r = 0; r < c.parity.rows; ++r)
        for (unsigned col = 0; col < c.parity.cols; ++col) bm[r * c.parity.cols + col] = c.parity.get(r, col);
      int **schedule = jerasure_smart_bitmatrix_to_schedule(int(c.k), int(c.m), int(c.w), bm);
      for (unsigned blocks : {1u, 3u}) {
        const size_t len = blocks * c.block_bytes();
        // One byte of offset: kernels take any alignment.
        std::vector<std::vector<uint8_t>> store(c.n() + c.m, std::vector<uint8_t>(len + 1));
        std::vector<char *> data, ours, theirs, bitwise;
        for (unsigned s = 0; s < c.k; ++s) {
          for (auto &b : store[s]) b = uint8_t(rng());
          data.push_back(reinterpret_cast<char *>(store[s].data() + 1));
        }
        for (unsigned i = 0; i < c.m; ++i) {
          ours.push_back(reinterpret_cast<char *>(store[c.k + i].data() + 1));
          theirs.push_back(reinterpret_cast<char *>(store[c.n() + i].data() + 1));
        }
        std::vector<std::vector<char>> bw(c.m, std::vector<char>(len));
        for (auto &v : bw) bitwise.push_back(v.data());
        std::vector<const uint8_t *> in;
        for (char *p : data) in.push_back(reinterpret_cast<const uint8_t *>(p));
        std::vector<uint8_t *> out;
        for (char *p : ours) out.push_back(reinterpret_cast<uint8_t *>(p));
        ASSERT_TRUE((*codec)->encode({in.data(), in.size()}, {out.data(), out.size()}, len).ok());
        jerasure_schedule_encode(int(c.k), int(c.m), int(c.w), schedule, data.data(), theirs.data(), int(len), int(packet));
        jerasure_bitmatrix_encode(int(c.k), int(c.m), int(c.w), bm, data.data(), bitwise.data(), int(len), int(packet));
        for (unsigned i = 0; i < c.m; ++i) {
          ASSERT_EQ(0, memcmp(ours[i], theirs[i], len)) << spec << " parity " << i << " blocks " << blocks;
          ASSERT_EQ(0, memcmp(ours[i], bitwise[i], len)) << spec << " parity " << i;
        }
      }
      jerasure_free_schedule(schedule);
      free(bm);
    }
}

// packet=auto: the codec's spec names the packet timed fastest (one of the candidates), its
// encoder says how it was chosen, and its parity is the reference codec's at that packet; the
// same Jit answers the spec again with the same codec.
TEST(XorCodec, PacketAutoNamesThePacketItTimed) {
  auto j = jit();
  auto codec = j->codec("cauchy-good:k=4,m=2,w=8,packet=auto");
  ASSERT_TRUE(codec.ok()) << codec.status().to_string();
  const CodeSpec &spec = (*codec)->spec();
  EXPECT_FALSE(spec.packet_auto);
  const std::vector<unsigned> candidates = {32, 64, 128, 256, 512, 1024, 2048};  // jit/xor_packet_tuner.h
  EXPECT_NE(std::find(candidates.begin(), candidates.end(), spec.packet), candidates.end()) << spec.to_string();
  const std::vector<ecjit::MeasuredCandidate> timed = (*codec)->encoder_info().decision.packets;
  EXPECT_TRUE(std::any_of(timed.begin(), timed.end(),
                          [&](const ecjit::MeasuredCandidate &c) { return c.name == std::to_string(spec.packet); }))
      << (*codec)->encoder_info().why;
  const BitMatrixCode c = code_of(spec.to_string());
  const size_t len = 3 * c.block_bytes();
  const Stripe want(c, len, 43);
  Stripe got = want;
  for (unsigned i = 0; i < c.m; ++i) memset(got.shards[c.k + i].data(), 0, len);
  const std::vector<const uint8_t *> in(got.ptrs.begin(), got.ptrs.begin() + c.k);
  ASSERT_TRUE((*codec)->encode({in.data(), in.size()}, {got.ptrs.data() + c.k, c.m}, len).ok());
  for (unsigned i = 0; i < c.m; ++i) EXPECT_EQ(got.shards[c.k + i], want.shards[c.k + i]) << "parity " << i;
  auto again = j->codec("cauchy-good:k=4,m=2,w=8,packet=auto");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->get(), codec->get());
}

// Large packets on shards of ir::kXorPreloadShardBytes and more run the compiled kernels'
// preloaded loop (below that the in-place one): both against libJerasure (encode), the
// originals (a compiled decoder) and re-encoding (update: an accumulate kernel), with a
// packet that is not a multiple of the vector (its last vector overlaps).
TEST(XorCodec, LargePacketsOnLongShardsBothLoops) {
  auto j = jit(/*promote_after=*/1);
  for (const char *spec : {"liberation:k=5,w=5,packet=1024", "cauchy-good:k=4,m=3,w=4,packet=2056"}) {
    const BitMatrixCode c = code_of(spec);
    ASSERT_GE(c.packet, ir::kXorPreloadPacketBytes);
    auto codec = j->codec(spec);
    ASSERT_TRUE(codec.ok()) << spec << ": " << codec.status().to_string();
    j->wait_for_tuning();  // the compiled encoder
    ASSERT_EQ((*codec)->encoder_info().decision.tier, ecjit::KernelTier::kCompiled) << (*codec)->encoder_info().why;
    int *bm = static_cast<int *>(malloc(sizeof(int) * c.parity.rows * c.parity.cols));
    for (unsigned r = 0; r < c.parity.rows; ++r)
      for (unsigned col = 0; col < c.parity.cols; ++col) bm[r * c.parity.cols + col] = c.parity.get(r, col);
    const size_t short_len = 2 * c.block_bytes();
    const size_t long_len = (ir::kXorPreloadShardBytes / c.block_bytes() + 2) * c.block_bytes();
    for (size_t len : {short_len, long_len}) {
      const Stripe want(c, len, 41);
      Stripe got = want;
      for (unsigned i = 0; i < c.m; ++i) memset(got.shards[c.k + i].data(), 0, len);
      const std::vector<const uint8_t *> in(got.ptrs.begin(), got.ptrs.begin() + c.k);
      ASSERT_TRUE((*codec)->encode({in.data(), in.size()}, {got.ptrs.data() + c.k, c.m}, len).ok());
      std::vector<std::vector<char>> theirs(c.m, std::vector<char>(len));
      std::vector<char *> data, tp;
      for (unsigned s = 0; s < c.k; ++s) data.push_back(reinterpret_cast<char *>(got.shards[s].data()));
      for (auto &v : theirs) tp.push_back(v.data());
      jerasure_bitmatrix_encode(int(c.k), int(c.m), int(c.w), bm, data.data(), tp.data(), int(len), int(c.packet));
      for (unsigned i = 0; i < c.m; ++i) {
        ASSERT_EQ(0, memcmp(got.shards[c.k + i].data(), theirs[i].data(), len)) << spec << " len " << len << " parity " << i;
        ASSERT_EQ(got.shards[c.k + i], want.shards[c.k + i]) << spec << " len " << len;
      }
      // Two lost, the set's own compiled decoder.
      std::vector<bool> present(c.n(), true);
      present[0] = present[c.k] = false;
      ASSERT_TRUE((*codec)->prepare_reconstruct(present).ok());
      j->wait_for_tuning();
      ASSERT_EQ((*codec)->decoder_info(present).decision.tier, ecjit::KernelTier::kCompiled);
      memset(got.shards[0].data(), 0x5a, len);
      memset(got.shards[c.k].data(), 0xa5, len);
      ASSERT_TRUE((*codec)->reconstruct({got.ptrs.data(), got.ptrs.size()}, present, len).ok());
      ASSERT_EQ(got.shards, want.shards) << spec << " len " << len;
      // Update of shard 1 (compiled accumulate kernel once promoted): parity as re-encoded.
      Stripe next = want;
      std::mt19937_64 rng(len);
      for (auto &b : next.shards[1]) b = uint8_t(rng());
      ASSERT_TRUE(codes::ref_bitmatrix_encode(c, next.ptrs.data(), next.ptrs.data() + c.k, len).ok());
      for (int round = 0; round < 2; ++round) {
        Stripe upd = want;
        const uint8_t *old_d[] = {want.ptrs[1]}, *new_d[] = {next.ptrs[1]};
        ASSERT_TRUE((*codec)->update(ShardSet{1}, {old_d, 1}, {new_d, 1}, {upd.ptrs.data() + c.k, c.m}, len).ok());
        for (unsigned i = 0; i < c.m; ++i)
          ASSERT_EQ(upd.shards[c.k + i], next.shards[c.k + i]) << spec << " len " << len << " round " << round;
        j->wait_for_tuning();
      }
    }
    free(bm);
  }
}

// Every erasure set of up to m shards, first calls (the runner), then compiled decoders.
void every_erasure_set(const std::string &spec, size_t compiled_sample) {
  auto j = jit();
  const BitMatrixCode c = code_of(spec);
  auto codec = j->codec(spec);
  ASSERT_TRUE(codec.ok()) << codec.status().to_string();
  const size_t len = 2 * c.block_bytes();
  Stripe want(c, len, 5);
  std::vector<std::vector<bool>> sets;
  for (uint64_t mask = 1; mask < (uint64_t(1) << c.n()); ++mask) {
    if (unsigned(__builtin_popcountll(mask)) > c.m) continue;
    std::vector<bool> present(c.n());
    for (unsigned s = 0; s < c.n(); ++s) present[s] = !((mask >> s) & 1);
    sets.push_back(present);
  }
  auto check = [&](const std::vector<bool> &present, const char *path) {
    Stripe got = want;
    for (unsigned s = 0; s < c.n(); ++s)
      if (!present[s]) memset(got.shards[s].data(), 0xa5, len);
    ASSERT_TRUE((*codec)->reconstruct({got.ptrs.data(), got.ptrs.size()}, present, len).ok());
    for (unsigned s = 0; s < c.n(); ++s) ASSERT_EQ(got.shards[s], want.shards[s]) << spec << " " << path << " shard " << s;
  };
  for (const auto &present : sets) check(present, "runner");
  EXPECT_GT((*codec)->kernel_cache_stats().shape_calls, 0u);
  for (size_t i = 0; i < sets.size(); i += std::max<size_t>(1, sets.size() / compiled_sample))
    ASSERT_TRUE((*codec)->prepare_reconstruct(sets[i]).ok());
  j->wait_for_tuning();
  for (size_t i = 0; i < sets.size(); i += std::max<size_t>(1, sets.size() / compiled_sample)) {
    EXPECT_EQ((*codec)->decoder_info(sets[i]).decision.tier, ecjit::KernelTier::kCompiled);
    check(sets[i], "compiled");
  }
  EXPECT_GT((*codec)->kernel_cache_stats().promotions, 0u);
  std::vector<bool> too_many(c.n(), true);
  for (unsigned s = 0; s <= c.m; ++s) too_many[s] = false;
  Stripe got = want;
  EXPECT_EQ((*codec)->reconstruct({got.ptrs.data(), got.ptrs.size()}, too_many, len).code(),
            StatusCode::kTooManyErasures);
}

TEST(XorCodec, EveryErasureSetCauchyGood10_4) { every_erasure_set("cauchy-good:k=10,m=4,w=8,packet=8", 12); }
TEST(XorCodec, EveryErasureSetCauchyOrig6_3) { every_erasure_set("cauchy-orig:k=6,m=3,w=4,packet=16", 8); }
TEST(XorCodec, EveryErasureSetRaid6Families) {
  every_erasure_set("liberation:k=7,w=7,packet=8", 6);
  every_erasure_set("blaum-roth:k=6,w=6,packet=8", 6);
  every_erasure_set("liber8tion:k=8,packet=8", 6);
}

// libJerasure decodes what we encoded (jerasure_schedule_decode_lazy).
TEST(XorCodec, JerasureDecodesOurParity) {
  auto j = jit();
  const std::string spec = "cauchy-good:k=6,m=3,w=8,packet=16";
  const BitMatrixCode c = code_of(spec);
  auto codec = j->codec(spec);
  ASSERT_TRUE(codec.ok());
  const size_t len = 2 * c.block_bytes();
  Stripe s(c, len, 9);
  std::vector<const uint8_t *> in(s.ptrs.begin(), s.ptrs.begin() + c.k);
  ASSERT_TRUE((*codec)->encode({in.data(), in.size()}, {s.ptrs.data() + c.k, c.m}, len).ok());
  int *bm = static_cast<int *>(malloc(sizeof(int) * c.parity.rows * c.parity.cols));
  for (unsigned r = 0; r < c.parity.rows; ++r)
    for (unsigned col = 0; col < c.parity.cols; ++col) bm[r * c.parity.cols + col] = c.parity.get(r, col);
  for (int a = 0; a < int(c.n()); ++a)
    for (int b = a + 1; b < int(c.n()); ++b) {
      std::vector<std::vector<uint8_t>> copy = s.shards;
      memset(copy[a].data(), 0, len);
      memset(copy[b].data(), 0, len);
      std::vector<char *> d, p;
      for (unsigned x = 0; x < c.k; ++x) d.push_back(reinterpret_cast<char *>(copy[x].data()));
      for (unsigned x = 0; x < c.m; ++x) p.push_back(reinterpret_cast<char *>(copy[c.k + x].data()));
      int erasures[] = {a, b, -1};
      ASSERT_EQ(0, jerasure_schedule_decode_lazy(int(c.k), int(c.m), int(c.w), bm, erasures, d.data(), p.data(),
                                                 int(len), int(c.packet), 1));
      ASSERT_EQ(copy, s.shards) << "lost " << a << "," << b;
    }
  free(bm);
}

TEST(XorCodec, OperationsAgainstTheReference) {
  auto j = jit();
  const std::string spec = "cauchy-good:k=6,m=3,w=8,packet=24";
  const BitMatrixCode c = code_of(spec);
  auto got = j->codec(spec);
  ASSERT_TRUE(got.ok());
  const Codec &codec = **got;
  const size_t len = 3 * c.block_bytes();
  Stripe s(c, len, 21);
  // verify: good, then one flipped parity byte.
  std::vector<const uint8_t *> all(s.ptrs.begin(), s.ptrs.end());
  size_t at = 0;
  EXPECT_TRUE(*codec.verify({all.data(), all.size()}, len, &at));
  EXPECT_EQ(at, len);
  s.shards[c.k + 1][len - 7] ^= 1;
  EXPECT_FALSE(*codec.verify({all.data(), all.size()}, len, &at));
  EXPECT_LE(at, len - 7);
  s.shards[c.k + 1][len - 7] ^= 1;
  // update: data 1 and 4 change; parity follows.
  Stripe next = s;
  std::mt19937_64 rng(4);
  for (unsigned d : {1u, 4u})
    for (auto &b : next.shards[d]) b = uint8_t(rng());
  ASSERT_TRUE(codes::ref_bitmatrix_encode(c, next.ptrs.data(), next.ptrs.data() + c.k, len).ok());
  std::vector<std::vector<uint8_t>> parity(s.shards.begin() + c.k, s.shards.end());
  std::vector<uint8_t *> pp;
  for (auto &v : parity) pp.push_back(v.data());
  const uint8_t *old_d[] = {s.ptrs[1], s.ptrs[4]}, *new_d[] = {next.ptrs[1], next.ptrs[4]};
  ASSERT_TRUE(codec.update(ShardSet{1, 4}, {old_d, 2}, {new_d, 2}, {pp.data(), pp.size()}, len).ok());
  for (unsigned i = 0; i < c.m; ++i) EXPECT_EQ(parity[i], next.shards[c.k + i]) << "update parity " << i;
  // encode_partial summed over the data shards is encode.
  std::vector<std::vector<uint8_t>> acc(c.m, std::vector<uint8_t>(len, 0));
  std::vector<uint8_t *> ap;
  for (auto &v : acc) ap.push_back(v.data());
  for (unsigned d = 0; d < c.k; ++d) ASSERT_TRUE(codec.encode_partial(d, s.ptrs[d], {ap.data(), ap.size()}, len).ok());
  for (unsigned i = 0; i < c.m; ++i) EXPECT_EQ(acc[i], s.shards[c.k + i]) << "encode_partial parity " << i;
  // reconstruct_some: only shard 2 of {0, 2, 7} lost; others untouched, null allowed.
  Stripe some = s;
  std::vector<uint8_t *> sp = some.ptrs;
  std::vector<bool> present(c.n(), true);
  present[0] = present[2] = present[7] = false;
  memset(some.shards[2].data(), 0, len);
  memset(some.shards[7].data(), 0x5a, len);
  sp[0] = nullptr;
  ASSERT_TRUE(codec.reconstruct_some(ShardSet{2}, {sp.data(), sp.size()}, present, len).ok());
  EXPECT_EQ(some.shards[2], s.shards[2]);
  EXPECT_EQ(some.shards[7], std::vector<uint8_t>(len, 0x5a));
  // reconstruct_data leaves lost parity alone.
  Stripe data_only = s;
  memset(data_only.shards[0].data(), 0, len);
  memset(data_only.shards[7].data(), 0x11, len);
  std::vector<bool> lost07(c.n(), true);
  lost07[0] = lost07[7] = false;
  ASSERT_TRUE(codec.reconstruct_data({data_only.ptrs.data(), data_only.ptrs.size()}, lost07, len).ok());
  EXPECT_EQ(data_only.shards[0], s.shards[0]);
  EXPECT_EQ(data_only.shards[7], std::vector<uint8_t>(len, 0x11));
  // minimum_to_decode: wanted available -> wanted; else k shards reconstruct_some reads.
  EXPECT_EQ(*codec.minimum_to_decode(ShardSet{1, 2}, ShardSet{0, 1, 2, 3}), (ShardSet{1, 2}));
  Result<ShardSet> need = codec.minimum_to_decode(ShardSet{0}, ShardSet{1, 2, 3, 4, 5, 6, 7, 8});
  ASSERT_TRUE(need.ok());
  EXPECT_EQ(need->size(), c.k);
  EXPECT_EQ(codec.minimum_to_decode(ShardSet{0}, ShardSet{1, 2}).status().code(), StatusCode::kTooManyErasures);
  // Errors leave buffers alone.
  Stripe bad = s;
  std::vector<const uint8_t *> bd(bad.ptrs.begin(), bad.ptrs.begin() + c.k);
  EXPECT_EQ(codec.encode({bd.data(), bd.size()}, {bad.ptrs.data() + c.k, c.m}, len - 8).code(), StatusCode::kShardSize);
  std::vector<uint8_t *> alias(bad.ptrs.begin() + c.k, bad.ptrs.end());
  alias[0] = bad.ptrs[0];
  EXPECT_EQ(codec.encode({bd.data(), bd.size()}, {alias.data(), alias.size()}, len).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.shards, s.shards);
  uint64_t sig[2];
  EXPECT_EQ(codec.signature(s.ptrs[0], len, {sig, 2}).code(), StatusCode::kUnsupported);
  EXPECT_EQ(codec.parity_matrix().size(), size_t(c.m) * c.w * c.k * c.w);
}

// Threads share one codec; promotion past a small threshold swaps kernels under them.
TEST(XorCodec, ConcurrentFirstCallsAndPromotion) {
  auto j = jit(/*promote_after=*/64 * 1024);
  const std::string spec = "cauchy-good:k=8,m=3,w=8,packet=32";
  const BitMatrixCode c = code_of(spec);
  auto codec = j->codec(spec);
  ASSERT_TRUE(codec.ok());
  const size_t len = 4 * c.block_bytes();
  const Stripe want(c, len, 17);
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (unsigned t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      std::mt19937 rng(t);
      for (int i = 0; i < 150; ++i) {
        Stripe got = want;
        std::vector<bool> present(c.n(), true);
        for (unsigned l = 0; l < 1 + rng() % c.m; ++l) present[rng() % c.n()] = false;
        for (unsigned s = 0; s < c.n(); ++s)
          if (!present[s]) memset(got.shards[s].data(), 0, len);
        if (!(*codec)->reconstruct({got.ptrs.data(), got.ptrs.size()}, present, len).ok() ||
            got.shards != want.shards)
          ++failures;
      }
    });
  for (auto &t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  j->wait_for_tuning();
  EXPECT_GT((*codec)->kernel_cache_stats().promotions, 0u);
}

// A cold codec() compiles nothing on the caller's thread: the encoder's runner serves while
// its unrolled kernel compiles in the background, concurrent encodes see the reference's
// parity before, during and after the swap, and a second codec() of the spec in the same
// Jit starts on the compiled kernel.
TEST(XorCodec, ColdEncoderServedByItsRunnerUntilCompiled) {
  auto j = jit();
  const std::string spec = "cauchy-good:k=10,m=4,w=8,packet=64";
  const BitMatrixCode c = code_of(spec);
  const size_t len = 16 * c.block_bytes();
  const Stripe want(c, len, 23);
  {
    test::BackgroundGate gate(*j);  // the compile cannot land before the runner is seen
    auto codec = j->codec(spec);
    ASSERT_TRUE(codec.ok()) << codec.status().to_string();
    const KernelInfo first = (*codec)->encoder_info();
    EXPECT_EQ(first.decision.tier, ecjit::KernelTier::kScheduleRunner) << first.why;
    EXPECT_TRUE(first.decision.compiling) << first.why;
    std::atomic<int> failures{0};
    std::atomic<bool> stop{false};
    auto encodes = [&] {
      Stripe s = want;
      std::vector<const uint8_t *> in(s.ptrs.begin(), s.ptrs.begin() + c.k);
      int calls = 0;
      while (!stop.load() || calls < 3) {
        for (unsigned i = 0; i < c.m; ++i) memset(s.shards[c.k + i].data(), 0, len);
        if (!(*codec)->encode({in.data(), in.size()}, {s.ptrs.data() + c.k, c.m}, len).ok() ||
            s.shards != want.shards)
          ++failures;
        ++calls;
      }
    };
    std::thread t1(encodes), t2(encodes);
    gate.release();
    j->wait_for_tuning();  // the background compile
    stop = true;
    t1.join();
    t2.join();
    EXPECT_EQ(failures.load(), 0);
    const KernelInfo compiled = (*codec)->encoder_info();
    EXPECT_EQ(compiled.decision.tier, ecjit::KernelTier::kCompiled) << compiled.why;
    EXPECT_GT(compiled.decision.xors, 0u) << compiled.why;
    // Tuning is on by default: its schedule was picked by timing (jit/xor_tuner.h).
    EXPECT_EQ(compiled.decision.source, ecjit::DecisionSource::kTuned) << compiled.why;
    EXPECT_FALSE(compiled.decision.candidates.empty()) << compiled.why;
    EXPECT_GT(compiled.vector_bits, 0u);
  }
  // The codec is gone (the Jit keeps codecs weakly); a new one finds the kernel in memory.
  auto again = j->codec(spec);
  ASSERT_TRUE(again.ok()) << again.status().to_string();
  EXPECT_EQ((*again)->encoder_info().decision.tier, ecjit::KernelTier::kCompiled) << (*again)->encoder_info().why;
}

// Past XorCodec::kMaxUnrolledXors the encoder is never compiled: the runner serves it, and
// still computes the code (codec() takes milliseconds, not seconds).
TEST(XorCodec, WideCodesRunUncompiled) {
  auto j = jit(/*promote_after=*/1);
  const std::string spec = "cauchy-good:k=40,m=10,w=8,packet=16";
  const BitMatrixCode c = code_of(spec);
  auto got = j->codec(spec);
  ASSERT_TRUE(got.ok()) << got.status().to_string();
  const Codec &codec = **got;
  EXPECT_EQ(codec.encoder_info().decision.tier, ecjit::KernelTier::kScheduleRunner) << codec.encoder_info().why;
  const size_t len = 2 * c.block_bytes();
  const Stripe want(c, len, 41);
  Stripe s = want;
  for (unsigned i = 0; i < c.m; ++i) memset(s.shards[c.k + i].data(), 0, len);
  std::vector<const uint8_t *> in(s.ptrs.begin(), s.ptrs.begin() + c.k);
  ASSERT_TRUE(codec.encode({in.data(), in.size()}, {s.ptrs.data() + c.k, c.m}, len).ok());
  EXPECT_EQ(s.shards, want.shards);
  std::vector<bool> present(c.n(), true);
  for (unsigned l : {0u, 7u, 39u, 41u, 49u}) {
    present[l] = false;
    memset(s.shards[l].data(), 0, len);
  }
  for (int round = 0; round < 2; ++round) {  // never promoted: the same runner twice
    ASSERT_TRUE(codec.reconstruct({s.ptrs.data(), s.ptrs.size()}, present, len).ok());
    EXPECT_EQ(s.shards, want.shards);
    j->wait_for_tuning();
  }
  EXPECT_EQ(codec.kernel_cache_stats().promotions, 0u);
}

// update and encode_partial after promotion: their compiled accumulate kernels (packets that
// are not a multiple of the vector width: accumulate uses whole smaller vectors).
TEST(XorCodec, CompiledAccumulateKernels) {
  auto j = jit(/*promote_after=*/1);
  for (unsigned packet : {24u, 64u}) {
    const std::string spec = "cauchy-good:k=5,m=3,w=8,packet=" + std::to_string(packet);
    const BitMatrixCode c = code_of(spec);
    auto got = j->codec(spec);
    ASSERT_TRUE(got.ok());
    const Codec &codec = **got;
    const size_t len = 3 * c.block_bytes();
    const Stripe s(c, len, 31);
    Stripe next = s;
    std::mt19937_64 rng(8);
    for (auto &b : next.shards[2]) b = uint8_t(rng());
    ASSERT_TRUE(codes::ref_bitmatrix_encode(c, next.ptrs.data(), next.ptrs.data() + c.k, len).ok());
    for (int round = 0; round < 2; ++round) {  // round 0: the runner asks; round 1: compiled
      std::vector<std::vector<uint8_t>> parity(s.shards.begin() + c.k, s.shards.end());
      std::vector<uint8_t *> pp;
      for (auto &v : parity) pp.push_back(v.data());
      const uint8_t *old_d[] = {s.ptrs[2]}, *new_d[] = {next.ptrs[2]};
      ASSERT_TRUE(codec.update(ShardSet{2}, {old_d, 1}, {new_d, 1}, {pp.data(), pp.size()}, len).ok());
      for (unsigned i = 0; i < c.m; ++i) ASSERT_EQ(parity[i], next.shards[c.k + i]) << spec << " round " << round;
      std::vector<std::vector<uint8_t>> acc(c.m, std::vector<uint8_t>(len, 0));
      std::vector<uint8_t *> ap;
      for (auto &v : acc) ap.push_back(v.data());
      for (unsigned d = 0; d < c.k; ++d) ASSERT_TRUE(codec.encode_partial(d, s.ptrs[d], {ap.data(), ap.size()}, len).ok());
      for (unsigned i = 0; i < c.m; ++i) ASSERT_EQ(acc[i], s.shards[c.k + i]) << spec << " round " << round;
      j->wait_for_tuning();
    }
    EXPECT_GE(codec.kernel_cache_stats().promotions, 1u + c.k) << spec;  // the update and every partial
  }
}

}  // namespace
