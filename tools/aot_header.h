// aot_header: the C99 header and the optional runtime C file that go with an `ecjit aot` object.
#pragma once

#include <string>
#include <vector>

#include "codes/array_layout.h"
#include "codes/bitmatrix_code.h"
#include "codes/linear_code.h"

namespace ecjit::tools {

// One specialised decoder of the object: rebuilds `outputs` (= the erased shards, ascending)
// from `inputs` (the k shards read, in kernel argument order).
struct AotDecoder {
  std::vector<unsigned> outputs;
  std::vector<unsigned> inputs;
  std::string symbol;
};

// Everything the header describes. All text is a pure function of these fields.
struct AotContents {
  codes::LinearCode code;
  std::string prefix;          // C identifier prefix of macros (upper-cased) and names
  std::string target_text;     // e.g. "aarch64"
  std::string target_details;  // e.g. "aarch64-unknown-linux-gnu, cpu generic, +neon, 128-bit vectors"
  std::string strategy;        // resolved strategy name, e.g. "clmul-shift"
  std::string opt;             // "O3"
  std::string encode_symbol;   // empty: no encoder
  std::vector<AotDecoder> decoders;
  std::string generic_symbol;  // empty: no generic kernel
  bool runtime_c = false;      // declare the runtime-C functions in the header
};

// Default prefix for a spec: "ecjit_" + the spec with every non-alphanumeric mapped to '_'.
std::string default_prefix(const std::string &spec);
// Whether `s` is a valid C identifier (and not reserved: no leading '_').
bool is_c_identifier(const std::string &s);

// The header text: include guard, extern "C", #defines for the code parameters, the parity
// matrix, the decoder table and one prototype per kernel symbol.
std::string aot_header_text(const AotContents &c);

// A bit-matrix (XOR) code's object: its encoder and decoders (the same kernel ABI and
// decoder table as symbol codes; lengths in whole blocks of w x packet bytes).
struct XorAotContents {
  codes::BitMatrixCode code;
  std::string prefix;
  std::string target_text;
  std::string target_details;
  std::string opt;
  std::string encode_symbol;
  std::string encode_schedule;  // e.g. "wm, 429 XORs per block position"
  std::vector<AotDecoder> decoders;
};
std::string aot_xor_header_text(const XorAotContents &c);

// An rs-fft code's object (reed-solomon-simd's code, codes/rs_fft.h): its unrolled encoder
// and decoders for fixed erasure sets the inverted encoder takes (any other set needs the
// erasure locator's transform, which ecjit and the crate run on a host). Lengths in whole
// 64-byte columns of the crate's layout.
struct FftAotContents {
  unsigned k = 0, m = 0;
  bool gf8 = false;  // Leopard-RS's GF(2^8) (klauspost's leopard8) instead of reed-solomon-simd's GF(2^16)
  std::string spec;
  std::string prefix;
  std::string target_text;
  std::string target_details;
  std::string multiplies;  // "gfni" or "split-table"
  std::string opt;
  std::string encode_symbol;
  std::vector<AotDecoder> decoders;
};
std::string aot_fft_header_text(const FftAotContents &c);

// The step kernels of an `ecjit aot --op steps` object: the executors of rs-fft step programs
// (ir_builders/fft_step_kernel.h) for one field and target, one serving every (k, m). Their
// step and table layouts are those of the ecjit build that wrote them: libecjit links such
// objects so that a new rs-fft codec serves at once, before (or without) the JIT.
struct FftStepsAotContents {
  bool gf8 = false;
  std::string prefix;
  std::string target_text;
  std::string target_details;
  std::string multiplies;      // "gfni" or "split-table" (the tables' layout the kernels read)
  bool whole_columns = false;  // three-layer steps on whole 64-byte columns (AVX-512 GFNI)
  unsigned vector_bits = 0;
  std::string opt;
  std::string transform_steps_symbol, steps_symbol;
};
std::string aot_fft_steps_header_text(const FftStepsAotContents &c);

// An element-level array code's object (codes/array_layout.h: xcode, bpcode, ...): its
// encoder and the rebuilds of failed-disk sets, every kernel in place over the disks' buffers
// (the same kernel ABI, in and out both the disk array; lengths in whole stripes).
// One degraded-read kernel of an array code's AOT object: every byte lost disk `disk` held,
// with the disks of `failed` lost, written to out[0] from the cells of `inputs`.
struct AotArrayRead {
  std::vector<unsigned> failed;  // the failed set, ascending
  unsigned disk = 0;
  std::vector<unsigned> inputs;  // the disks read, ascending
  size_t cells = 0;              // cells read per stripe
  std::string symbol;
};
struct ArrayAotContents {
  codes::ArraySpec spec;
  codes::ArrayLayout layout;
  std::string prefix;
  std::string target_text;
  std::string target_details;
  std::string opt;
  std::string encode_symbol;
  std::string encode_schedule;     // e.g. "wm, 70 XORs per stripe"
  std::vector<AotDecoder> rebuilds;  // outputs: the failed disks; inputs: the disks read
  std::vector<AotArrayRead> reads;   // one per lost disk of each rebuild's set
};
std::string aot_array_header_text(const ArrayAotContents &c);

// One shape kernel of an `ecjit aot --op shape` object: `outputs` x `inputs` coefficients
// that arrive at run time, prepared in the strategy's layout (codes/coeff_layout.h).
struct AotShape {
  unsigned inputs = 0, outputs = 0;
  bool accumulate = false;  // out ^= C x in (else out = C x in)
  std::string symbol;
};
struct AotShapeContents {
  codes::Field field;
  std::string prefix;
  std::string target_text;
  std::string target_details;
  std::string strategy;       // "split-table", "gfni" or "clmul-insn"
  std::string layout_text;    // one line on the coefficient layout
  unsigned coeff_bytes = 0;   // bytes per prepared coefficient
  std::string opt;
  std::vector<AotShape> shapes;
};
// The header of a shape-kernel object: the ABI, the coefficient layout and a table of every
// (inputs, outputs, accumulate) kernel with its function pointer.
std::string aot_shape_header_text(const AotShapeContents &c);

// File name and text of the runtime C file (tools/aot_runtime_c.inc with the code's
// parameters filled in).
std::string aot_runtime_c_name(const AotContents &c);
std::string aot_runtime_c_text(const AotContents &c);

}  // namespace ecjit::tools
