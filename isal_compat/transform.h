// Transform: one GF(2^8) linear map (or ISA-L nibble-table map) over shards, run by a cached JIT kernel.
//
// Every erasure-code entry point of the ISA-L compat library reduces to
//     out[r] (^)= sum_c T(r, c) (in[c])        r < rows, c < cols, bytes 0..len-1
// where T(r, c) is either a GF(2^8) coefficient (a product c * b) or, for ISA-L per-ISA
// kernels given tables that ec_init_tables did not write, the nibble lookup
// lo[b & 15] ^ hi[b >> 4]. Linear maps run through ecjit's JIT (one kernel per row block,
// compiled once per distinct matrix, shared by every caller); nibble maps and everything
// the JIT cannot do run through the portable product-table kernel.
//
// Thread-safety: run_transform may be called from any number of threads at once, with
// any mix of matrices. Plans are immutable once built; the plan map is guarded by a
// shared mutex; each thread keeps its last plans to skip hashing on repeated calls.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ecjit::isal {

// How T(r, c) is read from the caller's bytes.
enum class Reading {
  kNibble,            // full 32-byte ISA-L tables at tables + 32 * (r * row_stride + c)
  kTableCoefficient,  // only byte 1 of each such table (ISA-L `_base` semantics)
  kPlainCoefficient,  // one byte per coefficient at tables[r * row_stride + c]
  // ISA-L's per-ISA ec_encode_data* below their minimum length: they call _base, which
  // reads byte 1 only. For ec_init_tables output both readings agree, so the nibble plan
  // (usually cached already) serves; other tables take kTableCoefficient.
  kCoefficientUnlessGenuine,
};

struct TransformDesc {
  const uint8_t *tables = nullptr;
  int rows = 0;
  int cols = 0;
  int row_stride = 0;  // in tables (or bytes, for kPlainCoefficient)
  Reading reading = Reading::kNibble;
  bool accumulate = false;  // true: out ^= map(in); false: out = map(in)
};

// Matrices with more coefficients than this (rows * cols) run the portable kernel: LLVM's
// compile time grows with the coefficient count (about 4 ms per 100 coefficients on Zen 3).
constexpr int kMaxJitCoefficients = 1024;

// Runs the map on len bytes. rows >= 1, cols >= 1, len >= 1; never fails.
void run_transform(const TransformDesc &d, const uint8_t *const *in, uint8_t *const *out,
                   size_t len);

// Counters for tests and reports (ecjit_isal_get_stats).
struct TransformStats {
  uint64_t plans_built = 0;        // distinct (reading, shape, bytes) seen
  uint64_t plan_hits = 0;          // calls answered by an existing plan
  uint64_t jit_runs = 0;           // calls run by JIT kernels
  uint64_t portable_runs = 0;      // calls run by the product-table kernel
  uint64_t nibble_plans = 0;       // plans for tables that are not ec_init_tables output
  uint64_t jit_failures = 0;       // compiles that failed (the call still succeeded)
  uint64_t shape_runs = 0;         // calls run by shape kernels (coefficients as data)
  uint64_t aot_runs = 0;           // of those, on the kernels built ahead of time (runtime/aot_shapes)
  uint64_t kernels_compiled = 0;   // LLVM compiles (from the Jit)
  double compile_seconds = 0;      // total LLVM compile wall time
  double max_plan_seconds = 0;     // slowest compile of one matrix (all its row blocks)
  int jit_enabled = 0;             // 1 when a Jit is in use
};
TransformStats transform_stats();

// "ok: <target> <strategy>" or why the JIT is off ("disabled by ECJIT_ISAL_JIT=0", the
// Jit::create error). Stable storage.
const char *jit_status();

}  // namespace ecjit::isal
