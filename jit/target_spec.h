// TargetSpec: a target named as a string ("host", "x86_64-v3+gfni", "aarch64+neon", "hexagon-v68+hvx").
#pragma once

#include <string>
#include <vector>

#include "ir_builders/target_info.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Error.h"

namespace ecjit::jit {

// Grammar: base [ ('+'|'-') feature { ',' ('+'|'-') feature } ]
//   base: host | x86_64 | x86_64-v2 | x86_64-v3 | x86_64-v4 | aarch64 | armv7 |
//         hexagon-v66 | hexagon-v68 | hexagon-v73 | riscv64 | riscv64-v  (see target_spec.cpp)
//   Base names contain '-': the longest base followed by the end, '+' or '-' is taken, so
//   "riscv64-v" is the base riscv64-v (mask v off it with "riscv64-v-v").
//   features are LLVM feature names of the base's backend; "-f" masks a feature off (also
//   off the host's, together with every feature that implies it, as LLVM does), "+f" adds
//   one. Alias: "+hvx" on a hexagon base = "+hvxv<N>,+hvx-length128b" (128-byte HVX).
// Lower tiers are forced by masking, e.g. on an AVX2 host: "host-avx2" -> 128-bit vectors,
// "host-sse2" (or "host-avx2,-sse2") -> 64 (no vector unit; LLVM scalarizes vector IR).
// to_string() round-trips: parse(t.to_string()) == t for every t that parse() returned.
//
// Errors (llvm::Error, StringError): std::errc::invalid_argument for a malformed string, an
// unknown base (the message lists the known bases) or an unknown feature (the message lists
// the nearest known names); std::errc::not_supported when this LLVM lacks the backend.
// A value type; parse() and resolve() are thread-safe.
struct TargetSpec {
  std::string base;                   // as written, e.g. "host", "x86_64-v3"
  std::vector<std::string> changes;   // "+gfni", "-avx512f", in order, aliases expanded

  // Checks the syntax, the base, and every feature name against the base's LLVM backend.
  static llvm::Expected<TargetSpec> parse(const std::string &text);
  std::string to_string() const;
  bool is_host() const { return base == "host"; }
  bool operator==(const TargetSpec &o) const { return base == o.base && changes == o.changes; }
  bool operator!=(const TargetSpec &o) const { return !(*this == o); }

  // Resolved for LLVM: triple, CPU name, full feature string (host: detected features with
  // the changes applied after them), vector width and register count of the widest tier
  // the features enable (LLVM's feature implications honoured). Errors as for parse().
  llvm::Expected<ir::TargetInfo> resolve() const;

  // The base names, in table order.
  static std::vector<std::string> known_bases();
};

// ECJIT_HOST_MASK: features this process hides from "host", as "-name" items ("-gfni,-avx512f"
// stands in for an AVX2 CPU without GFNI on a newer one): applied after the detected features
// and before a target's own changes, to the JIT, the built-in kernels' choice and the tuner
// alike, so a test run on one machine class checks what another would do. A target that
// adds a hidden feature back is refused as one this CPU lacks.
struct HostMask {
  std::vector<std::string> changes;  // "-gfni", ...; empty when unset
  std::string error;                 // why the variable is unusable ("" when it is fine)
};
const HostMask &host_mask();  // read and checked once per process
// The detected host features with the mask's turned off.
llvm::StringMap<bool> host_features();

}  // namespace ecjit::jit
