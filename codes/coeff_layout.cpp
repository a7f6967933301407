// Prepared coefficients: nibble tables, GFNI block matrices and clmul constants from c * X^i.
#include "codes/coeff_layout.h"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <memory>
#include <mutex>
#include <vector>

namespace ecjit::codes {
namespace {

// base[i] = c * X^i for i < l: each from the previous by one multiply by X (shift, and the
// reduction polynomial where X^l falls out).
void powers_of_x(const Field &f, uint64_t c, uint64_t *base) {
  const unsigned l = f.bits();
  for (unsigned i = 0; i < l; ++i) {
    base[i] = c;
    const bool carry = (c >> (l - 1)) & 1;
    c = ((c << 1) & f.mask()) ^ (carry ? f.poly() : 0);
  }
}

}  // namespace

uint64_t gfni_block_of_map(const uint64_t *images, unsigned i, unsigned j) {
  // Bit t of output byte 7 - t's bit b is bit t of byte i of the image of input bit 8j + b:
  // gather those bytes as the rows of an 8 x 8 bit matrix (row b = byte b), transpose it
  // (three delta swaps; row t = output bit t) and reverse the rows. Branch-free: the first
  // call of every erasure set of the wide fields prepares its coefficients through here.
  uint64_t x = 0;
  for (unsigned b = 0; b < 8; ++b) x |= ((images[8 * j + b] >> (8 * i)) & 0xff) << (8 * b);
  uint64_t t = (x ^ (x >> 7)) & 0x00aa00aa00aa00aaULL;
  x ^= t ^ (t << 7);
  t = (x ^ (x >> 14)) & 0x0000cccc0000ccccULL;
  x ^= t ^ (t << 14);
  t = (x ^ (x >> 28)) & 0x00000000f0f0f0f0ULL;
  x ^= t ^ (t << 28);
  return __builtin_bswap64(x);
}

size_t coeff_bytes(CoeffLayout layout, const Field &field) {
  const unsigned planes = field.bytes();
  switch (layout) {
    case CoeffLayout::kNibbleTables:
      return size_t(32) * planes * planes;
    case CoeffLayout::kGfniMatrices:
      return size_t(8) * planes * std::max(planes, 2u);
    case CoeffLayout::kClmulConstant:
      return 8;
  }
  return 0;
}

void nibble_tables(const Field &field, uint64_t c, uint8_t *out) {
  assert(field.bits() == 8 || field.bits() == 16);
  uint64_t base[16];
  powers_of_x(field, c, base);
  const unsigned bytes = field.bytes();
  uint64_t t[16];
  t[0] = 0;
  for (unsigned n = 0; n < 2 * bytes; ++n) {  // nibble n of the input
    for (unsigned v = 1; v < 16; ++v) t[v] = t[v & (v - 1)] ^ base[4 * n + __builtin_ctz(v)];
    for (unsigned v = 0; v < 16; ++v) {
      const uint64_t p = t[v];
      if (bytes == 1) {
        out[16 * n + v] = uint8_t(p);
      } else {
        out[16 * (2 * n) + v] = uint8_t(p);
        out[16 * (2 * n + 1) + v] = uint8_t(p >> 8);
      }
    }
  }
}

uint64_t gfni_block_matrix(const Field &field, uint64_t c, unsigned i, unsigned j) {
  uint64_t base[64];
  powers_of_x(field, c, base);
  return gfni_block_of_map(base, i, j);
}

void prepare_coeff(CoeffLayout layout, const Field &field, uint64_t c, uint8_t *out) {
  switch (layout) {
    case CoeffLayout::kNibbleTables: {
      uint8_t t[8 * 16];
      nibble_tables(field, c, t);
      for (unsigned i = 0; i < 2 * field.bytes() * field.bytes(); ++i)
        std::memcpy(out + 16 * nibble_table_slot(field, i), t + 16 * i, 16);
      return;
    }
    case CoeffLayout::kGfniMatrices: {
      uint64_t base[64];
      powers_of_x(field, c, base);
      const unsigned planes = field.bytes(), pattern = std::max(planes, 2u);
      for (unsigned t = 0; t < planes; ++t)
        for (unsigned j = 0; j < pattern; ++j) {
          const unsigned i = j % planes;
          const uint64_t q = gfni_block_of_map(base, i, (i + t) % planes);
          for (unsigned b = 0; b < 8; ++b) out[8 * (t * pattern + j) + b] = uint8_t(q >> (8 * b));
        }
      return;
    }
    case CoeffLayout::kClmulConstant:
      for (unsigned b = 0; b < 8; ++b) out[b] = uint8_t(c >> (8 * b));
      return;
  }
}

namespace {

// GF(2^8): all 256 coefficients prepared, per layout and polynomial, made once per process
// (4 or 8 KiB each, never freed: callers keep no pointer past prepare_matrix, but a thread
// may still prepare while the process exits).
const uint8_t *gf8_prepared(CoeffLayout layout, const Field &field) {
  struct Table {
    CoeffLayout layout;
    uint64_t poly;
    std::unique_ptr<uint8_t[]> bytes;
  };
  static std::mutex mutex;
  static auto *tables = new std::vector<Table>();
  std::lock_guard<std::mutex> lock(mutex);
  for (const Table &t : *tables)
    if (t.layout == layout && t.poly == field.poly()) return t.bytes.get();
  const size_t cb = coeff_bytes(layout, field);
  auto bytes = std::make_unique<uint8_t[]>(256 * cb);
  for (uint64_t c = 0; c < 256; ++c) prepare_coeff(layout, field, c, bytes.get() + c * cb);
  tables->push_back(Table{layout, field.poly(), std::move(bytes)});
  return tables->back().bytes.get();
}

}  // namespace

void prepare_matrix(CoeffLayout layout, const Field &field, const Matrix &M,
                    std::vector<uint8_t> *out) {
  const size_t cb = coeff_bytes(layout, field);
  out->resize(size_t(M.rows) * M.cols * cb);
  // A decode plan's first call prepares its matrix: in GF(2^8) a copy per coefficient.
  if (field.bits() == 8 && layout != CoeffLayout::kClmulConstant) {
    const uint8_t *table = gf8_prepared(layout, field);
    for (size_t i = 0; i < M.a.size(); ++i) std::memcpy(out->data() + i * cb, table + (M.a[i] & 0xff) * cb, cb);
    return;
  }
  for (size_t i = 0; i < M.a.size(); ++i) prepare_coeff(layout, field, M.a[i], out->data() + i * cb);
}

}  // namespace ecjit::codes
