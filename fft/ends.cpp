// fold_decode_ends: a forward pass for the fills the IFFT reads first, a backward pass for the restores after the FFT.
#include "fft/ends.h"

#include "fft/order.h"

namespace ecjit::sched {
namespace {

// A slot's state in a pass: the step that fills (restores) it, none yet, or touched by a step
// the pass cannot fold past.
struct End {
  static constexpr int64_t kNone = -1, kBlocked = -2;
  int64_t step = kNone;
  bool in_core = false;  // step indexes core (a Zero), else pre / post
};

}  // namespace

void fold_decode_ends(std::vector<FftStep> *pre, std::vector<FftStep> *core, std::vector<FftStep> *post,
                      uint32_t n, uint32_t pre_tables, uint32_t post_tables) {
  std::vector<bool> drop_pre(pre->size(), false), drop_core(core->size(), false), drop_post(post->size(), false);
  std::vector<End> at(n);
  auto block = [&](const FftStep &st) {
    for (uint32_t x : fft_step_work_slots(st, n)) at[x].step = End::kBlocked;
  };
  // Forward: pre's fills, then the IFFT steps that read them first.
  for (size_t i = 0; i < pre->size(); ++i) {
    const FftStep &st = (*pre)[i];
    const bool fill = st.a < n && ((st.kind == kFftStepMul && st.b == n + st.a && st.table == st.a) ||
                                   st.kind == kFftStepZero);
    if (fill && at[st.a].step != End::kBlocked) at[st.a] = {int64_t(i), false};
    else block(st);
  }
  for (size_t i = 0; i < core->size(); ++i) {
    FftStep &st = (*core)[i];
    if (st.kind == kFftStepZero && st.a < n) {
      End &e = at[st.a];  // a point read nowhere, unless a multiply filled it first
      const bool zero_before =
          e.step == End::kNone || (e.step >= 0 && (e.in_core || (*pre)[size_t(e.step)].kind == kFftStepZero));
      if (zero_before) {  // (a Zero before it stays: the folded step overwrites the slot)
        e = {int64_t(i), true};
        continue;
      }
    }
    const unsigned slots = fft_step_slots(st.kind);
    if ((st.kind == kFftStepIfft4 || st.kind == kFftStepIfft8) && st.b == 0 && st.into == 0) {
      bool fold = true;
      for (unsigned j = 0; j < slots && fold; ++j) fold = at[st.a + j * st.dist].step >= 0;
      if (fold) {
        for (unsigned j = 0; j < slots; ++j) {
          const End &e = at[st.a + j * st.dist];
          (e.in_core ? drop_core : drop_pre)[size_t(e.step)] = true;
        }
        st.kind = st.kind == kFftStepIfft4 ? kFftStepIfft4In : kFftStepIfft8In;
        st.b = n + st.a;
        st.b2 = pre_tables;
      }
    }
    block(st);
  }
  // Backward: post's restores, then the FFT steps after which nothing else reads their slots.
  at.assign(n, End{});
  for (size_t i = post->size(); i-- > 0;) {
    const FftStep &st = (*post)[i];
    const bool restore = st.kind == kFftStepMul && st.b < n && st.a == 2 * n + st.b && st.table == n + st.b;
    if (restore && at[st.b].step == End::kNone) at[st.b] = {int64_t(i), false};
    else block(st);
  }
  for (size_t i = core->size(); i-- > 0;) {
    FftStep &st = (*core)[i];
    if (drop_core[i]) continue;
    const unsigned slots = fft_step_slots(st.kind);
    if ((st.kind == kFftStepFft4 || st.kind == kFftStepFft8) && st.b == 0 && st.into == 0) {
      bool fold = true;  // each slot restored by post alone, or read by nothing
      for (unsigned j = 0; j < slots && fold; ++j) fold = at[st.a + j * st.dist].step != End::kBlocked;
      if (fold) {
        for (unsigned j = 0; j < slots; ++j)
          if (const End &e = at[st.a + j * st.dist]; e.step >= 0) drop_post[size_t(e.step)] = true;
        st.kind = st.kind == kFftStepFft4 ? kFftStepFft4Out : kFftStepFft8Out;
        st.b = 2 * n + st.a;
        st.b2 = post_tables;
      }
    }
    block(st);
  }
  erase_marked_steps(*pre, drop_pre);
  erase_marked_steps(*core, drop_core);
  erase_marked_steps(*post, drop_post);
}

}  // namespace ecjit::sched
