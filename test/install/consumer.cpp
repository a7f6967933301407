// A program outside the tree: finds an installed ecjit (find_package or pkg-config), encodes
// RS(6,3), loses three shards, reconstructs them, checks every byte, and protects and scrubs
// a file through the public API.
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "ecjit/ecjit.h"
#include "ecjit/file_protection.h"

int main(int argc, char **argv) {
  auto jit = ecjit::Jit::create();
  if (!jit.ok()) {
    std::fprintf(stderr, "Jit::create: %s\n", jit.status().to_string().c_str());
    return 1;
  }
  auto codec = (*jit)->codec("rs-vand:k=6,m=3,gf=8");
  if (!codec.ok()) {
    std::fprintf(stderr, "codec: %s\n", codec.status().to_string().c_str());
    return 1;
  }
  const size_t len = 4096 + 64;
  std::mt19937 rng(5);
  std::vector<std::vector<uint8_t>> shards(9, std::vector<uint8_t>(len));
  for (int i = 0; i < 6; ++i)
    for (auto &b : shards[i]) b = uint8_t(rng());
  std::vector<const uint8_t *> data;
  std::vector<uint8_t *> parity, all;
  for (int i = 0; i < 9; ++i) {
    if (i < 6) data.push_back(shards[i].data());
    else parity.push_back(shards[i].data());
    all.push_back(shards[i].data());
  }
  ecjit::Status s = (*codec)->encode(data, parity, len);
  if (!s.ok()) return std::fprintf(stderr, "encode: %s\n", s.to_string().c_str()), 1;
  const auto want = shards;
  std::vector<bool> present(9, true);
  for (int lost : {0, 4, 7}) {
    present[lost] = false;
    std::memset(shards[lost].data(), 0xee, len);
  }
  s = (*codec)->reconstruct(all, present, len);
  if (!s.ok()) return std::fprintf(stderr, "reconstruct: %s\n", s.to_string().c_str()), 1;
  if (shards != want) return std::fprintf(stderr, "reconstructed shards differ\n"), 1;
  if (argc > 1) {  // a scratch file to protect
    ecjit::files::ProtectOptions o;
    o.spec = "rs-vand:k=4,m=2";
    o.unit = 4096;
    auto fp = ecjit::files::FileProtector::create(**jit, o);
    if (!fp.ok()) return std::fprintf(stderr, "FileProtector: %s\n", fp.status().to_string().c_str()), 1;
    auto p = (*fp)->protect(argv[1]);
    auto c = p.ok() ? (*fp)->scrub(argv[1], false) : ecjit::Result<ecjit::files::FileReport>(p.status());
    if (!c.ok() || c->verdict != ecjit::files::Verdict::kClean)
      return std::fprintf(stderr, "protect / scrub: %s\n", c.ok() ? "not clean" : c.status().to_string().c_str()), 1;
  }
  std::printf("ecjit consumer: RS(6,3) encode + reconstruct of 3 lost shards OK (%s)\n",
              (*codec)->encoder_info().strategy.c_str());
  return 0;
}
