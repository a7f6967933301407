// libFuzzer target: a drawn spec (symbol, XOR bit-matrix or rs-fft code), host tier, length and data; the JIT kernels must equal the reference.
//
// Run: build with -DECJIT_BUILD_FUZZ=ON (clang), then
//   build-asan/test/fuzz/codec_fuzz -max_total_time=60 -rss_limit_mb=8192
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "codes/bitmatrix_code.h"
#include "codes/linear_code.h"
#include "codes/reference_codec.h"
#include "codes/rs_fft.h"
#include "ecjit/ecjit.h"

namespace {

// A symbol code (code), an XOR bit-matrix code (bits) or an rs-fft code (fft_k, fft_m), with
// its reference encoder.
struct Compiled {
  std::unique_ptr<ecjit::codes::LinearCode> code;
  std::unique_ptr<ecjit::codes::BitMatrixCode> bits;
  unsigned fft_k = 0, fft_m = 0;
  ecjit::codes::fft::Gf fft_gf = ecjit::codes::fft::Gf::k16;
  std::shared_ptr<const ecjit::Codec> codec;
  ecjit::Status ref_encode(const uint8_t *const *in, uint8_t *const *out, size_t len) const {
    if (fft_k) return ecjit::codes::fft::encode_bytes(fft_k, fft_m, len, in, out, fft_gf);
    return code ? ecjit::codes::ref_encode(*code, in, out, len) : ecjit::codes::ref_bitmatrix_encode(*bits, in, out, len);
  }
  size_t unit() const {
    if (fft_k) return fft_gf == ecjit::codes::fft::Gf::k8 ? 1 : 2;
    return code ? code->field.bytes() : bits->block_bytes();
  }
};

const char *const kTiers[] = {"host", "host-avx2", "host-sse2"};
// rs-fft last: neither a bit-matrix nor an array code, k and m its own (below), GF(2^16) or
// GF(2^8).
const char *const kFamilies[] = {"rs-vand",     "rs-cauchy",   "jerasure-vand", "matrix",
                                  "cauchy-good", "cauchy-orig", "evenodd",       "rdp",
                                  "star",        "rs-fft"};
constexpr unsigned kNumFamilies = sizeof kFamilies / sizeof kFamilies[0];

// One Jit per tier and one codec per (spec, tier), so the fuzzer spends its time running
// kernels rather than compiling them: k <= 12, m <= 6 bounds the number of kernels.
Compiled *get(const std::string &spec, unsigned tier) {
  static std::map<std::string, std::unique_ptr<Compiled>> cache;
  static std::shared_ptr<ecjit::Jit> jits[3];
  const std::string key = spec + "@" + kTiers[tier];
  auto it = cache.find(key);
  if (it != cache.end()) return it->second.get();
  if (!jits[tier]) {
    ecjit::JitOptions o;
    o.target = kTiers[tier];
    // Tuning in the codec() call, not on a background thread: one ASan report of a stack
    // redzone in the CI fuzz run (2026-11-23, not reproduced in 2 more minutes, report
    // truncated) may involve the tuner thread; tiered_tuning_test covers that thread.
    o.tune_in_background = false;
    auto j = ecjit::Jit::create(o);
    if (!j.ok()) return nullptr;  // a tier this CPU lacks
    jits[tier] = *j;
  }
  auto parsed = ecjit::CodeSpec::parse(spec);
  if (!parsed.ok()) return nullptr;
  auto c = std::make_unique<Compiled>();
  if (parsed->family == ecjit::CodeFamily::kRsFft) {
    c->fft_k = parsed->k;
    c->fft_m = parsed->m;
    c->fft_gf = ecjit::codes::fft::gf_of_bits(parsed->gf);
  } else if (parsed->bitmatrix()) {
    auto bits = ecjit::codes::build_bitmatrix_code(*parsed);
    if (!bits.ok()) return nullptr;
    c->bits = std::make_unique<ecjit::codes::BitMatrixCode>(std::move(*bits));
  } else {
    auto code = ecjit::codes::build_code(*parsed);
    if (!code.ok()) return nullptr;
    c->code = std::make_unique<ecjit::codes::LinearCode>(std::move(*code));
  }
  auto codec = jits[tier]->codec(*parsed);
  if (!codec.ok()) {
    fprintf(stderr, "codec %s failed: %s\n", key.c_str(), codec.status().to_string().c_str());
    abort();
  }
  c->codec = *codec;
  Compiled *p = c.get();
  cache.emplace(key, std::move(c));
  return p;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 8) return 0;
  const unsigned gf = 8u << (data[0] % 4);
  const char *family = kFamilies[data[4] % kNumFamilies];
  const bool fft_code = data[4] % kNumFamilies == kNumFamilies - 1;
  const bool xor_code = !fft_code && data[4] % kNumFamilies >= 4;  // bit-matrix: w from gf's byte, packet from len's
  const bool array_code = !fft_code && data[4] % kNumFamilies >= 6;  // p instead of w, m fixed by the family
  // rs-fft: up to 40:16, several chunks at both rates (m = 4, 8, 16 take the inverted encoder).
  const unsigned k = 1 + data[1] % (fft_code ? 40 : 12), tier = data[3] % 3;
  unsigned m = 1 + data[2] % (fft_code ? 16 : 6);  // array codes: the family's (set once the codec exists)
  const size_t sb = gf / 8;
  const uint8_t lose_bits = data[7];  // which shards the reconstruct below loses
  size_t len = ((size_t(data[5]) << 8 | data[6]) % 3000) / sb * sb;
  if (len == 0) len = sb;
  const unsigned xor_w = 4 + data[0] % 5, xor_packet = 8 * (1 + data[5] % 12);  // header bytes
  const unsigned array_p = 3 + 2 * (data[0] % 6);  // 3..13: 9 and k > p exercise the refusals
  data += 8;
  size -= 8;
  std::string spec = std::string(family) + ":k=" + std::to_string(k);
  if (!array_code) spec += ",m=" + std::to_string(m);
  if (array_code)
    spec += ",p=" + std::to_string(array_p) + ",packet=" + std::to_string(xor_packet);
  else if (xor_code)  // w in 4..8 (k + m <= 18 fits w >= 5; w = 4 fails the spec when k + m > 16)
    spec += ",w=" + std::to_string(xor_w) + ",packet=" + std::to_string(xor_packet);
  else if (!fft_code)
    spec += ",gf=" + std::to_string(gf == 64 && std::string(family) == "jerasure-vand" ? 32 : gf);
  else if (gf == 8 || gf == 32)  // rs-fft over Leopard-RS's GF(2^8) for half the draws
    spec += ",gf=8";
  if (std::string(family) == "matrix") {
    spec += ",a=";
    for (unsigned i = 0; i < k * m; ++i) {
      const uint8_t b = size ? data[i % size] : uint8_t(i);
      char buf[8];
      snprintf(buf, sizeof buf, "%x", b);
      spec += (i ? (i % k ? "." : "/") : "") + std::string(buf);
    }
  }
  Compiled *c = get(spec, tier);
  if (!c) return 0;
  m = c->codec->m();
  const size_t csb = c->unit();
  len = len / csb * csb;
  if (!len) len = csb;
  std::vector<std::vector<uint8_t>> shards(k + m, std::vector<uint8_t>(len));
  for (unsigned s = 0; s < k; ++s)
    for (size_t b = 0; b < len; ++b) shards[s][b] = size ? data[(s * 131 + b) % size] ^ uint8_t(b * 7) : uint8_t(b);
  std::vector<std::vector<uint8_t>> want(m, std::vector<uint8_t>(len));
  std::vector<const uint8_t *> in;
  std::vector<uint8_t *> out, ref;
  for (unsigned s = 0; s < k; ++s) in.push_back(shards[s].data());
  for (unsigned s = 0; s < m; ++s) out.push_back(shards[k + s].data()), ref.push_back(want[s].data());
  if (!c->ref_encode(in.data(), ref.data(), len).ok()) abort();
  if (!c->codec->encode(in, out, len).ok()) abort();
  for (unsigned s = 0; s < m; ++s)
    if (memcmp(out[s], ref[s], len) != 0) {
      fprintf(stderr, "MISMATCH %s tier %s len %zu parity %u kernel %s\n", spec.c_str(), kTiers[tier],
              len, s, c->codec->encoder_info().symbol.c_str());
      abort();
    }
  // A degraded read: up to m shards lost (picked by the input), rebuilt on the codec's shape
  // kernel (the path of every first call), compared with the originals.
  std::vector<bool> present(k + m, true);
  unsigned lost = 0;
  if (fft_code && (lose_bits & 0x80)) {
    // A run of shards from the start of a chunk (of next_pow2(m) shards): the shapes the
    // inverted encoder takes (runtime/fft_engine.h) and their neighbours.
    unsigned chunk = 1;
    while (chunk < m) chunk *= 2;
    const unsigned first = (lose_bits & 0x3f) * chunk % (k + m), run = 1 + (lose_bits >> 3) % chunk;
    for (unsigned s = first; s < std::min(k + m, first + run) && lost < m; ++s) present[s] = false, ++lost;
  } else {
    for (unsigned s = 0; s < k + m && lost < m; ++s)
      if ((lose_bits >> (s % 8)) & 1 && (s / 8 == 0 || (lose_bits & 1))) present[s] = false, ++lost;
  }
  if (lost == 0) return 0;
  std::vector<std::vector<uint8_t>> work = shards;
  std::vector<uint8_t *> ptrs;
  for (unsigned s = 0; s < k + m; ++s) {
    if (!present[s]) std::fill(work[s].begin(), work[s].end(), 0xEE);
    ptrs.push_back(work[s].data());
  }
  const ecjit::Status st = c->codec->reconstruct(ptrs, present, len);
  if (!st.ok()) {
    // Not every matrix is MDS: a user matrix may leave an erasure set singular.
    if (st.code() == ecjit::StatusCode::kSingular) return 0;
    fprintf(stderr, "reconstruct %s: %s\n", spec.c_str(), st.to_string().c_str());
    abort();
  }
  for (unsigned s = 0; s < k + m; ++s)
    if (work[s] != shards[s]) {
      fprintf(stderr, "MISMATCH %s tier %s len %zu: reconstruct, shard %u (decoder %s)\n",
              spec.c_str(), kTiers[tier], len, s, c->codec->decoder_info(present).symbol.c_str());
      abort();
    }
  return 0;
}
