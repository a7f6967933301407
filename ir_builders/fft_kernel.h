// build_fft_kernel: rs-fft encode and decode (codes/rs_fft.h) unrolled over 64-byte columns of every shard.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "codes/rs_fft_field.h"
#include "fft/mul_tables.h"
#include "ir_builders/target_info.h"

namespace llvm {
class LLVMContext;
class Module;
template <typename T> class Expected;
}  // namespace llvm

namespace ecjit::ir {

// Which rs-fft kernel: the encoder of (k, m), or the decode core every erasure pattern of
// (k, m) shares (its per-pattern multipliers arrive as tables at run time, so no erasure set
// ever waits for a compile).
struct FftKernelDesc {
  // kSteps: the schedule executor of fft_step_kernel.h (k and m unused: one per target);
  // kTransformSteps: the same without the decode core's kinds (FftStepKinds::kTransforms).
  // kInverse: the decode of one erasure set by the encoder's transforms inverted
  // (codes::fft::inverse_decode_program of `sources` and `targets`), constants compiled in.
  enum class Kind : uint8_t { kEncode, kDecode, kSteps, kInverse, kTransformSteps };
  bool steps() const { return kind == Kind::kSteps || kind == Kind::kTransformSteps; }
  Kind kind = Kind::kEncode;
  unsigned k = 0;
  unsigned m = 0;
  std::string symbol;
  std::vector<unsigned> sources, targets;  // kInverse: shards read (in[]) and rebuilt (out[])
  codes::fft::Gf gf = codes::fft::Gf::k16;  // the code's field (kSteps: the step kernel's)
};

// Whether build_fft_kernel serves `target`: GFNI with AVX2, or a 16-entry byte shuffle (x86
// SSSE3 / AVX2 / AVX-512BW, AArch64 NEON), and little-endian.
bool fft_kernel_supported(const TargetInfo &target);
// Whether the kernels for `target` multiply by GFNI bit-matrices: they read only those of a
// run-time multiplier's tables (fft_mul_tables' matrices_only serves them).
bool fft_multiplies_by_gfni(const TargetInfo &target);
// How the kernels for `target` multiply: "gfni" (four affine transforms per 64-byte column),
// "split-table" (eight nibble lookups), or "none" (unsupported).
const char *fft_multiply_name(const TargetInfo &target);

// Work slots the kernel holds per column, a proxy of its size: encode C x chunks (rs_fft.h's
// work_count), decode the decode_work points. 0 for unsupported (k, m).
size_t fft_kernel_slots(const FftKernelDesc &desc);

// The prefix of the symbols of a field's rs-fft kernels, the runtime's and the tools' alike
// (one kernel set per field): "ecjit_fft_" (GF(2^16)), "ecjit_fft8_" (GF(2^8)).
inline const char *fft_symbol_prefix(codes::fft::Gf gf) {
  return gf == codes::fft::Gf::k8 ? "ecjit_fft8_" : "ecjit_fft_";
}

// kSteps / kTransformSteps: build_fft_step_kernel(ctx, desc.symbol, target, gf, kinds). Otherwise emits, for len a
// multiple of 64 (a trailing partial column is left untouched):
//   encode:  void <symbol>(const uint8_t *const *in, uint8_t *const *out, size_t len)
//            in: the k originals, out: the m recovery shards (the crate's byte layout).
//   inverse: void <symbol>(const uint8_t *const *in, uint8_t *const *out, size_t len)
//            in[i]: shard sources[i], out[t]: shard targets[t] (the encoder's ABI).
//   decode:  void <symbol>(const uint8_t *const *in, uint8_t *const *out,
//                          const uint8_t *tables, size_t len)
//            n = geometry(k, m).decode_work points; in[x] / out[x] for the points that hold
//            a shard (originals at original_pos + i, recovery at recovery_pos + j; other
//            entries are not read); tables: 2 n multipliers of kFftMulTableBytes, first the
//            one each point's input is multiplied by (all zero for an erased point), then
//            the one its result is multiplied by; out[x] == nullptr: point x not written.
// Per 64-byte column: both byte planes of every shard are loaded as <32 x i8>, the program
// (codes::fft::encode_program / the decoder's IFFT, formal derivative and FFT, butterflies in
// depth-first order) runs on them with each constant multiply as eight nibble lookups, or
// four GFNI affine transforms where the target has GFNI (fft_column.h; constant tables for
// twiddles, loaded tables for run-time multipliers), and the outputs are stored. Caller contract: outputs do not overlap each other or any input.
// Errors (llvm::Error): an unsupported target or (k, m), empty symbol, verifier failure, an
// inverse whose sources and targets the inverted encoder does not take.
llvm::Expected<std::unique_ptr<llvm::Module>> build_fft_kernel(llvm::LLVMContext &ctx,
                                                               const FftKernelDesc &desc,
                                                               const TargetInfo &target);

}  // namespace ecjit::ir
