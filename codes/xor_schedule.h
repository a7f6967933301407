// Schedules: ways to turn a bit-matrix into an XorProgram (Plank et al. 2009's dumb and smart, Zhou and
// Tian 2019's matching).
#pragma once

#include <string>

#include "codes/bitmatrix.h"
#include "codes/xor_program.h"

namespace ecjit::codes {

// The j of Zhou and Tian 2019's (i, j) strategies (its Table 2; i, bit-matrix normalisation, is a
// property of the matrix: the cauchy families' improvement step).
enum class XorSchedule {
  kDumb,              // j = 0: each output row as a chain of its set bits, in column order
  kSmart,             // j = 1: Jerasure's smart schedule: a row from scratch, or from an
                      //        already computed row plus the bits where the two differ
  kUniformMatching,   // j = 2: common pairs first (Huang et al.), unweighted matching
  kWeightedMatching,  // j = 3: the same, matching the pairs of sparse inputs first
};

const char *schedule_name(XorSchedule s);
// "dumb" | "smart" | "um" | "wm" (also "uniform-matching", "weighted-matching").
bool parse_schedule(const std::string &name, XorSchedule *out);

// A program for M (rows = outputs, cols = inputs). Deterministic; check_program(result, M)
// holds (the builders' tests check it symbolically).
XorProgram make_schedule(const BitMatrix &M, XorSchedule s);

// XORs of the dumb schedule of M, counted without building it: each row's set bits minus one.
size_t dumb_xors(const BitMatrix &M);

// The program a compiled kernel should run: the fewest XORs of the smart and weighted
// matching schedules (ties: smart; matching only up to 8,192 set bits in M, past which it
// takes seconds), each checked against M (check_program). `chosen`
// receives its schedule. Errors: kInternal (a schedule that does not compute M: a bug).
Result<XorProgram> best_schedule(const BitMatrix &M, XorSchedule *chosen = nullptr);

}  // namespace ecjit::codes
