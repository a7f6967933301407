// disk_cache_fuzz: a kernel cache entry built from fuzz input must never crash, hang or serve.
// One valid cache is made at start-up (the encoder of rs-vand:k=4,m=2 on the host); each input
// replaces the encoder's entry by (mode byte 0) the raw input, (1) the valid entry with
// input-chosen bytes flipped, cut or appended, its checksum left as it was, or (2) the valid
// entry with input-chosen header fields (format, key size, object size). A fresh Jit over the
// same directory then builds the codec, and its parity must equal the reference codec's.
#include <dirent.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
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

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (g_dir.empty()) set_up();
  if (size < 2) return 0;
  const unsigned mode = data[0] % 3, which = data[1] % g_files.size();
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
