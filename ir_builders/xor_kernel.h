// build_xor_kernel: the xor lowering, a straight-line XOR program unrolled over vectors of packets.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "codes/bitmatrix_code.h"
#include "codes/xor_program.h"
#include "ir_builders/target_info.h"

namespace llvm {
class LLVMContext;
class Module;
template <typename T> class Expected;
}  // namespace llvm

namespace ecjit::ir {

// A bit-matrix kernel: `program` over packets of blocks of w packets of `packet` bytes.
// Program input i is packet inputs[i].index of shard pointer in[inputs[i].shard]; output r
// goes to packet outputs[r].index of out[outputs[r].shard].
struct XorKernelDesc {
  codes::XorProgram program;
  std::vector<codes::PacketRef> inputs;
  std::vector<codes::PacketRef> outputs;
  unsigned w = 0;
  unsigned packet = 0;
  bool accumulate = false;  // out ^= value (update, encode_partial) instead of out = value
  std::string symbol;

  unsigned in_pointers() const;   // 1 + the largest inputs[i].shard (0 without inputs)
  unsigned out_pointers() const;  // 1 + the largest outputs[r].shard
};

// Emits
//   void <symbol>(const uint8_t *const *in, uint8_t *const *out, size_t len)
// for every whole block of w x packet bytes in len (a trailing partial block is left
// untouched): per block, a loop over the packet in vectors of VB bytes (the target's width,
// or the largest power of two not above the packet; accumulate: that divides it), and in its
// body the whole program unrolled, output by output: each op one vector XOR (computed once),
// each output stored as soon as it is computed, input vectors read from their buffers where
// used (overwrite: a packet that is not a multiple of VB ends with one vector overlapping
// the previous one, the same bytes rewritten); large packets on long shards load every input
// vector of a position first instead (kXorPreloadPacketBytes below). The
// in / out pointer arrays are read once on entry. Caller contract: output buffers do not
// overlap each other or any input. Errors (llvm::Error): an invalid program (check by
// shape: operands defined before use, packets within w, pointer counts), packet not a
// multiple of 8, empty symbol, verifier failure.
llvm::Expected<std::unique_ptr<llvm::Module>> build_xor_kernel(llvm::LLVMContext &ctx,
                                                               const XorKernelDesc &desc,
                                                               const TargetInfo &target);

// Bytes per vector build_xor_kernel uses for `desc` on `target`.
unsigned xor_kernel_vector_bytes(const XorKernelDesc &desc, const TargetInfo &target);

// Kernels for packets of at least kXorPreloadPacketBytes have a second packet loop that loads
// every input vector of a position before the program, taken for calls of at least
// kXorPreloadShardBytes per shard (len): the shards are then past the caches, where the
// preloaded loop overlaps the misses of the k x w packet streams (see the .cpp).
inline constexpr unsigned kXorPreloadPacketBytes = 1024;
inline constexpr size_t kXorPreloadShardBytes = size_t(512) << 10;

}  // namespace ecjit::ir
