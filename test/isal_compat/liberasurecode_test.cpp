// liberasurecode (OpenStack Swift's EC library) with its ISA-L backends running on whichever libisal.so.2 the loader found.
//
// ctest runs this twice: with LD_LIBRARY_PATH at ecjit's build/isal-compat (ECJIT_EXPECT_ISAL
// = ecjit) and without it (= system). Each run first proves which libisal.so.2 is mapped.
// The interoperability tests re-run this binary as a child under the other library.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

extern "C" {
#include <liberasurecode/erasurecode.h>
}

#include "isal_compat/ecjit_isal_compat.h"

namespace {

constexpr const char *kSystemIsal = "/usr/lib/x86_64-linux-gnu/libisal.so.2";
constexpr const char *kOursDir = ECJIT_ISAL_COMPAT_DIR;

// Which libisal.so.2 files are mapped into this process.
std::vector<std::string> mapped_isal() {
  std::vector<std::string> out;
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    const size_t p = line.find('/');
    if (p == std::string::npos) continue;
    const std::string path = line.substr(p);
    if (path.find("libisal.so") != std::string::npos &&
        std::find(out.begin(), out.end(), path) == out.end())
      out.push_back(path);
  }
  return out;
}

// ECJIT_EXPECT_ISAL (ecjit | system) when set; else ecjit exactly when LD_LIBRARY_PATH
// names ecjit's build/isal-compat.
std::string expected_lib() {
  if (const char *e = std::getenv("ECJIT_EXPECT_ISAL")) return e;
  const char *p = std::getenv("LD_LIBRARY_PATH");
  return p && std::string(p).find(kOursDir) != std::string::npos ? "ecjit" : "system";
}

// Checks (after a backend instance exists) that exactly the expected library is mapped.
::testing::AssertionResult loaded_expected_isal() {
  const std::vector<std::string> maps = mapped_isal();
  void *h = dlopen("libisal.so.2", RTLD_NOW | RTLD_NOLOAD);
  const bool marker = h && dlsym(h, "ecjit_isal_compat_version");
  std::string all;
  for (const auto &m : maps) all += m + " ";
  if (maps.size() != 1) return ::testing::AssertionFailure() << "mapped: [" << all << "]";
  const bool is_ours = maps[0].find(std::string(kOursDir)) == 0 ||
                       maps[0].find("/isal-compat/libisal.so.2") != std::string::npos;
  const std::string want = expected_lib();
  if (want == "ecjit" && (!is_ours || !marker))
    return ::testing::AssertionFailure() << "expected ecjit's libisal, mapped: " << all << " marker " << marker;
  if (want == "system" && (is_ours || marker || maps[0].find(kSystemIsal) != 0))
    return ::testing::AssertionFailure() << "expected the system ISA-L, mapped: " << all;
  if (want != "ecjit" && want != "system")
    return ::testing::AssertionFailure() << "set ECJIT_EXPECT_ISAL to ecjit or system";
  return ::testing::AssertionSuccess() << all;
}

struct Instance {
  int desc = -1;
  Instance(ec_backend_id_t id, int k, int m) {
    ec_args args{};
    args.k = k;
    args.m = m;
    args.w = 8;
    args.hd = m;
    args.ct = CHKSUM_NONE;
    desc = liberasurecode_instance_create(id, &args);
  }
  ~Instance() {
    if (desc > 0) liberasurecode_instance_destroy(desc);
  }
};

std::vector<char> random_object(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<char> v(n);
  for (auto &c : v) c = char(rng());
  return v;
}

// The k + m fragments of one encode, copied out of liberasurecode's buffers.
struct Fragments {
  std::vector<std::vector<char>> frag;
  uint64_t len = 0;
};

::testing::AssertionResult encode(int desc, int k, int m, const std::vector<char> &obj, Fragments *out) {
  char **data = nullptr, **parity = nullptr;
  uint64_t flen = 0;
  int rc = liberasurecode_encode(desc, obj.data(), obj.size(), &data, &parity, &flen);
  if (rc != 0) return ::testing::AssertionFailure() << "liberasurecode_encode: " << rc;
  out->len = flen;
  out->frag.clear();
  for (int i = 0; i < k; ++i) out->frag.emplace_back(data[i], data[i] + flen);
  for (int i = 0; i < m; ++i) out->frag.emplace_back(parity[i], parity[i] + flen);
  liberasurecode_encode_cleanup(desc, data, parity);
  return ::testing::AssertionSuccess();
}

// Decodes with the fragments not in `missing` and rebuilds each missing one.
::testing::AssertionResult decode_without(int desc, const Fragments &f, const std::vector<int> &missing,
                                          const std::vector<char> &obj) {
  std::vector<char *> avail;
  for (int i = 0; i < int(f.frag.size()); ++i)
    if (std::find(missing.begin(), missing.end(), i) == missing.end())
      avail.push_back(const_cast<char *>(f.frag[i].data()));
  std::string which;
  for (int i : missing) which += std::to_string(i) + " ";
  char *out = nullptr;
  uint64_t out_len = 0;
  int rc = liberasurecode_decode(desc, avail.data(), int(avail.size()), f.len, 1, &out, &out_len);
  if (rc != 0) return ::testing::AssertionFailure() << "decode rc " << rc << " missing " << which;
  const bool same = out_len == obj.size() && std::memcmp(out, obj.data(), obj.size()) == 0;
  liberasurecode_decode_cleanup(desc, out);
  if (!same) return ::testing::AssertionFailure() << "decoded object differs, missing " << which;
  std::vector<char> rebuilt(f.len);
  for (int idx : missing) {
    rc = liberasurecode_reconstruct_fragment(desc, avail.data(), int(avail.size()), f.len, idx, rebuilt.data());
    if (rc != 0) return ::testing::AssertionFailure() << "reconstruct " << idx << " rc " << rc << " missing " << which;
    if (rebuilt != f.frag[idx])
      return ::testing::AssertionFailure() << "reconstructed fragment " << idx << " differs, missing " << which;
  }
  return ::testing::AssertionSuccess();
}

// Every subset of {0..n-1} with at most `most` elements, in a fixed order.
std::vector<std::vector<int>> subsets(int n, int most) {
  std::vector<std::vector<int>> out;
  for (uint32_t mask = 0; mask < (1u << n); ++mask)
    if (__builtin_popcount(mask) <= most) {
      std::vector<int> s;
      for (int i = 0; i < n; ++i)
        if (mask & (1u << i)) s.push_back(i);
      out.push_back(s);
    }
  return out;
}

struct Config {
  ec_backend_id_t id;
  const char *name;
  int k, m;
};
const Config kConfigs[] = {
    {EC_BACKEND_ISA_L_RS_VAND, "isa_l_rs_vand", 4, 2},
    {EC_BACKEND_ISA_L_RS_VAND, "isa_l_rs_vand", 6, 3},
    {EC_BACKEND_ISA_L_RS_VAND, "isa_l_rs_vand", 10, 4},
    {EC_BACKEND_ISA_L_RS_CAUCHY, "isa_l_rs_cauchy", 4, 2},
    {EC_BACKEND_ISA_L_RS_CAUCHY, "isa_l_rs_cauchy", 5, 3},
    {EC_BACKEND_ISA_L_RS_CAUCHY, "isa_l_rs_cauchy", 8, 4},
};

TEST(Liberasurecode, LoadsTheExpectedIsal) {
  ASSERT_TRUE(liberasurecode_backend_available(EC_BACKEND_ISA_L_RS_VAND));
  Instance inst(EC_BACKEND_ISA_L_RS_VAND, 4, 2);
  ASSERT_GT(inst.desc, 0);
  EXPECT_TRUE(loaded_expected_isal());
}

// Every missing-fragment set up to m, decode and reconstruct_fragment, per backend and (k, m).
TEST(Liberasurecode, EveryErasureSetUpToM) {
  for (const Config &c : kConfigs) {
    SCOPED_TRACE(std::string(c.name) + " k=" + std::to_string(c.k) + " m=" + std::to_string(c.m));
    Instance inst(c.id, c.k, c.m);
    ASSERT_GT(inst.desc, 0);
    ASSERT_TRUE(loaded_expected_isal());
    for (size_t size : {size_t(1), size_t(4093), size_t(65536 + 77)}) {
      const std::vector<char> obj = random_object(size, size * 31 + c.k);
      Fragments f;
      ASSERT_TRUE(encode(inst.desc, c.k, c.m, obj, &f));
      for (const auto &missing : subsets(c.k + c.m, c.m))
        ASSERT_TRUE(decode_without(inst.desc, f, missing, obj)) << "size " << size;
    }
  }
  if (expected_lib() == "ecjit") {
    void *h = dlopen("libisal.so.2", RTLD_NOW | RTLD_NOLOAD);
    ASSERT_NE(h, nullptr);
    auto stats = reinterpret_cast<int (*)(ecjit_isal_stats *, size_t)>(dlsym(h, "ecjit_isal_get_stats"));
    ASSERT_NE(stats, nullptr);
    ecjit_isal_stats s{};
    stats(&s, sizeof s);
    std::printf("ecjit libisal: %llu plans, %llu hits, %llu JIT runs, %llu portable runs, "
                "%llu compiles in %.3f s (slowest first call %.4f s)\n",
                (unsigned long long)s.plans_built, (unsigned long long)s.plan_hits,
                (unsigned long long)s.jit_runs, (unsigned long long)s.portable_runs,
                (unsigned long long)s.kernels_compiled, s.compile_seconds, s.max_plan_seconds);
    if (s.jit_enabled) EXPECT_GT(s.jit_runs + s.shape_runs, 0u);
  }
}

// A 10 MiB object (1 MiB fragments) through RS(10,4), five erasure patterns.
TEST(Liberasurecode, LargeObjectRs10_4) {
  Instance inst(EC_BACKEND_ISA_L_RS_VAND, 10, 4);
  ASSERT_GT(inst.desc, 0);
  const std::vector<char> obj = random_object((10 << 20) + 13, 99);
  Fragments f;
  ASSERT_TRUE(encode(inst.desc, 10, 4, obj, &f));
  for (const std::vector<int> &missing : std::vector<std::vector<int>>{{0}, {1, 5}, {0, 3, 9}, {2, 4, 6, 8}, {9, 10, 11, 12}})
    ASSERT_TRUE(decode_without(inst.desc, f, missing, obj));
  if (expected_lib() == "ecjit" && !std::getenv("ECJIT_ISAL_JIT")) {
    // These ran on shape kernels built into the library ahead of time (x86-64 builds: 66 MiB
    // is far below the work after which the JIT starts), or, without them, 1 MiB fragments
    // are worth a compile at once: JIT kernels. Never the portable kernel.
    void *h = dlopen("libisal.so.2", RTLD_NOW | RTLD_NOLOAD);
    auto stats = reinterpret_cast<int (*)(ecjit_isal_stats *, size_t)>(dlsym(h, "ecjit_isal_get_stats"));
    ASSERT_NE(stats, nullptr);
    ecjit_isal_stats s{};
    stats(&s, sizeof s);
    EXPECT_GE(s.jit_runs + s.shape_runs, 6u);  // the encode and five decodes at least
    EXPECT_EQ(s.portable_runs, 0u);
    if (s.aot_runs == 0) {
      EXPECT_EQ(s.jit_enabled, 1);
      EXPECT_GT(s.kernels_compiled, 0u);
    }
  }
}

// ---- interoperability: this binary as a child process under the other libisal.so.2 ----

std::string self_exe() {
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, size_t(n)) : std::string();
}

// Runs this binary with `args` under `lib` ("system": no LD_LIBRARY_PATH; "ecjit": ours).
int run_child(const std::string &lib, const std::vector<std::string> &args) {
  const pid_t pid = fork();
  if (pid == 0) {
    if (lib == "ecjit")
      setenv("LD_LIBRARY_PATH", kOursDir, 1);
    else
      unsetenv("LD_LIBRARY_PATH");
    setenv("ECJIT_EXPECT_ISAL", lib.c_str(), 1);
    std::vector<std::string> all = {self_exe()};
    all.insert(all.end(), args.begin(), args.end());
    std::vector<char *> argv;
    for (auto &a : all) argv.push_back(const_cast<char *>(a.c_str()));
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string temp_dir() {
  char tmpl[] = "/tmp/ecjit_isal_interop_XXXXXX";
  const char *d = mkdtemp(tmpl);
  return d ? d : "";
}

bool write_fragments(const std::string &dir, const Fragments &f) {
  for (size_t i = 0; i < f.frag.size(); ++i) {
    std::ofstream o(dir + "/frag" + std::to_string(i), std::ios::binary);
    o.write(f.frag[i].data(), std::streamsize(f.frag[i].size()));
    if (!o) return false;
  }
  return true;
}

bool read_fragments(const std::string &dir, int n, Fragments *f) {
  f->frag.clear();
  for (int i = 0; i < n; ++i) {
    std::ifstream in(dir + "/frag" + std::to_string(i), std::ios::binary);
    std::vector<char> v((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (v.empty()) return false;
    f->len = v.size();
    f->frag.push_back(std::move(v));
  }
  return true;
}

// Child entry points: "--encode <cfg> <dir>" writes fragments; "--decode <cfg> <dir>" checks
// every erasure set up to m and that its fragments equal the ones in <dir>. Exit 0 = ok.
constexpr size_t kInteropSize = 200003;
int child_main(const std::string &op, int cfg, const std::string &dir) {
  if (cfg < 0 || cfg >= int(std::size(kConfigs))) return 2;
  const Config &c = kConfigs[cfg];
  Instance inst(c.id, c.k, c.m);
  if (inst.desc <= 0) return 3;
  auto loaded = loaded_expected_isal();
  if (!loaded) {
    std::fprintf(stderr, "child: %s\n", loaded.message());
    return 4;
  }
  const std::vector<char> obj = random_object(kInteropSize, 4242 + cfg);
  if (op == "--encode") {
    Fragments f;
    if (!encode(inst.desc, c.k, c.m, obj, &f)) return 5;
    return write_fragments(dir, f) ? 0 : 6;
  }
  Fragments theirs, mine;
  if (!read_fragments(dir, c.k + c.m, &theirs)) return 7;
  if (!encode(inst.desc, c.k, c.m, obj, &mine)) return 5;
  if (mine.frag != theirs.frag) {
    std::fprintf(stderr, "child: fragments differ from the other library's\n");
    return 8;
  }
  for (const auto &missing : subsets(c.k + c.m, c.m)) {
    auto r = decode_without(inst.desc, theirs, missing, obj);
    if (!r) {
      std::fprintf(stderr, "child: %s\n", r.message());
      return 9;
    }
  }
  return 0;
}

void interop(const std::string &encoder, const std::string &decoder) {
  for (int cfg : {2, 5}) {  // RS(10,4) vand and RS(8,4) cauchy
    const std::string dir = temp_dir();
    ASSERT_FALSE(dir.empty());
    ASSERT_EQ(0, run_child(encoder, {"--encode", std::to_string(cfg), dir})) << encoder << " encode";
    EXPECT_EQ(0, run_child(decoder, {"--decode", std::to_string(cfg), dir}))
        << "fragments from " << encoder << ", decoded by " << decoder << ", config " << cfg;
    for (int i = 0; i < 32; ++i) std::remove((dir + "/frag" + std::to_string(i)).c_str());
    rmdir(dir.c_str());
  }
}

TEST(Interop, SystemIsalEncodesEcjitDecodes) { interop("system", "ecjit"); }
TEST(Interop, EcjitEncodesSystemIsalDecodes) { interop("ecjit", "system"); }

}  // namespace

int main(int argc, char **argv) {
  if (argc == 4 && (std::string(argv[1]) == "--encode" || std::string(argv[1]) == "--decode"))
    return child_main(argv[1], std::atoi(argv[2]), argv[3]);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
