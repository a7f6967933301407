// ArrayCodecImpl: an element-level array code with its XOR schedules - encoder and rebuilds runner-first, compiled in the background.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "codes/array_layout.h"
#include "ecjit/array_codec.h"
#include "jit/array_planner.h"
#include "runtime/jit_impl.h"
#include "runtime/xor_runner.h"

namespace ecjit::runtime {

class ArrayCodecImpl final : public ArrayCodec {
 public:
  // Plans the encoder (jit::array_encoder_plan: parity cells from data cells, best schedule); its
  // kernel is loaded when in memory or on disk, else its schedule runner serves while it
  // compiles on the Jit's background thread. Errors: those of parse_array_spec
  // (kInvalidSpec), kJitFailure.
  static Result<std::shared_ptr<ArrayCodecImpl>> make(std::shared_ptr<JitImpl> jit, const std::string &spec);

  std::string spec() const override { return spec_.to_string(); }
  unsigned disks() const override { return layout_.disks; }
  unsigned rows() const override { return layout_.rows; }
  size_t element_bytes() const override { return spec_.element; }
  bool is_parity(unsigned row, unsigned disk) const override {
    return row < layout_.rows && disk < layout_.disks && layout_.is_parity(layout_.cell(row, disk));
  }
  Status encode(Span<uint8_t *const> disks, size_t len) const override;
  Status reconstruct(Span<uint8_t *const> disks, const std::vector<bool> &present, size_t len) const override;
  Result<bool> verify(Span<const uint8_t *const> disks, size_t len, size_t *mismatch_offset,
                      unsigned *mismatch_disk) const override;
  Status update(Span<uint8_t *const> disks, unsigned disk, const uint8_t *new_data, size_t len) const override;
  // runtime/array_codec_read.cpp
  Status read(Span<const uint8_t *const> disks, const std::vector<bool> &present, size_t len, unsigned disk,
              size_t offset, size_t size, uint8_t *out, size_t *cells_read) const override;
  KernelInfo encoder_info() const override;
  KernelInfo decoder_info(const std::vector<bool> &present) const override;

  // One cell map as a kernel: `runner` until `compiled` (background) is set.
  struct Op {
    Op(ir::XorKernelDesc d, codes::BitMatrix m) : desc(std::move(d)), map(std::move(m)), runner(desc) {}
    ir::XorKernelDesc desc;
    codes::BitMatrix map;  // lost cells x known cells, what desc.program computes
    XorRunner runner;
    mutable std::shared_ptr<const Kernel> compiled;  // std::atomic_load / atomic_store
    mutable std::atomic<uint64_t> bytes{0};
    mutable std::atomic<bool> asked{false};
  };

 private:
  ArrayCodecImpl(std::shared_ptr<JitImpl> jit, codes::ArraySpec spec, codes::ArrayLayout layout)
      : jit_(std::move(jit)), spec_(std::move(spec)), layout_(std::move(layout)) {}
  // The argument checks of every call; `writes`: also that no two disks share a buffer.
  Status check(const char *what, Span<const uint8_t *const> disks, size_t len, bool writes) const;
  Result<std::shared_ptr<const Op>> rebuild_op(uint64_t failed_mask) const;
  // How read() rebuilds rows r0..r1 of a lost disk in any stripe: per row the cells read
  // (chain members, or the rebuild map's inputs), and the cells touched in all. Planned once
  // per (failed disks, disk, r0, r1) and kept (codes::plan_cell_read: a search over chains).
  struct CellRead {
    jit::CellSources sources;  // per row: (disk, row), jit::array_read_sources
    size_t cells = 0;
    // Every row (r0 = 0, r1 = rows - 1): the same reads as one kernel over runs of whole
    // stripes (jit::array_read_plan), compiled in the background from the first such run.
    std::shared_ptr<const Op> whole;
  };
  Result<std::shared_ptr<const CellRead>> cell_read(uint64_t failed_mask, unsigned disk, unsigned r0,
                                                    unsigned r1) const;
  // The op adding (XOR) the parity change of a change to `disk`'s data cells into every
  // parity cell it reaches; its inputs are that disk's data cells (shard index `disk`).
  Result<std::shared_ptr<const Op>> update_op(unsigned disk) const;
  // Compiles op's unrolled kernel (best schedule) on the Jit's background thread, once; the
  // runner serves until it is published.
  void promote(const std::shared_ptr<const Op> &op, bool optional) const;
  // op's compiled kernel, else its runner, over [0, len) of every disk.
  void run_op(const Op &op, const uint8_t *const *in, uint8_t *const *out, size_t len) const;
  // fn (or, when null, runner) over [0, len) of every disk, split over the Jit's threads.
  void run(KernelFn fn, const XorRunner *runner, const uint8_t *const *in, uint8_t *const *out, size_t len) const;

  std::shared_ptr<JitImpl> jit_;
  codes::ArraySpec spec_;
  codes::ArrayLayout layout_;
  // The encoder (parity cells from data cells, and the map its program computes): its
  // runner until its kernel is compiled (never, past XorCodec::kMaxUnrolledXors).
  std::shared_ptr<const Op> encoder_;
  KernelInfo base_info_;  // target, cpu and strategy "xor" of every description
  mutable std::mutex mutex_;                    // guards rebuilds_ and updates_
  mutable std::map<uint64_t, std::shared_ptr<const Op>> rebuilds_;  // by failed-disk mask
  mutable std::map<unsigned, std::shared_ptr<const Op>> updates_;   // by changed disk
  mutable std::map<std::tuple<uint64_t, unsigned, unsigned, unsigned>, std::shared_ptr<const CellRead>>
      cell_reads_;  // guarded by mutex_; cleared past kCellReadEntries
  static constexpr size_t kCellReadEntries = 1024;
};

}  // namespace ecjit::runtime
