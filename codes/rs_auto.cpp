// rs_auto: the cost model behind "rs:k=,m=" and the choice it makes.
#include "codes/rs_auto.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "codes/rs_fft.h"

namespace ecjit::codes {
namespace {

using fft::next_pow2;

double log2_at_least_1(uint64_t p) { return std::max(1.0, std::log2(double(p))); }

std::string ns(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

}  // namespace

RsCost matrix_cost(unsigned k, unsigned m, unsigned gf) {
  const double rate = (uint64_t(k) * m <= 512 ? 430.0 : 230.0) / m / (gf == 8 ? 1.0 : 3.0);  // GB/s
  return {1 / rate, 1 / (0.75 * rate)};
}

RsCost fft_cost(unsigned k, unsigned m) {
  const uint64_t small = std::min(k, m), large = std::max(k, m);
  const uint64_t P = next_pow2(small), chunks = (large + P - 1) / P;
  const double layers = double(chunks + 1) * double(P) * log2_at_least_1(P) / k;
  const uint64_t N = next_pow2(uint64_t(k) + m);
  const double core = double(N) * log2_at_least_1(N) / k;
  return {layers / 170.0, core / 70.0};
}

Result<CodeSpec> choose_rs(unsigned k, unsigned m) {
  const std::string name = "rs:k=" + std::to_string(k) + ",m=" + std::to_string(m);
  if (k == 0 || m == 0)
    return Status(StatusCode::kInvalidSpec, name + ": k and m must be at least 1");
  const bool matrix_ok = uint64_t(k) + m <= kMaxShards, fft_ok = fft::geometry(k, m).ok();
  if (!matrix_ok && !fft_ok)
    return Status(StatusCode::kInvalidSpec,
                  name + ": no construction takes it: a Cauchy matrix needs k + m <= " + std::to_string(kMaxShards) +
                      ", rs-fft min(next_pow2(k), next_pow2(m)) + max(k, m) <= 65536");
  const unsigned gf = uint64_t(k) + m <= 256 ? 8 : 16;
  // The FFT over Leopard-RS's GF(2^8) where its 256 points take the code (as fast or faster
  // than GF(2^16) at every measured point: docs/performance.md), else reed-solomon-simd's.
  const unsigned fft_gf = fft_ok && fft::geometry(k, m, fft::Gf::k8).ok() ? 8 : 16;
  const RsCost mc = matrix_ok ? matrix_cost(k, m, gf) : RsCost{};
  const RsCost fc = fft_ok ? fft_cost(k, m) : RsCost{};
  const bool use_fft = !matrix_ok || (fft_ok && fc.total() < mc.total());
  // The chosen spec, and both candidates in canonical form (what the why names, spec() prints).
  Result<CodeSpec> spec = CodeSpec::parse(use_fft ? "rs-fft:k=" + std::to_string(k) + ",m=" + std::to_string(m) +
                                                        ",gf=" + std::to_string(fft_gf)
                                                  : "rs-cauchy:k=" + std::to_string(k) + ",m=" + std::to_string(m) +
                                                        ",gf=" + std::to_string(gf));
  if (!spec.ok()) return spec.status();
  CodeSpec other = *spec;  // the other construction: the same k and m
  other.family = use_fft ? CodeFamily::kRsCauchy : CodeFamily::kRsFft;
  other.gf = use_fft ? gf : fft_gf;
  const std::string fft = (use_fft ? *spec : other).to_string(), matrix = (use_fft ? other : *spec).to_string();
  auto cost_text = [](const std::string &spec, const RsCost &c) {
    return spec + " " + ns(c.total()) + " ns/byte (encode " + ns(c.encode) + " + rebuild of m " + ns(c.decode) + ")";
  };
  std::string why = name + " chose " + (use_fft ? fft : matrix) + " by the cost model (codes/rs_auto.h): ";
  if (matrix_ok && fft_ok)
    why += use_fft ? cost_text(fft, fc) + " against " + cost_text(matrix, mc)
                   : cost_text(matrix, mc) + " against " + cost_text(fft, fc);
  else
    why += use_fft ? "the only construction (k + m > " + std::to_string(kMaxShards) + ")"
                   : "the only construction (past rs-fft's shard limit)";
  spec->chosen_by = why + "; store the chosen spec with the data";
  return spec;
}

}  // namespace ecjit::codes
