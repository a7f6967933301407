// bench_encode: RS(10,4) encode/reconstruct throughput per field, tier and strategy, with ISA-L/Jerasure/GF-Complete baselines, plus JIT compile times.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "bench/shards.h"
#include "bench/xor_benchmarks.h"
#include "ecjit/ecjit.h"

namespace ecjit::bench {
namespace {

// Host tiers, forced by masking features (jit/target_spec.h). Named for an AVX-512 + GFNI
// CPU; on a smaller one a mask clears what is absent anyway and the row repeats a wider tier.
const char *const kTiers[] = {
    "host",                // every feature: AVX-512 + GFNI + VPCLMULQDQ where present
    "host-gfni",           // GFNI masked off: AVX-512BW split tables
    "host-avx512f,-gfni",  // the 256-bit AVX2 tier
    "host-avx2,-gfni",     // the 128-bit SSE tier
    "host-sse2",           // no vector unit (64-bit SWAR)
};
const unsigned kFields[] = {8, 16, 32, 64};
const char *const kStrategies[] = {"clmul-shift", "split-table", "gfni", "clmul-insn", "clmul-mixed"};

struct EcjitConfig {
  std::string code;  // name part, e.g. "gf8"
  std::string spec;  // e.g. "rs-vand:k=10,m=4,gf=8"
  std::string target;
  unsigned opt = 3;
  std::string strategy = "clmul-shift";  // JitOptions::strategy ("auto": tuned)
  bool streaming = true;                 // JitOptions::streaming_min_len default, else 0
};

std::string rs_spec(const char *family, unsigned gf) {
  return std::string(family) + ":k=" + std::to_string(kK) + ",m=" + std::to_string(kM) +
         ",gf=" + std::to_string(gf);
}

// One Jit per (target, opt level, strategy, store mode), kept for the whole run.
std::shared_ptr<Jit> &jit_for(const EcjitConfig &c, Status *error) {
  static std::map<std::string, std::shared_ptr<Jit>> jits;
  auto &jit = jits[c.target + "/O" + std::to_string(c.opt) + "/" + c.strategy +
                   (c.streaming ? "" : "/cached-stores")];
  if (!jit) {
    JitOptions o;
    o.target = c.target;
    o.strategy = c.strategy;
    o.opt_level = c.opt;
    o.disk_cache = false;  // every strategy compiled here, and "auto" tuned, in this run
    if (!c.streaming) o.streaming_min_len = 0;
    Result<std::shared_ptr<Jit>> j = Jit::create(o);
    if (j.ok()) jit = *j;
    else *error = j.status();
  }
  return jit;
}

// Codecs compiled once per configuration and kept for the whole run, so no timed loop ever
// includes JIT time; "auto" codecs are measured with the tuner's winner (wait_for_tuning).
Result<std::shared_ptr<const Codec>> codec_for(const EcjitConfig &c) {
  static std::map<std::string, std::shared_ptr<const Codec>> codecs;
  const std::string key = c.target + "/O" + std::to_string(c.opt) + "/" + c.strategy +
                          (c.streaming ? "" : "/cached-stores") + "/" + c.spec;
  if (auto it = codecs.find(key); it != codecs.end()) return it->second;
  Status error;
  std::shared_ptr<Jit> &jit = jit_for(c, &error);
  if (!jit) return error;
  Result<std::shared_ptr<const Codec>> codec = jit->codec(c.spec);
  jit->wait_for_tuning();
  if (codec.ok()) codecs[key] = *codec;
  return codec;
}

// The kernel's strategy, with "+u<N>" when the tuner unrolled its main loop N vectors deep.
std::string kernel_label(const KernelInfo &info) {
  return info.strategy + (info.unroll > 1 ? "+u" + std::to_string(info.unroll) : "");
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
  const std::string check_key = c.target + "/O" + std::to_string(c.opt) + "/" + c.strategy +
                                (c.streaming ? "" : "/cached-stores") + "/" + c.spec + "/" +
                                std::to_string(len);
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
  state.SetLabel(info.cpu + " " + std::to_string(info.vector_bits) + "-bit " + kernel_label(info));
}

// Reconstruct of the first kM data shards (all parity kept): the decoder for that erasure set
// is compiled (and tuned, with "auto") before timing; its cold set-up (a new erasure set:
// plan + compile) is bench_ops reconstruct/ecjit_cold.
// Bytes counted as for encode: k x shard bytes per call.
void bm_ecjit_reconstruct(benchmark::State &state, EcjitConfig c, size_t len) {
  Result<std::shared_ptr<const Codec>> codec = codec_for(c);
  if (!codec.ok()) {
    state.SkipWithError(codec.status().to_string().c_str());
    return;
  }
  const Codec &cd = **codec;
  ShardSet &s = shared_shards(kK, kM, len);
  const Span<uint8_t *const> all(s.all(), kK + kM);
  if (Status st = cd.encode(Span<const uint8_t *const>(s.cdata(), kK), Span<uint8_t *const>(s.parity(), kM), len);
      !st.ok()) {
    state.SkipWithError(st.to_string().c_str());
    return;
  }
  std::vector<bool> present(kK + kM, true);
  std::vector<std::vector<uint8_t>> saved;
  for (unsigned i = 0; i < kM; ++i) {
    present[i] = false;
    saved.emplace_back(s.data()[i], s.data()[i] + len);
    std::memset(s.data()[i], 0, len);
  }
  // The first call runs a shape kernel; prepare_reconstruct promotes the set at once, so the
  // loop below times its own (tuned) decoder: the steady state of one hot erasure set.
  Status st = cd.reconstruct(all, present, len);
  if (st.ok()) st = cd.prepare_reconstruct(present);
  Status jit_error;
  if (std::shared_ptr<Jit> &jit = jit_for(c, &jit_error)) jit->wait_for_tuning();  // the decoder's too
  for (unsigned i = 0; i < kM && st.ok(); ++i)
    if (std::memcmp(s.data()[i], saved[i].data(), len) != 0)
      st = Status(StatusCode::kInternal, "shard " + std::to_string(i) + " rebuilt wrong");
  if (!st.ok()) {
    state.SkipWithError(("reconstruct: " + st.to_string()).c_str());
    return;
  }
  for (auto _ : state) {
    Status r = cd.reconstruct(all, present, len);
    benchmark::DoNotOptimize(r);
    benchmark::ClobberMemory();
  }
  count_bytes(state, s);
  state.SetLabel(kernel_label(cd.decoder_info(present)));
}

// JitOptions for the compile benchmarks: the defaults ("auto": the static choice now, tuned
// in the background) or, with `sync_tuning`, codec() waiting for the tuner; the disk cache
// in `dir` (off when empty).
JitOptions compile_options(const std::string &dir, bool sync_tuning) {
  JitOptions o;
  o.tune_in_background = !sync_tuning;
  o.disk_cache = !dir.empty();
  o.cache_dir = dir;
  return o;
}

// Compile time of the encoder (Jit::codec), per mode:
//   cold:   a fresh Jit with default options, no disk cache: build IR, optimize, JIT-compile
//           the static strategy; codec() returns and the tuner starts in the background
//   tuned:  the same with synchronous tuning: every candidate compiled and timed first
//   disk:   a fresh Jit whose disk cache holds the kernel: load and link the object
//   memory: the same Jit again while the first codec is alive (another user of the same code)
//   kernel: the same Jit again after every codec was dropped: the code is rebuilt, the
//           encoder comes from the in-memory kernel cache
// A fresh Jit is created outside the timing; the median is reported.
void bm_compile(benchmark::State &state, std::string spec, std::string mode) {
  std::string dir;
  if (mode == "disk") {
    char tmpl[] = "/tmp/ecjit-bench-XXXXXX";
    if (!mkdtemp(tmpl)) {
      state.SkipWithError("mkdtemp failed");
      return;
    }
    dir = tmpl;
    auto warm = Jit::create(compile_options(dir, false));
    if (!warm.ok() || !(*warm)->codec(spec).ok()) {
      state.SkipWithError("warming the disk cache failed");
      return;
    }
    (*warm)->wait_for_tuning();  // the tuning record and the winner's object are on disk
  }
  std::shared_ptr<Jit> same;
  std::shared_ptr<const Codec> first;
  if (mode == "memory" || mode == "kernel") {
    auto j = Jit::create(compile_options("", false));
    auto c = j.ok() ? (*j)->codec(spec) : Result<std::shared_ptr<const Codec>>(j.status());
    if (!c.ok()) {
      state.SkipWithError("first compile failed");
      return;
    }
    same = *j;
    same->wait_for_tuning();  // no tuner thread running during the timing
    if (mode == "memory") first = *c;
  }
  if (same) {  // nothing to set up per iteration: no pauses (they cost about a microsecond)
    const CodeSpec parsed = *CodeSpec::parse(spec);
    for (auto _ : state) {
      Result<std::shared_ptr<const Codec>> codec = same->codec(parsed);
      benchmark::DoNotOptimize(codec);
    }
    state.SetLabel(first ? "codec alive" : "codec dropped, kernel cached");
    return;
  }
  for (auto _ : state) {
    state.PauseTiming();
    std::shared_ptr<Jit> jit;
    Result<std::shared_ptr<Jit>> j = Jit::create(compile_options(dir, mode == "tuned"));
    if (!j.ok()) {
      state.SkipWithError(j.status().to_string().c_str());
      break;
    }
    jit = *j;
    state.ResumeTiming();
    Result<std::shared_ptr<const Codec>> codec = jit->codec(spec);
    if (!codec.ok()) {
      state.SkipWithError(codec.status().to_string().c_str());
      break;
    }
    state.PauseTiming();
    state.SetLabel((*codec)->encoder_info().strategy);
    // Drop the kernels, and the Jit with its tuner (which joins a compile in progress),
    // outside the timing: every handle to the Jit goes here.
    codec = Status(StatusCode::kInternal, "released");
    jit = nullptr;
    j = Status(StatusCode::kInternal, "released");
    state.ResumeTiming();
  }
  if (!dir.empty()) std::system(("rm -rf '" + dir + "'").c_str());
}

void register_ecjit(size_t len) {
  const std::string sz = "/" + std::to_string(len);
  auto add = [&](const EcjitConfig &c) {
    // Only what compiles on this CPU: a strategy a tier lacks is not a benchmark.
    if (!codec_for(c).ok()) return;
    benchmark::RegisterBenchmark(("BM_ecjit/" + c.code + "/" + c.target + "/" + c.strategy +
                                  (c.streaming ? "" : "-cached-stores") + "/O" +
                                  std::to_string(c.opt) + sz).c_str(),
                                 bm_ecjit, c, len);
  };
  for (unsigned gf : kFields) {
    const std::string code = "gf" + std::to_string(gf);
    for (const char *tier : kTiers) {
      add({code, rs_spec("rs-vand", gf), tier, 3, "auto"});
      for (const char *strategy : kStrategies) add({code, rs_spec("rs-vand", gf), tier, 3, strategy});
    }
    // Without streaming stores (they start at JitOptions::streaming_min_len, 4 MiB).
    EcjitConfig cached{code, rs_spec("rs-vand", gf), "host", 3, "auto"};
    cached.streaming = false;
    if (len >= (1u << 20)) add(cached);
    // Nešković 2018's redundant form as emitted (Figures 5-5 / 5-6: O0 vs O3).
    add({code, rs_spec("rs-vand", gf), "host", 0, "clmul-shift"});
    // Reconstruct with the tuner's choice and with every strategy forced (decoders are planned
    // for the strategy that runs them: docs/operations.md).
    EcjitConfig r{code, rs_spec("rs-vand", gf), "host", 3, "auto"};
    benchmark::RegisterBenchmark(("BM_ecjit_reconstruct/" + code + "/host/auto/O3" + sz).c_str(),
                                 bm_ecjit_reconstruct, r, len);
    for (const char *strategy : kStrategies) {
      EcjitConfig rs{code, rs_spec("rs-vand", gf), "host", 3, strategy};
      if (!codec_for(rs).ok()) continue;
      benchmark::RegisterBenchmark(
          ("BM_ecjit_reconstruct/" + code + "/host/" + strategy + "/O3" + sz).c_str(),
          bm_ecjit_reconstruct, rs, len);
    }
  }
  // ISA-L's own matrix, for a comparison on identical coefficients.
  add({"gf8-isal-cauchy", rs_spec("isal-cauchy", 8), "host", 3, "auto"});
}

void register_compile() {
  for (const std::string &spec : {rs_spec("rs-vand", 8), std::string("rs-vand:k=48,m=16,gf=16"),
                                  std::string("cauchy-good:k=10,m=4,w=8,packet=2048")})
    for (const char *mode : {"cold", "tuned", "disk", "memory", "kernel"}) {
      const bool big = spec.find("k=48") != std::string::npos;
      if (big && std::string(mode) == "tuned") continue;  // seconds per iteration
      // XOR codes have one lowering: nothing to tune.
      if (spec.find("cauchy") == 0 && std::string(mode) == "tuned") continue;
      const bool same_jit = std::string(mode) == "memory" || std::string(mode) == "kernel";
      benchmark::RegisterBenchmark(("BM_compile/" + spec + "/" + mode).c_str(), bm_compile, spec,
                                   std::string(mode))
          ->Iterations(same_jit ? 1000 : big ? 3 : 11)
          ->Unit(same_jit ? benchmark::kMicrosecond : benchmark::kMillisecond)
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
    if (len >= (64 << 10)) ecjit::bench::register_xor_benchmarks(len);  // blocks of 16-22 KiB
  }
  ecjit::bench::register_compile();
  ecjit::bench::register_xor_order_benchmarks();
  benchmark::AddCustomContext("bytes_counted", "k x shard bytes per iteration (k = 10, m = 4)");
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
