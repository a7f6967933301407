// bench_fft: rs-fft encode and decode through ecjit's Codec against reed-solomon-simd (bench/rs_simd) in one run.
//
//   bench_fft [--cases 32:32:4K,32:32:64K,...] [--seconds 1] [--crate PATH] [--reps 3] [--lost N]
//             [--mixed | --recovery-lost R|half | --random-loss] [--random-sets N] [--gf 8] [--matrix]
//
// --gf 8: rs-fft:...,gf=8 (Leopard-RS's GF(2^8), k + next_pow2(m) <= 256) against klauspost's
// leopard8 (bench/leopard8, the same `bench` protocol; --crate or ECJIT_LEOPARD8_BIN).
// --matrix: also ecjit's rs-cauchy:k=,m=,gf=8 (GF(2^16) past 256 shards) on the same calls and
// erasure set, the construction `rs:` weighs the FFT against.
//
// Per case k:m:shard_bytes, one thread: ecjit codec() time (cold: no disk cache), encode GB/s,
// decode GB/s losing min(m, k, N) originals (default N: all m) and rebuilding them from
// recovery shards (reconstruct_data, one erasure set, as the crate's own benchmark does),
// and the same two
// numbers from the crate's binary (`rs_simd bench K M BYTES SECONDS`, its encoder / decoder
// reused across calls) run right after, alternating, `--reps` times; medians. GB = 1e9 bytes
// of k x shard_bytes original data per call. Without --crate (or ECJIT_RS_SIMD_BIN) the crate
// columns are empty. Build the crate with bench/rs_simd/build.sh. --recovery-lost R: ecjit loses
// recovery shards 0 .. R-1 in place of the last R originals, so that not every recovery shard
// is read: the decode restores those first as a matrix and inverts the encoder, or runs the
// erasure-locator core where that costs less (the crate's harness still loses originals only;
// its decoder runs the same transforms for every pattern). --mixed: R = 1. --recovery-lost half:
// R = half of each case's losses (a random loss of m shards loses about that many).
// --random-loss: ecjit loses as many shards, a seeded random set of them anywhere (what a failure
// leaves: the points lost scattered, so fewer butterflies fall away whole).
// --random-sets N: then N reconstructs, each of a new random erasure set of min(m, N_lost)
// shards anywhere (a first call: its plan and decode made on the caller's thread), each
// followed by the same set again; per-call latency p50 / p99 / max of the first calls and the
// p50 of the repeats, in ms; then N reconstruct_data calls the same way (the lost originals
// only, what a degraded read asks).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "ecjit/ecjit.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Case {
  unsigned k, m;
  size_t bytes;
};

size_t parse_size(const std::string &s) {
  size_t v = std::strtoull(s.c_str(), nullptr, 10);
  if (s.back() == 'K') v <<= 10;
  if (s.back() == 'M') v <<= 20;
  return v;
}

std::vector<Case> parse_cases(const std::string &text) {
  std::vector<Case> out;
  size_t p = 0;
  while (p < text.size()) {
    size_t q = text.find(',', p);
    std::string item = text.substr(p, q == std::string::npos ? std::string::npos : q - p);
    unsigned k = 0, m = 0;
    char size[32] = {};
    if (std::sscanf(item.c_str(), "%u:%u:%31s", &k, &m, size) == 3) out.push_back({k, m, parse_size(size)});
    if (q == std::string::npos) break;
    p = q + 1;
  }
  return out;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Calls f until `seconds` pass; GB/s of `bytes` per call.
template <typename F>
double rate(double seconds, size_t bytes, F f) {
  f();
  const auto t0 = Clock::now();
  uint64_t calls = 0;
  while (std::chrono::duration<double>(Clock::now() - t0).count() < seconds) {
    f();
    ++calls;
  }
  return double(bytes) * double(calls) / std::chrono::duration<double>(Clock::now() - t0).count() / 1e9;
}

bool crate_run(const std::string &bin, const Case &c, double seconds, unsigned lost, double *enc, double *dec) {
  const std::string cmd = bin + " bench " + std::to_string(c.k) + " " + std::to_string(c.m) + " " +
                          std::to_string(c.bytes) + " " + std::to_string(std::max(1, int(seconds + 0.5))) + " " +
                          std::to_string(lost) + " 2>&1";
  FILE *p = popen(cmd.c_str(), "r");
  if (!p) return false;
  char line[256] = {};
  const bool got = std::fgets(line, sizeof line, p) != nullptr;
  pclose(p);
  return got && std::sscanf(line, "encode_gbps=%lf decode_gbps=%lf", enc, dec) == 2;
}

}  // namespace

int main(int argc, char **argv) {
  std::string cases_text = "32:32:4K,32:32:64K,128:128:4K,128:128:64K,1024:1024:1K,1024:1024:4K,16384:16384:1K";
  double seconds = 1;
  int reps = 3;
  unsigned lost_max = ~0u;
  constexpr unsigned kHalf = ~0u;  // --recovery-lost half: half of each case's losses
  unsigned mixed = 0;  // recovery shards lost in place of originals
  int random_sets = 0;
  bool random_loss = false;  // ecjit loses a seeded random set of shards instead
  std::string crate;
  bool crate_given = false, matrix = false;
  unsigned gf = 16;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&] { return i + 1 < argc ? std::string(argv[++i]) : std::string(); };
    if (a == "--cases") cases_text = value();
    else if (a == "--seconds") seconds = std::atof(value().c_str());
    else if (a == "--crate") crate = value(), crate_given = true;
    else if (a == "--gf") gf = unsigned(std::atoi(value().c_str()));
    else if (a == "--matrix") matrix = true;
    else if (a == "--reps") reps = std::max(1, std::atoi(value().c_str()));
    else if (a == "--lost") lost_max = unsigned(std::max(1, std::atoi(value().c_str())));
    else if (a == "--mixed") mixed = 1;
    else if (a == "--recovery-lost") {
      const std::string v = value();
      mixed = v == "half" ? kHalf : unsigned(std::max(0, std::atoi(v.c_str())));
    }
    else if (a == "--random-sets") random_sets = std::max(0, std::atoi(value().c_str()));
    else if (a == "--random-loss") random_loss = true;
    else {
      std::fprintf(stderr,
                   "usage: bench_fft [--cases K:M:BYTES,...] [--seconds S] [--crate PATH] [--reps N] [--lost N]\n"
                   "                 [--mixed | --recovery-lost R|half | --random-loss] [--random-sets N]\n"
                   "                 [--gf 8] [--matrix]\n");
      return a == "--help" ? 0 : 2;
    }
  }
  if (gf != 8 && gf != 16) {
    std::fprintf(stderr, "bench_fft: --gf %u: rs-fft runs over GF(2^16) (16) or GF(2^8) (8)\n", gf);
    return 2;
  }
  const char *env = std::getenv(gf == 8 ? "ECJIT_LEOPARD8_BIN" : "ECJIT_RS_SIMD_BIN");
  if (!crate_given && env) crate = env;
  ecjit::JitOptions o;
  o.disk_cache = false;
  auto jit = ecjit::Jit::create(o);
  if (!jit.ok()) {
    std::fprintf(stderr, "bench_fft: %s\n", jit.status().to_string().c_str());
    return 1;
  }
  std::printf("rs-fft%s, one thread, GB = 1e9 B of k x shard input per call; baseline %s; decode: min(m, k%s) "
              "originals lost%s\n",
              gf == 8 ? " gf=8" : "", gf == 8 ? "klauspost leopard8" : "reed-solomon-simd",
              lost_max == ~0u ? "" : (", " + std::to_string(lost_max)).c_str(),
              random_loss    ? " (ecjit: as many, a seeded random set anywhere instead)"
              : mixed == kHalf ? " (ecjit: the last half of them recovery 0 .. lost/2 - 1 instead)"
              : mixed        ? (" (ecjit: the last " + std::to_string(mixed) + " of them recovery 0 .. " +
                         std::to_string(mixed - 1) + " instead)").c_str()
                             : "");
  std::printf("%-18s %9s %9s %9s %7s %9s %9s %7s  %s\n", "k:m:shard", "codec ms", "enc GB/s", "crate", "ratio",
              "dec GB/s", "crate", "ratio", "encoder / decoder");
  for (const Case &c : parse_cases(cases_text)) {
    const unsigned n = c.k + c.m;
    const std::string spec =
        "rs-fft:k=" + std::to_string(c.k) + ",m=" + std::to_string(c.m) + (gf == 8 ? ",gf=8" : "");
    const auto t0 = Clock::now();
    auto codec = (*jit)->codec(spec);
    const double codec_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    if (!codec.ok()) {
      std::printf("%-18s %s\n", spec.c_str(), codec.status().to_string().c_str());
      continue;
    }
    std::vector<std::vector<uint8_t>> buf(n, std::vector<uint8_t>(c.bytes));
    std::mt19937_64 rng(n);
    for (unsigned i = 0; i < c.k; ++i)
      for (auto &b : buf[i]) b = uint8_t(rng());
    std::vector<uint8_t *> p;
    for (auto &v : buf) p.push_back(v.data());
    const ecjit::Span<const uint8_t *const> data(const_cast<const uint8_t *const *>(p.data()), c.k);
    const ecjit::Span<uint8_t *const> parity(p.data() + c.k, c.m);
    std::vector<bool> present(n, true);
    const unsigned lost = std::min({c.k, c.m, lost_max});
    for (unsigned i = 0; i < lost; ++i) present[i] = false;
    const unsigned recovery_lost = mixed == kHalf ? lost / 2 : std::min(mixed, lost);
    for (unsigned j = 0; j < recovery_lost; ++j) present[lost - 1 - j] = true, present[c.k + j] = false;
    if (random_loss) {  // the same number lost, anywhere (seeded by the case)
      std::vector<unsigned> ids(n);
      for (unsigned i = 0; i < n; ++i) ids[i] = i;
      std::shuffle(ids.begin(), ids.end(), rng);
      present.assign(n, true);
      for (unsigned i = 0; i < lost; ++i) present[ids[i]] = false;
    }
    std::vector<double> e, d, ce, cd;
    for (int r = 0; r < reps; ++r) {
      e.push_back(rate(seconds, size_t(c.k) * c.bytes, [&] { (void)(*codec)->encode(data, parity, c.bytes); }));
      d.push_back(rate(seconds, size_t(c.k) * c.bytes, [&] { (void)(*codec)->reconstruct_data(p, present, c.bytes); }));
      double x = 0, y = 0;
      if (!crate.empty() && crate_run(crate, c, seconds, lost, &x, &y)) {
        ce.push_back(x);
        cd.push_back(y);
      }
    }
    const double me = median(e), md = median(d), mce = median(ce), mcd = median(cd);
    char ratio_e[16] = "-", ratio_d[16] = "-", crate_e[16] = "-", crate_d[16] = "-";
    if (mce > 0) {
      std::snprintf(crate_e, sizeof crate_e, "%.3f", mce);
      std::snprintf(crate_d, sizeof crate_d, "%.3f", mcd);
      std::snprintf(ratio_e, sizeof ratio_e, "%.2fx", me / mce);
      std::snprintf(ratio_d, sizeof ratio_d, "%.2fx", md / mcd);
    }
    char name[48];
    std::snprintf(name, sizeof name, "%u:%u:%zu", c.k, c.m, c.bytes);
    std::printf("%-18s %9.1f %9.3f %9s %7s %9.3f %9s %7s  %s / %s\n", name, codec_ms, me, crate_e, ratio_e, md,
                crate_d, ratio_d, (*codec)->encoder_info().strategy.c_str(),
                (*codec)->decoder_info(present).why.c_str());
    if (matrix) {  // the Cauchy matrix code of the same (k, m), the same calls and set
      const std::string mspec = "rs-cauchy:k=" + std::to_string(c.k) + ",m=" + std::to_string(c.m) +
                                (n <= 256 ? ",gf=8" : ",gf=16");
      auto mc = (*jit)->codec(mspec);
      if (!mc.ok()) {
        std::printf("%-18s %s: %s\n", name, mspec.c_str(), mc.status().to_string().c_str());
      } else {
        std::vector<double> me2, md2;
        for (int r = 0; r < reps; ++r) {
          me2.push_back(rate(seconds, size_t(c.k) * c.bytes, [&] { (void)(*mc)->encode(data, parity, c.bytes); }));
          md2.push_back(rate(seconds, size_t(c.k) * c.bytes, [&] { (void)(*mc)->reconstruct_data(p, present, c.bytes); }));
        }
        std::printf("%-18s %9s %9.3f %9s %7s %9.3f %9s %7s  %s (fft / matrix: encode %.2fx, decode %.2fx)\n", "",
                    "matrix", median(me2), "", "", median(md2), "", "", mspec.c_str(), me / median(me2),
                    md / median(md2));
      }
    }
    if (random_sets > 0) {
      // Each call restoring every lost shard (reconstruct) or the lost originals only
      // (reconstruct_data, what a degraded read asks), a new set each.
      for (const bool data_only : {false, true}) {
        std::vector<double> first, again;
        std::vector<unsigned> ids(n);
        for (int r = 0; r < random_sets; ++r) {
          std::vector<bool> set(n, true);
          for (unsigned i = 0; i < n; ++i) ids[i] = i;
          std::shuffle(ids.begin(), ids.end(), rng);
          for (unsigned i = 0; i < lost; ++i) set[ids[i]] = false;
          for (std::vector<double> *into : {&first, &again}) {
            const auto t0 = Clock::now();
            const ecjit::Status st =
                data_only ? (*codec)->reconstruct_data(p, set, c.bytes) : (*codec)->reconstruct(p, set, c.bytes);
            if (!st.ok()) return 1;
            into->push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
          }
        }
        std::sort(first.begin(), first.end());
        std::printf("%-18s %d random sets of %u lost, %s: first call p50 %.2f p99 %.2f max %.2f ms; repeated p50 "
                    "%.2f ms\n",
                    name, random_sets, lost, data_only ? "originals restored" : "all restored",
                    first[first.size() / 2], first[(first.size() * 99) / 100], first.back(), median(again));
      }
    }
    std::fflush(stdout);
  }
  return 0;
}
