// fft_mul_tables: a run-time multiplier's tables (fft/mul_tables.h's layout) as the XOR of its nibbles' tables.
#include <array>
#include <cstring>
#include <type_traits>
#include <vector>

#include "codes/coeff_layout.h"
#include "codes/rs_fft.h"
#include "fft/mul_tables.h"

namespace ecjit::sched {
namespace {

namespace fft = codes::fft;

// The tables of the element c by their definition: the images of the field's bits under
// x -> c x give every nibble-table entry by XOR and the GFNI blocks by a bit transpose.
void tables_by_definition(const fft::LchField &f, uint16_t c, uint8_t *out) {
  uint64_t images[16] = {};
  for (unsigned b = 0; b < f.bits; ++b) images[b] = f.mul(uint16_t(1u << b), c);
  std::memset(out, 0, kFftMulTableBytes);
  const unsigned nibbles = f.bits / 4;
  for (unsigned q = 0; q < nibbles; ++q)
    for (unsigned v = 0; v < 16; ++v) {
      uint16_t p = 0;
      for (unsigned bit = 0; bit < 4; ++bit)
        if (v >> bit & 1) p ^= uint16_t(images[4 * q + bit]);
      out[16 * q + v] = uint8_t(p);
      if (f.bits == 16) out[64 + 16 * q + v] = uint8_t(p >> 8);
    }
  const unsigned planes = f.bits / 8;  // GF(2^8): the one block A_00
  for (unsigned i = 0; i < planes; ++i)
    for (unsigned j = 0; j < planes; ++j) {
      const uint64_t a = codes::gfni_block_of_map(images, i, j);
      for (unsigned t = 0; t < 8; ++t) out[kFftGfniOffset + 8 * (planes * i + j) + t] = uint8_t(a >> (8 * t));
    }
}

// x -> c x is bilinear over GF(2), so every byte of c's tables is GF(2)-linear in c: the
// tables of c are the XOR of those of its nibbles c & 0xf, c & 0xf0, ... Per field, the tables
// of the 16 values of each nibble (GF(2^16): 4 x 16 x 160 bytes), made once.
struct NibbleTables {
  unsigned nibbles = 0;
  std::vector<uint8_t> bytes;  // [nibble][value][kFftMulTableBytes]
  const uint8_t *of(unsigned q, unsigned v) const { return bytes.data() + (16 * q + v) * kFftMulTableBytes; }
};

NibbleTables make_nibble_tables(fft::Gf gf) {
  const fft::LchField &f = fft::lch_field(gf);
  NibbleTables t;
  t.nibbles = f.bits / 4;
  t.bytes.resize(size_t(16) * t.nibbles * kFftMulTableBytes);
  for (unsigned q = 0; q < t.nibbles; ++q)
    for (unsigned v = 0; v < 16; ++v)
      tables_by_definition(f, uint16_t(v << (4 * q)), t.bytes.data() + (16 * q + v) * kFftMulTableBytes);
  return t;
}

const NibbleTables &nibble_tables(fft::Gf gf) {
  // Never destroyed: a Jit's background thread may still compile an rs-fft kernel, which reads
  // them, while exit handlers run.
  static const NibbleTables *const k16 = new NibbleTables(make_nibble_tables(fft::Gf::k16));
  static const NibbleTables *const k8 = new NibbleTables(make_nibble_tables(fft::Gf::k8));
  return gf == fft::Gf::k8 ? *k8 : *k16;
}

}  // namespace

void fft_mul_tables(uint16_t log, uint8_t *out, fft::Gf gf, bool matrices_only) {
  // Four (GF(2^8): two) rows XORed: Emerald Rapids 9 ns a table of matrices, 28 ns a whole one,
  // where a field multiply per bit and the bit transposes took 44 and 98 ns (an erasure set's
  // first call makes one per point; a matrix decode's schedule one per coefficient).
  const fft::LchField &f = fft::lch_field(gf);
  const uint16_t c = f.mul_log(1, log);  // exp(log); log == modulus: 1
  const NibbleTables &t = nibble_tables(gf);
  // In 64-bit words, the bounds constant (the compiler keeps them in vector registers).
  auto xor_rows = [&](auto from_c, auto words_c) {
    constexpr size_t from = decltype(from_c)::value, words = decltype(words_c)::value;
    uint64_t acc[words] = {};
    for (unsigned q = 0; q < t.nibbles; ++q) {
      uint64_t row[words];
      std::memcpy(row, t.of(q, (c >> (4 * q)) & 15u) + from, sizeof row);
      for (size_t w = 0; w < words; ++w) acc[w] ^= row[w];
    }
    std::memcpy(out + from, acc, sizeof acc);
  };
  if (matrices_only)
    xor_rows(std::integral_constant<size_t, kFftGfniOffset>(),
             std::integral_constant<size_t, (kFftMulTableBytes - kFftGfniOffset) / 8>());
  else
    xor_rows(std::integral_constant<size_t, 0>(), std::integral_constant<size_t, kFftMulTableBytes / 8>());
}

}  // namespace ecjit::sched
