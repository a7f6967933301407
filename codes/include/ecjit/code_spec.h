// CodeSpec: the textual description of an erasure code ("rs-vand:k=10,m=4,gf=8"), parsed and printed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "ecjit/status.h"

namespace ecjit {

// Code families. Each is a systematic linear code; all but rs-fft are built from an m x k
// parity matrix over a polynomial-basis field (codes::build_code) or its bit-matrix. Each has
// one registry row inside the library (its name, rules, construction and the codec that runs
// it): codes/families.h for the families over GF(2^l) symbols, codes/xor_families.h for the
// bit-matrix ones.
enum class CodeFamily {
  kRsVand,        // "rs-vand": the systematic Vandermonde RS of Nešković 2018 (ch. 2.3.1)
  kRsCauchy,      // "rs-cauchy": Cauchy RS, a_ij = 1/(i + (m + j)) (Jerasure's original Cauchy)
  kIsalRs,        // "isal-rs": ISA-L gf_gen_rs_matrix, GF(2^8) only
  kIsalCauchy,    // "isal-cauchy": ISA-L gf_gen_cauchy1_matrix, GF(2^8) only
  kJerasureVand,  // "jerasure-vand": Jerasure reed_sol_vandermonde_coding_matrix, w = 8/16/32
  kRaidz,         // "raidz": ZFS RAID-Z P / PQ / PQR (m = 1..3), GF(2^8)
  kMatrix,        // "matrix": a user-supplied m x k parity matrix
  // Bit-matrix (XOR) families: each shard is cut into blocks of w packets; parity packets
  // are XORs of data packets (Jerasure's layout). See codes/xor_families.h.
  kCauchyOrig,    // "cauchy-orig": Jerasure's cauchy_original_coding_matrix, w = 2..32
  kCauchyGood,    // "cauchy-good": Jerasure's cauchy_good_general_coding_matrix, w = 2..32
  kLiberation,    // "liberation": m = 2, w prime, k <= w
  kBlaumRoth,     // "blaum-roth": m = 2, w + 1 prime, k <= w
  kLiber8tion,    // "liber8tion": m = 2, w = 8, k <= 8
  kBitmatrixOf,   // "bitmatrix-of": a symbol family (of=) over GF(2^w) expanded to bits
  kCauchyOpt,     // "cauchy-opt": Cauchy X / Y searched by Zhou and Tian 2019's genetic algorithm
  // Array codes, given by a prime p (w = p - 1 rows; see codes/array_codes.h):
  kEvenodd,       // "evenodd": m = 2, k <= p
  kRdp,           // "rdp": row-diagonal parity, m = 2, k <= p - 1
  kStar,          // "star": EVENODD plus anti-diagonal parity, m = 3, k <= p
  // Reed-Solomon by the additive FFT over GF(2^16), byte-compatible with the Rust crate
  // reed-solomon-simd 3.x (codes/rs_fft.h). Not a matrix code over a polynomial basis: its
  // symbols are the crate's Cantor-basis elements, split over 32 low then 32 high bytes per
  // 64-byte chunk. Keys k, m (gf=16 only, the default; no poly=, no a=); limit:
  // min(next_pow2(k), next_pow2(m)) + max(k, m) <= 65536.
  kRsFft,         // "rs-fft"
  // Locally repairable, Azure-style (Huang et al. 2012): keys k, l, r (m = l + r), gf 8 or
  // 16; l local XOR parities of k/l data shards each, r global ones (codes/lrc.h).
  kLrc,           // "lrc"
  // The code Ceph's lrc plugin generates from k, m, l (codes/ceph_lrc.h): keys k, m, l; gf=8.
  kCephLrc,       // "ceph-lrc"
};

// Largest k + m of every family but rs-fft (whose own limit, reed-solomon-simd's, allows up
// to 65536 shards), and the range of shard indices a ShardSet holds.
constexpr unsigned kMaxShards = 4096;
// Packet size of bit-matrix codes when the spec gives none (bytes). Small packets keep a
// block of one shard contiguous in few cache lines, so the unrolled kernel streams each shard
// sequentially instead of k w interleaved streams: RS(10,4) w=8 on Zen 3, encode at 1 MiB
// shards 8.6 GB/s with 32-64 B packets, 2.3-2.9 with 1-2 KiB (64 KiB shards: 20 vs 13-14).
// 64 is one AVX-512 vector. Jerasure-compatible data names its packet explicitly.
constexpr unsigned kDefaultPacket = 64;

// A parsed code description. Value type; cheap to copy; immutable in practice.
//
// Grammar:  family ":" key "=" value ("," key "=" value)*
//   keys:   k, m       positive integers (decimal)
//           gf         8 | 16 | 32 | 64                         (default 8; rs-fft: 16 only)
//           poly       primitive polynomial, hex "0x..." or decimal; the x^l term may be
//                      given or left implied (default per field: 0x11d, 0x1100b,
//                      0x400007, 0x1b)
//           a          matrix entries for "matrix": hex numbers separated by '.', rows
//                      separated by '/', e.g. a=1.1.1/1.2.3 for m=2, k=3
// Bit-matrix families (no gf=; poly= and a= only with bitmatrix-of):
//           w          word size: bits per coding word = packets per block (default 8;
//                      liberation and blaum-roth have no default)
//           packet     bytes per packet, a multiple of 8 (default kDefaultPacket); a shard
//                      is a whole number of blocks of w x packet bytes. packet=auto: for new
//                      data, the fastest of 32 .. 2048 bytes on this machine, timed when a
//                      Jit makes the codec (recorded in its disk cache); the codec's spec()
//                      then names the packet chosen, which the data's readers need
//           of         bitmatrix-of only: the symbol family expanded (rs-vand, rs-cauchy,
//                      jerasure-vand, matrix, ...), over GF(2^w), w = 8 | 16 | 32
//           seed       cauchy-opt only: the search's random seed (default 1; same seed, same code)
//           m          defaults to 2 for liberation, blaum-roth, liber8tion, evenodd and
//                      rdp, 3 for star
//           p          evenodd, rdp, star (instead of w): the prime of the array, w = p - 1
//                      (default: the smallest prime the family admits for k)
// rs-fft: keys k, m and gf (16, the default); its field is fixed, so no poly= and no a=.
// lrc: keys k, l, r and gf (8, the default, or 16); m = l + r, given by l and r, not m=.
// ceph-lrc: keys k, m, l as Ceph's lrc profile takes them; the codec has m + (k + m) / l parity
// shards (m global, one local per group), so CodeSpec::m is that sum and r Ceph's m.
// rs:k=,m= (keys k and m only): a Reed-Solomon code whose construction is chosen for (k, m)
// by a cost model of encode + rebuild time (codes/rs_auto.h): rs-cauchy (gf=8, or 16 past
// 256 shards) or rs-fft. parse() returns the chosen spec (its to_string() names it: store
// that with the data) with chosen_by saying why; the choice depends on k and m only.
// to_string() prints the canonical form; parse(to_string()) returns an equal spec.
struct CodeSpec {
  CodeFamily family = CodeFamily::kRsVand;
  unsigned k = 0;
  unsigned m = 0;
  unsigned gf = 8;                 // field bits l
  uint64_t poly = 0;               // low l bits of the polynomial (x^l implied); 0 = default
  std::vector<uint64_t> matrix;    // kMatrix only: m*k entries, row-major
  unsigned w = 0;                  // bit-matrix families: word size (0 for symbol families)
  unsigned packet = 0;             // bit-matrix families: packet bytes (0 for symbol families)
  // Bit-matrix families: packet=auto was given (packet then holds kDefaultPacket until a Jit
  // times the candidates and makes the codec with the fastest; see above).
  bool packet_auto = false;
  CodeFamily of = CodeFamily::kRsVand;  // kBitmatrixOf: the symbol family expanded
  uint64_t seed = 0;               // kCauchyOpt: the search's seed (1 when not given)
  // kLrc: l local groups and r global parities (m = l + r). kCephLrc: Ceph's l (shards per
  // local group before its local parity) and m as r, the global parities (m = r + (k + r) / l).
  unsigned l = 0;
  unsigned r = 0;
  // kCauchyOpt: the Cauchy points, X (m of them) then Y (k), when given as points= (no
  // search then: the code is these points, whatever a later search would find); empty: the
  // search with `seed` picks them. codes::resolved_spec() gives the points a seed stands for.
  std::vector<uint64_t> points;
  // Parsed from "rs:...": why the cost model chose this construction (codes::choose_rs);
  // empty when the text named the family. Not part of to_string() or ==.
  std::string chosen_by;

  // Parses and validates (family, k, m, field, polynomial primitive, matrix shape and range).
  // Returns kInvalidSpec with a message that names the offending part.
  static Result<CodeSpec> parse(const std::string &text);

  std::string to_string() const;
  // Polynomial actually used (the default when poly == 0). Not meaningful for rs-fft, whose
  // elements are in a Cantor basis (codes/rs_fft_field.h), not the polynomial basis.
  uint64_t effective_poly() const;
  // Symbol size in bytes: gf / 8.
  unsigned symbol_bytes() const { return gf / 8; }
  // Whether the family is a bit-matrix (XOR) code: shards are blocks of w packets.
  bool bitmatrix() const { return w != 0; }
  // Bytes of one coding block of a bit-matrix code (w x packet; shard lengths are
  // multiples of it); symbol_bytes() for symbol codes.
  size_t block_bytes() const { return bitmatrix() ? size_t(w) * packet : symbol_bytes(); }

  bool operator==(const CodeSpec &o) const;
  bool operator!=(const CodeSpec &o) const { return !(*this == o); }
};

const char *family_name(CodeFamily f);
// Default primitive polynomial (low l bits) for GF(2^l), l in {8,16,32,64}; 0 otherwise.
uint64_t default_poly(unsigned l);

}  // namespace ecjit
