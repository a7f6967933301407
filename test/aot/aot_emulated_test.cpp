// AOT objects on foreign ISAs: cross-compiled harness + `ecjit aot` object under qemu-user, compared with the reference codec.
//
// For each (target, code): `ecjit aot` writes codec.o, codec.h and codec_runtime.c; the
// harness (test/aot/harness.c) is compiled with the target's cross compiler (Debian gcc, or
// clang 19 + ld.lld freestanding for Hexagon), linked statically with them and run under
// qemu-<arch>-static (x86-64 tiers run natively when this CPU has them). Its output (every
// data, parity and rebuilt shard, and the runtime C's decode matrices) is checked here byte
// for byte against codes::ref_encode, plan_reconstruct and the original shards. Bit-matrix
// (XOR) codes have no generic kernel or runtime C: encoder and decoders only, checked against
// codes::ref_bitmatrix_encode, with lengths in whole blocks. Array codes (xcode, bpcode) run
// encoder and failed-disk rebuilds in place on the disks, checked against codes::encode_layout
// (the parity chains' definitions).
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <vector>

#include "codes/array_layout.h"
#include "codes/bitmatrix_code.h"
#include "codes/decode.h"
#include "codes/linear_code.h"
#include "codes/reference_codec.h"
#include "codes/rs_fft.h"
#include "test/aot/aot_test_util.h"

namespace ecjit::aot_test {
namespace {

enum class Runner { kAArch64, kArm, kRiscv, kRiscvV, kHexagon, kNative };

struct Case {
  std::string target;
  std::string spec;
  std::string decoders;  // --decoders
  Runner runner;
  std::string strategy = "auto";
  const char *native_feature = nullptr;  // kNative: what the CPU needs (see MatchesReferenceCodec)
};

std::string case_name(const Case &c) {
  std::string n = c.target + "__" + c.spec;
  if (c.strategy != "auto") n += "__" + c.strategy;
  return ident(n);
}

void PrintTo(const Case &c, std::ostream *os) { *os << case_name(c); }

const char *kGf8 = "rs-vand:k=10,m=4,gf=8";
const char *kGf8Dec = "0,3;1,2,11;10,11,12,13;0,1,2,3";
const char *kGf16 = "rs-cauchy:k=8,m=3,gf=16";
const char *kGf16Dec = "0;2,5,9;8,9,10";
const char *kIsal = "isal-rs:k=5,m=2";
const char *kIsalDec = "0,6;3";

std::vector<Case> cases() {
  std::vector<Case> v;
  const struct {
    const char *target;
    Runner runner;
    const char *feature;
  } kTargets[] = {
      {"aarch64", Runner::kAArch64, nullptr},  {"armv7", Runner::kArm, nullptr},
      {"riscv64", Runner::kRiscv, nullptr},    {"riscv64-v", Runner::kRiscvV, nullptr},
      {"hexagon-v68", Runner::kHexagon, nullptr}, {"hexagon-v68+hvx", Runner::kHexagon, nullptr},
      {"x86_64", Runner::kNative, nullptr},    {"x86_64-v3", Runner::kNative, "avx2"},
      {"x86_64-v4", Runner::kNative, "avx512bw"},
  };
  for (const auto &t : kTargets) {
    v.push_back({t.target, kGf8, kGf8Dec, t.runner, "auto", t.feature});
    v.push_back({t.target, kGf16, kGf16Dec, t.runner, "auto", t.feature});
  }
  // Both lowerings where auto picks split-table, and a third code on the NEON targets.
  v.push_back({"aarch64", kGf8, kGf8Dec, Runner::kAArch64, "clmul-shift"});
  v.push_back({"aarch64", kIsal, kIsalDec, Runner::kAArch64});
  v.push_back({"armv7", kIsal, kIsalDec, Runner::kArm});
  v.push_back({"x86_64-v3", kGf16, kGf16Dec, Runner::kNative, "clmul-shift", "avx2"});
  // The x86 instruction lowerings, AOT at 512 bits (run where the CPU has them).
  v.push_back({"x86_64-v4+gfni", kGf8, kGf8Dec, Runner::kNative, "gfni", "gfni"});
  v.push_back({"x86_64-v4+gfni", kGf16, kGf16Dec, Runner::kNative, "gfni", "gfni"});
  v.push_back({"x86_64-v4+vpclmulqdq", "rs-vand:k=5,m=3,gf=64", "0,4;1,2,6",
               Runner::kNative, "clmul-insn", "vpclmulqdq"});
  // PMULL (AArch64 AES extension) for the wide fields, under qemu.
  v.push_back({"aarch64+aes", "rs-vand:k=5,m=3,gf=64", "0,4;1,2,6", Runner::kAArch64, "clmul-insn"});
  v.push_back({"aarch64+aes", "rs-cauchy:k=6,m=3,gf=32", "2;0,5,7", Runner::kAArch64, "clmul-insn"});
  // clmul-mixed: every parity row mixes short constants (shifts) and dense ones (the
  // instruction) in one sum; MDS (ecjit check-mds).
  const char *mixed64 =
      "matrix:k=4,m=2,gf=64,a=13.9e3779b97f4a7c15.105.c2b2ae3d27d4eb4f/"
      "9.d6e8feb86659fd93.87c37b91114253d5.3";
  const char *mixed32 = "matrix:k=4,m=2,gf=32,a=13.9e3779b9.105.c2b2ae3d/9.d6e8feb8.87c37b91.3";
  v.push_back({"aarch64+aes", mixed64, "0,4;1,2", Runner::kAArch64, "clmul-mixed"});
  v.push_back({"aarch64+aes", mixed32, "3;0,5", Runner::kAArch64, "clmul-mixed"});
  v.push_back({"x86_64-v3+vpclmulqdq", mixed64, "0,4;1,2", Runner::kNative, "clmul-mixed",
               "vpclmulqdq-avx2"});
  // Wider fields: packed into 64-bit registers (riscv64), 32-bit HVX lanes, 64-bit NEON lanes.
  v.push_back({"riscv64", "rs-vand:k=4,m=2,gf=32", "1;0,5", Runner::kRiscv});
  v.push_back({"hexagon-v68+hvx", "rs-vand:k=4,m=2,gf=32", "1;0,5", Runner::kHexagon});
  v.push_back({"aarch64", "rs-vand:k=3,m=2,gf=64", "0,4", Runner::kAArch64});
  // XOR bit-matrix codes: NEON, Hexagon scalar and HVX (128-byte packets fill one
  // HVX vector), ARMv7, RISC-V V.
  v.push_back({"aarch64", "liber8tion:k=8", "0,3;1,9", Runner::kAArch64});
  v.push_back({"aarch64", "cauchy-good:k=6,m=3,w=8", "0,4,7;2", Runner::kAArch64});
  v.push_back({"hexagon-v68", "liberation:k=5,w=5,packet=32", "1,6;0", Runner::kHexagon});
  v.push_back({"hexagon-v68+hvx", "cauchy-good:k=6,m=3,w=8,packet=128", "0,4,7;2", Runner::kHexagon});
  v.push_back({"armv7", "blaum-roth:k=4,w=4", "0,5", Runner::kArm});
  v.push_back({"riscv64-v", "cauchy-orig:k=4,m=2,w=4,packet=16", "1,4", Runner::kRiscvV});
  // Array codes: parity on the data disks, kernels in place; native, NEON, HVX.
  v.push_back({"x86_64-v3", "xcode:p=7", "0;1,4;5,6", Runner::kNative, "auto", "avx2"});
  v.push_back({"aarch64", "bpcode:p=7", "0;2,3;4,5", Runner::kAArch64});
  v.push_back({"hexagon-v68+hvx", "xcode:p=5,element=128", "1;0,4", Runner::kHexagon});
  // rs-fft: the unrolled encoder and decoders of sets the inverted encoder takes
  // (high rate: originals of one whole chunk, every recovery shard read; low rate: recovery
  // from every original), in whole 64-byte columns; nibble lookups on AVX2 and NEON, GFNI
  // affine blocks where the host has GFNI.
  v.push_back({"x86_64-v3", "rs-fft:k=10,m=4", "0,1,2,3;5,6", Runner::kNative, "auto", "avx2"});
  v.push_back({"x86_64-v3+gfni", "rs-fft:k=10,m=4", "0,1,2,3;5,6", Runner::kNative, "auto", "gfni"});
  v.push_back({"aarch64", "rs-fft:k=6,m=9", "6,7,14", Runner::kAArch64});
  v.push_back({"aarch64", "rs-fft:k=16,m=16", "0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15;3,9", Runner::kAArch64});
  // rs-fft over GF(2^8) (Leopard-RS / klauspost's leopard8): two nibble lookups per multiply
  // on NEON and AVX2, one affine transform with GFNI.
  v.push_back({"aarch64", "rs-fft:k=12,m=4,gf=8", "0,1,2,3;4,5,6,7", Runner::kAArch64});
  v.push_back({"x86_64-v3", "rs-fft:k=10,m=4,gf=8", "0,1,2,3;5,6", Runner::kNative, "auto", "avx2"});
  v.push_back({"x86_64-v3+gfni", "rs-fft:k=10,m=4,gf=8", "0,1,2,3;5,6", Runner::kNative, "auto", "gfni"});
  return v;
}

struct Toolchain {
  std::string compile;  // compiler and flags, before the sources
  std::string run;      // command prefix that runs the binary
};

// Empty compile: the tools are missing (message in *why).
Toolchain toolchain(Runner r, std::string *why) {
  auto need = [&](const char *path, const char *what) {
    if (*path && exists(path)) return true;
    *why += std::string(why->empty() ? "" : ", ") + what + " not found";
    return false;
  };
  auto all_of = [](std::initializer_list<bool> v) {  // every check runs, so *why lists all
    for (bool b : v)
      if (!b) return false;
    return true;
  };
  const std::string warn = " -std=c99 -pedantic -Wall -Wextra -Werror -O2";
  switch (r) {
    case Runner::kAArch64:
      if (all_of({need(ECJIT_AARCH64_CC, "aarch64-linux-gnu-gcc"), need(ECJIT_QEMU_AARCH64, "qemu-aarch64-static")}))
        return {sh(ECJIT_AARCH64_CC) + warn + " -static", sh(ECJIT_QEMU_AARCH64)};
      break;
    case Runner::kArm:
      if (all_of({need(ECJIT_ARM_CC, "arm-linux-gnueabihf-gcc"), need(ECJIT_QEMU_ARM, "qemu-arm-static")}))
        return {sh(ECJIT_ARM_CC) + warn + " -static -mfpu=neon -mfloat-abi=hard", sh(ECJIT_QEMU_ARM)};
      break;
    case Runner::kRiscv:
    case Runner::kRiscvV:
      if (all_of({need(ECJIT_RISCV64_CC, "riscv64-linux-gnu-gcc"), need(ECJIT_QEMU_RISCV64, "qemu-riscv64-static")}))
        return {sh(ECJIT_RISCV64_CC) + warn + " -static",
                sh(ECJIT_QEMU_RISCV64) +
                    (r == Runner::kRiscvV ? " -cpu rv64,v=true,vlen=128,elen=64,vext_spec=v1.0" : "")};
      break;
    case Runner::kHexagon:
      // No C library for Hexagon is packaged: the harness is freestanding (own _start and
      // system calls). Debian 12's QEMU 7.2 knows the CPU model v67 only; the v68 ISA subset
      // the kernels use (and HVX) runs on it.
      if (all_of({need(ECJIT_CLANG, "clang-19"), need(ECJIT_LLD, "ld.lld-19"), need(ECJIT_QEMU_HEXAGON, "qemu-hexagon-static")}))
        return {sh(ECJIT_CLANG) + " --target=hexagon-unknown-linux-musl -mcpu=hexagonv68 -ffreestanding"
                    " -nostdlib -static -fuse-ld=lld -DECJIT_FREESTANDING" + warn,
                sh(ECJIT_QEMU_HEXAGON) + " -cpu v67"};
      break;
    case Runner::kNative:
      return {sh(ECJIT_CLANG) + warn, ""};
  }
  return {};
}

std::vector<unsigned> parse_list(const std::string &s) {
  std::vector<unsigned> v;
  if (s == "-") return v;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) v.push_back(unsigned(std::stoul(item)));
  return v;
}

std::vector<uint8_t> parse_hex(const std::string &s) {
  std::vector<uint8_t> v(s.size() / 2);
  for (size_t i = 0; i < v.size(); ++i) v[i] = uint8_t(std::stoul(s.substr(2 * i, 2), nullptr, 16));
  return v;
}

std::string first_difference(const std::vector<uint8_t> &got, const std::vector<uint8_t> &want) {
  if (got.size() != want.size())
    return "size " + std::to_string(got.size()) + " != " + std::to_string(want.size());
  for (size_t i = 0; i < got.size(); ++i)
    if (got[i] != want[i])
      return "first difference at byte " + std::to_string(i) + ": got " + std::to_string(got[i]) +
             ", want " + std::to_string(want[i]);
  return "";
}

// Checks the harness output against the reference codec. Returns "" or the first problem.
// The code a harness ran: a symbol code (with the generic kernel and the runtime C lines) or
// a bit-matrix code (encoder and decoders only).
struct RefCode {
  std::optional<codes::LinearCode> code;
  std::optional<codes::BitMatrixCode> bits;
  bool fft = false;  // rs-fft: codes::fft's reference encoder (decoders restore its shards)
  codes::fft::Gf gf = codes::fft::Gf::k16;
  unsigned k = 0, m = 0;
  unsigned n() const { return k + m; }
  void encode(const uint8_t *const *data, uint8_t *const *parity, size_t len) const {
    if (code) (void)codes::ref_encode(*code, data, parity, len);
    else if (bits) (void)codes::ref_bitmatrix_encode(*bits, data, parity, len);
    else (void)codes::fft::encode_bytes(k, m, len, data, parity, gf);
  }
};

RefCode ref_code(const std::string &spec) {
  RefCode r;
  Result<CodeSpec> parsed = CodeSpec::parse(spec);
  EXPECT_TRUE(parsed.ok()) << spec;
  if (parsed->family == CodeFamily::kRsFft) {
    r.fft = true;
    r.gf = codes::fft::gf_of_bits(parsed->gf);
    r.k = parsed->k;
    r.m = parsed->m;
  } else if (parsed->bitmatrix()) {
    r.bits = *codes::build_bitmatrix_code(*parsed);
    r.k = r.bits->k;
    r.m = r.bits->m;
  } else {
    r.code = *codes::build_code(*parsed);
    r.k = r.code->k;
    r.m = r.code->m;
  }
  return r;
}

// A harness line that is not data: "E <what>" (a kernel wrote past len) and any unknown line
// are problems; "X <status>" ends the output (*done), a problem unless the status is 0.
std::string other_line(const std::string &tag, std::stringstream &ls, const std::string &line, bool *done) {
  if (tag == "E") return "a kernel wrote outside [0, len): " + line;
  if (tag != "X") return "unexpected line: " + line.substr(0, 80);
  std::string st;
  ls >> st;
  if (st != "0") return "harness status " + st;
  *done = true;
  return "";
}

std::string verify(const RefCode &ref, const std::vector<std::vector<unsigned>> &decoders,
                   const std::string &output) {
  const unsigned k = ref.k, m = ref.m, n = ref.n();
  std::stringstream in(output);
  std::string line;
  size_t len = 0;
  std::vector<std::vector<uint8_t>> shards;  // reference: data from the harness, parity from ref_encode
  bool have_ref = false;
  unsigned lengths = 0, p_lines = 0, q_lines = 0, g_lines = 0;
  std::map<std::vector<unsigned>, unsigned> d_lines;
  bool done = false;

  auto reference = [&]() {
    if (have_ref) return;
    std::vector<const uint8_t *> data(k);
    std::vector<uint8_t *> parity(m);
    for (unsigned s = 0; s < k; ++s) data[s] = shards[s].data();
    for (unsigned r = 0; r < m; ++r) parity[r] = shards[k + r].data();
    ref.encode(data.data(), parity.data(), len);
    have_ref = true;
  };
  auto check_shard = [&](const std::string &what, unsigned s, const std::string &hex) -> std::string {
    reference();
    if (s >= n) return what + ": shard " + std::to_string(s) + " out of range";
    const std::string diff = first_difference(parse_hex(hex), shards[s]);
    return diff.empty() ? "" : what + " shard " + std::to_string(s) + " (len " + std::to_string(len) + "): " + diff;
  };

  while (std::getline(in, line)) {
    std::stringstream ls(line);
    std::string tag;
    ls >> tag;
    std::string err;
    if (tag == "L") {
      ls >> len;
      shards.assign(n, std::vector<uint8_t>(len, 0));
      have_ref = false;
      ++lengths;
    } else if (tag == "I") {
      unsigned s;
      std::string hex;
      ls >> s >> hex;
      if (s >= k) return "data shard index " + std::to_string(s);
      shards[s] = parse_hex(hex);
      if (shards[s].size() != len) return "data shard of wrong size";
    } else if (tag == "P" || tag == "Q") {
      unsigned s;
      std::string hex;
      ls >> s >> hex;
      err = check_shard(tag == "P" ? "encoder" : "generic kernel as encoder", s, hex);
      ++(tag == "P" ? p_lines : q_lines);
    } else if (tag == "D") {
      std::string set, hex;
      unsigned s;
      ls >> set >> s >> hex;
      err = check_shard("decoder {" + set + "}", s, hex);
      ++d_lines[parse_list(set)];
    } else if (tag == "C") {
      std::string set, rc, sources, hex;
      ls >> set >> rc >> sources >> hex;
      const std::vector<unsigned> erased = parse_list(set);
      std::vector<bool> present(n, true);
      for (unsigned s : erased) present[s] = false;
      if (!ref.code) return "runtime C line from a bit-matrix code's harness";
      const codes::LinearCode &code = *ref.code;
      Result<codes::DecodePlan> plan = codes::plan_reconstruct(code, present);
      if (!plan.ok()) {
        const std::string want = plan.status().code() == StatusCode::kTooManyErasures ? "101" : "102";
        if (rc != want) err = "runtime C for {" + set + "}: rc " + rc + ", want " + want;
      } else if (rc != "0") {
        err = "runtime C for {" + set + "}: rc " + rc + ", want 0";
      } else if (parse_list(sources) != plan->sources) {
        err = "runtime C for {" + set + "}: sources " + sources;
      } else {
        std::vector<uint8_t> want;
        for (uint64_t a : plan->coeffs.a)
          for (unsigned b = 0; b < code.field.bytes(); ++b) want.push_back(uint8_t(a >> (8 * b)));
        const std::string diff = first_difference(parse_hex(hex), want);
        if (!diff.empty()) err = "runtime C decode matrix for {" + set + "}: " + diff;
      }
    } else if (tag == "G") {
      std::string set, hex;
      unsigned s;
      ls >> set >> s >> hex;
      err = check_shard("generic kernel for {" + set + "}", s, hex);
      ++g_lines;
    } else {
      err = other_line(tag, ls, line, &done);
    }
    if (!err.empty()) return err;
  }
  if (!done) return "harness output incomplete (no X line)";
  if (lengths != 4) return "expected 4 lengths, saw " + std::to_string(lengths);
  const bool generic = ref.code.has_value();  // bit-matrix codes have no generic kernel
  if (p_lines != 4 * m || q_lines != (generic ? 4 * m : 0))
    return "encoder lines " + std::to_string(p_lines) + ", generic encoder lines " + std::to_string(q_lines);
  for (const auto &d : decoders)
    if (d_lines[d] != 4 * d.size()) return "decoder lines missing for a set";
  if (generic && g_lines == 0) return "no generic-kernel reconstruction";
  return "";
}

// An array code's harness output (I, P, D and R lines over disks): the encoder keeps every
// data cell and gives every parity cell its chain's XOR (codes::encode_layout over the input
// disks), each rebuild gives the encoded disks back, each ranged read the encoded disk's
// bytes. Returns "" or the first problem.
std::string verify_array(const std::string &spec, const std::vector<std::vector<unsigned>> &sets,
                         const std::string &output) {
  const codes::ArraySpec as = *codes::parse_array_spec(spec);
  const codes::ArrayLayout L = *codes::array_layout(as.family, as.p);
  const size_t e = as.element, stripe = size_t(L.rows) * e;
  std::stringstream in(output);
  std::string line;
  size_t len = 0;
  std::vector<std::vector<uint8_t>> disks;  // the inputs, then the reference encoding
  bool encoded = false, done = false;
  unsigned lengths = 0, p_lines = 0;
  std::map<std::vector<unsigned>, unsigned> d_lines, r_lines;
  auto encode = [&] {
    if (encoded) return;
    std::vector<uint8_t *> ptrs;
    for (auto &d : disks) ptrs.push_back(d.data());
    codes::encode_disks(L, ptrs.data(), len / stripe * stripe, e);
    encoded = true;
  };
  while (std::getline(in, line)) {
    std::stringstream ls(line);
    std::string tag, hex, set;
    unsigned d = 0;
    ls >> tag;
    std::string err;
    if (tag == "L") {
      ls >> len;
      disks.assign(L.disks, std::vector<uint8_t>(len, 0));
      encoded = false;
      ++lengths;
    } else if (tag == "I") {
      ls >> d >> hex;
      if (d >= L.disks || encoded) return "unexpected input line: " + line.substr(0, 40);
      disks[d] = parse_hex(hex);
      if (disks[d].size() != len) return "input disk of wrong size";
    } else if (tag == "P" || tag == "D") {
      if (tag == "D") ls >> set;
      ls >> d >> hex;
      encode();
      if (d >= L.disks) return "disk " + std::to_string(d) + " out of range";
      const std::string diff = first_difference(parse_hex(hex), disks[d]);
      if (!diff.empty())
        err = (tag == "P" ? std::string("encoder") : "rebuild of {" + set + "}") + " disk " + std::to_string(d) +
              " (len " + std::to_string(len) + "): " + diff;
      if (tag == "P") ++p_lines;
      else ++d_lines[parse_list(set)];
    } else if (tag == "R") {  // a ranged read: bytes [offset, offset + size) of the encoded disk
      size_t offset = 0;
      ls >> set >> d >> offset >> hex;
      encode();
      const std::vector<uint8_t> got = parse_hex(hex);
      if (d >= L.disks || offset + got.size() > len) return "read out of range: " + line.substr(0, 40);
      const std::vector<uint8_t> want(disks[d].begin() + ptrdiff_t(offset),
                                      disks[d].begin() + ptrdiff_t(offset + got.size()));
      const std::string diff = first_difference(got, want);
      if (!diff.empty())
        err = "read of disk " + std::to_string(d) + " with {" + set + "} failed, bytes [" + std::to_string(offset) +
              ", +" + std::to_string(got.size()) + ") (len " + std::to_string(len) + "): " + diff;
      ++r_lines[parse_list(set)];
    } else {
      err = other_line(tag, ls, line, &done);
    }
    if (!err.empty()) return err;
  }
  if (!done) return "harness output incomplete (no X line)";
  if (lengths != 4) return "expected 4 lengths, saw " + std::to_string(lengths);
  if (p_lines != 4 * L.disks) return "encoder lines " + std::to_string(p_lines);
  for (const auto &s : sets) {
    if (d_lines[s] != 4 * s.size()) return "rebuild lines missing for a set";
    // Per length and lost disk: four ranges of it, one of a present disk, eight drawn at random.
    if (r_lines[s] != 52 * s.size()) return "read lines missing for a set: " + std::to_string(r_lines[s]);
  }
  return "";
}

bool is_array(const std::string &spec) { return !CodeSpec::parse(spec).ok() && codes::parse_array_spec(spec).ok(); }

std::vector<std::vector<unsigned>> decoder_sets(const Case &c) {
  std::vector<std::vector<unsigned>> sets;
  std::stringstream ds(c.decoders);
  std::string set;
  while (std::getline(ds, set, ';')) sets.push_back(parse_list(set));
  return sets;
}

// No generic kernel or runtime C file: bit-matrix, array and rs-fft codes.
bool is_bitmatrix(const Case &c) {
  if (is_array(c.spec)) return true;
  const CodeSpec spec = *CodeSpec::parse(c.spec);
  return spec.bitmatrix() || spec.family == CodeFamily::kRsFft;
}

std::string aot_args(const Case &c) {
  return "--spec " + sh(c.spec) + " --target " + sh(c.target) + " --strategy " + c.strategy +
         (c.decoders.empty() ? "" : " --decoders " + sh(c.decoders)) + (is_bitmatrix(c) ? "" : " --generic") +
         " --prefix codec";
}

// Writes the AOT files for c into a fresh directory, builds the harness and runs it. Returns
// false with a message in *problem when a step fails; *output gets the harness's stdout.
bool build_and_run(const Case &c, const Toolchain &tc, std::string *dir, std::string *output,
                   std::string *problem) {
  *dir = fresh_dir("emu_" + case_name(c));
  const std::string &d = *dir;
  const bool bits = is_bitmatrix(c);  // no runtime C file
  if (ecjit_aot(aot_args(c) + " -o " + sh(d + "/codec.o") + " --header " + sh(d + "/codec.h") +
                    (bits ? "" : " --runtime-c " + sh(d)),
                d) != 0) {
    *problem = "ecjit aot failed: " + read_file(d + "/aot.err");
    return false;
  }
  if (run(tc.compile + " -I" + sh(d) + " " + sh(ECJIT_HARNESS_SRC) + " " +
          (bits ? "" : sh(d + "/codec_runtime.c") + " ") + sh(d + "/codec.o") + " -o " + sh(d + "/harness") +
          " 2>" + sh(d + "/cc.err")) != 0) {
    *problem = "harness does not build: " + read_file(d + "/cc.err");
    return false;
  }
  const int rc = run(tc.run + " " + sh(d + "/harness") + " >" + sh(d + "/out.txt") + " 2>" +
                     sh(d + "/run.err"));
  *output = read_file(d + "/out.txt");
  if (rc != 0) {
    *problem = "harness exit status " + std::to_string(rc) + " " + read_file(d + "/run.err");
    return false;
  }
  return true;
}

class AotEmulated : public ::testing::TestWithParam<Case> {};

TEST_P(AotEmulated, MatchesReferenceCodec) {
  const Case &c = GetParam();
  if (c.runner == Runner::kNative && c.native_feature) {
    __builtin_cpu_init();
    const std::string f = c.native_feature;
    const bool has = f == "avx2"         ? __builtin_cpu_supports("avx2")
                     : f == "avx512bw"   ? __builtin_cpu_supports("avx512bw")
                     : f == "gfni"       ? __builtin_cpu_supports("gfni") &&
                                               __builtin_cpu_supports("avx512bw")
                     : f == "vpclmulqdq" ? __builtin_cpu_supports("vpclmulqdq") &&
                                               __builtin_cpu_supports("avx512bw")
                     : f == "vpclmulqdq-avx2" ? __builtin_cpu_supports("vpclmulqdq") &&
                                                    __builtin_cpu_supports("avx2")
                                              : false;
    if (!has) GTEST_SKIP() << "this CPU lacks " << c.native_feature << " to run " << c.target;
  }
  std::string why;
  const Toolchain tc = toolchain(c.runner, &why);
  if (tc.compile.empty()) {
    if (allow_skip()) GTEST_SKIP() << why;
    FAIL() << why << " (run scripts/setup.sh, or set ECJIT_AOT_ALLOW_SKIP=1)";
  }
  const std::string what = "spec " + c.spec + ", target " + c.target + ", strategy " + c.strategy;
  std::string dir, output, problem;
  const bool ran = build_and_run(c, tc, &dir, &output, &problem);
  if (ran)
    problem = is_array(c.spec) ? verify_array(c.spec, decoder_sets(c), output)
                               : verify(ref_code(c.spec), decoder_sets(c), output);
  if (!problem.empty()) {
    ecjit_aot(aot_args(c) + " --emit asm -o " + sh(dir + "/codec.s"), dir);
    FAIL() << what << ": " << problem << "\n  assembly: " << dir << "/codec.s";
  }
}

// `output` with the last hex digit of the first line starting with `tag` flipped; "" when no
// line does.
std::string flip_last_digit(std::string output, const char *tag) {
  const size_t at = output.find(tag);
  if (at == std::string::npos) return "";
  char &ch = output[output.find('\n', at + 1) - 1];
  ch = ch == '0' ? '1' : '0';
  return output;
}

// `output` without the lines starting with `tag` (which begins with the previous newline).
std::string without_lines(std::string output, const char *tag) {
  for (size_t at; (at = output.find(tag)) != std::string::npos;) output.erase(at + 1, output.find('\n', at + 1) - at);
  return output;
}

// The checker itself: a real run verifies, and each kind of corruption is caught.
TEST(AotEmulatedChecker, RejectsCorruptedOutput) {
  const Case c{"x86_64", kGf16, kGf16Dec, Runner::kNative};
  std::string why, dir, output, problem;
  ASSERT_TRUE(build_and_run(c, toolchain(c.runner, &why), &dir, &output, &problem)) << problem;
  const RefCode code = ref_code(c.spec);
  const auto sets = decoder_sets(c);
  ASSERT_EQ(verify(code, sets, output), "");
  // Flip the last hex digit of the first line with each tag.
  for (const char *tag : {"\nP ", "\nQ ", "\nD ", "\nC ", "\nG "}) {
    const std::string bad = flip_last_digit(output, tag);
    ASSERT_FALSE(bad.empty()) << tag;
    EXPECT_NE(verify(code, sets, bad), "") << "corrupted" << tag;
  }
  EXPECT_NE(verify(code, sets, output.substr(0, output.rfind("X "))), "");
  EXPECT_NE(verify(code, sets, output + "E decoder\n"), "");
  EXPECT_NE(verify(code, sets, without_lines(output, "\nD 0 ")), "");
}

// The array checker: a real native run verifies; a flipped encoded, rebuilt or read byte, a
// missing rebuild or read and a truncated run are each caught.
TEST(AotEmulatedChecker, RejectsCorruptedArrayOutput) {
  const Case c{"x86_64", "xcode:p=5", "0;1,3", Runner::kNative};
  std::string why, dir, output, problem;
  ASSERT_TRUE(build_and_run(c, toolchain(c.runner, &why), &dir, &output, &problem)) << problem;
  const auto sets = decoder_sets(c);
  ASSERT_EQ(verify_array(c.spec, sets, output), "");
  for (const char *tag : {"\nP 3 ", "\nD 1,3 3 ", "\nR 1,3 3 "}) {
    const std::string bad = flip_last_digit(output, tag);
    ASSERT_FALSE(bad.empty()) << tag;
    EXPECT_NE(verify_array(c.spec, sets, bad), "") << "corrupted" << tag;
  }
  EXPECT_NE(verify_array(c.spec, sets, output.substr(0, output.rfind("X "))), "");
  EXPECT_NE(verify_array(c.spec, sets, without_lines(output, "\nD 0 ")), "");
  EXPECT_NE(verify_array(c.spec, sets, without_lines(output, "\nR 0 ")), "");
}

INSTANTIATE_TEST_SUITE_P(Targets, AotEmulated, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<Case> &i) { return case_name(i.param); });

}  // namespace
}  // namespace ecjit::aot_test
