// baselines: ISA-L ec_encode_data (per ISA) and xor_gen, Jerasure, GF-Complete w=64 and the reference codec, timed like ecjit.
extern "C" {
#include <gf_complete.h>  // a C header without extern "C" of its own
}
#include <isa-l/erasure_code.h>
#include <isa-l/raid.h>
#include <jerasure.h>
#include <jerasure/reed_sol.h>

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench/shards.h"

// Exported by libisal 2.30 (its multibinary dispatcher's AVX-512 target) but not declared in
// the installed header.
extern "C" void ec_encode_data_avx512(int len, int k, int rows, unsigned char *g_tbls,
                                      unsigned char **data, unsigned char **coding);

namespace ecjit::bench {
namespace {

using IsalEncodeFn = void (*)(int, int, int, unsigned char *, unsigned char **, unsigned char **);

struct IsalVariant {
  const char *name;  // in the benchmark name: BM_isal/gf8/<name>/<size>
  IsalEncodeFn fn;
  bool (*usable)();  // whether this CPU runs it
};

bool always() { return true; }
bool has_sse41() { return __builtin_cpu_supports("sse4.1"); }
bool has_avx() { return __builtin_cpu_supports("avx"); }
bool has_avx2() { return __builtin_cpu_supports("avx2"); }
// ISA-L's own test (AVX-512 F, CD, BW, DQ, VL).
bool has_avx512() {
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd") &&
         __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
         __builtin_cpu_supports("avx512vl");
}

// ec_encode_data dispatches to the best of these; the others force a tier, like ecjit's masks.
const IsalVariant kIsalVariants[] = {
    {"ec_encode_data", ec_encode_data, always},
    {"avx512", ec_encode_data_avx512, has_avx512},
    {"avx2", ec_encode_data_avx2, has_avx2},
    {"avx", ec_encode_data_avx, has_avx},
    {"sse", ec_encode_data_sse, has_sse41},
    {"base", ec_encode_data_base, always},
};

// ISA-L's Cauchy matrix (gf_gen_cauchy1_matrix) expanded into its multiply tables. ecjit's
// isal-cauchy family reproduces the matrix bit for bit, so its reference codec checks ISA-L.
struct IsalTables {
  std::vector<unsigned char> matrix, tables;
  IsalTables(unsigned k, unsigned m) : matrix(size_t(k + m) * k), tables(size_t(32) * k * m) {
    gf_gen_cauchy1_matrix(matrix.data(), int(k + m), int(k));
    ec_init_tables(int(k), int(m), matrix.data() + size_t(k) * k, tables.data());
  }
};

void bm_isal(benchmark::State &state, IsalVariant v, size_t len) {
  static const IsalTables t(kK, kM);
  ShardSet &s = shared_shards(kK, kM, len);
  s.clear_parity();
  v.fn(int(len), int(kK), int(kM), const_cast<unsigned char *>(t.tables.data()),
         const_cast<unsigned char **>(s.data()), const_cast<unsigned char **>(s.parity()));
  const std::string bad = check_parity("isal-cauchy:k=" + std::to_string(kK) + ",m=" + std::to_string(kM), s);
  if (!bad.empty()) {
    state.SkipWithError(("ISA-L " + std::string(v.name) + ": " + bad).c_str());
    return;
  }
  for (auto _ : state) {
    v.fn(int(len), int(kK), int(kM), const_cast<unsigned char *>(t.tables.data()),
         const_cast<unsigned char **>(s.data()), const_cast<unsigned char **>(s.parity()));
    benchmark::ClobberMemory();
  }
  count_bytes(state, s);
}

// The memory-bandwidth reference: XOR of the k data shards into one output (ISA-L xor_gen).
void bm_xor_gen(benchmark::State &state, size_t len) {
  ShardSet &s = shared_shards(kK, kM, len);
  std::vector<void *> array(kK + 1);
  for (unsigned i = 0; i < kK; ++i) array[i] = s.data()[i];
  array[kK] = s.parity()[0];
  if (xor_gen(int(kK + 1), int(len), array.data()) != 0) {
    state.SkipWithError("xor_gen failed (length or alignment rejected)");
    return;
  }
  for (size_t b = 0; b < len; ++b) {
    uint8_t x = 0;
    for (unsigned i = 0; i < kK; ++i) x ^= s.data()[i][b];
    if (s.parity()[0][b] != x) {
      state.SkipWithError(("xor_gen output differs from the XOR of the inputs at byte " + std::to_string(b)).c_str());
      return;
    }
  }
  for (auto _ : state) {
    benchmark::DoNotOptimize(xor_gen(int(kK + 1), int(len), array.data()));
    benchmark::ClobberMemory();
  }
  count_bytes(state, s);
}

// Jerasure's reed_sol_vandermonde_coding_matrix, checked against ecjit's jerasure-vand.
void bm_jerasure(benchmark::State &state, int w, size_t len) {
  int *matrix = reed_sol_vandermonde_coding_matrix(int(kK), int(kM), w);
  if (!matrix) {
    state.SkipWithError("reed_sol_vandermonde_coding_matrix failed");
    return;
  }
  ShardSet &s = shared_shards(kK, kM, len);
  s.clear_parity();
  char **data = reinterpret_cast<char **>(const_cast<uint8_t **>(s.data()));
  char **coding = reinterpret_cast<char **>(const_cast<uint8_t **>(s.parity()));
  jerasure_matrix_encode(int(kK), int(kM), w, matrix, data, coding, int(len));
  const std::string bad = check_parity("jerasure-vand:k=" + std::to_string(kK) + ",m=" +
                                           std::to_string(kM) + ",gf=" + std::to_string(w), s);
  if (!bad.empty()) {
    std::free(matrix);
    state.SkipWithError(("Jerasure w=" + std::to_string(w) + ": " + bad).c_str());
    return;
  }
  for (auto _ : state) {
    jerasure_matrix_encode(int(kK), int(kM), w, matrix, data, coding, int(len));
    benchmark::ClobberMemory();
  }
  std::free(matrix);
  count_bytes(state, s);
}

// GF-Complete w=64 (its default polynomial x^64 + x^4 + x^3 + x + 1, ecjit's too):
// multiply_region of every data shard by its coefficient, accumulated into each parity
// shard, with the rs-vand GF(2^64) matrix; checked against ecjit's reference codec.
void bm_gf_complete_w64(benchmark::State &state, size_t len) {
  const std::string spec = "rs-vand:k=" + std::to_string(kK) + ",m=" + std::to_string(kM) + ",gf=64";
  Result<codes::LinearCode> code = codes::build_code(spec);
  gf_t gf;
  if (!code.ok() || !gf_init_easy(&gf, 64)) {
    state.SkipWithError("GF-Complete w=64 or the rs-vand GF(2^64) code failed to initialise");
    return;
  }
  ShardSet &s = shared_shards(kK, kM, len);
  auto encode = [&] {
    for (unsigned r = 0; r < kM; ++r)
      for (unsigned c = 0; c < kK; ++c)
        gf.multiply_region.w64(&gf, s.data()[c], s.parity()[r], code->parity.at(r, c), int(len),
                               c > 0 ? 1 : 0);
  };
  s.clear_parity();
  encode();
  const std::string bad = check_parity(spec, s);
  if (!bad.empty()) {
    gf_free(&gf, 0);
    state.SkipWithError(("GF-Complete w=64: " + bad).c_str());
    return;
  }
  for (auto _ : state) {
    encode();
    benchmark::ClobberMemory();
  }
  gf_free(&gf, 0);
  count_bytes(state, s);
}

// ecjit's scalar reference codec (Field::mul per symbol): the oracle, and the floor.
void bm_reference(benchmark::State &state, unsigned gf, size_t len) {
  const std::string spec = "rs-vand:k=" + std::to_string(kK) + ",m=" + std::to_string(kM) +
                           ",gf=" + std::to_string(gf);
  Result<codes::LinearCode> code = codes::build_code(spec);
  if (!code.ok()) {
    state.SkipWithError(code.status().to_string().c_str());
    return;
  }
  ShardSet &s = shared_shards(kK, kM, len);
  for (auto _ : state) {
    if (Status st = codes::ref_encode(*code, s.cdata(), s.parity(), len); !st.ok()) {
      state.SkipWithError(st.to_string().c_str());
      break;
    }
    benchmark::ClobberMemory();
  }
  count_bytes(state, s);
}

// ISA-L 2.31 (its AVX-512 and AVX2 GFNI kernels) from the shared library that
// bench/fetch_isal231.sh builds, named by $ECJIT_ISAL231; dlopen'ed with RTLD_DEEPBIND beside
// the linked Debian 2.30. Its own ec_init_tables: 2.31 writes GFNI matrices, not nibble
// tables, where it runs its GFNI kernels.
struct Isal231 {
  void (*gen)(unsigned char *, int, int) = nullptr;
  void (*init)(int, int, unsigned char *, unsigned char *) = nullptr;
  IsalEncodeFn encode = nullptr;
  std::vector<unsigned char> matrix, tables;
  static const Isal231 *get() {
    static const Isal231 *lib = [] () -> const Isal231 * {
      const char *path = std::getenv("ECJIT_ISAL231");
      if (!path || !*path) return nullptr;
      void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
      if (!h) {
        std::fprintf(stderr, "ISA-L 2.31 baseline skipped: %s\n", dlerror());
        return nullptr;
      }
      auto *l = new Isal231();
      l->gen = reinterpret_cast<decltype(l->gen)>(dlsym(h, "gf_gen_cauchy1_matrix"));
      l->init = reinterpret_cast<decltype(l->init)>(dlsym(h, "ec_init_tables"));
      l->encode = reinterpret_cast<IsalEncodeFn>(dlsym(h, "ec_encode_data"));
      if (!l->gen || !l->init || !l->encode) {
        std::fprintf(stderr, "ISA-L 2.31 baseline skipped: %s lacks an ISA-L symbol\n", path);
        return nullptr;
      }
      l->matrix.resize(size_t(kK + kM) * kK);
      l->tables.resize(size_t(32) * kK * kM);
      l->gen(l->matrix.data(), int(kK + kM), int(kK));
      l->init(int(kK), int(kM), l->matrix.data() + size_t(kK) * kK, l->tables.data());
      return l;
    }();
    return lib;
  }
};

void bm_isal231(benchmark::State &state, size_t len) {
  const Isal231 &t = *Isal231::get();
  ShardSet &s = shared_shards(kK, kM, len);
  s.clear_parity();
  auto run = [&] {
    t.encode(int(len), int(kK), int(kM), const_cast<unsigned char *>(t.tables.data()),
             const_cast<unsigned char **>(s.data()), const_cast<unsigned char **>(s.parity()));
  };
  run();
  const std::string bad = check_parity("isal-cauchy:k=" + std::to_string(kK) + ",m=" + std::to_string(kM), s);
  if (!bad.empty()) {
    state.SkipWithError(("ISA-L 2.31: " + bad).c_str());
    return;
  }
  for (auto _ : state) {
    run();
    benchmark::ClobberMemory();
  }
  count_bytes(state, s);
}

}  // namespace

void register_baselines(size_t len) {
  {
    const std::string sz = "/" + std::to_string(len);
    for (const IsalVariant &v : kIsalVariants)
      if (v.usable())
        benchmark::RegisterBenchmark(("BM_isal/gf8/" + std::string(v.name) + sz).c_str(), bm_isal, v, len);
    if (Isal231::get())
      benchmark::RegisterBenchmark(("BM_isal231/gf8/ec_encode_data" + sz).c_str(), bm_isal231, len);
    benchmark::RegisterBenchmark(("BM_isal_xor_gen" + sz).c_str(), bm_xor_gen, len);
    for (int w : {8, 16, 32})
      benchmark::RegisterBenchmark(("BM_jerasure/w" + std::to_string(w) + sz).c_str(), bm_jerasure, w, len);
    benchmark::RegisterBenchmark(("BM_gf_complete/w64" + sz).c_str(), bm_gf_complete_w64, len);
    // The scalar oracle is slow; 1 MiB and up say nothing the small sizes do not.
    if (len <= (64u << 10))
      for (unsigned gf : {8u, 16u})
        benchmark::RegisterBenchmark(("BM_reference/gf" + std::to_string(gf) + sz).c_str(), bm_reference, gf, len);
  }
}

}  // namespace ecjit::bench
