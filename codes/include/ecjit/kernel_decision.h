// KernelDecision: why a kernel serves a codec's calls, as values. KernelInfo::why is the
// same decision as one sentence for people; programs and tests read these fields.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ecjit {

// What runs the calls now, from the first that serves at once to the most specialised.
enum class KernelTier : uint8_t {
  kNone,            // nothing describes this call (an invalid erasure set, say)
  kReference,       // the scalar reference codec: no vector kernel for this target
  kBuiltIn,         // run-time-coefficient kernels built into libecjit ahead of time
  kShape,           // JIT-compiled run-time-coefficient kernels, coefficients prepared per set
  kScheduleRunner,  // an XOR schedule run by the library's interpreter
  kLocalXor,        // a local repair (an LRC's group): the XOR of the group's other shards, no kernel
  kStepKernel,      // rs-fft: the code's transform steps run by a step kernel
  kCompiled,        // compiled for this code's constants: its matrix, erasure set or schedule
};

// How the strategy (or schedule, or packet size) was chosen.
enum class DecisionSource : uint8_t {
  kStatic,    // the static choice for the field and target (or the only candidate)
  kForced,    // named by the caller (JitOptions::strategy)
  kTuned,     // the fastest candidate timed on this machine
  kRecorded,  // a tuning decision read back from the disk cache
};

// One candidate the tuner timed.
struct MeasuredCandidate {
  std::string name;     // strategy ("split-table"), schedule ("smart") or packet ("2048")
  unsigned unroll = 1;  // vectors per shard in one step of its main loop
  double gb_per_s = 0;  // its rate on the tuner's shards
};

// rs-fft: how one erasure set is restored.
enum class FftRoute : uint8_t {
  kNone,        // not an rs-fft decode
  kMatrix,      // few losses: restored x read multiply-adds straight from the shards
  kInverse,     // the encoder's transforms run backwards (every recovery shard read)
  kTransforms,  // the code's decode core: IFFT, erasure-locator multiply, FFT
};
enum class FftPruning : uint8_t {
  kNotApplicable,  // not the transforms' route
  kPruned,         // blocks of points read or restored nowhere cut from the core
  kTooScattered,   // the losses leave too few whole blocks to be worth pruning
  kLater,          // pruning would cost this call more than it removes; made for later sets
  kCoreTooLong,    // a core of this many steps is never pruned
};
struct FftDecodeDecision {
  FftRoute route = FftRoute::kNone;
  uint64_t multiplies = 0;            // per element on the route taken (a matrix's multiply-adds)
  uint64_t whole_multiplies = 0;      // kTransforms: per element before pruning
  uint64_t matrix_multiplies = 0;     // the alternatives, per element
  uint64_t transform_multiplies = 0;
  unsigned restored = 0, read = 0;    // shards restored and shards read
  unsigned restored_first = 0;        // kInverse: missing recovery shards restored first as a matrix
  FftPruning pruning = FftPruning::kNotApplicable;
  uint64_t block_multiplies = 0;      // kTooScattered / kLater: what pruning the set's whole blocks would remove
  bool ends_folded = false;           // shards read and restored inside the first and last steps
  bool unrolled = false;              // a kernel unrolled for this set serves
  bool made_later = false;            // kMatrix: made in the background (the transforms served until then)
};

struct KernelDecision {
  KernelTier tier = KernelTier::kNone;
  DecisionSource source = DecisionSource::kStatic;
  // A better kernel is on its way: being tuned (possibly only after tune_after_bytes of
  // calls) or compiled for this code's constants in the background.
  bool tuning = false;
  uint64_t tune_after_bytes = 0;
  bool compiling = false;
  std::vector<MeasuredCandidate> candidates;  // what the tuner timed (empty: nothing timed)
  std::vector<MeasuredCandidate> packets;     // packet=auto: each packet size timed for the spec
  uint64_t xors = 0;                          // XOR kernels: XORs per block position or stripe
  std::string chosen_spec;  // "rs:k=,m=": the construction the cost model chose ("" for a named family)
  unsigned local_reads = 0;  // kLocalXor: the shards the repair reads
  FftDecodeDecision fft;

  // Run-time-coefficient kernels serve: the built-in ones or the JIT's shape kernels, with
  // the set's coefficients prepared per call site (no compile for a new matrix or set).
  bool run_time_coefficients() const { return tier == KernelTier::kBuiltIn || tier == KernelTier::kShape; }
};

}  // namespace ecjit
