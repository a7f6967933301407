// liberasurecode throughput, RS(10,4) on 1 MiB objects, ecjit's libisal.so.2 against the system ISA-L in one run.
//
// Without arguments: runs itself twice as a child, once on the system ISA-L (no
// LD_LIBRARY_PATH) and once with LD_LIBRARY_PATH at ecjit's build/isal-compat, and prints
// each child's numbers and the ecjit / ISA-L ratios. Throughput counts object bytes (the k
// data fragments) per second, one thread; each operation is checked once, then timed.
//   bench_isal_compat [--seconds S] [--size BYTES]
#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

extern "C" {
#include <liberasurecode/erasurecode.h>
}

#include "isal_compat/ecjit_isal_compat.h"

namespace {

using Clock = std::chrono::steady_clock;

double secs_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

struct Result {
  double encode_gbps = 0, decode1_gbps = 0, decode4_gbps = 0, first_encode_ms = 0;
};

// Times fn() repeatedly for about `seconds`; returns bytes/s for `bytes` per call.
template <typename F>
double rate(double seconds, size_t bytes, F fn) {
  size_t n = 0;
  const auto t0 = Clock::now();
  double t = 0;
  do {
    fn();
    ++n;
  } while ((t = secs_since(t0)) < seconds);
  return double(bytes) * double(n) / t;
}

int child(const char *backend_name, double seconds, size_t size) {
  const ec_backend_id_t id = std::string(backend_name) == "isa_l_rs_cauchy" ? EC_BACKEND_ISA_L_RS_CAUCHY
                                                                           : EC_BACKEND_ISA_L_RS_VAND;
  ec_args args{};
  args.k = 10;
  args.m = 4;
  args.w = 8;
  args.hd = 4;
  args.ct = CHKSUM_NONE;
  const int desc = liberasurecode_instance_create(id, &args);
  if (desc <= 0) {
    std::fprintf(stderr, "liberasurecode_instance_create: %d\n", desc);
    return 1;
  }
  std::mt19937_64 rng(1);
  std::vector<char> obj(size);
  for (auto &c : obj) c = char(rng());

  Result r;
  char **data = nullptr, **parity = nullptr;
  uint64_t flen = 0;
  auto t0 = Clock::now();
  if (liberasurecode_encode(desc, obj.data(), size, &data, &parity, &flen) != 0) return 2;
  r.first_encode_ms = secs_since(t0) * 1e3;
  std::vector<std::vector<char>> frags;
  for (int i = 0; i < 10; ++i) frags.emplace_back(data[i], data[i] + flen);
  for (int i = 0; i < 4; ++i) frags.emplace_back(parity[i], parity[i] + flen);
  liberasurecode_encode_cleanup(desc, data, parity);

  auto decode_missing = [&](std::vector<int> missing, bool check) {
    std::vector<char *> avail;
    for (int i = 0; i < 14; ++i)
      if (std::find(missing.begin(), missing.end(), i) == missing.end()) avail.push_back(frags[i].data());
    char *out = nullptr;
    uint64_t out_len = 0;
    if (liberasurecode_decode(desc, avail.data(), int(avail.size()), flen, 0, &out, &out_len) != 0) std::exit(3);
    if (check && (out_len != size || std::memcmp(out, obj.data(), size) != 0)) std::exit(4);
    liberasurecode_decode_cleanup(desc, out);
  };
  // Warm up (the ecjit library compiles a matrix once it is hot) and check once.
  for (int i = 0; i < 8; ++i) {
    liberasurecode_encode(desc, obj.data(), size, &data, &parity, &flen);
    for (int j = 0; j < 4; ++j)
      if (std::memcmp(parity[j], frags[10 + j].data(), flen) != 0) return 5;
    liberasurecode_encode_cleanup(desc, data, parity);
    decode_missing({3}, true);
    decode_missing({0, 2, 5, 7}, true);
  }
  r.encode_gbps = rate(seconds, size, [&] {
                    liberasurecode_encode(desc, obj.data(), size, &data, &parity, &flen);
                    liberasurecode_encode_cleanup(desc, data, parity);
                  }) / 1e9;
  r.decode1_gbps = rate(seconds, size, [&] { decode_missing({3}, false); }) / 1e9;
  r.decode4_gbps = rate(seconds, size, [&] { decode_missing({0, 2, 5, 7}, false); }) / 1e9;

  void *h = dlopen("libisal.so.2", RTLD_NOW | RTLD_NOLOAD);
  auto version = h ? reinterpret_cast<const char *(*)()>(dlsym(h, "ecjit_isal_compat_version")) : nullptr;
  std::string extra;
  if (version) {
    auto stats = reinterpret_cast<int (*)(ecjit_isal_stats *, size_t)>(dlsym(h, "ecjit_isal_get_stats"));
    ecjit_isal_stats s{};
    stats(&s, sizeof s);
    char buf[256];
    std::snprintf(buf, sizeof buf, " compiles=%llu compile_s=%.4f max_compile_s=%.4f jit_runs=%llu portable_runs=%llu",
                  (unsigned long long)s.kernels_compiled, s.compile_seconds, s.max_plan_seconds,
                  (unsigned long long)s.jit_runs, (unsigned long long)s.portable_runs);
    extra = buf;
  }
  std::printf("RESULT lib=%s backend=%s encode=%.3f decode1=%.3f decode4=%.3f first_encode_ms=%.2f%s\n",
              version ? "ecjit" : "isa-l", backend_name, r.encode_gbps, r.decode1_gbps, r.decode4_gbps,
              r.first_encode_ms, extra.c_str());
  liberasurecode_instance_destroy(desc);
  return 0;
}

bool run(const std::string &self, bool ours, const std::string &backend, double seconds, size_t size, Result *out) {
  int fds[2];
  if (pipe(fds) != 0) return false;
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], 1);
    close(fds[0]);
    if (ours)
      setenv("LD_LIBRARY_PATH", ECJIT_ISAL_COMPAT_DIR, 1);
    else
      unsetenv("LD_LIBRARY_PATH");
    const std::string s = std::to_string(seconds), z = std::to_string(size);
    execl(self.c_str(), self.c_str(), "--child", backend.c_str(), s.c_str(), z.c_str(), (char *)nullptr);
    _exit(127);
  }
  close(fds[1]);
  std::string text;
  char buf[512];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof buf)) > 0) text.append(buf, size_t(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  std::fputs(text.c_str(), stdout);
  const size_t p = text.find("RESULT");
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || p == std::string::npos) return false;
  std::sscanf(strstr(text.c_str() + p, "encode="), "encode=%lf decode1=%lf decode4=%lf first_encode_ms=%lf",
              &out->encode_gbps, &out->decode1_gbps, &out->decode4_gbps, &out->first_encode_ms);
  return true;
}

}  // namespace

int main(int argc, char **argv) {
  if (argc == 5 && std::string(argv[1]) == "--child") return child(argv[2], std::atof(argv[3]), size_t(std::atoll(argv[4])));
  double seconds = 1.0;
  size_t size = 1 << 20;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::string(argv[i]) == "--seconds") seconds = std::atof(argv[i + 1]);
    if (std::string(argv[i]) == "--size") size = size_t(std::atoll(argv[i + 1]));
  }
  char self[4096];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return 1;
  self[n] = 0;
  std::printf("liberasurecode RS(10,4), %zu-byte objects, %.1f s per measurement, GB/s of object bytes\n", size, seconds);
  for (const char *backend : {"isa_l_rs_vand", "isa_l_rs_cauchy"}) {
    Result sys, ours;
    if (!run(self, false, backend, seconds, size, &sys) || !run(self, true, backend, seconds, size, &ours)) {
      std::fprintf(stderr, "a child failed\n");
      return 1;
    }
    std::printf("RATIO backend=%s ecjit/isa-l: encode %.2f  decode(1 lost) %.2f  decode(4 lost) %.2f\n", backend,
                ours.encode_gbps / sys.encode_gbps, ours.decode1_gbps / sys.decode1_gbps,
                ours.decode4_gbps / sys.decode4_gbps);
  }
  return 0;
}
