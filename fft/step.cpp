// The queries on rs-fft step kinds and the passes over a list of steps (fft/step.h). No LLVM.
#include "fft/step.h"

#include <algorithm>
#include <cstddef>
#include <vector>

namespace ecjit::sched {

namespace {

// Where an XOR step keeps source j (fft/step.h: b, dist, b2, table, table0, table1).
constexpr uint32_t FftStep::*kXorSourceField[kFftMaxXorSources] = {&FftStep::b,     &FftStep::dist,
                                                                  &FftStep::b2,    &FftStep::table,
                                                                  &FftStep::table0, &FftStep::table1};

unsigned xor_count(uint32_t kind) {
  return kind == kFftStepXor ? 1 : kind >= kFftStepXor2 && kind <= kFftStepXor6 ? kind - kFftStepXor2 + 2 : 0;
}

}  // namespace

unsigned fft_xor_sources(const FftStep &step, uint32_t out[kFftMaxXorSources]) {
  const unsigned n = xor_count(step.kind);
  for (unsigned j = 0; j < n; ++j) out[j] = step.*kXorSourceField[j];
  return n;
}

unsigned fft_step_slots(uint32_t kind) {
  switch (kind) {
    case kFftStepFft4:
    case kFftStepIfft4:
    case kFftStepFft4D:
    case kFftStepIfft4In:
    case kFftStepFft4Out:
    case kFftStepTop4D: return 4;
    case kFftStepFft8:
    case kFftStepIfft8:
    case kFftStepFft8D:
    case kFftStepIfft8In:
    case kFftStepFft8Out:
    case kFftStepTop8D: return 8;
    default: return 0;
  }
}

bool fft_step_inverse(uint32_t kind) {
  return kind == kFftStepIfft4 || kind == kFftStepIfft8 || kind == kFftStepIfft4In || kind == kFftStepIfft8In;
}

bool fft_top_writes(const FftStep &step, unsigned j) {
  return step.b == 0 || (step.b == 1) == (j < fft_step_slots(step.kind) / 2);
}

bool fft_step_kind_is_core_only(uint32_t kind) { return kind >= kFftStepFft4D && kind <= kFftStepTop8D; }

bool fft_steps_are_transforms(const std::vector<FftStep> &steps) {
  return std::none_of(steps.begin(), steps.end(), [](const FftStep &s) { return fft_step_kind_is_core_only(s.kind); });
}

bool fft_step_reads_groups(uint32_t kind) {
  return kind == kFftStepFft4D || kind == kFftStepFft8D || kind == kFftStepTop4D || kind == kFftStepTop8D;
}

unsigned fft_derivative_groups(const FftStep &step, uint32_t out[kFftMaxDerivativeGroups]) {
  if (!fft_step_reads_groups(step.kind)) return 0;
  unsigned n = 0;
  for (uint32_t bit = 1; bit < step.dist && n < kFftMaxDerivativeGroups; bit <<= 1)
    if (!(step.a & bit)) out[n++] = step.a + bit;
  return n;
}

unsigned fft_step_butterflies(uint32_t kind, FftStepButterfly out[12]) {
  // The FFT's order, one group per layer from the widest; the IFFT runs the groups reversed.
  static constexpr FftStepButterfly kFour[4] = {{0, 2, 0}, {1, 3, 0}, {0, 1, 1}, {2, 3, 2}};
  static constexpr FftStepButterfly kEight[12] = {{0, 4, 0}, {1, 5, 0}, {2, 6, 0}, {3, 7, 0},
                                                  {0, 2, 1}, {1, 3, 1}, {4, 6, 2}, {5, 7, 2},
                                                  {0, 1, 3}, {2, 3, 4}, {4, 5, 5}, {6, 7, 6}};
  const unsigned slots = fft_step_slots(kind);
  if (!slots || kind == kFftStepTop4D || kind == kFftStepTop8D) return 0;
  const bool four = slots == 4;
  const FftStepButterfly *order = four ? kFour : kEight;
  const unsigned n = four ? 4 : 12, group = four ? 2 : 4, groups = n / group;
  const bool fwd = !fft_step_inverse(kind);
  for (unsigned g = 0; g < groups; ++g)
    for (unsigned j = 0; j < group; ++j) out[g * group + j] = order[(fwd ? g : groups - 1 - g) * group + j];
  return n;
}

namespace {
constexpr uint32_t FftStep::*kMultiplierField[7] = {&FftStep::table,  &FftStep::table0, &FftStep::table1,
                                                    &FftStep::table2, &FftStep::table3, &FftStep::table4,
                                                    &FftStep::table5};
}  // namespace

uint32_t fft_step_multiplier(const FftStep &step, unsigned multiplier) { return step.*kMultiplierField[multiplier]; }
uint32_t &fft_step_multiplier(FftStep &step, unsigned multiplier) { return step.*kMultiplierField[multiplier]; }

void prefetch_shard_reads(std::vector<FftStep> &steps, uint32_t first_shard, unsigned ahead) {
  // From the last: `later` holds the shards the next reads take, the nearest first (0: none),
  // so that a new erasure set's first call allocates nothing here; an In step's, the next In
  // steps' (whose shards it may ask for where they read at its own kind and distance).
  constexpr unsigned kMost = 8;
  ahead = std::min(std::max(ahead, 1u), kMost);
  uint32_t later[kMost] = {};
  const FftStep *later_in[kMost] = {};
  for (size_t i = steps.size(); i-- > 0;) {
    FftStep &st = steps[i];
    if (st.kind == kFftStepIfft4In || st.kind == kFftStepIfft8In) {
      const FftStep *soon = later_in[ahead - 1];
      st.into = soon && soon->kind == st.kind && soon->dist == st.dist ? 1 + soon->b : 0;
      for (unsigned j = ahead - 1; j > 0; --j) later_in[j] = later_in[j - 1];
      later_in[0] = &st;
      continue;
    }
    if (st.kind != kFftStepMul || st.b < first_shard) continue;
    st.dist = later[ahead - 1];
    for (unsigned j = ahead - 1; j > 0; --j) later[j] = later[j - 1];
    later[0] = 1 + st.b;
  }
}

void erase_marked_steps(std::vector<FftStep> &steps, const std::vector<bool> &drop) {
  size_t out = 0;
  for (size_t i = 0; i < steps.size(); ++i)
    if (!drop[i]) steps[out++] = steps[i];
  steps.resize(out);
}

void fuse_xor_steps(std::vector<FftStep> &steps) {
  const auto fusable = [&](size_t i, uint32_t a) {
    return i < steps.size() && steps[i].kind == kFftStepXor && steps[i].a == a && steps[i].b != a;
  };
  size_t w = 0;
  for (size_t i = 0; i < steps.size();) {
    const uint32_t a = steps[i].a;
    size_t run = 0;
    while (fusable(i + run, a)) ++run;
    if (run < 2) {
      steps[w++] = steps[i++];
      continue;
    }
    for (size_t parts = (run + kFftMaxXorSources - 1) / kFftMaxXorSources; parts > 0; --parts) {
      const size_t take = (run + parts - 1) / parts;  // near-equal: 7 = 4 + 3, never 6 + 1
      FftStep f{uint32_t(kFftStepXor2 + (take - 2)), a, 0, 0};
      for (size_t j = 0; j < take; ++j) f.*kXorSourceField[j] = steps[i + j].b;
      steps[w++] = f;
      i += take;
      run -= take;
    }
  }
  steps.resize(w);
}

size_t fft_multiplies(const std::vector<FftStep> &steps) {
  size_t n = 0;
  for (const FftStep &s : steps) {
    const unsigned slots = fft_step_slots(s.kind);  // a multi-layer step: one multiply per butterfly
    const bool ends = s.kind >= kFftStepIfft4In && s.kind <= kFftStepFft8Out;  // and one per slot
    n += s.kind == kFftStepTop4D ? (s.b ? 1 : 2)  // one half written: fft_step_kernel.h
         : s.kind == kFftStepTop8D ? (s.b ? 8 : 12)
         : slots ? slots / 2 * unsigned(__builtin_ctz(slots)) + (ends ? slots : 0)
         : s.kind == kFftStepMul3 || s.kind == kFftStepMulAdd3                                                ? 3
         : s.kind == kFftStepFft || s.kind == kFftStepIfft || s.kind == kFftStepMul || s.kind == kFftStepMulAdd ? 1
                                                                                                                 : 0;
  }
  return n;
}

}  // namespace ecjit::sched
