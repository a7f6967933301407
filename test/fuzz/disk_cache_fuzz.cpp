// disk_cache_fuzz: a kernel cache entry built from fuzz input must never crash, hang or serve.
// One valid cache is made at start-up (the encoder of rs-vand:k=4,m=2 on the host); each input
// replaces the encoder's entry by (mode byte 0) the raw input, (1) the valid entry with
// input-chosen bytes flipped, cut or appended, its checksum left as it was, or (2) the valid
// entry with input-chosen header fields (format, key size, object size). A fresh Jit over the
// same directory then builds the codec, and its parity must equal the reference codec's.
// Mode 3 sweeps valid entries instead: an input-chosen field, strategy, tier, length and
// alignment; a fresh Jit over a second cache directory loads the codec's kernels (the first
// input of each combination stores them), and its encode and reconstruct must equal, byte
// for byte, a codec compiled without the disk cache and the reference codec. Streaming
// stores start at 4 KiB there, so aligned whole-line lengths run the streaming encoder.
#include <dirent.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "codes/linear_code.h"
#include "codes/reference_codec.h"
#include "ecjit/ecjit.h"

namespace {

const char kSpec[] = "rs-vand:k=4,m=2";

std::string g_dir;
std::vector<std::string> g_files;           // every entry of the valid cache
std::vector<std::vector<char>> g_contents;  // and its bytes

std::shared_ptr<ecjit::Jit> make_jit() {
  ecjit::JitOptions o;
  o.disk_cache = true;
  o.cache_dir = g_dir;
  o.tune = false;
  o.shape_kernels = false;  // the encoder only: one entry, one compile per miss
  o.aot_kernels = false;    // codec() loads (or compiles) it: the damaged entry serves encode()
  auto j = ecjit::Jit::create(o);
  if (!j.ok()) {
    fprintf(stderr, "Jit::create: %s\n", j.status().to_string().c_str());
    abort();
  }
  return *j;
}

std::vector<char> read_all(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<char>(std::istreambuf_iterator<char>(in), {});
}

void write_all(const std::string &path, const std::vector<char> &bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), std::streamsize(bytes.size()));
}

void set_up() {
  char tmpl[] = "/tmp/ecjit-cache-fuzz-XXXXXX";
  if (!mkdtemp(tmpl)) abort();
  g_dir = tmpl;
  std::atexit([] {
    std::error_code ec;
    std::filesystem::remove_all(g_dir, ec);
  });
  { (void)make_jit()->codec(kSpec); }  // fills the cache
  DIR *d = opendir(g_dir.c_str());
  while (dirent *e = d ? readdir(d) : nullptr)
    if (strstr(e->d_name, ".ecjit-obj")) g_files.push_back(g_dir + "/" + e->d_name);
  if (d) closedir(d);
  if (g_files.empty()) {
    fprintf(stderr, "disk_cache_fuzz: no cache entry was written under %s\n", g_dir.c_str());
    abort();
  }
  for (const auto &f : g_files) g_contents.push_back(read_all(f));
  // The cache is live: a fresh Jit loads the encoder from it (else nothing here is fuzzed).
  auto jit = make_jit();
  if (!jit->codec(kSpec).ok() || jit->stats().kernels_from_disk == 0) {
    fprintf(stderr, "disk_cache_fuzz: a fresh Jit did not load the encoder from %s\n", g_dir.c_str());
    abort();
  }
}

std::string g_sweep_dir;  // mode 3's cache: valid entries only

const char *const kSweepTiers[] = {"host", "host-avx512f", "host-avx2"};
const char *const kSweepStrategies[] = {"auto", "clmul-shift", "split-table", "gfni", "clmul-insn", "clmul-mixed"};

std::shared_ptr<ecjit::Jit> sweep_jit(const char *tier, const char *strategy, bool disk) {
  ecjit::JitOptions o;
  o.target = tier;
  o.strategy = strategy;
  o.tune = false;
  o.aot_kernels = false;  // the codec's own kernels (from disk, or compiled) serve every call
  o.streaming_min_len = 4096;
  o.disk_cache = disk;
  o.cache_dir = g_sweep_dir;
  auto j = ecjit::Jit::create(o);
  return j.ok() ? *j : nullptr;  // a tier this CPU lacks
}

// Mode 3 (see the file comment).
void sweep(const uint8_t *data, size_t size) {
  if (size < 6) return;
  if (g_sweep_dir.empty()) {
    char tmpl[] = "/tmp/ecjit-cache-sweep-XXXXXX";
    if (!mkdtemp(tmpl)) abort();
    g_sweep_dir = tmpl;
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(g_sweep_dir, ec);
    });
  }
  const unsigned gf = 8u << (data[0] % 4), k = 1 + data[1] % 8, m = 1 + data[2] % 4;
  const char *tier = kSweepTiers[data[3] % 3];
  const char *strategy = kSweepStrategies[(data[3] / 3) % 6];
  const size_t sb = gf / 8, offset = (data[4] & 1) ? sb : 0;
  // Up to 64 KiB; aligned whole lines (the streaming encoder's) for a quarter of the draws.
  size_t len = (size_t(data[4] >> 1) << 9 | data[5]) % 65536 / sb * sb;
  if (data[5] % 4 == 0) len = std::max<size_t>(4096, len / 64 * 64);
  if (len == 0) len = sb;
  const uint8_t lose = data[5] ^ data[0];
  data += 6;
  size -= 6;
  const std::string spec = "rs-vand:k=" + std::to_string(k) + ",m=" + std::to_string(m) + ",gf=" + std::to_string(gf);
  static std::map<std::string, std::shared_ptr<const ecjit::Codec>> fresh;  // compiled without the cache
  static std::map<std::string, std::shared_ptr<ecjit::Jit>> fresh_jits;
  const std::string jit_key = std::string(tier) + "/" + strategy;
  auto &fj = fresh_jits[jit_key];
  if (!fj && !(fj = sweep_jit(tier, strategy, false))) return;
  auto &fc = fresh[jit_key + "/" + spec];
  if (!fc) {
    auto c = fj->codec(spec);
    if (!c.ok()) return;  // the strategy cannot serve this field on this tier
    fc = *c;
  }
  auto cached_jit = sweep_jit(tier, strategy, true);
  auto cached = cached_jit ? cached_jit->codec(spec) : ecjit::Result<std::shared_ptr<const ecjit::Codec>>(
                                                            ecjit::Status(ecjit::StatusCode::kJitFailure, "no Jit"));
  if (!cached.ok()) {
    fprintf(stderr, "codec %s on %s (%s) through the disk cache failed: %s\n", spec.c_str(), tier, strategy,
            cached.status().to_string().c_str());
    abort();
  }
  std::vector<std::vector<uint8_t>> shards(k + m, std::vector<uint8_t>(len + offset));
  for (unsigned s = 0; s < k; ++s)
    for (size_t b = 0; b < len; ++b) shards[s][offset + b] = uint8_t(b * 131 + s * 7 + (size ? data[b % size] : 0));
  std::vector<uint8_t> got_fresh, got_cached;
  // Encode, then reconstruct after input-chosen losses, on 64-byte aligned copies of the
  // shards (at `offset`); the parity and every shard after the rebuild appended to `out`.
  auto run = [&](const ecjit::Codec &c, std::vector<uint8_t> *out) {
    std::vector<uint8_t *> ptrs;
    std::vector<std::unique_ptr<uint8_t, void (*)(void *)>> bufs;
    for (unsigned s = 0; s < k + m; ++s) {
      void *p = nullptr;
      if (posix_memalign(&p, 64, len + offset + 64) != 0) abort();
      memcpy(p, shards[s].data(), len + offset);
      bufs.emplace_back(static_cast<uint8_t *>(p), free);
    }
    const unsigned kk = c.k(), mm = c.m();
    std::vector<const uint8_t *> in;
    std::vector<uint8_t *> par, all;
    for (unsigned s = 0; s < kk + mm; ++s) all.push_back(bufs[s].get() + offset);
    for (unsigned s = 0; s < kk; ++s) in.push_back(all[s]);
    for (unsigned s = 0; s < mm; ++s) par.push_back(all[kk + s]);
    if (!c.encode(in, par, len).ok()) abort();
    for (unsigned s = 0; s < mm; ++s) out->insert(out->end(), par[s], par[s] + len);
    std::vector<bool> present(kk + mm, true);
    for (unsigned s = 0, lost = 0; s < kk + mm && lost < mm; ++s)
      if ((lose >> (s % 8)) & 1) present[s] = false, ++lost, memset(all[s], 0xee, len);
    if (!c.reconstruct(all, present, len).ok()) abort();
    for (unsigned s = 0; s < kk + mm; ++s) out->insert(out->end(), all[s], all[s] + len);
  };
  run(*fc, &got_fresh);
  run(**cached, &got_cached);
  if (got_fresh != got_cached) {
    fprintf(stderr, "MISMATCH: %s on %s (%s), len %zu, offset %zu: the kernels from the disk cache gave other bytes "
            "than freshly compiled ones (encoder %s)\n", spec.c_str(), tier, strategy, len, offset,
            (*cached)->encoder_info().symbol.c_str());
    abort();
  }
  // And both the reference codec's parity.
  auto code = ecjit::codes::build_code(spec);
  std::vector<std::vector<uint8_t>> want(m, std::vector<uint8_t>(len));
  std::vector<const uint8_t *> in;
  std::vector<uint8_t *> ref;
  for (unsigned s = 0; s < k; ++s) in.push_back(shards[s].data() + offset);
  for (auto &v : want) ref.push_back(v.data());
  if (!code.ok() || !ecjit::codes::ref_encode(*code, in.data(), ref.data(), len).ok()) abort();
  for (unsigned s = 0; s < m; ++s)
    if (memcmp(want[s].data(), got_cached.data() + s * len, len) != 0) {
      fprintf(stderr, "MISMATCH: %s on %s (%s), len %zu: parity %u differs from the reference codec\n", spec.c_str(),
              tier, strategy, len, s);
      abort();
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (g_dir.empty()) set_up();
  if (size < 2) return 0;
  if (data[0] % 4 == 3) {
    sweep(data + 1, size - 1);
    return 0;
  }
  const unsigned mode = data[0] % 4, which = data[1] % g_files.size();
  data += 2;
  size -= 2;
  std::vector<char> entry = g_contents[which];
  if (mode == 0) {
    entry.assign(data, data + size);
  } else if (mode == 1) {
    for (size_t i = 0; i + 4 <= size; i += 4) {
      const size_t at = (size_t(data[i]) << 16 | size_t(data[i + 1]) << 8 | data[i + 2]) % (entry.size() + 1);
      const uint8_t op = data[i + 3];
      if (op < 16) entry.resize(at);                       // cut
      else if (op < 32) entry.insert(entry.begin() + long(at), char(op));  // insert
      else if (at < entry.size()) entry[at] ^= char(op);  // flip
    }
  } else {
    // Header: magic[8], format u32 @8, key_size u32 @12, object_size u64 @16, hash u64 @24.
    for (size_t i = 0; i + 2 <= size && entry.size() >= 32; i += 2) {
      const size_t field = 8 + (data[i] % 12) * 2;  // a 16-bit piece of format .. object_size
      entry[field] = char(data[i + 1]);
    }
  }
  write_all(g_files[which], entry);
  {
    auto jit = make_jit();
    auto codec = jit->codec(kSpec);
    if (!codec.ok()) {
      fprintf(stderr, "codec() failed on a damaged cache entry: %s\n", codec.status().to_string().c_str());
      abort();
    }
    auto code = ecjit::codes::build_code(kSpec);
    constexpr size_t kLen = 1000;
    std::vector<std::vector<uint8_t>> shards(6, std::vector<uint8_t>(kLen)), want(2, std::vector<uint8_t>(kLen));
    for (size_t s = 0; s < 4; ++s)
      for (size_t b = 0; b < kLen; ++b) shards[s][b] = uint8_t(b * 31 + s * 7 + (size ? data[b % size] : 0));
    std::vector<const uint8_t *> in = {shards[0].data(), shards[1].data(), shards[2].data(), shards[3].data()};
    std::vector<uint8_t *> out = {shards[4].data(), shards[5].data()}, ref = {want[0].data(), want[1].data()};
    if (!(*codec)->encode(in, out, kLen).ok() || !ecjit::codes::ref_encode(*code, in.data(), ref.data(), kLen).ok())
      abort();
    if (shards[4] != want[0] || shards[5] != want[1]) {
      fprintf(stderr, "MISMATCH: a damaged cache entry (mode %u) served wrong parity\n", mode);
      abort();
    }
  }
  write_all(g_files[which], g_contents[which]);  // the next input starts from the valid cache
  return 0;
}
