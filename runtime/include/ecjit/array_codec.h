// ArrayCodec: an array code whose parity shares the disks with the data (X-Code, Balanced P-Code; RDP and EVENODD too), at element level.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ecjit/codec.h"
#include "ecjit/span.h"
#include "ecjit/status.h"

namespace ecjit {

// A stripe is rows x disks cells of element_bytes() each; disk d's buffer holds, stripe
// after stripe, its rows cells in row order (cell (r, d) of stripe s at offset
// (s * rows() + r) * element_bytes()). Which cells hold parity is the code's
// (docs/xor-codes.md): X-Code's last two rows, P-Code's first row, RDP's / EVENODD's /
// STAR's last disks. Spec: "<family>:p=<prime>[,element=<bytes>]", family xcode, bpcode,
// rdp, evenodd or star (p <= 61),
// element a multiple of 8 (default 64). Obtained from Jit::array_codec(); immutable and
// thread-safe. The encoder is an XOR schedule compiled with the codec; a failed-disk set's
// first rebuild runs its schedule uncompiled while its kernel compiles in the background.
class ArrayCodec {
 public:
  virtual ~ArrayCodec() = default;
  virtual std::string spec() const = 0;
  virtual unsigned disks() const = 0;
  virtual unsigned rows() const = 0;
  virtual size_t element_bytes() const = 0;
  // Bytes of one stripe on one disk: every len is a multiple of it.
  size_t stripe_bytes() const { return size_t(rows()) * element_bytes(); }
  // Whether cell (row, disk) holds parity.
  virtual bool is_parity(unsigned row, unsigned disk) const = 0;

  // Writes every parity cell from the data cells, stripe by stripe; data cells are only
  // read. Errors (nothing written): kShardCount (disks.size != disks()), kNullPointer,
  // kInvalidArgument (two disks share a buffer), kShardSize (len % stripe_bytes()).
  virtual Status encode(Span<uint8_t *const> disks, size_t len) const = 0;
  // Rebuilds every cell of the disks marked absent in `present` (their buffers are
  // written; the others only read). Errors as encode, and kTooManyErasures when the code
  // cannot rebuild that set (more than 2 disks, 3 for STAR); nothing is written then.
  virtual Status reconstruct(Span<uint8_t *const> disks, const std::vector<bool> &present,
                             size_t len) const = 0;
  // Recomputes every parity cell from the data cells and compares; the buffers are only
  // read. true when every parity cell matches. false: *mismatch_offset (may be null) is the
  // smallest byte offset, in a disk buffer, of a parity byte that differs, and
  // *mismatch_disk (may be null) its disk (the lowest at that offset). Errors as encode.
  virtual Result<bool> verify(Span<const uint8_t *const> disks, size_t len, size_t *mismatch_offset = nullptr,
                              unsigned *mismatch_disk = nullptr) const = 0;
  // Writes the data cells of disk `disk` from new_data (laid out as that disk's buffer: its
  // parity cells in new_data are ignored and those in disks[disk] left to this call) and
  // patches every parity cell of the stripes, on any disk, for the change (XOR of the old
  // and new data through the code's map: the other disks' data cells are not read).
  // new_data may alias disks[disk] only when it holds the old data too - i.e. never. Errors
  // as encode, kInvalidArgument (disk out of range, or a disk with no data cells), kNullPointer.
  virtual Status update(Span<uint8_t *const> disks, unsigned disk, const uint8_t *new_data, size_t len) const = 0;
  // A degraded read: `size` bytes at byte `offset` of disk `disk`'s buffer, as they were
  // before the disks marked absent in `present` were lost, into `out`. A present disk's bytes
  // are copied; a lost disk's cells in the range are rebuilt from the other disks, reading
  // only what they need: each lost cell from one parity chain it is in whose other cells are
  // all on present disks, the chains of a stripe chosen together for the fewest cells read
  // (codes::plan_cell_read); a cell no such chain rebuilds (two disks lost, say), from the
  // set's rebuild map. Absent disks' pointers may be null: they are never read. For whole
  // stripes of whole disks `reconstruct` is the fast path; this one serves a small read.
  // *cells_read (may be null): the cells of other disks read (the plan's cost). Errors
  // (nothing written): kShardCount (disks or present not disks() long), kNullPointer (a
  // present disk, or out when size > 0), kShardSize (len % stripe_bytes()), kInvalidArgument
  // (disk out of range, [offset, offset + size) past len), kTooManyErasures.
  virtual Status read(Span<const uint8_t *const> disks, const std::vector<bool> &present, size_t len,
                      unsigned disk, size_t offset, size_t size, uint8_t *out,
                      size_t *cells_read = nullptr) const = 0;
  virtual KernelInfo encoder_info() const = 0;
  // What rebuilds the set now (its schedule runner, or its compiled kernel).
  virtual KernelInfo decoder_info(const std::vector<bool> &present) const = 0;
};

}  // namespace ecjit
