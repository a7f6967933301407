// Two processes, one kernel cache directory: every kernel the second loads from disk gives the bytes the first compiled.
//
// The test runs this binary twice as a worker (`--cache-worker DIR OUT`) against one fresh
// cache directory. A worker encodes and reconstructs, through the public API with the disk
// cache on, for every (strategy, field, tier) the tuner offers on this machine plus "auto" per
// field and tier, at each shard size class (4 KiB, 1 MiB, 4 MiB + one symbol, 16 MiB: the
// streaming-store encoder serves 16 MiB on aligned buffers), on buffers aligned to 64 bytes and
// misaligned by one symbol. It checks every result itself (parity against the reference codec
// on windows of each shard, rebuilt shards against the originals) and writes a digest per
// result; the test then requires both workers to succeed, the first to compile and the second
// to load from disk, and their digests to be identical line for line.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "codes/linear_code.h"
#include "codes/reference_codec.h"
#include "ecjit/ecjit.h"
#include "llvm/Support/FileSystem.h"
#include "strategy_cases.h"

using namespace ecjit;

namespace {

constexpr unsigned kK = 6, kM = 3;
constexpr size_t kWindow = 4096;  // bytes of each shard checked against the reference codec

// A shard buffer: 64-byte aligned storage, handed out at offset 0 or one symbol.
struct Shard {
  std::unique_ptr<uint8_t, void (*)(void *)> mem{nullptr, free};
  uint8_t *at(size_t offset) const { return mem.get() + offset; }
};

Shard make_shard(size_t bytes) {
  void *p = nullptr;
  if (posix_memalign(&p, 64, bytes + 64) != 0) abort();
  return Shard{std::unique_ptr<uint8_t, void (*)(void *)>(static_cast<uint8_t *>(p), free)};
}

uint64_t digest(const uint8_t *p, size_t len) {  // FNV-1a over 8-byte words, then the tail
  uint64_t h = 0xcbf29ce484222325ull;
  size_t i = 0;
  for (; i + 8 <= len; i += 8) {
    uint64_t w;
    memcpy(&w, p + i, 8);
    h = (h ^ w) * 0x100000001b3ull;
  }
  for (; i < len; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

// Window starts (multiples of the symbol size) at the start, the middle and the end of a shard.
std::vector<size_t> windows(size_t len, size_t sb) {
  if (len <= 3 * kWindow) return {0};
  return {0, (len / 2) / sb * sb, (len - kWindow) / sb * sb};
}

struct Worker {
  std::string dir;
  std::ofstream out;
  std::vector<Shard> data, parity, lost;
  std::map<std::string, std::shared_ptr<Jit>> jits;  // per (tier, strategy)
  uint64_t compiled = 0, from_disk = 0;
  int failures = 0;

  void fail(const std::string &what) {
    fprintf(stderr, "FAIL %s\n", what.c_str());
    ++failures;
  }

  std::shared_ptr<Jit> jit(const std::string &tier, const std::string &strategy) {
    auto &j = jits[tier + "/" + strategy];
    if (j) return j;
    JitOptions o;
    o.target = tier;
    o.strategy = strategy;
    o.cache_dir = dir;
    o.disk_cache = true;
    // The codec's own kernels serve from the first call (not the built-in ahead-of-time
    // ones while they compile), so every row runs kernels that came from the cache.
    o.aot_kernels = false;
    auto made = Jit::create(o);
    if (!made.ok()) {
      fail("Jit::create " + tier + " " + strategy + ": " + made.status().to_string());
      return nullptr;
    }
    return j = *made;
  }

  void run_case(const std::string &tier, const std::string &strategy, unsigned l) {
    std::shared_ptr<Jit> j = jit(tier, strategy);
    if (!j) return;
    const std::string spec = "rs-vand:k=" + std::to_string(kK) + ",m=" + std::to_string(kM) + ",gf=" + std::to_string(l);
    auto codec = j->codec(spec);
    const std::string name = tier + " " + strategy + " gf" + std::to_string(l);
    if (!codec.ok()) return fail(name + ": codec: " + codec.status().to_string());
    auto code = codes::build_code(spec);
    if (!code.ok()) return fail(name + ": build_code");
    const size_t sb = l / 8;
    for (size_t len : {size_t(4096), size_t(1) << 20, (size_t(4) << 20) + sb, size_t(16) << 20}) {
      for (size_t offset : {size_t(0), sb}) {
        const std::string row = name + " len " + std::to_string(len) + (offset ? " misaligned" : " aligned");
        std::vector<const uint8_t *> in;
        std::vector<uint8_t *> par;
        for (auto &s : data) in.push_back(s.at(offset));
        for (auto &s : parity) {
          memset(s.at(offset), 0xee, len);
          par.push_back(s.at(offset));
        }
        Status st = (*codec)->encode(in, par, len);
        if (!st.ok()) {
          fail(row + ": encode: " + st.to_string());
          continue;
        }
        // The reference codec on windows of every shard (it is symbol-wise, so a window of
        // the inputs gives the same window of the parity).
        std::vector<std::vector<uint8_t>> want(kM, std::vector<uint8_t>(kWindow));
        for (size_t w : windows(len, sb)) {
          const size_t n = std::min(kWindow, len - w);
          std::vector<const uint8_t *> win;
          std::vector<uint8_t *> wout;
          for (const uint8_t *p : in) win.push_back(p + w);
          for (auto &v : want) wout.push_back(v.data());
          if (!codes::ref_encode(*code, win.data(), wout.data(), n).ok()) fail(row + ": ref_encode");
          for (unsigned r = 0; r < kM; ++r)
            if (memcmp(want[r].data(), par[r] + w, n) != 0)
              fail(row + ": parity " + std::to_string(r) + " differs from the reference codec at window " +
                   std::to_string(w) + " (encoder " + (*codec)->encoder_info().symbol + ")");
        }
        out << row << " encode";
        for (uint8_t *p : par) out << " " << std::hex << digest(p, len) << std::dec;
        out << "\n";
        // Lose data shards 0 and 2 and parity 0; rebuild them into fresh buffers.
        std::vector<uint8_t *> shards;
        std::vector<bool> present(kK + kM, true);
        for (unsigned s = 0; s < kK; ++s) shards.push_back(data[s].at(offset));
        for (unsigned s = 0; s < kM; ++s) shards.push_back(par[s]);
        const unsigned gone[] = {0, 2, kK};
        for (unsigned i = 0; i < 3; ++i) {
          present[gone[i]] = false;
          shards[gone[i]] = lost[i].at(offset);
          memset(shards[gone[i]], 0xee, len);
        }
        st = (*codec)->reconstruct(shards, present, len);
        if (!st.ok()) {
          fail(row + ": reconstruct: " + st.to_string());
          continue;
        }
        out << row << " reconstruct";
        for (unsigned i = 0; i < 3; ++i) {
          const uint8_t *orig = gone[i] < kK ? data[gone[i]].at(offset) : par[gone[i] - kK];
          if (memcmp(shards[gone[i]], orig, len) != 0)
            fail(row + ": rebuilt shard " + std::to_string(gone[i]) + " differs (decoder " +
                 (*codec)->decoder_info(present).symbol + ")");
          out << " " << std::hex << digest(shards[gone[i]], len) << std::dec;
        }
        out << "\n";
      }
    }
  }

  int run() {
    const size_t max_len = (size_t(16) << 20) + 8;
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (unsigned s = 0; s < kK; ++s) {
      data.push_back(make_shard(max_len));
      uint64_t *w = reinterpret_cast<uint64_t *>(data.back().at(0));
      for (size_t i = 0; i < (max_len + 64) / 8; ++i) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        w[i] = x;
      }
    }
    for (unsigned s = 0; s < kM; ++s) parity.push_back(make_shard(max_len));
    for (unsigned s = 0; s < 3; ++s) lost.push_back(make_shard(max_len));
    for (const test::StrategyCase &c : test::strategy_cases()) run_case(c.target, ir::strategy_name(c.strategy), c.l);
    for (const std::string &tier : test::host_tiers())
      for (unsigned l : {8u, 16u, 32u, 64u}) run_case(tier, "auto", l);
    for (auto &[name, j] : jits) {
      j->wait_for_tuning();
      compiled += j->stats().kernels_compiled;
      from_disk += j->stats().kernels_from_disk;
    }
    out << "stats compiled " << compiled << " from_disk " << from_disk << "\n";
    out.close();
    return failures ? 1 : 0;
  }
};

std::string self_exe() {
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return "";
  buf[n] = 0;
  return buf;
}

// Runs the worker in a new process; its exit status (-1: did not exit normally).
int run_worker(const std::string &dir, const std::string &out) {
  const std::string exe = self_exe();
  pid_t pid = fork();
  if (pid == 0) {
    execl(exe.c_str(), exe.c_str(), "--cache-worker", dir.c_str(), out.c_str(), static_cast<char *>(nullptr));
    _exit(127);
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::vector<std::string> lines(const std::string &path) {
  std::ifstream in(path);
  std::vector<std::string> out;
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

// "stats compiled N from_disk M" -> {N, M}.
std::pair<uint64_t, uint64_t> stats_of(const std::vector<std::string> &ls) {
  std::pair<uint64_t, uint64_t> s{0, 0};
  if (ls.empty()) return s;
  std::istringstream is(ls.back());
  std::string w1, w2, w3;
  is >> w1 >> w2 >> s.first >> w3 >> s.second;
  return s;
}

TEST(DiskCacheAcrossProcesses, SecondProcessLoadsEveryKernelAndGivesTheSameBytes) {
  llvm::SmallString<128> dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("ecjit-cache-processes", dir));
  const std::string first = std::string(dir) + ".first", second = std::string(dir) + ".second";
  ASSERT_EQ(run_worker(std::string(dir), first), 0) << "the first process (cache empty) failed";
  ASSERT_EQ(run_worker(std::string(dir), second), 0) << "the second process (cache filled) failed or crashed";
  const std::vector<std::string> a = lines(first), b = lines(second);
  ASSERT_GT(a.size(), 100u);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i + 1 < a.size(); ++i) EXPECT_EQ(a[i], b[i]) << "cached and fresh kernels differ";
  const auto s1 = stats_of(a), s2 = stats_of(b);
  // The first process compiles (its later Jits load what its earlier ones stored).
  EXPECT_GT(s1.first, s1.second) << "the first process compiled nothing into an empty cache";
  EXPECT_GT(s2.second, 0u) << "the second process loaded nothing from the disk cache";
  // The streaming encoders and every other kernel of the first run come back from disk:
  // at most the background's leftovers (promotions the first run had not reached) compile.
  EXPECT_GE(s2.second * 10, s2.first * 9) << s2.first << " kernels, " << s2.second << " from disk";
  printf("first process: %llu kernels, %llu from disk; second: %llu, %llu from disk\n",
         (unsigned long long)s1.first, (unsigned long long)s1.second, (unsigned long long)s2.first,
         (unsigned long long)s2.second);
  llvm::sys::fs::remove_directories(std::string(dir));
  llvm::sys::fs::remove(first);
  llvm::sys::fs::remove(second);
}

}  // namespace

int main(int argc, char **argv) {
  if (argc == 4 && std::string(argv[1]) == "--cache-worker") {
    Worker w;
    w.dir = argv[2];
    w.out.open(argv[3]);
    return w.run();
  }
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
