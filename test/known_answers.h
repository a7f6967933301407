// known_answers: the known-answer files of test/data that other codecs wrote (bench/rs_simd,
// bench/leopard8): their format, its generator of originals, and a reader.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace ecjit::test {

using KatBytes = std::vector<uint8_t>;

inline uint64_t fnv1a64(const uint8_t *p, size_t n) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

// The originals of a case (bench/rs_simd's and bench/leopard8's `originals`): one splitmix64
// stream seeded with seed ^ (k << 40) ^ (m << 20) ^ bytes, 8 bytes per output little-endian,
// shard i its bytes [i * bytes, (i + 1) * bytes).
inline std::vector<KatBytes> kat_originals(uint64_t seed, unsigned k, unsigned m, size_t bytes) {
  uint64_t state = seed ^ (uint64_t(k) << 40) ^ (uint64_t(m) << 20) ^ bytes;
  std::vector<KatBytes> orig(k, KatBytes(bytes));
  uint64_t word = 0;
  for (size_t t = 0; t < size_t(k) * bytes; ++t) {
    if (t % 8 == 0) {
      uint64_t z = (state += 0x9E3779B97F4A7C15ull);
      z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
      z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
      word = z ^ (z >> 31);
    }
    orig[t / bytes][t % bytes] = uint8_t(word >> (8 * (t % 8)));
  }
  return orig;
}

// One case of a file: the originals, and per recovery shard the other codec's FNV-1a hash and,
// where the file prints it, the shard itself (else empty).
struct KatCase {
  unsigned k = 0, m = 0;
  size_t bytes = 0;
  std::vector<KatBytes> orig;
  std::vector<uint64_t> rec_hash;
  std::vector<KatBytes> rec;
  std::string name() const { return std::to_string(k) + ":" + std::to_string(m) + " x " + std::to_string(bytes); }
  bool full() const { return !rec.empty() && !rec[0].empty(); }
};

// Every case of the file at `path`, its originals checked against the file's hash; a
// malformed or unreadable file is a test failure (and fewer cases).
inline std::vector<KatCase> read_known_answers(const char *path) {
  std::vector<KatCase> cases;
  std::ifstream f(path);
  EXPECT_TRUE(f.good()) << "cannot read " << path;
  std::string line, word;
  uint64_t seed = 0;
  while (std::getline(f, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream in(line);
    in >> word;
    KatCase *c = cases.empty() ? nullptr : &cases.back();
    if (word == "seed") {
      std::string h;
      in >> h;
      seed = std::stoull(h, nullptr, 16);
    } else if (word == "case") {
      KatCase n;
      in >> n.k >> n.m >> n.bytes;
      n.orig = kat_originals(seed, n.k, n.m, n.bytes);
      n.rec_hash.assign(n.m, 0);
      n.rec.assign(n.m, KatBytes());
      cases.push_back(std::move(n));
    } else if (word == "orig" && c) {
      std::string h;
      in >> h;
      KatBytes all;
      for (auto &o : c->orig) all.insert(all.end(), o.begin(), o.end());
      EXPECT_EQ(std::stoull(h, nullptr, 16), fnv1a64(all.data(), all.size()))
          << path << ": originals differ from the generator's, case " << c->name();
    } else if (word == "rec" && c) {
      unsigned j = ~0u;
      std::string h, hex;
      in >> j >> h >> hex;
      if (j >= c->m) {
        ADD_FAILURE() << path << ": recovery index " << j << " of case " << c->name();
        return cases;
      }
      c->rec_hash[j] = std::stoull(h, nullptr, 16);
      if (!hex.empty()) {
        EXPECT_EQ(hex.size(), 2 * c->bytes) << path << ": recovery " << j << " of case " << c->name();
        for (size_t t = 0; 2 * t + 1 < hex.size(); ++t)
          c->rec[j].push_back(uint8_t(std::stoul(hex.substr(2 * t, 2), nullptr, 16)));
      }
    } else if (word != "end") {
      ADD_FAILURE() << path << ": bad line: " << line;
      return cases;
    }
  }
  return cases;
}

}  // namespace ecjit::test
