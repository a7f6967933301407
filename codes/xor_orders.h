// The XOR-scheduling loop orders of Luo et al. 2014 (PPG, PWG, DPG, DWG) for running a bit-matrix's plain
// equations.
#pragma once

#include <cstddef>
#include <cstdint>

#include "codes/bitmatrix.h"

namespace ecjit::codes {

// Each parity packet is the XOR of the data packets its bit-matrix row sets (the "dumb"
// equations); the orders differ only in how the loops over them nest (Luo et al. 2014, sec. 4):
//   PPG  parity packets one by one; per parity packet, each data packet whole (Jerasure's way)
//   PWG  parity packets one by one; per parity packet, word by word over all its data packets
//   DPG  data packets one by one; per data packet, into each parity packet that uses it, whole
//   DWG  data packets one by one; per data packet, word by word into every parity using it
// Words are 8 bytes. Interpreted in plain C++: the orders are about memory locality, which
// ecjit's unrolled kernels settle otherwise (all outputs of one vector position at once).
enum class XorOrder { kPpg, kPwg, kDpg, kDwg };
const char *xor_order_name(XorOrder order);

// parity (m shards) = M x data (k shards), blocks of w packets of `packet` bytes (a multiple
// of 8), len a multiple of w x packet; M is (m w) x (k w).
void encode_in_order(const BitMatrix &M, unsigned k, unsigned m, unsigned w, unsigned packet,
                     XorOrder order, const uint8_t *const *data, uint8_t *const *parity, size_t len);

}  // namespace ecjit::codes
