// CodeSpec parsing, validation and canonical printing.
#include "ecjit/code_spec.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <map>

#include "codes/array_layout.h"
#include "codes/families.h"
#include "codes/gf.h"
#include "codes/rs_auto.h"
#include "codes/xor_families.h"

namespace ecjit {
namespace {

Status bad(const std::string &msg) { return Status(StatusCode::kInvalidSpec, msg); }

// Whether `key` is one of the ", "-separated `keys`.
bool listed(const char *keys, const std::string &key) {
  const std::string all = std::string(", ") + keys + ",";
  return all.find(", " + key + ",") != std::string::npos;
}

std::string hex(uint64_t v) {
  char buf[32];
  snprintf(buf, sizeof buf, "0x%llx", (unsigned long long)v);
  return buf;
}

// Parses an unsigned 64-bit number: decimal, or hex with 0x when allow_hex (or bare hex
// when hex_only). Rejects empty, trailing junk, signs and overflow.
bool parse_u64(const std::string &s, bool allow_hex, bool hex_only, uint64_t *out) {
  if (s.empty()) return false;
  std::string body = s;
  int base = 10;
  if (hex_only) {
    base = 16;
    if (body.size() > 2 && body[0] == '0' && (body[1] == 'x' || body[1] == 'X')) body = body.substr(2);
  } else if (allow_hex && body.size() > 2 && body[0] == '0' && (body[1] == 'x' || body[1] == 'X')) {
    base = 16;
    body = body.substr(2);
  }
  if (body.empty()) return false;
  for (char c : body) {
    bool ok = base == 16 ? isxdigit((unsigned char)c) != 0 : (c >= '0' && c <= '9');
    if (!ok) return false;
  }
  errno = 0;
  char *end = nullptr;
  unsigned long long v = strtoull(body.c_str(), &end, base);
  if (errno == ERANGE || *end != '\0') return false;
  *out = v;
  return true;
}

Status validate_poly(CodeSpec &s);

// "rs:" + body: keys k and m only, then codes::choose_rs.
Result<CodeSpec> parse_rs_auto(const std::string &body) {
  uint64_t k = 0, m = 0;
  bool has_k = false, has_m = false;
  size_t at = 0;
  while (at <= body.size()) {
    const size_t end = std::min(body.find(',', at), body.size());
    const std::string kv = body.substr(at, end - at);
    const size_t eq = kv.find('=');
    const std::string key = kv.substr(0, eq), value = eq == std::string::npos ? "" : kv.substr(eq + 1);
    if (key != "k" && key != "m")
      return bad("rs: '" + kv + "': rs takes k and m only and chooses its construction (a Cauchy matrix or the "
                 "FFT); to fix the field or the construction name it: rs-cauchy:k=,m=,gf= or rs-fft:k=,m=");
    uint64_t *v = key == "k" ? &k : &m;
    bool &seen = key == "k" ? has_k : has_m;
    if (seen) return bad("rs: " + key + "= given twice");
    if (!parse_u64(value, false, false, v) || *v > 65536)
      return bad("rs: " + key + "='" + value + "' is not a number 1..65536");
    seen = true;
    at = end + 1;
  }
  if (!has_k || !has_m) return bad("rs: missing " + std::string(has_k ? "m=" : "k=") + " (rs:k=<k>,m=<m>)");
  return codes::choose_rs(unsigned(k), unsigned(m));
}

// Bit-matrix families: shared rules here, the family's own in its registry row.
Status validate_bits(CodeSpec &s, const codes::BitFamily &row) {
  if (s.packet == 0 || s.packet % 8 != 0 || s.packet > (1u << 20))
    return bad("packet=" + std::to_string(s.packet) +
               " must be a multiple of 8 bytes, 8 .. 1048576 (Jerasure's rule: a multiple of "
               "sizeof(long))");
  // Bit-rows bound the work of planning (GF(2) elimination over k w columns) and of the
  // schedules; Jerasure's codes use k w of a few hundred.
  if (uint64_t(s.k) * s.w > 4096 || uint64_t(s.m) * s.w > 1024)
    return bad("a bit-matrix code is limited to k*w <= 4096 and m*w <= 1024 bit-rows; k*w = " +
               std::to_string(uint64_t(s.k) * s.w) + ", m*w = " + std::to_string(uint64_t(s.m) * s.w));
  if (s.family == CodeFamily::kBitmatrixOf) {
    s.gf = s.w;  // the field the expanded symbol code lives in (poly is normalized for it)
    if (s.w == 8 || s.w == 16 || s.w == 32) ECJIT_RETURN_IF_ERROR(validate_poly(s));
    s.gf = 8;
  } else {
    if (s.poly != 0) return bad(std::string(row.name) + " uses Jerasure's field; poly= is only for bitmatrix-of");
    if (!s.matrix.empty()) return bad("a= (matrix entries) is only valid for the matrix family");
  }
  return row.check(s);
}

Status validate(CodeSpec &s) {
  const std::string fam = family_name(s.family);
  if (s.k == 0) return bad("k must be at least 1 (" + fam + ")");
  if (s.m == 0) return bad("m must be at least 1 (" + fam + ")");
  // A family with its own rules applies its own shard limit (rs-fft: the crate's).
  const codes::SymbolFamily *sym = codes::symbol_family(s.family);
  if (sym && sym->keys) return sym->check(s);
  const uint64_t n = uint64_t(s.k) + s.m;
  if (n > kMaxShards)
    return bad("k+m = " + std::to_string(n) + " exceeds the limit of " + std::to_string(kMaxShards) +
               " shards (" + fam + ", like every family but rs-fft, takes k+m <= " +
               std::to_string(kMaxShards) + ")");
  if (const codes::BitFamily *row = codes::bit_family(s.family)) return validate_bits(s, *row);
  return validate_poly(s);
}

// The rules every matrix family shares (gf, a primitive polynomial, normalized; a= for the
// matrix family only), then its registry row's own (codes/families.h).
Status validate_poly(CodeSpec &s) {
  if (s.gf != 8 && s.gf != 16 && s.gf != 32 && s.gf != 64)
    return bad("gf=" + std::to_string(s.gf) + " is not supported; use gf=8, 16, 32 or 64");

  // Normalize the polynomial: strip an explicit X^l term, store 0 for the default.
  if (s.poly != 0) {
    if (s.gf < 64 && (s.poly >> s.gf) == 1) s.poly &= (uint64_t(1) << s.gf) - 1;
    // X^l alone (poly=0x100 for gf=8): nothing left once X^l is stripped, and 0 would select
    // the default polynomial; X^l is reducible, so refuse it as Field::make refuses others.
    if (s.poly == 0)
      return bad("polynomial X^" + std::to_string(s.gf) +
                 " (no lower terms) is not primitive over GF(2); give its lower terms too, e.g. "
                 "poly=" + (s.gf == 8 ? std::string("0x11d") : s.gf == 16 ? "0x1100b" : "the default"));
    Result<codes::Field> f = codes::Field::make(s.gf, s.poly);
    if (!f.ok()) return f.status();
    if (s.poly == default_poly(s.gf)) s.poly = 0;
  }
  if (const codes::SymbolFamily *row = codes::symbol_family(s.family)) ECJIT_RETURN_IF_ERROR(row->check(s));
  const CodeFamily base = s.family == CodeFamily::kBitmatrixOf ? s.of : s.family;
  if (base != CodeFamily::kMatrix && !s.matrix.empty())
    return bad("a= (matrix entries) is only valid for the matrix family");
  return Status::Ok();
}

Status parse_matrix(const std::string &v, std::vector<uint64_t> *out, unsigned *rows,
                    unsigned *cols) {
  out->clear();
  *rows = 0;
  *cols = 0;
  size_t start = 0;
  while (true) {
    size_t slash = v.find('/', start);
    std::string row = v.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
    unsigned count = 0;
    size_t p = 0;
    while (true) {
      size_t dot = row.find('.', p);
      std::string item = row.substr(p, dot == std::string::npos ? std::string::npos : dot - p);
      uint64_t x;
      if (!parse_u64(item, true, true, &x))
        return bad("matrix entry '" + item + "' in row " + std::to_string(*rows) +
                   " is not a hex number");
      out->push_back(x);
      ++count;
      if (dot == std::string::npos) break;
      p = dot + 1;
    }
    if (*rows == 0) *cols = count;
    else if (count != *cols)
      return bad("matrix row " + std::to_string(*rows) + " has " + std::to_string(count) +
                 " entries, row 0 has " + std::to_string(*cols));
    ++*rows;
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  return Status::Ok();
}

}  // namespace

const char *family_name(CodeFamily f) {
  if (const codes::SymbolFamily *row = codes::symbol_family(f)) return row->name;
  if (const codes::BitFamily *row = codes::bit_family(f)) return row->name;
  return "unknown";
}

uint64_t default_poly(unsigned l) {
  switch (l) {
    case 8: return 0x1D;       // X^8 + X^4 + X^3 + X^2 + 1 (0x11d)
    case 16: return 0x100B;    // X^16 + X^12 + X^3 + X + 1 (0x1100b)
    case 32: return 0x400007;  // X^32 + X^22 + X^2 + X + 1
    case 64: return 0x1B;      // X^64 + X^4 + X^3 + X + 1
    default: return 0;
  }
}

uint64_t CodeSpec::effective_poly() const { return poly ? poly : default_poly(gf); }

Result<CodeSpec> CodeSpec::parse(const std::string &text) {
  const size_t colon = text.find(':');
  if (colon == std::string::npos)
    return bad("'" + text + "': expected <family>:k=<k>,m=<m>[,gf=<8|16|32|64>][,poly=<hex>]");
  const std::string fam = text.substr(0, colon);
  if (fam == "rs") return parse_rs_auto(text.substr(colon + 1));
  CodeSpec s;
  bool found = false;
  auto known_families = [] {
    std::string names = "rs (chooses rs-cauchy or rs-fft)";
    for (const codes::SymbolFamily &r : codes::symbol_families()) names += std::string(", ") + r.name;
    for (const codes::BitFamily &r : codes::bit_families()) names += std::string(", ") + r.name;
    return names;
  };
  found = codes::find_family(fam, &s.family);
  if (!found && codes::parity_on_data_disks(fam))
    return bad("'" + fam + "' keeps its parity on the data disks: it is an array code, served by "
               "Jit::array_codec(\"" + fam + ":p=7\") (C: ecjit_array_codec_create) and `ecjit edp`, "
               "not by codec()");
  if (!found) return bad("unknown code family '" + fam + "'; known: " + known_families());
  const codes::BitFamily *row = codes::bit_family(s.family);
  // A family with keys of its own (rs-fft) applies its own rules.
  const codes::SymbolFamily *rules = codes::symbol_family(s.family);
  if (rules && !rules->keys) rules = nullptr;
  const bool bits = row != nullptr;
  const bool expanded = s.family == CodeFamily::kBitmatrixOf;
  const bool searched = s.family == CodeFamily::kCauchyOpt;
  const std::string word_key = bits ? row->word_key : "";
  const std::string keys_text = rules ? std::string(rules->keys)
                                : !bits ? "k, m, gf, poly, a"
                                : searched ? "k, m, w, packet, seed or points"
                                : expanded ? "of, k, m, w, packet, poly, a"
                                           : "k, m, " + word_key + ", packet";
  const bool own_shape = rules && rules->read_keys;  // lrc: l= and r= give m
  auto key_ok = [&](const std::string &key) {
    if (key == "k" || (key == "m" && (!own_shape || listed(rules->keys, "m")))) return true;
    if (rules) return listed(rules->keys, key);
    if (!bits) return key == "gf" || key == "poly" || key == "a";
    if (key == word_key || key == "packet") return true;
    if (searched && (key == "seed" || key == "points")) return true;
    return expanded && (key == "of" || key == "poly" || key == "a");
  };
  std::map<std::string, std::string> kv;
  const std::string rest = text.substr(colon + 1);
  size_t p = 0;
  while (p <= rest.size()) {
    size_t comma = rest.find(',', p);
    std::string item = rest.substr(p, comma == std::string::npos ? std::string::npos : comma - p);
    const size_t eq = item.find('=');
    if (item.empty() || eq == std::string::npos || eq == 0)
      return bad("'" + item + "' in '" + text + "' is not key=value");
    const std::string key = item.substr(0, eq), val = item.substr(eq + 1);
    if (!key_ok(key))
      return bad("unknown key '" + key + "' in '" + text + "'; keys of " + fam + ": " + keys_text +
                 (rules ? rules->key_note : ""));
    if (kv.count(key)) return bad("key '" + key + "' given twice in '" + text + "'");
    kv[key] = val;
    if (comma == std::string::npos) break;
    p = comma + 1;
  }
  auto number = [&](const char *key, bool allow_hex, uint64_t max, uint64_t *out) -> Status {
    if (!parse_u64(kv[key], allow_hex, false, out))
      return bad(std::string(key) + "='" + kv[key] + "' is not a " +
                 (allow_hex ? "number" : "decimal number"));
    if (*out > max) return bad(std::string(key) + "=" + kv[key] + " is too large");
    return Status::Ok();
  };
  const unsigned default_m = bits ? row->default_m : 0;
  // Without k, a family with a full width takes it for its word key (rdp:p=7 is k = 6).
  const bool full_width = !kv.count("k") && bits && row->full_width && kv.count(word_key);
  if (!kv.count("k") && !full_width)
    return bad("missing k= in '" + text + "'" +
               (bits && row->full_width
                    ? " (or give " + word_key + "= alone for the family's full width)"
                    : ""));
  if (!kv.count("m") && !default_m && !own_shape) return bad("missing m= in '" + text + "'");
  uint64_t v = 0;
  if (!full_width) {
    ECJIT_RETURN_IF_ERROR(number("k", false, 1u << 20, &v));
    s.k = unsigned(v);
  }
  s.m = default_m;
  if (kv.count("m")) {
    ECJIT_RETURN_IF_ERROR(number("m", false, 1u << 20, &v));
    s.m = unsigned(v);
  }
  if (own_shape) ECJIT_RETURN_IF_ERROR(rules->read_keys(kv, &s));
  if (bits) {
    // w, or for array codes the prime p of w = p - 1 rows.
    const bool by_prime = word_key == "p";
    if (!row->default_word && !kv.count(word_key))
      return bad("missing " + word_key + "= in '" + text + "' (" + fam + " has no default " + word_key + ")");
    unsigned word = row->default_word ? row->default_word(s.family, s.k) : 0;
    if (kv.count(word_key)) {
      ECJIT_RETURN_IF_ERROR(number(word_key.c_str(), false, 1024, &v));
      word = unsigned(v);
    }
    if (by_prime && word < 3) return bad("p=" + std::to_string(word) + ": " + fam + " needs p prime (>= 3)");
    if (full_width) {
      s.k = row->full_width(s.family, word);
      if (s.k == 0) return bad(word_key + "=" + std::to_string(word) + " leaves " + fam + " no data shards");
    }
    s.w = by_prime ? word - 1 : word;
    if (s.w == 0) return bad("w=0: the word size must be at least 2 bits");
    s.packet = kDefaultPacket;
    if (kv.count("packet") && kv.at("packet") == "auto") {
      s.packet_auto = true;  // chosen by timing when a Jit makes the codec
    } else if (kv.count("packet")) {
      ECJIT_RETURN_IF_ERROR(number("packet", false, uint64_t(1) << 32, &v));
      s.packet = unsigned(v);
    }
  }
  if (searched) {
    s.seed = 1;
    if (kv.count("seed") && kv.count("points"))
      return bad("give seed= (points searched) or points= (the search's result), not both");
    if (kv.count("seed")) ECJIT_RETURN_IF_ERROR(number("seed", false, ~uint64_t(0), &s.seed));
    if (kv.count("points")) {
      unsigned rows = 0, cols = 0;
      ECJIT_RETURN_IF_ERROR(parse_matrix(kv["points"], &s.points, &rows, &cols));
      if (rows != 1 || s.points.size() != size_t(s.k) + s.m)
        return bad("points= needs m + k = " + std::to_string(s.k + s.m) +
                   " hex field elements '.'-separated (X then Y), got " + std::to_string(s.points.size()));
      for (size_t i = 0; i < s.points.size(); ++i) {
        if (s.w < 64 && s.points[i] >> s.w)
          return bad("point " + hex(s.points[i]) + " is not an element of GF(2^" + std::to_string(s.w) + ")");
        for (size_t j = 0; j < i; ++j)
          if (s.points[j] == s.points[i])
            return bad("point " + hex(s.points[i]) + " appears twice: Cauchy points must be distinct");
      }
      s.seed = 0;
    }
  }
  if (expanded) {
    if (!kv.count("of")) return bad("missing of=<symbol family> in '" + text + "'");
    const codes::SymbolFamily *of = codes::find_family(kv["of"], &s.of) ? codes::symbol_family(s.of) : nullptr;
    if (!of || of->kind != codes::CodecKind::kMatrix) {
      std::string matrix_families;
      for (const codes::SymbolFamily &r : codes::symbol_families())
        if (r.kind == codes::CodecKind::kMatrix)
          matrix_families += (matrix_families.empty() ? "" : ", ") + std::string(r.name);
      return bad("of='" + kv["of"] + "' is not a symbol matrix code family; known: " + matrix_families +
                 (s.of == CodeFamily::kRsFft ? " (rs-fft has no matrix over a polynomial basis to expand)" : ""));
    }
  }
  if (rules) s.gf = rules->default_gf;
  if (kv.count("gf")) {
    ECJIT_RETURN_IF_ERROR(number("gf", false, 1024, &v));
    s.gf = unsigned(v);
  }
  if (kv.count("poly")) {
    ECJIT_RETURN_IF_ERROR(number("poly", true, ~uint64_t(0), &v));
    if (v == 0) return bad("poly=0 is not a polynomial of degree " + std::to_string(s.gf));
    s.poly = v;
  }
  if (kv.count("a")) {
    unsigned rows = 0, cols = 0;
    ECJIT_RETURN_IF_ERROR(parse_matrix(kv["a"], &s.matrix, &rows, &cols));
    if ((s.family == CodeFamily::kMatrix || (expanded && s.of == CodeFamily::kMatrix)) &&
        (rows != s.m || cols != s.k))
      return bad("matrix is " + std::to_string(rows) + " x " + std::to_string(cols) +
                 " but m x k = " + std::to_string(s.m) + " x " + std::to_string(s.k));
  } else if (s.family == CodeFamily::kMatrix || (expanded && s.of == CodeFamily::kMatrix)) {
    return bad("the matrix family needs a=<rows of hex entries '.'-separated, rows '/'-separated>");
  }
  ECJIT_RETURN_IF_ERROR(validate(s));
  return s;
}

std::string CodeSpec::to_string() const {
  std::string s = std::string(family_name(family)) + ":";
  const unsigned field = bitmatrix() ? w : gf;
  if (family == CodeFamily::kBitmatrixOf) s += std::string("of=") + family_name(of) + ",";
  const codes::SymbolFamily *sym = codes::symbol_family(family);
  s += sym && sym->write_keys ? sym->write_keys(*this) : "k=" + std::to_string(k) + ",m=" + std::to_string(m);
  if (bitmatrix()) {
    const codes::BitFamily *row = codes::bit_family(family);
    const bool by_prime = row && std::string(row->word_key) == "p";
    s += by_prime ? ",p=" + std::to_string(w + 1) : ",w=" + std::to_string(w);
    s += ",packet=" + (packet_auto ? std::string("auto") : std::to_string(packet));
  }
  else s += ",gf=" + std::to_string(gf);
  if (family == CodeFamily::kCauchyOpt && points.empty()) s += ",seed=" + std::to_string(seed);
  if (family == CodeFamily::kCauchyOpt && !points.empty()) {
    s += ",points=";
    for (size_t i = 0; i < points.size(); ++i) s += (i ? "." : "") + hex(points[i]);
  }
  if (poly != 0 && (bitmatrix() || poly != default_poly(gf)))
    s += ",poly=" + hex(field < 64 ? (poly | (uint64_t(1) << field)) : poly);
  if (family == CodeFamily::kMatrix || (family == CodeFamily::kBitmatrixOf && of == CodeFamily::kMatrix)) {
    s += ",a=";
    for (size_t i = 0; i < matrix.size(); ++i) {
      if (i) s += (i % k == 0) ? "/" : ".";
      char buf[32];
      snprintf(buf, sizeof buf, "%llx", (unsigned long long)matrix[i]);
      s += buf;
    }
  }
  return s;
}

bool CodeSpec::operator==(const CodeSpec &o) const {
  return family == o.family && k == o.k && m == o.m && gf == o.gf &&
         effective_poly() == o.effective_poly() && matrix == o.matrix && w == o.w &&
         packet == o.packet && packet_auto == o.packet_auto && (family != CodeFamily::kBitmatrixOf || of == o.of) &&
         seed == o.seed && l == o.l && r == o.r &&
         points == o.points;
}

}  // namespace ecjit
