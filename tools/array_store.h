// ArrayStore: a file laid over N disk files by an array code and a data placement; degraded reads with one disk failed.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <atomic>

#include "codes/array_layout.h"
#include "codes/edp.h"
#include "ecjit/ecjit.h"
#include "jit/kernel_service.h"
#include "runtime/xor_runner.h"

namespace ecjit::tools {

// dir/disk<d>/data holds disk d: stripe after stripe, rows cells of `element` bytes each
// (ecjit/array_codec.h's layout). Logical element e of the file (bytes [e E, (e + 1) E)) is
// in stripe e / K at the cell placement.cell_of[e % K]; parity is written by ArrayCodec.
class ArrayStore {
 public:
  // Lays `data` (padded with zeros to whole stripes) over the disk files under `dir`
  // (created), encoding the parity with `codec`. Errors: kInvalidArgument (I/O, with the path).
  static Status write(const std::string &dir, const ArrayCodec &codec, const codes::ArrayLayout &layout,
                      const codes::DataPlacement &placement, const std::vector<uint8_t> &data);
  // Opens the disk files for reading with disk `failed` lost (never opened). With `jit`, each
  // read plan's XOR program is compiled on its background thread after the plan's first use,
  // the schedule runner serving until the kernel is there (the first-call rule); without, the
  // runner serves every read.
  static Result<std::unique_ptr<ArrayStore>> open(const std::string &dir, const codes::ArrayLayout &layout,
                                                  const codes::DataPlacement &placement, size_t element,
                                                  unsigned failed,
                                                  std::shared_ptr<jit::KernelService> jit = nullptr);
  ~ArrayStore();

  // Reads bytes [offset, offset + size) (within the file written): the requested cells on
  // live disks, plus what plan_degraded_read chose, the lost elements rebuilt by the plan's
  // XOR program (its compiled kernel, else XorRunner). Counts cells read per disk and the
  // rebuilds each way. Errors: kInvalidArgument (I/O, range).
  Status read(uint64_t offset, uint64_t size, uint8_t *out);
  const std::vector<uint64_t> &cells_read() const { return cells_read_; }
  // Rebuilds (plan runs with lost elements) by a compiled kernel / by the schedule runner.
  uint64_t compiled_rebuilds() const { return compiled_rebuilds_; }
  uint64_t runner_rebuilds() const { return runner_rebuilds_; }

 private:
  struct Plan {
    codes::ReadPlan read;
    std::vector<unsigned> lost;               // requested cells on the failed disk
    std::unique_ptr<runtime::XorRunner> rebuild;  // inputs: read.cells, outputs: lost
    ir::XorKernelDesc desc;                   // the program rebuild runs, for the compile
    std::shared_ptr<const jit::Kernel> compiled;  // std::atomic_load / atomic_store
    std::atomic<bool> asked{false};           // its compile was queued
  };
  ArrayStore(const codes::ArrayLayout &layout, const codes::DataPlacement &placement, size_t element,
             unsigned failed)
      : layout_(layout), placement_(placement), element_(element), failed_(failed),
        cells_read_(layout.disks, 0) {}
  Result<std::shared_ptr<Plan>> plan(unsigned first, unsigned count);
  // Queues the compile of p's program on jit_'s background thread (once; again after a refusal).
  void compile_later(const std::shared_ptr<Plan> &p);

  const codes::ArrayLayout &layout_;
  const codes::DataPlacement &placement_;
  size_t element_;
  unsigned failed_;
  std::vector<int> fds_;
  std::vector<uint64_t> cells_read_;
  std::map<std::pair<unsigned, unsigned>, std::shared_ptr<Plan>> plans_;
  std::vector<uint8_t> scratch_;
  std::shared_ptr<jit::KernelService> jit_;
  uint64_t compiled_rebuilds_ = 0, runner_rebuilds_ = 0;
};

}  // namespace ecjit::tools
