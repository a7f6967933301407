// shards: seeded shard buffers, the reference parity they must encode to, and byte counting shared by every benchmark.
#pragma once

#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "codes/linear_code.h"
#include "codes/reference_codec.h"

namespace ecjit::bench {

// The benchmarks' shard sizes (4 KiB, 64 KiB L2-resident, 1 MiB; 16 MiB DRAM-resident only with --ecjit_large).
inline std::vector<size_t> shard_sizes(bool large) {
  std::vector<size_t> s = {4 << 10, 64 << 10, 1 << 20};
  if (large) s.push_back(16 << 20);
  return s;
}

// RS(10, 4): k data and m parity shards of every throughput benchmark.
constexpr unsigned kK = 10;
constexpr unsigned kM = 4;

// k data shards of seeded random bytes and m parity shards, each `len` bytes, 64-byte
// aligned, plus the pointer arrays the encoders take.
class ShardSet {
 public:
  ShardSet(unsigned k, unsigned m, size_t len, uint64_t seed = 1) : k_(k), m_(m), len_(len) {
    for (unsigned s = 0; s < k + m; ++s) {
      bufs_.emplace_back(static_cast<uint8_t *>(std::aligned_alloc(64, (len + 63) / 64 * 64)),
                         std::free);
      ptrs_.push_back(bufs_.back().get());
    }
    std::mt19937_64 rng(seed);
    for (unsigned s = 0; s < k; ++s)
      for (size_t i = 0; i < len; i += 8) {
        const uint64_t v = rng();
        std::memcpy(ptrs_[s] + i, &v, len - i < 8 ? len - i : 8);
      }
    for (unsigned i = 0; i < m; ++i) std::memset(ptrs_[k + i], 0, len);
  }
  unsigned k() const { return k_; }
  unsigned m() const { return m_; }
  size_t len() const { return len_; }
  uint8_t *const *all() { return ptrs_.data(); }
  uint8_t *const *data() { return ptrs_.data(); }
  uint8_t *const *parity() { return ptrs_.data() + k_; }
  const uint8_t *const *cdata() const { return const_cast<const uint8_t *const *>(ptrs_.data()); }
  // Zeroes the parity, so a check after an encode sees that the encoder wrote it.
  void clear_parity() {
    for (unsigned i = 0; i < m_; ++i) std::memset(ptrs_[k_ + i], 0, len_);
  }

 private:
  unsigned k_, m_;
  size_t len_;
  std::vector<std::unique_ptr<uint8_t, void (*)(void *)>> bufs_;
  std::vector<uint8_t *> ptrs_;
};

// One ShardSet kept between benchmark runs of the same shape (buffers are large; refilling
// them for every run of a family would dominate the wall time). Not thread-safe; benchmarks
// run single-threaded.
inline ShardSet &shared_shards(unsigned k, unsigned m, size_t len) {
  static std::unique_ptr<ShardSet> cur;
  if (!cur || cur->k() != k || cur->m() != m || cur->len() != len)
    cur = std::make_unique<ShardSet>(k, m, len);
  return *cur;
}

// Compares the parity of `shards` with what the scalar reference codec computes for
// `spec_text`. Returns "" when equal, otherwise a one-line description of the first difference.
inline std::string check_parity(const std::string &spec_text, ShardSet &shards) {
  Result<codes::LinearCode> code = codes::build_code(spec_text);
  if (!code.ok()) return "spec " + spec_text + ": " + code.status().to_string();
  std::vector<std::vector<uint8_t>> want(shards.m(), std::vector<uint8_t>(shards.len()));
  std::vector<uint8_t *> out;
  for (auto &w : want) out.push_back(w.data());
  if (Status st = codes::ref_encode(*code, shards.cdata(), out.data(), shards.len()); !st.ok())
    return "reference encode: " + st.to_string();
  for (unsigned i = 0; i < shards.m(); ++i)
    for (size_t b = 0; b < shards.len(); ++b)
      if (shards.parity()[i][b] != want[i][b])
        return "parity shard " + std::to_string(i) + " differs from the reference codec (" +
               spec_text + ") at byte " + std::to_string(b);
  return "";
}

// Throughput convention of every benchmark here: k x shard bytes per iteration.
inline void count_bytes(benchmark::State &state, const ShardSet &s) {
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(s.k()) * int64_t(s.len()));
  state.counters["shard_bytes"] = double(s.len());
}

// Registers the baselines (ISA-L ec_encode_data per ISA, ISA-L xor_gen, Jerasure w=8/16/32,
// the ecjit reference codec) for one shard size.
void register_baselines(size_t len);

}  // namespace ecjit::bench
