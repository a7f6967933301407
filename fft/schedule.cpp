// rs-fft step schedules (no LLVM): encode / decode schedules written from the transform programs and their
// folding passes.
#include "fft/schedule.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include "codes/rs_fft.h"
#include "codes/rs_fft_program.h"
#include "fft/mul_tables.h"
#include "fft/order.h"

namespace ecjit::sched {
namespace {

namespace fft = codes::fft;

// Table indices by multiplier log, open addressing on the 16-bit keys: a matrix decode's
// schedule looks one up per coefficient (thousands on an erasure set's first call), where a
// std::unordered_map allocated a node for each.
class LogIndex {
 public:
  // The index held for `log`, or `fresh` stored for it; second: whether it was stored.
  std::pair<uint32_t, bool> emplace(uint16_t log, uint32_t fresh) {
    if (2 * (used_ + 1) > slots_.size()) grow();
    uint64_t &e = slots_[probe(log)];
    if (e != kEmpty) return {uint32_t(e), false};
    e = uint64_t(log) << 32 | fresh;
    ++used_;
    return {fresh, true};
  }
  // The index held for `log`, if any.
  std::optional<uint32_t> find(uint16_t log) const {
    if (slots_.empty()) return std::nullopt;
    const uint64_t e = slots_[probe(log)];
    return e == kEmpty ? std::nullopt : std::optional<uint32_t>(uint32_t(e));
  }

 private:
  static constexpr uint64_t kEmpty = ~uint64_t(0);  // an entry's top 16 bits are 0
  size_t probe(uint16_t log) const {
    const size_t mask = slots_.size() - 1;
    size_t h = (uint32_t(log) * 0x9E3779B1u >> 16) & mask;
    while (slots_[h] != kEmpty && uint16_t(slots_[h] >> 32) != log) h = (h + 1) & mask;
    return h;
  }
  void grow() {
    std::vector<uint64_t> old(std::max<size_t>(64, 2 * slots_.size()), kEmpty);
    old.swap(slots_);
    for (uint64_t e : old)
      if (e != kEmpty) slots_[probe(uint16_t(e >> 32))] = e;
  }
  std::vector<uint64_t> slots_;
  size_t used_ = 0;
};

// Builds steps and their deduplicated multiplier tables.
class ScheduleWriter {
 public:
  explicit ScheduleWriter(FftSchedule &s) : s_(s) {}
  // Index the tables of `shared` (its table_logs) instead of making any: a multiplier it lacks
  // sets missing().
  ScheduleWriter(FftSchedule &s, const FftSchedule &shared) : s_(s), shared_(true) {
    for (uint32_t i = 0; i < shared.table_logs.size(); ++i) {
      if (shared.table_logs[i] == FftSchedule::kZeroTable) zero_ = i;
      else index_.emplace(uint16_t(shared.table_logs[i]), i);
    }
  }
  bool missing() const { return missing_; }
  uint32_t table(uint16_t log) {
    if (shared_) {
      const std::optional<uint32_t> index = index_.find(log);
      if (!index) missing_ = true;
      return index.value_or(0);
    }
    const auto [index, fresh] = index_.emplace(log, uint32_t(s_.tables.size() / kFftMulTableBytes));
    if (fresh) {
      s_.tables.resize(s_.tables.size() + kFftMulTableBytes);
      s_.table_logs.push_back(log);
      fft_mul_tables(log, s_.tables.data() + s_.tables.size() - kFftMulTableBytes, s_.gf);
    }
    return index;
  }
  void step(FftStepKind kind, uint32_t a, uint32_t b = 0, uint32_t t = 0) { s_.steps.push_back({kind, a, b, t}); }
  // The table of a field element c (0 included).
  uint32_t element(uint16_t c) { return c ? table(fft::lch_field(s_.gf).log[c]) : zero_table(); }
  uint32_t zero_table() {
    if (zero_ < 0 && shared_) {
      missing_ = true;
      return 0;
    }
    if (zero_ < 0) {
      zero_ = int64_t(s_.tables.size() / kFftMulTableBytes);
      s_.tables.resize(s_.tables.size() + kFftMulTableBytes, 0);
      s_.table_logs.push_back(FftSchedule::kZeroTable);
    }
    return uint32_t(zero_);
  }
  // The ops of a program on work slots (a twiddle of the field's modulus: the multiply is skipped).
  // Four butterflies in codes::fft::Order::kRadix4's pattern become one two-layer step. Runs of
  // XORs fuse among the steps appended here only (a run across calls could straddle steps
  // inserted between them later: the decode core's derivative).
  void ops(const fft::Program &p) {
    const size_t begin = s_.steps.size();
    for (size_t i = 0; i < p.ops.size(); ++i) {
      const bool fwd = p.ops[i].kind == fft::OpKind::kFft;
      if (i + 11 < p.ops.size() && fuse(&p.ops[i], fwd ? kFftStepFft8 : kFftStepIfft8)) {
        i += 11;
        continue;
      }
      if (i + 3 < p.ops.size() && fuse(&p.ops[i], fwd ? kFftStepFft4 : kFftStepIfft4)) {
        i += 3;
        continue;
      }
      one(p.ops[i]);
    }
    std::vector<FftStep> added(s_.steps.begin() + long(begin), s_.steps.end());
    fuse_xor_steps(added);
    s_.steps.resize(begin);
    s_.steps.insert(s_.steps.end(), added.begin(), added.end());
  }

 private:
  // A butterfly's multiplier: its twiddle, or the zero table where the butterfly skips the
  // multiply (log = the modulus): adding 0 * b is the skip.
  uint32_t twiddle(uint16_t log) { return log != fft::lch_field(s_.gf).modulus ? table(log) : zero_table(); }
  // Butterflies in codes::fft::Order::kRadix8's pattern (twelve) or kRadix4's (four), as
  // fft_step_butterflies lays out a step of kind k: one three- or two-layer step.
  bool fuse(const fft::Op *o, FftStepKind k) {
    FftStepButterfly bfs[12];
    const unsigned n = fft_step_butterflies(k, bfs);
    const fft::OpKind kind = k == kFftStepFft4 || k == kFftStepFft8 ? fft::OpKind::kFft : fft::OpKind::kIfft;
    unsigned first = n;  // the butterfly of slots 0 and 1: gives a and dist
    for (unsigned i = 0; i < n; ++i) {
      if (o[i].kind != kind) return false;
      if (bfs[i].u == 0 && bfs[i].v == 1) first = i;
    }
    const uint32_t a = o[first].a;
    if (o[first].b <= a) return false;
    const uint32_t d = o[first].b - a;
    std::array<int32_t, 7> log;  // per multiplier, the twiddle its butterflies share
    log.fill(-1);
    for (unsigned i = 0; i < n; ++i) {
      if (o[i].a != a + bfs[i].u * d || o[i].b != a + bfs[i].v * d) return false;
      int32_t &l = log[bfs[i].multiplier];
      if (l >= 0 && l != o[i].log) return false;
      l = o[i].log;
    }
    FftStep st{k, a, 0, 0, d};
    for (unsigned j = 0; j < 7; ++j)
      if (log[j] >= 0) fft_step_multiplier(st, j) = twiddle(uint16_t(log[j]));
    s_.steps.push_back(st);
    return true;
  }
  void one(const fft::Op &op) {
    switch (op.kind) {
        case fft::OpKind::kFft:
        case fft::OpKind::kIfft:
          if (op.log == fft::lch_field(s_.gf).modulus) step(kFftStepXor, op.b, op.a);
          else step(op.kind == fft::OpKind::kFft ? kFftStepFft : kFftStepIfft, op.a, op.b, table(op.log));
          break;
        case fft::OpKind::kXor:
          step(kFftStepXor, op.a, op.b);
          break;
        case fft::OpKind::kCopy:
          step(kFftStepCopy, op.a, op.b);
          break;
        case fft::OpKind::kZero:
          step(kFftStepZero, op.a);
          break;
        case fft::OpKind::kMulLog:
          step(kFftStepMul, op.a, op.a, table(op.log));
          break;
      }
  }

  FftSchedule &s_;
  LogIndex index_;
  int64_t zero_ = -1;  // index of the zero table, once made
  bool shared_ = false, missing_ = false;
};

fft::Order step_order(bool radix8) { return radix8 ? fft::Order::kRadix8 : fft::Order::kRadix4; }

// A program's inputs are copied into their slots before its transforms, a load and a store
// per column that the first transform step then loads again (Zen 5, GF(2^8) 32:32 at 4 KiB
// shards: a quarter of the encode). Where a two- or three-layer step is the first to touch each
// of its slots since those were copied from shards at the step's own stride, it reads the
// shards (FftStep::b) and the copies go.
void fold_input_copies(FftSchedule &s) {
  std::vector<int64_t> copied(s.slots, -1);  // the copy into a slot not touched since
  std::vector<bool> drop(s.steps.size(), false);
  for (size_t i = 0; i < s.steps.size(); ++i) {
    FftStep &st = s.steps[i];
    const unsigned n = fft_step_slots(st.kind);
    if (n && st.b == 0 && !fft_step_reads_groups(st.kind)) {
      bool fold = true;
      uint32_t base = 0;
      for (unsigned j = 0; j < n && fold; ++j) {
        const int64_t c = copied[st.a + j * st.dist];
        if (c < 0) fold = false;
        else if (j == 0) base = s.steps[size_t(c)].b;
        else fold = s.steps[size_t(c)].b == base + j * st.dist;
      }
      if (fold) {
        st.b = base;
        for (unsigned j = 0; j < n; ++j) drop[size_t(copied[st.a + j * st.dist])] = true;
      }
    }
    for (uint32_t x : fft_step_work_slots(st, s.slots)) copied[x] = -1;
    if (st.kind == kFftStepCopy && st.a < s.slots && st.b >= s.slots) copied[st.a] = int64_t(i);
  }
  erase_marked_steps(s.steps, drop);
}

// A multi-chunk encode interpolates each chunk in slots of its own and then XORs them into
// chunk 0's, a pass of XOR steps per chunk. Where a two- or three-layer step writes slots whose
// only later use is one XOR each into slots at the step's own stride, with nothing touching
// those between, the step XORs its results there itself (FftStep::into) and the XOR steps go
// (a load and a store per slot and column, and a pass over the tile, fewer). One pass forward
// with the last step touching each slot so far, after one finding the last step of all.
void fold_xor_into(FftSchedule &s) {
  const size_t steps = s.steps.size();
  std::vector<int64_t> final_touch(s.slots, -1), last(s.slots, -1);
  for (size_t i = 0; i < steps; ++i)
    for (uint32_t x : fft_step_work_slots(s.steps[i], s.slots)) final_touch[x] = int64_t(i);
  // Per two- or three-layer step, its slots' XORs met so far (slot j's at matched[8 w + j])
  // and the accumulator's first slot; -1: not (or no longer) foldable.
  std::vector<int64_t> matched(8 * steps, -1);
  std::vector<int64_t> base(steps, -1);
  std::vector<uint8_t> count(steps, 0);
  for (size_t c = 0; c < steps; ++c) {
    const FftStep &x = s.steps[c];
    if (x.kind == kFftStepXor && x.a < s.slots && x.b < s.slots) {
      const int64_t w = last[x.b];  // the step that wrote the XOR's source
      const FftStep *ws = w >= 0 ? &s.steps[size_t(w)] : nullptr;
      const unsigned n = ws && !fft_step_reads_groups(ws->kind) ? fft_step_slots(ws->kind) : 0;
      const uint32_t j = n && x.b >= ws->a ? (x.b - ws->a) / ws->dist : 8;
      if (n && !ws->into && j < n && ws->a + j * ws->dist == x.b && matched[8 * size_t(w) + j] < 0 &&
          final_touch[x.b] == int64_t(c) && last[x.a] < w &&  // source dead after; accumulator untouched since w
          (base[size_t(w)] < 0 ? x.a >= j * ws->dist : base[size_t(w)] + int64_t(j * ws->dist) == int64_t(x.a))) {
        base[size_t(w)] = int64_t(x.a) - int64_t(j * ws->dist);
        matched[8 * size_t(w) + j] = int64_t(c);
        ++count[size_t(w)];
      }
    }
    for (uint32_t y : fft_step_work_slots(x, s.slots)) last[y] = int64_t(c);
  }
  std::vector<bool> drop(steps, false);
  for (size_t w = 0; w < steps; ++w) {
    const unsigned n = fft_step_slots(s.steps[w].kind);
    if (!n || count[w] != n) continue;
    s.steps[w].into = uint32_t(base[w]) + 1;
    for (unsigned j = 0; j < n; ++j) drop[size_t(matched[8 * w + j])] = true;
  }
  erase_marked_steps(s.steps, drop);
}

// An encode of one chunk ends its IFFT and begins its FFT with a pass over the same slot groups
// (append_ifft and append_fft group the layers alike): each FFT step of that pass moves right
// after the IFFT step of its slots where no step between touches them, and the kernel runs the
// two in one pass over the tile (fft/step.h). Nothing else changes: the records keep
// their meaning, so every other reader of a schedule sees two steps.
void pair_transforms(FftSchedule &s) {
  std::vector<int64_t> last(s.slots, -1);  // the last step touching a slot
  std::vector<int64_t> partner(s.steps.size(), -1);
  std::vector<bool> moved(s.steps.size(), false);
  bool any = false;
  for (size_t i = 0; i < s.steps.size(); ++i) {
    const FftStep &st = s.steps[i];
    const bool fwd4 = st.kind == kFftStepFft4, fwd8 = st.kind == kFftStepFft8;
    if ((fwd4 || fwd8) && st.b == 0) {
      const int64_t h = last[st.a];
      if (h >= 0 && partner[size_t(h)] < 0) {
        const FftStep &hs = s.steps[size_t(h)];
        bool pair = hs.kind == (fwd4 ? kFftStepIfft4 : kFftStepIfft8) && hs.a == st.a && hs.dist == st.dist &&
                    hs.into == 0;
        for (unsigned j = 1; j < fft_step_slots(st.kind) && pair; ++j) pair = last[st.a + j * st.dist] == h;
        if (pair) {
          partner[size_t(h)] = int64_t(i);
          moved[i] = any = true;
        }
      }
    }
    for (uint32_t x : fft_step_work_slots(st, s.slots)) last[x] = int64_t(i);
  }
  if (!any) return;
  std::vector<FftStep> out;
  out.reserve(s.steps.size());
  for (size_t i = 0; i < s.steps.size(); ++i) {
    if (moved[i]) continue;
    out.push_back(s.steps[i]);
    if (partner[i] >= 0) out.push_back(s.steps[size_t(partner[i])]);
  }
  s.steps = std::move(out);
}

// Whether steps [first, ...) begin with the FFT's whole first pass over all `slots` work slots:
// one in-place two- or three-layer step per a < dist, in rising a, dist x its slot count =
// slots (the top layers, none truncated).
bool whole_first_pass(const std::vector<FftStep> &steps, size_t first, uint32_t slots) {
  if (first >= steps.size()) return false;
  const FftStep &top = steps[first];
  const unsigned per = fft_step_slots(top.kind);
  if ((top.kind != kFftStepFft4 && top.kind != kFftStepFft8) || size_t(top.dist) * per != slots ||
      steps.size() - first < top.dist)
    return false;
  for (uint32_t a = 0; a < top.dist; ++a) {
    const FftStep &st = steps[first + a];
    if (st.kind != top.kind || st.a != a || st.dist != top.dist || st.b || st.into) return false;
  }
  return true;
}

// Where steps [first, ...) begin with the FFT's whole first pass (whole_first_pass), those
// steps become derivative-fused (kFftStepFft4D / Fft8D) and the formal derivative needs no
// steps of its own: each step reads the groups of higher a, which no step before it in the pass
// has written. Returns whether it did. (Zen 5, 32:32 losing 32 at random: the derivative's XOR
// steps were a quarter of the decode, a load and a store of every slot and ~3 source loads
// each per column.)
bool fold_derivative(std::vector<FftStep> &steps, size_t first, uint32_t slots) {
  if (!whole_first_pass(steps, first, slots)) return false;
  const FftStep &top = steps[first];
  const uint32_t fused = top.kind == kFftStepFft4 ? kFftStepFft4D : kFftStepFft8D, dist = top.dist;
  for (uint32_t a = 0; a < dist; ++a) steps[first + a].kind = fused;
  return true;
}

// Where the IFFT's last pass (the steps before `first`, after `ifft_begin`) and the FFT's first
// pass (from `first`, whole steps in rising a over every slot: whole_first_pass) run
// over the same groups with the same twiddles, and each transform has other passes (which
// the decode's ends fold into), the two passes and the formal derivative become one pass of
// kFftStepTop4D / Top8D steps (fft/step.h): the FFT step undoes the IFFT step, and the
// derivative's sums over bits below the groups' commute with both. Returns whether it did.
// (Emerald Rapids, 1024:1024 at 4 KiB losing 1024 at random: a pass over 2048 slots and
// twelve multiplies of every group's twenty-four fewer; m lost at random, reconstruct_data
// 2.96-3.50 -> 2.32-2.71 ms a call, a new set per call 4.23-5.00 -> 2.73-3.42.)
bool fold_top_passes(std::vector<FftStep> &steps, size_t ifft_begin, size_t first, uint32_t slots,
                     ScheduleWriter &w, const FftSchedule &s) {
  if (!whole_first_pass(steps, first, slots)) return false;
  const FftStep &top = steps[first];
  const unsigned per = fft_step_slots(top.kind);
  const uint32_t dist = top.dist;
  if (first - ifft_begin <= dist || steps.size() - first <= dist) return false;
  const uint32_t inverse = top.kind == kFftStepFft4 ? kFftStepIfft4 : kFftStepIfft8;
  std::vector<const FftStep *> ifft(dist, nullptr);  // the IFFT's last step per a
  for (size_t i = first - dist; i < first; ++i) {
    const FftStep &st = steps[i];
    if (st.kind != inverse || st.dist != dist || st.a >= dist || st.b || st.into || ifft[st.a]) return false;
    ifft[st.a] = &st;
  }
  for (uint32_t a = 0; a < dist; ++a)
    for (unsigned j = 0; j < per - 1; ++j)
      if (fft_step_multiplier(steps[first + a], j) != fft_step_multiplier(*ifft[a], j)) return false;
  const fft::LchField &f = fft::lch_field(s.gf);
  auto element = [&](uint32_t table) {
    const uint32_t log = s.table_logs[table];
    return log == FftSchedule::kZeroTable ? uint16_t(0) : f.exp[log];
  };
  std::vector<FftStep> out(steps.begin(), steps.begin() + long(first - dist));
  for (uint32_t a = 0; a < dist; ++a) {
    const FftStep &st = steps[first + a];
    FftStep t{per == 4 ? kFftStepTop4D : kFftStepTop8D, a, 0, w.element(uint16_t(element(st.table0) ^ element(st.table1))),
              dist};
    if (per == 8) t.table2 = st.table2, t.table3 = st.table3, t.table4 = st.table4, t.table5 = st.table5;
    out.push_back(t);
  }
  out.insert(out.end(), steps.begin() + long(first + dist), steps.end());
  steps = std::move(out);
  return true;
}

// The decode core's steps (fft_decode_core) appended to s through its writer w: IFFT, formal
// derivative, FFT. The derivative folds into the IFFT's last pass and the FFT's first
// (fold_top_passes), or the FFT's first alone, where at most an eighth of the points lie past
// decode_end (1024:1024, 1000:1000); a core truncated further keeps it as
// XOR steps: the points past decode_end are known zeros, whose XORs the pruner drops, while a
// fused step reads them (Zen 5, m lost at random, fused with the first pass made whole:
// 100:28, 124 of 256 points past, 7.1 -> 6.0 GB/s; 1000:24 6.0 -> 4.7).
void append_decode_core(ScheduleWriter &w, FftSchedule &s, const fft::Geometry &g, bool radix8) {
  const uint32_t n = uint32_t(g.decode_work);
  auto program = [&] {
    fft::Program p;
    p.gf = g.gf;
    p.work_count = n;
    return p;
  };
  const size_t ifft_begin = s.steps.size();
  // Two-layer steps with an odd number of layers would begin both mirrored transforms with a
  // single layer, which the decode's ends cannot fold into (fold_decode_ends).
  if (n - g.decode_end <= n / 8 && (radix8 || __builtin_ctz(n) % 2 == 0)) {
    // Both transforms with their layers grouped alike (mirrored: the IFFT's last group and the
    // FFT's first on the same slots) for fold_top_passes; where it cannot fold them, the FFT
    // with its threes from the top as before, its derivative in its first pass.
    fft::Program ifft = program(), fwd = program();
    fft::append_ifft(ifft, 0, n, g.decode_end, 0, step_order(radix8), true);
    fft::append_fft(fwd, 0, n, g.decode_end, 0, step_order(radix8), true);
    w.ops(ifft);
    const size_t first = s.steps.size();
    w.ops(fwd);
    if (fold_top_passes(s.steps, ifft_begin, first, n, w, s)) return;
    s.steps.resize(ifft_begin);  // (its tables are the same twiddles': kept)
  }
  fft::Program ifft = program(), fwd = program(), derivative = program();
  fft::append_ifft(ifft, 0, n, g.decode_end, 0, step_order(radix8));
  fft::append_fft(fwd, 0, n, g.decode_end, 0, step_order(radix8));
  w.ops(ifft);
  const size_t first = s.steps.size();
  w.ops(fwd);
  if (n - g.decode_end <= n / 8 && fold_derivative(s.steps, first, n)) return;
  fft::append_formal_derivative(derivative, n);
  FftSchedule xors;  // XOR steps only: no tables
  xors.gf = g.gf;
  ScheduleWriter(xors).ops(derivative);
  s.steps.insert(s.steps.begin() + long(first), xors.steps.begin(), xors.steps.end());
}

// A program whose inputs and outputs are shards: inputs copied from the shards' pointers,
// outputs computed in place in their shards' tiles.
// With `shared`, its tables (nullopt when one is missing there).
std::optional<FftSchedule> program_schedule(const fft::Program &p, const FftSchedule *shared = nullptr) {
  FftSchedule s;
  s.gf = p.gf;
  s.slots = p.work_count;
  s.slot_shard.assign(s.slots, -1);
  for (const fft::Binding &bd : p.outputs) s.slot_shard[bd.slot] = int32_t(bd.shard);
  std::optional<ScheduleWriter> w;
  if (shared) w.emplace(s, *shared);
  else w.emplace(s);
  for (const fft::Binding &bd : p.inputs) w->step(kFftStepCopy, bd.slot, s.slots + bd.shard);
  w->ops(p);
  if (w->missing()) return std::nullopt;
  fold_input_copies(s);
  fold_xor_into(s);
  pair_transforms(s);
  return s;
}

}  // namespace

uint32_t FftSchedule::scratch_slots() const {
  uint32_t n = 0;
  for (int32_t s : slot_shard) n += s < 0;
  return n;
}

Result<FftSchedule> fft_encode_schedule(unsigned k, unsigned m, bool fused, bool radix8, fft::Gf gf) {
  Result<fft::Program> p = fft::encode_program(k, m, fused ? step_order(radix8) : fft::Order::kLayers, gf);
  if (!p.ok()) return p.status();
  return *program_schedule(*p);
}

std::optional<FftSchedule> fft_inverse_decode_schedule(unsigned k, unsigned m, const std::vector<unsigned> &sources,
                                                       const std::vector<unsigned> &targets,
                                                       const FftSchedule *encoder, bool radix8, fft::Gf gf) {
  std::optional<fft::Program> p = fft::inverse_decode_program(k, m, sources, targets, step_order(radix8), gf);
  if (!p) return std::nullopt;
  return program_schedule(*p, encoder);
}

Result<FftSchedule> fft_decode_core(unsigned k, unsigned m, bool radix8, fft::Gf gf) {
  Result<fft::Geometry> g = fft::geometry(k, m, gf);
  if (!g.ok()) return g.status();
  FftSchedule s;
  s.gf = gf;
  s.slots = uint32_t(g->decode_work);
  s.slot_shard.assign(s.slots, -1);
  ScheduleWriter w(s);
  append_decode_core(w, s, *g, radix8);
  return s;
}

Result<FftSchedule> fft_decode_schedule(unsigned k, unsigned m, const std::vector<bool> &present,
                                        const std::vector<bool> &wanted, bool radix8, fft::Gf gf) {
  Result<std::vector<uint16_t>> logs = fft::locator_logs(k, m, present, gf);
  if (!logs.ok()) return logs.status();
  if (wanted.size() != size_t(k) + m)
    return Status(StatusCode::kShardCount, "rs-fft decode: wanted has " + std::to_string(wanted.size()) +
                                               " entries, need k + m = " + std::to_string(k + m));
  const fft::Geometry g = *fft::geometry(k, m, gf);
  const size_t n = g.decode_work;
  auto point = [&](unsigned s) { return uint32_t(s < k ? g.original_pos + s : g.recovery_pos + (s - k)); };
  FftSchedule s;
  s.gf = gf;
  s.slots = uint32_t(n);
  s.slot_shard.assign(n, -1);
  std::vector<int64_t> holds(n, -1);
  for (unsigned sh = 0; sh < k + m; ++sh) {
    if (wanted[sh] && present[sh])
      return Status(StatusCode::kInvalidArgument, "rs-fft decode: shard " + std::to_string(sh) +
                                                      " is present and wanted");
    if (present[sh]) holds[point(sh)] = sh;
    if (wanted[sh]) s.slot_shard[point(sh)] = int32_t(sh);
  }
  ScheduleWriter w(s);
  for (uint32_t x = 0; x < n; ++x) {
    if (holds[x] >= 0) w.step(kFftStepMul, x, s.slots + uint32_t(holds[x]), w.table((*logs)[x]));
    else w.step(kFftStepZero, x);
  }
  prefetch_shard_reads(s.steps, s.slots);
  append_decode_core(w, s, g, radix8);
  for (unsigned sh = 0; sh < k + m; ++sh)
    if (wanted[sh]) {
      const uint32_t x = point(sh);
      w.step(kFftStepMul, x, x, w.table(uint16_t(fft::lch_field(gf).modulus - (*logs)[x])));
    }
  return s;
}

FftSchedule fft_matrix_schedule(const std::vector<uint16_t> &coeffs, const std::vector<unsigned> &sources,
                                const std::vector<unsigned> &targets, fft::Gf gf) {
  FftSchedule s;
  s.gf = gf;
  s.slots = uint32_t(targets.size());
  for (unsigned t : targets) s.slot_shard.push_back(int32_t(t));
  s.steps.reserve(coeffs.size());
  s.tables.reserve(std::min<size_t>(coeffs.size() + 1, size_t(1) << 16) * kFftMulTableBytes);
  ScheduleWriter w(s);
  const size_t n = sources.size();
  for (uint32_t t = 0; t < targets.size(); ++t) {
    const uint16_t *row = coeffs.data() + t * n;
    size_t i = 0;
    for (; i + 3 <= n; i += 3) {
      FftStep st{i == 0 ? kFftStepMul3 : kFftStepMulAdd3, t, s.slots + sources[i], w.element(row[i])};
      st.dist = s.slots + sources[i + 1];
      st.table0 = w.element(row[i + 1]);
      st.b2 = s.slots + sources[i + 2];
      st.table1 = w.element(row[i + 2]);
      s.steps.push_back(st);
    }
    for (; i < n; ++i) w.step(i == 0 ? kFftStepMul : kFftStepMulAdd, t, s.slots + sources[i], w.element(row[i]));
  }
  return s;
}

}  // namespace ecjit::sched
