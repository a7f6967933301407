// bench_first_codec: what a new codec costs before its first call, and how the kernels built into
// libecjit (JitOptions::aot_kernels) run against the codec's own once those are compiled.
//
//   build/bench/bench_first_codec [--spec S] [--sizes 4K,64K,1M] [--calls N] [--reps R]
//
// One process, no disk cache. Jit::create() and codec() are timed cold. The Jit's background
// thread is then held (a job waiting on a gate), so every call runs on the built-in kernels;
// each row times `calls` reconstructs of lost shards 0..r-1 (r = 1, 2, m) and `calls` encodes,
// best of `reps`, in GB/s of k x shard input. The gate opens, wait_for_tuning() lets the codec's
// own encoder and shape kernels land (and tunes the encoder), and the same rows run again.
// promote_after_bytes is unbounded: no set gets its own decoder.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <random>
#include <string>
#include <vector>

#include "bench/bench_args.h"
#include "ecjit/ecjit.h"
#include "runtime/jit_impl.h"

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

struct Row {
  std::string what;
  double gbps = 0;
};

// Best of `reps` rounds of `calls` calls of `call`, in GB/s of `input_bytes` per call.
template <typename Call>
double best_gbps(int reps, int calls, size_t input_bytes, Call &&call) {
  call();  // the first call of a set plans it
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = Clock::now();
    for (int i = 0; i < calls; ++i) call();
    best = std::min(best, std::chrono::duration<double>(Clock::now() - t0).count() / calls);
  }
  return double(input_bytes) / best / 1e9;
}

std::vector<Row> measure(const ecjit::Codec &codec, size_t len, int calls, int reps) {
  const unsigned k = codec.k(), m = codec.m(), n = k + m;
  std::vector<std::vector<uint8_t>> shards(n, std::vector<uint8_t>(len));
  std::mt19937 rng(len);
  for (auto &s : shards)
    for (auto &b : s) b = uint8_t(rng());
  std::vector<uint8_t *> all;
  for (auto &s : shards) all.push_back(s.data());
  std::vector<const uint8_t *> data(all.begin(), all.begin() + k);
  std::vector<uint8_t *> parity(all.begin() + k, all.end());
  std::vector<Row> rows;
  std::vector<unsigned> counts;
  for (unsigned lost : {1u, 2u, m})
    if (lost <= m && (counts.empty() || counts.back() < lost)) counts.push_back(lost);
  for (unsigned lost : counts) {
    std::vector<bool> present(n, true);
    for (unsigned i = 0; i < lost; ++i) present[i] = false;
    rows.push_back({"lost 0.." + std::to_string(lost - 1), best_gbps(reps, calls, size_t(k) * len, [&] {
                      if (!codec.reconstruct(all, present, len).ok()) std::abort();
                    })});
  }
  rows.push_back({"encode", best_gbps(reps, calls, size_t(k) * len, [&] {
                    if (!codec.encode(data, parity, len).ok()) std::abort();
                  })});
  return rows;
}

}  // namespace

int main(int argc, char **argv) {
  std::string spec = "rs-vand:k=10,m=4", sizes_text = "4K,64K,1M";
  int calls = 200, reps = 5;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&] { return ecjit::bench::option_value("bench_first_codec", argc, argv, &i); };
    if (a == "--spec") spec = next();
    else if (a == "--sizes") sizes_text = next();
    else if (a == "--calls") calls = std::atoi(next().c_str());
    else if (a == "--reps") reps = std::atoi(next().c_str());
    else {
      std::fprintf(a == "--help" ? stdout : stderr,
                   "usage: bench_first_codec [--spec S] [--sizes 4K,64K,1M] [--calls N] [--reps R]\n"
                   "  cold Jit::create() and codec(), then the built-in kernels against the codec's own\n");
      return a == "--help" ? 0 : 2;
    }
  }
  std::vector<size_t> sizes;
  for (const std::string &text : ecjit::bench::split_list(sizes_text)) {
    size_t v = 0;
    if (!ecjit::bench::parse_size(text, &v)) {
      std::fprintf(stderr, "bench_first_codec: --sizes '%s' is not a list like 4K,64K,1M\n", sizes_text.c_str());
      return 2;
    }
    sizes.push_back(v);
  }
  if (calls < 1 || reps < 1) {
    std::fprintf(stderr, "bench_first_codec: --calls and --reps must be at least 1\n");
    return 2;
  }

  ecjit::JitOptions o;
  o.disk_cache = false;
  o.promote_after_bytes = ~size_t(0);
  auto t0 = Clock::now();
  auto jit = ecjit::Jit::create(o);
  const double create_ms = ms_since(t0);
  if (!jit.ok()) {
    std::fprintf(stderr, "bench_first_codec: %s\n", jit.status().to_string().c_str());
    return 1;
  }
  std::promise<void> gate;
  std::shared_future<void> open = gate.get_future().share();
  if (!static_cast<ecjit::runtime::JitImpl &>(**jit).submit_background([open] { open.wait(); }, nullptr, false)) {
    std::fprintf(stderr, "bench_first_codec: the background thread refused the gate\n");
    return 1;
  }
  t0 = Clock::now();
  auto codec = (*jit)->codec(spec);
  const double codec_ms = ms_since(t0);
  if (!codec.ok()) {
    gate.set_value();
    std::fprintf(stderr, "bench_first_codec: %s\n", codec.status().to_string().c_str());
    return 1;
  }
  const ecjit::KernelInfo first = (*codec)->encoder_info();
  std::printf("%s: Jit::create %.1f ms, codec() %.2f ms cold; first calls on %s (%s)\n", spec.c_str(), create_ms,
              codec_ms, first.symbol.c_str(), first.strategy.c_str());
  std::vector<std::vector<Row>> builtin;
  for (size_t len : sizes) builtin.push_back(measure(**codec, len, calls, reps));
  gate.set_value();
  (*jit)->wait_for_tuning();
  std::printf("then: %s (%s)\n\n", (*codec)->encoder_info().symbol.c_str(), (*codec)->encoder_info().why.c_str());
  std::printf("%-8s %-10s %12s %12s %8s\n", "shard", "call", "built-in", "own", "ratio");
  for (size_t s = 0; s < sizes.size(); ++s) {
    const std::vector<Row> own = measure(**codec, sizes[s], calls, reps);
    for (size_t r = 0; r < own.size(); ++r)
      std::printf("%-8zu %-10s %12.2f %12.2f %7.2fx\n", sizes[s], own[r].what.c_str(), builtin[s][r].gbps,
                  own[r].gbps, builtin[s][r].gbps / own[r].gbps);
  }
  std::printf("\nGB/s of k x shard input, best of %d x %d calls, one thread\n", reps, calls);
  return 0;
}
