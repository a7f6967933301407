// prune_fft_steps: drops the butterflies of an rs-fft step schedule that only move zeros or feed nothing read.
#pragma once

#include <cstddef>
#include <vector>

#include "fft/step.h"

namespace ecjit::sched {

// Segments of steps (fft/step.h) that run one after another on one pointer array of
// `pointers` entries; each segment's table fields index that segment's own tables, which
// pruning never changes. Two passes over the whole sequence:
//   - forward: a pointer known to hold zeros (a Zero step, or a Copy / Mul of a zero) is
//     not stored; steps that read it become cheaper kinds or vanish (a butterfly of two zero
//     slots, an XOR of zero), and it is stored as zeros only where a kept step still reads
//     it whole;
//   - backward: only the pointers with live_out set are read afterwards; a step that writes
//     nothing live vanishes, a butterfly with one live output becomes its multiply-add or XOR.
// Two- and three-layer steps (Fft4 / Ifft4, Fft8 / Ifft8) that are partly zero or partly live
// are split into their butterflies where that costs fewer loads and stores, else kept whole
// (their zeros stored first); several-source XORs (Xor2 / Xor3) into single ones, fused again at the
// end (fuse_xor_steps). The result computes the same values on every live_out pointer (and
// writes no pointer the input did not write). Pure; O(steps + pointers). The folded ends'
// kinds (kFftStepIfft4In .. Fft8Out) are not taken: fold_decode_ends runs after pruning.
std::vector<std::vector<FftStep>> prune_fft_steps(const std::vector<const std::vector<FftStep> *> &segments,
                                                  size_t pointers, const std::vector<bool> &live_out);

// The butterflies of an n-point transform (n = points.size(), a power of two) whose whole span
// lies in `points`: aligned blocks of eight points or more (their three lowest layers, then
// each layer joining two such halves). For points that are zero at an IFFT's input, or feed
// nothing at an FFT's output, a measure of what prune_fft_steps can remove in whole steps
// (an aligned block of eight is one three-layer step), unlike scattered points, whose partly
// zero or partly live steps it splits or keeps whole. O(n), so that a new erasure set can ask
// whether pruning would remove enough to pay for itself before paying for it.
size_t fft_block_butterflies(const std::vector<bool> &points);

}  // namespace ecjit::sched
