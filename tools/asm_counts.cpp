// asm_counts: classifies the mnemonics of LLVM assembly output (x86, AArch64, ARM, Hexagon, RISC-V) and sizes .text.
#include "tools/asm_counts.h"

#include <algorithm>
#include <cctype>
#include <vector>

#include "llvm/Object/ObjectFile.h"
#include "llvm/Support/MemoryBuffer.h"

namespace ecjit::tools {
namespace {

enum class Kind { kXor, kShift, kAnd, kAdd, kOther };

// Mnemonics per family, after normalization (lower case; ARM/RISC-V type suffixes after '.'
// removed). x86 names are matched with and without an AT&T size suffix (b, w, l, q).
struct FamilyTable {
  std::vector<std::string> xors, shifts, ands, adds;
};

const FamilyTable &table(AsmFamily f) {
  static const FamilyTable kX86 = {
      {"xor", "pxor", "vpxor", "vpxord", "vpxorq", "xorps", "xorpd", "vxorps", "vxorpd",
       "vpternlogd", "vpternlogq"},
      {"shl", "shr", "sar", "sal", "shlx", "shrx", "sarx", "shld", "shrd", "psllw", "pslld",
       "psllq", "psrlw", "psrld", "psrlq", "psraw", "psrad", "pslldq", "psrldq", "vpsllw",
       "vpslld", "vpsllq", "vpsrlw", "vpsrld", "vpsrlq", "vpsraw", "vpsrad", "vpsraq",
       "vpslldq", "vpsrldq", "vpsllvw", "vpsllvd", "vpsllvq", "vpsrlvw", "vpsrlvd", "vpsrlvq",
       "vpsravw", "vpsravd", "vpsravq", "vpshldw", "vpshldd", "vpshldq", "vpshrdw", "vpshrdd",
       "vpshrdq"},
      {"and", "andn", "pand", "pandn", "vpand", "vpandn", "vpandd", "vpandq", "vpandnd",
       "vpandnq", "andps", "andpd", "andnps", "andnpd", "vandps", "vandpd", "vandnps", "vandnpd"},
      {"add", "paddb", "paddw", "paddd", "paddq", "vpaddb", "vpaddw", "vpaddd", "vpaddq"}};
  static const FamilyTable kAArch64 = {
      {"eor", "eor3"},
      {"shl", "shll", "ushr", "sshr", "lsl", "lsr", "asr", "lslv", "lsrv", "asrv", "ushl", "sshl",
       "sli", "sri", "shrn", "usra", "ssra"},
      {"and", "ands", "bic", "bics"},
      {"add"}};
  static const FamilyTable kArm = {
      {"eor", "eors", "veor"},
      {"lsl", "lsr", "asr", "lsls", "lsrs", "asrs", "vshl", "vshr", "vsli", "vsri", "vshrn", "vsra"},
      {"and", "ands", "bic", "vand", "vbic"},
      {"add", "vadd"}};
  static const FamilyTable kHexagon = {
      {"xor", "vxor"},
      {"asl", "lsr", "asr", "vasl", "vlsr", "vasr", "vaslh", "vlsrh", "vaslw", "vlsrw"},
      {"and", "vand"},
      {}};
  static const FamilyTable kRiscv = {
      {"xor", "xori", "vxor"},
      {"sll", "slli", "srl", "srli", "sra", "srai", "sllw", "slliw", "srlw", "srliw", "sraw",
       "sraiw", "vsll", "vsrl", "vsra"},
      {"and", "andi", "andn", "vand"},
      {"add", "vadd"}};
  static const FamilyTable kOther = {{"xor", "eor"}, {"shl", "shr", "lsl", "lsr", "asr", "sll", "srl"}, {"and"}, {}};
  switch (f) {
    case AsmFamily::kX86: return kX86;
    case AsmFamily::kAArch64: return kAArch64;
    case AsmFamily::kArm: return kArm;
    case AsmFamily::kHexagon: return kHexagon;
    case AsmFamily::kRiscv: return kRiscv;
    case AsmFamily::kOther: break;
  }
  return kOther;
}

bool contains(const std::vector<std::string> &v, const std::string &s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

Kind classify(AsmFamily f, const std::string &mnemonic) {
  const FamilyTable &t = table(f);
  auto kind_of = [&](const std::string &m) {
    if (contains(t.xors, m)) return Kind::kXor;
    if (contains(t.shifts, m)) return Kind::kShift;
    if (contains(t.ands, m)) return Kind::kAnd;
    if (contains(t.adds, m)) return Kind::kAdd;
    return Kind::kOther;
  };
  Kind k = kind_of(mnemonic);
  if (k == Kind::kOther && f == AsmFamily::kX86 && mnemonic.size() > 2 &&
      std::string("bwlq").find(mnemonic.back()) != std::string::npos)
    k = kind_of(mnemonic.substr(0, mnemonic.size() - 1));  // AT&T size suffix: xorl, shlq
  return k;
}

std::string trim(const std::string &s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

// Operands split at top-level commas (not inside parentheses or braces).
std::vector<std::string> operands(const std::string &text) {
  std::vector<std::string> out;
  int depth = 0;
  std::string cur;
  for (char c : text) {
    if (c == '(' || c == '[' || c == '{') ++depth;
    if (c == ')' || c == ']' || c == '}') --depth;
    if (c == ',' && depth == 0) {
      out.push_back(trim(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!trim(cur).empty()) out.push_back(trim(cur));
  return out;
}

// An add of a register to itself is a left shift by one (LLVM lowers `shl x, 1` that way).
bool add_is_shift(AsmFamily f, const std::vector<std::string> &ops) {
  if (f == AsmFamily::kX86) return ops.size() >= 2 && ops[0] == ops[1];  // AT&T: sources first
  return ops.size() == 3 && ops[1] == ops[2];                               // dest, src, src
}

const char *comment_marker(AsmFamily f) {
  switch (f) {
    case AsmFamily::kAArch64:
    case AsmFamily::kHexagon: return "//";
    case AsmFamily::kArm: return "@";
    default: return "#";
  }
}

// The IR block name in an LLVM block comment ("# %vloop"), or "" when there is none.
std::string block_name(const std::string &comment) {
  const size_t pct = comment.rfind('%');
  if (pct == std::string::npos) return "";
  size_t e = pct + 1;
  while (e < comment.size() && !std::isspace(static_cast<unsigned char>(comment[e]))) ++e;
  return comment.substr(pct + 1, e - pct - 1);
}

void add(AsmCounts *c, Kind k) {
  ++c->instructions;
  if (k == Kind::kXor) ++c->xors;
  if (k == Kind::kShift) ++c->shifts;
  if (k == Kind::kAnd) ++c->ands;
}

}  // namespace

AsmFamily asm_family(const std::string &triple) {
  auto starts = [&](const char *p) { return triple.rfind(p, 0) == 0; };
  if (starts("x86_64") || starts("i386") || starts("i686")) return AsmFamily::kX86;
  if (starts("aarch64") || starts("arm64")) return AsmFamily::kAArch64;
  if (starts("arm") || starts("thumb")) return AsmFamily::kArm;
  if (starts("hexagon")) return AsmFamily::kHexagon;
  if (starts("riscv")) return AsmFamily::kRiscv;
  return AsmFamily::kOther;
}

const char *asm_family_name(AsmFamily f) {
  switch (f) {
    case AsmFamily::kX86: return "x86";
    case AsmFamily::kAArch64: return "aarch64";
    case AsmFamily::kArm: return "arm";
    case AsmFamily::kHexagon: return "hexagon";
    case AsmFamily::kRiscv: return "riscv";
    case AsmFamily::kOther: break;
  }
  return "other (best effort)";
}

AsmStats count_asm(const std::string &text, AsmFamily family, const std::string &loop_block) {
  AsmStats st;
  const std::string marker = comment_marker(family);
  std::string block;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string::npos) eol = text.size();
    std::string line = text.substr(pos, eol - pos), comment;
    pos = eol + 1;
    if (size_t c = line.find(marker); c != std::string::npos) {
      comment = line.substr(c + marker.size());
      line.resize(c);
    }
    line = trim(line);
    const std::string tc = trim(comment);
    // Block labels: ".LBB0_3:  # %vloop", or a fall-through block "# %bb.1:  # %vloop".
    if ((!line.empty() && line.back() == ':') || (line.empty() && tc.rfind("%bb.", 0) == 0)) {
      block = block_name(tc.rfind("%bb.", 0) == 0 ? tc.substr(tc.find(':') + 1) : tc);
      continue;
    }
    if (family == AsmFamily::kHexagon) {
      while (!line.empty() && (line[0] == '{' || line[0] == '}')) line = trim(line.substr(1));
      if (size_t close = line.find('}'); close != std::string::npos) line = trim(line.substr(0, close));
      if (line.rfind("if (", 0) == 0 && line.find(')') != std::string::npos)
        line = trim(line.substr(line.find(')') + 1));
      if (size_t eq = line.find('='); eq != std::string::npos) line = trim(line.substr(eq + 1));
    }
    if (line.empty() || line[0] == '.' || line[0] == ';') continue;  // directives
    size_t mend = 0;
    while (mend < line.size() && !std::isspace(static_cast<unsigned char>(line[mend])) &&
           (family != AsmFamily::kHexagon || line[mend] != '('))
      ++mend;
    std::string mnemonic = line.substr(0, mend);
    std::transform(mnemonic.begin(), mnemonic.end(), mnemonic.begin(),
                   [](unsigned char c) { return char(std::tolower(c)); });
    if (family == AsmFamily::kArm || family == AsmFamily::kRiscv || family == AsmFamily::kAArch64)
      mnemonic = mnemonic.substr(0, mnemonic.find('.'));  // vshr.u8, vxor.vv, b.ne
    Kind k = classify(family, mnemonic);
    if (k == Kind::kAdd) {
      std::string rest = line.substr(mend);
      if (family == AsmFamily::kHexagon) rest = rest.substr(1, rest.rfind(')') - 1);
      k = add_is_shift(family, operands(rest)) ? Kind::kShift : Kind::kOther;
    }
    add(&st.all, k);
    if (!loop_block.empty() && block.rfind(loop_block, 0) == 0) {
      add(&st.loop, k);
      st.loop_found = true;
    }
  }
  return st;
}

llvm::Expected<uint64_t> text_section_bytes(const std::string &object) {
  llvm::MemoryBufferRef ref(llvm::StringRef(object.data(), object.size()), "kernel.o");
  auto file = llvm::object::ObjectFile::createObjectFile(ref);
  if (!file) return file.takeError();
  uint64_t total = 0;
  for (const llvm::object::SectionRef &s : (*file)->sections())
    if (s.isText()) total += s.getSize();
  return total;
}

}  // namespace ecjit::tools
