// DecodeCache: degraded reads from the first call - erasure-set plans on shape kernels, hot sets promoted in the background.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "codes/coeff_layout.h"
#include "codes/linear_code.h"
#include "ecjit/codec.h"
#include "ecjit/shard_set.h"
#include "runtime/jit_impl.h"
#include "jit/decoder_use.h"
#include "jit/once_cache.h"
#include "runtime/op_key.h"
#include "runtime/aot_shapes/aot_product.h"
#include "runtime/codec_kernels.h"

namespace ecjit::runtime {

// A specialised kernel and the shards it reads and writes, in kernel argument order.
struct OpKernel {
  std::vector<unsigned> sources;  // decode: shards read; update: changed data shards
  std::vector<unsigned> targets;  // decode: shards rebuilt
  Kernel kernel;
};

// The constant-specialised decoder rebuilding `targets` from `present`: planned, named and
// two-staged by jit::plan_decoder for the Jit's static strategy, compiled privately
// (KernelMode::shared = false; tuned in the background under "auto"). The codec's
// compile-per-set path (jit::DecoderUse::kPerSet) and promotion (kPromoted: the caller
// sends calls shorter than kernel.min_len to the set's shape kernels) both use it.
// Errors: codes::plan_decode's, kJitFailure.
Result<OpKernel> compile_decoder(JitImpl &jit, const codes::LinearCode &code,
                                 const ShardSet &present, const std::vector<unsigned> &targets,
                                 jit::DecoderUse use);

// One erasure set's rebuild: targets[r] = sum_c C(r, c) * sources[c], C prepared for the
// codec's shape kernels, and, once the set is promoted, its specialised decoder.
struct DecodeSet {
  ShardSet present;
  std::vector<unsigned> sources;   // k shards read, ascending
  std::vector<unsigned> targets;   // shards rebuilt, ascending
  std::vector<uint8_t> prepared;   // C, codes::prepare_matrix for the shape strategy
  // C on the ahead-of-time kernels: made when the set is planned while they serve.
  std::optional<aot::AotProduct> aot;
  // The specialised decoder: null until promoted and after a demotion. Read and written
  // with std::atomic_load / std::atomic_store only (a call keeps the one it loaded).
  mutable std::shared_ptr<const Kernel> special;
  mutable std::atomic<uint64_t> bytes{0};       // input bytes run on the shape kernel
  mutable std::atomic<uint64_t> last_use{0};    // codec-wide tick of the latest call
  mutable std::atomic<bool> promotion_asked{false};
};

// Per codec. The first call of an erasure set plans it (inversion, coefficient
// preparation: no compile) and runs it on the codec's shape kernels (CodecKernels: compiled
// with the codec, or the ahead-of-time kernels until the codec's are compiled);
// a set that has rebuilt promote_after_bytes of input is promoted: its specialised decoder
// is compiled (and tuned under "auto") on the Jit's background thread and swapped in. At
// most max_cached_kernels sets are promoted at once; past that the least recently used
// promoted set goes back to the shape kernel. Plans are kept in an LRU bounded by count and
// by memory. Thread-safe; calls never wait for a compile.
class DecodeCache {
 public:
  // The shape kernels a DecodeCache of `code` runs on (outputs 1..min(m, R), k inputs; R =
  // ir::shape_outputs_per_kernel); none when shape kernels do not serve this codec
  // (JitOptions::shape_kernels off, no shape strategy for the field on the target, or
  // k > kMaxShapeInputs): the codec then compiles decoders on first use.
  static std::vector<ShapeRequest> shape_requests(const JitImpl &jit, const codes::LinearCode &code);
  // The cache over kernels->shapes() [first, first + shape_requests().size()) (requested
  // in that order); null when shape_requests() is empty.
  static std::unique_ptr<DecodeCache> make(const std::shared_ptr<JitImpl> &jit, const codes::LinearCode &code,
                                           std::shared_ptr<const CodecKernels> kernels, size_t first);
  ~DecodeCache();

  // The plan for rebuilding `wanted` (missing shards only) from `present`, made on the
  // first request. Errors: those of codes::plan_decode (kSingular, ...).
  Result<std::shared_ptr<const DecodeSet>> find(const ShardSet &present, const ShardSet &wanted);

  // Rebuilds d.targets (out, in that order) from d.sources (in): the promoted decoder when
  // there is one, else the shape kernels. Counts the bytes and asks for promotion past the
  // threshold. Does not allocate on the hot path.
  void run(const std::shared_ptr<const DecodeSet> &d, const uint8_t *const *in,
           uint8_t *const *out, size_t len) const;

  // Asks for d's specialised decoder now (prepare_reconstruct): queued on the background
  // thread unless it is promoted or queued already.
  void promote_now(const std::shared_ptr<const DecodeSet> &d) const;

  // What runs for d now.
  KernelInfo info(const DecodeSet &d) const;

  // Adds the decode counters to `s` (KernelCacheStats).
  void add_stats(KernelCacheStats *s) const;

  // Most outputs of one shape kernel: more targets run in chunks of at most this many.
  static constexpr unsigned kMaxShapeOutputs = 8;

 private:
  struct Promotions;  // shared with the background tasks
  DecodeCache(std::shared_ptr<JitImpl> jit, const codes::LinearCode &code, size_t plan_capacity);
  void ask(const std::shared_ptr<const DecodeSet> &d, bool optional) const;
  // d on the codec's compiled shape kernels, in chunks of at most max_rows_ outputs.
  void run_shapes(const std::vector<Kernel> &shapes, const DecodeSet &d, const uint8_t *const *in,
                  uint8_t *const *out, size_t len) const;

  std::shared_ptr<JitImpl> jit_;
  const unsigned k_;
  codes::CoeffLayout layout_ = codes::CoeffLayout::kNibbleTables;  // of the shape strategy
  size_t coeff_bytes_ = 0;
  unsigned max_rows_ = kMaxShapeOutputs;  // outputs per shape kernel; more run in chunks
  std::shared_ptr<const CodecKernels> kernels_;
  size_t first_shape_ = 0;  // (*kernels_->shapes())[first_shape_ + r - 1]: r outputs
  uint64_t promote_after_;
  mutable jit::OnceCache<OpKey, DecodeSet, OpKeyHash> plans_;
  std::shared_ptr<Promotions> promotions_;
  mutable std::atomic<uint64_t> tick_{0};
  mutable std::atomic<uint64_t> shape_calls_{0};
};

}  // namespace ecjit::runtime
