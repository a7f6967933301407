// IsaTier detection with CPUID and XGETBV, mirroring ISA-L's mbin_dispatch_init tests.
#include "isal_compat/isa_tier.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace ecjit::isal {
namespace {

IsaTier detect() {
#if defined(__x86_64__) || defined(__i386__)
  unsigned a, b, c, d;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return IsaTier::kBase;
  const bool sse41 = c & (1u << 19);
  const bool avx = c & (1u << 28);
  const bool osxsave = c & (1u << 27);
  if (!sse41) return IsaTier::kBase;
  if (!avx || !osxsave) return IsaTier::kSse;
  unsigned xlo, xhi;
  __asm__ volatile("xgetbv" : "=a"(xlo), "=d"(xhi) : "c"(0));
  if ((xlo & 0x6) != 0x6) return IsaTier::kSse;
  unsigned b7 = 0, c7 = 0, d7 = 0, a7 = 0;
  if (!__get_cpuid_count(7, 0, &a7, &b7, &c7, &d7)) return IsaTier::kAvx;
  if (!(b7 & (1u << 5))) return IsaTier::kAvx;
  // AVX512F(16) DQ(17) CD(28) BW(30) VL(31), and the OS saves opmask/zmm state.
  const unsigned g1 = (1u << 16) | (1u << 17) | (1u << 28) | (1u << 30) | (1u << 31);
  if ((b7 & g1) == g1 && (xlo & 0xe6) == 0xe6) return IsaTier::kAvx512;
  return IsaTier::kAvx2;
#else
  return IsaTier::kBase;
#endif
}

}  // namespace

IsaTier host_tier() {
  static const IsaTier tier = detect();
  return tier;
}

}  // namespace ecjit::isal
