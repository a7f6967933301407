// Helpers shared by the CodecImpl sources.
#include "runtime/shard_checks.h"

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

namespace ecjit::runtime {

Status shard_size_error(size_t len, unsigned sb) {
  return Status(StatusCode::kShardSize, "len = " + std::to_string(len) +
                                            " is not a multiple of the symbol size " +
                                            std::to_string(sb) + " bytes");
}

namespace {

struct PointerEntry {
  const uint8_t *p;
  uint8_t used;  // 0 empty, 1 an input, 2 an output
};
thread_local std::vector<PointerEntry> pointer_table;

// Whether some output pointer equals another output or an input, through a PointerSet: O(n)
// per call. Wide codes call this on every encode: 128:128's pairwise scan was a fifth of an
// encode of 4 KiB shards (Zen 5, perf), and 65536 shards would take seconds.
bool outputs_collide(const PointerGroup &out, std::initializer_list<PointerGroup> in) {
  size_t n = out.count;
  for (const PointerGroup &g : in) n += g.count;
  PointerSet set(n);
  for (const PointerGroup &g : in)  // inputs may repeat each other
    for (size_t i = 0; i < g.count; ++i) set.add(g.ptrs[i], false);
  for (size_t o = 0; o < out.count; ++o)
    if (set.add(out.ptrs[o], true)) return true;
  return false;
}

}  // namespace

PointerSet::PointerSet(size_t count) {
  size_t cap = 64;
  while (cap < 2 * count) cap <<= 1;
  pointer_table.assign(cap, PointerEntry{nullptr, 0});
  mask_ = cap - 1;
}

bool PointerSet::add(const uint8_t *p, bool output) {
  size_t h = size_t((uintptr_t(p) >> 4) * 0x9E3779B97F4A7C15ull >> 20) & mask_;
  while (pointer_table[h].used && pointer_table[h].p != p) h = (h + 1) & mask_;
  PointerEntry &e = pointer_table[h];
  const bool collide = e.used && (output || e.used == 2);
  if (!e.used || output) e = PointerEntry{p, uint8_t(output ? 2 : 1)};
  return collide;
}

Status check_distinct_outputs(const char *what, const PointerGroup &out,
                              std::initializer_list<PointerGroup> in) {
  size_t inputs = 0;
  for (const PointerGroup &g : in) inputs += g.count;
  // Past a few dozen comparisons, a hash set first; the pairwise scan below then only names the pair.
  if (out.count * (out.count + inputs) > 64 && !outputs_collide(out, in)) return Status::Ok();
  for (size_t o = 0; o < out.count; ++o) {
    const uint8_t *p = out.ptrs[o];
    for (size_t q = o + 1; q < out.count; ++q)
      if (out.ptrs[q] == p)
        return Status(StatusCode::kInvalidArgument,
                      std::string(what) + ": " + out.name + "s " + std::to_string(o) + " and " +
                          std::to_string(q) + " are the same buffer (each output needs its own)");
    for (const PointerGroup &g : in)
      for (size_t i = 0; i < g.count; ++i)
        if (g.ptrs[i] == p)
          return Status(StatusCode::kInvalidArgument,
                        std::string(what) + ": " + out.name + " " + std::to_string(o) +
                            " is the same buffer as " + g.name + " " + std::to_string(i) +
                            " (outputs must not alias inputs)");
  }
  return Status::Ok();
}

std::string join_indices(const std::vector<unsigned> &v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "_" : "") + std::to_string(v[i]);
  return s;
}

Status check_encode_shards(const CodeSpec &spec, Span<const uint8_t *const> data,
                           Span<uint8_t *const> parity) {
  const unsigned k = spec.k, m = spec.m;
  if (data.size != k || parity.size != m)
    return Status(StatusCode::kShardCount, "encode of " + spec.to_string() + " takes " + std::to_string(k) +
                                               " data and " + std::to_string(m) + " parity shards; got " +
                                               std::to_string(data.size) + " and " + std::to_string(parity.size));
  if (!data.data || !parity.data) return Status(StatusCode::kNullPointer, "shard pointer array is null");
  for (unsigned i = 0; i < k; ++i)
    if (!data[i]) return Status(StatusCode::kNullPointer, "data shard " + std::to_string(i) + " is null");
  for (unsigned i = 0; i < m; ++i)
    if (!parity[i]) return Status(StatusCode::kNullPointer, "parity shard " + std::to_string(i) + " is null");
  return check_distinct_outputs("encode", {"parity shard", parity.data, m}, {{"data shard", data.data, k}});
}

Status check_partial_shards(const CodeSpec &spec, unsigned data_index, const uint8_t *shard,
                            Span<uint8_t *const> parity_acc) {
  const unsigned k = spec.k, m = spec.m;
  if (data_index >= k)
    return Status(StatusCode::kInvalidArgument, "encode_partial: data index " + std::to_string(data_index) +
                                                    " >= k = " + std::to_string(k));
  if (parity_acc.size != m)
    return Status(StatusCode::kShardCount, "encode_partial takes " + std::to_string(m) +
                                               " parity accumulators; got " + std::to_string(parity_acc.size));
  if (!shard || !parity_acc.data)
    return Status(StatusCode::kNullPointer, "encode_partial: the shard or the accumulator array is null");
  for (unsigned r = 0; r < m; ++r)
    if (!parity_acc[r])
      return Status(StatusCode::kNullPointer, "encode_partial: accumulator " + std::to_string(r) + " is null");
  return check_distinct_outputs("encode_partial", {"accumulator", parity_acc.data, m}, {{"data shard", &shard, 1}});
}

}  // namespace ecjit::runtime
