// unit_signature: a unit's algebraic signature packed into 64 bits, and eq. 2.37's signature
// of an ECC unit computed from the data units' signatures alone.
#pragma once

#include <cstddef>
#include <cstdint>

#include "codes/gf.h"
#include "ecjit/codec.h"
#include "files/redundancy_header.h"

namespace ecjit::files {

// 64 / l components of the codec's signature (ch. 2.4, base alpha^(i+1)), l bits each.
Result<uint64_t> unit_signature(const Codec &codec, const uint8_t *unit, size_t len);

// sig(ECC_r) = sum_j a_rj sig(D_j), component by component over GF(2^l), from the data
// signatures of `stripe` stored in h (signatures are linear, so no unit is read).
uint64_t ecc_signature_from_data(const Codec &codec, const codes::Field &field, const RedundancyHeader &h,
                                 uint64_t stripe, unsigned r);

bool all_zero(const uint8_t *p, size_t len);

}  // namespace ecjit::files
