// xor_benchmarks: XOR bit-matrix codes in bench_encode, beside ISA-L in the same run: ecjit against libJerasure.
#pragma once

#include <cstddef>

namespace ecjit::bench {

// Registers, for shard size `len` (rounded down to whole blocks per code, at least one):
//   BM_xor_encode/<impl>/<spec>/<len>       impl = ecjit | jerasure (smart schedule)
//   BM_xor_decode2/<impl>/<spec>/<len>      data shards 0 and 1 lost: ecjit's compiled decoder
//                                           (prepare_reconstruct, then waited for), ecjit's
//                                           first-call runner ("ecjit-runner"), and libJerasure's
//                                           jerasure_schedule_decode_lazy (smart)
// for cauchy-good and cauchy-orig RS(10,4) w=8, liberation k=10 w=11, blaum-roth k=10 w=10
// and liber8tion k=8, packets of 2 KiB (libJerasure's best packet), cauchy-good with
// ecjit's default packet of 64 bytes, and the array codes beside their yardsticks (EVENODD,
// RDP, STAR k=10 p=11; cauchy-good m=2, 3). Every benchmark first
// checks its output against libJerasure's (or the original data) and fails on a difference.
void register_xor_benchmarks(size_t len);

// BM_xor_order/<order>/<spec>: Luo et al. 2014's loop orders (ppg, pwg, dpg, dwg: codes/xor_orders.h)
// and ecjit's compiled encoder on Liberation k=w=11, RDP k=w=10 and STAR k=11 w=10, packets
// 64 B .. 4 KiB, 256 KiB shards, checked against libJerasure; and BM_array_codec/<op>/<spec>:
// X-Code, BP-Code and RDP p=7 at element level (Jit::array_codec), encode and the rebuild of
// two disks, ~64 KiB per disk, GB/s of data cells.
void register_xor_order_benchmarks();

}  // namespace ecjit::bench
