// host_levels: CPUID and XGETBV tests for x86-64-v2, -v3, -v4, GFNI and carry-less multiplies.
#include "runtime/aot_shapes/host_levels.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace ecjit::aot {
namespace {

struct X86Levels {
  bool v2 = false, v3 = false, v4 = false, gfni = false, pclmul = false, vpclmulqdq = false;
};

X86Levels detect_levels() {
  X86Levels l;
#if defined(__x86_64__) || defined(__i386__)
  unsigned a, b, c, d;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return l;
  // SSE3(0) SSSE3(9) CX16(13) SSE4.1(19) SSE4.2(20) POPCNT(23)
  const unsigned v2 = (1u << 0) | (1u << 9) | (1u << 13) | (1u << 19) | (1u << 20) | (1u << 23);
  l.v2 = (c & v2) == v2;
  // FMA(12) MOVBE(22) OSXSAVE(27) AVX(28) F16C(29)
  const unsigned v3_1 = (1u << 12) | (1u << 22) | (1u << 27) | (1u << 28) | (1u << 29);
  unsigned a7 = 0, b7 = 0, c7 = 0, d7 = 0, ae = 0, be = 0, ce = 0, de = 0;
  const bool leaf7 = __get_cpuid_count(7, 0, &a7, &b7, &c7, &d7);
  const bool ext = __get_cpuid(0x80000001u, &ae, &be, &ce, &de);
  bool ymm = false, zmm = false;
  if (c & (1u << 27)) {
    unsigned xlo, xhi;
    __asm__ volatile("xgetbv" : "=a"(xlo), "=d"(xhi) : "c"(0));
    ymm = (xlo & 0x6) == 0x6;
    zmm = (xlo & 0xe6) == 0xe6;  // XMM, YMM, opmask, ZMM_Hi256, Hi16_ZMM
  }
  // BMI1(3) AVX2(5) BMI2(8) in leaf 7 EBX; LZCNT(5) in 0x80000001 ECX.
  const unsigned v3_7 = (1u << 3) | (1u << 5) | (1u << 8);
  l.v3 = l.v2 && ymm && (c & v3_1) == v3_1 && leaf7 && (b7 & v3_7) == v3_7 && ext && (ce & (1u << 5));
  // AVX512F(16) AVX512DQ(17) AVX512CD(28) AVX512BW(30) AVX512VL(31) in leaf 7 EBX.
  const unsigned v4_7 = (1u << 16) | (1u << 17) | (1u << 28) | (1u << 30) | (1u << 31);
  l.v4 = l.v3 && zmm && (b7 & v4_7) == v4_7;
  l.gfni = leaf7 && (c7 & (1u << 8));
  l.pclmul = (c & (1u << 1)) != 0;                               // PCLMULQDQ: leaf 1 ECX bit 1
  l.vpclmulqdq = l.v3 && l.pclmul && leaf7 && (c7 & (1u << 10));  // VPCLMULQDQ: leaf 7 ECX bit 10
#endif
  return l;
}

const X86Levels &levels() {
  static const X86Levels l = detect_levels();
  return l;
}

}  // namespace

bool host_runs_x86_64_v2() { return levels().v2; }
bool host_runs_x86_64_v3() { return levels().v3; }
bool host_runs_x86_64_v4() { return levels().v4; }
bool host_has_gfni() { return levels().gfni; }
bool host_has_pclmul() { return levels().pclmul; }
bool host_has_vpclmulqdq() { return levels().vpclmulqdq; }

bool host_runs(std::string_view target) {
  const std::string_view base = target.substr(0, target.find('+'));
  bool runs = base == "x86_64-v2" ? host_runs_x86_64_v2()
              : base == "x86_64-v3" ? host_runs_x86_64_v3()
              : base == "x86_64-v4" ? host_runs_x86_64_v4()
                                    : false;
  for (size_t at = target.find('+'); runs && at != std::string_view::npos; at = target.find('+', at + 1)) {
    const std::string_view feature = target.substr(at + 1, target.find(',', at) - at - 1);
    runs = feature == "gfni" ? host_has_gfni()
           : feature == "pclmul" ? host_has_pclmul()
           : feature == "vpclmulqdq" ? host_has_vpclmulqdq()
                                     : false;
  }
  return runs;
}

}  // namespace ecjit::aot
