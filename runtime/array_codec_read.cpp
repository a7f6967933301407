// ArrayCodecImpl::read: a degraded read of a byte range of one disk, each lost cell from its cheapest parity chain.
#include <algorithm>
#include <cstring>
#include <map>
#include <utility>

#include "codes/edp.h"
#include "runtime/array_codec_impl.h"
#include "runtime/region_xor.h"

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
  std::vector<bool> dead(n);
  for (unsigned d = 0; d < n; ++d)
    if (!present[d]) failed |= uint64_t(1) << d, dead[d] = true;
  // The set's rebuild (cached): whether the code rebuilds it at all, and the map for cells no
  // single chain serves.
  Result<std::shared_ptr<const Op>> op = rebuild_op(failed);
  if (!op.ok()) return op.status();
  const Op &rebuild = **op;

  std::map<std::pair<unsigned, unsigned>, codes::ReadPlan> plans;  // by first / last row
  std::vector<bool> touched(layout_.cells());
  std::vector<const uint8_t *> src;
  const size_t end = offset + size;
  for (size_t base = offset / stripe * stripe; base < end; base += stripe) {
    const size_t from = std::max(offset, base), to = std::min(end, base + stripe);
    const unsigned r0 = unsigned((from - base) / e), r1 = unsigned((to - 1 - base) / e);
    auto it = plans.find({r0, r1});
    if (it == plans.end()) {
      std::vector<unsigned> wanted;
      for (unsigned r = r0; r <= r1; ++r) wanted.push_back(layout_.cell(r, disk));
      Result<codes::ReadPlan> plan = codes::plan_cell_read(layout_, dead, wanted);
      if (!plan.ok()) return plan.status();
      it = plans.emplace(std::make_pair(r0, r1), std::move(*plan)).first;
    }
    const codes::ReadPlan &plan = it->second;
    std::fill(touched.begin(), touched.end(), false);
    for (unsigned r = r0; r <= r1; ++r) {
      const unsigned target = layout_.cell(r, disk);
      const size_t cell_at = base + size_t(r) * e;
      const size_t b0 = std::max(from, cell_at) - cell_at, b1 = std::min(to, cell_at + e) - cell_at;
      src.clear();
      auto add = [&](unsigned c) {
        touched[c] = true;
        src.push_back(disks[layout_.disk_of(c)] + base + size_t(layout_.row_of(c)) * e + b0);
      };
      const int chain = plan.chain_used[r - r0];
      if (chain >= 0) {
        const codes::ArrayLayout::Chain &ch = layout_.chains[unsigned(chain)];
        if (ch.parity != target) add(ch.parity);
        for (unsigned m : ch.members)
          if (m != target) add(m);
      } else {  // the rebuild map's row of the cell: the known cells its bits name
        const ir::XorKernelDesc &d = rebuild.desc;
        const auto at = std::find_if(d.outputs.begin(), d.outputs.end(), [&](const codes::PacketRef &p) {
          return p.shard == disk && p.index == r;
        });
        const unsigned row = unsigned(at - d.outputs.begin());
        for (unsigned i = 0; i < d.inputs.size(); ++i)
          if (rebuild.map.get(row, i)) add(layout_.cell(d.inputs[i].index, d.inputs[i].shard));
      }
      xor_regions(out + (cell_at + b0 - offset), src.data(), unsigned(src.size()), b1 - b0);
    }
    if (cells_read) *cells_read += size_t(std::count(touched.begin(), touched.end(), true));
  }
  return Status::Ok();
}

}  // namespace ecjit::runtime
