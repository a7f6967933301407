// bench_encode: RS(10,4) encode throughput of ecjit kernels per field, tier and opt level, with ISA-L/Jerasure baselines, plus cold JIT compile time.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "bench/shards.h"
#include "ecjit/ecjit.h"

namespace ecjit::bench {
namespace {

// Host tiers, forced by masking features (jit/target_spec.h): on an AVX2 machine "host" is
// the 256-bit tier, "host-avx2" the 128-bit SSE tier, "host-sse2" scalar (64-bit SWAR).
const char *const kTiers[] = {"host", "host-avx2", "host-sse2"};
const unsigned kFields[] = {8, 16, 32, 64};
const unsigned kOptLevels[] = {0, 3};

struct EcjitConfig {
  std::string code;  // name part, e.g. "gf8"
  std::string spec;  // e.g. "rs-vand:k=10,m=4,gf=8"
  std::string target;
  unsigned opt = 3;
  std::string strategy = "clmul-shift";  // JitOptions::strategy
};

std::string rs_spec(const char *family, unsigned gf) {
  return std::string(family) + ":k=" + std::to_string(kK) + ",m=" + std::to_string(kM) +
         ",gf=" + std::to_string(gf);
}

// Codecs compiled once per configuration and kept for the whole run, so no timed loop ever
// includes JIT time. One Jit per (target, opt level).
Result<std::shared_ptr<const Codec>> codec_for(const EcjitConfig &c) {
  static std::map<std::string, std::shared_ptr<Jit>> jits;
  static std::map<std::string, std::shared_ptr<const Codec>> codecs;
  const std::string jit_key = c.target + "/O" + std::to_string(c.opt) + "/" + c.strategy;
  const std::string key = jit_key + "/" + c.spec;
  if (auto it = codecs.find(key); it != codecs.end()) return it->second;
  auto &jit = jits[jit_key];
  if (!jit) {
    JitOptions o;
    o.target = c.target;
    o.strategy = c.strategy;
    o.opt_level = c.opt;
    Result<std::shared_ptr<Jit>> j = Jit::create(o);
    if (!j.ok()) return j.status();
    jit = *j;
  }
  Result<std::shared_ptr<const Codec>> codec = jit->codec(c.spec);
  if (codec.ok()) codecs[key] = *codec;
  return codec;
}

void bm_ecjit(benchmark::State &state, EcjitConfig c, size_t len) {
  Result<std::shared_ptr<const Codec>> codec = codec_for(c);
  if (!codec.ok()) {
    state.SkipWithError(("compiling " + c.spec + " for " + c.target + ": " + codec.status().to_string()).c_str());
    return;
  }
  const Codec &cd = **codec;
  ShardSet &s = shared_shards(kK, kM, len);
  // Check the output once per configuration and size, before any timing.
  static std::set<std::string> checked;
  const std::string check_key = c.target + "/O" + std::to_string(c.opt) + "/" + c.strategy + "/" +
                                c.spec + "/" + std::to_string(len);
  const Span<const uint8_t *const> data(s.cdata(), kK);
  const Span<uint8_t *const> parity(s.parity(), kM);
  if (!checked.count(check_key)) {
    s.clear_parity();
    if (Status st = cd.encode(data, parity, len); !st.ok()) {
      state.SkipWithError(("encode: " + st.to_string()).c_str());
      return;
    }
    const std::string bad = check_parity(c.spec, s);
    if (!bad.empty()) {
      state.SkipWithError(("ecjit " + c.spec + " on " + c.target + ": " + bad).c_str());
      return;
    }
    checked.insert(check_key);
  }
  for (auto _ : state) {
    Status st = cd.encode(data, parity, len);
    benchmark::DoNotOptimize(st);
    benchmark::ClobberMemory();
  }
  count_bytes(state, s);
  const KernelInfo info = cd.encoder_info();
  state.SetLabel(info.cpu + " " + std::to_string(info.vector_bits) + "-bit " + info.strategy);
}

// Cold compile: a fresh Jit (new LLJIT session, empty cache) per iteration; the timed part is
// Jit::codec(), i.e. building, optimizing and JIT-compiling the encoder.
void bm_compile(benchmark::State &state, std::string spec, unsigned opt) {
  double llvm_seconds = 0;
  for (auto _ : state) {
    state.PauseTiming();
    JitOptions o;
    o.strategy = "clmul-shift";
    o.opt_level = opt;
    Result<std::shared_ptr<Jit>> jit = Jit::create(o);
    if (!jit.ok()) {
      state.SkipWithError(jit.status().to_string().c_str());
      break;
    }
    state.ResumeTiming();
    Result<std::shared_ptr<const Codec>> codec = (*jit)->codec(spec);
    if (!codec.ok()) {
      state.SkipWithError(codec.status().to_string().c_str());
      break;
    }
    state.PauseTiming();
    llvm_seconds += (*jit)->stats().compile_seconds;
    codec = Status(StatusCode::kInternal, "released");  // drop the kernels outside the timing
    *jit = nullptr;
    state.ResumeTiming();
  }
  if (state.iterations() > 0)
    state.counters["compile_ms"] = benchmark::Counter(llvm_seconds * 1e3 / double(state.iterations()));
}

void register_ecjit(size_t len) {
  const std::string sz = "/" + std::to_string(len);
  for (unsigned gf : kFields)
    for (const char *tier : kTiers)
      for (unsigned opt : kOptLevels) {
        EcjitConfig c{"gf" + std::to_string(gf), rs_spec("rs-vand", gf), tier, opt};
        benchmark::RegisterBenchmark(
            ("BM_ecjit/" + c.code + "/" + tier + "/O" + std::to_string(opt) + sz).c_str(), bm_ecjit, c, len);
      }
  // ISA-L's own matrix, for a comparison on identical coefficients.
  EcjitConfig c{"gf8-isal-cauchy", rs_spec("isal-cauchy", 8), "host", 3};
  benchmark::RegisterBenchmark(("BM_ecjit/" + c.code + "/host/O3" + sz).c_str(), bm_ecjit, c, len);
  // split-table (PSHUFB nibble tables): the tiers with a byte shuffle (host-sse2 has none),
  // named BM_ecjit/<code>/<tier>/O3/split-table/<size>; the rows above are clmul-shift.
  for (const char *tier : {"host", "host-avx2"}) {
    for (unsigned gf : {8u, 16u}) {
      EcjitConfig st{"gf" + std::to_string(gf), rs_spec("rs-vand", gf), tier, 3, "split-table"};
      benchmark::RegisterBenchmark(("BM_ecjit/" + st.code + "/" + tier + "/O3/split-table" + sz).c_str(),
                                   bm_ecjit, st, len);
    }
    EcjitConfig st{"gf8-isal-cauchy", rs_spec("isal-cauchy", 8), tier, 3, "split-table"};
    benchmark::RegisterBenchmark(("BM_ecjit/" + st.code + "/" + tier + "/O3/split-table" + sz).c_str(),
                                 bm_ecjit, st, len);
  }
}

void register_compile() {
  const std::string big = "rs-vand:k=48,m=16,gf=16";
  for (const std::string &spec : {rs_spec("rs-vand", 8), big})
    for (unsigned opt : kOptLevels) {
      std::string name = "BM_compile/" + spec + "/O" + std::to_string(opt);
      benchmark::RegisterBenchmark(name.c_str(), bm_compile, spec, opt)
          ->Iterations(3)
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime();
    }
}

}  // namespace
}  // namespace ecjit::bench

int main(int argc, char **argv) {
  // --ecjit_large adds 16 MiB shards (DRAM-resident); everything else goes to Google Benchmark.
  bool large = false;
  std::vector<char *> args;
  for (int i = 0; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--ecjit_large"))
      large = true;
    else
      args.push_back(argv[i]);
  }
  int n = int(args.size());
  benchmark::Initialize(&n, args.data());
  if (benchmark::ReportUnrecognizedArguments(n, args.data())) return 1;
  // Registered size by size, so one set of shard buffers serves every benchmark of a size.
  for (size_t len : ecjit::bench::shard_sizes(large)) {
    ecjit::bench::register_baselines(len);
    ecjit::bench::register_ecjit(len);
  }
  ecjit::bench::register_compile();
  benchmark::AddCustomContext("bytes_counted", "k x shard bytes per iteration (k = 10, m = 4)");
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
