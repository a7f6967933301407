// ArrayStore: a file laid over N disk files by an array code and a data placement; degraded reads with one disk failed.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "codes/array_layout.h"
#include "codes/edp.h"
#include "ecjit/ecjit.h"
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
  // Opens the disk files for reading with disk `failed` lost (never opened).
  static Result<std::unique_ptr<ArrayStore>> open(const std::string &dir, const codes::ArrayLayout &layout,
                                                  const codes::DataPlacement &placement, size_t element,
                                                  unsigned failed);
  ~ArrayStore();

  // Reads bytes [offset, offset + size) (within the file written): the requested cells on
  // live disks, plus what plan_degraded_read chose, the lost elements rebuilt by XOR programs
  // run by XorRunner. Counts cells read per disk. Errors: kInvalidArgument (I/O, range).
  Status read(uint64_t offset, uint64_t size, uint8_t *out);
  const std::vector<uint64_t> &cells_read() const { return cells_read_; }

 private:
  struct Plan {
    codes::ReadPlan read;
    std::vector<unsigned> lost;               // requested cells on the failed disk
    std::unique_ptr<runtime::XorRunner> rebuild;  // inputs: read.cells, outputs: lost
  };
  ArrayStore(const codes::ArrayLayout &layout, const codes::DataPlacement &placement, size_t element,
             unsigned failed)
      : layout_(layout), placement_(placement), element_(element), failed_(failed),
        cells_read_(layout.disks, 0) {}
  Result<const Plan *> plan(unsigned first, unsigned count);

  const codes::ArrayLayout &layout_;
  const codes::DataPlacement &placement_;
  size_t element_;
  unsigned failed_;
  std::vector<int> fds_;
  std::vector<uint64_t> cells_read_;
  std::map<std::pair<unsigned, unsigned>, Plan> plans_;
  std::vector<uint8_t> scratch_;
};

}  // namespace ecjit::tools
