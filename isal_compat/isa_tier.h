// IsaTier: which per-ISA entry point ISA-L 2.30's multibinary dispatcher picks on this CPU.
//
// ISA-L's per-ISA kernels differ from its portable `_base` twins in two observable ways
// that a drop-in replacement must reproduce: they read the full 32-byte nibble table (the
// base versions read only its byte 1, the coefficient), and below a minimum length they
// either fall back to base (ec_encode_data*, ec_encode_data_update*) or write nothing
// (gf_*vect_dot_prod_*, gf_*vect_mad_*). For tables made by ec_init_tables both readings
// agree; for hand-made tables only the tier tells them apart.
#pragma once

namespace ecjit::isal {

enum class IsaTier { kBase, kSse, kAvx, kAvx2, kAvx512 };

// The highest tier this CPU and OS support, by ISA-L's own tests (SSE4.1; AVX + OSXSAVE +
// XCR0 ymm; AVX2; AVX-512 F/CD/BW/DQ/VL + XCR0 zmm). Computed once; thread-safe.
IsaTier host_tier();

// Shortest `len` the per-ISA dot-product / mad kernels of a tier accept (0 for base).
inline int min_len(IsaTier t) {
  switch (t) {
    case IsaTier::kBase: return 0;
    case IsaTier::kSse:
    case IsaTier::kAvx: return 16;
    case IsaTier::kAvx2: return 32;
    case IsaTier::kAvx512: return 64;
  }
  return 0;
}

// What each dispatched name resolves to (ISA-L 2.30 ec_multibinary.asm / raid_multibinary.asm):
// ec_encode_data, ec_encode_data_update and gf_vect_mad use every tier (measured on an
// AVX-512 CPU: dispatched gf_vect_mad writes nothing below 64 bytes, as gf_vect_mad_avx512);
// gf_vect_dot_prod stops at AVX2 (its AVX-512 twin has the same 32-byte minimum);
// gf_vect_mul stops at AVX.
inline IsaTier cap(IsaTier t, IsaTier highest) { return t > highest ? highest : t; }

}  // namespace ecjit::isal
