// Differential test: ecjit's libisal.so.2 against the Debian libisal.so.2, loaded side by side, byte for byte.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <chrono>
#include <vector>

#include "isal_compat/ecjit_isal_compat.h"
#include "test/isal_compat/isal_lib.h"

namespace ecjit_test {
namespace {

IsalLib &sys() {
  static IsalLib *l = new IsalLib(kSystemIsal);
  return *l;
}
// ECJIT_TEST_ENV="A=1,B=2" sets A and B before the drop-in is loaded: a registration that needs
// two variables (gtest_discover_tests passes a one-entry ENVIRONMENT only).
IsalLib &ours() {
  static IsalLib *l = [] {
    if (const char *e = std::getenv("ECJIT_TEST_ENV")) {
      std::string all = e;
      for (size_t at = 0; at < all.size();) {
        const size_t end = std::min(all.find(',', at), all.size());
        const std::string kv = all.substr(at, end - at);
        const size_t eq = kv.find('=');
        if (eq != std::string::npos) setenv(kv.substr(0, eq).c_str(), kv.substr(eq + 1).c_str(), 1);
        at = end + 1;
      }
    }
    return new IsalLib(ECJIT_ISAL_COMPAT_PATH);
  }();
  return *l;
}

// ISA-L's per-ISA names this CPU can run (the system library's would fault otherwise).
std::vector<std::string> isa_suffixes(bool with_base) {
  std::vector<std::string> s;
  if (with_base) s.push_back("_base");
  __builtin_cpu_init();
  if (__builtin_cpu_supports("sse4.1")) s.push_back("_sse");
  if (__builtin_cpu_supports("avx")) s.push_back("_avx");
  if (__builtin_cpu_supports("avx2")) s.push_back("_avx2");
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
      __builtin_cpu_supports("avx512cd"))
    s.push_back("_avx512");
  return s;
}

// n buffers of len bytes plus a guard tail, filled with random bytes; aligned to 64.
class Shards {
 public:
  static constexpr int kPad = 64;
  Shards(int n, int len, std::mt19937_64 &rng) : n_(n), len_(len) {
    const size_t stride = (size_t(len) + kPad + 63) / 64 * 64;
    mem_.resize(stride * size_t(n) + 64);
    uint8_t *base = mem_.data() + (64 - reinterpret_cast<uintptr_t>(mem_.data()) % 64) % 64;
    for (auto &b : mem_) b = uint8_t(rng());
    for (int i = 0; i < n; ++i) ptr_.push_back(base + stride * i);
  }
  Shards(const Shards &o) : Shards(o.n_, o.len_, dummy_rng()) { copy_from(o); }
  void copy_from(const Shards &o) {
    for (int i = 0; i < n_; ++i) std::memcpy(ptr_[i], o.ptr_[i], size_t(len_) + kPad);
  }
  u8 **p() { return ptr_.data(); }
  void **v() { return reinterpret_cast<void **>(ptr_.data()); }
  u8 *operator[](int i) { return ptr_[i]; }
  int n() const { return n_; }
  // First difference (including the guard tail) as text, or "" when equal.
  std::string diff(const Shards &o) const {
    for (int i = 0; i < n_; ++i)
      for (int j = 0; j < len_ + kPad; ++j)
        if (ptr_[i][j] != o.ptr_[i][j])
          return "buffer " + std::to_string(i) + " byte " + std::to_string(j) +
                 (j >= len_ ? " (past len)" : "") + ": " + std::to_string(ptr_[i][j]) + " vs " +
                 std::to_string(o.ptr_[i][j]);
    return "";
  }

 private:
  static std::mt19937_64 &dummy_rng() {
    thread_local std::mt19937_64 r(1);
    return r;
  }
  int n_, len_;
  std::vector<uint8_t> mem_;
  std::vector<u8 *> ptr_;
};

std::vector<u8> random_bytes(size_t n, std::mt19937_64 &rng) {
  std::vector<u8> v(n);
  for (auto &b : v) b = u8(rng());
  return v;
}

// Genuine tables (ec_init_tables of a random matrix) and random tables of the same size.
struct TablePair {
  std::vector<u8> genuine, random;
};
TablePair make_tables(int k, int rows, std::mt19937_64 &rng) {
  TablePair t;
  std::vector<u8> a = random_bytes(size_t(k) * rows, rng);
  if (!a.empty()) a[0] = 0;  // zero coefficients happen (sparse decode matrices)
  t.genuine.resize(32 * a.size());
  sys().fn<InitFn>("ec_init_tables")(k, rows, a.data(), t.genuine.data());
  std::vector<u8> mine(t.genuine.size());
  ours().fn<InitFn>("ec_init_tables")(k, rows, a.data(), mine.data());
  EXPECT_EQ(mine, t.genuine) << "ec_init_tables k=" << k << " rows=" << rows;
  t.random = random_bytes(t.genuine.size(), rng);
  return t;
}

std::vector<std::pair<int, int>> shapes() {
  std::vector<std::pair<int, int>> s;
  for (int k = 1; k <= 32; ++k) s.push_back({k, 1 + (k * 5) % 8});
  for (int k : {10, 32})
    for (int m = 1; m <= 8; ++m) s.push_back({k, m});
  s.push_back({64, 12});   // two row blocks
  s.push_back({200, 3});   // wide
  s.push_back({100, 20});  // beyond kMaxJitCoefficients: the portable kernel
  return s;
}

const int kLens[] = {1, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 4651};

class IsalDiff : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    ASSERT_TRUE(sys().ok()) << sys().error();
    ASSERT_TRUE(ours().ok()) << ours().error();
  }
};

TEST_F(IsalDiff, LoadsTwoDistinctLibraries) {
  EXPECT_NE(sys().raw("ec_encode_data"), ours().raw("ec_encode_data"));
  EXPECT_EQ(sys().raw("ecjit_isal_compat_version"), nullptr);
  auto version = ours().fn<const char *(*)()>("ecjit_isal_compat_version");
  ASSERT_NE(version, nullptr);
  EXPECT_NE(std::string(version()).find("ecjit-isal-compat"), std::string::npos);
  auto status = ours().fn<const char *(*)()>("ecjit_isal_jit_status");
  ASSERT_NE(status, nullptr);
  const char *jit_env = std::getenv("ECJIT_ISAL_JIT");
  const bool want_jit = !(jit_env && std::string(jit_env) == "0");
  EXPECT_EQ(std::string(status()).rfind("ok:", 0) == 0, want_jit) << status();
  std::printf("ecjit libisal: %s; JIT %s\n", version(), status());
}

// Every erasure-code and RAID name the system library exports, ours exports too.
TEST_F(IsalDiff, ExportsEveryName) {
  std::vector<std::string> names = {"ec_init_tables", "gf_mul", "gf_inv", "gf_gen_rs_matrix",
                                    "gf_gen_cauchy1_matrix", "gf_invert_matrix", "gf_vect_mul_init"};
  for (const char *f : {"ec_encode_data", "ec_encode_data_update", "gf_vect_dot_prod", "gf_vect_mad"})
    for (const char *s : {"", "_base", "_sse", "_avx", "_avx2", "_avx512"}) names.push_back(std::string(f) + s);
  for (const char *s : {"", "_base", "_sse", "_avx"}) names.push_back(std::string("gf_vect_mul") + s);
  for (int n = 2; n <= 6; ++n)
    for (const char *f : {"dot_prod", "mad"})
      for (const char *s : {"_sse", "_avx", "_avx2", "_avx512"})
        names.push_back("gf_" + std::to_string(n) + "vect_" + f + s);
  for (const char *s : {"", "_base", "_sse", "_avx", "_avx512"}) names.push_back(std::string("xor_gen") + s);
  for (const char *s : {"", "_base", "_sse", "_avx", "_avx2", "_avx512"}) names.push_back(std::string("pq_gen") + s);
  for (const char *s : {"", "_base", "_sse"}) {
    names.push_back(std::string("xor_check") + s);
    names.push_back(std::string("pq_check") + s);
  }
  for (const std::string &n : names) {
    EXPECT_NE(sys().raw(n.c_str()), nullptr) << n << " missing from the system ISA-L";
    EXPECT_NE(ours().raw(n.c_str()), nullptr) << n << " missing from ecjit's libisal";
  }
  // Nothing of ecjit's internals leaks out.
  EXPECT_EQ(ours().raw("_ZN5ecjit3Jit6createERKNS_10JitOptionsE"), nullptr);
}

TEST_F(IsalDiff, GfMulInvExhaustive) {
  auto mul_s = sys().fn<GfMulFn>("gf_mul"), mul_o = ours().fn<GfMulFn>("gf_mul");
  auto inv_s = sys().fn<GfInvFn>("gf_inv"), inv_o = ours().fn<GfInvFn>("gf_inv");
  auto init_s = sys().fn<MulInitFn>("gf_vect_mul_init"), init_o = ours().fn<MulInitFn>("gf_vect_mul_init");
  for (int a = 0; a < 256; ++a) {
    ASSERT_EQ(inv_s(u8(a)), inv_o(u8(a))) << "gf_inv " << a;
    u8 ts[32], to[32];
    init_s(u8(a), ts);
    init_o(u8(a), to);
    ASSERT_EQ(0, std::memcmp(ts, to, 32)) << "gf_vect_mul_init " << a;
    for (int b = 0; b < 256; ++b) ASSERT_EQ(mul_s(u8(a), u8(b)), mul_o(u8(a), u8(b))) << a << "*" << b;
  }
}

TEST_F(IsalDiff, MatrixGenerators) {
  for (const char *name : {"gf_gen_rs_matrix", "gf_gen_cauchy1_matrix"}) {
    auto gs = sys().fn<GenFn>(name), go = ours().fn<GenFn>(name);
    for (int k = 1; k <= 40; ++k)
      for (int m : {k, k + 1, k + 4, k + 8, std::min(255, k + 60)}) {
        std::vector<u8> as(size_t(m) * k, 0xAA), ao(size_t(m) * k, 0xAA);
        gs(as.data(), m, k);
        go(ao.data(), m, k);
        ASSERT_EQ(as, ao) << name << " m=" << m << " k=" << k;
      }
  }
}

TEST_F(IsalDiff, InvertMatrixIncludingSingular) {
  auto is = sys().fn<InvertFn>("gf_invert_matrix"), io = ours().fn<InvertFn>("gf_invert_matrix");
  std::mt19937_64 rng(7);
  int singular = 0;
  for (int iter = 0; iter < 400; ++iter) {
    const int n = 1 + int(rng() % 32);
    std::vector<u8> in = random_bytes(size_t(n) * n, rng);
    if (iter % 4 == 1 && n > 1) std::memcpy(&in[n], &in[0], size_t(n));  // two equal rows
    if (iter % 4 == 2) for (int r = 0; r < n; ++r) in[size_t(r) * n] = 0;  // a zero column
    if (iter % 4 == 3)  // mostly zeros: exercises the pivot search
      for (auto &b : in) b = (rng() % 5 == 0) ? u8(rng()) : 0;
    std::vector<u8> ins = in, ino = in, outs(size_t(n) * n, 0x55), outo(size_t(n) * n, 0x55);
    const int rs = is(ins.data(), outs.data(), n);
    const int ro = io(ino.data(), outo.data(), n);
    ASSERT_EQ(rs, ro) << "n=" << n << " iter=" << iter;
    ASSERT_EQ(outs, outo) << "out_mat n=" << n << " iter=" << iter;
    ASSERT_EQ(ins, ino) << "in_mat after the call, n=" << n << " iter=" << iter;
    singular += rs != 0;
  }
  EXPECT_GT(singular, 50);
}

TEST_F(IsalDiff, EncodeDataAllEntryPoints) {
  std::vector<std::string> names = {"ec_encode_data"};
  for (const std::string &s : isa_suffixes(true)) names.push_back("ec_encode_data" + s);
  std::mt19937_64 rng(11);
  for (auto [k, rows] : shapes()) {
    TablePair t = make_tables(k, rows, rng);
    for (int len : kLens) {
      Shards data(k, len, rng), out_s(rows, len, rng);
      for (int tab = 0; tab < 2; ++tab) {
        u8 *g = tab ? t.random.data() : t.genuine.data();
        for (const std::string &name : names) {
          Shards out_o(out_s);
          Shards out_s2(out_s);
          sys().fn<EncFn>(name)(len, k, rows, g, data.p(), out_s2.p());
          ours().fn<EncFn>(name)(len, k, rows, g, data.p(), out_o.p());
          ASSERT_EQ("", out_s2.diff(out_o)) << name << " k=" << k << " rows=" << rows
                                            << " len=" << len << (tab ? " random tables" : " genuine tables");
        }
      }
    }
  }
  // One large length through the dispatched name.
  TablePair t = make_tables(10, 4, rng);
  Shards data(10, 100003, rng), out_s(4, 100003, rng), out_o(out_s);
  sys().fn<EncFn>("ec_encode_data")(100003, 10, 4, t.genuine.data(), data.p(), out_s.p());
  ours().fn<EncFn>("ec_encode_data")(100003, 10, 4, t.genuine.data(), data.p(), out_o.p());
  ASSERT_EQ("", out_s.diff(out_o));
}

// Loading the drop-in and calls served by its ahead-of-time kernels map no LLVM (the JIT is
// libecjit_isal_jit.so, dlopen()ed when it starts); asking for the JIT maps both. Default
// registration (a fresh process per test), where the library has ahead-of-time kernels.
bool mapped(const std::string &name) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line))
    if (line.find(name) != std::string::npos) return true;
  return false;
}

TEST_F(IsalDiff, LlvmIsMappedOnlyOnceTheJitStarts) {
  if (std::getenv("ECJIT_ISAL_COMPILE") || std::getenv("ECJIT_ISAL_JIT") || std::getenv("ECJIT_TEST_ENV"))
    GTEST_SKIP() << "runs with the default settings only";
  auto stats = ours().fn<int (*)(ecjit_isal_stats *, size_t)>("ecjit_isal_get_stats");
  std::mt19937_64 rng(47);
  const int k = 10, rows = 4, len = 65536;
  TablePair t = make_tables(k, rows, rng);
  Shards data(k, len, rng), out_s(rows, len, rng), out_o(out_s);
  sys().fn<EncFn>("ec_encode_data")(len, k, rows, t.genuine.data(), data.p(), out_s.p());
  ours().fn<EncFn>("ec_encode_data")(len, k, rows, t.genuine.data(), data.p(), out_o.p());
  ASSERT_EQ("", out_s.diff(out_o));
  ecjit_isal_stats s{};
  stats(&s, sizeof s);
  if (s.aot_runs == 0) GTEST_SKIP() << "no ahead-of-time kernels in this build (the first call starts the JIT)";
  EXPECT_EQ(s.jit_enabled, 0);
  EXPECT_FALSE(mapped("libLLVM")) << "LLVM mapped before the JIT started";
  EXPECT_FALSE(mapped("libecjit_isal_jit"));
  const std::string status = ours().fn<const char *(*)()>("ecjit_isal_jit_status")();
  ASSERT_EQ(status.rfind("ok:", 0), 0u) << status;
  EXPECT_TRUE(mapped("libecjit_isal_jit"));
  EXPECT_TRUE(mapped("libLLVM"));
  stats(&s, sizeof s);
  EXPECT_EQ(s.jit_enabled, 1);
}

// Registration isal_diff_test.aot (ECJIT_ISAL_JIT=0, ECJIT_TEST_AOT=1; built where the library
// has ahead-of-time shape kernels): every ec_encode_data / _update call of any shape, genuine
// or caller-built tables, runs on them - never the portable kernel - with ISA-L's bytes.
TEST_F(IsalDiff, AheadOfTimeKernelsServeFirstCalls) {
  if (!std::getenv("ECJIT_TEST_AOT")) GTEST_SKIP() << "runs in the isal_diff_test.aot registration";
  auto stats = ours().fn<int (*)(ecjit_isal_stats *, size_t)>("ecjit_isal_get_stats");
  ecjit_isal_stats s0{}, s{};
  stats(&s0, sizeof s0);
  std::mt19937_64 rng(43);
  int calls = 0;
  for (int k = 1; k <= 20; ++k)
    for (int rows : {1, 3, 4, 8, 9, 12}) {
      TablePair t = make_tables(k, rows, rng);
      for (int len : {1, 31, 64, 1000 + k}) {
        Shards data(k, len, rng), init(rows, len, rng);
        for (int tab = 0; tab < 2; ++tab) {
          u8 *g = tab ? t.random.data() : t.genuine.data();
          Shards out_s(init), out_o(init);
          sys().fn<EncFn>("ec_encode_data")(len, k, rows, g, data.p(), out_s.p());
          ours().fn<EncFn>("ec_encode_data")(len, k, rows, g, data.p(), out_o.p());
          ASSERT_EQ("", out_s.diff(out_o)) << "k=" << k << " rows=" << rows << " len=" << len << " tab=" << tab;
          const int src = int(rng() % unsigned(k));
          sys().fn<UpdFn>("ec_encode_data_update")(len, k, rows, src, g, data[src], out_s.p());
          ours().fn<UpdFn>("ec_encode_data_update")(len, k, rows, src, g, data[src], out_o.p());
          ASSERT_EQ("", out_s.diff(out_o)) << "update k=" << k << " rows=" << rows << " len=" << len;
          calls += 2;
        }
      }
    }
  stats(&s, sizeof s);
  EXPECT_EQ(s.portable_runs, s0.portable_runs) << "a call ran the portable kernel";
  EXPECT_EQ(s.jit_runs, s0.jit_runs);
  EXPECT_GE(s.aot_runs - s0.aot_runs, uint64_t(calls));
  EXPECT_EQ(s.shape_runs - s0.shape_runs, s.aot_runs - s0.aot_runs);
}

// Parity built one source at a time, in random order with repeats, equals the system's
// after every step; for genuine tables it ends at ec_encode_data's parity.
TEST_F(IsalDiff, EncodeDataUpdateSequences) {
  std::vector<std::string> names = {"ec_encode_data_update"};
  for (const std::string &s : isa_suffixes(true)) names.push_back("ec_encode_data_update" + s);
  std::mt19937_64 rng(13);
  const std::pair<int, int> kShapes[] = {{1, 1}, {2, 2}, {3, 7}, {6, 3}, {10, 4}, {12, 8}, {32, 2}, {17, 5}};
  for (auto [k, rows] : kShapes) {
    TablePair t = make_tables(k, rows, rng);
    for (int len : {1, 31, 32, 33, 100, 4651}) {
      Shards data(k, len, rng);
      for (int tab = 0; tab < 2; ++tab) {
        u8 *g = tab ? t.random.data() : t.genuine.data();
        for (const std::string &name : names) {
          Shards par_s(rows, len, rng), par_o(par_s);
          std::vector<int> order;
          for (int i = 0; i < k; ++i) order.push_back(i);
          std::shuffle(order.begin(), order.end(), rng);
          order.push_back(int(rng() % k));  // a repeat cancels nothing: it adds again
          for (int vec_i : order) {
            sys().fn<UpdFn>(name)(len, k, rows, vec_i, g, data[vec_i], par_s.p());
            ours().fn<UpdFn>(name)(len, k, rows, vec_i, g, data[vec_i], par_o.p());
            ASSERT_EQ("", par_s.diff(par_o)) << name << " k=" << k << " rows=" << rows << " len=" << len
                                             << " vec_i=" << vec_i << (tab ? " random" : " genuine");
          }
        }
      }
    }
  }
}

TEST_F(IsalDiff, DotProdAndMadEveryWidth) {
  std::mt19937_64 rng(17);
  const int lens[] = {1, 15, 16, 17, 31, 32, 33, 63, 64, 100, 1000};
  for (int vlen : {1, 5, 17}) {
    TablePair t = make_tables(vlen, 6, rng);  // 6 rows: enough for gf_6vect_*
    for (int len : lens) {
      Shards src(vlen, len, rng), dst(6, len, rng);
      for (int tab = 0; tab < 2; ++tab) {
        u8 *g = tab ? t.random.data() : t.genuine.data();
        auto check = [&](const std::string &name, auto call) {
          Shards ds(dst), dn(dst);
          call(sys(), ds);
          call(ours(), dn);
          ASSERT_EQ("", ds.diff(dn)) << name << " vlen=" << vlen << " len=" << len << (tab ? " random" : " genuine");
        };
        std::vector<std::string> one = {"gf_vect_dot_prod"};
        for (const std::string &s : isa_suffixes(true)) one.push_back("gf_vect_dot_prod" + s);
        for (const std::string &name : one)
          check(name, [&](IsalLib &l, Shards &d) { l.fn<Dot1Fn>(name)(len, vlen, g, src.p(), d[0]); });
        const int vec_i = int(rng() % vlen);
        std::vector<std::string> mad1 = {"gf_vect_mad"};
        for (const std::string &s : isa_suffixes(true)) mad1.push_back("gf_vect_mad" + s);
        for (const std::string &name : mad1)
          check(name, [&](IsalLib &l, Shards &d) { l.fn<Mad1Fn>(name)(len, vlen, vec_i, g, src[vec_i], d[0]); });
        for (int n = 2; n <= 6; ++n)
          for (const std::string &s : isa_suffixes(false)) {
            const std::string dn = "gf_" + std::to_string(n) + "vect_dot_prod" + s;
            check(dn, [&](IsalLib &l, Shards &d) { l.fn<DotNFn>(dn)(len, vlen, g, src.p(), d.p()); });
            const std::string mn = "gf_" + std::to_string(n) + "vect_mad" + s;
            check(mn, [&](IsalLib &l, Shards &d) { l.fn<MadNFn>(mn)(len, vlen, vec_i, g, src[vec_i], d.p()); });
          }
      }
    }
  }
}

// gf_vect_mul: byte-identical for valid lengths (multiples of 32). For other lengths
// ISA-L's vector versions return nonzero but still write whole 32-byte blocks past len;
// ecjit's return -1 and write nothing, so there only the failure is compared.
TEST_F(IsalDiff, VectMul) {
  std::mt19937_64 rng(19);
  std::vector<std::string> names = {"gf_vect_mul", "gf_vect_mul_base"};
  for (const std::string &s : isa_suffixes(false))
    if (s == "_sse" || s == "_avx") names.push_back("gf_vect_mul" + s);
  for (int iter = 0; iter < 8; ++iter) {
    u8 tbl[32];
    sys().fn<MulInitFn>("gf_vect_mul_init")(u8(rng()), tbl);
    if (iter % 2) for (auto &b : tbl) b = u8(rng());
    for (int len : {0, 1, 16, 31, 32, 33, 64, 96, 4096, 4097}) {
      const int n = std::max(len, 1) + 64;
      Shards src(1, n, rng), dst(1, n, rng);
      for (const std::string &name : names) {
        const bool base = name == "gf_vect_mul_base";
        const bool valid = base || (len > 0 && len % 32 == 0);
        Shards ds(dst), dn(dst);
        const int rs = sys().fn<MulFn>(name)(len, tbl, src[0], ds[0]);
        const int rn = ours().fn<MulFn>(name)(len, tbl, src[0], dn[0]);
        if (!valid) {
          EXPECT_NE(rs, 0) << name << " len=" << len;
          EXPECT_NE(rn, 0) << name << " len=" << len;
          EXPECT_EQ("", dn.diff(dst)) << name << " wrote on an invalid len " << len;
          continue;
        }
        if (!base) ASSERT_EQ(rs, rn) << name << " len=" << len;  // base is void in ISA-L 2.30
        ASSERT_EQ("", ds.diff(dn)) << name << " len=" << len << " iter=" << iter;
      }
    }
  }
}

TEST_F(IsalDiff, RaidXorPq) {
  std::mt19937_64 rng(23);
  std::vector<std::string> gens, checks = {"xor_check", "xor_check_base", "xor_check_sse",
                                           "pq_check", "pq_check_base", "pq_check_sse"};
  for (const char *s : {"", "_base", "_sse", "_avx"}) gens.push_back(std::string("xor_gen") + s);
  for (const char *s : {"", "_base", "_sse", "_avx"}) gens.push_back(std::string("pq_gen") + s);
  if (__builtin_cpu_supports("avx2")) gens.push_back("pq_gen_avx2");
  for (const std::string &s : isa_suffixes(false))
    if (s == "_avx512") {
      gens.push_back("xor_gen_avx512");
      gens.push_back("pq_gen_avx512");
    }
  // ISA-L's pq_*_base read array[vects - 3] unchecked: not called with fewer than 4 vectors.
  auto defined = [](const std::string &name, int vects) {
    return !(name.rfind("pq_", 0) == 0 && name.find("_base") != std::string::npos && vects < 4);
  };
  for (int vects : {1, 2, 3, 4, 5, 10, 33}) {
    for (int len : {0, 8, 16, 24, 32, 48, 64, 96, 4096, 4104, 32768}) {
      Shards arr(vects, len, rng);
      for (const std::string &name : gens) {
        if (!defined(name, vects)) continue;
        Shards as(arr), ao(arr);
        const int rs = sys().fn<RaidFn>(name)(vects, len, as.v());
        const int ro = ours().fn<RaidFn>(name)(vects, len, ao.v());
        ASSERT_EQ(rs, ro) << name << " vects=" << vects << " len=" << len;
        ASSERT_EQ("", as.diff(ao)) << name << " vects=" << vects << " len=" << len;
      }
      // Checks on consistent arrays, then with one flipped byte.
      for (const char *gen : {"xor_gen_base", "pq_gen_base"}) {
        if (!defined(gen, vects)) continue;
        Shards good(arr);
        sys().fn<RaidFn>(gen)(vects, len, good.v());
        for (int flip = 0; flip < 2; ++flip) {
          Shards a(good);
          if (flip && len > 0) a[int(rng() % vects)][rng() % len] ^= u8(1 + rng() % 255);
          for (const std::string &c : checks) {
            if (!defined(c, vects)) continue;
            const int rs = sys().fn<RaidFn>(c)(vects, len, a.v());
            const int ro = ours().fn<RaidFn>(c)(vects, len, a.v());
            ASSERT_EQ(rs, ro) << c << " after " << gen << " vects=" << vects << " len=" << len << " flip=" << flip;
          }
        }
      }
    }
  }
}

// Repeated calls with the same tables reuse the plan (no verification, no compile); a
// caller that rewrites its table buffer with a new matrix gets the new matrix's result.
TEST_F(IsalDiff, CacheReuseAndRewrittenTables) {
  auto stats = ours().fn<int (*)(ecjit_isal_stats *, size_t)>("ecjit_isal_get_stats");
  ASSERT_NE(stats, nullptr);
  std::mt19937_64 rng(29);
  const int k = 9, rows = 3, len = 8192;
  std::vector<u8> g(32 * k * rows);
  Shards data(k, len, rng), out_s(rows, len, rng), out_o(out_s);
  std::vector<u8> a = random_bytes(k * rows, rng);
  ours().fn<InitFn>("ec_init_tables")(k, rows, a.data(), g.data());
  // Warm up: under the default policy the kernel is compiled once the matrix is hot; under
  // ECJIT_ISAL_COMPILE=eager it is compiled in the background from the first call (shape
  // kernels serve meanwhile), so wait until it serves (an ASan build compiles for ~0.1 s).
  const char *mode = std::getenv("ECJIT_ISAL_COMPILE");
  const bool own_kernel = mode && std::string(mode) == "eager";
  ecjit_isal_stats warm{};
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 300 || (own_kernel && warm.jit_enabled && warm.jit_runs == 0 &&
                              std::chrono::steady_clock::now() - t0 < std::chrono::seconds(30));
       ++i) {
    ours().fn<EncFn>("ec_encode_data")(len, k, rows, g.data(), data.p(), out_o.p());
    stats(&warm, sizeof warm);
  }
  // Compiles queued by the warm-up (the matrix's kernel, shape kernels) may still finish on
  // the JIT's background thread: wait until none has landed for 0.5 s, so that a compile in
  // the calls below is one they caused.
  ecjit_isal_stats settled{};
  stats(&settled, sizeof settled);
  for (auto quiet_since = std::chrono::steady_clock::now();
       std::chrono::steady_clock::now() - quiet_since < std::chrono::milliseconds(500) &&
       std::chrono::steady_clock::now() - t0 < std::chrono::seconds(60);) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    ecjit_isal_stats now{};
    stats(&now, sizeof now);
    if (now.kernels_compiled != settled.kernels_compiled) quiet_since = std::chrono::steady_clock::now();
    settled = now;
  }
  ecjit_isal_stats before{}, after{};
  stats(&before, sizeof before);
  for (int i = 0; i < 100; ++i) ours().fn<EncFn>("ec_encode_data")(len, k, rows, g.data(), data.p(), out_o.p());
  stats(&after, sizeof after);
  EXPECT_EQ(after.kernels_compiled, before.kernels_compiled);
  EXPECT_EQ(after.plans_built, before.plans_built);
  EXPECT_GE(after.plan_hits, before.plan_hits + 100);
  // JIT kernels: the matrix's own or the shape kernels (ECJIT_ISAL_COMPILE=shape).
  if (after.jit_enabled)
    EXPECT_GE(after.jit_runs + after.shape_runs, before.jit_runs + before.shape_runs + 100);
  // Same buffer, one coefficient changed.
  a[4] ^= 0x5a;
  ours().fn<InitFn>("ec_init_tables")(k, rows, a.data(), g.data());
  sys().fn<EncFn>("ec_encode_data")(len, k, rows, g.data(), data.p(), out_s.p());
  ours().fn<EncFn>("ec_encode_data")(len, k, rows, g.data(), data.p(), out_o.p());
  ASSERT_EQ("", out_s.diff(out_o));
  // Same buffer, one byte of one table corrupted: no longer ec_init_tables output.
  g[32 * 5 + 20] ^= 1;
  sys().fn<EncFn>("ec_encode_data")(len, k, rows, g.data(), data.p(), out_s.p());
  ours().fn<EncFn>("ec_encode_data")(len, k, rows, g.data(), data.p(), out_o.p());
  ASSERT_EQ("", out_s.diff(out_o));
  std::printf("compiles %llu (%.3f s total, slowest compile %.3f s), plans %llu, hits %llu, "
              "jit runs %llu, portable runs %llu, nibble plans %llu\n",
              (unsigned long long)after.kernels_compiled, after.compile_seconds, after.max_plan_seconds,
              (unsigned long long)after.plans_built, (unsigned long long)after.plan_hits,
              (unsigned long long)after.jit_runs, (unsigned long long)after.portable_runs,
              (unsigned long long)after.nibble_plans);
}

// Default policy (no ECJIT_ISAL_COMPILE): a new shape (columns, rows) runs the portable
// kernel while its shape kernels compile in the background, then shape kernels; a matrix
// gets its own kernel only once its work would have paid for a compile; the bytes never
// change. Runs only in the registration without ECJIT_ISAL_COMPILE / _JIT.
TEST_F(IsalDiff, DeferredCompilePolicy) {
  if (std::getenv("ECJIT_ISAL_COMPILE") || std::getenv("ECJIT_ISAL_JIT"))
    GTEST_SKIP() << "policy test runs with the default settings only";
  auto stats = ours().fn<int (*)(ecjit_isal_stats *, size_t)>("ecjit_isal_get_stats");
  std::mt19937_64 rng(31);
  const int k = 7, rows = 3, len = 4096;  // 86 KB of coefficient-bytes per call
  std::vector<u8> a = random_bytes(k * rows, rng), g(32 * k * rows);
  sys().fn<InitFn>("ec_init_tables")(k, rows, a.data(), g.data());
  Shards data(k, len, rng), init(rows, len, rng), out_s(init);
  sys().fn<EncFn>("ec_encode_data")(len, k, rows, g.data(), data.p(), out_s.p());
  ecjit_isal_stats s0{}, s{};
  {
    Shards out_o(init);  // the first call starts the JIT (in the background where kernels built
                         // ahead of time serve meanwhile)
    ours().fn<EncFn>("ec_encode_data")(len, k, rows, g.data(), data.p(), out_o.p());
    ASSERT_EQ("", out_s.diff(out_o));
  }
  (void)ours().fn<const char *(*)()>("ecjit_isal_jit_status")();  // waits for the JIT to be up
  stats(&s0, sizeof s0);
  if (!s0.jit_enabled) GTEST_SKIP() << "no JIT here";
  // The shape kernels arrive from the background thread without a caller compiling.
  const auto t0 = std::chrono::steady_clock::now();
  int calls = 0;
  for (; std::chrono::steady_clock::now() - t0 < std::chrono::seconds(60); ++calls) {
    Shards out_o(init);
    ours().fn<EncFn>("ec_encode_data")(len, k, rows, g.data(), data.p(), out_o.p());
    ASSERT_EQ("", out_s.diff(out_o)) << "call " << calls;
    stats(&s, sizeof s);
    if (s.shape_runs > s0.shape_runs) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ASSERT_GT(s.shape_runs, s0.shape_runs) << "shape kernels never arrived";
  EXPECT_EQ(s.jit_runs, s0.jit_runs) << "a matrix used on small shards compiled on its own";
  // A caller-built (non-ec_init_tables) table of the same shape runs on shape kernels that
  // read its 32-byte tables: the same kernels where the Jit's shape strategy is split-table
  // (already there), split-table ones compiled in the background where it is GFNI.
  std::vector<u8> bad = g;
  bad[32 * 4 + 7] ^= 0x21;
  Shards bs(init);
  sys().fn<EncFn>("ec_encode_data")(len, k, rows, bad.data(), data.p(), bs.p());
  stats(&s0, sizeof s0);
  const auto tb = std::chrono::steady_clock::now();
  for (int call = 0; std::chrono::steady_clock::now() - tb < std::chrono::seconds(60); ++call) {
    Shards bo(init);
    ours().fn<EncFn>("ec_encode_data")(len, k, rows, bad.data(), data.p(), bo.p());
    ASSERT_EQ("", bs.diff(bo)) << "caller-built table, call " << call;
    stats(&s, sizeof s);
    if (s.shape_runs > s0.shape_runs) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_GT(s.shape_runs, s0.shape_runs) << "a caller-built table never reached a shape kernel";
  EXPECT_EQ(s.jit_runs, s0.jit_runs) << "a caller-built table compiled on the caller's thread";
  // A hot matrix gets its own kernel (compiled in the background) after a while on the shape
  // kernels.
  int hot = 0;
  const auto t1 = std::chrono::steady_clock::now();
  for (; std::chrono::steady_clock::now() - t1 < std::chrono::seconds(60); ++hot) {
    Shards out_o(init);
    ours().fn<EncFn>("ec_encode_data")(len, k, rows, g.data(), data.p(), out_o.p());
    ASSERT_EQ("", out_s.diff(out_o)) << "hot call " << hot;
    stats(&s, sizeof s);
    if (s.jit_runs > s0.jit_runs) break;
    if (hot > 3000) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_GT(s.jit_runs, s0.jit_runs) << "never compiled a hot matrix";
  std::printf("RS(7,3) on 4 KiB shards: shape kernels from call %d on, own kernel %d calls later\n",
              calls + 1, hot + 1);
}

// Degraded reads as ISA-L's users write them: for random erasure sets of RS(10,4), the decode
// matrix from the system's gf_invert_matrix and ec_init_tables, then ec_encode_data of both
// libraries on the same tables at odd lengths: byte-identical, every set a new matrix.
TEST_F(IsalDiff, RandomDecodeMatrices) {
  std::mt19937_64 rng(37);
  const int k = 10, m = 4, n = k + m;
  std::vector<u8> enc(size_t(n) * k);
  sys().fn<GenFn>("gf_gen_cauchy1_matrix")(enc.data(), n, k);
  auto invert = sys().fn<InvertFn>("gf_invert_matrix");
  auto mul = sys().fn<u8 (*)(u8, u8)>("gf_mul");
  for (int set = 0; set < 120; ++set) {
    const int lost = 1 + int(rng() % m);
    std::vector<int> gone;
    while (int(gone.size()) < lost) {
      const int s = int(rng() % n);
      if (std::find(gone.begin(), gone.end(), s) == gone.end()) gone.push_back(s);
    }
    std::vector<u8> b(size_t(k) * k), d(size_t(k) * k), rows(size_t(lost) * k), g(32 * rows.size());
    for (int s = 0, r = 0; s < n && r < k; ++s)
      if (std::find(gone.begin(), gone.end(), s) == gone.end())
        std::memcpy(&b[size_t(r++) * k], &enc[size_t(s) * k], k);
    ASSERT_EQ(invert(b.data(), d.data(), k), 0);
    for (int r = 0; r < lost; ++r)
      for (int i = 0; i < k; ++i) {
        if (gone[r] < k) {
          rows[size_t(r) * k + i] = d[size_t(gone[r]) * k + i];
          continue;
        }
        u8 acc = 0;
        for (int j = 0; j < k; ++j) acc ^= mul(d[size_t(j) * k + i], enc[size_t(gone[r]) * k + j]);
        rows[size_t(r) * k + i] = acc;
      }
    sys().fn<InitFn>("ec_init_tables")(k, lost, rows.data(), g.data());
    const int len = int(1 + rng() % 9000);
    Shards src(k, len, rng), out_s(lost, len, rng), out_o(out_s);
    sys().fn<EncFn>("ec_encode_data")(len, k, lost, g.data(), src.p(), out_s.p());
    ours().fn<EncFn>("ec_encode_data")(len, k, lost, g.data(), src.p(), out_o.p());
    ASSERT_EQ("", out_s.diff(out_o)) << "set " << set << " lost " << lost << " len " << len;
  }
}

// Threads with different matrices at once; each result equals the system's.
TEST_F(IsalDiff, ConcurrentCallersDifferentMatrices) {
  constexpr int kThreads = 8, kIters = 12;
  std::vector<std::thread> threads;
  std::vector<std::string> errors(kThreads);
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([t, &errors] {
      std::mt19937_64 rng(1000 + t);
      for (int it = 0; it < kIters && errors[t].empty(); ++it) {
        const int k = 2 + int(rng() % 12), rows = 1 + int(rng() % 6), len = 1 + int(rng() % 3000);
        std::vector<u8> a = random_bytes(size_t(k) * rows, rng), g(32 * a.size());
        if (it % 3 == 0) a[0] = u8(t);  // some matrices shared between threads
        sys().fn<InitFn>("ec_init_tables")(k, rows, a.data(), g.data());
        Shards data(k, len, rng), out_s(rows, len, rng), out_o(out_s);
        sys().fn<EncFn>("ec_encode_data")(len, k, rows, g.data(), data.p(), out_s.p());
        ours().fn<EncFn>("ec_encode_data")(len, k, rows, g.data(), data.p(), out_o.p());
        errors[t] = out_s.diff(out_o);
      }
    });
  for (auto &th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ("", errors[t]) << "thread " << t;
}

}  // namespace
}  // namespace ecjit_test
