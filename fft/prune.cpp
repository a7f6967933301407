// prune_fft_steps: a forward pass that follows known-zero slots and a backward pass that follows live ones.
#include "fft/prune.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>

namespace ecjit::sched {
namespace {

FftStep step(uint32_t kind, uint32_t a, uint32_t b, uint32_t table = 0) { return FftStep{kind, a, b, table}; }

// Up to N values without an allocation (pruning runs on a new erasure set's first call).
template <class T, size_t N>
struct Few {
  std::array<T, N> x;
  unsigned n = 0;
  const T *begin() const { return x.data(); }
  const T *end() const { return x.data() + n; }
};

// The butterflies of a two- or three-layer step, in execution order (fft_step_butterflies).
Few<FftStep, 12> butterflies(const FftStep &s) {
  Few<FftStep, 12> out;
  FftStepButterfly bfs[12];
  out.n = fft_step_butterflies(s.kind, bfs);
  const uint32_t kind = s.kind == kFftStepFft4 || s.kind == kFftStepFft8 ? kFftStepFft : kFftStepIfft;
  for (unsigned i = 0; i < out.n; ++i)
    out.x[i] = step(kind, s.a + bfs[i].u * s.dist, s.a + bfs[i].v * s.dist, fft_step_multiplier(s, bfs[i].multiplier));
  return out;
}

// The single XORs of a several-source XOR step, in order.
Few<FftStep, kFftMaxXorSources> xors(const FftStep &s) {
  uint32_t src[kFftMaxXorSources];
  Few<FftStep, kFftMaxXorSources> out;
  out.n = fft_xor_sources(s, src);
  for (unsigned j = 0; j < out.n; ++j) out.x[j] = step(kFftStepXor, s.a, src[j]);
  return out;
}

// The slots of a two- or three-layer step.
Few<uint32_t, 8> slots_of(const FftStep &s) {
  Few<uint32_t, 8> out;
  out.n = fft_step_slots(s.kind);
  for (unsigned j = 0; j < out.n; ++j) out.x[j] = s.a + j * s.dist;
  return out;
}

// The slots a derivative-fused step reads besides its own (fft_derivative_groups' groups).
Few<uint32_t, 8 * kFftMaxDerivativeGroups> derivative_reads(const FftStep &s) {
  Few<uint32_t, 8 * kFftMaxDerivativeGroups> out;
  uint32_t g[kFftMaxDerivativeGroups];
  const unsigned groups = fft_derivative_groups(s, g), per = fft_step_slots(s.kind);
  for (unsigned i = 0; i < groups; ++i)
    for (unsigned j = 0; j < per; ++j) out.x[out.n++] = g[i] + j * s.dist;
  return out;
}

// What a step costs per column, in tile loads and stores, plus half a unit per multiply (on
// the whole-column kernels a multiply is two affine transforms; the loads and stores of L2
// tiles are what the steps wait for).
double step_cost(uint32_t kind) {
  switch (kind) {
    case kFftStepFft:
    case kFftStepIfft: return 4.5;
    case kFftStepXor: return 3;
    case kFftStepCopy: return 2;
    case kFftStepZero: return 1;
    case kFftStepMul: return 2.5;
    case kFftStepMulAdd: return 3.5;
    case kFftStepFft4:
    case kFftStepIfft4: return 10;
    case kFftStepFft8:
    case kFftStepIfft8: return 22;
    case kFftStepMul3: return 5.5;
    case kFftStepMulAdd3: return 6.5;
    default: return kind >= kFftStepXor2 && kind <= kFftStepXor6 ? double(kind - kFftStepXor2 + 4) : 4;
  }
}
template <class It>
double step_cost(It first, It last) {
  double c = 0;
  for (; first != last; ++first) c += step_cost(first->kind);
  return c;
}

// Whether a partly zero (ZeroPass) or partly live (LivePass) two- or three-layer step is
// split into its butterflies or kept whole depends only on its kind and which of its slots
// are zero (live): its butterflies touch its own slots alone. Each pass tries the split once
// per kind and mask and keeps the answer for every later step and erasure set (a trial split
// is a dozen butterflies pruned and thrown away, most of a new set's pruning, on its first
// call). Relaxed atomics: a race decides the same answer twice.
class SplitChoices {
 public:
  enum Choice : uint8_t { kUnknown = 0, kSplit = 1, kWhole = 2 };
  Choice get(uint32_t kind, unsigned mask) const { return Choice(at(kind, mask).load(std::memory_order_relaxed)); }
  void set(uint32_t kind, unsigned mask, Choice c) { at(kind, mask).store(c, std::memory_order_relaxed); }

 private:
  std::atomic<uint8_t> &at(uint32_t kind, unsigned mask) const {
    const unsigned k = kind == kFftStepFft4 ? 0 : kind == kFftStepIfft4 ? 1 : kind == kFftStepFft8 ? 2 : 3;
    return choices_[k][mask & 0xff];
  }
  mutable std::atomic<uint8_t> choices_[4][256] = {};
};
SplitChoices &zero_choices() {
  static SplitChoices c;
  return c;
}
SplitChoices &live_choices() {
  static SplitChoices c;
  return c;
}

// Forward: zero[p] says pointer p holds zeros that may not be stored yet.
class ZeroPass {
 public:
  explicit ZeroPass(size_t pointers) : zero_(pointers, false) {}

  void run(const FftStep &s, std::vector<FftStep> &out) {
    const auto z = [&](uint32_t p) { return bool(zero_[p]); };
    const auto store_zero = [&](uint32_t p) {  // a kept step reads or updates p whole
      if (z(p)) out.push_back(step(kFftStepZero, p, 0));
      zero_[p] = false;
    };
    switch (s.kind) {
      case kFftStepZero:
        zero_[s.a] = true;
        return;
      case kFftStepCopy:
      case kFftStepMul:
        if (z(s.b)) {
          zero_[s.a] = true;
          return;
        }
        zero_[s.a] = false;
        out.push_back(s);
        return;
      case kFftStepXor:
      case kFftStepMulAdd:
        if (z(s.b)) return;
        if (z(s.a)) {
          zero_[s.a] = false;
          out.push_back(s.kind == kFftStepXor ? step(kFftStepCopy, s.a, s.b) : step(kFftStepMul, s.a, s.b, s.table));
          return;
        }
        out.push_back(s);
        return;
      case kFftStepFft:  // A ^= B T; B ^= A
        if (z(s.a) && z(s.b)) return;
        if (z(s.b)) {  // A unchanged, B = A
          zero_[s.b] = false;
          out.push_back(step(kFftStepCopy, s.b, s.a));
          return;
        }
        if (z(s.a)) {  // A = B T, B ^= A
          zero_[s.a] = false;
          out.push_back(step(kFftStepMul, s.a, s.b, s.table));
          out.push_back(step(kFftStepXor, s.b, s.a));
          return;
        }
        out.push_back(s);
        return;
      case kFftStepIfft:  // B ^= A; A ^= B T
        if (z(s.a) && z(s.b)) return;
        if (z(s.a)) {  // B unchanged, A = B T
          zero_[s.a] = false;
          out.push_back(step(kFftStepMul, s.a, s.b, s.table));
          return;
        }
        if (z(s.b)) {  // B = A, A ^= B T
          zero_[s.b] = false;
          out.push_back(step(kFftStepCopy, s.b, s.a));
          out.push_back(step(kFftStepMulAdd, s.a, s.b, s.table));
          return;
        }
        out.push_back(s);
        return;
      case kFftStepXor2:
      case kFftStepXor3:
      case kFftStepXor4:
      case kFftStepXor5:
      case kFftStepXor6:
        for (const FftStep &x : xors(s)) run(x, out);
        return;
      case kFftStepFft4D:
      case kFftStepFft8D:
      case kFftStepTop4D:
      case kFftStepTop8D:  // kept whole: everything it reads stored, its slots written
        for (uint32_t p : derivative_reads(s)) store_zero(p);
        for (uint32_t p : slots_of(s)) store_zero(p);
        out.push_back(s);
        return;
      case kFftStepFft4:
      case kFftStepIfft4:
      case kFftStepFft8:
      case kFftStepIfft8: {
        if (s.b || s.into) {  // reads shards or XORs elsewhere (an encode's, not a core's): as it is
          for (uint32_t j = 0, n = fft_step_slots(s.kind); j < n; ++j) {
            store_zero((s.b ? s.b : s.a) + j * s.dist);
            if (s.into) store_zero(s.into - 1 + j * s.dist);
            else zero_[s.a + j * s.dist] = false;
          }
          out.push_back(s);
          return;
        }
        const Few<uint32_t, 8> x = slots_of(s);
        unsigned mask = 0;
        for (unsigned j = 0; j < x.n; ++j) mask |= unsigned(z(x.x[j])) << j;
        const size_t zeros = size_t(__builtin_popcount(mask));
        if (zeros == x.n) return;
        if (zeros == 0) {
          out.push_back(s);
          return;
        }
        // Split into its butterflies, or kept whole on its zeros stored: the cheaper (a
        // scattered erasure set leaves many two-layer steps with one or two zeros, whose
        // butterflies cost more loads and stores than the step).
        SplitChoices &choices = zero_choices();
        const SplitChoices::Choice choice = choices.get(s.kind, mask);
        if (choice != SplitChoices::kWhole) {
          const size_t mark = out.size();
          for (const FftStep &b : butterflies(s)) run(b, out);
          if (choice == SplitChoices::kSplit) return;
          if (step_cost(out.begin() + long(mark), out.end()) <=
              double(zeros) * step_cost(kFftStepZero) + step_cost(s.kind)) {
            choices.set(s.kind, mask, SplitChoices::kSplit);
            return;
          }
          choices.set(s.kind, mask, SplitChoices::kWhole);
          out.resize(mark);
          for (unsigned j = 0; j < x.n; ++j) zero_[x.x[j]] = char(mask >> j & 1);
        }
        for (uint32_t p : x) store_zero(p);
        out.push_back(s);
        return;
      }
      default:  // unknown kinds run as they are, on stored values
        store_zero(s.a);
        store_zero(s.b);
        out.push_back(s);
        return;
    }
  }

  // Live pointers still pending as zeros at the end are stored.
  void finish(const std::vector<bool> &live_out, std::vector<FftStep> &out) {
    for (size_t p = 0; p < zero_.size(); ++p)
      if (zero_[p] && p < live_out.size() && live_out[p]) out.push_back(step(kFftStepZero, uint32_t(p), 0));
  }

 private:
  std::vector<char> zero_;
};

// Backward: live[p] says p's value is read later. Steps are appended in reverse order.
class LivePass {
 public:
  LivePass(size_t pointers, const std::vector<bool> &live_out) : live_(pointers, false) {
    for (size_t p = 0; p < pointers && p < live_out.size(); ++p) live_[p] = live_out[p];
  }

  void run(const FftStep &s, std::vector<FftStep> &rev) {
    const auto l = [&](uint32_t p) { return bool(live_[p]); };
    switch (s.kind) {
      case kFftStepZero:
        if (!l(s.a)) return;
        live_[s.a] = false;
        rev.push_back(s);
        return;
      case kFftStepCopy:
      case kFftStepMul:
        if (!l(s.a)) return;
        live_[s.a] = false;
        live_[s.b] = true;
        rev.push_back(s);
        return;
      case kFftStepXor:
      case kFftStepMulAdd:
        if (!l(s.a)) return;
        live_[s.b] = true;
        rev.push_back(s);
        return;
      case kFftStepFft:  // A' = A ^ B T; B' = B ^ A'
        if (!l(s.a) && !l(s.b)) return;
        if (!l(s.b)) {
          live_[s.b] = true;
          rev.push_back(step(kFftStepMulAdd, s.a, s.b, s.table));
          return;
        }
        live_[s.a] = live_[s.b] = true;
        rev.push_back(s);
        return;
      case kFftStepIfft:  // B' = B ^ A; A' = A ^ B' T
        if (!l(s.a) && !l(s.b)) return;
        if (!l(s.a)) {
          live_[s.a] = true;
          rev.push_back(step(kFftStepXor, s.b, s.a));
          return;
        }
        live_[s.a] = live_[s.b] = true;
        rev.push_back(s);
        return;
      case kFftStepXor2:
      case kFftStepXor3:
      case kFftStepXor4:
      case kFftStepXor5:
      case kFftStepXor6: {
        const Few<FftStep, kFftMaxXorSources> x = xors(s);
        for (unsigned j = x.n; j-- > 0;) run(x.x[j], rev);
        return;
      }
      case kFftStepFft4D:
      case kFftStepFft8D: {  // gone where none of its slots is read later, else whole
        const Few<uint32_t, 8> x = slots_of(s);
        if (std::none_of(x.begin(), x.end(), l)) return;
        for (uint32_t p : x) live_[p] = true;
        for (uint32_t p : derivative_reads(s)) live_[p] = true;
        rev.push_back(s);
        return;
      }
      case kFftStepTop4D:
      case kFftStepTop8D: {  // gone where none of its slots is read later; one half where only it is
        const Few<uint32_t, 8> x = slots_of(s);
        unsigned mask = 0;
        for (unsigned j = 0; j < x.n; ++j) mask |= unsigned(l(x.x[j]) && fft_top_writes(s, j)) << j;
        if (!mask) return;
        const unsigned low = (1u << x.n / 2) - 1;
        FftStep t = s;
        if (!(mask & ~low)) t.b = 1;
        else if (!(mask & low)) t.b = 2;
        for (uint32_t p : x) live_[p] = true;  // its own part reads every slot
        const Few<uint32_t, 8 * kFftMaxDerivativeGroups> reads = derivative_reads(t);
        for (unsigned i = 0; i < reads.n; ++i)
          if (fft_top_writes(t, i % x.n)) live_[reads.x[i]] = true;
        rev.push_back(t);
        return;
      }
      case kFftStepFft4:
      case kFftStepIfft4:
      case kFftStepFft8:
      case kFftStepIfft8: {
        if (s.b || s.into) {  // as it is: everything it reads is live (more than needed: safe)
          for (uint32_t j = 0, n = fft_step_slots(s.kind); j < n; ++j) {
            live_[(s.b ? s.b : s.a) + j * s.dist] = true;
            if (s.into) live_[s.into - 1 + j * s.dist] = true;
          }
          rev.push_back(s);
          return;
        }
        const Few<uint32_t, 8> x = slots_of(s);
        unsigned mask = 0;
        for (unsigned j = 0; j < x.n; ++j) mask |= unsigned(l(x.x[j])) << j;
        const size_t lives = size_t(__builtin_popcount(mask));
        if (lives == 0) return;
        if (lives == x.n) {
          rev.push_back(s);
          return;
        }
        // Its live butterflies, or the step whole where that costs less (it writes the same
        // pointers; the values of the dead ones do not matter).
        SplitChoices &choices = live_choices();
        const SplitChoices::Choice choice = choices.get(s.kind, mask);
        if (choice != SplitChoices::kWhole) {
          const size_t mark = rev.size();
          const Few<FftStep, 12> b = butterflies(s);
          for (unsigned j = b.n; j-- > 0;) run(b.x[j], rev);
          if (choice == SplitChoices::kSplit) return;
          if (step_cost(rev.begin() + long(mark), rev.end()) <= step_cost(s.kind)) {
            choices.set(s.kind, mask, SplitChoices::kSplit);
            return;
          }
          choices.set(s.kind, mask, SplitChoices::kWhole);
          rev.resize(mark);
        }
        for (uint32_t p : x) live_[p] = true;
        rev.push_back(s);
        return;
      }
      default:
        live_[s.a] = live_[s.b] = true;
        rev.push_back(s);
        return;
    }
  }

 private:
  std::vector<char> live_;
};

}  // namespace

size_t fft_block_butterflies(const std::vector<bool> &points) {
  const size_t n = points.size();
  if (n < 8 || (n & (n - 1))) return 0;
  std::vector<char> all(n / 8);  // blocks of the current size wholly in `points`
  size_t count = 0;
  for (size_t b = 0; b < n / 8; ++b) {
    bool in = true;
    for (size_t j = 0; j < 8 && in; ++j) in = points[8 * b + j];
    all[b] = in;
    count += in ? 12 : 0;  // three layers of four butterflies
  }
  for (size_t size = 16, blocks = n / 16; size <= n; size *= 2, blocks /= 2)
    for (size_t b = 0; b < blocks; ++b) {
      all[b] = all[2 * b] && all[2 * b + 1];
      count += all[b] ? size / 2 : 0;
    }
  return count;
}

std::vector<std::vector<FftStep>> prune_fft_steps(const std::vector<const std::vector<FftStep> *> &segments,
                                                  size_t pointers, const std::vector<bool> &live_out) {
  // Reserved, so that a first call of a new erasure set does not grow them step by step.
  std::vector<std::vector<FftStep>> forward(segments.size());
  ZeroPass zeros(pointers);
  for (size_t i = 0; i < segments.size(); ++i) {
    forward[i].reserve(segments[i]->size() + segments[i]->size() / 4);
    for (const FftStep &s : *segments[i]) zeros.run(s, forward[i]);
  }
  if (!forward.empty()) zeros.finish(live_out, forward.back());

  std::vector<std::vector<FftStep>> out(segments.size());
  LivePass live(pointers, live_out);
  for (size_t i = segments.size(); i-- > 0;) {
    out[i].reserve(forward[i].size());
    for (auto it = forward[i].rbegin(); it != forward[i].rend(); ++it) live.run(*it, out[i]);
    std::reverse(out[i].begin(), out[i].end());
    fuse_xor_steps(out[i]);
  }
  return out;
}

}  // namespace ecjit::sched
