// The code families over GF(2^l) symbols (one registry row each) and the codec kind every layer dispatches on.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "codes/gf.h"
#include "codes/locality.h"
#include "codes/matrix.h"
#include "ecjit/code_spec.h"
#include "ecjit/status.h"

namespace ecjit::codes {

// The codec that runs a spec. Layers above codes/ dispatch on this (codec_kind), never on
// the family: a new family of an existing kind is its registry row, its construction and its
// tests.
enum class CodecKind {
  kMatrix,     // an m x k parity matrix over GF(2^l) (LinearCode; kernels, IR, AOT, MDS check)
  kBitmatrix,  // a bit-matrix (XOR) code, shards as blocks of w packets (codes/xor_families.h)
  kFft,        // Reed-Solomon by the additive FFT over Cantor-basis symbols (codes/rs_fft.h)
};

// A family over GF(2^l) symbols: what CodeSpec::parse accepts and checks, and how the code
// is built. (The bit-matrix families have rows of their own: codes/xor_families.h.)
struct SymbolFamily {
  CodeFamily family;
  const char *name;
  CodecKind kind;  // kMatrix or kFft
  // The family's rules past the common ones - k, m >= 1 and, for a family without keys of
  // its own, gf in {8, 16, 32, 64}, a primitive polynomial (normalized: 0 = the default),
  // k + m <= kMaxShards, a= for the matrix family only - as kInvalidSpec naming the rule.
  // A family with `keys` applies every rule in `check`, its shard limit included.
  Status (*check)(const CodeSpec &spec);
  // kMatrix: the m x k parity matrix of a checked spec over `field`.
  Matrix (*parity)(const Field &field, const CodeSpec &spec);
  // Keys of a family with rules of its own (", "-separated), the note an unknown key's
  // message ends with, and its field when the spec gives none; null: the matrix families'
  // keys k, m, gf, poly (and a).
  const char *keys = nullptr;
  const char *key_note = "";
  unsigned default_gf = 8;
  // A family whose shape is not given by k= and m= (lrc: l= and r=): reads its keys (k is
  // read already) into the spec, m included, and writes them back for to_string() (the text
  // between "family:" and ",gf="). Null: k= and m=.
  Status (*read_keys)(const std::map<std::string, std::string> &kv, CodeSpec *spec) = nullptr;
  std::string (*write_keys)(const CodeSpec &spec) = nullptr;
  // The family's local checks (ceph-lrc: a group's XOR includes its global parities); null:
  // found from the parity rows over fewer than k shards (codes/locality.h).
  std::vector<LocalCheck> (*checks)(const CodeSpec &spec) = nullptr;
};

// For a row's read_keys: the decimal value of `key` (at most 8 digits) from the spec's
// key=value pairs; kInvalidSpec when it is missing (naming `form`, e.g. "lrc:k=K,l=L,r=R") or
// not a decimal number.
Status decimal_key(const std::map<std::string, std::string> &kv, const char *key, const char *form, unsigned *out);

// Every family over symbols, in the order messages and help list them.
const std::vector<SymbolFamily> &symbol_families();
// The row of `f`, null when f is a bit-matrix family.
const SymbolFamily *symbol_family(CodeFamily f);
// The family named `name` in either registry; false when none is.
bool find_family(const std::string &name, CodeFamily *out);

// What runs `spec`: bit-matrix codes (spec.bitmatrix()) on the XOR codecs, the others by
// their row's kind.
CodecKind codec_kind(const CodeSpec &spec);

}  // namespace ecjit::codes
