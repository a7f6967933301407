// Tuner: candidates per target, the fastest is kept, the decision is recorded and reused,
// and whatever it picks computes the same parity as the reference codec.
#include <gtest/gtest.h>

#include <algorithm>

#include <functional>
#include <random>

#include <atomic>

#include "codes/linear_code.h"
#include "codes/reference_codec.h"
#include "jit/target_spec.h"
#include "ir_builders/kernel_builder.h"
#include "jit/tuner.h"
#include "jit/xor_packet_tuner.h"
#include "jit/xor_tuner.h"
#include "codes/bitmatrix_code.h"
#include "codes/xor_program.h"
#include "llvm/Support/FileSystem.h"

using namespace ecjit;

namespace {

using KernelFn = void (*)(const uint8_t *const *, uint8_t *const *, size_t);

ir::TargetInfo info(const std::string &t) {
  auto spec = jit::TargetSpec::parse(t);
  EXPECT_TRUE(bool(spec));
  auto i = spec->resolve();
  EXPECT_TRUE(bool(i));
  return *i;
}

// The kernel at `address` (in: k seeded data shards of len bytes, out: m parity shards,
// filled with 0xA5 first) against `reference` computing the same parity.
bool same_parity(unsigned k, unsigned m, size_t len, void *address,
                 const std::function<bool(const uint8_t *const *, uint8_t *const *)> &reference) {
  std::vector<std::vector<uint8_t>> d(k, std::vector<uint8_t>(len)), p(m, std::vector<uint8_t>(len, 0xA5)),
      want(m, std::vector<uint8_t>(len));
  std::mt19937 rng(11);
  for (auto &s : d)
    for (auto &b : s) b = uint8_t(rng());
  std::vector<const uint8_t *> in;
  std::vector<uint8_t *> out, ref;
  for (auto &s : d) in.push_back(s.data());
  for (unsigned i = 0; i < m; ++i) out.push_back(p[i].data()), ref.push_back(want[i].data());
  if (!reference(in.data(), ref.data())) return false;
  reinterpret_cast<KernelFn>(address)(in.data(), out.data(), len);
  return p == want;
}

bool same_as_reference(const codes::LinearCode &code, void *address, size_t len) {
  return same_parity(code.k, code.m, len, address, [&](const uint8_t *const *in, uint8_t *const *out) {
    return codes::ref_encode(code, in, out, len).ok();
  });
}

// A disk cache in a fresh directory, removed with it (also when an ASSERT returns early).
struct ScratchDisk {
  llvm::SmallString<128> dir;
  std::unique_ptr<jit::DiskCache> disk;
  explicit ScratchDisk(const char *prefix) {
    if (!llvm::sys::fs::createUniqueDirectory(prefix, dir))
      disk = std::make_unique<jit::DiskCache>(std::string(dir));
  }
  ~ScratchDisk() {
    if (disk) llvm::sys::fs::remove_directories(dir);
  }
};

// Tuning options that keep the tests quick: 1 ms of timing per candidate.
jit::TuneOptions quick_tuning() {
  jit::TuneOptions o;
  o.budget_ms = 1.0;
  return o;
}

TEST(Tuner, CandidatesFollowTheTarget) {
  auto scalar = jit::candidate_strategies(info("host-sse2"), 8);
  EXPECT_EQ(scalar, std::vector<ir::Strategy>{ir::Strategy::kClmulShift});
  auto gf64 = jit::candidate_strategies(info("host"), 64);
  EXPECT_EQ(gf64.front(), ir::Strategy::kClmulShift);
  auto x86v3 = jit::candidate_strategies(info("x86_64-v3"), 8);
  EXPECT_GE(x86v3.size(), 2u) << "split-table should be a candidate with AVX2";
}

TEST(Tuner, PicksRecordsAndReusesTheDecision) {
  ScratchDisk scratch("ecjit-tuner");
  ASSERT_TRUE(scratch.disk);
  const jit::DiskCache &disk = *scratch.disk;
  auto session = jit::JitSession::create();
  ASSERT_TRUE(bool(session));
  const jit::TuneOptions quick = quick_tuning();
  for (unsigned gf : {8u, 16u, 32u}) {
    codes::LinearCode code = *codes::build_code("rs-vand:k=10,m=4,gf=" + std::to_string(gf));
    jit::CompileRequest req{ir::KernelDesc{code.field, code.parity, "ecjit_tuner_test_gf" + std::to_string(gf)},
                            info("host"), ir::Strategy::kAuto, jit::OptLevel::kO3};
    auto first = jit::tune_kernel(**session, req, &disk, quick);
    ASSERT_TRUE(bool(first)) << llvm::toString(first.takeError());
    EXPECT_FALSE(first->from_record());
    EXPECT_FALSE(first->choice.measured.empty()) << first->choice.why;
    EXPECT_TRUE(same_as_reference(code, first->kernel->address(), 4656)) << first->choice.why;
    auto second = jit::tune_kernel(**session, req, &disk, quick);
    ASSERT_TRUE(bool(second));
    EXPECT_TRUE(second->from_record()) << second->choice.why;
    EXPECT_TRUE(second->from_disk);
    EXPECT_EQ(second->choice.strategy, first->choice.strategy);
    EXPECT_TRUE(same_as_reference(code, second->kernel->address(), 4656));
  }
}

// The kernel already serving calls is timed, not recompiled: when it wins the result
// carries no kernel, otherwise a different strategy's kernel (or the given strategy
// unrolled); both are right.
TEST(Tuner, TimesAGivenCandidateWithoutRecompilingIt) {
  auto session = jit::JitSession::create();
  ASSERT_TRUE(bool(session));
  for (unsigned gf : {8u, 32u}) {
    codes::LinearCode code = *codes::build_code("rs-vand:k=10,m=4,gf=" + std::to_string(gf));
    const ir::TargetInfo host = info("host");
    if (jit::candidate_strategies(host, gf).size() < 2) continue;
    jit::CompileRequest req{ir::KernelDesc{code.field, code.parity, "ecjit_tuner_given_gf" + std::to_string(gf)},
                            host, ir::Strategy::kClmulShift, jit::OptLevel::kO3};
    auto given = jit::jit_kernel(**session, req);
    ASSERT_TRUE(bool(given)) << llvm::toString(given.takeError());
    req.strategy = ir::Strategy::kAuto;
    jit::TuneOptions o = quick_tuning();
    o.given_strategy = ir::Strategy::kClmulShift;
    o.given_address = (*given)->address();
    auto r = jit::tune_kernel(**session, req, nullptr, o);
    ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
    EXPECT_TRUE(std::any_of(r->choice.measured.begin(), r->choice.measured.end(),
                            [](const ecjit::MeasuredCandidate &c) { return c.name == "clmul-shift"; }))
        << r->choice.why;
    if (r->choice.strategy == ir::Strategy::kClmulShift && r->choice.unroll == 1) {
      EXPECT_EQ(r->kernel, nullptr) << "the given kernel won; nothing new to hand back";
    } else {  // another strategy, or the given one unrolled
      ASSERT_NE(r->kernel, nullptr);
      EXPECT_TRUE(same_as_reference(code, r->kernel->address(), 4656)) << r->choice.why;
    }
  }
}

// Short loop bodies get unrolled candidates of the winning strategy, long ones do not; the
// kernel handed back (at whatever depth) computes the reference parity, and its depth is
// recorded and reused by the next process.
TEST(Tuner, UnrollsOnlyShortLoopBodies) {
  ScratchDisk scratch("ecjit-tuner-unroll");
  ASSERT_TRUE(scratch.disk);
  const jit::DiskCache &disk = *scratch.disk;
  auto session = jit::JitSession::create();
  ASSERT_TRUE(bool(session));
  const jit::TuneOptions quick = quick_tuning();
  struct Case {
    const char *spec;
    bool unrolled_candidates;
  } cases[] = {{"rs-vand:k=4,m=2,gf=8", true},     // 8 terms: depths 2 and 4
               {"rs-vand:k=4,m=2,gf=32", true},
               {"rs-vand:k=10,m=4,gf=16", true},   // 40 terms: depth 2
               {"rs-vand:k=12,m=6,gf=8", false}};  // 72 terms: none
  for (const Case &c : cases) {
    SCOPED_TRACE(c.spec);
    codes::LinearCode code = *codes::build_code(c.spec);
    jit::CompileRequest req{ir::KernelDesc{code.field, code.parity,
                                           ir::kernel_symbol("encode", c.spec, "tuner_unroll")},
                            info("host"), ir::Strategy::kAuto, jit::OptLevel::kO3};
    auto r = jit::tune_kernel(**session, req, &disk, quick);
    ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
    EXPECT_EQ(std::any_of(r->choice.measured.begin(), r->choice.measured.end(),
                          [](const ecjit::MeasuredCandidate &m) { return m.unroll > 1; }),
              c.unrolled_candidates)
        << r->choice.why;
    EXPECT_TRUE(r->choice.unroll == 1 || r->choice.unroll == 2 || (r->choice.unroll == 4 && code.k * code.m <= 24))
        << r->choice.unroll;
    ASSERT_NE(r->kernel, nullptr);
    EXPECT_EQ(r->kernel->unroll(), r->choice.unroll);
    for (size_t len : {size_t(8), size_t(4656), size_t(100000)})
      EXPECT_TRUE(same_as_reference(code, r->kernel->address(), len)) << r->choice.why;
    auto again = jit::tune_kernel(**session, req, &disk, quick);
    ASSERT_TRUE(bool(again));
    EXPECT_TRUE(again->from_record());
    EXPECT_EQ(again->choice.strategy, r->choice.strategy);
    EXPECT_EQ(again->choice.unroll, r->choice.unroll);
    EXPECT_EQ(again->kernel->unroll(), r->choice.unroll);
  }
}

// A record names the strategy and depth; the recorded kernel is built with both. A record
// that does not parse is ignored (the caller tunes again), never half-applied.
TEST(Tuner, RecordedDepthIsBuiltAndBadRecordsAreIgnored) {
  ScratchDisk scratch("ecjit-tuner-record");
  ASSERT_TRUE(scratch.disk);
  const jit::DiskCache &disk = *scratch.disk;
  auto session = jit::JitSession::create();
  ASSERT_TRUE(bool(session));
  codes::LinearCode code = *codes::build_code("rs-vand:k=5,m=3,gf=16");
  jit::CompileRequest req{ir::KernelDesc{code.field, code.parity, "ecjit_tuner_record_gf16"},
                          info("host"), ir::Strategy::kAuto, jit::OptLevel::kO3};
  const std::string key = jit::tuning_record_key(req);
  disk.store_text(key, "clmul-shift unroll=4\npinned by the test");
  auto r = jit::recorded_kernel(**session, req, &disk);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->choice.strategy, ir::Strategy::kClmulShift);
  EXPECT_EQ(r->choice.unroll, 4u);
  EXPECT_EQ(r->kernel->unroll(), 4u);
  EXPECT_EQ(r->choice.why, "recorded: pinned by the test");
  EXPECT_EQ(r->kernel->choice().source, ecjit::DecisionSource::kRecorded);
  for (size_t len : {size_t(2), size_t(4650), size_t(100002)})
    EXPECT_TRUE(same_as_reference(code, r->kernel->address(), len)) << len;
  for (const char *bad : {"clmul-shift unroll=9\n", "clmul-shift unroll=0\n", "clmul-shift unrolled\n",
                          "clmul-shift unroll=4 more\n", "auto\n", "nonsense unroll=2\n"}) {
    disk.store_text(key, bad);
    EXPECT_FALSE(jit::recorded_kernel(**session, req, &disk).has_value()) << bad;
  }
}

TEST(Tuner, StopsWhenCanceled) {
  auto session = jit::JitSession::create();
  ASSERT_TRUE(bool(session));
  codes::LinearCode code = *codes::build_code("rs-vand:k=10,m=4,gf=8");
  jit::CompileRequest req{ir::KernelDesc{code.field, code.parity, "ecjit_tuner_cancel"}, info("host"),
                          ir::Strategy::kAuto, jit::OptLevel::kO3};
  std::atomic<bool> cancel{true};
  jit::TuneOptions o;
  o.cancel = &cancel;
  auto r = jit::tune_kernel(**session, req, nullptr, o);
  ASSERT_FALSE(bool(r));
  EXPECT_NE(llvm::toString(r.takeError()).find("canceled"), std::string::npos);
}

}  // namespace

namespace {

// The kernel at `address` against the bit-matrix reference encoder, over three blocks.
bool xor_same_as_reference(const codes::BitMatrixCode &code, void *address) {
  const size_t len = 3 * code.block_bytes();
  return same_parity(code.k, code.m, len, address, [&](const uint8_t *const *in, uint8_t *const *out) {
    return codes::ref_bitmatrix_encode(code, in, out, len).ok();
  });
}

}  // namespace

// The XOR schedule tuner: a schedule that computes the map wins, its kernel encodes as the
// reference does, the decision is recorded, reused without timing, and a damaged record
// is ignored (tuned again). Cauchy RS(10,4) w=8 has three distinct schedules.
TEST(XorTuner, PicksRecordsAndReusesTheSchedule) {
  ScratchDisk scratch("ecjit-xor-tuner");
  ASSERT_TRUE(scratch.disk);
  auto session = jit::JitSession::create();
  ASSERT_TRUE(bool(session));
  const ir::TargetInfo host = info("host");
  auto code = codes::build_bitmatrix_code(*CodeSpec::parse("cauchy-good:k=10,m=4,w=8"));
  ASSERT_TRUE(code.ok()) << code.status().to_string();
  auto plan = jit::xor_encoder_plan(*code, "host");
  ASSERT_TRUE(plan.ok());
  auto tuned = jit::tune_xor_kernel(**session, *plan, host, jit::OptLevel::kO3, scratch.disk.get(), quick_tuning());
  ASSERT_TRUE(bool(tuned)) << llvm::toString(tuned.takeError());
  EXPECT_EQ(tuned->source, ecjit::DecisionSource::kTuned);
  std::vector<std::string> timed;
  for (const ecjit::MeasuredCandidate &c : tuned->candidates) timed.push_back(c.name);
  std::sort(timed.begin(), timed.end());
  EXPECT_EQ(timed, (std::vector<std::string>{"smart", "um", "wm"})) << tuned->why;
  EXPECT_TRUE(codes::check_program(tuned->plan.desc.program, plan->map).ok());
  EXPECT_TRUE(xor_same_as_reference(*code, tuned->kernel->address()));

  auto again = jit::tune_xor_kernel(**session, *plan, host, jit::OptLevel::kO3, scratch.disk.get(), quick_tuning());
  ASSERT_TRUE(bool(again)) << llvm::toString(again.takeError());
  EXPECT_EQ(again->source, ecjit::DecisionSource::kRecorded);
  EXPECT_EQ(again->plan.schedule, tuned->plan.schedule);
  EXPECT_EQ(again->plan.desc.program.ops, tuned->plan.desc.program.ops);
  EXPECT_TRUE(xor_same_as_reference(*code, again->kernel->address()));

  scratch.disk->store_text(jit::xor_tuning_record_key(*plan, host, jit::OptLevel::kO3), "no-such-schedule\nforged");
  EXPECT_FALSE(jit::recorded_xor_kernel(**session, *plan, host, jit::OptLevel::kO3, scratch.disk.get()));
  auto retuned = jit::tune_xor_kernel(**session, *plan, host, jit::OptLevel::kO3, scratch.disk.get(), quick_tuning());
  ASSERT_TRUE(bool(retuned)) << llvm::toString(retuned.takeError());
  EXPECT_FALSE(retuned->from_record());
  EXPECT_TRUE(xor_same_as_reference(*code, retuned->kernel->address()));

  // Another map (liberation) has another record: the key names the map, not the program.
  auto lib = codes::build_bitmatrix_code(*CodeSpec::parse("liberation:k=5,m=2,w=5"));
  ASSERT_TRUE(lib.ok());
  auto lib_plan = jit::xor_encoder_plan(*lib, "host");
  ASSERT_TRUE(lib_plan.ok());
  EXPECT_NE(jit::xor_tuning_record_key(*lib_plan, host, jit::OptLevel::kO3),
            jit::xor_tuning_record_key(*plan, host, jit::OptLevel::kO3));
  auto lib_tuned = jit::tune_xor_kernel(**session, *lib_plan, host, jit::OptLevel::kO3, scratch.disk.get(), quick_tuning());
  ASSERT_TRUE(bool(lib_tuned)) << llvm::toString(lib_tuned.takeError());
  EXPECT_FALSE(lib_tuned->from_record());
  EXPECT_TRUE(xor_same_as_reference(*lib, lib_tuned->kernel->address()));
}

// packet=auto's tuner: every candidate timed (each named in the why), the choice one of them,
// recorded and reused without timing; an encoder past kMaxPacketTunedXors keeps the default
// untimed.
TEST(XorPacketTuner, PicksRecordsAndReusesThePacket) {
  ScratchDisk scratch("ecjit-xor-packet");
  ASSERT_TRUE(scratch.disk);
  auto session = jit::JitSession::create();
  ASSERT_TRUE(bool(session));
  const ir::TargetInfo host = info("host");
  const CodeSpec spec = *CodeSpec::parse("cauchy-good:k=4,m=2,w=8,packet=auto");
  auto chosen = jit::tune_xor_packet(**session, spec, host, "host", jit::OptLevel::kO3, scratch.disk.get(),
                                     quick_tuning());
  ASSERT_TRUE(bool(chosen)) << llvm::toString(chosen.takeError());
  EXPECT_EQ(chosen->source, ecjit::DecisionSource::kTuned);
  bool known = false;
  for (unsigned p : jit::kXorPacketCandidates) {
    known |= chosen->packet == p;
    EXPECT_TRUE(std::any_of(chosen->candidates.begin(), chosen->candidates.end(),
                            [&](const ecjit::MeasuredCandidate &c) { return c.name == std::to_string(p); }))
        << chosen->why;
  }
  EXPECT_TRUE(known) << chosen->packet;
  auto again = jit::tune_xor_packet(**session, spec, host, "host", jit::OptLevel::kO3, scratch.disk.get(),
                                    quick_tuning());
  ASSERT_TRUE(bool(again)) << llvm::toString(again.takeError());
  EXPECT_EQ(again->source, ecjit::DecisionSource::kRecorded);
  EXPECT_EQ(again->packet, chosen->packet);
  // Another code has its own record: tuned, not read from the first one's.
  auto other = jit::tune_xor_packet(**session, *CodeSpec::parse("liberation:k=5,w=5,packet=auto"), host, "host",
                                    jit::OptLevel::kO3, scratch.disk.get(), quick_tuning());
  ASSERT_TRUE(bool(other)) << llvm::toString(other.takeError());
  EXPECT_FALSE(other->from_record());
  // RS(32,8) w=8: 2,600-odd XORs per block position, too many to compile seven times.
  auto big = jit::tune_xor_packet(**session, *CodeSpec::parse("cauchy-good:k=32,m=8,w=8,packet=auto"), host, "host",
                                  jit::OptLevel::kO3, scratch.disk.get(), quick_tuning());
  ASSERT_TRUE(bool(big)) << llvm::toString(big.takeError());
  EXPECT_EQ(big->packet, kDefaultPacket);
  EXPECT_TRUE(big->candidates.empty()) << big->why;  // kept untimed
  EXPECT_EQ(big->source, ecjit::DecisionSource::kStatic) << big->why;
}

// The incumbent serving calls is handed in (TuneOptions::given_address): timed as it is, never
// compiled again, and no kernel comes back when it stays.
TEST(XorTuner, TimesAGivenIncumbentWithoutCompilingIt) {
  ScratchDisk scratch("ecjit-xor-tuner-given");
  ASSERT_TRUE(scratch.disk);
  auto session = jit::JitSession::create();
  ASSERT_TRUE(bool(session));
  const ir::TargetInfo host = info("host");
  auto code = codes::build_bitmatrix_code(*CodeSpec::parse("cauchy-good:k=6,m=3,w=8"));
  ASSERT_TRUE(code.ok()) << code.status().to_string();
  auto plan = jit::xor_encoder_plan(*code, "host");
  ASSERT_TRUE(plan.ok());
  const jit::CompileRequest req = jit::xor_compile_request(plan->desc, host, jit::OptLevel::kO3);
  auto incumbent = jit::jit_kernel(**session, req, nullptr, /*disk=*/nullptr, nullptr);
  ASSERT_TRUE(bool(incumbent)) << llvm::toString(incumbent.takeError());
  jit::TuneOptions o = quick_tuning();
  o.given_address = (*incumbent)->address();
  auto tuned = jit::tune_xor_kernel(**session, *plan, host, jit::OptLevel::kO3, scratch.disk.get(), o);
  ASSERT_TRUE(bool(tuned)) << llvm::toString(tuned.takeError());
  EXPECT_GE(tuned->candidates.size(), 2u) << tuned->why;
  // Compiled through the disk cache, the incumbent's object would be there now.
  EXPECT_FALSE(llvm::sys::fs::exists(scratch.disk->path_for(jit::kernel_cache_key(req))));
  const bool stayed = tuned->plan.desc.program.ops == plan->desc.program.ops;
  EXPECT_EQ(tuned->kernel == nullptr, stayed) << tuned->why;
  EXPECT_TRUE(xor_same_as_reference(*code, stayed ? (*incumbent)->address() : tuned->kernel->address()));

  // The record the same way: its kernel only when it names another program.
  auto recorded = jit::recorded_xor_kernel(**session, *plan, host, jit::OptLevel::kO3, scratch.disk.get(),
                                           /*given=*/true);
  ASSERT_TRUE(recorded);
  EXPECT_EQ(recorded->kernel == nullptr, stayed);
  auto compiled = jit::recorded_xor_kernel(**session, *plan, host, jit::OptLevel::kO3, scratch.disk.get());
  ASSERT_TRUE(compiled && compiled->kernel);
  EXPECT_TRUE(xor_same_as_reference(*code, compiled->kernel->address()));
}
