// ArrayCodec (Jit::array_codec): X-Code, BP-Code, RDP and EVENODD at element level through the
// JIT - encode against the element-level reference encoder (codes::encode_layout) stripe by
// stripe, every failure of one and two disks rebuilt (schedule runner, then the compiled
// kernels), three refused, bad input refused with nothing written; verify against a
// brute-force scan of the reference parity, update against re-encoding with the reference.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <random>
#include <thread>
#include <string>
#include <vector>

#include "background_gate.h"
#include "codes/array_layout.h"
#include "ecjit/ecjit.h"

using namespace ecjit;

namespace {

std::shared_ptr<Jit> make_jit() {
  JitOptions o;
  o.disk_cache = false;
  auto j = Jit::create(o);
  EXPECT_TRUE(j.ok());
  return *j;
}

struct Disks {
  std::vector<std::vector<uint8_t>> bufs;
  std::vector<uint8_t *> ptrs;
  Disks(unsigned n, size_t len) : bufs(n, std::vector<uint8_t>(len)) {
    for (auto &b : bufs) ptrs.push_back(b.data());
  }
  Disks(const Disks &o) : bufs(o.bufs) {
    for (auto &b : bufs) ptrs.push_back(b.data());
  }
  Disks &operator=(const Disks &o) {  // the pointers must be to this copy's buffers
    bufs = o.bufs;
    ptrs.clear();
    for (auto &b : bufs) ptrs.push_back(b.data());
    return *this;
  }
  Span<uint8_t *const> span() { return {ptrs.data(), ptrs.size()}; }
};

// Random data cells, parity from the reference encoder, stripe by stripe.
Disks reference_stripes(const codes::ArrayLayout &L, size_t element, size_t stripes, uint64_t seed) {
  Disks d(L.disks, stripes * L.rows * element);
  std::mt19937_64 rng(seed);
  for (size_t s = 0; s < stripes; ++s) {
    std::vector<std::vector<uint8_t>> cells(L.cells(), std::vector<uint8_t>(element));
    std::vector<uint8_t *> cp;
    for (unsigned c = 0; c < L.cells(); ++c) {
      if (!L.is_parity(c))
        for (auto &b : cells[c]) b = uint8_t(rng());
      cp.push_back(cells[c].data());
    }
    codes::encode_layout(L, cp.data(), element);
    for (unsigned c = 0; c < L.cells(); ++c)
      std::memcpy(d.bufs[L.disk_of(c)].data() + (s * L.rows + L.row_of(c)) * element, cells[c].data(), element);
  }
  return d;
}

// `d` with every parity cell recomputed by the reference encoder, stripe by stripe.
Disks reference_parity(const codes::ArrayLayout &L, size_t element, const Disks &d) {
  Disks out = d;
  std::vector<uint8_t *> disks;
  for (auto &b : out.bufs) disks.push_back(b.data());
  codes::encode_disks(L, disks.data(), out.bufs[0].size(), element);
  return out;
}

TEST(ArrayCodec, EncodeMatchesTheElementReference) {
  auto jit = make_jit();
  for (const char *fam : {"xcode", "bpcode", "rdp", "evenodd", "star"})
    for (unsigned p : {5u, 7u, 11u})
      for (unsigned element : {8u, 72u}) {
        const std::string spec = std::string(fam) + ":p=" + std::to_string(p) + ",element=" + std::to_string(element);
        auto codec = jit->array_codec(spec);
        ASSERT_TRUE(codec.ok()) << spec << ": " << codec.status().to_string();
        const codes::ArrayLayout L = *codes::array_layout(fam, p);
        ASSERT_EQ((*codec)->disks(), L.disks);
        ASSERT_EQ((*codec)->rows(), L.rows);
        const Disks want = reference_stripes(L, element, 3, p * element);
        Disks got = want;
        for (unsigned c = 0; c < L.cells(); ++c)  // scribble the parity cells
          if (L.is_parity(c))
            for (size_t s = 0; s < 3; ++s)
              std::memset(got.bufs[L.disk_of(c)].data() + (s * L.rows + L.row_of(c)) * element, 0xa5, element);
        ASSERT_TRUE((*codec)->encode(got.span(), got.bufs[0].size()).ok());
        EXPECT_EQ(got.bufs, want.bufs) << spec;
        EXPECT_EQ((*codec)->is_parity(L.row_of(L.chains[0].parity), L.disk_of(L.chains[0].parity)), true);
      }
}

void every_failure(const std::string &spec) {
  auto jit = make_jit();
  auto codec = jit->array_codec(spec);
  ASSERT_TRUE(codec.ok()) << codec.status().to_string();
  const auto as = *codes::parse_array_spec(spec);
  const codes::ArrayLayout L = *codes::array_layout(as.family, as.p);
  const Disks want = reference_stripes(L, as.element, 2, 11);
  const size_t len = want.bufs[0].size();
  for (int pass = 0; pass < 2; ++pass) {  // 0: first calls (runner), 1: after the background compiles
    for (unsigned a = 0; a < L.disks; ++a)
      for (unsigned b = a; b < L.disks; ++b) {
        std::vector<bool> present(L.disks, true);
        present[a] = present[b] = false;
        Disks got = want;
        std::memset(got.bufs[a].data(), 0x5a, len);
        std::memset(got.bufs[b].data(), 0x3c, len);
        ASSERT_TRUE((*codec)->reconstruct(got.span(), present, len).ok()) << spec;
        ASSERT_EQ(got.bufs, want.bufs) << spec << " lost " << a << "," << b << " pass " << pass;
        if (pass == 1) EXPECT_EQ((*codec)->decoder_info(present).decision.tier, ecjit::KernelTier::kCompiled);
      }
    jit->wait_for_tuning();
  }
  std::vector<bool> three(L.disks, true);
  three[0] = three[1] = three[2] = false;
  Disks got = want;
  EXPECT_EQ((*codec)->reconstruct(got.span(), three, len).code(), StatusCode::kTooManyErasures);
  EXPECT_EQ(got.bufs, want.bufs);
}

TEST(ArrayCodec, EveryFailureXcode) { every_failure("xcode:p=7,element=16"); }
TEST(ArrayCodec, EveryFailureBpcode) { every_failure("bpcode:p=7,element=8"); }
TEST(ArrayCodec, EveryFailureRdpEvenodd) {
  every_failure("rdp:p=5,element=24");
  every_failure("evenodd:p=5");
}

TEST(ArrayCodec, StarRebuildsEveryThreeDiskFailure) {
  auto jit = make_jit();
  auto codec = jit->array_codec("star:p=5,element=8");
  ASSERT_TRUE(codec.ok()) << codec.status().to_string();
  const codes::ArrayLayout L = *codes::array_layout("star", 5);
  ASSERT_EQ((*codec)->disks(), 8u);
  const Disks want = reference_stripes(L, 8, 2, 21);
  const size_t len = want.bufs[0].size();
  for (unsigned a = 0; a < L.disks; ++a)
    for (unsigned b = a + 1; b < L.disks; ++b)
      for (unsigned c = b + 1; c < L.disks; ++c) {
        std::vector<bool> present(L.disks, true);
        present[a] = present[b] = present[c] = false;
        Disks got = want;
        for (unsigned d : {a, b, c}) std::memset(got.bufs[d].data(), 0x77, len);
        ASSERT_TRUE((*codec)->reconstruct(got.span(), present, len).ok()) << a << "," << b << "," << c;
        ASSERT_EQ(got.bufs, want.bufs) << "lost " << a << "," << b << "," << c;
      }
  std::vector<bool> four(L.disks, true);
  four[0] = four[1] = four[2] = four[3] = false;
  Disks got = want;
  EXPECT_EQ((*codec)->reconstruct(got.span(), four, len).code(), StatusCode::kTooManyErasures);
}

TEST(ArrayCodec, BadInputIsRefusedNothingWritten) {
  auto jit = make_jit();
  for (auto [spec, says] : {std::pair<const char *, const char *>{"xcode:p=9", "p prime"},
                            {"xcode", "missing p="}, {"xcode:p=7,element=12", "multiple of 8"},
                            {"xcode:p=7,w=3", "unknown key 'w'"}, {"raid:p=7", "unknown array code"}}) {
    auto c = jit->array_codec(spec);
    ASSERT_FALSE(c.ok()) << spec;
    EXPECT_EQ(c.status().code(), StatusCode::kInvalidSpec);
    EXPECT_NE(c.status().message().find(says), std::string::npos) << c.status().message();
  }
  auto codec = jit->array_codec("xcode:p=5,element=8");
  ASSERT_TRUE(codec.ok());
  const codes::ArrayLayout L = *codes::array_layout("xcode", 5);
  const Disks want = reference_stripes(L, 8, 1, 3);
  Disks got = want;
  const size_t len = want.bufs[0].size();
  EXPECT_EQ((*codec)->encode(got.span(), len - 8).code(), StatusCode::kShardSize);
  EXPECT_EQ((*codec)->encode({got.ptrs.data(), 4}, len).code(), StatusCode::kShardCount);
  std::vector<uint8_t *> alias = got.ptrs;
  alias[1] = alias[0];
  EXPECT_EQ((*codec)->encode({alias.data(), alias.size()}, len).code(), StatusCode::kInvalidArgument);
  alias[1] = nullptr;
  EXPECT_EQ((*codec)->reconstruct({alias.data(), alias.size()}, std::vector<bool>(5, true), len).code(),
            StatusCode::kNullPointer);
  EXPECT_EQ((*codec)->reconstruct(got.span(), std::vector<bool>(4, true), len).code(), StatusCode::kShardCount);
  EXPECT_EQ(got.bufs, want.bufs);
}

TEST(ArrayCodec, VerifyFindsTheFirstDifferingParityByte) {
  auto jit = make_jit();
  std::mt19937_64 rng(5);
  for (const char *fam : {"xcode", "bpcode", "rdp", "evenodd", "star"})
    for (unsigned p : {5u, 7u})
      for (unsigned element : {8u, 72u}) {
        const std::string spec = std::string(fam) + ":p=" + std::to_string(p) + ",element=" + std::to_string(element);
        auto codec = jit->array_codec(spec);
        ASSERT_TRUE(codec.ok()) << spec;
        const codes::ArrayLayout L = *codes::array_layout(fam, p);
        // Past one 64 KiB scratch chunk for the larger element: the scan crosses chunks.
        const size_t stripes = element == 72 ? 160 : 3;
        const Disks good = reference_stripes(L, element, stripes, p + element);
        const size_t len = good.bufs[0].size();
        std::vector<const uint8_t *> ro(good.ptrs.begin(), good.ptrs.end());
        size_t off = 1;
        unsigned disk = 99;
        auto ok = (*codec)->verify({ro.data(), ro.size()}, len, &off, &disk);
        ASSERT_TRUE(ok.ok() && *ok) << spec;
        EXPECT_EQ(off, 1u);  // untouched on a match
        for (int trial = 0; trial < 6; ++trial) {
          Disks bad = good;
          // Damage: two random bytes anywhere (data or parity) on random disks.
          for (int i = 0; i < 2; ++i) bad.bufs[rng() % L.disks][rng() % len] ^= uint8_t(1 + rng() % 255);
          // The oracle: the reference parity of the damaged data against the damaged parity,
          // scanned in offset order, lowest disk first at one offset.
          const Disks want = reference_parity(L, element, bad);
          bool differs = false;
          size_t want_off = 0;
          unsigned want_disk = 0;
          for (size_t o = 0; o < len && !differs; ++o)
            for (unsigned d = 0; d < L.disks && !differs; ++d)
              if (L.is_parity(L.cell(unsigned(o / element % L.rows), d)) && bad.bufs[d][o] != want.bufs[d][o])
                differs = true, want_off = o, want_disk = d;
          std::vector<const uint8_t *> bro(bad.ptrs.begin(), bad.ptrs.end());
          auto v = (*codec)->verify({bro.data(), bro.size()}, len, &off, &disk);
          ASSERT_TRUE(v.ok()) << v.status().to_string();
          EXPECT_EQ(*v, !differs) << spec;
          if (differs) {
            EXPECT_EQ(off, want_off) << spec << " trial " << trial;
            EXPECT_EQ(disk, want_disk) << spec << " trial " << trial;
          }
        }
        // verify's checks are encode's (a short len, a null disk), with nothing written.
        EXPECT_EQ((*codec)->verify({ro.data(), ro.size()}, len - 8, nullptr).status().code(), StatusCode::kShardSize);
        std::vector<const uint8_t *> null_disk = ro;
        null_disk[1] = nullptr;
        EXPECT_EQ((*codec)->verify({null_disk.data(), null_disk.size()}, len).status().code(), StatusCode::kNullPointer);
      }
}

TEST(ArrayCodec, UpdateEqualsReencodingFirstCallsAndCompiled) {
  JitOptions o;
  o.disk_cache = false;
  o.promote_after_bytes = 1;  // the second update of a disk runs its compiled kernel
  auto jit = *Jit::create(o);
  std::mt19937_64 rng(9);
  for (const char *fam : {"xcode", "bpcode", "rdp", "evenodd", "star"}) {
    const unsigned p = 7, element = 16;
    const std::string spec = std::string(fam) + ":p=7,element=16";
    auto codec = jit->array_codec(spec);
    ASSERT_TRUE(codec.ok()) << spec;
    const codes::ArrayLayout L = *codes::array_layout(fam, p);
    Disks cur = reference_stripes(L, element, 4, 77);
    const size_t len = cur.bufs[0].size();
    for (int pass = 0; pass < 2; ++pass) {
      for (unsigned d = 0; d < L.disks; ++d) {
        bool has_data = false;
        for (unsigned r = 0; r < L.rows; ++r) has_data |= !L.is_parity(L.cell(r, d));
        std::vector<uint8_t> next(len);
        for (auto &b : next) b = uint8_t(rng());
        if (!has_data) {  // RDP's / EVENODD's parity disks: refused, nothing written
          const Disks before = cur;
          EXPECT_EQ((*codec)->update(cur.span(), d, next.data(), len).code(), StatusCode::kInvalidArgument);
          EXPECT_EQ(cur.bufs, before.bufs);
          continue;
        }
        // The reference: the new data cells in place, every parity cell re-encoded.
        Disks want = cur;
        for (size_t at = 0; at < len; at += element)
          if (!L.is_parity(L.cell(unsigned(at / element % L.rows), d)))
            std::memcpy(want.bufs[d].data() + at, next.data() + at, element);
        want = reference_parity(L, element, want);
        ASSERT_TRUE((*codec)->update(cur.span(), d, next.data(), len).ok()) << spec << " disk " << d;
        ASSERT_EQ(cur.bufs, want.bufs) << spec << " disk " << d << " pass " << pass;
      }
      const uint64_t compiled = jit->stats().kernels_compiled;
      jit->wait_for_tuning();  // pass 1 runs the compiled update kernels
      if (pass == 0) EXPECT_GT(jit->stats().kernels_compiled, compiled) << spec << ": no update kernel compiled";
    }
    // Refusals, nothing written.
    const Disks before = cur;
    std::vector<uint8_t> next(len, 1);
    EXPECT_EQ((*codec)->update(cur.span(), L.disks, next.data(), len).code(), StatusCode::kInvalidArgument);
    EXPECT_EQ((*codec)->update(cur.span(), 0, nullptr, len).code(), StatusCode::kNullPointer);
    EXPECT_EQ((*codec)->update(cur.span(), 0, cur.ptrs[0], len).code(), StatusCode::kInvalidArgument);
    EXPECT_EQ((*codec)->update(cur.span(), 0, next.data(), len - 8).code(), StatusCode::kShardSize);
    EXPECT_EQ(cur.bufs, before.bufs);
  }
}

}  // namespace

// A cold encoder (no kernel in memory or on disk) is served by its schedule runner while its
// unrolled kernel compiles in the background: codec() compiles nothing, two threads encoding
// across the swap always get the reference parity, and a later codec of the spec loads the
// kernel from memory at once.
TEST(ArrayCodecCold, EncoderServedByItsRunnerUntilCompiled) {
  auto jit = make_jit();
  const std::string spec = "xcode:p=7,element=64";
  const codes::ArrayLayout L = *codes::array_layout("xcode", 7);
  const Disks want = reference_stripes(L, 64, 8, 99);
  {
    test::BackgroundGate gate(*jit);  // the compile cannot land before the runner is seen
    const uint64_t compiled = jit->stats().kernels_compiled;
    auto codec = jit->array_codec(spec);
    ASSERT_TRUE(codec.ok()) << codec.status().to_string();
    EXPECT_EQ(compiled, jit->stats().kernels_compiled) << "array_codec() compiled";
    const KernelInfo first = (*codec)->encoder_info();
    EXPECT_EQ(first.decision.tier, ecjit::KernelTier::kScheduleRunner) << first.why;
    EXPECT_EQ(first.strategy, "xor");
    std::atomic<int> failures{0};
    std::atomic<bool> stop{false};
    auto encodes = [&] {
      Disks d = want;
      int calls = 0;
      while (!stop.load() || calls < 3) {
        for (unsigned c = 0; c < L.cells(); ++c)
          if (L.is_parity(c))
            for (size_t s = 0; s < 8; ++s)
              std::memset(d.bufs[L.disk_of(c)].data() + (s * L.rows + L.row_of(c)) * 64, 0, 64);
        if (!(*codec)->encode(d.span(), d.bufs[0].size()).ok() || d.bufs != want.bufs) ++failures;
        ++calls;
      }
    };
    std::thread t1(encodes), t2(encodes);
    gate.release();
    jit->wait_for_tuning();  // the background compile
    stop = true;
    t1.join();
    t2.join();
    EXPECT_EQ(failures.load(), 0);
    const KernelInfo done = (*codec)->encoder_info();
    EXPECT_EQ(done.decision.tier, ecjit::KernelTier::kCompiled) << done.why;
    EXPECT_GT(done.decision.xors, 0u) << done.why;
  }
  auto again = jit->array_codec(spec);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ((*again)->encoder_info().decision.tier, ecjit::KernelTier::kCompiled) << (*again)->encoder_info().why;
}

// Degraded reads of byte ranges: every single failure and every pair of failures of each
// family, ranges cut anywhere (inside a cell, across cells and stripes, whole disks), absent
// disks passed as null (never read), against the disks as encoded; one- and two-cell reads
// of a lost disk read exactly the fewest cells any choice of chains needs (brute force).
namespace read_test {

// The cells a chain needs to rebuild `target` (parity: its members; member: the parity and
// the other members), or empty when target is not in it or it touches a dead disk.
std::vector<unsigned> chain_cells(const codes::ArrayLayout &L, const codes::ArrayLayout::Chain &ch, unsigned target,
                                  const std::vector<bool> &dead) {
  std::vector<unsigned> cells;
  bool in = ch.parity == target;
  if (!in) cells.push_back(ch.parity);
  for (unsigned m : ch.members)
    if (m == target) in = true;
    else cells.push_back(m);
  for (unsigned c : cells)
    if (dead[L.disk_of(c)]) return {};
  return in ? cells : std::vector<unsigned>{};
}

// The fewest cells of other disks a read of `targets` (all on dead disks) needs when each
// target takes one chain (brute force over every combination); SIZE_MAX if some has none.
size_t fewest_cells(const codes::ArrayLayout &L, const std::vector<unsigned> &targets, const std::vector<bool> &dead) {
  std::vector<std::vector<std::vector<unsigned>>> options(targets.size());
  for (size_t t = 0; t < targets.size(); ++t) {
    for (const auto &ch : L.chains)
      if (auto c = chain_cells(L, ch, targets[t], dead); !c.empty()) options[t].push_back(c);
    if (options[t].empty()) return SIZE_MAX;
  }
  size_t best = SIZE_MAX;
  std::vector<size_t> pick(targets.size(), 0);
  for (;;) {
    std::vector<bool> used(L.cells(), false);
    for (size_t t = 0; t < targets.size(); ++t)
      for (unsigned c : options[t][pick[t]]) used[c] = true;
    best = std::min(best, size_t(std::count(used.begin(), used.end(), true)));
    size_t t = 0;
    while (t < pick.size() && ++pick[t] == options[t].size()) pick[t++] = 0;
    if (t == pick.size()) return best;
  }
}

// The five families' read cases: a codec, its layout and reference disks of `stripes`.
struct Case {
  std::string spec;
  std::shared_ptr<const ArrayCodec> codec;
  codes::ArraySpec as;
  codes::ArrayLayout L;
  Disks want;
};
std::vector<Case> cases(Jit &jit, size_t stripes, uint64_t seed) {
  std::vector<Case> v;
  for (const char *spec : {"xcode:p=7,element=16", "bpcode:p=7,element=8", "rdp:p=7,element=16",
                           "evenodd:p=5,element=24", "star:p=5,element=8"}) {
    auto codec = jit.array_codec(spec);
    EXPECT_TRUE(codec.ok()) << spec << ": " << codec.status().to_string();
    if (!codec.ok()) continue;
    const codes::ArraySpec as = *codes::parse_array_spec(spec);
    const codes::ArrayLayout L = *codes::array_layout(as.family, as.p);
    v.push_back({spec, *codec, as, L, reference_stripes(L, as.element, stripes, seed)});
  }
  return v;
}

}  // namespace read_test

TEST(ArrayCodecRead, RangesOfLostDisksEqualTheEncodedBytes) {
  auto jit = make_jit();
  std::mt19937_64 rng(77);
  for (const read_test::Case &rc : read_test::cases(*jit, 3, 5)) {
    const char *spec = rc.spec.c_str();
    const std::shared_ptr<const ArrayCodec> *codec = &rc.codec;
    const codes::ArraySpec &as = rc.as;
    const codes::ArrayLayout &L = rc.L;
    const Disks &want = rc.want;
    const size_t len = want.bufs[0].size(), e = as.element;
    auto check_reads = [&](const std::vector<bool> &present) {
      std::vector<const uint8_t *> ptrs(L.disks);
      for (unsigned d = 0; d < L.disks; ++d) ptrs[d] = present[d] ? want.bufs[d].data() : nullptr;
      std::vector<std::pair<size_t, size_t>> ranges = {{0, len}, {e / 2, 1}, {e - 1, e + 2}, {len - e, e},
                                                       {L.rows * e - 3, 7}};
      for (int i = 0; i < 6; ++i) {
        const size_t off = rng() % len;
        ranges.push_back({off, 1 + rng() % (len - off)});
      }
      for (unsigned d = 0; d < L.disks; ++d)
        for (auto [off, size] : ranges) {
          std::vector<uint8_t> out(size, 0xee);
          size_t cells = 0;
          Status st = (*codec)->read({ptrs.data(), ptrs.size()}, present, len, d, off, size, out.data(), &cells);
          ASSERT_TRUE(st.ok()) << spec << " disk " << d << ": " << st.to_string();
          ASSERT_EQ(0, std::memcmp(out.data(), want.bufs[d].data() + off, size))
              << spec << " disk " << d << " [" << off << ", +" << size << ")";
          EXPECT_GT(cells, 0u);
        }
    };
    for (unsigned a = 0; a < L.disks; ++a) {
      std::vector<bool> present(L.disks, true);
      present[a] = false;
      check_reads(present);
      // One and two lost cells: the fewest cells any choice of chains reads.
      std::vector<bool> dead(L.disks, false);
      dead[a] = true;
      std::vector<const uint8_t *> ptrs(L.disks);
      for (unsigned d = 0; d < L.disks; ++d) ptrs[d] = present[d] ? want.bufs[d].data() : nullptr;
      for (unsigned r = 0; r < L.rows; ++r)
        for (unsigned cells_wanted : {1u, 2u}) {
          if (r + cells_wanted > L.rows) continue;
          std::vector<unsigned> targets;
          for (unsigned i = 0; i < cells_wanted; ++i) targets.push_back(L.cell(r + i, a));
          const size_t fewest = read_test::fewest_cells(L, targets, dead);
          if (fewest == SIZE_MAX) continue;  // served by the rebuild map
          std::vector<uint8_t> out(cells_wanted * e);
          size_t cells = 0;
          ASSERT_TRUE((*codec)->read({ptrs.data(), ptrs.size()}, present, len, a, (L.rows + r) * e, out.size(),
                                     out.data(), &cells).ok());
          EXPECT_EQ(cells, fewest) << spec << " disk " << a << " rows " << r << "+" << cells_wanted;
          ASSERT_EQ(0, std::memcmp(out.data(), want.bufs[a].data() + (L.rows + r) * e, out.size()));
        }
      for (unsigned b = a + 1; b < L.disks; ++b) {
        present[b] = false;
        check_reads(present);
        present[b] = true;
      }
    }
  }
}

// Runs of whole stripes are served, once its compile finished, by the read's own kernel
// (jit::array_read_plan: the same chains as one XOR program): the same bytes and the same
// cells read as the region XORs before it, with a compile seen for each lost disk.
TEST(ArrayCodecRead, CompiledReadsOfWholeStripesEqualTheFirstOnes) {
  auto jit = make_jit();
  std::mt19937_64 rng(78);
  for (const read_test::Case &rc : read_test::cases(*jit, 9, 6)) {
    const char *spec = rc.spec.c_str();
    const std::shared_ptr<const ArrayCodec> *codec = &rc.codec;
    const codes::ArraySpec &as = rc.as;
    const codes::ArrayLayout &L = rc.L;
    const Disks &want = rc.want;
    const size_t len = want.bufs[0].size(), stripe = size_t(L.rows) * as.element;
    std::vector<std::pair<size_t, size_t>> ranges = {{0, len}, {stripe, 3 * stripe}, {stripe - 1, 4 * stripe + 2}};
    for (int i = 0; i < 4; ++i) {
      const size_t off = rng() % len;
      ranges.push_back({off, 1 + rng() % (len - off)});
    }
    for (const std::vector<unsigned> &lost : {std::vector<unsigned>{0}, std::vector<unsigned>{2}, std::vector<unsigned>{1, 3}}) {
      std::vector<bool> present(L.disks, true);
      std::vector<const uint8_t *> ptrs(L.disks);
      for (unsigned d : lost) present[d] = false;
      for (unsigned d = 0; d < L.disks; ++d) ptrs[d] = present[d] ? want.bufs[d].data() : nullptr;
      std::vector<size_t> first_cells;
      for (int pass = 0; pass < 2; ++pass) {
        const uint64_t compiled_before = jit->stats().kernels_compiled;
        size_t read_no = 0;
        for (unsigned d : lost)
          for (size_t i = 0; i < ranges.size(); ++i, ++read_no) {
            const auto [off, size] = ranges[i];
            std::vector<uint8_t> out(size, 0xee);
            size_t cells = 0;
            ASSERT_TRUE((*codec)->read({ptrs.data(), ptrs.size()}, present, len, d, off, size, out.data(), &cells).ok());
            ASSERT_EQ(0, std::memcmp(out.data(), want.bufs[d].data() + off, size))
                << spec << " disk " << d << " pass " << pass << " [" << off << ", +" << size << ")";
            if (pass == 0) first_cells.push_back(cells);
            else EXPECT_EQ(cells, first_cells[read_no]) << spec << " disk " << d << " range " << i;
          }
        if (pass == 0) {
          jit->wait_for_tuning();
          EXPECT_GE(jit->stats().kernels_compiled, compiled_before + lost.size()) << spec << ": no read kernel compiled";
        }
      }
    }
  }
}

TEST(ArrayCodecRead, BadInputIsRefusedNothingWritten) {
  auto jit = make_jit();
  auto codec = jit->array_codec("rdp:p=5,element=8");
  ASSERT_TRUE(codec.ok());
  const codes::ArrayLayout L = *codes::array_layout("rdp", 5);
  const Disks want = reference_stripes(L, 8, 2, 3);
  const size_t len = want.bufs[0].size();
  std::vector<const uint8_t *> ptrs(L.disks);
  for (unsigned d = 0; d < L.disks; ++d) ptrs[d] = want.bufs[d].data();
  std::vector<bool> present(L.disks, true);
  present[1] = false;
  ptrs[1] = nullptr;
  std::vector<uint8_t> out(16, 0xee);
  const Span<const uint8_t *const> disks{ptrs.data(), ptrs.size()};
  auto expect = [&](Status st, StatusCode code, const char *what) {
    EXPECT_EQ(st.code(), code) << what << ": " << st.to_string();
    EXPECT_EQ(out, std::vector<uint8_t>(16, 0xee)) << what;
  };
  expect((*codec)->read(disks, present, len, L.disks, 0, 8, out.data()), StatusCode::kInvalidArgument, "disk");
  expect((*codec)->read(disks, present, len, 1, len - 8, 16, out.data()), StatusCode::kInvalidArgument, "past len");
  expect((*codec)->read(disks, present, len, 1, SIZE_MAX, 2, out.data()), StatusCode::kInvalidArgument, "overflow");
  expect((*codec)->read(disks, present, len - 1, 1, 0, 8, out.data()), StatusCode::kShardSize, "len");
  expect((*codec)->read(disks, present, len, 1, 0, 8, nullptr), StatusCode::kNullPointer, "out");
  expect((*codec)->read({ptrs.data(), ptrs.size() - 1}, present, len, 1, 0, 8, out.data()), StatusCode::kShardCount,
         "disks");
  std::vector<bool> short_present(L.disks - 1, true);
  expect((*codec)->read(disks, short_present, len, 1, 0, 8, out.data()), StatusCode::kShardCount, "present");
  ptrs[0] = nullptr;  // present but null
  expect((*codec)->read(disks, present, len, 1, 0, 8, out.data()), StatusCode::kNullPointer, "present disk null");
  ptrs[0] = want.bufs[0].data();
  std::vector<bool> three = present;
  three[0] = three[2] = false;
  expect((*codec)->read(disks, three, len, 1, 0, 8, out.data()), StatusCode::kTooManyErasures, "three lost");
  EXPECT_TRUE((*codec)->read(disks, present, len, 1, 0, 0, nullptr).ok());  // nothing to read
}
