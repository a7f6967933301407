// Tuner: candidates per target, the fastest is kept, the decision is recorded and reused,
// and whatever it picks computes the same parity as the reference codec.
#include <gtest/gtest.h>

#include <random>

#include <atomic>

#include "codes/linear_code.h"
#include "codes/reference_codec.h"
#include "jit/target_spec.h"
#include "jit/tuner.h"
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

bool same_as_reference(const codes::LinearCode &code, void *address, size_t len) {
  std::vector<std::vector<uint8_t>> d(code.k, std::vector<uint8_t>(len)), p(code.m, std::vector<uint8_t>(len)),
      want(code.m, std::vector<uint8_t>(len));
  std::mt19937 rng(11);
  for (auto &s : d)
    for (auto &b : s) b = uint8_t(rng());
  std::vector<const uint8_t *> in;
  std::vector<uint8_t *> out, ref;
  for (auto &s : d) in.push_back(s.data());
  for (unsigned i = 0; i < code.m; ++i) out.push_back(p[i].data()), ref.push_back(want[i].data());
  if (!codes::ref_encode(code, in.data(), ref.data(), len).ok()) return false;
  reinterpret_cast<KernelFn>(address)(in.data(), out.data(), len);
  return p == want;
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
  llvm::SmallString<128> dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("ecjit-tuner", dir));
  jit::DiskCache disk{std::string(dir)};
  auto session = jit::JitSession::create();
  ASSERT_TRUE(bool(session));
  jit::TuneOptions quick;
  quick.budget_ms = 1.0;
  for (unsigned gf : {8u, 16u, 32u}) {
    codes::LinearCode code = *codes::build_code("rs-vand:k=10,m=4,gf=" + std::to_string(gf));
    jit::CompileRequest req{ir::KernelDesc{code.field, code.parity, "ecjit_tuner_test_gf" + std::to_string(gf)},
                            info("host"), ir::Strategy::kAuto, jit::OptLevel::kO3};
    auto first = jit::tune_kernel(**session, req, &disk, quick);
    ASSERT_TRUE(bool(first)) << llvm::toString(first.takeError());
    EXPECT_FALSE(first->from_record);
    EXPECT_NE(first->why.find("fastest of"), std::string::npos) << first->why;
    EXPECT_TRUE(same_as_reference(code, first->kernel->address(), 4656)) << first->why;
    auto second = jit::tune_kernel(**session, req, &disk, quick);
    ASSERT_TRUE(bool(second));
    EXPECT_TRUE(second->from_record) << second->why;
    EXPECT_TRUE(second->from_disk);
    EXPECT_EQ(second->strategy, first->strategy);
    EXPECT_TRUE(same_as_reference(code, second->kernel->address(), 4656));
  }
  llvm::sys::fs::remove_directories(dir);
}

// The kernel already serving calls is timed, not recompiled: when it wins the result
// carries no kernel, otherwise a different strategy's kernel; both are right.
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
    jit::TuneOptions o;
    o.budget_ms = 1.0;
    o.given_strategy = ir::Strategy::kClmulShift;
    o.given_address = (*given)->address();
    auto r = jit::tune_kernel(**session, req, nullptr, o);
    ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
    EXPECT_NE(r->why.find("clmul-shift"), std::string::npos) << r->why;
    if (r->strategy == ir::Strategy::kClmulShift) {
      EXPECT_EQ(r->kernel, nullptr) << "the given kernel won; nothing new to hand back";
    } else {
      ASSERT_NE(r->kernel, nullptr);
      EXPECT_TRUE(same_as_reference(code, r->kernel->address(), 4656)) << r->why;
    }
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
