// lrc_chunks: ecjit's side of the Ceph lrc differential test - encodes, and rebuilds after every one and two losses, chunk files named as ceph-erasure-code-tool names them.
//
//   lrc_chunks SPEC DIR encode OUT   reads the data chunks DIR/obj.<chunk> (Ceph's chunk index of
//                                     each data shard), encodes, writes every chunk to OUT/obj.<chunk>
//   lrc_chunks SPEC DIR rebuild      for every loss of one and of two chunks the code can decode:
//                                     minimum_to_decode, then reconstruct_some from those chunks
//                                     alone, compared with DIR's chunks; prints a count, and
//                                     "refused A,B" (chunk indices) for each pattern it cannot decode
// Exit 0 on success, 1 on a mismatch or failed call (a line saying which), 2 on bad arguments.
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "codes/ceph_lrc.h"
#include "codes/linear_code.h"
#include "codes/recoverability.h"
#include "ecjit/ecjit.h"

namespace {

bool read_file(const std::string &path, std::vector<uint8_t> *out) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return false;
  out->assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  return true;
}

bool write_file(const std::string &path, const std::vector<uint8_t> &data) {
  std::ofstream f(path, std::ios::binary);
  f.write(reinterpret_cast<const char *>(data.data()), std::streamsize(data.size()));
  return bool(f);
}

}  // namespace

int main(int argc, char **argv) {
  if (argc < 4 || (std::string(argv[3]) == "encode" && argc != 5)) {
    std::fprintf(stderr, "usage: lrc_chunks SPEC DIR encode OUT | lrc_chunks SPEC DIR rebuild\n");
    return 2;
  }
  const std::string dir = argv[2], mode = argv[3];
  auto code = ecjit::codes::build_code(argv[1]);
  auto jit = ecjit::Jit::create();
  if (!code.ok() || !jit.ok()) {
    std::fprintf(stderr, "lrc_chunks: %s\n", (code.ok() ? jit.status() : code.status()).to_string().c_str());
    return 2;
  }
  auto codec = (*jit)->codec(code->spec);
  if (!codec.ok()) return std::fprintf(stderr, "lrc_chunks: %s\n", codec.status().to_string().c_str()), 1;
  const unsigned n = code->n(), k = code->k;
  auto chunk = [&](unsigned s) { return "/obj." + std::to_string(ecjit::codes::ceph_lrc_chunk(code->spec, s)); };
  std::vector<std::vector<uint8_t>> shards(n);
  for (unsigned s = 0; s < (mode == "encode" ? k : n); ++s)
    if (!read_file(dir + chunk(s), &shards[s]) || shards[s].size() != shards[0].size())
      return std::fprintf(stderr, "lrc_chunks: cannot read %s%s (or its size differs)\n", dir.c_str(), chunk(s).c_str()), 1;
  const size_t len = shards[0].size();
  if (mode == "encode") {
    std::vector<const uint8_t *> data;
    std::vector<uint8_t *> parity;
    for (unsigned s = 0; s < k; ++s) data.push_back(shards[s].data());
    for (unsigned s = k; s < n; ++s) parity.push_back((shards[s] = std::vector<uint8_t>(len)).data());
    if (ecjit::Status st = (*codec)->encode(data, parity, len); !st.ok())
      return std::fprintf(stderr, "lrc_chunks: encode: %s\n", st.to_string().c_str()), 1;
    for (unsigned s = 0; s < n; ++s)
      if (!write_file(argv[4] + chunk(s), shards[s]))
        return std::fprintf(stderr, "lrc_chunks: cannot write %s%s\n", argv[4], chunk(s).c_str()), 1;
    std::printf("encoded %u chunks of %zu bytes\n", n, len);
    return 0;
  }
  if (mode != "rebuild") return std::fprintf(stderr, "lrc_chunks: unknown mode '%s'\n", mode.c_str()), 2;
  unsigned patterns = 0, refused = 0, local = 0;
  for (unsigned a = 0; a < n; ++a)
    for (unsigned b = a; b < n; ++b) {
      std::vector<bool> lost(n, false);
      lost[a] = lost[b] = true;
      ecjit::ShardSet want, avail;
      for (unsigned s = 0; s < n; ++s) (lost[s] ? want : avail).insert(s);
      auto need = (*codec)->minimum_to_decode(want, avail);
      const bool decodable = ecjit::codes::decodes_loss(code->field, code->parity, k, lost);
      if (!decodable) {
        ++refused;
        std::printf("refused %u,%u\n", ecjit::codes::ceph_lrc_chunk(code->spec, a), ecjit::codes::ceph_lrc_chunk(code->spec, b));
        if (need.ok()) return std::printf("FAIL lost {%u,%u}: minimum_to_decode answers a pattern the code cannot decode\n", a, b), 1;
        continue;
      }
      if (!need.ok()) return std::printf("FAIL lost {%u,%u}: %s\n", a, b, need.status().to_string().c_str()), 1;
      std::vector<std::vector<uint8_t>> work(n);
      std::vector<uint8_t *> ptrs(n, nullptr);
      std::vector<bool> present(n, false);
      for (unsigned s : need->to_vector()) present[s] = true, work[s] = shards[s], ptrs[s] = work[s].data();
      for (unsigned s : want.to_vector()) work[s].assign(len, 0xEE), ptrs[s] = work[s].data();
      if (ecjit::Status st = (*codec)->reconstruct_some(want, ptrs, present, len); !st.ok())
        return std::printf("FAIL lost {%u,%u}: %s\n", a, b, st.to_string().c_str()), 1;
      for (unsigned s : want.to_vector())
        if (work[s] != shards[s]) return std::printf("FAIL lost {%u,%u}: chunk %s rebuilt wrong\n", a, b, chunk(s).c_str() + 5), 1;
      ++patterns;
      local += need->size() < k;
    }
  std::printf("rebuilt %u patterns of one and two lost chunks from Ceph's chunks (%u read fewer than k = %u shards); "
              "%u patterns refused as undecodable\n", patterns, local, k, refused);
  return 0;
}
