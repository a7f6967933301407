// XorProgram: counts, listing, symbolic check, reference interpreter.
#include "codes/xor_program.h"

#include <cstring>

namespace ecjit::codes {

size_t XorProgram::copies() const {
  std::vector<unsigned> uses(values(), 0);
  std::vector<bool> is_output(values(), false);
  for (const Op &op : ops) {
    ++uses[op.a];
    ++uses[op.b];
  }
  size_t copies = 0;
  for (uint32_t v : outputs) {
    if (v == kZero) continue;
    if (v < inputs || is_output[v]) ++copies;  // copied from an input / from another output
    is_output[v] = true;
  }
  for (const Op &op : ops) {
    // In place (no copy) when a is a temporary read by this op only; either operand may
    // play a, XOR commutes.
    auto in_place = [&](uint32_t x) { return x >= inputs && uses[x] == 1 && !is_output[x]; };
    if (!in_place(op.a) && !in_place(op.b)) ++copies;
  }
  return copies;
}

std::string XorProgram::to_string() const {
  auto name = [&](uint32_t v) {
    return v < inputs ? "in" + std::to_string(v) : "t" + std::to_string(v - inputs);
  };
  std::string s;
  for (size_t i = 0; i < ops.size(); ++i)
    s += "t" + std::to_string(i) + " = " + name(ops[i].a) + " ^ " + name(ops[i].b) + "\n";
  for (size_t r = 0; r < outputs.size(); ++r)
    s += "out" + std::to_string(r) + " = " + (outputs[r] == kZero ? "0" : name(outputs[r])) + "\n";
  return s;
}

Status check_program(const XorProgram &p, const BitMatrix &M) {
  auto fail = [](const std::string &m) { return Status(StatusCode::kInternal, "xor program: " + m); };
  if (p.inputs != M.cols) return fail("has " + std::to_string(p.inputs) + " inputs, matrix " + std::to_string(M.cols));
  if (p.outputs.size() != M.rows)
    return fail("has " + std::to_string(p.outputs.size()) + " outputs, matrix " + std::to_string(M.rows));
  const unsigned words = M.words();
  std::vector<uint64_t> val(p.values() * words, 0);
  for (unsigned i = 0; i < p.inputs; ++i) val[size_t(i) * words + i / 64] = uint64_t(1) << (i % 64);
  for (size_t i = 0; i < p.ops.size(); ++i) {
    const size_t v = p.inputs + i;
    if (p.ops[i].a >= v || p.ops[i].b >= v) return fail("op " + std::to_string(i) + " reads a later value");
    for (unsigned w = 0; w < words; ++w)
      val[v * words + w] = val[size_t(p.ops[i].a) * words + w] ^ val[size_t(p.ops[i].b) * words + w];
  }
  for (unsigned r = 0; r < M.rows; ++r) {
    const uint32_t v = p.outputs[r];
    if (v != XorProgram::kZero && v >= p.values()) return fail("output " + std::to_string(r) + " names no value");
    for (unsigned w = 0; w < words; ++w) {
      const uint64_t got = v == XorProgram::kZero ? 0 : val[size_t(v) * words + w];
      if (got != M.row(r)[w]) return fail("output " + std::to_string(r) + " differs from its bit-matrix row");
    }
  }
  return Status::Ok();
}

void run_program(const XorProgram &p, const uint8_t *const *in, uint8_t *const *out,
                 size_t bytes) {
  std::vector<uint8_t> scratch(p.ops.size() * bytes);
  auto ptr = [&](uint32_t v) -> const uint8_t * {
    return v < p.inputs ? in[v] : scratch.data() + (v - p.inputs) * bytes;
  };
  for (size_t i = 0; i < p.ops.size(); ++i) {
    const uint8_t *a = ptr(p.ops[i].a), *b = ptr(p.ops[i].b);
    uint8_t *d = scratch.data() + i * bytes;
    for (size_t j = 0; j < bytes; ++j) d[j] = a[j] ^ b[j];
  }
  for (size_t r = 0; r < p.outputs.size(); ++r) {
    if (p.outputs[r] == XorProgram::kZero) std::memset(out[r], 0, bytes);
    else std::memcpy(out[r], ptr(p.outputs[r]), bytes);
  }
}

}  // namespace ecjit::codes
