// CodecKernels: a codec's encoder and first-call shape kernels - compiled before codec() returns, or compiled in the background while kernels built ahead of time serve.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "codes/linear_code.h"
#include "ecjit/status.h"
#include "runtime/aot_shapes/aot_product.h"
#include "runtime/jit_impl.h"

namespace ecjit::runtime {

// One shape kernel: `inputs` x `outputs` run-time coefficients; accumulate: out ^= C * in.
struct ShapeRequest {
  unsigned inputs = 0;
  unsigned outputs = 0;
  bool accumulate = false;
};

// The ahead-of-time set that may serve a codec of `field` on `jit`: GF(2^8) or GF(2^16),
// target "host", JitOptions::aot_kernels on (ECJIT_AOT=0 clears it), no synchronous tuning
// (tune without tune_in_background returns tuned kernels from codec()), and a set this CPU runs whose
// strategy is the Jit's shape strategy for the field (so the coefficients prepared for it
// are the shape kernels' too). Null otherwise.
const aot::AotShapeSet *aot_set_for(const JitImpl &jit, const codes::Field &field);

// Per codec, shared with the background job that compiles its kernels (which holds it
// weakly: a codec dropped first cancels the rest). Two ways to start:
// - compiled now: codec() compiles the encoder and every shape kernel (a work queue over
//   the calling thread and, with two or more cores, a helper) and returns their errors;
// - compiled later: where aot_set_for() serves, codec() compiles nothing. The encoder runs
//   as aot::AotProduct calls over the parity matrix, degraded reads and updates on the
//   ahead-of-time kernels too (DecodeCache, ParityDelta), until the Jit's background thread
//   has compiled the encoder (published first) and then every shape kernel (published
//   together), one job per kernel. A failed compile leaves the ahead-of-time kernels
//   serving, and says so.
// Readers never wait and never lock: encoder() and shapes() are one acquire load each.
class CodecKernels : public std::enable_shared_from_this<CodecKernels> {
 public:
  static Result<std::shared_ptr<CodecKernels>> make(const std::shared_ptr<JitImpl> &jit,
                                                    const codes::LinearCode &code,
                                                    std::vector<ShapeRequest> requests);

  // The compiled encoder; null while the ahead-of-time kernels serve.
  const Kernel *encoder() const { return encoder_.load(std::memory_order_acquire); }
  // The shape kernels, in request order; null while the ahead-of-time kernels serve.
  const std::vector<Kernel> *shapes() const { return shapes_.load(std::memory_order_acquire); }
  // The set serving until then; null when everything was compiled by make().
  const aot::AotShapeSet *aot_set() const { return aot_; }

  // parity = P x data on the ahead-of-time kernels (only while encoder() is null).
  void aot_encode(const JitImpl &jit, const uint8_t *const *data, uint8_t *const *parity, size_t len) const {
    run_aot(jit, *aot_encoder_, data, k_, parity, m_, len);
  }
  // p over [0, len) of n_in inputs and n_out outputs, split over the Jit's threads as the
  // compiled kernels are, counted in aot_calls().
  void run_aot(const JitImpl &jit, const aot::AotProduct &p, const uint8_t *const *in, size_t n_in,
               uint8_t *const *out, size_t n_out, size_t len) const;
  // What encode() runs now.
  KernelInfo encoder_info() const;
  // The ahead-of-time kernels serving in place of the codec's own `what` ("encoder", ...).
  KernelInfo aot_info(const std::string &what) const;

  // Calls served by the ahead-of-time kernels (KernelCacheStats::aot_calls).
  uint64_t aot_calls() const { return aot_calls_.load(std::memory_order_relaxed); }

 private:
  CodecKernels() = default;
  // Queues the background jobs: the encoder, then each shape kernel.
  void compile_later(const std::shared_ptr<JitImpl> &jit, const codes::LinearCode &code);
  // Records the first background failure (said by aot_info).
  void failed(const Status &s);

  const aot::AotShapeSet *aot_ = nullptr;
  std::optional<aot::AotProduct> aot_encoder_;
  std::vector<ShapeRequest> requests_;
  unsigned k_ = 0, m_ = 0;
  std::atomic<const Kernel *> encoder_{nullptr};
  std::atomic<const std::vector<Kernel> *> shapes_{nullptr};
  std::unique_ptr<Kernel> encoder_storage_;             // written once, before encoder_
  std::unique_ptr<std::vector<Kernel>> shapes_storage_;  // written once, before shapes_
  std::unique_ptr<std::vector<Kernel>> pending_shapes_;  // filled by the jobs (one thread)
  mutable std::mutex failure_mutex_;
  std::string failure_;  // a background compile's error, for the descriptions
  mutable std::atomic<uint64_t> aot_calls_{0};
};

}  // namespace ecjit::runtime
