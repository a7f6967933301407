// KernelInfo: what kernel serves a codec's calls - a value type shared by the kernel service
// (jit/) and the public API (Codec::encoder_info, decoder_info).
#pragma once

#include <string>

#include "ecjit/kernel_decision.h"

namespace ecjit {

// What kernel a Codec runs: for reports and the CLI.
struct KernelInfo {
  std::string symbol;    // e.g. ecjit_encode__rs_vand_k_10_m_4_gf_8__host
  std::string strategy;  // e.g. "clmul-shift"
  std::string target;    // target string, e.g. "host" or "host-avx2"
  std::string cpu;       // LLVM CPU name the code was compiled for, e.g. "znver3"
  unsigned vector_bits = 0;  // widest vector the kernel uses (64 = no vector unit)
  unsigned unroll = 1;       // vectors per shard in one step of the main loop (tuned for short kernels)
  std::string why;           // why this strategy: the tuner's measurements, or forced/static
  KernelDecision decision;   // the same decision as values (ecjit/kernel_decision.h)
};

}  // namespace ecjit
