// XorPacketChoice: what packet=auto chose for a bit-matrix code, and among what (no LLVM: the kernel service's header includes it).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "ecjit/kernel_decision.h"

namespace ecjit::jit {

// The packets packet=auto chooses among (bytes): a 256-bit vector's worth up to Jerasure's
// usual 2 KiB. Powers of two, so one timing length is whole blocks of every one.
inline constexpr unsigned kXorPacketCandidates[] = {32, 64, 128, 256, 512, 1024, 2048};
// Encoders of more XORs per block position are not timed (each candidate compiles the
// unrolled kernel: seconds past this); the default packet stays.
constexpr size_t kMaxPacketTunedXors = 2048;
// How much faster than kDefaultPacket another packet must run to be chosen.
constexpr double kPacketMargin = 1.05;

struct XorPacketChoice {
  unsigned packet = 0;
  // One line on the choice, e.g. "packet 64 fastest of: 32 B 48.0 GB/s, 64 B 55.1, ...
  // (14 shards x 65536 B)", or "recorded: ...".
  std::string why;
  // kTuned (timed now), kRecorded (the disk cache's record) or kStatic (the default, kept
  // untimed).
  DecisionSource source = DecisionSource::kTuned;
  // Each packet size timed (name "2048", rate); empty for the default kept untimed or a record.
  std::vector<MeasuredCandidate> candidates;
  bool from_record() const { return source == DecisionSource::kRecorded; }
};

}  // namespace ecjit::jit
