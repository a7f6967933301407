// rs-fft encode and decode as a flat list of per-shard butterfly ops that a JIT can lower.
//
// A Program runs on `work_count` work shards (all of one length). Running it:
//  1. for each binding in `inputs`, work[slot] = shard (the shard's elements, unpacked);
//     every other work shard starts undefined: the program zeroes what it reads;
//  2. the ops, in order, each on whole shards, element by element;
//  3. for each binding in `outputs`, shard = work[slot].
// Shard ids in bindings: originals 0 .. k-1, recovery k .. k+m-1.
// Executing a program with the scalar field ops (run_program) gives exactly encode / decode
// of rs_fft.h; tests compare the two.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "codes/rs_fft.h"
#include "ecjit/status.h"

namespace ecjit::codes::fft {

enum class OpKind : uint8_t {
  kFft,     // a ^= mul_log(b, log) (skipped when log == kModulus); then b ^= a
  kIfft,    // b ^= a; then a ^= mul_log(b, log) (skipped when log == kModulus)
  kXor,     // a ^= b
  kCopy,    // a = b
  kZero,    // a = 0
  kMulLog,  // a = mul_log(a, log)   (log == kModulus multiplies by 1)
};

// One op on work shards a and b (b unused by kZero and kMulLog; log unused by kXor, kCopy,
// kZero).
struct Op {
  OpKind kind;
  uint16_t log;
  uint32_t a;
  uint32_t b;
  bool operator==(const Op &o) const {
    return kind == o.kind && log == o.log && a == o.a && b == o.b;
  }
};

struct Binding {
  uint32_t shard;  // 0 .. k-1 original, k .. k+m-1 recovery
  uint32_t slot;   // work shard
};

struct Program {
  Gf gf = Gf::k16;  // the field of its logs (append_fft / append_ifft read its twiddles)
  uint32_t work_count = 0;
  std::vector<Binding> inputs;
  std::vector<Binding> outputs;
  std::vector<Op> ops;
};

// The order butterflies are appended in. kLayers: layer by layer, as the transforms run
// (rs_fft.h). kDepthFirst: the same butterflies reordered by the recursion of the transform
// (FFT: a block's top layer, then each half in turn; IFFT: each half, then the top layer),
// so that a code generator working on one column of all shards finishes sub-transforms
// while their values are still in registers. kRadix4: layers in pairs (FFT: dist 2d then d;
// IFFT: d then 2d, an odd last layer alone), and within a pair, for each block of 4d points
// and each i of its first d, the four butterflies of slots i, i+d, i+2d, i+3d in a row (FFT:
// (i, i+2d) (i+d, i+3d) (i, i+d) (i+2d, i+3d); IFFT: (i, i+d) (i+2d, i+3d) (i, i+2d)
// (i+d, i+3d)), so that a code generator can run each four as one step on four slots.
// kRadix8: layers in threes (FFT: dist 4d, 2d, d; IFFT: d, 2d, 4d; one or two layers left
// over in kRadix4's way, or grouped as append_fft's `mirrored` says), and within a three, for each block of 8d points and each i of its first d, the twelve butterflies of
// slots i + j d (j = 0..7) in a row (FFT: (j, j+4) for j = 0..3, then (0,2) (1,3) (4,6) (5,7),
// then (0,1) (2,3) (4,5) (6,7); IFFT: those three groups in the reverse order), so that a code
// generator can run each twelve as one step on eight slots. All orders compute the same thing.
enum class Order : uint8_t { kLayers, kDepthFirst, kRadix4, kRadix8 };

// Append the butterflies of fft / ifft (rs_fft.h, same arguments, `pos` a work slot): kFft /
// kIfft ops with the twiddle log, in `order`. mirrored (kRadix4 / kRadix8): both transforms
// group their layers alike with a group of two or three on top, never a single layer there
// (kRadix8: threes from the bottom, then one or two pairs; kRadix4: an odd layer at the
// bottom, then pairs), the IFFT from the bottom and the FFT from the top, so that an IFFT's
// last pass can XOR into an accumulator and its last group and an FFT's first are on the same
// slots (a one-chunk encode: a kernel can run the two as one pass). Otherwise the FFT takes
// its threes from the top (what truncated FFTs, the decode core's, prune best).
void append_fft(Program &p, size_t pos, size_t size, size_t truncated, size_t skew_offset,
                Order order = Order::kLayers, bool mirrored = false);
void append_ifft(Program &p, size_t pos, size_t size, size_t truncated, size_t skew_offset,
                 Order order = Order::kLayers, bool mirrored = false);
// Append formal_derivative over work slots [0, count) as kXor ops, grouped by the slot they
// write (rising slots; the same sums as rs_fft.h's block order).
void append_formal_derivative(Program &p, size_t count);
// Append the decode core on g's decode_work points: the IFFT, the formal derivative and the FFT
// (what every erasure set's decode runs between its locator multiplies), in `order`.
void append_decode_core(Program &p, const Geometry &g, Order order = Order::kLayers);

// Encode: inputs are originals 0 .. k-1, outputs recovery 0 .. m-1 (shard ids k .. k+m-1).
// Errors: kInvalidSpec.
Result<Program> encode_program(unsigned k, unsigned m, Order order = Order::kLayers, Gf gf = Gf::k16);

// Decode for one erasure pattern: present has k + m entries (originals then recovery).
// Inputs are the present shards; outputs are the missing originals, then, when
// restore_recovery, the missing recovery shards, each in index order. The erasure-locator
// logs are computed here and appear as kMulLog constants. No missing original and no
// recovery wanted gives a program with no ops. Errors: kInvalidSpec, kShardCount (present
// has the wrong size), kTooManyErasures (fewer than k present).
Result<Program> decode_program(unsigned k, unsigned m, const std::vector<bool> &present,
                               bool restore_recovery = false, Gf gf = Gf::k16);

// A decode that inverts the encoder's transforms where the shards read allow it, instead of
// the erasure-locator core (IFFT, derivative and FFT on all decode_work points: about three
// encodes' multiplies; this is about one). Inputs bind `sources`, outputs `targets` (shard
// ids; targets not among sources). The shapes it takes:
//  - high rate with m == C (m a power of two): sources hold every recovery shard and every
//    original outside one chunk L of C originals, and every target is an original of chunk
//    L. The encoder's recovery = FFT_0(XOR over chunks c of IFFT_c(chunk c)), so
//    IFFT_L(chunk L) = IFFT_0(recovery) ^ the other chunks' IFFTs, and chunk L its FFT_L.
//  - low rate: sources hold every original, or (k == C) every shard of one whole recovery
//    chunk; their IFFT is the code's polynomial, and each target chunk its FFT there.
// nullopt for every other shape (those decode through decode_program's core).
std::optional<Program> inverse_decode_program(unsigned k, unsigned m, const std::vector<unsigned> &sources,
                                              const std::vector<unsigned> &targets, Order order = Order::kLayers,
                                              Gf gf = Gf::k16);

// Which inverted-encoder decode the shards at hand allow (the shapes inverse_decode_program
// takes), or nullopt: `available` has k + m entries, `targets` are shard ids. The one place
// those rules live; inverse_decode_program and inverse_decode_sources both ask it.
struct InverseShape {
  Rate rate = Rate::kHigh;
  // High rate: the first original of chunk L, the one holding every target. Low rate: the
  // point the polynomial is read at, 0 (every original) or C + c0 (recovery chunk c0, k == C).
  size_t chunk_point = 0;
};
std::optional<InverseShape> inverse_shape(unsigned k, unsigned m, const std::vector<bool> &available,
                                          const std::vector<unsigned> &targets, Gf gf = Gf::k16);

// Sources (k shards, ascending) for which inverse_decode_program restores `targets` (missing
// shards) given `present` (k + m entries): at the high rate every recovery shard and the
// originals outside the one whole chunk holding every target; at the low rate every original,
// else (k == C) the first whole recovery chunk present. nullopt when no k shards present
// allow it (then the first k present decode through the core, or as a matrix).
std::optional<std::vector<unsigned>> inverse_decode_sources(unsigned k, unsigned m, const std::vector<bool> &present,
                                                            const std::vector<unsigned> &targets, Gf gf = Gf::k16);

// A decode by the inverted encoder where some shards it reads are missing too: those are
// restored first from `sources` (decode_matrix: |first| x k multiplies per element), then
// the inverse restores the rest. Pays where the shards lost leave one recovery shard (high
// rate) or one original (low rate) unread but the decode core costs more than
// |first| x k on top of an encode's transforms (32:32 losing 31 originals and a recovery
// shard: 32 + 144 multiplies per element against the pruned core's 350).
struct InverseReads {
  std::vector<unsigned> sources;  // k present shards, ascending: the shards a decode reads
  std::vector<unsigned> first;    // missing shards the inverse reads, ascending (may be empty)
  std::vector<unsigned> targets;  // what the inverse restores: `targets` less `first`
};
// The reads for `targets` given `present` (k + m entries): inverse_decode_sources's where it
// answers (first empty); else, at the high rate with m == C, first = every missing recovery
// shard and every missing original outside chunk L (of the chunks holding a target, the one
// missing the most originals), and the targets left are those in chunk L; at the low rate first = every missing original
// and the targets left recovery shards. sources: the present shards the inverse reads, then other present shards in index
// order up to k. nullopt where neither holds or the targets left are none (a matrix alone),
// and where `first` would hold more than max_first shards (a caller's cost bound: it stops
// before the shape is checked, which a new erasure set's first call would otherwise pay).
std::optional<InverseReads> inverse_decode_reads(unsigned k, unsigned m, const std::vector<bool> &present,
                                                 const std::vector<unsigned> &targets, Gf gf = Gf::k16,
                                                 size_t max_first = SIZE_MAX);

// The erasure-locator logs of one pattern on the decode_work points (rs_fft.h's Geometry):
// a present shard's point is multiplied by exp(logs[x]) before the IFFT, every other point
// is zero; a restored point is multiplied by exp(kModulus - logs[x]) after the FFT. What
// decode_program bakes in, for decoders that take the multipliers at run time. Errors as
// decode_program's.
Result<std::vector<uint16_t>> locator_logs(unsigned k, unsigned m, const std::vector<bool> &present, Gf gf = Gf::k16);

// The decode of one erasure pattern as a matrix: restored shard targets[t] = XOR over i of
// out[t * sources.size() + i] * shard sources[i] (elements of the crate's field), where
// sources are the shards read (present[s]; exactly the present ones) and targets missing
// shards. Row t is the transposed decode core applied to the unit vector of the target's
// point (the core's butterflies in reverse, each transposed: O(n log n) per target, n =
// decode_work), times the target's and each source's locator multiplier. Few losses decode
// with |targets| x k multiplies per element this way instead of the transforms' 2 n log n.
// Errors as locator_logs's; kInvalidArgument when a target is present or a source missing.
// core: decode_core_program(k, m, gf)'s, for a caller making many matrices (building it is most
// of one: 1024:1024 ~0.6 ms of ~0.7); null: built here. kInvalidArgument where it is not a core
// of this code's field and size.
Result<std::vector<uint16_t>> decode_matrix(unsigned k, unsigned m, const std::vector<bool> &present,
                                            const std::vector<unsigned> &sources,
                                            const std::vector<unsigned> &targets, Gf gf = Gf::k16,
                                            const Program *core = nullptr);

// The decode core of (k, m) as a program on the decode_work points: the IFFT, the formal
// derivative and the FFT, the same for every erasure set (decode_matrix transposes it).
// Errors: kInvalidSpec.
Result<Program> decode_core_program(unsigned k, unsigned m, Gf gf = Gf::k16);

// Runs p on shards of len elements: in[id] are read for the input bindings, out[id] written
// for the output bindings (both arrays indexed by shard id, k + m entries; the pointers
// that a binding names must be set). Work shards that are not inputs start as 0xA5A5
// elements, so a program that reads a shard before writing it gives wrong results.
void run_program(const Program &p, size_t len, const uint16_t *const *in, uint16_t *const *out);

}  // namespace ecjit::codes::fft
