// xor_packet_tuner: packet=auto - the packet of a bit-matrix code's layout for new data, by timing its encoder at each candidate.
#pragma once

#include <string>

#include "ecjit/code_spec.h"
#include "jit/xor_packet.h"
#include "jit/disk_cache.h"
#include "jit/jit_session.h"
#include "jit/kernel_compiler.h"
#include "jit/tuner.h"
#include "llvm/Support/Error.h"

namespace ecjit::jit {

// The packet for `spec` (a bit-matrix spec; its packet is ignored) on `target`: the one
// recorded in the disk cache for this code, target and opt; otherwise the encoder
// (best_schedule) compiled at each of kXorPacketCandidates whose block (w x packet) is at
// most 64 KiB, timed in turns (kernel_timing.h) on shards of the same whole-block length,
// the fastest by input bytes per second unless within kPacketMargin of kDefaultPacket - then
// recorded. `target_name` is the Jit's (for the kernels' symbols). Errors: the spec's
// (kInvalidSpec through llvm::Error), no candidate compiles, options.cancel raised.
llvm::Expected<XorPacketChoice> tune_xor_packet(JitSession &session, const CodeSpec &spec,
                                                const ir::TargetInfo &target, const std::string &target_name,
                                                OptLevel opt, const DiskCache *disk,
                                                const TuneOptions &options = TuneOptions());

}  // namespace ecjit::jit
