// Tiered tuning through the public API: the static choice serves at once, the background
// tuner swaps its winner in under running calls, output never changes, and a Jit dropped
// mid-tuning cancels cleanly.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <random>
#include <thread>

#include "codes/linear_code.h"
#include "codes/reference_codec.h"
#include "ecjit/ecjit.h"
#include "jit/tuner.h"
#include "jit_test_util.h"

using namespace ecjit;

namespace {

ir::TargetInfo info(const std::string &t) {
  auto i = test::resolve_target(t);
  EXPECT_TRUE(bool(i));
  return i ? *i : ir::TargetInfo();
}

// Every kernel compiled and tuned in this process (no disk cache), encoders tuned once they
// have done tune_after_bytes of work.
std::shared_ptr<Jit> fresh_jit(uint64_t tune_after_bytes = JitOptions().tune_after_bytes) {
  JitOptions o;
  o.aot_kernels = false;  // the codec's own kernels from codec() on: tiering is tested here
  o.disk_cache = false;
  o.tune_after_bytes = tune_after_bytes;
  auto jit = Jit::create(o);
  EXPECT_TRUE(jit.ok()) << jit.status().to_string();
  return jit.ok() ? *jit : nullptr;
}
bool gf8_has_one_candidate() { return jit::candidate_strategies(info("host"), 8).size() < 2; }

// Random data shards (`in` points at them) and the reference codec's parity (`want`).
struct Reference {
  std::vector<std::vector<uint8_t>> d, want;
  std::vector<const uint8_t *> in;
};
Reference reference_parity(const codes::LinearCode &code, size_t len, unsigned seed) {
  Reference r{std::vector<std::vector<uint8_t>>(code.k, std::vector<uint8_t>(len)),
              std::vector<std::vector<uint8_t>>(code.m, std::vector<uint8_t>(len)), {}};
  std::mt19937 rng(seed);
  for (auto &s : r.d)
    for (auto &b : s) b = uint8_t(rng());
  std::vector<uint8_t *> ref;
  for (auto &s : r.d) r.in.push_back(s.data());
  for (auto &s : r.want) ref.push_back(s.data());
  EXPECT_TRUE(codes::ref_encode(code, r.in.data(), ref.data(), len).ok());
  return r;
}

// Tiered compilation through the public API: codec() returns with the static choice, the
// tuner swaps the winner in while another thread keeps encoding, and every parity written
// before, during and after the swap is the reference codec's. Promoted decoders are tuned too.
TEST(TieredTuning, BackgroundTuningSwapsKernelsUnderRunningCalls) {
  JitOptions o;
  o.aot_kernels = false;  // the codec's own kernels from codec() on: tiering is tested here
  o.disk_cache = false;
  // Decoders compiled per set on first use (tuned in the background like the encoder), and a
  // codec() that returns right after its encoder (shape kernels would give the tuner time to
  // finish first); promoted decoders: PromotedDecodersAreTunedToo.
  o.shape_kernels = false;
  o.tune_after_bytes = 0;  // tuning starts with codec(), under the encoding thread's calls
  auto jit = Jit::create(o);
  ASSERT_TRUE(jit.ok()) << jit.status().to_string();
  bool any = false;
  for (unsigned gf : {8u, 16u, 32u, 64u}) {
    if (jit::candidate_strategies(info("host"), gf).size() < 2) continue;
    any = true;
    const std::string spec = "rs-vand:k=10,m=4,gf=" + std::to_string(gf);
    auto codec = (*jit)->codec(spec);
    ASSERT_TRUE(codec.ok()) << codec.status().to_string();
    const KernelInfo before = (*codec)->encoder_info();
    codes::LinearCode code = *codes::build_code(spec);
    const size_t len = 24 * 1024 + 8;
    const Reference r = reference_parity(code, len, gf);
    const auto &d = r.d;
    const auto &want = r.want;
    const auto &in = r.in;
    std::atomic<bool> stop{false};
    std::atomic<int> wrong{0}, calls{0};
    std::thread encoder([&] {
      std::vector<std::vector<uint8_t>> p(code.m, std::vector<uint8_t>(len));
      std::vector<uint8_t *> out;
      for (auto &s : p) out.push_back(s.data());
      while (!stop.load() || calls.load() < 3) {
        for (auto &s : p) std::fill(s.begin(), s.end(), 0xA5);
        if (!(*codec)->encode(Span<const uint8_t *const>(in.data(), code.k), Span<uint8_t *const>(out.data(), code.m), len).ok() ||
            p != want)
          ++wrong;
        ++calls;
      }
    });
    // The first reconstruct of an erasure set queues its decoder for tuning as well.
    std::vector<std::vector<uint8_t>> shards(code.k + code.m, std::vector<uint8_t>(len));
    for (unsigned i = 0; i < code.k; ++i) shards[i] = d[i];
    for (unsigned i = 0; i < code.m; ++i) shards[code.k + i] = want[i];
    std::vector<bool> present(code.k + code.m, true);
    for (unsigned i = 0; i < code.m; ++i) present[i] = false, std::fill(shards[i].begin(), shards[i].end(), 0);
    std::vector<uint8_t *> sp;
    for (auto &s : shards) sp.push_back(s.data());
    ASSERT_TRUE((*codec)->reconstruct(Span<uint8_t *const>(sp.data(), sp.size()), present, len).ok());
    (*jit)->wait_for_tuning();
    stop = true;
    encoder.join();
    EXPECT_EQ(wrong.load(), 0) << spec;
    const KernelInfo after = (*codec)->encoder_info();
    EXPECT_TRUE(before.decision.tuning) << before.why;
    EXPECT_EQ(after.decision.source, ecjit::DecisionSource::kTuned) << after.why;
    EXPECT_FALSE(after.decision.tuning) << after.why;
    EXPECT_FALSE(after.decision.candidates.empty()) << after.why;
    const KernelInfo dec = (*codec)->decoder_info(present);
    EXPECT_EQ(dec.decision.source, ecjit::DecisionSource::kTuned) << dec.why;
    for (unsigned i = 0; i < code.m; ++i) std::fill(shards[i].begin(), shards[i].end(), 0);
    ASSERT_TRUE((*codec)->reconstruct(Span<uint8_t *const>(sp.data(), sp.size()), present, len).ok());
    for (unsigned i = 0; i < code.m; ++i) EXPECT_EQ(shards[i], d[i]) << spec << " shard " << i;
  }
  if (!any) GTEST_SKIP() << "one candidate strategy per field on this CPU: nothing to tune";
  const JitStats st = (*jit)->stats();
  EXPECT_GE(st.kernels_tuned, 2u);
  EXPECT_EQ(st.tunings_pending, 0u);
}

// A promoted set's own decoder is compiled and then tuned on the background thread, while
// the shape kernel serves; output is exact before and after.
TEST(TieredTuning, PromotedDecodersAreTunedToo) {
  if (gf8_has_one_candidate()) GTEST_SKIP() << "nothing to tune";
  std::shared_ptr<Jit> jit = fresh_jit();
  ASSERT_TRUE(jit);
  auto codec = jit->codec("rs-vand:k=10,m=4,gf=8");
  ASSERT_TRUE(codec.ok());
  std::vector<bool> present(14, true);
  present[2] = present[11] = false;
  const KernelInfo first = (*codec)->decoder_info(present);
  if (!first.decision.run_time_coefficients()) GTEST_SKIP() << "no shape kernel here";
  ASSERT_TRUE((*codec)->prepare_reconstruct(present).ok());
  jit->wait_for_tuning();
  const KernelInfo promoted = (*codec)->decoder_info(present);
  EXPECT_EQ(promoted.decision.source, ecjit::DecisionSource::kTuned) << promoted.why;
  EXPECT_EQ(promoted.symbol.find("shape"), std::string::npos) << promoted.symbol;
  codes::LinearCode code = *codes::build_code("rs-vand:k=10,m=4,gf=8");
  const size_t len = 5000;
  std::vector<std::vector<uint8_t>> shards(14, std::vector<uint8_t>(len)), orig;
  std::mt19937 rng(5);
  for (unsigned i = 0; i < 10; ++i)
    for (auto &b : shards[i]) b = uint8_t(rng());
  std::vector<const uint8_t *> in;
  std::vector<uint8_t *> out, all;
  for (unsigned i = 0; i < 10; ++i) in.push_back(shards[i].data());
  for (unsigned i = 10; i < 14; ++i) out.push_back(shards[i].data());
  ASSERT_TRUE(codes::ref_encode(code, in.data(), out.data(), len).ok());
  orig = shards;
  for (auto &s : shards) all.push_back(s.data());
  std::fill(shards[2].begin(), shards[2].end(), 0);
  std::fill(shards[11].begin(), shards[11].end(), 0);
  ASSERT_TRUE((*codec)->reconstruct(Span<uint8_t *const>(all.data(), all.size()), present, len).ok());
  EXPECT_EQ(shards, orig);
}

// Dropping the Jit while tunings are queued and running neither hangs nor runs a callback
// into freed state (ASan/UBSan builds run this too).
TEST(TieredTuning, DestroyingTheJitCancelsPendingTunings) {
  for (int round = 0; round < 3; ++round) {
    std::shared_ptr<Jit> jit = fresh_jit(/*tune_after_bytes=*/0);  // every encoder's tuning queued by codec()
    ASSERT_TRUE(jit);
    for (unsigned gf : {8u, 16u, 32u}) {
      auto codec = jit->codec("rs-vand:k=6,m=3,gf=" + std::to_string(gf));
      ASSERT_TRUE(codec.ok()) << codec.status().to_string();
    }
  }
}

// An encoder is tuned because it is used: nothing is queued by codec(); the call that
// brings the encoder's input to tune_after_bytes queues its tuning (once, with four threads
// encoding), and the parity is the reference codec's before, during and after the swap.
// A Jit held in a static, the process exiting while its background thread compiles and times
// an XOR encoder: statics made after the Jit (cache identity, code registries) are destroyed
// before it joins that thread, so none may be (ASan saw a heap-use-after-free at exit in the
// CI fuzz run). Under ASan the child aborts on such a read; elsewhere this checks a clean exit.
TEST(TieredTuningDeathTest, StaticJitExitsWithBackgroundWorkInFlight) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        static std::shared_ptr<ecjit::Jit> jit = [] {
          ecjit::JitOptions o;
          o.disk_cache = false;
          return *ecjit::Jit::create(o);
        }();
        auto codec = jit->codec("cauchy-good:k=10,m=4,w=8");
        // Exit mid-way through the background work: its first compile done, the schedules'
        // compiles and timing still to come.
        std::this_thread::sleep_for(std::chrono::milliseconds(40));
        std::exit(codec.ok() ? 0 : 3);
      },
      testing::ExitedWithCode(0), "");
}

TEST(TieredTuning, EncoderTuningWaitsForWork) {
  if (gf8_has_one_candidate()) GTEST_SKIP() << "nothing to tune";
  std::shared_ptr<Jit> jit = fresh_jit(4 << 20);
  ASSERT_TRUE(jit);
  const std::string spec = "rs-vand:k=10,m=4,gf=8";
  auto codec = jit->codec(spec);
  ASSERT_TRUE(codec.ok());
  const KernelInfo before = (*codec)->encoder_info();
  EXPECT_TRUE(before.decision.tuning) << before.why;
  EXPECT_EQ(before.decision.tune_after_bytes, 4u << 20) << before.why;
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  JitStats st = jit->stats();
  EXPECT_EQ(st.tunings_pending, 0u);
  EXPECT_EQ(st.kernels_tuned, 0u);

  const codes::LinearCode code = *codes::build_code(spec);
  const size_t len = 64 << 10;  // 640 KiB of input per call: the 7th call passes 4 MiB
  const Reference r = reference_parity(code, len, 11);
  const auto &want = r.want;
  const auto &in = r.in;
  std::atomic<int> wrong{0};
  auto encode_calls = [&](int calls) {
    std::vector<std::vector<uint8_t>> p(code.m, std::vector<uint8_t>(len));
    std::vector<uint8_t *> out;
    for (auto &s : p) out.push_back(s.data());
    for (int c = 0; c < calls; ++c) {
      for (auto &s : p) std::fill(s.begin(), s.end(), 0x5A);
      if (!(*codec)->encode(Span<const uint8_t *const>(in.data(), code.k), Span<uint8_t *const>(out.data(), code.m), len).ok() ||
          p != want)
        ++wrong;
    }
  };
  encode_calls(6);  // 3.75 MiB: not yet
  st = jit->stats();
  EXPECT_EQ(st.tunings_pending + st.kernels_tuned, 0u);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) threads.emplace_back(encode_calls, 4);
  for (auto &t : threads) t.join();
  st = jit->stats();
  EXPECT_EQ(st.tunings_pending + st.kernels_tuned, 1u) << "exactly one tuning queued by the calls";
  EXPECT_EQ((*codec)->encoder_info().decision.tune_after_bytes, 0u) << (*codec)->encoder_info().why;
  jit->wait_for_tuning();
  EXPECT_EQ((*codec)->encoder_info().decision.source, ecjit::DecisionSource::kTuned) << (*codec)->encoder_info().why;
  encode_calls(3);
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(jit->stats().kernels_tuned, 1u);
}

// wait_for_tuning() starts a deferred tuning at once: a benchmark that waits before it
// measures times the tuned encoder, not the tuning.
TEST(TieredTuning, WaitForTuningStartsDeferredTunings) {
  if (gf8_has_one_candidate()) GTEST_SKIP() << "nothing to tune";
  std::shared_ptr<Jit> jit = fresh_jit();
  ASSERT_TRUE(jit);
  auto codec = jit->codec("rs-vand:k=6,m=3,gf=8");
  ASSERT_TRUE(codec.ok());
  EXPECT_TRUE((*codec)->encoder_info().decision.tuning) << (*codec)->encoder_info().why;
  EXPECT_EQ((*codec)->encoder_info().decision.tune_after_bytes, 256ull << 20) << (*codec)->encoder_info().why;
  jit->wait_for_tuning();
  EXPECT_EQ((*codec)->encoder_info().decision.source, ecjit::DecisionSource::kTuned) << (*codec)->encoder_info().why;
  EXPECT_EQ(jit->stats().kernels_tuned, 1u);
}

// Synchronous tuning (tune_in_background = false): codec() returns the winner.
TEST(TieredTuning, SynchronousModeReturnsTheWinner) {
  JitOptions o;
  o.aot_kernels = false;  // the codec's own kernels from codec() on: tiering is tested here
  o.disk_cache = false;
  o.tune_in_background = false;
  auto jit = Jit::create(o);
  ASSERT_TRUE(jit.ok());
  if (jit::candidate_strategies(info("host"), 8).size() < 2) GTEST_SKIP() << "nothing to tune";
  auto codec = (*jit)->codec("rs-vand:k=10,m=4,gf=8");
  ASSERT_TRUE(codec.ok());
  EXPECT_EQ((*codec)->encoder_info().decision.source, ecjit::DecisionSource::kTuned) << (*codec)->encoder_info().why;
  EXPECT_EQ((*jit)->stats().tunings_pending, 0u);
}

}  // namespace
