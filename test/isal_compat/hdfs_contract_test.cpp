// The contract Hadoop's native erasure coders (libhadoop's ISA-L loader) put on libisal.so.2,
// written from that contract: the library is found by its SONAME through the loader path and
// opened with RTLD_LAZY | RTLD_GLOBAL; nine symbols must resolve (gf_mul, gf_inv,
// gf_gen_rs_matrix, gf_gen_cauchy1_matrix, gf_invert_matrix, gf_vect_mul, ec_init_tables,
// ec_encode_data, ec_encode_data_update); its RS coder encodes with a Cauchy matrix, decodes by
// inverting the rows of the units it read, and encodes incrementally one input at a time. Every
// result is compared with the system ISA-L doing the same calls.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "test/isal_compat/isal_lib.h"

namespace {

using namespace ecjit_test;

constexpr const char *kContractSymbols[] = {"gf_mul",           "gf_inv",          "gf_gen_rs_matrix",
                                            "gf_gen_cauchy1_matrix", "gf_invert_matrix", "gf_vect_mul",
                                            "ec_init_tables",   "ec_encode_data",  "ec_encode_data_update"};

// The library as Hadoop opens it: by name, lazily, its symbols global.
void *hadoop_style_handle() {
  static void *h = dlopen("libisal.so.2", RTLD_LAZY | RTLD_GLOBAL);
  return h;
}

struct Lib {
  GfMulFn gf_mul;
  GfInvFn gf_inv;
  GenFn gen_rs, gen_cauchy;
  InvertFn invert;
  MulFn vect_mul;
  InitFn init;
  EncFn encode;
  UpdFn update;
};
template <typename F>
F sym(void *h, const char *name) {
  return reinterpret_cast<F>(dlsym(h, name));
}
Lib bind(void *h) {
  return Lib{sym<GfMulFn>(h, "gf_mul"), sym<GfInvFn>(h, "gf_inv"), sym<GenFn>(h, "gf_gen_rs_matrix"),
             sym<GenFn>(h, "gf_gen_cauchy1_matrix"), sym<InvertFn>(h, "gf_invert_matrix"),
             sym<MulFn>(h, "gf_vect_mul"), sym<InitFn>(h, "ec_init_tables"), sym<EncFn>(h, "ec_encode_data"),
             sym<UpdFn>(h, "ec_encode_data_update")};
}

TEST(HdfsContract, LoadedByNameLazyGlobalWithAllNineSymbols) {
  void *h = hadoop_style_handle();
  ASSERT_NE(h, nullptr) << dlerror();
  for (const char *name : kContractSymbols) {
    void *p = dlsym(h, name);
    ASSERT_NE(p, nullptr) << name;
    Dl_info info{};
    ASSERT_NE(dladdr(p, &info), 0) << name;
    EXPECT_NE(std::string(info.dli_fname).find("isal-compat"), std::string::npos)
        << name << " resolved from " << info.dli_fname << ", not ecjit's drop-in (LD_LIBRARY_PATH)";
  }
}

// RS(k, m) as Hadoop's native coder drives it, through ecjit and through the system ISA-L.
struct CoderRun {
  std::vector<std::vector<u8>> parity, recovered, incremental;
  std::vector<u8> scalars;
};

CoderRun hadoop_rs(const Lib &L, int k, int m, int len, const std::vector<std::vector<u8>> &data,
              const std::vector<int> &erased) {
  const int n = k + m;
  CoderRun out;
  std::vector<u8> matrix(n * k), tables(32 * k * m);
  L.gen_cauchy(matrix.data(), n, k);
  L.init(k, m, &matrix[k * k], tables.data());
  std::vector<std::vector<u8>> units(data);
  units.resize(n, std::vector<u8>(len));
  std::vector<u8 *> in(k), outp(m);
  for (int i = 0; i < k; ++i) in[i] = units[i].data();
  for (int i = 0; i < m; ++i) outp[i] = units[k + i].data();
  L.encode(len, k, m, tables.data(), in.data(), outp.data());
  for (int i = 0; i < m; ++i) out.parity.push_back(units[k + i]);
  // Incremental: one data unit at a time (ec_encode_data_update), parity starting at zero.
  std::vector<std::vector<u8>> inc(m, std::vector<u8>(len, 0));
  std::vector<u8 *> incp(m);
  for (int i = 0; i < m; ++i) incp[i] = inc[i].data();
  for (int i = 0; i < k; ++i) L.update(len, k, m, i, tables.data(), units[i].data(), incp.data());
  out.incremental = inc;
  // Decode: the first k units not erased, their rows inverted, the erased rows multiplied out.
  std::vector<int> valid;
  for (int i = 0; i < n && int(valid.size()) < k; ++i)
    if (std::find(erased.begin(), erased.end(), i) == erased.end()) valid.push_back(i);
  std::vector<u8> sub(k * k), inv(k * k), dec(erased.size() * k), dtables(32 * k * erased.size());
  for (int r = 0; r < k; ++r) std::memcpy(&sub[r * k], &matrix[valid[r] * k], k);
  EXPECT_EQ(L.invert(sub.data(), inv.data(), k), 0);
  for (size_t e = 0; e < erased.size(); ++e)
    for (int j = 0; j < k; ++j) {
      u8 s = 0;
      for (int t = 0; t < k; ++t) s ^= L.gf_mul(matrix[erased[e] * k + t], inv[t * k + j]);
      dec[e * k + j] = s;
    }
  L.init(k, int(erased.size()), dec.data(), dtables.data());
  std::vector<u8 *> src(k), dst(erased.size());
  out.recovered.assign(erased.size(), std::vector<u8>(len));
  for (int j = 0; j < k; ++j) src[j] = units[valid[j]].data();
  for (size_t e = 0; e < erased.size(); ++e) dst[e] = out.recovered[e].data();
  L.encode(len, k, int(erased.size()), dtables.data(), src.data(), dst.data());
  for (size_t e = 0; e < erased.size(); ++e) EXPECT_EQ(out.recovered[e], units[erased[e]]) << "unit " << erased[e];
  // Scalars: gf_mul, gf_inv, gf_vect_mul, gf_gen_rs_matrix.
  for (int a = 1; a < 256; a += 37) {
    out.scalars.push_back(L.gf_inv(u8(a)));
    for (int b = 0; b < 256; b += 51) out.scalars.push_back(L.gf_mul(u8(a), u8(b)));
  }
  std::vector<u8> mt(32), vin(64, 0x5b), vout(64);
  // gf_vect_mul's 32-byte table built by hand (gf_vect_mul_init is not in the contract).
  for (int i = 0; i < 16; ++i) {
    mt[i] = L.gf_mul(0x1d, u8(i));
    mt[16 + i] = L.gf_mul(0x1d, u8(i << 4));
  }
  EXPECT_EQ(L.vect_mul(64, mt.data(), vin.data(), vout.data()), 0);
  out.scalars.insert(out.scalars.end(), vout.begin(), vout.end());
  std::vector<u8> rs(n * k);
  L.gen_rs(rs.data(), n, k);
  out.scalars.insert(out.scalars.end(), rs.begin(), rs.end());
  return out;
}

TEST(HdfsContract, RsCoderAsHadoopDrivesItEqualsTheSystemIsal) {
  void *h = hadoop_style_handle();
  ASSERT_NE(h, nullptr) << dlerror();
  IsalLib sys(kSystemIsal);
  ASSERT_TRUE(sys.ok()) << sys.error();
  const Lib ours = bind(h);
  void *sys_handle = dlopen(kSystemIsal, RTLD_NOW | RTLD_LOCAL);
  const Lib theirs = bind(sys_handle);
  std::mt19937 rng(2026);
  // HDFS's built-in policies: RS-6-3, RS-10-4, RS-3-2; cell sizes 64 KiB .. 1 MiB, odd lengths.
  struct Case {
    int k, m, len;
    std::vector<int> erased;
  };
  for (const Case &c : {Case{6, 3, 65536, {0, 4, 7}}, Case{10, 4, 1 << 20, {2, 9, 10, 13}},
                        Case{3, 2, 1000, {1, 3}}, Case{6, 3, 4096 + 8, {8}}}) {
    SCOPED_TRACE("RS(" + std::to_string(c.k) + "," + std::to_string(c.m) + ") len " + std::to_string(c.len));
    std::vector<std::vector<u8>> data(c.k, std::vector<u8>(c.len));
    for (auto &d : data)
      for (auto &b : d) b = u8(rng());
    CoderRun a = hadoop_rs(ours, c.k, c.m, c.len, data, c.erased);
    CoderRun b = hadoop_rs(theirs, c.k, c.m, c.len, data, c.erased);
    EXPECT_TRUE(a.parity == b.parity) << "parity differs from the system ISA-L";
    EXPECT_TRUE(a.incremental == a.parity) << "incremental encode differs from encode";
    EXPECT_TRUE(a.recovered == b.recovered);
    EXPECT_TRUE(a.scalars == b.scalars) << "gf_mul / gf_inv / gf_vect_mul / gf_gen_rs_matrix differ";
  }
}

}  // namespace
