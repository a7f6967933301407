// Degraded reads as traffic looks after a failure: a seeded random erasure set per call, per-call latency, ecjit against ISA-L in one run.
//
// Every backend runs the same calls on the same shards: RS(k,m) over GF(2^8) with ISA-L's
// Cauchy matrix (ecjit's isal-cauchy), each call losing a random set of 1..L shards and
// rebuilding them. Backends:
//   ecjit     the C++ API: a new Jit (disk cache off) and codec per scenario, reconstruct()
//   dropin    ecjit's libisal.so.2 (build/isal-compat), through ISA-L's API
//   isal-2.30 the system ISA-L (Debian's libisal.so.2)
//   isal-2.31 ISA-L 2.31 built from source (bench/fetch_isal231.sh; --isal231 PATH)
// The ISA-L-API backends do what ISA-L's users do per call: invert the k x k matrix of the
// first k present shards (gf_invert_matrix), form the rows of the lost shards,
// ec_init_tables, ec_encode_data. Each library is dlopen'ed with RTLD_DEEPBIND so that the
// three ISA-L ABIs live side by side in one process.
// Reported per scenario and backend: aggregate GB/s (k x shard bytes per call over the sum
// of call times, GB = 10^9 B), p50 / p99 / max latency per call, and for ecjit the codec()
// time, kernels compiled during the calls, promotions, RSS growth, its encode and the XOR of
// the k data shards into one (the floor of any one-shard rebuild). The first call of
// each backend is checked against the original shards, then every 16th.
//   bench_degraded [--calls N] [--sizes 4K,64K,1M] [--lost 1,2,4] [--k 10] [--m 4]
//                  [--isal231 PATH] [--dropin PATH] [--backends ecjit,dropin,isal-2.30,isal-2.31]
//                  [--spec rs-vand:k=10,m=4,gf=16]   (ecjit alone, any field; with its encode)
//                  [--no-tune]   (ecjit without the background tuner: no timing runs beside the calls)
//                  [--reps 3]    (repetitions in rotating order; medians of GB/s, p50, p99; worst max;
//                                 ecjit's notes are its last repetition's)
//                  [--fresh]     (every backend in a new process per scenario and repetition: the
//                                 ISA-L-API ones in bench_first_calls (C, nothing but libdl), ecjit in
//                                 this program (--child-ecjit); their load - dlopen, or Jit::create +
//                                 codec() - first call and first 100 calls as a program that starts,
//                                 reads and exits sees them)
#include <sys/wait.h>
#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bench/bench_args.h"
#include "bench/isal_calls.h"
#include "ecjit/ecjit.h"

namespace {

using Clock = std::chrono::steady_clock;
bool g_tune = true;  // --no-tune: JitOptions::tune = false (no background timing runs)

// An ISA-L-API library under test: loaded here, or (--fresh) only named, for bench_first_calls.
struct IsalApi {
  std::string name, path;
  isal_api api{};

  bool load(const std::string &label, const std::string &lib, bool fresh) {
    name = label;
    path = lib;
    if (fresh) {
      if (access(lib.c_str(), R_OK) == 0 || lib.find('/') == std::string::npos) return true;
      std::fprintf(stderr, "%s: skipped (%s: not readable)\n", label.c_str(), lib.c_str());
      return false;
    }
    char why[512];
    if (isal_api_load(&api, lib.c_str(), why, sizeof why) != 0) {
      std::fprintf(stderr, "%s: skipped (%s)\n", label.c_str(), why);
      return false;
    }
    Dl_info info{};
    if (dladdr(reinterpret_cast<void *>(api.encode), &info) && info.dli_fname) file = info.dli_fname;
    return true;
  }
  std::string file;  // the library the calls run in (dladdr), in-process backends
};


size_t rss_bytes() {
  std::ifstream f("/proc/self/statm");
  size_t pages = 0, resident = 0;
  f >> pages >> resident;
  return resident * 4096;
}

struct Stats {
  double gbps = 0, p50_us = 0, p99_us = 0, max_us = 0;
  bool ok = true;
};

Stats summarize(std::vector<double> us, double bytes_per_call_sum) {
  Stats s;
  double total = 0;
  for (double u : us) total += u;
  std::sort(us.begin(), us.end());
  s.gbps = bytes_per_call_sum / (total * 1e-6) / 1e9;
  s.p50_us = us[us.size() / 2];
  s.p99_us = us[std::min(us.size() - 1, us.size() * 99 / 100)];
  s.max_us = us.back();
  return s;
}

struct Scenario {
  unsigned k, m, max_lost;
  size_t len;
  std::vector<std::vector<unsigned>> lost;  // per call, ascending
};

// Shards: the original data and parity, and the working copies the calls rebuild into.
struct Shards {
  std::vector<std::vector<uint8_t>> orig;
  std::vector<uint8_t *> work;
  std::vector<std::unique_ptr<uint8_t, decltype(&std::free)>> owned;
  Shards(unsigned n, size_t len) {
    for (unsigned i = 0; i < n; ++i) {
      // Staggered 64-byte-aligned starts, as heap buffers are.
      owned.emplace_back(static_cast<uint8_t *>(std::aligned_alloc(4096, len + 4096 * 2)), &std::free);
      work.push_back(owned.back().get() + 64 * i % 4096);
    }
    orig.resize(n, std::vector<uint8_t>(len));
  }
  void restore(size_t len) {
    for (size_t i = 0; i < orig.size(); ++i) std::memcpy(work[i], orig[i].data(), len);
  }
  bool intact(const std::vector<unsigned> &which, size_t len) const {
    for (unsigned s : which)
      if (std::memcmp(work[s], orig[s].data(), len) != 0) return false;
    return true;
  }
};

Stats run_isal(const IsalApi &lib, const Scenario &sc, Shards &sh) {
  const unsigned n = sc.k + sc.m;
  std::vector<unsigned char> enc(size_t(n) * sc.k);
  lib.api.gen_cauchy(enc.data(), int(n), int(sc.k));
  std::vector<double> us;
  double bytes = 0;
  bool ok = true;
  for (size_t i = 0; i < sc.lost.size(); ++i) {
    for (unsigned s : sc.lost[i]) std::memset(sh.work[s], 0, sc.len);
    const auto t0 = Clock::now();
    isal_decode(&lib.api, enc.data(), sc.k, n, sc.lost[i].data(), unsigned(sc.lost[i].size()), sh.work.data(),
                sc.len);
    us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
    bytes += double(sc.k) * sc.len;
    if (i % 16 == 0 && !sh.intact(sc.lost[i], sc.len)) ok = false;
  }
  Stats s = summarize(us, bytes);
  s.ok = ok;
  return s;
}

// What a fresh process saw (--fresh): the library's load (ecjit: Jit::create + codec()), its
// first call, its first 100.
struct FirstCalls {
  double load_us = 0, first_us = 0, first100_us = 0;
};

// Writes the scenario's workload file for bench_first_calls (bench/isal_calls.h); false on an
// I/O error.
bool write_workload(const std::string &file, const Scenario &sc, const Shards &sh) {
  FILE *f = std::fopen(file.c_str(), "wb");
  if (!f) return false;
  const uint64_t h[5] = {ISAL_CALLS_MAGIC, sc.k, sc.m, sc.len, sc.lost.size()};
  bool ok = std::fwrite(h, sizeof h, 1, f) == 1;
  std::vector<uint32_t> rec(sc.m + 1);
  for (const auto &l : sc.lost) {
    std::fill(rec.begin(), rec.end(), 0);
    rec[0] = uint32_t(l.size());
    std::copy(l.begin(), l.end(), rec.begin() + 1);
    ok = ok && std::fwrite(rec.data(), sizeof(uint32_t), rec.size(), f) == rec.size();
  }
  for (const auto &o : sh.orig) ok = ok && std::fwrite(o.data(), 1, sc.len, f) == sc.len;
  return std::fclose(f) == 0 && ok;
}

// This program's path.
std::string self_path() {
  char self[4096];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return "";
  self[n] = 0;
  return self;
}

// The scenario's calls in a new process running `args` (args[0] the program), which prints
// isal_workload_report's line.
Stats run_fresh(const std::vector<std::string> &args, const Scenario &sc, FirstCalls *first) {
  Stats bad{0, 0, 0, 0, false};
  const std::string &child = args[0];
  std::vector<char *> argv;
  for (const std::string &a : args) argv.push_back(const_cast<char *>(a.c_str()));
  argv.push_back(nullptr);
  int fds[2];
  if (pipe(fds) != 0) return bad;
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], 1);
    close(fds[0]);
    close(fds[1]);
    execv(child.c_str(), argv.data());
    std::fprintf(stderr, "bench_degraded: cannot run %s\n", child.c_str());
    _exit(127);
  }
  close(fds[1]);
  std::string out;
  char buf[65536];
  for (ssize_t got; (got = read(fds[0], buf, sizeof buf)) > 0;) out.append(buf, size_t(got));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (pid < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0 || out.rfind("RESULT ", 0) != 0) return bad;
  const char *p = out.c_str() + 7;
  char *end = nullptr;
  first->load_us = std::strtod(p, &end);
  first->first_us = std::strtod(end, &end);
  first->first100_us = std::strtod(end, &end);
  const size_t calls = std::strtoull(end, &end, 10);
  const bool ok = std::strtol(end, &end, 10) == 1;
  std::vector<double> us;
  for (size_t i = 0; i < calls; ++i) us.push_back(std::strtod(end, &end));
  if (calls != sc.lost.size() || us.empty()) return bad;
  Stats s = summarize(us, double(sc.k) * sc.len * double(calls));
  s.ok = ok;
  return s;
}

struct EcjitExtra {
  double encode_gbps = 0;  // encode of the same shards, as many calls, same process
  // The least work a rebuild of one shard can do - read k shards, write one (raidz:k=K,m=1's
  // encode, an XOR of the k data shards) - on the same shards, as many calls: where shards
  // stream from L3 or memory this bounds every library's degraded reads.
  double xor_gbps = 0;
  double codec_ms = 0;
  uint64_t compiles = 0, promotions = 0, shape_calls = 0;
  double rss_mib = 0;
};

Stats run_ecjit(const std::string &spec, const Scenario &sc, Shards &sh, EcjitExtra *extra) {
  ecjit::JitOptions o;
  o.disk_cache = false;  // a first start: every kernel compiled in this run
  o.tune = g_tune;
  const size_t rss0 = rss_bytes();
  auto jit = ecjit::Jit::create(o);
  if (!jit.ok()) {
    std::fprintf(stderr, "ecjit: %s\n", jit.status().to_string().c_str());
    return Stats{0, 0, 0, 0, false};
  }
  auto t0 = Clock::now();
  auto codec = (*jit)->codec(spec);
  extra->codec_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  if (!codec.ok()) {
    std::fprintf(stderr, "ecjit: %s\n", codec.status().to_string().c_str());
    return Stats{0, 0, 0, 0, false};
  }
  const uint64_t compiled0 = (*jit)->stats().kernels_compiled;
  const unsigned n = sc.k + sc.m;
  std::vector<double> us;
  double bytes = 0;
  bool ok = true;
  std::vector<bool> present(n);
  for (size_t i = 0; i < sc.lost.size(); ++i) {
    std::fill(present.begin(), present.end(), true);
    for (unsigned s : sc.lost[i]) {
      present[s] = false;
      std::memset(sh.work[s], 0, sc.len);
    }
    const auto c0 = Clock::now();
    const ecjit::Status st = (*codec)->reconstruct(sh.work, present, sc.len);
    us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - c0).count());
    bytes += double(sc.k) * sc.len;
    if (!st.ok()) {
      std::fprintf(stderr, "ecjit: %s\n", st.to_string().c_str());
      ok = false;
      break;
    }
    if (i % 16 == 0 && !sh.intact(sc.lost[i], sc.len)) ok = false;
  }
  const ecjit::KernelCacheStats ks = (*codec)->kernel_cache_stats();
  extra->compiles = (*jit)->stats().kernels_compiled - compiled0;
  extra->promotions = ks.promotions;
  extra->shape_calls = ks.shape_calls;
  extra->rss_mib = (double(rss_bytes()) - double(rss0)) / 1048576.0;
  {  // encode of the same shards, as many calls (the wide fields' first-call target is a ratio to it)
    std::vector<const uint8_t *> d(sh.work.begin(), sh.work.begin() + sc.k);
    std::vector<std::vector<uint8_t>> par(sc.m, std::vector<uint8_t>(sc.len));
    std::vector<uint8_t *> p;
    for (auto &v : par) p.push_back(v.data());
    const auto e0 = Clock::now();
    for (size_t i = 0; i < sc.lost.size(); ++i) (void)(*codec)->encode(d, p, sc.len);
    const double secs = std::chrono::duration<double>(Clock::now() - e0).count();
    extra->encode_gbps = double(sc.k) * sc.len * sc.lost.size() / secs / 1e9;
    auto xor_codec = (*jit)->codec("raidz:k=" + std::to_string(sc.k) + ",m=1");
    if (xor_codec.ok()) {
      (void)(*xor_codec)->encode(d, {p.data(), 1}, sc.len);  // compiled before timing
      const auto x0 = Clock::now();
      for (size_t i = 0; i < sc.lost.size(); ++i) (void)(*xor_codec)->encode(d, {p.data(), 1}, sc.len);
      const double xs = std::chrono::duration<double>(Clock::now() - x0).count();
      extra->xor_gbps = double(sc.k) * sc.len * sc.lost.size() / xs / 1e9;
    }
  }
  Stats s = summarize(us, bytes);
  s.ok = ok;
  return s;
}

// --child-ecjit WORKLOAD SPEC: the ecjit backend of --fresh, in this (new) process: a Jit
// (disk cache off, as the in-process backend) and codec(), then the workload's calls through
// reconstruct(). Prints isal_workload_report's line; its load time is Jit::create + codec().
int child_ecjit(const char *path, const std::string &spec) {
  isal_workload w;
  if (const char *bad = isal_workload_read(path, &w)) {
    std::fprintf(stderr, "bench_degraded --child-ecjit: %s: %s\n", bad, path);
    return 1;
  }
  const auto t0 = Clock::now();
  ecjit::JitOptions o;
  o.disk_cache = false;
  o.tune = g_tune;
  auto jit = ecjit::Jit::create(o);
  auto codec = jit.ok() ? (*jit)->codec(spec) : ecjit::Result<std::shared_ptr<const ecjit::Codec>>(jit.status());
  if (!codec.ok()) {
    std::fprintf(stderr, "bench_degraded --child-ecjit: %s\n", codec.status().to_string().c_str());
    return 1;
  }
  const double load_us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
  const unsigned n = w.k + w.m;
  std::vector<double> us(w.calls);
  std::vector<uint8_t *> shards(w.work, w.work + n);
  std::vector<bool> present(n);
  int ok = 1;
  for (size_t c = 0; c < w.calls; ++c) {
    const uint32_t *l = &w.lost[c * (w.m + 1)];
    std::fill(present.begin(), present.end(), true);
    for (unsigned r = 0; r < l[0]; ++r) {
      present[l[1 + r]] = false;
      std::memset(w.work[l[1 + r]], 0, w.len);
    }
    const auto c0 = Clock::now();
    const ecjit::Status st = (*codec)->reconstruct(shards, present, w.len);
    us[c] = std::chrono::duration<double, std::micro>(Clock::now() - c0).count();
    if (!st.ok()) {
      std::fprintf(stderr, "bench_degraded --child-ecjit: %s\n", st.to_string().c_str());
      return 1;
    }
    if (c % 16 == 0)
      for (unsigned r = 0; r < l[0]; ++r)
        if (std::memcmp(w.work[l[1 + r]], w.orig[l[1 + r]], w.len) != 0) ok = 0;
  }
  isal_workload_report(load_us, us.data(), w.calls, ok);
  return 0;
}

}  // namespace

int main(int argc, char **argv) {
  if (argc >= 4 && std::string(argv[1]) == "--child-ecjit") {
    for (int i = 4; i < argc; ++i)
      if (std::string(argv[i]) == "--no-tune") g_tune = false;
    return child_ecjit(argv[2], argv[3]);
  }
  size_t calls = 2000;
  unsigned reps = 3;
  std::vector<std::string> sizes = {"4K", "64K", "1M"};
  std::vector<std::string> lost_max = {"1", "2", "4"};
  unsigned k = 10, m = 4;
  std::string isal231 = std::getenv("ECJIT_ISAL231") ? std::getenv("ECJIT_ISAL231") : "";
#ifdef ECJIT_ISAL_COMPAT_DIR
  std::string dropin = std::string(ECJIT_ISAL_COMPAT_DIR) + "/libisal.so.2";
#else
  std::string dropin;
#endif
  std::string backends = "ecjit,dropin,isal-2.30,isal-2.31";
  std::string spec_arg;  // default isal-cauchy (ISA-L's matrix); another spec runs ecjit only
  bool fresh = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&] { return ecjit::bench::option_value("bench_degraded", argc, argv, &i); };
    if (a == "--calls") calls = std::strtoull(next().c_str(), nullptr, 10);
    else if (a == "--sizes") sizes = ecjit::bench::split_list(next());
    else if (a == "--lost") lost_max = ecjit::bench::split_list(next());
    else if (a == "--k") k = unsigned(std::atoi(next().c_str()));
    else if (a == "--m") m = unsigned(std::atoi(next().c_str()));
    else if (a == "--isal231") isal231 = next();
    else if (a == "--dropin") dropin = next();
    else if (a == "--backends") backends = next();
    else if (a == "--spec") spec_arg = next();
    else if (a == "--no-tune") g_tune = false;
    else if (a == "--reps") reps = std::max(1u, unsigned(std::atoi(next().c_str())));
    else if (a == "--fresh") fresh = true;
    else {
      std::fprintf(stderr,
                   "usage: bench_degraded [--calls N] [--sizes 4K,64K,1M] [--lost 1,2,4] [--k K] "
                   "[--m M] [--isal231 PATH] [--dropin PATH] [--backends LIST] [--spec S] [--no-tune] [--reps N] [--fresh]\n"
                   "  --spec S: an ecjit code of k + m shards other than isal-cauchy (e.g. "
                   "rs-vand:k=10,m=4,gf=16); the ISA-L backends are skipped then\n"
                   "  --fresh: every backend in a new process per scenario and repetition; the notes give\n"
                   "  its load (dlopen, or Jit::create + codec()), first call and first 100 calls\n");
      return a == "--help" ? 0 : 2;
    }
  }
  if (k < 1 || m < 1 || k + m > 255 || calls == 0) {
    std::fprintf(stderr, "bench_degraded: need 1 <= k, 1 <= m, k + m <= 255, calls >= 1\n");
    return 2;
  }
  const std::string spec =
      spec_arg.empty() ? "isal-cauchy:k=" + std::to_string(k) + ",m=" + std::to_string(m) : spec_arg;
  if (!spec_arg.empty()) {
    auto parsed = ecjit::CodeSpec::parse(spec_arg);
    if (!parsed.ok()) {
      std::fprintf(stderr, "bench_degraded: --spec: %s\n", parsed.status().to_string().c_str());
      return 2;
    }
    k = parsed->k;
    m = parsed->m;
    backends = "ecjit";
  }
  auto wants = [&](const std::string &b) { return ("," + backends + ",").find("," + b + ",") != std::string::npos; };
  std::vector<IsalApi> apis;
  auto add_api = [&](const std::string &label, const std::string &path) {
    if (!wants(label)) return;
    if (path.empty()) {
      std::fprintf(stderr, "%s: skipped (no library given)\n", label.c_str());
      return;
    }
    IsalApi api;
    if (api.load(label, path, fresh)) apis.push_back(api);
  };
  // The system ISA-L first, by name: dlopen() of a bare name returns any library already
  // loaded under that SONAME, and the drop-in (and an ISA-L build) are libisal.so.2 too - the
  // "isal-2.30" loaded after them would measure the drop-in.
  add_api("isal-2.30", "libisal.so.2");
  add_api("dropin", dropin);
  add_api("isal-2.31", isal231);
  for (size_t i = 0; i < apis.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (!apis[i].file.empty() && apis[i].file == apis[j].file) {
        std::fprintf(stderr, "bench_degraded: %s and %s are the same library (%s)\n", apis[j].name.c_str(),
                     apis[i].name.c_str(), apis[i].file.c_str());
        return 2;
      }
  for (const IsalApi &api : apis)
    if (!api.file.empty()) std::printf("%s: %s\n", api.name.c_str(), api.file.c_str());

  std::printf("%s, one thread, a random erasure set per call, GB = 1e9 B of k x shard input\n", spec.c_str());
  std::printf("%-6s %-5s %-10s %9s %9s %9s %10s  %s\n", "shard", "lost", "backend", "GB/s", "p50 us", "p99 us", "max us", "notes");
  int rc = 0;
  for (const std::string &size : sizes) {
    size_t len = 0;
    if (!ecjit::bench::parse_size(size, &len)) {
      std::fprintf(stderr, "bench_degraded: --sizes: '%s' is not a byte count like 4K, 64K or 1M\n", size.c_str());
      return 2;
    }
    for (const std::string &lm : lost_max) {
      Scenario sc{k, m, std::min<unsigned>(unsigned(std::atoi(lm.c_str())), m), len, {}};
      std::mt19937_64 rng(len * 131 + sc.max_lost);
      const size_t n_calls = len >= (size_t(1) << 20) ? std::max<size_t>(1, calls / 4) : calls;
      for (size_t i = 0; i < n_calls; ++i) {
        const unsigned count = 1 + unsigned(rng() % sc.max_lost);
        std::vector<unsigned> l;
        while (l.size() < count) {
          const unsigned s = unsigned(rng() % (k + m));
          if (std::find(l.begin(), l.end(), s) == l.end()) l.push_back(s);
        }
        std::sort(l.begin(), l.end());
        sc.lost.push_back(l);
      }
      Shards sh(k + m, len);
      std::mt19937_64 data_rng(7);
      for (unsigned i = 0; i < k; ++i)
        for (auto &b : sh.orig[i]) b = uint8_t(data_rng());
      {  // parity with the system ISA-L's encoder, or ecjit's when that is absent
        auto jit = ecjit::Jit::create();
        auto codec = (*jit)->codec(spec);
        std::vector<const uint8_t *> d;
        std::vector<uint8_t *> p;
        for (unsigned i = 0; i < k; ++i) d.push_back(sh.orig[i].data());
        for (unsigned i = 0; i < m; ++i) p.push_back(sh.orig[k + i].data());
        if (!codec.ok() || !(*codec)->encode(d, p, len).ok()) return 1;
      }
      std::string workload;  // --fresh: the scenario as a file for bench_first_calls
      if (fresh) {
        char tmpl[] = "/tmp/ecjit-degraded-XXXXXX";
        const int fd = mkstemp(tmpl);
        if (fd < 0 || (close(fd), !write_workload(tmpl, sc, sh))) {
          std::fprintf(stderr, "bench_degraded: cannot write the workload file %s\n", tmpl);
          return 1;
        }
        workload = tmpl;
      }
      const std::string lost_label = sc.max_lost == 1 ? "1" : "1.." + std::to_string(sc.max_lost);
      auto row = [&](const std::string &name, const Stats &s, const std::string &notes) {
        std::printf("%-6s %-5s %-10s %9.2f %9.1f %9.1f %10.1f  %s%s\n", size.c_str(), lost_label.c_str(),
                    name.c_str(), s.gbps, s.p50_us, s.p99_us, s.max_us, s.ok ? "" : "WRONG OUTPUT ",
                    notes.c_str());
        std::fflush(stdout);
        if (!s.ok) rc = 1;
      };
      // Repetitions in rotating order (a burst of load on a shared VM then spreads over every
      // backend); the drop-in last, since its background compiles would disturb the others.
      std::vector<std::string> order;
      for (const IsalApi &api : apis)
        if (api.name != "dropin") order.push_back(api.name);
      if (wants("ecjit")) order.push_back("ecjit");
      std::vector<std::pair<std::string, std::vector<Stats>>> runs;
      auto record = [&](const std::string &name, const Stats &st) {
        for (auto &r : runs)
          if (r.first == name) return r.second.push_back(st);
        runs.push_back({name, {st}});
      };
      EcjitExtra x;
      std::vector<std::pair<std::string, std::vector<FirstCalls>>> firsts;  // --fresh, per backend
      auto keep_first = [&](const std::string &name, const FirstCalls &fc) {
        auto it = std::find_if(firsts.begin(), firsts.end(), [&](const auto &f) { return f.first == name; });
        if (it == firsts.end()) it = firsts.insert(firsts.end(), {name, {}});
        it->second.push_back(fc);
      };
      auto run_api = [&](const IsalApi &api) {
        if (!fresh) return run_isal(api, sc, sh);
        FirstCalls fc;
        const std::string dir = self_path().substr(0, self_path().rfind('/') + 1);
        const Stats st = run_fresh({dir + "bench_first_calls", api.path, workload}, sc, &fc);
        keep_first(api.name, fc);
        return st;
      };
      for (unsigned rep = 0; rep < reps; ++rep) {
        for (size_t i = 0; i < order.size(); ++i) {
          const std::string &name = order[(i + rep) % order.size()];
          sh.restore(len);
          if (name == "ecjit" && fresh) {  // the C++ API in a new process: Jit, codec(), calls
            FirstCalls fc;
            std::vector<std::string> args = {self_path(), "--child-ecjit", workload, spec};
            if (!g_tune) args.push_back("--no-tune");
            record(name, run_fresh(args, sc, &fc));
            keep_first(name, fc);
            continue;
          }
          if (name == "ecjit") {
            record(name, run_ecjit(spec, sc, sh, &x));
            continue;
          }
          for (const IsalApi &api : apis)
            if (api.name == name) record(name, run_api(api));
        }
        for (const IsalApi &api : apis)
          if (api.name == "dropin") {
            sh.restore(len);
            record("dropin", run_api(api));
          }
      }
      if (!workload.empty()) unlink(workload.c_str());
      // Medians of GB/s, p50 and p99; the worst max.
      auto median = [](std::vector<double> v) {
        std::sort(v.begin(), v.end());
        return v[v.size() / 2];
      };
      double best_isal = 0;
      std::vector<std::pair<std::string, Stats>> med;
      for (auto &r : runs) {
        Stats m;
        std::vector<double> g, p50, p99;
        for (const Stats &st : r.second) {
          g.push_back(st.gbps);
          p50.push_back(st.p50_us);
          p99.push_back(st.p99_us);
          m.max_us = std::max(m.max_us, st.max_us);
          m.ok = m.ok && st.ok;
        }
        m.gbps = median(g);
        m.p50_us = median(p50);
        m.p99_us = median(p99);
        if (r.first.rfind("isal-", 0) == 0) best_isal = std::max(best_isal, m.gbps);
        med.push_back({r.first, m});
      }
      for (auto &[name, m] : med) {
        std::string notes;
        if (best_isal > 0 && (name == "ecjit" || name == "dropin")) {
          char b[64];
          std::snprintf(b, sizeof b, "%.2fx the best ISA-L; ", m.gbps / best_isal);
          notes = b;
        }
        for (auto &[fname, fcs] : firsts) {
          if (fname != name) continue;
          std::vector<double> load, first, first100;
          for (const FirstCalls &fc : fcs) {
            load.push_back(fc.load_us / 1e3);
            first.push_back(fc.first_us);
            first100.push_back(fc.first100_us / 1e3);
          }
          char b[200];
          std::snprintf(b, sizeof b, "fresh process: load %.1f ms, first call %.0f us, first 100 calls %.1f ms; ",
                        median(load), median(first), median(first100));
          notes += b;
        }
        if (name == "ecjit" && !fresh) {
          char b[360];
          std::snprintf(b, sizeof b,
                        "codec() %.1f ms, %llu compiles during the calls, %llu promoted, %llu shape calls, "
                        "RSS +%.1f MiB; encode %.2f GB/s (reconstruct %.2fx); XOR of k shards %.2f GB/s",
                        x.codec_ms, (unsigned long long)x.compiles, (unsigned long long)x.promotions,
                        (unsigned long long)x.shape_calls, x.rss_mib, x.encode_gbps,
                        x.encode_gbps > 0 ? m.gbps / x.encode_gbps : 0.0, x.xor_gbps);
          notes += b;
        }
        row(name, m, notes);
      }
    }
  }
  return rc;
}
