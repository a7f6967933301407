// rs-fft encode and decode as butterfly programs, and their scalar interpreter.
#include "codes/rs_fft_program.h"

#include <algorithm>
#include <cassert>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

namespace ecjit::codes::fft {
namespace {

void push(Program &p, OpKind kind, size_t a, size_t b = 0, uint16_t log = 0) {
  assert(a < p.work_count && b < std::max<size_t>(p.work_count, 1));
  p.ops.push_back(Op{kind, log, uint32_t(a), uint32_t(b)});
}

void zero_range(Program &p, size_t first, size_t last) {
  for (size_t x = first; x < last; ++x) push(p, OpKind::kZero, x);
}

}  // namespace

namespace {

// The butterflies of the block [r0, r0 + 2 dist) of one layer, when the block is computed.
void push_block(Program &p, OpKind kind, size_t pos, size_t r0, size_t dist, size_t truncated,
                size_t skew_offset) {
  if (r0 >= truncated) return;
  const uint16_t s = lch_field(p.gf).skew[skew_offset + r0 + dist - 1];
  for (size_t i = pos + r0; i < pos + r0 + dist; ++i) push(p, kind, i, i + dist, s);
}

void fft_depth_first(Program &p, size_t pos, size_t r0, size_t size, size_t truncated, size_t skew_offset) {
  if (size < 2 || r0 >= truncated) return;  // nothing of a skipped block's halves runs either
  push_block(p, OpKind::kFft, pos, r0, size / 2, truncated, skew_offset);
  fft_depth_first(p, pos, r0, size / 2, truncated, skew_offset);
  fft_depth_first(p, pos, r0 + size / 2, size / 2, truncated, skew_offset);
}

void ifft_depth_first(Program &p, size_t pos, size_t r0, size_t size, size_t truncated, size_t skew_offset) {
  if (size < 2 || r0 >= truncated) return;
  ifft_depth_first(p, pos, r0, size / 2, truncated, skew_offset);
  ifft_depth_first(p, pos, r0 + size / 2, size / 2, truncated, skew_offset);
  push_block(p, OpKind::kIfft, pos, r0, size / 2, truncated, skew_offset);
}

// One butterfly of the layer of half-width dist at point i (relative to pos), when its block
// (starting at i rounded down to a multiple of 2 dist) is computed.
void push_one(Program &p, OpKind kind, size_t pos, size_t i, size_t dist, size_t truncated, size_t skew_offset) {
  const size_t r = i / (2 * dist) * (2 * dist);
  if (r >= truncated) return;
  p.ops.push_back(Op{kind, lch_field(p.gf).skew[skew_offset + r + dist - 1], uint32_t(pos + i), uint32_t(pos + i + dist)});
}

// Layers hi = 2 lo and lo (FFT: hi first) in groups of four butterflies per 4 lo block.
void radix4_pair(Program &p, OpKind kind, size_t pos, size_t size, size_t lo, size_t truncated, size_t skew_offset) {
  const size_t d = lo;
  for (size_t r = 0; r < size; r += 4 * d)
    for (size_t i = r; i < r + d; ++i) {
      if (kind == OpKind::kFft) {
        push_one(p, kind, pos, i, 2 * d, truncated, skew_offset);
        push_one(p, kind, pos, i + d, 2 * d, truncated, skew_offset);
        push_one(p, kind, pos, i, d, truncated, skew_offset);
        push_one(p, kind, pos, i + 2 * d, d, truncated, skew_offset);
      } else {
        push_one(p, kind, pos, i, d, truncated, skew_offset);
        push_one(p, kind, pos, i + 2 * d, d, truncated, skew_offset);
        push_one(p, kind, pos, i, 2 * d, truncated, skew_offset);
        push_one(p, kind, pos, i + d, 2 * d, truncated, skew_offset);
      }
    }
}

// Layers 4 lo, 2 lo and lo (FFT: 4 lo first) in groups of twelve butterflies per 8 lo block.
void radix8_triple(Program &p, OpKind kind, size_t pos, size_t size, size_t lo, size_t truncated,
                   size_t skew_offset) {
  const size_t d = lo;
  for (size_t r = 0; r < size; r += 8 * d)
    for (size_t i = r; i < r + d; ++i) {
      auto outer = [&] {
        for (size_t j = 0; j < 4; ++j) push_one(p, kind, pos, i + j * d, 4 * d, truncated, skew_offset);
      };
      auto middle = [&] {
        for (size_t j : {0, 1, 4, 5}) push_one(p, kind, pos, i + j * d, 2 * d, truncated, skew_offset);
      };
      auto inner = [&] {
        for (size_t j : {0, 2, 4, 6}) push_one(p, kind, pos, i + j * d, d, truncated, skew_offset);
      };
      if (kind == OpKind::kFft) {
        outer();
        middle();
        inner();
      } else {
        inner();
        middle();
        outer();
      }
    }
}

// A single layer of half-width dist (an odd layer left over by radix4 pairs).
void single_layer(Program &p, OpKind kind, size_t pos, size_t dist, size_t truncated, size_t skew_offset) {
  for (size_t r = 0; r < truncated; r += 2 * dist) push_block(p, kind, pos, r, dist, truncated, skew_offset);
}

}  // namespace

// The layers of a transform of `size` points in mirrored groups (see append_fft), from the
// lowest layer (half-width 1) up, so that the top group is never a single layer: kRadix8
// threes, then one pair (layers = 2 mod 3) or two pairs (1 mod 3); kRadix4 an odd layer
// alone at the bottom, then pairs.
std::vector<unsigned> mirrored_groups(size_t size, Order order) {
  unsigned layers = 0;
  while ((size_t(1) << layers) < size) ++layers;
  if (order == Order::kRadix4) {
    std::vector<unsigned> g(layers % 2, 1);
    g.insert(g.end(), layers / 2, 2);
    return g;
  }
  unsigned threes = layers / 3, twos = 0;
  if (layers % 3 == 2) twos = 1;
  else if (layers % 3 == 1 && threes > 0) --threes, twos = 2;
  std::vector<unsigned> g(threes, 3);
  g.insert(g.end(), twos, 2);
  if (layers == 1) g.push_back(1);
  return g;
}

void append_fft(Program &p, size_t pos, size_t size, size_t truncated, size_t skew_offset, Order order,
                bool mirrored) {
  assert(skew_offset % size == 0 && skew_offset + size <= lch_field(p.gf).order && truncated <= size);
  if (order == Order::kDepthFirst) return fft_depth_first(p, pos, 0, size, truncated, skew_offset);
  if ((order == Order::kRadix8 || order == Order::kRadix4) && mirrored) {
    const std::vector<unsigned> groups = mirrored_groups(size, order);
    size_t top = size / 2;  // the half-width of the group's top layer
    for (size_t j = groups.size(); j-- > 0;) {
      if (groups[j] == 3) radix8_triple(p, OpKind::kFft, pos, size, top / 4, truncated, skew_offset);
      else if (groups[j] == 2) radix4_pair(p, OpKind::kFft, pos, size, top / 2, truncated, skew_offset);
      else single_layer(p, OpKind::kFft, pos, top, truncated, skew_offset);
      top >>= groups[j];
    }
    return;
  }
  if (order == Order::kRadix4 || order == Order::kRadix8) {
    size_t dist = size / 2;
    if (order == Order::kRadix8)
      for (; dist >= 4; dist /= 8) radix8_triple(p, OpKind::kFft, pos, size, dist / 4, truncated, skew_offset);
    for (; dist >= 2; dist /= 4) radix4_pair(p, OpKind::kFft, pos, size, dist / 2, truncated, skew_offset);
    if (dist == 1) single_layer(p, OpKind::kFft, pos, 1, truncated, skew_offset);
    return;
  }
  for (size_t dist = size / 2; dist > 0; dist /= 2)
    for (size_t r = 0; r < truncated; r += 2 * dist) push_block(p, OpKind::kFft, pos, r, dist, truncated, skew_offset);
}

void append_ifft(Program &p, size_t pos, size_t size, size_t truncated, size_t skew_offset, Order order,
                 bool mirrored) {
  assert(skew_offset % size == 0 && skew_offset + size <= lch_field(p.gf).order && truncated <= size);
  if (order == Order::kDepthFirst) return ifft_depth_first(p, pos, 0, size, truncated, skew_offset);
  if ((order == Order::kRadix8 || order == Order::kRadix4) && mirrored) {
    size_t low = 1;  // the half-width of the group's lowest layer
    for (unsigned g : mirrored_groups(size, order)) {
      if (g == 3) radix8_triple(p, OpKind::kIfft, pos, size, low, truncated, skew_offset);
      else if (g == 2) radix4_pair(p, OpKind::kIfft, pos, size, low, truncated, skew_offset);
      else single_layer(p, OpKind::kIfft, pos, low, truncated, skew_offset);
      low <<= g;
    }
    return;
  }
  if (order == Order::kRadix4 || order == Order::kRadix8) {
    size_t dist = 1;
    if (order == Order::kRadix8)
      for (; 4 * dist < size; dist *= 8) radix8_triple(p, OpKind::kIfft, pos, size, dist, truncated, skew_offset);
    for (; 2 * dist < size; dist *= 4) radix4_pair(p, OpKind::kIfft, pos, size, dist, truncated, skew_offset);
    if (dist < size) single_layer(p, OpKind::kIfft, pos, dist, truncated, skew_offset);
    return;
  }
  for (size_t dist = 1; dist < size; dist *= 2)
    for (size_t r = 0; r < truncated; r += 2 * dist) push_block(p, OpKind::kIfft, pos, r, dist, truncated, skew_offset);
}

void append_formal_derivative(Program &p, size_t count) {
  // rs_fft.cpp's loop XORs block [i, i + w) into [i - w, i) (w the lowest bit of i) for
  // rising i: every value it reads is still the input's. So slot t gets the inputs at
  // t + 2^j for each clear bit j of t below count, in any order; here slot by slot, for
  // rising t (its sources lie above it, not yet written), so that the XORs into one slot
  // are consecutive and a step writer can fuse them (sched::fuse_xor_steps).
  for (size_t t = 0; t < count; ++t)
    for (size_t w = 1; t + w < count; w <<= 1)
      if (!(t & w)) push(p, OpKind::kXor, t, t + w);
}

Result<Program> encode_program(unsigned k, unsigned m, Order order, Gf gf) {
  Result<Geometry> g = geometry(k, m, gf);
  if (!g.ok()) return g.status();
  const size_t C = g->chunk;
  Program p;
  p.gf = gf;
  for (unsigned i = 0; i < k; ++i) p.inputs.push_back({i, i});
  for (unsigned j = 0; j < m; ++j) p.outputs.push_back({k + j, j});
  if (g->rate == Rate::kHigh) {
    // Chunks of C originals at slots c0 ..; each is interpolated at points c0 + C .. and
    // XORed into chunk 0, whose FFT at points 0 .. m-1 gives the recovery shards. The IFFTs
    // end on a group of layers (mirrored: a kernel's last pass can XOR into chunk 0); with one
    // chunk the FFT's layers are grouped alike, its first pass on the IFFT's last slots.
    p.work_count = uint32_t((k + C - 1) / C * C);
    const bool one = k <= C;
    // kRadix4's mirrored IFFT starts with a single layer, which no input copy folds into:
    // worth it only where the chunks' XORs fold into their last pass.
    const bool mirror_ifft = order == Order::kRadix8 || !one;
    for (size_t c0 = 0; c0 < k; c0 += C) {
      const size_t count = std::min<size_t>(C, k - c0);
      zero_range(p, c0 + count, c0 + C);
      append_ifft(p, c0, C, count, c0 + C, order, mirror_ifft);  // a group of layers on top
      if (c0 != 0)
        for (size_t i = 0; i < C; ++i) push(p, OpKind::kXor, i, c0 + i);
    }
    append_fft(p, 0, C, m, 0, order, one && order == Order::kRadix8);
  } else {
    // The originals' coefficients (IFFT at points 0 .. C-1) copied to every recovery chunk,
    // each evaluated at its points c0 + C ...
    p.work_count = uint32_t((m + C - 1) / C * C);
    zero_range(p, k, C);
    append_ifft(p, 0, C, k, 0, order, m <= C);
    for (size_t c0 = C; c0 < m; c0 += C)
      for (size_t i = 0; i < C; ++i) push(p, OpKind::kCopy, c0 + i, i);
    for (size_t c0 = 0; c0 < m; c0 += C) append_fft(p, c0, C, std::min<size_t>(C, m - c0), c0 + C, order, m <= C);
  }
  return p;
}

std::optional<InverseShape> inverse_shape(unsigned k, unsigned m, const std::vector<bool> &available,
                                          const std::vector<unsigned> &targets, Gf gf) {
  Result<Geometry> g = geometry(k, m, gf);
  if (!g.ok() || available.size() != size_t(k) + m || targets.empty()) return std::nullopt;
  const size_t C = g->chunk;
  auto all = [&](size_t first, size_t last) {
    for (size_t s = first; s < std::min(last, available.size()); ++s)
      if (!available[s]) return false;
    return true;
  };
  for (unsigned t : targets)
    if (t >= k + m || available[t]) return std::nullopt;
  if (g->rate == Rate::kHigh) {
    // Every recovery shard, every original outside chunk L, every target inside it.
    if (m != C || !all(k, size_t(k) + m)) return std::nullopt;
    const size_t lost = targets.front() / C * C;
    for (unsigned t : targets)
      if (t >= k || t / C * C != lost) return std::nullopt;
    if (!all(0, lost) || !all(lost + C, k)) return std::nullopt;
    return InverseShape{Rate::kHigh, lost};
  }
  // Low rate: every original, or (k == C) one whole recovery chunk.
  if (all(0, k)) return InverseShape{Rate::kLow, 0};
  if (k == C)
    for (size_t c0 = 0; c0 + C <= m; c0 += C)
      if (all(k + c0, k + c0 + C)) return InverseShape{Rate::kLow, C + c0};
  return std::nullopt;
}

std::optional<Program> inverse_decode_program(unsigned k, unsigned m, const std::vector<unsigned> &sources,
                                              const std::vector<unsigned> &targets, Order order, Gf gf) {
  std::vector<bool> read(size_t(k) + m, false);
  for (unsigned s : sources) {
    if (s >= k + m) return std::nullopt;
    read[s] = true;
  }
  const std::optional<InverseShape> shape = inverse_shape(k, m, read, targets, gf);
  if (!shape) return std::nullopt;
  const size_t C = geometry(k, m, gf)->chunk;
  Program p;
  p.gf = gf;
  if (shape->rate == Rate::kHigh) {
    const size_t lost = shape->chunk_point;  // first original of chunk L
    size_t last = 0;                         // 1 + the highest target's index in chunk L
    for (unsigned t : targets) last = std::max<size_t>(last, t - lost + 1);
    // Slots [0, C): the recovery shards, then IFFT_L(chunk L); [C, ..): the other chunks.
    p.work_count = uint32_t((k + C - 1) / C * C);  // chunk L's C slots hold the recovery
    for (unsigned j = 0; j < m; ++j) p.inputs.push_back({k + j, j});
    size_t base = C;
    std::vector<std::pair<size_t, size_t>> others;  // (first original, slot)
    for (size_t c0 = 0; c0 < k; c0 += C)
      if (c0 != lost) {
        for (size_t i = c0; i < std::min<size_t>(k, c0 + C); ++i) p.inputs.push_back({uint32_t(i), uint32_t(base + i - c0)});
        others.push_back({c0, base});
        base += C;
      }
    append_ifft(p, 0, C, C, 0, order, others.empty());  // alone: IFFT and FFT on the same slots
    for (const auto &[c0, slot] : others) {
      const size_t count = std::min<size_t>(C, k - c0);
      zero_range(p, slot + count, slot + C);
      append_ifft(p, slot, C, count, c0 + C, order);
      for (size_t i = 0; i < C; ++i) push(p, OpKind::kXor, i, slot + i);
    }
    append_fft(p, 0, C, last, lost + C, order, others.empty());
    for (unsigned t : targets) p.outputs.push_back({t, uint32_t(t - lost)});
    return p;
  }
  // Low rate: the polynomial from the chunk read (points k .. C-1 of the originals are
  // zeros), then one FFT per chunk holding targets.
  const size_t from = shape->chunk_point;
  // Target chunks by their point: originals at 0, recovery chunk c0 at C + c0.
  std::vector<std::pair<size_t, size_t>> chunks;  // (point, 1 + highest target offset in it)
  auto point = [&](unsigned s) { return s < k ? size_t(s) : C + (s - k); };
  for (unsigned t : targets) {
    const size_t at = point(t) / C * C, off = point(t) - at + 1;
    auto it = std::find_if(chunks.begin(), chunks.end(), [&](const auto &c) { return c.first == at; });
    if (it == chunks.end()) chunks.push_back({at, off});
    else it->second = std::max(it->second, off);
  }
  p.work_count = uint32_t(C * chunks.size());
  const size_t count = from == 0 ? k : C;
  for (size_t i = 0; i < count; ++i)
    p.inputs.push_back({uint32_t(from == 0 ? i : k + (from - C) + i), uint32_t(i)});
  zero_range(p, count, C);
  append_ifft(p, 0, C, count, from, order, chunks.size() == 1);
  for (size_t q = 1; q < chunks.size(); ++q)
    for (size_t i = 0; i < C; ++i) push(p, OpKind::kCopy, q * C + i, i);
  for (size_t q = 0; q < chunks.size(); ++q)
    append_fft(p, q * C, C, chunks[q].second, chunks[q].first, order, chunks.size() == 1);
  for (unsigned t : targets) {
    const size_t at = point(t) / C * C;
    const size_t q = size_t(std::find_if(chunks.begin(), chunks.end(), [&](const auto &c) { return c.first == at; }) -
                            chunks.begin());
    p.outputs.push_back({t, uint32_t(q * C + point(t) - at)});
  }
  return p;
}

std::optional<std::vector<unsigned>> inverse_decode_sources(unsigned k, unsigned m, const std::vector<bool> &present,
                                                            const std::vector<unsigned> &targets, Gf gf) {
  const std::optional<InverseShape> shape = inverse_shape(k, m, present, targets, gf);
  if (!shape) return std::nullopt;
  const size_t C = geometry(k, m, gf)->chunk;
  std::vector<unsigned> sources;
  auto add = [&](size_t first, size_t last) {
    for (size_t s = first; s < last; ++s) sources.push_back(unsigned(s));
  };
  if (shape->rate == Rate::kHigh) {
    // Exactly k shards only where chunk L is whole (a partial last chunk leaves C - its size
    // more recovery shards than originals restored).
    const size_t lost = shape->chunk_point;
    if (lost + C > k) return std::nullopt;
    add(0, lost);
    add(lost + C, size_t(k) + m);
  } else if (shape->chunk_point == 0) {
    add(0, k);
  } else {
    add(k + (shape->chunk_point - C), k + shape->chunk_point);
  }
  return sources;
}

std::optional<InverseReads> inverse_decode_reads(unsigned k, unsigned m, const std::vector<bool> &present,
                                                 const std::vector<unsigned> &targets, Gf gf, size_t max_first) {
  if (std::optional<std::vector<unsigned>> direct = inverse_decode_sources(k, m, present, targets, gf))
    return InverseReads{std::move(*direct), {}, targets};
  Result<Geometry> g = geometry(k, m, gf);
  if (!g.ok() || present.size() != size_t(k) + m || targets.empty()) return std::nullopt;
  const bool high = g->rate == Rate::kHigh;
  const size_t C = g->chunk;
  if (high && m != C) return std::nullopt;
  for (unsigned t : targets)
    if (t >= k + m || present[t]) return std::nullopt;
  // The shards the inverse reads in full: every recovery shard and the originals outside
  // chunk L - of the chunks holding a target, the one missing the most (the others' missing
  // originals are restored first) - at the high rate; every original at the low.
  size_t L = 0;
  if (high) {  // O(k + targets): one count per chunk
    std::vector<size_t> missing((k + C - 1) / C, 0);
    for (size_t s = 0; s < k; ++s) missing[s / C] += !present[s];
    size_t most = 0;
    for (unsigned t : targets)
      if (t < k && missing[t / C] > most) most = missing[t / C], L = t / C * C;
  }
  auto read_in_full = [&](size_t s) { return high ? s >= k || s < L || s >= L + C : s < k; };
  InverseReads r;
  for (size_t s = 0; s < size_t(k) + m; ++s)
    if (!present[s] && read_in_full(s)) {
      if (r.first.size() == max_first) return std::nullopt;
      r.first.push_back(unsigned(s));
    }
  std::vector<bool> available = present;
  for (unsigned s : r.first) available[s] = true;
  for (unsigned t : targets)
    if (!read_in_full(t)) r.targets.push_back(t);
  if (r.first.empty() || r.targets.empty()) return std::nullopt;
  const std::optional<InverseShape> shape = inverse_shape(k, m, available, r.targets, gf);
  if (!shape) return std::nullopt;
  // What the inverse reads of the present shards, then the others up to k.
  std::vector<bool> taken(size_t(k) + m, false);
  size_t count = 0;
  auto take = [&](size_t s) {
    if (present[s] && !taken[s] && count < k) {
      taken[s] = true;
      ++count;
    }
  };
  for (size_t s = 0; s < size_t(k) + m; ++s)
    if (read_in_full(s) && present[s]) {
      if (count == k) return std::nullopt;  // more than k to read: a partial chunk L
      take(s);
    }
  for (size_t s = 0; s < size_t(k) + m; ++s) take(s);
  if (count < k) return std::nullopt;
  for (size_t s = 0; s < size_t(k) + m; ++s)
    if (taken[s]) r.sources.push_back(unsigned(s));
  return r;
}

Result<std::vector<uint16_t>> locator_logs(unsigned k, unsigned m, const std::vector<bool> &present, Gf gf) {
  Result<Geometry> g = geometry(k, m, gf);
  if (!g.ok()) return g.status();
  if (present.size() != size_t(k) + m)
    return Status(StatusCode::kShardCount, "rs-fft: present has " +
                                               std::to_string(present.size()) +
                                               " entries, need k + m = " + std::to_string(k + m));
  const size_t count = size_t(std::count(present.begin(), present.end(), true));
  if (count < k)
    return Status(StatusCode::kTooManyErasures, "rs-fft: " + std::to_string(count) +
                                                    " shards present, need k = " +
                                                    std::to_string(k));
  const size_t n = g->decode_work;
  std::vector<bool> erased(n, false);
  for (unsigned s = 0; s < k + m; ++s)
    erased[s < k ? g->original_pos + s : g->recovery_pos + (s - k)] = !present[s];
  if (g->rate == Rate::kHigh)
    std::fill(erased.begin() + m, erased.begin() + g->chunk, true);
  else
    std::fill(erased.begin() + g->decode_end, erased.end(), true);
  return erasure_logs(erased, gf);
}

Result<Program> decode_program(unsigned k, unsigned m, const std::vector<bool> &present,
                               bool restore_recovery, Gf gf) {
  Result<std::vector<uint16_t>> logs = locator_logs(k, m, present, gf);
  if (!logs.ok()) return logs.status();
  const Geometry g = *geometry(k, m, gf);
  Program p;
  p.gf = gf;
  std::vector<uint32_t> wanted;  // shard ids to restore, originals first
  for (unsigned s = 0; s < k + m; ++s)
    if (!present[s] && (s < k || restore_recovery)) wanted.push_back(s);
  if (wanted.empty()) return p;

  const size_t n = g.decode_work;
  auto pos = [&](unsigned s) { return s < k ? g.original_pos + s : g.recovery_pos + (s - k); };
  std::vector<bool> holds(n, false);
  for (unsigned s = 0; s < k + m; ++s) holds[pos(s)] = present[s];
  const std::vector<uint16_t> &lg = *logs;

  p.work_count = uint32_t(n);
  for (unsigned s = 0; s < k + m; ++s)
    if (present[s]) p.inputs.push_back({s, uint32_t(pos(s))});
  for (size_t x = 0; x < n; ++x) {
    if (holds[x])
      push(p, OpKind::kMulLog, x, 0, lg[x]);
    else
      push(p, OpKind::kZero, x);
  }
  append_decode_core(p, g);
  for (uint32_t s : wanted) {
    push(p, OpKind::kMulLog, pos(s), 0, uint16_t(lch_field(gf).modulus - lg[pos(s)]));
    p.outputs.push_back({s, uint32_t(pos(s))});
  }
  return p;
}

void append_decode_core(Program &p, const Geometry &g, Order order) {
  const size_t n = g.decode_work;
  append_ifft(p, 0, n, g.decode_end, 0, order);
  append_formal_derivative(p, n);
  append_fft(p, 0, n, g.decode_end, 0, order);
}

Result<Program> decode_core_program(unsigned k, unsigned m, Gf gf) {
  Result<Geometry> g = geometry(k, m, gf);
  if (!g.ok()) return g.status();
  Program core;
  core.gf = gf;
  core.work_count = uint32_t(g->decode_work);
  append_decode_core(core, *g);
  return core;
}

Result<std::vector<uint16_t>> decode_matrix(unsigned k, unsigned m, const std::vector<bool> &present,
                                            const std::vector<unsigned> &sources,
                                            const std::vector<unsigned> &targets, Gf gf, const Program *given) {
  Result<std::vector<uint16_t>> logs = locator_logs(k, m, present, gf);
  if (!logs.ok()) return logs.status();
  for (unsigned s : sources)
    if (s >= k + m || !present[s])
      return Status(StatusCode::kInvalidArgument, "rs-fft decode_matrix: source " + std::to_string(s) + " is not present");
  for (unsigned t : targets)
    if (t >= k + m || present[t])
      return Status(StatusCode::kInvalidArgument, "rs-fft decode_matrix: target " + std::to_string(t) + " is not missing");
  const Geometry g = *geometry(k, m, gf);
  const LchField &f = lch_field(gf);
  const size_t n = g.decode_work;
  auto point = [&](unsigned s) { return s < k ? g.original_pos + s : g.recovery_pos + (s - k); };
  std::optional<Program> built;
  if (!given) built = *decode_core_program(k, m, gf);
  else if (given->gf != gf || given->work_count != n)
    return Status(StatusCode::kInvalidArgument, "rs-fft decode_matrix: the core given is not this code's (" +
                                                    std::to_string(given->work_count) + " points, need " +
                                                    std::to_string(n) + ")");
  const Program &core = given ? *given : *built;
  std::vector<uint16_t> out(targets.size() * sources.size()), v(n);
  // The multiplies inline on the tables (a first reconstruct of a new erasure set waits for
  // |targets| passes of about 2 n log n of them: 1024:1024, 16 lost, ~0.4 M).
  for (size_t t = 0; t < targets.size(); ++t) {
    std::fill(v.begin(), v.end(), uint16_t(0));
    v[point(targets[t])] = 1;
    // v = core^T e_x: ops in reverse, transposed (a ^= s b -> b ^= s a; b ^= a -> a ^= b).
    // Where both are zero no op changes them (most of the first layers: one point is set).
    for (size_t i = core.ops.size(); i-- > 0;) {
      const Op &op = core.ops[i];
      uint16_t &a = v[op.a], &b = v[op.b];
      if ((a | b) == 0) continue;
      switch (op.kind) {
        case OpKind::kFft:  // a ^= s b; b ^= a   ->   a ^= b; b ^= s a
          a ^= b;
          if (op.log != f.modulus) b ^= f.mul_log(a, op.log);
          break;
        case OpKind::kIfft:  // b ^= a; a ^= s b   ->   b ^= s a; a ^= b
          if (op.log != f.modulus) b ^= f.mul_log(a, op.log);
          a ^= b;
          break;
        case OpKind::kXor:  // a ^= b   ->   b ^= a
          b ^= a;
          break;
        default:
          assert(false && "the decode core holds butterflies and XORs only");
      }
    }
    const uint16_t post = uint16_t(f.modulus - (*logs)[point(targets[t])]);
    for (size_t i = 0; i < sources.size(); ++i) {
      const size_t x = point(sources[i]);
      out[t * sources.size() + i] = f.mul_log(f.mul_log(v[x], (*logs)[x]), post);
    }
  }
  return out;
}

void run_program(const Program &p, size_t len, const uint16_t *const *in, uint16_t *const *out) {
  const LchField &f = lch_field(p.gf);
  // Poison below the field's order, so that garbage read stays a field element.
  std::vector<uint16_t> work(size_t(p.work_count) * len, uint16_t(0xA5A5 & (f.order - 1)));
  auto shard = [&](uint32_t slot) { return work.data() + size_t(slot) * len; };
  for (const Binding &b : p.inputs) std::copy(in[b.shard], in[b.shard] + len, shard(b.slot));
  for (const Op &op : p.ops) {
    uint16_t *a = shard(op.a), *b = shard(op.b);
    switch (op.kind) {
      case OpKind::kFft:
        for (size_t t = 0; t < len; ++t) {
          if (op.log != f.modulus) a[t] ^= f.mul_log(b[t], op.log);
          b[t] ^= a[t];
        }
        break;
      case OpKind::kIfft:
        for (size_t t = 0; t < len; ++t) {
          b[t] ^= a[t];
          if (op.log != f.modulus) a[t] ^= f.mul_log(b[t], op.log);
        }
        break;
      case OpKind::kXor:
        for (size_t t = 0; t < len; ++t) a[t] ^= b[t];
        break;
      case OpKind::kCopy:
        std::copy(b, b + len, a);
        break;
      case OpKind::kZero:
        std::fill(a, a + len, uint16_t(0));
        break;
      case OpKind::kMulLog:
        for (size_t t = 0; t < len; ++t) a[t] = f.mul_log(a[t], op.log);
        break;
    }
  }
  for (const Binding &b : p.outputs) std::copy(shard(b.slot), shard(b.slot) + len, out[b.shard]);
}

}  // namespace ecjit::codes::fft
