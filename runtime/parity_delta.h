// ParityDelta: update() and encode_partial() from the first call - column by column on accumulate shape kernels, hot sets compiled in the background.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "codes/linear_code.h"
#include "ecjit/codec.h"
#include "ecjit/shard_set.h"
#include "runtime/jit_impl.h"
#include "jit/once_cache.h"
#include "runtime/op_key.h"
#include "runtime/aot_shapes/aot_product.h"
#include "runtime/codec_kernels.h"

namespace ecjit::runtime {

// One delta set: parity[r] ^= sum over cols c of P(r, c) * x_c, where x_c is the shard
// (encode_partial: one column) or old_c ^ new_c (update: in = old_0, new_0, old_1, ...).
struct DeltaSet {
  bool pairs = false;          // update: two inputs per column
  std::vector<unsigned> cols;  // data shards, ascending
  // The set's own kernel: null until promoted. std::atomic_load / atomic_store only.
  mutable std::shared_ptr<const Kernel> special;
  // The set on the ahead-of-time kernels (its columns side by side, one product): made when
  // the set is first asked for while they serve.
  std::optional<aot::AotProduct> aot;
  mutable std::atomic<uint64_t> bytes{0};
  mutable std::atomic<bool> asked{false};
};

// Per codec. Its accumulate shape kernels are compiled (or loaded: they are shared by every
// codec of the field on the Jit) with the codec or, while the ahead-of-time kernels serve,
// behind it (CodecKernels), so that no update or partial encode
// compiles on the caller's thread: a set runs column by column on them (a pass over the
// parity shards per column) until it has moved JitOptions::promote_after_bytes, when its
// specialised kernel (one pass, constants folded) is compiled on the Jit's background
// thread and swapped in. At most max_cached_kernels sets are kept; a dropped set runs on
// the shape kernels again. Thread-safe; calls never wait for a compile.
class ParityDelta {
 public:
  // The shape kernels a ParityDelta of `code` runs on: accumulate, two inputs (update's old
  // and new; encode_partial passes its shard twice), R outputs and the last m % R; none
  // when shape kernels do not serve the codec: it then compiles per set on first use.
  static std::vector<ShapeRequest> shape_requests(const JitImpl &jit, const codes::LinearCode &code);
  // Over kernels->shapes() [first, first + shape_requests().size()) (requested in that
  // order; the ahead-of-time kernels until they are compiled); null when shape_requests()
  // is empty.
  static std::unique_ptr<ParityDelta> make(const std::shared_ptr<JitImpl> &jit, const codes::LinearCode &code,
                                           std::shared_ptr<const CodecKernels> kernels, size_t first);
  ~ParityDelta();

  // The set of `cols` (ascending data shards), with `pairs` for update().
  Result<std::shared_ptr<const DeltaSet>> find(bool pairs, const ShardSet &cols);

  // parity[0, m) ^= the set's product over `in` (cols.size() or twice that pointers).
  void run(const std::shared_ptr<const DeltaSet> &d, const uint8_t *const *in,
           uint8_t *const *parity, size_t len) const;

  // Adds the counters to `s`: promotions, delta_shape_calls.
  void add_stats(KernelCacheStats *s) const;

 private:
  struct Shared;  // the code and counters, shared with queued background compiles
  ParityDelta(std::shared_ptr<JitImpl> jit, const codes::LinearCode &code);
  void ask(const std::shared_ptr<const DeltaSet> &d) const;
  // d column by column on the codec's compiled shape kernels.
  void run_shapes(const std::vector<Kernel> &shapes, const DeltaSet &d, const uint8_t *const *in,
                  uint8_t *const *parity, size_t len) const;

  std::shared_ptr<JitImpl> jit_;
  const unsigned m_;
  size_t coeff_bytes_ = 0;
  unsigned rows_ = 0;  // outputs per shape kernel; the last chunk has m % rows_ if nonzero
  // Shape kernel first_shape_ + last: the two-input accumulate shape kernel of rows_
  // outputs (last: m % rows_ outputs, when m > rows_ and that is not 0).
  std::shared_ptr<const CodecKernels> kernels_;
  size_t first_shape_ = 0;
  // prepared_[pairs][c]: column c of the parity matrix as an m x 2 matrix prepared for the
  // shape strategy: (P(., c), P(., c)) for update, (P(., c), 0) for encode_partial.
  std::vector<std::vector<uint8_t>> prepared_[2];
  uint64_t promote_after_;
  mutable jit::OnceCache<OpKey, DeltaSet, OpKeyHash> sets_;
  std::shared_ptr<Shared> shared_;
  mutable std::atomic<uint64_t> shape_calls_{0};
};

}  // namespace ecjit::runtime
