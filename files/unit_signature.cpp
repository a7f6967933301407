// unit_signature: packing of the codec's signature components; eq. 2.37 on packed signatures.
#include "files/unit_signature.h"

#include <algorithm>
#include <cstring>

namespace ecjit::files {

Result<uint64_t> unit_signature(const Codec &codec, const uint8_t *unit, size_t len) {
  const unsigned l = codec.spec().gf, comps = 64 / l;
  uint64_t c[kMaxSignatureComponents];
  ECJIT_RETURN_IF_ERROR(codec.signature(unit, len, Span<uint64_t>(c, comps)));
  uint64_t v = 0;
  for (unsigned i = 0; i < comps; ++i) v |= l == 64 ? c[i] : c[i] << (i * l);
  return v;
}

uint64_t ecc_signature_from_data(const Codec &codec, const codes::Field &field, const RedundancyHeader &h,
                                 uint64_t stripe, unsigned r) {
  const unsigned l = field.bits(), comps = 64 / l, k = h.k;
  const uint64_t mask = field.mask();
  const std::vector<uint64_t> &a = codec.parity_matrix();
  uint64_t out = 0;
  for (unsigned i = 0; i < comps; ++i) {
    uint64_t acc = 0;
    for (unsigned j = 0; j < k; ++j) acc ^= field.mul(a[size_t(r) * k + j], (h.data_sig(stripe, j) >> (i * l)) & mask);
    out |= l == 64 ? acc : acc << (i * l);
  }
  return out;
}

bool all_zero(const uint8_t *p, size_t len) {
  static const uint8_t zeros[4096] = {};
  for (size_t off = 0; off < len; off += sizeof zeros)
    if (memcmp(p + off, zeros, std::min(sizeof zeros, len - off)) != 0) return false;
  return true;
}

}  // namespace ecjit::files
