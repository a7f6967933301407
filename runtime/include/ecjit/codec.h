// Codec: a compiled encoder/decoder for one code on one target; immutable and thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ecjit/code_spec.h"
#include "ecjit/span.h"
#include "ecjit/status.h"

namespace ecjit {

class Jit;

// What kernel a Codec runs: for reports and the CLI.
struct KernelInfo {
  std::string symbol;    // e.g. ecjit_encode__rs_vand_k_10_m_4_gf_8__host
  std::string strategy;  // e.g. "clmul-shift"
  std::string target;    // target string, e.g. "host" or "host-avx2"
  std::string cpu;       // LLVM CPU name the code was compiled for, e.g. "znver3"
  unsigned vector_bits = 0;  // widest vector the kernel uses (64 = no vector unit)
};

// Shards: k data shards (indices 0..k-1) and m parity shards (k..k+m-1), each `len` bytes,
// len a multiple of symbol_bytes(). The caller owns every buffer; a Codec never allocates
// shard memory. Obtained from Jit::codec(); safe to share and call from many threads.
class Codec {
 public:
  virtual ~Codec() = default;

  virtual const CodeSpec &spec() const = 0;
  unsigned k() const { return spec().k; }
  unsigned m() const { return spec().m; }
  unsigned n() const { return spec().k + spec().m; }
  unsigned symbol_bytes() const { return spec().symbol_bytes(); }
  // The m x k parity matrix, row-major (parity i = sum_j a[i*k + j] * data j).
  virtual const std::vector<uint64_t> &parity_matrix() const = 0;
  virtual KernelInfo encoder_info() const = 0;

  // Computes all m parity shards from the k data shards. The parity shards are always
  // overwritten; the data shards are only read. Parity must not overlap data.
  // Errors (nothing is written): kShardCount (data.size != k or parity.size != m),
  // kNullPointer (a null shard pointer), kShardSize (len not a multiple of symbol_bytes()).
  // Does not allocate.
  virtual Status encode(Span<const uint8_t *const> data, Span<uint8_t *const> parity,
                        size_t len) const = 0;

  // Rebuilds every shard s with present[s] == false, in place, from the present ones.
  // shards has n entries; present has n entries. Present shards are only read; missing
  // shards are overwritten (their pointers must be valid buffers of len bytes).
  // The decoder for an erasure set is compiled on first use and cached (see
  // prepare_reconstruct). Errors (nothing is written): kShardCount, kNullPointer,
  // kShardSize, kTooManyErasures (more than m missing), kSingular (the code is not MDS for
  // this erasure set), kJitFailure (the decoder could not be compiled).
  virtual Status reconstruct(Span<uint8_t *const> shards, const std::vector<bool> &present,
                             size_t len) const = 0;

  // Compiles (or finds) the decoder for an erasure set ahead of time, so the first
  // reconstruct() of that set does not pay for it. Errors as reconstruct().
  virtual Status prepare_reconstruct(const std::vector<bool> &present) const = 0;
  virtual KernelInfo decoder_info(const std::vector<bool> &present) const = 0;
};

}  // namespace ecjit
