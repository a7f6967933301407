// ArrayCodecImpl::read: a degraded read of a byte range of one disk, each lost cell from its cheapest parity chain.
#include <algorithm>
#include <array>
#include <cstring>
#include <utility>

#include "jit/array_planner.h"
#include "runtime/array_codec_impl.h"
#include "runtime/parallel_kernel.h"
#include "runtime/region_xor.h"
#include "runtime/xor_codec.h"

namespace ecjit::runtime {

Status ArrayCodecImpl::read(Span<const uint8_t *const> disks, const std::vector<bool> &present, size_t len,
                            unsigned disk, size_t offset, size_t size, uint8_t *out, size_t *cells_read) const {
  const unsigned n = layout_.disks;
  if (cells_read) *cells_read = 0;
  if (disks.size != n)
    return Status(StatusCode::kShardCount,
                  "read: " + spec() + " has " + std::to_string(n) + " disks; got " + std::to_string(disks.size));
  if (present.size() != n)
    return Status(StatusCode::kShardCount,
                  "read: present has " + std::to_string(present.size()) + " entries for " + std::to_string(n) + " disks");
  if (!disks.data) return Status(StatusCode::kNullPointer, "read: the disk pointer array is null");
  for (unsigned d = 0; d < n; ++d)
    if (present[d] && !disks[d])
      return Status(StatusCode::kNullPointer, "read: disk " + std::to_string(d) + " is present but null");
  if (len % stripe_bytes())
    return Status(StatusCode::kShardSize, "read: len " + std::to_string(len) + " is not a multiple of the stripe (" +
                                              std::to_string(layout_.rows) + " rows of " +
                                              std::to_string(spec_.element) + " bytes)");
  if (disk >= n)
    return Status(StatusCode::kInvalidArgument,
                  "read: disk " + std::to_string(disk) + " of " + std::to_string(n) + " disks");
  if (offset > len || size > len - offset)
    return Status(StatusCode::kInvalidArgument, "read: bytes [" + std::to_string(offset) + ", " +
                                                    std::to_string(offset) + " + " + std::to_string(size) +
                                                    ") are past the disk's " + std::to_string(len));
  if (size && !out) return Status(StatusCode::kNullPointer, "read: out is null");
  if (!size) return Status::Ok();
  const size_t e = spec_.element, stripe = stripe_bytes();
  if (present[disk]) {
    std::memcpy(out, disks[disk] + offset, size);
    if (cells_read) *cells_read = (offset + size - 1) / e - offset / e + 1;
    return Status::Ok();
  }
  uint64_t failed = 0;
  for (unsigned d = 0; d < n; ++d)
    if (!present[d]) failed |= uint64_t(1) << d;
  // Whether the code rebuilds the set at all: cell_read's first plan of it asks rebuild_op,
  // before any byte is written.

  // Rows r0..r1 of `count` consecutive stripes from `base`, bytes [b0, b1) of every row's cell
  // (a partial cell only when count is 1): one strided region XOR per row. The source lists
  // keep their capacity from call to call (reads of a few KiB paid an allocation each).
  thread_local std::vector<const uint8_t *> src;
  thread_local std::vector<size_t> strides;
  auto rows = [&](size_t base, size_t count, unsigned r0, unsigned r1, size_t from, size_t to) -> Status {
    Result<std::shared_ptr<const CellRead>> plan = cell_read(failed, disk, r0, r1);
    if (!plan.ok()) return plan.status();
    const CellRead &cr = **plan;
    if (cr.whole && from == base && to == base + count * stripe) {  // whole stripes: the compiled read once it is there
      if (std::shared_ptr<const Kernel> k = std::atomic_load(&cr.whole->compiled)) {
        std::array<const uint8_t *, 64> in{};  // n <= 64: the failed set is a 64-bit mask
        for (unsigned d = 0; d < n; ++d)
          if (disks[d]) in[d] = disks[d] + base;
        uint8_t *dst = out + (base - offset);
        const KernelFn fn = k->fn;  // one output pointer: the read buffer; pieces of whole stripes
        run_split(*jit_, in.data(), n, &dst, 1, count * stripe, stripe,
                  [fn](const uint8_t *const *i, uint8_t *const *o, size_t bytes) { fn(i, o, bytes); });
        if (cells_read) *cells_read += cr.cells * count;
        return Status::Ok();
      }
      if (cr.whole->desc.program.xors() <= XorCodec::kMaxUnrolledXors) promote(cr.whole, /*optional=*/true);
    }
    for (unsigned r = r0; r <= r1; ++r) {
      const size_t cell_at = base + size_t(r) * e;
      const size_t b0 = std::max(from, cell_at) - cell_at, b1 = std::min(to, cell_at + e) - cell_at;
      src.clear();
      for (const auto &[d, row] : cr.sources[r - r0]) src.push_back(disks[d] + base + size_t(row) * e + b0);
      strides.assign(src.size(), stripe);
      xor_regions(out + (cell_at + b0 - offset), stripe, src.data(), strides.data(), unsigned(src.size()), count,
                  b1 - b0, false);
    }
    if (cells_read) *cells_read += cr.cells * count;
    return Status::Ok();
  };
  const size_t end = offset + size;
  size_t base = offset / stripe * stripe;
  if (offset > base || end < base + stripe) {  // a first stripe read in part
    const size_t to = std::min(end, base + stripe);
    if (Status st = rows(base, 1, unsigned((offset - base) / e), unsigned((to - 1 - base) / e), offset, to); !st.ok())
      return st;
    base += stripe;
  }
  if (const size_t whole = end > base ? (end - base) / stripe : 0; whole > 0) {  // every row of each stripe
    if (Status st = rows(base, whole, 0, layout_.rows - 1, base, base + whole * stripe); !st.ok()) return st;
    base += whole * stripe;
  }
  if (base < end)  // a last stripe read in part
    if (Status st = rows(base, 1, 0, unsigned((end - 1 - base) / e), base, end); !st.ok()) return st;
  return Status::Ok();
}

Result<std::shared_ptr<const ArrayCodecImpl::CellRead>> ArrayCodecImpl::cell_read(uint64_t failed, unsigned disk,
                                                                                    unsigned r0, unsigned r1) const {
  const auto key = std::make_tuple(failed, disk, r0, r1);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto it = cell_reads_.find(key); it != cell_reads_.end()) return it->second;
  }
  Result<std::shared_ptr<const Op>> op = rebuild_op(failed);
  if (!op.ok()) return op.status();
  const Op &rebuild = **op;
  auto cr = std::make_shared<CellRead>();
  Result<jit::CellSources> sources =
      jit::array_read_sources(layout_, failed, disk, r0, r1, rebuild.desc, rebuild.map, &cr->cells);
  if (!sources.ok()) return sources.status();
  cr->sources = std::move(*sources);
  if (r0 == 0 && r1 + 1 == layout_.rows) {
    // Optional: without it (a plan the XOR planner refuses) the region XORs keep serving.
    Result<jit::XorPlan> whole = jit::array_read_plan(spec_, layout_, failed, disk, cr->sources, jit_->options().target);
    if (whole.ok()) cr->whole = std::make_shared<const Op>(std::move(whole->desc), std::move(whole->map));
  }
  std::lock_guard<std::mutex> lock(mutex_);
  if (cell_reads_.size() >= kCellReadEntries) cell_reads_.clear();
  return cell_reads_.emplace(key, std::move(cr)).first->second;
}

}  // namespace ecjit::runtime
