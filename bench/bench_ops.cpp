// bench_ops: reconstruct (cold / cached) vs ISA-L's decode path, small-write update vs
// re-encode, verify, and algebraic signature throughput, all in one binary.
//
// Bytes counted: reconstruct and verify count the k x len bytes of the stripe's data
// (reconstruct reads k shards); update counts the one changed shard (len); re-encode counts
// k x len; signatures count len. Compare update and re-encode by time per operation.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "codes/decode.h"
#include "codes/linear_code.h"
#include "ecjit/ecjit.h"

extern "C" {
#include <isa-l/erasure_code.h>
}

namespace {

constexpr unsigned kK = 10, kM = 4, kN = kK + kM;
const char *const kSpec = "isal-cauchy:k=10,m=4";  // bit-identical to gf_gen_cauchy1_matrix

struct Stripe {
  std::vector<std::unique_ptr<uint8_t, decltype(&std::free)>> bufs;
  std::vector<uint8_t *> p;
  Stripe(unsigned n, size_t len) {
    std::mt19937_64 rng(n * 31 + len);
    for (unsigned s = 0; s < n; ++s) {
      bufs.emplace_back(static_cast<uint8_t *>(std::aligned_alloc(64, (len + 63) / 64 * 64)), std::free);
      p.push_back(bufs.back().get());
      for (size_t i = 0; i < len; ++i) p[s][i] = uint8_t(rng());
    }
  }
};

std::shared_ptr<ecjit::Jit> make_jit(size_t cap, bool tune = true,
                                     size_t promote_after = ecjit::JitOptions().promote_after_bytes) {
  ecjit::JitOptions o;
  o.max_cached_kernels = cap;
  o.promote_after_bytes = promote_after;
  o.tune = tune;  // default: decoders are tuned in the background (see wait_for_tuning below)
  o.disk_cache = false;
  auto j = ecjit::Jit::create(o);
  return j.ok() ? *j : nullptr;
}

std::vector<bool> lost_first(unsigned lost, unsigned offset = 0) {
  std::vector<bool> present(kN, true);
  for (unsigned i = 0; i < lost; ++i) present[(i + offset) % kK] = false;
  return present;
}

// ecjit reconstruct; cold: capacity-1 cache and two alternating erasure sets, so every call
// compiles its decoder (O3, no disk cache) before running it.
void bm_ecjit_reconstruct(benchmark::State &state, unsigned lost, size_t len, bool cold,
                          bool tune) {
  auto jit = make_jit(cold ? 1 : 64, tune);
  auto codec = jit->codec(kSpec);
  Stripe st(kN, len);
  if (!(*codec)->encode({const_cast<const uint8_t *const *>(st.p.data()), kK}, {st.p.data() + kK, kM}, len).ok())
    state.SkipWithError("encode");
  const std::vector<bool> a = lost_first(lost, 0), b = lost_first(lost, 5);
  if (!(*codec)->reconstruct(st.p, a, len).ok()) state.SkipWithError("reconstruct");
  if (!cold) jit->wait_for_tuning();  // warm runs measure the tuned decoder
  bool flip = false;
  for (auto _ : state) {
    flip = !flip;
    auto s = (*codec)->reconstruct(st.p, cold && flip ? b : a, len);
    benchmark::DoNotOptimize(s.ok());
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * kK * int64_t(len));
}

// ISA-L's decode path: invert the k surviving rows, build tables, ec_encode_data. cold: the
// matrix work every call; cached: tables prepared once.
void bm_isal_reconstruct(benchmark::State &state, unsigned lost, size_t len, bool cold) {
  std::vector<uint8_t> enc(kN * kK), sub(kK * kK), inv(kK * kK), dec(kM * kK), tbls(kM * kK * 32);
  gf_gen_cauchy1_matrix(enc.data(), kN, kK);
  Stripe st(kN, len);
  std::vector<uint8_t> etbls(kK * kM * 32);
  ec_init_tables(kK, kM, enc.data() + kK * kK, etbls.data());
  ec_encode_data(int(len), kK, kM, etbls.data(), st.p.data(), st.p.data() + kK);
  const std::vector<bool> present = lost_first(lost);
  std::vector<uint8_t *> src, dst;
  std::vector<unsigned> lost_rows;
  for (unsigned s = 0; s < kN && src.size() < kK; ++s)
    if (present[s]) src.push_back(st.p[s]);
  for (unsigned s = 0; s < kK; ++s)
    if (!present[s]) dst.push_back(st.p[s]), lost_rows.push_back(s);
  auto setup = [&] {
    unsigned r = 0;
    for (unsigned s = 0; s < kN && r < kK; ++s)
      if (present[s]) std::memcpy(&sub[r++ * kK], &enc[s * kK], kK);
    gf_invert_matrix(sub.data(), inv.data(), kK);
    for (size_t i = 0; i < lost_rows.size(); ++i)
      std::memcpy(&dec[i * kK], &inv[lost_rows[i] * kK], kK);
    ec_init_tables(kK, int(lost_rows.size()), dec.data(), tbls.data());
  };
  setup();
  for (auto _ : state) {
    if (cold) setup();
    ec_encode_data(int(len), kK, int(dst.size()), tbls.data(), src.data(), dst.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * kK * int64_t(len));
}

// Small write of one data shard: ecjit update (fused old ^ new, one pass) vs ecjit
// re-encode of the whole stripe vs ISA-L (delta by hand + ec_encode_data_update).
// which 0: the set's own kernel (promoted by its first call, waited for); 3: the accumulate
// shape kernel every first call of a set runs on (never promoted).
void bm_update(benchmark::State &state, int which, size_t len) {
  auto jit = make_jit(64, true, which == 3 ? ~size_t(0) : which == 0 ? 1 : ecjit::JitOptions().promote_after_bytes);
  auto codec = jit->codec(kSpec);
  Stripe st(kN, len), fresh(1, len);
  std::vector<uint8_t *> parity(st.p.begin() + kK, st.p.end());
  std::vector<const uint8_t *> data(st.p.begin(), st.p.begin() + kK);
  std::vector<const uint8_t *> olds{st.p[3]}, news{fresh.p[0]};
  std::vector<uint8_t> enc(kN * kK), tbls(kK * kM * 32), delta(len);
  gf_gen_cauchy1_matrix(enc.data(), kN, kK);
  ec_init_tables(kK, kM, enc.data() + kK * kK, tbls.data());
  if (!(*codec)->update({3}, olds, news, parity, len).ok()) state.SkipWithError("update");
  jit->wait_for_tuning();
  for (auto _ : state) {
    if (which == 0 || which == 3) {
      benchmark::DoNotOptimize((*codec)->update({3}, olds, news, parity, len).ok());
    } else if (which == 1) {
      benchmark::DoNotOptimize((*codec)->encode(data, parity, len).ok());
    } else {
      for (size_t i = 0; i < len; ++i) delta[i] = st.p[3][i] ^ fresh.p[0][i];
      ec_encode_data_update(int(len), kK, kM, 3, tbls.data(), delta.data(), parity.data());
    }
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(which == 1 ? kK * len : len));
}

void bm_verify(benchmark::State &state, size_t len) {
  auto jit = make_jit(64);
  auto codec = jit->codec(kSpec);
  Stripe st(kN, len);
  std::vector<const uint8_t *> all(st.p.begin(), st.p.end());
  (void)(*codec)->encode({all.data(), kK}, {st.p.data() + kK, kM}, len);
  auto first = (*codec)->verify(all, len);
  if (!first.ok() || !*first) state.SkipWithError("verify");
  for (auto _ : state) benchmark::DoNotOptimize((*codec)->verify(all, len).ok());
  state.SetBytesProcessed(int64_t(state.iterations()) * kK * int64_t(len));
}

void bm_signature(benchmark::State &state, const char *spec, unsigned comps, size_t len) {
  auto jit = make_jit(64);
  auto codec = jit->codec(spec);
  Stripe st(1, len);
  uint64_t sig[16];
  if (!(*codec)->signature(st.p[0], len, {sig, comps}).ok()) state.SkipWithError("signature");
  for (auto _ : state) {
    benchmark::DoNotOptimize((*codec)->signature(st.p[0], len, {sig, comps}).ok());
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(len));
}

// Decode set-up of a wide code: the plan of a new erasure set of `lost`
// data shards, rs-cauchy:k=4000,m=96,gf=16 - inversion and coefficients, no compile.
void bm_wide_setup(benchmark::State &state, unsigned lost) {
  auto code = ecjit::codes::build_code("rs-cauchy:k=4000,m=96,gf=16");
  if (!code.ok()) {
    state.SkipWithError(code.status().to_string().c_str());
    return;
  }
  unsigned round = 0;
  for (auto _ : state) {
    std::vector<bool> present(code->n(), true);
    std::vector<unsigned> wanted;
    for (unsigned i = 0; i < lost; ++i) wanted.push_back((i * 163 + round * 7) % code->k);
    std::sort(wanted.begin(), wanted.end());
    wanted.erase(std::unique(wanted.begin(), wanted.end()), wanted.end());
    for (unsigned w : wanted) present[w] = false;
    ++round;
    auto plan = ecjit::codes::plan_decode(*code, present, wanted, ecjit::codes::CostModel::kNoSearch, false);
    if (!plan.ok()) state.SkipWithError(plan.status().to_string().c_str());
    benchmark::DoNotOptimize(plan);
  }
}

void register_all() {
  for (unsigned lost : {1u, 24u, 96u})
    benchmark::RegisterBenchmark(("setup/wide_plan/rs-cauchy_k4000_m96_gf16/lost:" + std::to_string(lost)).c_str(),
                                 bm_wide_setup, lost)
        ->Unit(benchmark::kMillisecond);
  for (size_t len : {size_t(64) << 10, size_t(1) << 20})
    for (unsigned lost : {1u, 2u, 4u}) {
      const std::string tag = "/lost:" + std::to_string(lost) + "/len:" + std::to_string(len >> 10) + "K";
      benchmark::RegisterBenchmark(("reconstruct/ecjit_cached" + tag).c_str(), bm_ecjit_reconstruct, lost, len, false, true);
      benchmark::RegisterBenchmark(("reconstruct/isal_cached" + tag).c_str(), bm_isal_reconstruct, lost, len, false);
      benchmark::RegisterBenchmark(("reconstruct/ecjit_cold" + tag).c_str(), bm_ecjit_reconstruct, lost, len, true, true)
          ->Iterations(20);
      benchmark::RegisterBenchmark(("reconstruct/ecjit_cold_untuned" + tag).c_str(), bm_ecjit_reconstruct, lost, len, true, false)
          ->Iterations(20);
      benchmark::RegisterBenchmark(("reconstruct/isal_cold" + tag).c_str(), bm_isal_reconstruct, lost, len, true);
    }
  for (size_t len : {size_t(4) << 10, size_t(64) << 10}) {
    const std::string tag = "/len:" + std::to_string(len >> 10) + "K";
    benchmark::RegisterBenchmark(("update/ecjit_update" + tag).c_str(), bm_update, 0, len);
    benchmark::RegisterBenchmark(("update/ecjit_update_shape" + tag).c_str(), bm_update, 3, len);
    benchmark::RegisterBenchmark(("update/ecjit_reencode" + tag).c_str(), bm_update, 1, len);
    benchmark::RegisterBenchmark(("update/isal_delta_update" + tag).c_str(), bm_update, 2, len);
  }
  for (size_t len : {size_t(64) << 10, size_t(1) << 20})
    benchmark::RegisterBenchmark(("verify/ecjit/len:" + std::to_string(len >> 10) + "K").c_str(), bm_verify, len);
  for (const char *spec : {"rs-vand:k=10,m=4,gf=8", "rs-vand:k=10,m=4,gf=16"})
    for (unsigned comps : {1u, 2u, 4u})
      for (size_t len : {size_t(64) << 10, size_t(1) << 20})
        benchmark::RegisterBenchmark(("signature/" + std::string(strstr(spec, "gf=")) + "/n:" +
                                      std::to_string(comps) + "/len:" + std::to_string(len >> 10) + "K")
                                         .c_str(),
                                     bm_signature, spec, comps, len);
}

}  // namespace

int main(int argc, char **argv) {
  register_all();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
