// CodecImpl: a LinearCode with its JIT-compiled encoder and per-erasure-set decoders.
#pragma once

#include <array>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "codes/decode.h"
#include "codes/linear_code.h"
#include "ecjit/codec.h"
#include "runtime/jit_impl.h"

namespace ecjit::runtime {

// The set of missing shards as a bitmask; used as the decoder cache key (no allocation).
struct ErasureKey {
  std::array<uint64_t, kMaxShards / 64> bits{};
  bool operator==(const ErasureKey &o) const { return bits == o.bits; }
};
struct ErasureKeyHash {
  size_t operator()(const ErasureKey &k) const;
};

class CodecImpl final : public Codec {
 public:
  // Compiles the encoder. Errors: kJitFailure.
  static Result<std::shared_ptr<CodecImpl>> make(std::shared_ptr<JitImpl> jit, codes::LinearCode code);

  const CodeSpec &spec() const override { return code_.spec; }
  const std::vector<uint64_t> &parity_matrix() const override { return code_.parity.a; }
  KernelInfo encoder_info() const override { return encoder_.info; }

  Status encode(Span<const uint8_t *const> data, Span<uint8_t *const> parity,
                size_t len) const override;
  Status reconstruct(Span<uint8_t *const> shards, const std::vector<bool> &present,
                     size_t len) const override;
  Status prepare_reconstruct(const std::vector<bool> &present) const override;
  KernelInfo decoder_info(const std::vector<bool> &present) const override;

 private:
  struct Decoder {
    codes::DecodePlan plan;
    Kernel kernel;
  };
  CodecImpl(std::shared_ptr<JitImpl> jit, codes::LinearCode code)
      : jit_(std::move(jit)), code_(std::move(code)) {}
  // Validates counts, pointers, len and `present`; fills `key` and the number missing.
  Status check_shards(Span<uint8_t *const> shards, const std::vector<bool> &present, size_t len,
                      ErasureKey *key, unsigned *missing) const;
  Result<std::shared_ptr<const Decoder>> decoder(const ErasureKey &key,
                                                 const std::vector<bool> &present) const;

  std::shared_ptr<JitImpl> jit_;
  codes::LinearCode code_;
  Kernel encoder_;
  mutable std::mutex mutex_;
  mutable std::unordered_map<ErasureKey, std::shared_ptr<const Decoder>, ErasureKeyHash> decoders_;
};

}  // namespace ecjit::runtime
