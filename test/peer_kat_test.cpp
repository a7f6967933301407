// rs-vand against the parity other libraries stored: test/data's known-answer files of
// klauspost/reedsolomon's default codec (New(k, m), a port of Backblaze's JavaReedSolomon
// matrix) and reed-solomon-erasure's galois_8 codec, both written by their own code
// (bench/leopard8 kat-vand, bench/rs_simd kat-vand). Every case encodes to the same parity
// through the JIT on each tier, and a random m shards lost from the peer's stripe come back.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "ecjit/jit.h"
#include "known_answers.h"

namespace ecjit {
namespace {

using test::KatBytes;
using test::KatCase;

std::shared_ptr<Jit> make_jit(const std::string &target) {
  JitOptions o;
  o.target = target;
  o.disk_cache = false;
  o.tune = false;
  auto j = Jit::create(o);
  EXPECT_TRUE(j.ok()) << j.status().to_string();
  return j.ok() ? *j : nullptr;
}

// One file on one target: `min_cases` cases at least, `min_full` of them with the peer's
// parity printed in full; codes of more than `max_n` shards skipped (their kernels compiled on
// the caller's thread off "host": seconds each).
void check_file(const char *path, const std::string &target, unsigned min_cases, unsigned min_full,
                unsigned max_n = 256) {
  auto jit = make_jit(target);
  ASSERT_TRUE(jit);
  std::mt19937_64 rng(0x5eed);
  unsigned cases = 0, full = 0;
  for (const KatCase &c : test::read_known_answers(path)) {
    if (c.k + c.m > max_n) continue;
    const std::string what = std::string(path) + " case " + c.name() + " on " + target;
    auto codec = jit->codec("rs-vand:k=" + std::to_string(c.k) + ",m=" + std::to_string(c.m));
    ASSERT_TRUE(codec.ok()) << what << ": " << codec.status().to_string();
    std::vector<KatBytes> parity(c.m, KatBytes(c.bytes));
    std::vector<const uint8_t *> d;
    std::vector<uint8_t *> p;
    for (auto &o : c.orig) d.push_back(o.data());
    for (auto &q : parity) p.push_back(q.data());
    ASSERT_TRUE((*codec)->encode(d, p, c.bytes).ok()) << what;
    for (unsigned j = 0; j < c.m; ++j) {
      EXPECT_EQ(c.rec_hash[j], test::fnv1a64(parity[j].data(), c.bytes)) << what << ": parity " << j;
      if (!c.rec[j].empty()) EXPECT_EQ(c.rec[j], parity[j]) << what << ": parity " << j;
    }
    ++cases;
    full += c.full();
    // The peer's stripe (its printed parity, else ours, equal by hash) with m shards lost at
    // random: each comes back.
    const unsigned n = c.k + c.m;
    std::vector<KatBytes> stripe = c.orig;
    for (unsigned j = 0; j < c.m; ++j) stripe.push_back(c.rec[j].empty() ? parity[j] : c.rec[j]);
    std::vector<unsigned> ids(n);
    for (unsigned s = 0; s < n; ++s) ids[s] = s;
    std::shuffle(ids.begin(), ids.end(), rng);
    std::vector<bool> present(n, true);
    std::vector<KatBytes> work = stripe;
    for (unsigned i = 0; i < c.m; ++i) {
      present[ids[i]] = false;
      std::fill(work[ids[i]].begin(), work[ids[i]].end(), uint8_t(0xA5));
    }
    std::vector<uint8_t *> ptrs;
    for (auto &w : work) ptrs.push_back(w.data());
    ASSERT_TRUE((*codec)->reconstruct(ptrs, present, c.bytes).ok()) << what;
    for (unsigned s = 0; s < n; ++s) EXPECT_EQ(work[s], stripe[s]) << what << ": shard " << s << " rebuilt";
  }
  EXPECT_GE(cases, min_cases) << path;
  EXPECT_GE(full, min_full) << path;
}

// Every case on this CPU; the codes of up to 64 shards on the AVX2 and SSE tiers too, forced
// by masking the host's features.
void check_tiers(const char *path) {
  check_file(path, "host", 52, 15);
  for (const char *t : {"host-avx2", "host-sse2"}) check_file(path, t, 40, 15, 64);
}

TEST(PeerKnownAnswers, KlauspostDefaultCodec) { check_tiers(ECJIT_RS_VAND_KLAUSPOST_KAT); }

TEST(PeerKnownAnswers, ReedSolomonErasureGalois8) { check_tiers(ECJIT_RS_VAND_RSE_KAT); }

}  // namespace
}  // namespace ecjit
