// aot_header: writes the C99 header of an AOT object and fills in the runtime C template.
#include "tools/aot_header.h"

#include <algorithm>
#include <cctype>
#include <cstdio>

#include "llvm/Config/llvm-config.h"

namespace ecjit::tools {
namespace {

const char kRuntimeTemplate[] =
#include "tools/aot_runtime_c.inc"
    ;

std::string upper(std::string s) {
  for (char &ch : s) ch = char(std::toupper(static_cast<unsigned char>(ch)));
  return s;
}

std::string hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string elem_type(unsigned bits) { return "uint" + std::to_string(bits) + "_t"; }

// "0x..u" / "0x..ull" literal of a symbol value.
std::string literal(uint64_t v, unsigned bits) { return hex(v) + (bits > 32 ? "ull" : "u"); }

std::string join(const std::vector<unsigned> &v, const char *sep = ", ") {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? sep : "") + std::to_string(v[i]);
  return s;
}

// {{a, b}, {c, d}} of the m x k parity matrix, one row per line.
std::string parity_initializer(const codes::LinearCode &code, const std::string &indent) {
  std::string s = "{\n";
  for (unsigned r = 0; r < code.m; ++r) {
    s += indent + "    {";
    for (unsigned c = 0; c < code.k; ++c)
      s += (c ? ", " : "") + literal(code.parity.at(r, c), code.field.bits());
    s += r + 1 < code.m ? "},\n" : "}\n";
  }
  return s + indent + "}";
}

void replace_all(std::string &s, const std::string &from, const std::string &to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
}

const char *kKernelArgs = "(const uint8_t *const *in, uint8_t *const *out, size_t len)";

// Include guard, includes and extern "C" opening / closing of every header.
std::string header_open(const std::string &guard) {
  return "#ifndef " + guard + "\n#define " + guard +
         "\n\n#include <stddef.h>\n#include <stdint.h>\n\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n";
}
std::string header_close(const std::string &guard) {
  return "#ifdef __cplusplus\n}  /* extern \"C\" */\n#endif\n\n#endif  /* " + guard + " */\n";
}

// The decoder struct and the table of the object's decoders (both kinds of code).
std::string decoder_table(const std::string &P, const std::string &U, const std::vector<AotDecoder> &decoders) {
  std::string t = "struct " + P + "_decoder {\n";
  t += "  unsigned n_erased;          /* entries used in erased[] */\n";
  t += "  unsigned erased[" + U + "_M];  /* the shards rebuilt, ascending = out[] order */\n";
  t += "  unsigned inputs[" + U + "_K];  /* the shards read, in in[] order */\n";
  t += "  " + P + "_kernel_fn fn;\n};\n";
  if (decoders.empty()) return t;
  t += "static const struct " + P + "_decoder " + P + "_decoders[" + U + "_DECODER_COUNT] = {\n";
  for (size_t i = 0; i < decoders.size(); ++i) {
    const AotDecoder &d = decoders[i];
    t += "    {" + std::to_string(d.outputs.size()) + ", {" + join(d.outputs) + "}, {" + join(d.inputs) + "}, " +
         d.symbol + (i + 1 < decoders.size() ? "},\n" : "}\n");
  }
  return t + "};\n";
}
// The shard counts every header of a code with k data and m parity shards starts with.
std::string kmn_defines(const std::string &U, unsigned k, unsigned m) {
  return "#define " + U + "_K " + std::to_string(k) + "\n#define " + U + "_M " + std::to_string(m) + "\n#define " +
         U + "_N " + std::to_string(k + m) + "\n";
}
// The rest of an XOR code's header (bit-matrix or array): the kernel typedef, the encoder's
// prototype and macro, each decoder's prototype under a comment made from `decoder_format`
// (its outputs, then its inputs, for the two %s), the decoder table, no generic kernel or
// runtime C, `before_close`, and the close.
std::string xor_kernels_and_close(const std::string &P, const std::string &U, const std::string &guard,
                                  const std::string &encoder_comment, const std::string &encode_symbol,
                                  const std::string &decoders_comment, const std::vector<AotDecoder> &decoders,
                                  const std::string &decoder_format, const std::string &before_close = "") {
  std::string h;
  auto line = [&](const std::string &s = "") { h += s + "\n"; };
  line("typedef void (*" + P + "_kernel_fn)" + kKernelArgs + ";");
  line();
  line("/* " + encoder_comment + " */");
  line("void " + encode_symbol + kKernelArgs + ";");
  line("#define " + U + "_ENCODE " + encode_symbol);
  line();
  line(decoders_comment);
  line("#define " + U + "_DECODER_COUNT " + std::to_string(decoders.size()));
  for (const AotDecoder &d : decoders) {
    std::string comment = decoder_format;
    comment.replace(comment.find("%s"), 2, join(d.outputs));
    comment.replace(comment.find("%s"), 2, join(d.inputs));
    line("/* " + comment + " */");
    line("void " + d.symbol + kKernelArgs + ";");
  }
  h += decoder_table(P, U, decoders);
  line();
  line("#define " + U + "_HAS_GENERIC 0");
  line("#define " + U + "_HAS_RUNTIME_C 0");
  line();
  return h + before_close + header_close(guard);
}

const char *kGenericArgs =
    "(const uint8_t *coeffs, unsigned rows, unsigned cols,\n"
    "    const uint8_t *const *in, uint8_t *const *out, size_t len)";

}  // namespace

std::string default_prefix(const std::string &spec) {
  std::string s = "ecjit_" + spec;
  for (size_t i = 6; i < s.size(); ++i)
    if (!std::isalnum(static_cast<unsigned char>(s[i]))) s[i] = '_';
  return s;
}

bool is_c_identifier(const std::string &s) {
  if (s.empty() || s.size() > 64 || !std::isalpha(static_cast<unsigned char>(s[0]))) return false;
  for (char ch : s)
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '_') return false;
  return true;
}

std::string aot_header_text(const AotContents &c) {
  const codes::LinearCode &code = c.code;
  const std::string P = c.prefix, U = upper(c.prefix);
  const unsigned bits = code.field.bits();
  const std::string guard = U + "_AOT_H_";
  std::string h;
  auto line = [&](const std::string &s = "") { h += s + "\n"; };

  line("/* Generated by `ecjit aot` (ecjit " ECJIT_VERSION ", LLVM " LLVM_VERSION_STRING "); do not edit.");
  line(" *   spec      " + code.spec.to_string());
  line(" *   target    " + c.target_text + " (" + c.target_details + ")");
  line(" *   strategy  " + c.strategy + ", " + c.opt);
  line(" *");
  line(" * Shards 0.." + std::to_string(code.k - 1) + " hold data, " + std::to_string(code.k) + ".." +
       std::to_string(code.n() - 1) + " parity: parity[r] = sum_c " + P +
       "_parity_matrix[r][c] * data[c]");
  line(" * over GF(2^" + std::to_string(bits) + "), symbols of " + std::to_string(code.field.bytes()) +
       " byte(s) stored little-endian.");
  line(" *");
  line(" * Kernel ABI of the encoder and the decoders:");
  line(" *   void f(const uint8_t *const *in, uint8_t *const *out, size_t len);");
  line(" * len is bytes per shard, any multiple of " + U + "_SYMBOL_BYTES (a trailing partial symbol");
  line(" * is left untouched); no alignment is needed for buffers or pointer arrays. Outputs are");
  line(" * overwritten, never read, and must not overlap each other or any input; inputs may");
  line(" * overlap each other. No byte at or past len is read or written. The kernels keep no");
  line(" * state and call no library function: reentrant and thread-safe.");
  line(" */");
  h += header_open(guard);
  h += kmn_defines(U, code.k, code.m);
  line("#define " + U + "_FIELD_BITS " + std::to_string(bits));
  line("/* p(X) = X^" + std::to_string(bits) + " + POLY_LOW */");
  line("#define " + U + "_FIELD_POLY_LOW " + hex(code.field.poly()) + "ull");
  if (bits < 64)
    line("#define " + U + "_FIELD_POLY " + hex(code.field.poly() | (uint64_t(1) << bits)) + "ull");
  line("#define " + U + "_SYMBOL_BYTES " + std::to_string(code.field.bytes()));
  line("/* Required alignment of shard buffers and pointer arrays, in bytes: none. */");
  line("#define " + U + "_ALIGNMENT 1");
  line();
  line("typedef " + elem_type(bits) + " " + P + "_symbol_t;");
  line("static const " + P + "_symbol_t " + P + "_parity_matrix[" + U + "_M][" + U + "_K] = " +
       parity_initializer(code, "") + ";");
  line();
  line("typedef void (*" + P + "_kernel_fn)" + kKernelArgs + ";");
  line();
  if (!c.encode_symbol.empty()) {
    line("/* Encoder: in = data shards 0.." + std::to_string(code.k - 1) + ", out = parity shards " +
         std::to_string(code.k) + ".." + std::to_string(code.n() - 1) + ". */");
    line("void " + c.encode_symbol + kKernelArgs + ";");
    line("#define " + U + "_ENCODE " + c.encode_symbol);
    line();
  }
  line("/* Decoders for the erasure sets fixed at build time. Each rebuilds the erased shards");
  line(" * (out[i] = shard outputs[i]) from k present ones (in[j] = shard inputs[j]). */");
  line("#define " + U + "_DECODER_COUNT " + std::to_string(c.decoders.size()));
  for (const AotDecoder &d : c.decoders) {
    line("/* erased {" + join(d.outputs) + "}: in = shards {" + join(d.inputs) + "}, out = shards {" +
         join(d.outputs) + "} */");
    line("void " + d.symbol + kKernelArgs + ";");
  }
  h += decoder_table(P, U, c.decoders);
  line();
  if (!c.generic_symbol.empty()) {
    line("/* Generic kernel: out[r] = sum_c coeffs[r][c] * in[c] for r < rows, c < cols, where");
    line(" * coeffs holds rows x cols symbols, row-major, " + U + "_SYMBOL_BYTES byte(s) each,");
    line(" * little-endian, any alignment (e.g. from " + P + "_decode_matrix of the runtime C");
    line(" * file, with rows = its *ntargets and cols = " + U + "_K). rows == 0 does nothing. len and");
    line(" * buffer rules as for the kernel ABI above; outputs must not overlap coeffs either. */");
    line("#define " + U + "_HAS_GENERIC 1");
    line("void " + c.generic_symbol + kGenericArgs + ";");
    line("#define " + U + "_GENERIC " + c.generic_symbol);
    line();
  } else {
    line("#define " + U + "_HAS_GENERIC 0");
    line();
  }
  if (c.runtime_c) {
    line("/* Runtime C (" + aot_runtime_c_name(c) + "): see that file for the contracts. */");
    line("#define " + U + "_HAS_RUNTIME_C 1");
    line("#define " + U + "_RT_OK 0");
    line("#define " + U + "_RT_TOO_MANY_ERASURES (-1)");
    line("#define " + U + "_RT_SINGULAR (-2)");
    line("#define " + U + "_RT_BAD_ARGUMENT (-3)");
    line("typedef " + elem_type(bits) + " " + P + "_elem_t;");
    line("uint64_t " + P + "_gf_mul(uint64_t a, uint64_t b);");
    line("uint64_t " + P + "_gf_inv(uint64_t a);");
    line("int " + P + "_invert(" + P + "_elem_t *a, " + P + "_elem_t *inv, unsigned n);");
    line("int " + P + "_decode_matrix(const unsigned char *present, unsigned *sources,");
    line("    unsigned *targets, unsigned *ntargets, uint8_t *coeffs);");
    line();
  } else {
    line("#define " + U + "_HAS_RUNTIME_C 0");
    line();
  }
  return h + header_close(guard);
}

std::string aot_fft_header_text(const FftAotContents &c) {
  const std::string P = c.prefix, U = upper(c.prefix);
  const std::string guard = U + "_AOT_H_";
  std::string h;
  auto line = [&](const std::string &s = "") { h += s + "\n"; };
  line("/* Generated by `ecjit aot` (ecjit " ECJIT_VERSION ", LLVM " LLVM_VERSION_STRING "); do not edit.");
  line(" *   spec      " + c.spec);
  line(" *   target    " + c.target_text + " (" + c.target_details + ")");
  line(" *   strategy  fft (multiplies by " + c.multiplies + "), " + c.opt);
  line(" *");
  if (c.gf8) {
    line(" * Reed-Solomon by the additive FFT over GF(2^8), byte for byte Leopard-RS / klauspost's");
    line(" * leopard8 (reedsolomon.WithLeopardGF): shards 0.." + std::to_string(c.k - 1) + " hold original data, " +
         std::to_string(c.k) + ".." + std::to_string(c.k + c.m - 1) + " recovery. Each byte of a shard is");
    line(" * one field element. Besides the");
  } else {
    line(" * Reed-Solomon by the additive FFT over GF(2^16), byte for byte reed-solomon-simd 3.x: shards");
    line(" * 0.." + std::to_string(c.k - 1) + " hold original data, " + std::to_string(c.k) + ".." +
         std::to_string(c.k + c.m - 1) + " recovery. Each 64-byte column of a shard is 32 field");
    line(" * elements, their low bytes then their high bytes (the crate's layout). Besides the");
  }
  line(" * encoder this object decodes the erasure sets fixed at build time (--decoders), each by");
  line(" * the encoder's transforms inverted; any other set decodes with ecjit's Jit::codec() or");
  line(" * the crate on a host.");
  line(" *");
  line(" * Kernel ABI of the encoder and the decoders:");
  line(" *   void f(const uint8_t *const *in, uint8_t *const *out, size_t len);");
  line(" * len is bytes per shard; every whole 64-byte column in it is coded, a trailing partial");
  line(" * column is left untouched (so give lengths in whole columns); no alignment is needed for");
  line(" * buffers or pointer arrays. Outputs are overwritten and must not overlap each other or");
  line(" * any input. The kernel keeps no state and calls no library function: reentrant and");
  line(" * thread-safe.");
  line(" */");
  h += header_open(guard);
  h += kmn_defines(U, c.k, c.m);
  line("#define " + U + "_COLUMN_BYTES 64");
  line("/* The unit of shard lengths, under the names the other codes use: one column. */");
  line("#define " + U + "_BLOCK_BYTES " + U + "_COLUMN_BYTES");
  line("#define " + U + "_SYMBOL_BYTES " + U + "_COLUMN_BYTES");
  line("#define " + U + "_ALIGNMENT 1");
  line();
  h += xor_kernels_and_close(
      P, U, guard,
      "Encoder: in = original shards 0.." + std::to_string(c.k - 1) + ", out = recovery shards " +
          std::to_string(c.k) + ".." + std::to_string(c.k + c.m - 1) + ".",
      c.encode_symbol,
      "/* Decoders for the erasure sets fixed at build time. Each rebuilds the erased shards\n"
      " * (out[i] = shard erased[i]) from the shards it reads (in[j] = shard inputs[j]). */",
      c.decoders, "erased {%s}: in = shards {%s}");
  return h;
}

std::string aot_xor_header_text(const XorAotContents &c) {
  const codes::BitMatrixCode &code = c.code;
  const std::string P = c.prefix, U = upper(c.prefix);
  const std::string guard = U + "_AOT_H_";
  std::string h;
  auto line = [&](const std::string &s = "") { h += s + "\n"; };

  line("/* Generated by `ecjit aot` (ecjit " ECJIT_VERSION ", LLVM " LLVM_VERSION_STRING "); do not edit.");
  line(" *   spec      " + code.spec.to_string());
  line(" *   target    " + c.target_text + " (" + c.target_details + ")");
  line(" *   strategy  xor (encoder schedule " + c.encode_schedule + "), " + c.opt);
  line(" *");
  line(" * An XOR bit-matrix code, Jerasure's layout: shards 0.." + std::to_string(code.k - 1) + " hold data, " +
       std::to_string(code.k) + ".." + std::to_string(code.n() - 1) + " parity; each shard is");
  line(" * a whole number of blocks of " + U + "_W packets of " + U + "_PACKET bytes, and parity packet");
  line(" * (i, l) of a block is the XOR of the data packets (j, x) of that block where row i W + l");
  line(" * of " + P + "_bitmatrix has bit j W + x set.");
  line(" *");
  line(" * Kernel ABI of the encoder and the decoders:");
  line(" *   void f(const uint8_t *const *in, uint8_t *const *out, size_t len);");
  line(" * len is bytes per shard; every whole block in it is coded, a trailing partial block is");
  line(" * left untouched; no alignment is needed for buffers or pointer arrays. Outputs are");
  line(" * overwritten and must not overlap each other or any input. The kernels keep no state");
  line(" * and call no library function: reentrant and thread-safe.");
  line(" */");
  h += header_open(guard);
  h += kmn_defines(U, code.k, code.m);
  line("#define " + U + "_W " + std::to_string(code.w));
  line("#define " + U + "_PACKET " + std::to_string(code.packet));
  line("#define " + U + "_BLOCK_BYTES " + std::to_string(code.block_bytes()));
  line("/* The unit of shard lengths, under the name symbol codes use: one block. */");
  line("#define " + U + "_SYMBOL_BYTES " + U + "_BLOCK_BYTES");
  line("#define " + U + "_ALIGNMENT 1");
  line();
  line("/* The (M W) x (K W) parity bit-matrix, one row per line: bit c of row r is bit c % 8 of");
  line(" * byte c / 8. */");
  const unsigned row_bytes = (code.parity.cols + 7) / 8;
  line("static const uint8_t " + P + "_bitmatrix[" + std::to_string(code.parity.rows) + "][" +
       std::to_string(row_bytes) + "] = {");
  for (unsigned r = 0; r < code.parity.rows; ++r) {
    std::string row = "    {";
    for (unsigned b = 0; b < row_bytes; ++b) {
      unsigned byte = 0;
      for (unsigned i = 0; i < 8 && b * 8 + i < code.parity.cols; ++i) byte |= unsigned(code.parity.get(r, b * 8 + i)) << i;
      row += (b ? ", " : "") + hex(byte);
    }
    line(row + (r + 1 < code.parity.rows ? "}," : "}"));
  }
  line("};");
  line();
  h += xor_kernels_and_close(
      P, U, guard,
      "Encoder: in = data shards 0.." + std::to_string(code.k - 1) + ", out = parity shards " +
          std::to_string(code.k) + ".." + std::to_string(code.n() - 1) + ".",
      c.encode_symbol,
      "/* Decoders for the erasure sets fixed at build time. Each rebuilds the erased shards\n"
      " * (out[i] = shard erased[i]) from the present ones it reads (in[j] = shard inputs[j]). */",
      c.decoders, "erased {%s}: in = shards {%s}");
  return h;
}

namespace {

// An array code's degraded reads: each read kernel's prototype, their table and the ranged
// read over them (C99, no library function, no division but by constants).
std::string array_reads_text(const ArrayAotContents &c) {
  const std::string P = c.prefix, U = upper(c.prefix);
  std::string h;
  auto line = [&](const std::string &s = "") { h += s + "\n"; };
  line("/* Degraded reads, one kernel per lost disk of each failed-disk set above: it writes the");
  line(" * bytes the lost disk held (laid out as that disk) to out[0], reading only the cells its");
  line(" * parity chains need - the fewest per stripe (cells_read) - on the disks in inputs[]; in is");
  line(" * the disk array as for the rebuilds (the failed disks' entries are never read) and len");
  line(" * bytes per disk as for the other kernels. " + P + "_read_range below reads any byte range. */");
  line("#define " + U + "_READ_COUNT " + std::to_string(c.reads.size()));
  for (const AotArrayRead &r : c.reads) {
    line("/* failed {" + join(r.failed) + "}, disk " + std::to_string(r.disk) + ": reads disks {" + join(r.inputs) +
         "}, " + std::to_string(r.cells) + " cells per stripe */");
    line("void " + r.symbol + kKernelArgs + ";");
  }
  line("struct " + P + "_read {");
  line("  unsigned n_failed;          /* entries used in failed[] */");
  line("  unsigned failed[" + U + "_M];  /* the failed disks, ascending */");
  line("  unsigned disk;              /* the lost disk read */");
  line("  unsigned n_inputs;          /* entries used in inputs[] */");
  line("  unsigned inputs[" + U + "_DISKS];  /* the disks read, ascending */");
  line("  unsigned cells_read;        /* cells read per stripe */");
  line("  " + P + "_kernel_fn fn;");
  line("};");
  if (c.reads.empty()) return h + "\n";  // no --decoders: no reads, no read_range
  line("static const struct " + P + "_read " + P + "_reads[" + U + "_READ_COUNT] = {");
  for (size_t i = 0; i < c.reads.size(); ++i) {
    const AotArrayRead &r = c.reads[i];
    line("    {" + std::to_string(r.failed.size()) + ", {" + join(r.failed) + "}, " + std::to_string(r.disk) + ", " +
         std::to_string(r.inputs.size()) + ", {" + join(r.inputs) + "}, " + std::to_string(r.cells) + ", " +
         r.symbol + (i + 1 < c.reads.size() ? "}," : "}"));
  }
  line("};");
  line();
  line("#define " + U + "_READ_OK 0");
  line("#define " + U + "_READ_NO_KERNEL (-1) /* no read kernel for that failed set and disk */");
  line("#define " + U + "_READ_RANGE (-2)     /* a disk out of range, len not whole stripes, a range past len */");
  line("#define " + U + "_READ_SCRATCH (-3)   /* a stripe read in part and no scratch */");
  line();
  line("/* Bytes [offset, offset + size) of disk `disk` into out, from a disk array of len bytes per");
  line(" * disk (whole stripes) whose disks failed[0..n_failed) are lost (any order; their entries of");
  line(" * disks[] are never read and may be NULL). A present disk is copied; a lost one is rebuilt by");
  line(" * the read kernel of its failed set: whole stripes straight into out, a stripe read in part");
  line(" * whole into scratch (" + U + "_STRIPE_BYTES bytes; may be NULL when offset and size are whole");
  line(" * stripes) and the part copied. Returns " + U + "_READ_OK or one of the errors above, having");
  line(" * written nothing. Reentrant; calls no library function (a compiler may make its byte copies");
  line(" * memcpy calls). */");
  line("static inline int " + P + "_read_range(const uint8_t *const *disks, const unsigned *failed, unsigned n_failed,");
  line("                                  unsigned disk, size_t len, size_t offset, size_t size,");
  line("                                  uint8_t *out, uint8_t *scratch) {");
  line("  const size_t S = " + U + "_STRIPE_BYTES;");
  line("  const struct " + P + "_read *r = 0;");
  line("  const uint8_t *in[" + U + "_DISKS];");
  line("  uint64_t mask = 0;");
  line("  size_t base, end, i;");
  line("  unsigned d;");
  line("  if (disk >= " + U + "_DISKS || len % S != 0 || offset > len || size > len - offset) return " + U +
       "_READ_RANGE;");
  line("  for (i = 0; i < n_failed; ++i) {");
  line("    if (failed[i] >= " + U + "_DISKS) return " + U + "_READ_RANGE;");
  line("    mask |= (uint64_t)1 << failed[i];");
  line("  }");
  line("  if (!((mask >> disk) & 1)) {");
  line("    for (i = 0; i < size; ++i) out[i] = disks[disk][offset + i];");
  line("    return " + U + "_READ_OK;");
  line("  }");
  line("  for (i = 0; i < " + U + "_READ_COUNT && !r; ++i) {");
  line("    uint64_t m = 0;");
  line("    for (d = 0; d < " + P + "_reads[i].n_failed; ++d) m |= (uint64_t)1 << " + P + "_reads[i].failed[d];");
  line("    if (m == mask && " + P + "_reads[i].disk == disk) r = &" + P + "_reads[i];");
  line("  }");
  line("  if (!r) return " + U + "_READ_NO_KERNEL;");
  line("  if (size == 0) return " + U + "_READ_OK;");
  line("  end = offset + size;");
  line("  if (!scratch && (offset % S != 0 || end % S != 0)) return " + U + "_READ_SCRATCH;");
  line("  for (base = offset - offset % S; base < end;) {");
  line("    const int part = offset > base || end < base + S;");
  line("    const size_t run = part ? S : (end - base) / S * S;");
  line("    uint8_t *dst = part ? scratch : out + (base - offset);");
  line("    for (d = 0; d < " + U + "_DISKS; ++d) in[d] = (mask >> d) & 1 ? 0 : disks[d] + base;");
  line("    r->fn(in, &dst, run);");
  line("    if (part) {");
  line("      const size_t from = offset > base ? offset : base, to = end < base + S ? end : base + S;");
  line("      for (i = from; i < to; ++i) out[i - offset] = scratch[i - base];");
  line("    }");
  line("    base += run;");
  line("  }");
  line("  return " + U + "_READ_OK;");
  line("}");
  line();
  return h;
}

}  // namespace

std::string aot_array_header_text(const ArrayAotContents &c) {
  const codes::ArrayLayout &L = c.layout;
  const std::string P = c.prefix, U = upper(c.prefix);
  const std::string guard = U + "_AOT_H_";
  std::string h;
  auto line = [&](const std::string &s = "") { h += s + "\n"; };
  size_t max_failed = 1;
  for (const AotDecoder &d : c.rebuilds) max_failed = std::max(max_failed, d.outputs.size());

  line("/* Generated by `ecjit aot` (ecjit " ECJIT_VERSION ", LLVM " LLVM_VERSION_STRING "); do not edit.");
  line(" *   spec      " + c.spec.to_string());
  line(" *   target    " + c.target_text + " (" + c.target_details + ")");
  line(" *   strategy  xor (encoder schedule " + c.encode_schedule + "), " + c.opt);
  line(" *");
  line(" * An XOR array code at element level: a stripe is " + U + "_ROWS rows x " + U + "_DISKS disks of");
  line(" * " + U + "_ELEMENT-byte cells. A disk buffer is a whole number of stripes; cell (r, d) of stripe");
  line(" * s is bytes [(s ROWS + r) ELEMENT, (s ROWS + r + 1) ELEMENT) of disk d's buffer. " + P + "_parity_cells");
  line(" * marks the cells that hold parity (every other cell holds data).");
  line(" *");
  line(" * Kernel ABI of the encoder and the rebuilds:");
  line(" *   void f(const uint8_t *const *in, uint8_t *const *out, size_t len);");
  line(" * in and out are both the array of the " + U + "_DISKS disk buffers (the same pointers): a kernel");
  line(" * reads the cells it needs and writes the cells it computes, in place. len is bytes per");
  line(" * disk; every whole stripe in it is coded, a trailing partial stripe is left untouched; no");
  line(" * alignment is needed. The kernels keep no state and call no library function: reentrant");
  line(" * and thread-safe on distinct buffers.");
  line(" */");
  h += header_open(guard);
  line("#define " + U + "_DISKS " + std::to_string(L.disks));
  line("#define " + U + "_ROWS " + std::to_string(L.rows));
  line("#define " + U + "_ELEMENT " + std::to_string(c.spec.element));
  line("#define " + U + "_STRIPE_BYTES " + std::to_string(size_t(L.rows) * c.spec.element));
  line("/* Under the names the other codes' headers use: the disks are the shards, a stripe is the");
  line(" * unit of lengths; a rebuild reads at most K disks and writes at most M. */");
  line("#define " + U + "_N " + U + "_DISKS");
  line("#define " + U + "_K " + U + "_DISKS");
  line("#define " + U + "_M " + std::to_string(max_failed));
  line("#define " + U + "_BLOCK_BYTES " + U + "_STRIPE_BYTES");
  line("#define " + U + "_SYMBOL_BYTES " + U + "_STRIPE_BYTES");
  line("#define " + U + "_ALIGNMENT 1");
  line();
  line("/* 1 where cell (row, disk) holds parity. */");
  line("static const uint8_t " + P + "_parity_cells[" + std::to_string(L.rows) + "][" + std::to_string(L.disks) +
       "] = {");
  for (unsigned r = 0; r < L.rows; ++r) {
    std::string row = "    {";
    for (unsigned d = 0; d < L.disks; ++d) row += std::string(d ? ", " : "") + (L.is_parity(L.cell(r, d)) ? "1" : "0");
    line(row + (r + 1 < L.rows ? "}," : "}"));
  }
  line("};");
  line();
  h += xor_kernels_and_close(
      P, U, guard, "Encoder: every parity cell from the data cells.", c.encode_symbol,
      "/* Rebuilds for the failed-disk sets fixed at build time: each writes every cell of the\n"
      " * disks in erased[] from the disks in inputs[] (both indices into the disk array). */",
      c.rebuilds, "failed {%s}: reads disks {%s}", array_reads_text(c));
  return h;
}

std::string aot_fft_steps_header_text(const FftStepsAotContents &c) {
  const std::string U = upper(c.prefix);
  const std::string guard = U + "_AOT_H_";
  const std::string args = "(uint8_t *const *ptr, const void *steps, size_t count, const uint8_t *tables, size_t bytes)";
  std::string h;
  auto line = [&](const std::string &s = "") { h += s + "\n"; };
  line("/* Generated by `ecjit aot --op steps` (ecjit " ECJIT_VERSION ", LLVM " LLVM_VERSION_STRING "); do not edit.");
  line(std::string(" *   field     ") + (c.gf8 ? "Leopard-RS's GF(2^8)" : "reed-solomon-simd's GF(2^16)"));
  line(" *   target    " + c.target_text + " (" + c.target_details + ")");
  line(" *   strategy  fft steps (multiplies by " + c.multiplies + "), " + c.opt);
  line(" *");
  line(" * rs-fft step kernels: each runs `count` steps of an rs-fft step program (the executor of");
  line(" * ecjit's ir_builders/fft_step_kernel.h, this build's step and multiplier-table layouts)");
  line(" * over `bytes` of every work slot of ptr[]. transform_steps runs the transforms' kinds,");
  line(" * steps every kind (the decode core's too). Internal to the ecjit build that wrote them.");
  line(" */");
  h += header_open(guard);
  line("#define " + U + "_MULTIPLIES \"" + c.multiplies + "\"");
  line("#define " + U + "_WHOLE_COLUMNS " + std::string(c.whole_columns ? "1" : "0"));
  line("#define " + U + "_VECTOR_BITS " + std::to_string(c.vector_bits));
  line();
  line("void " + c.transform_steps_symbol + args + ";");
  line("void " + c.steps_symbol + args + ";");
  line();
  return h + header_close(guard);
}

std::string aot_shape_header_text(const AotShapeContents &c) {
  const std::string P = c.prefix, U = upper(c.prefix);
  const unsigned bits = c.field.bits();
  const std::string guard = U + "_AOT_H_";
  const std::string args = "(const uint8_t *const *in, uint8_t *const *out, size_t len, const uint8_t *coeffs)";
  std::string h;
  auto line = [&](const std::string &s = "") { h += s + "\n"; };
  line("/* Generated by `ecjit aot --op shape` (ecjit " ECJIT_VERSION ", LLVM " LLVM_VERSION_STRING "); do not edit.");
  line(" *   field     GF(2^" + std::to_string(bits) + "), p(X) = X^" + std::to_string(bits) + " + " +
       hex(c.field.poly()));
  line(" *   target    " + c.target_text + " (" + c.target_details + ")");
  line(" *   strategy  " + c.strategy + ", " + c.opt);
  line(" *");
  line(" * Shape kernels: out[r] (^)= sum_c C[r][c] * in[c] for any outputs x inputs matrix C whose");
  line(" * coefficients arrive at run time, prepared once per matrix: coefficient (r, c) at byte");
  line(" * (r * inputs + c) * " + U + "_COEFF_BYTES of coeffs, " + c.layout_text + ".");
  line(" *   void f" + args + ";");
  line(" * len is bytes per shard (any, no alignment needed); outputs must not overlap inputs, each");
  line(" * other or coeffs. Overwrite kernels never read out; accumulate kernels (ACC 1) XOR into it.");
  line(" * Reentrant and thread-safe; no library calls.");
  line(" */");
  h += header_open(guard);
  line("#define " + U + "_FIELD_BITS " + std::to_string(bits));
  line("#define " + U + "_COEFF_BYTES " + std::to_string(c.coeff_bytes));
  line("#define " + U + "_STRATEGY \"" + c.strategy + "\"");
  line("#define " + U + "_SHAPE_COUNT " + std::to_string(c.shapes.size()));
  line();
  line("typedef void (*" + P + "_shape_fn)" + args + ";");
  for (const AotShape &s : c.shapes) line("void " + s.symbol + args + ";");
  line();
  line("/* { inputs, outputs, accumulate, kernel } */");
  line("struct " + P + "_shape { unsigned inputs, outputs, accumulate; " + P + "_shape_fn fn; };");
  line("static const struct " + P + "_shape " + P + "_shapes[" + U + "_SHAPE_COUNT] = {");
  for (const AotShape &s : c.shapes)
    line("    {" + std::to_string(s.inputs) + ", " + std::to_string(s.outputs) + ", " +
         (s.accumulate ? "1" : "0") + ", " + s.symbol + "},");
  line("};");
  line();
  return h + header_close(guard);
}

std::string aot_runtime_c_name(const AotContents &c) { return c.prefix + "_runtime.c"; }

std::string aot_runtime_c_text(const AotContents &c) {
  const codes::LinearCode &code = c.code;
  const unsigned bits = code.field.bits();
  std::string s = kRuntimeTemplate;
  replace_all(s, "@UPREFIX@", upper(c.prefix));
  replace_all(s, "@PREFIX@", c.prefix);
  replace_all(s, "@SPEC@", code.spec.to_string());
  replace_all(s, "@VERSION@", ECJIT_VERSION);
  replace_all(s, "@K@", std::to_string(code.k));
  replace_all(s, "@M@", std::to_string(code.m));
  replace_all(s, "@N@", std::to_string(code.n()));
  replace_all(s, "@BITS@", std::to_string(bits));
  replace_all(s, "@SYMBYTES@", std::to_string(code.field.bytes()));
  replace_all(s, "@POLYLOW@", hex(code.field.poly()) + "ull");
  replace_all(s, "@MASK@", hex(code.field.mask()) + "ull");
  replace_all(s, "@ELEM@", elem_type(bits));
  replace_all(s, "@PARITY@", parity_initializer(code, ""));
  return s;
}

}  // namespace ecjit::tools
