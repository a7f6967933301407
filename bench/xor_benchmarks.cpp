// xor_benchmarks: ecjit's XOR codes and libJerasure's schedules on the same bit-matrices and data.
#include "bench/xor_benchmarks.h"

#include <benchmark/benchmark.h>
#include <jerasure.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "codes/bitmatrix_code.h"
#include "codes/xor_orders.h"
#include "ecjit/ecjit.h"

namespace ecjit::bench {
namespace {

const char *const kSpecs[] = {
    "cauchy-good:k=10,m=4,w=8,packet=64",  // ecjit's default packet
    "cauchy-good:k=10,m=4,w=8,packet=2048", "cauchy-orig:k=10,m=4,w=8,packet=2048",
    "liberation:k=10,w=11,packet=2048",     "blaum-roth:k=10,w=10,packet=2048",
    "liber8tion:k=8,packet=2048",
    // Array codes (their yardsticks: libJerasure's liberation for m = 2 and its
    // cauchy-good for m = 3 at their best packet; ecjit's cauchy-good at the same k, m).
    "evenodd:k=10,p=11,packet=64",          "rdp:k=10,p=11,packet=64",
    "star:k=10,p=11,packet=64",             "cauchy-good:k=10,m=2,w=8,packet=64",
    "cauchy-good:k=10,m=3,w=8,packet=64",   "cauchy-good:k=10,m=3,w=8,packet=2048",
};

// One code's stripe: 64-byte aligned shards, Jerasure's bit-matrix and smart schedule.
struct XorCase {
  codes::BitMatrixCode code;
  size_t len = 0;
  std::vector<std::unique_ptr<uint8_t, void (*)(void *)>> bufs;
  std::vector<uint8_t *> ptrs;
  std::vector<int> bitmatrix;
  int **schedule = nullptr;

  XorCase(const std::string &spec, size_t want_len) : code(*codes::build_bitmatrix_code(*CodeSpec::parse(spec))) {
    const size_t block = code.block_bytes();
    len = std::max<size_t>(1, want_len / block) * block;
    std::mt19937_64 rng(5);
    for (unsigned s = 0; s < code.n(); ++s) {
      bufs.emplace_back(static_cast<uint8_t *>(std::aligned_alloc(64, len)), std::free);
      ptrs.push_back(bufs.back().get());
      for (size_t i = 0; i < len; ++i) ptrs[s][i] = s < code.k ? uint8_t(rng()) : 0;
    }
    for (unsigned r = 0; r < code.parity.rows; ++r)
      for (unsigned c = 0; c < code.parity.cols; ++c) bitmatrix.push_back(code.parity.get(r, c));
    schedule = jerasure_smart_bitmatrix_to_schedule(int(code.k), int(code.m), int(code.w), bitmatrix.data());
  }
  ~XorCase() { jerasure_free_schedule(schedule); }
  char **data() { return reinterpret_cast<char **>(ptrs.data()); }
  char **coding() { return reinterpret_cast<char **>(ptrs.data() + code.k); }
  void jerasure_encode() {
    jerasure_schedule_encode(int(code.k), int(code.m), int(code.w), schedule, data(), coding(), int(len),
                             int(code.packet));
  }
  void count(benchmark::State &state) const {
    state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(code.k) * int64_t(len));
    state.counters["shard_bytes"] = double(len);
  }
};

std::shared_ptr<Jit> xor_jit(uint64_t promote_after, const char *target = "host") {
  JitOptions o;
  o.disk_cache = false;
  o.promote_after_bytes = promote_after;
  o.target = target;
  return *Jit::create(o);
}

// The encoder under test: ecjit's codec, the same on the AVX2 tier (GFNI and AVX-512 masked
// off: the comparison with ISA-L's ec_encode_data_avx2), libJerasure's smart schedule,
// or (order >= 0) one of Luo et al. 2014's loop orders (codes::encode_in_order).
constexpr int kEcjit = -1, kJerasure = -2, kEcjitAvx2 = -3;
// The AVX2 tier on an AVX-512 + GFNI CPU (bench_encode's kTiers).
constexpr const char *kAvx2Tier = "host-avx512f,-gfni";

void bm_encode(benchmark::State &state, std::string spec, size_t want_len, int impl) {
  XorCase c(spec, want_len);
  std::vector<std::vector<uint8_t>> want(c.code.m, std::vector<uint8_t>(c.len));
  c.jerasure_encode();
  for (unsigned i = 0; i < c.code.m; ++i) std::memcpy(want[i].data(), c.ptrs[c.code.k + i], c.len);
  for (unsigned i = 0; i < c.code.m; ++i) std::memset(c.ptrs[c.code.k + i], 0, c.len);
  std::shared_ptr<Jit> jit = xor_jit(256ull << 20, impl == kEcjitAvx2 ? kAvx2Tier : "host");
  auto codec = jit->codec(spec);
  if (!codec.ok()) {
    state.SkipWithError(codec.status().to_string().c_str());
    return;
  }
  std::vector<const uint8_t *> in(c.ptrs.begin(), c.ptrs.begin() + c.code.k);
  const bool ecjit = impl == kEcjit || impl == kEcjitAvx2;
  auto run = [&] {
    if (ecjit) (void)(*codec)->encode({in.data(), in.size()}, {c.ptrs.data() + c.code.k, c.code.m}, c.len);
    else if (impl == kJerasure) c.jerasure_encode();
    else
      codes::encode_in_order(c.code.parity, c.code.k, c.code.m, c.code.w, c.code.packet, codes::XorOrder(impl),
                             in.data(), c.ptrs.data() + c.code.k, c.len);
  };
  run();
  for (unsigned i = 0; i < c.code.m; ++i)
    if (std::memcmp(want[i].data(), c.ptrs[c.code.k + i], c.len) != 0) {
      state.SkipWithError(("parity " + std::to_string(i) + " differs from libJerasure's").c_str());
      return;
    }
  for (auto _ : state) {
    run();
    benchmark::ClobberMemory();
  }
  c.count(state);
  if (ecjit) state.SetLabel((*codec)->encoder_info().why);
}

enum class Decoder { kEcjit, kRunner, kJerasure };

void bm_decode2(benchmark::State &state, std::string spec, size_t want_len, Decoder which) {
  XorCase c(spec, want_len);
  c.jerasure_encode();
  std::vector<std::vector<uint8_t>> orig(2, std::vector<uint8_t>(c.len));
  for (unsigned s = 0; s < 2; ++s) std::memcpy(orig[s].data(), c.ptrs[s], c.len);
  std::shared_ptr<Jit> jit = xor_jit(which == Decoder::kRunner ? ~uint64_t(0) : 256ull << 20);
  auto codec = jit->codec(spec);
  if (!codec.ok()) {
    state.SkipWithError(codec.status().to_string().c_str());
    return;
  }
  std::vector<bool> present(c.code.n(), true);
  present[0] = present[1] = false;
  if (which == Decoder::kEcjit) {
    (void)(*codec)->prepare_reconstruct(present);
    jit->wait_for_tuning();
  }
  int erasures[] = {0, 1, -1};
  auto run = [&] {
    if (which == Decoder::kJerasure)
      jerasure_schedule_decode_lazy(int(c.code.k), int(c.code.m), int(c.code.w), c.bitmatrix.data(), erasures,
                                    c.data(), c.coding(), int(c.len), int(c.code.packet), 1);
    else
      (void)(*codec)->reconstruct({c.ptrs.data(), c.ptrs.size()}, present, c.len);
  };
  for (unsigned s = 0; s < 2; ++s) std::memset(c.ptrs[s], 0, c.len);
  run();
  for (unsigned s = 0; s < 2; ++s)
    if (std::memcmp(orig[s].data(), c.ptrs[s], c.len) != 0) {
      state.SkipWithError(("rebuilt shard " + std::to_string(s) + " differs from the original").c_str());
      return;
    }
  for (auto _ : state) {
    run();
    benchmark::ClobberMemory();
  }
  c.count(state);
  if (which != Decoder::kJerasure) state.SetLabel((*codec)->decoder_info(present).why);
}

// An array code's codec and about per_disk bytes of encoded disks (whole stripes), or null
// with the benchmark skipped.
struct ArrayDisks {
  std::shared_ptr<Jit> jit;
  std::shared_ptr<const ArrayCodec> codec;
  size_t len = 0;
  std::vector<std::vector<uint8_t>> disks;
  std::vector<uint8_t *> ptrs;
};
std::unique_ptr<ArrayDisks> encoded_disks(benchmark::State &state, const std::string &spec, size_t per_disk,
                                          uint64_t seed) {
  auto a = std::make_unique<ArrayDisks>();
  a->jit = xor_jit(256ull << 20);
  auto codec = a->jit->array_codec(spec);
  if (!codec.ok()) {
    state.SkipWithError(codec.status().to_string().c_str());
    return nullptr;
  }
  a->codec = *codec;
  const ArrayCodec &c = *a->codec;
  a->len = std::max<size_t>(1, per_disk / c.stripe_bytes()) * c.stripe_bytes();
  a->disks.assign(c.disks(), std::vector<uint8_t>(a->len));
  std::mt19937_64 rng(seed);
  for (auto &d : a->disks)
    for (auto &b : d) b = uint8_t(rng());
  for (auto &d : a->disks) a->ptrs.push_back(d.data());
  (void)c.encode({a->ptrs.data(), a->ptrs.size()}, a->len);
  return a;
}

// Element-level array codes (Jit::array_codec): encode, and the rebuild of disks 0 and 1 on
// their compiled kernel (asked by a first call, then waited for). Bytes: data cells only.
void bm_array(benchmark::State &state, std::string spec, size_t per_disk, bool rebuild) {
  std::unique_ptr<ArrayDisks> a = encoded_disks(state, spec, per_disk, 3);
  if (!a) return;
  auto &[jit, codec, len, disks, ptrs] = *a;
  const ArrayCodec &c = *codec;
  std::vector<bool> present(c.disks(), true);
  present[0] = present[1] = false;
  const std::vector<uint8_t> d0 = disks[0];
  if (rebuild) {
    (void)c.reconstruct({ptrs.data(), ptrs.size()}, present, len);
    jit->wait_for_tuning();
    std::memset(ptrs[0], 0, len);
    (void)c.reconstruct({ptrs.data(), ptrs.size()}, present, len);
    if (disks[0] != d0) {
      state.SkipWithError("rebuilt disk 0 differs");
      return;
    }
    state.SetLabel(c.decoder_info(present).why);
  } else {
    state.SetLabel(c.encoder_info().why);
  }
  for (auto _ : state) {
    if (rebuild) (void)c.reconstruct({ptrs.data(), ptrs.size()}, present, len);
    else (void)c.encode({ptrs.data(), ptrs.size()}, len);
    benchmark::ClobberMemory();
  }
  size_t data_cells = 0;
  for (unsigned r = 0; r < c.rows(); ++r)
    for (unsigned d = 0; d < c.disks(); ++d) data_cells += !c.is_parity(r, d);
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(len / c.stripe_bytes() * data_cells * c.element_bytes()));
}

// One failed disk (disk 0) of an array code, GB/s of that disk's bytes: `piece` 0 rebuilds it
// whole on its compiled kernel (reconstruct), otherwise ArrayCodec::read serves it in reads of
// `piece` bytes (its chains' read kernel once compiled in the background, strided region XORs
// until then and for partial stripes).
void bm_array_read(benchmark::State &state, std::string spec, size_t per_disk, size_t piece) {
  std::unique_ptr<ArrayDisks> a = encoded_disks(state, spec, per_disk, 5);
  if (!a) return;
  // Named references, not structured bindings: the lambda below captures them (C++17).
  const std::shared_ptr<Jit> &jit = a->jit;
  const std::shared_ptr<const ArrayCodec> &codec = a->codec;
  const size_t len = a->len;
  std::vector<std::vector<uint8_t>> &disks = a->disks;
  std::vector<uint8_t *> &ptrs = a->ptrs;
  const ArrayCodec &c = *codec;
  const std::vector<uint8_t> d0 = disks[0];
  std::vector<bool> present(c.disks(), true);
  present[0] = false;
  std::vector<const uint8_t *> in(ptrs.begin(), ptrs.end());
  in[0] = nullptr;
  std::vector<uint8_t> out(len);
  auto once = [&]() {
    if (piece == 0) return c.reconstruct({ptrs.data(), ptrs.size()}, present, len);
    for (size_t off = 0; off < len; off += piece) {
      Status st = c.read({in.data(), in.size()}, present, len, 0, off, std::min(piece, len - off), out.data() + off);
      if (!st.ok()) return st;
    }
    return Status::Ok();
  };
  if (piece == 0) {
    (void)once();
    jit->wait_for_tuning();
    std::memset(ptrs[0], 0, len);
  }
  if (Status st = once(); !st.ok() || (piece == 0 ? disks[0] : out) != d0) {
    state.SkipWithError(st.ok() ? "the lost disk came back different" : st.to_string().c_str());
    return;
  }
  state.SetLabel(piece == 0 ? c.decoder_info(present).why : "ArrayCodec::read, region XOR per cell");
  for (auto _ : state) {
    (void)once();
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(len));
}

}  // namespace

void register_xor_order_benchmarks() {
  for (const char *spec : {"xcode:p=7", "bpcode:p=7", "rdp:p=7"})
    for (bool rebuild : {false, true})
      benchmark::RegisterBenchmark(("BM_array_codec/" + std::string(rebuild ? "rebuild2/" : "encode/") + spec).c_str(),
                                   bm_array, std::string(spec), size_t(64) << 10, rebuild);
  // A degraded read of one failed disk: compiled rebuild against ArrayCodec::read in 4 KiB and
  // 64 KiB reads (ranged reads run uncompiled).
  for (const char *spec : {"xcode:p=7", "bpcode:p=7", "rdp:p=7"})
    for (size_t piece : {size_t(0), size_t(4096), size_t(65536)})
      benchmark::RegisterBenchmark(("BM_array_read1/" + std::string(piece ? "read" + std::to_string(piece) : "rebuild") +
                                    "/" + spec).c_str(),
                                   bm_array_read, std::string(spec), size_t(1) << 20, piece);
  // Luo et al. 2014's Table 2 (Liberation k = w = 11), Table 4 (RDP k = w = 10) and Fig. 13 (STAR
  // k = 11, w = 10); 256 KiB shards, the packet swept (the paper reports each order's peak).
  for (const char *code : {"liberation:k=11,w=11", "rdp:k=10,p=11", "star:k=11,p=11"})
    for (unsigned packet : {64u, 256u, 1024u, 4096u}) {
      const std::string spec = std::string(code) + ",packet=" + std::to_string(packet);
      for (int order = kEcjit; order < 4; ++order) {
        const std::string name = order < 0 ? "ecjit" : codes::xor_order_name(codes::XorOrder(order));
        benchmark::RegisterBenchmark(("BM_xor_order/" + name + "/" + spec).c_str(), bm_encode, spec, size_t(256) << 10,
                                     order);
      }
    }
}

void register_xor_benchmarks(size_t len) {
  const std::string sz = "/" + std::to_string(len);
  for (const char *spec : kSpecs) {
    for (int impl : {kEcjit, kJerasure})
      benchmark::RegisterBenchmark(
          ("BM_xor_encode/" + std::string(impl == kEcjit ? "ecjit" : "jerasure") + "/" + spec + sz).c_str(), bm_encode,
          std::string(spec), len, impl);
    if (std::string(spec).rfind("cauchy-good:k=10,m=4,", 0) == 0)
      benchmark::RegisterBenchmark(("BM_xor_encode/ecjit-avx2/" + std::string(spec) + sz).c_str(), bm_encode,
                                   std::string(spec), len, kEcjitAvx2);
    const std::pair<const char *, Decoder> decoders[] = {
        {"ecjit", Decoder::kEcjit}, {"ecjit-runner", Decoder::kRunner}, {"jerasure", Decoder::kJerasure}};
    for (const auto &[name, which] : decoders)
      benchmark::RegisterBenchmark(("BM_xor_decode2/" + std::string(name) + "/" + spec + sz).c_str(), bm_decode2,
                                   std::string(spec), len, which);
  }
}

}  // namespace ecjit::bench
