// kernel_self_test: runs a compiled kernel on a few fixed vectors against the reference map before it may serve calls.
#pragma once

#include <cstdint>
#include <vector>

#include "fft/schedule.h"
#include "ir_builders/fft_kernel.h"
#include "ir_builders/kernel_builder.h"
#include "ir_builders/strategy.h"
#include "ir_builders/xor_kernel.h"
#include "jit/jit_session.h"

namespace ecjit::jit {

// Whether `kernel` computes desc's map (codes::apply_matrix; a first stage composed in,
// shape kernels on a matrix prepared here in runtime_layout(strategy)) on seeded inputs, on
// every path `contract` (ir::kernel_contract of the request that built it) says the code
// has: the main loop at its unroll, the one-vector loop, an overlapping last vector and a
// shard shorter than a vector, each within the contract (lengths, output alignment: a
// streaming-store kernel is run on aligned whole lines, as the runtime calls it), with
// guard bytes around every buffer that must stay untouched and inputs that must not change.
// Covers kOverwrite and kAccumulate with kPlain or kDelta inputs; kVerify and kSignature
// kernels are not run (true). For kernels from the disk cache: an entry with a valid key and
// checksum that holds another map (forged, or a builder bug that the key does not name) is
// never executed on callers' data. Cost: tens of microseconds. The target must be runnable
// by this process.
bool kernel_matches_desc(const CompiledKernel &kernel, const ir::KernelDesc &desc,
                         ir::Strategy strategy, const ir::KernelContract &contract);

// The same for a bit-matrix kernel: its program run by codes::run_program, packet by packet,
// on two blocks of seeded data (accumulate kernels over seeded outputs).
bool xor_kernel_matches_desc(const CompiledKernel &kernel, const ir::XorKernelDesc &desc);

// The same for an rs-fft kernel: codes::fft::encode_bytes / decode_bytes on seeded shards of
// two columns (decode: one erasure pattern of m lost shards, multipliers prepared here).
bool fft_kernel_matches_desc(const CompiledKernel &kernel, const ir::FftKernelDesc &desc);

// Runs schedule `s` with the step kernel at `fn` on one tile of `len` bytes (a multiple of 64):
// shards[] are the k + m shard buffers, scratch slots allocated here.
void run_fft_schedule(void *fn, const sched::FftSchedule &s, std::vector<std::vector<uint8_t>> &shards, size_t len);

}  // namespace ecjit::jit
