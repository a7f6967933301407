// Large buffers split across threads: the ThreadPool, the split plan, and every split Codec call
// byte for byte against the reference codec and the single-threaded result.
#include <gtest/gtest.h>

#include <dirent.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <ostream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "codes/linear_code.h"
#include "codes/reference_codec.h"
#include "ecjit/ecjit.h"
#include "guarded_buffer.h"
#include "runtime/jit_impl.h"
#include "runtime/parallel_kernel.h"
#include "runtime/thread_pool.h"

using ecjit::Codec;
using ecjit::Jit;
using ecjit::JitOptions;
using ecjit::ShardSet;
using ecjit::StatusCode;
using ecjit::runtime::SplitPlan;
using ecjit::runtime::ThreadPool;
using ecjit::test::GuardedBuffer;

namespace {

// Threads of this process (entries of /proc/self/task).
size_t process_threads() {
  // A sanitizer's own helper thread starts with the process's first pthread_create (TSan):
  // create one first, so that it is counted in "before" as well as after.
  static const bool warmed = [] {
    std::thread([] {}).join();
    return true;
  }();
  (void)warmed;
  DIR *d = opendir("/proc/self/task");
  if (!d) return 0;
  size_t n = 0;
  while (dirent *e = readdir(d))
    if (e->d_name[0] != '.') ++n;
  closedir(d);
  return n;
}

// ---------------------------------------------------------------------------------------------
// ThreadPool

TEST(ThreadPool, RunsEveryTaskExactlyOnce) {
  ThreadPool pool(3);
  for (size_t n : {0, 1, 2, 3, 4, 7, 100}) {
    std::vector<std::atomic<int>> hits(n);
    pool.run(n, [&](size_t i) { hits[i].fetch_add(1); });
    for (size_t i = 0; i < n; ++i) ASSERT_EQ(1, hits[i].load()) << "n=" << n << " task " << i;
  }
}

// Every task waits until all of them have started: only finishes if the caller and the three
// workers really run four tasks at the same time.
TEST(ThreadPool, CallerAndWorkersRunTasksAtOnce) {
  ThreadPool pool(3);
  std::mutex mu;
  std::condition_variable cv;
  unsigned arrived = 0;
  std::atomic<unsigned> met{0};
  std::vector<std::thread::id> who(4);
  pool.run(4, [&](size_t i) {
    who[i] = std::this_thread::get_id();
    std::unique_lock<std::mutex> lock(mu);
    if (++arrived == 4) cv.notify_all();
    if (cv.wait_for(lock, std::chrono::seconds(30), [&] { return arrived == 4; })) met.fetch_add(1);
  });
  EXPECT_EQ(4u, met.load()) << "the four tasks did not run concurrently";
  EXPECT_EQ(1u, pool.parallel_runs());
  EXPECT_EQ(3u, pool.worker_tasks());
  for (size_t i = 0; i < 4; ++i)
    for (size_t j = i + 1; j < 4; ++j) EXPECT_NE(who[i], who[j]) << "tasks " << i << " and " << j;
}

TEST(ThreadPool, ManyCallersShareThePool) {
  ThreadPool pool(2);
  constexpr unsigned kCallers = 8, kCalls = 50, kTasks = 13;
  std::atomic<uint64_t> sum{0};
  std::vector<std::thread> callers;
  std::atomic<bool> wrong{false};
  for (unsigned c = 0; c < kCallers; ++c)
    callers.emplace_back([&, c] {
      for (unsigned r = 0; r < kCalls; ++r) {
        std::vector<uint64_t> out(kTasks, 0);
        pool.run(kTasks, [&](size_t i) { out[i] = c * 1000 + i; });
        for (size_t i = 0; i < kTasks; ++i) wrong = wrong || out[i] != c * 1000 + i;
        sum.fetch_add(kTasks);
      }
    });
  for (std::thread &t : callers) t.join();
  EXPECT_FALSE(wrong.load());
  EXPECT_EQ(uint64_t(kCallers) * kCalls * kTasks, sum.load());
  EXPECT_EQ(uint64_t(kCallers) * kCalls, pool.parallel_runs());
}

TEST(ThreadPool, NestedRunFinishes) {
  ThreadPool pool(2);
  std::atomic<unsigned> inner{0};
  pool.run(4, [&](size_t) { pool.run(5, [&](size_t) { inner.fetch_add(1); }); });
  EXPECT_EQ(20u, inner.load());
}

TEST(ThreadPool, StartsWorkersOnFirstSplitAndJoinsThem) {
  const size_t before = process_threads();
  {
    ThreadPool pool(3);
    pool.run(1, [](size_t) {});  // one task: the caller alone
    EXPECT_EQ(0u, pool.started());
    EXPECT_EQ(0u, pool.parallel_runs());
    pool.run(2, [](size_t) {});
    EXPECT_EQ(3u, pool.started());
    EXPECT_EQ(before + 3, process_threads());
  }
  // pthread_join returns once the kernel clears the thread's tid, a moment before the task
  // leaves /proc/self/task: on a loaded machine (CI beside other builds) a joined worker was
  // still listed. A worker that was not joined would stay; give the kernel up to a second.
  size_t after = process_threads();
  for (int i = 0; i < 1000 && after != before; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    after = process_threads();
  }
  EXPECT_EQ(before, after) << "the destructor did not join its workers";
}

TEST(ThreadPool, NoWorkersRunsInline) {
  ThreadPool pool(0);
  const std::thread::id me = std::this_thread::get_id();
  unsigned ran = 0;
  pool.run(5, [&](size_t) { ran += std::this_thread::get_id() == me; });
  EXPECT_EQ(5u, ran);
  EXPECT_EQ(0u, pool.started());
}

// ---------------------------------------------------------------------------------------------
// The split plan

TEST(SplitPlan, PiecesAreAlignedAndTheLastTakesTheRemainder) {
  using ecjit::runtime::kSplitAlign;
  using ecjit::runtime::plan_split;
  for (size_t len : {size_t(1), size_t(4096), size_t(8191), size_t(8192), size_t(65538),
                     size_t(3 << 20) + 6, size_t(8 << 20) + 2, size_t(1) << 33})
    for (unsigned threads : {1u, 2u, 3u, 4u, 7u, 64u, 1024u}) {
      const SplitPlan p = plan_split(len, 10, threads, 0);
      SCOPED_TRACE("len " + std::to_string(len) + " threads " + std::to_string(threads));
      ASSERT_LE(p.pieces, threads);
      if (p.pieces == 1) {
        EXPECT_TRUE(threads == 1 || len < 2 * kSplitAlign);
        continue;
      }
      EXPECT_EQ(0u, p.step % kSplitAlign);
      EXPECT_GE(p.step, kSplitAlign);
      const size_t last = len - (p.pieces - 1) * p.step;
      EXPECT_GE(last, p.step);
      EXPECT_LT(last, p.step + p.pieces * kSplitAlign);
      EXPECT_EQ(std::min<size_t>(threads, len / kSplitAlign), p.pieces);
    }
}

TEST(SplitPlan, EachThreadGetsAtLeastMinBytesOfInput) {
  using ecjit::runtime::plan_split;
  // 10 inputs of 1 MiB: 1.25 MiB per thread (128 KiB of each shard) -> 8 threads; 5 MiB -> 2.
  EXPECT_EQ(8u, plan_split(size_t(1) << 20, 10, 16, size_t(10) << 17).pieces);
  EXPECT_EQ(2u, plan_split(size_t(1) << 20, 10, 16, size_t(10) << 19).pieces);
  // 1 MiB over 10 inputs: each piece needs ceil(2^20 / 10) = 104858 bytes of each shard.
  EXPECT_EQ(1u, plan_split(size_t(64) << 10, 10, 4, size_t(1) << 20).pieces);
  EXPECT_EQ(1u, plan_split(2 * 104858 - 1, 10, 4, size_t(1) << 20).pieces);
  EXPECT_EQ(2u, plan_split(2 * 104858, 10, 4, size_t(1) << 20).pieces);
  EXPECT_EQ(4u, plan_split(4 * 104858, 10, 4, size_t(1) << 20).pieces);
  // No overflow for huge minimums.
  EXPECT_EQ(1u, plan_split(size_t(1) << 30, 512, 4, ~size_t(0)).pieces);
}

// ---------------------------------------------------------------------------------------------
// Options

TEST(ParallelOptions, MoreThan1024ThreadsIsInvalidArgument) {
  JitOptions o;
  o.disk_cache = false;
  o.threads = ecjit::kMaxThreads + 1;
  auto j = Jit::create(o);
  ASSERT_FALSE(j.ok());
  EXPECT_EQ(StatusCode::kInvalidArgument, j.status().code());
  EXPECT_NE(std::string::npos, j.status().message().find("threads 1025 is more than 1024"))
      << j.status().to_string();
  o.threads = ecjit::kMaxThreads;  // accepted; no thread starts before a call splits
  const size_t before = process_threads();
  auto ok = Jit::create(o);
  ASSERT_TRUE(ok.ok()) << ok.status().to_string();
  auto &impl = static_cast<ecjit::runtime::JitImpl &>(**ok);
  ASSERT_NE(nullptr, impl.pool());
  EXPECT_EQ(ecjit::kMaxThreads - 1, impl.pool()->workers());
  EXPECT_EQ(0u, impl.pool()->started());
  EXPECT_EQ(before, process_threads());
}

TEST(ParallelOptions, OneThreadIsTheDefaultAndHasNoPool) {
  EXPECT_EQ(1u, JitOptions().threads);
  EXPECT_EQ(size_t(1) << 20, JitOptions().parallel_min_bytes);
  JitOptions o;
  o.disk_cache = false;
  auto j = Jit::create(o);
  ASSERT_TRUE(j.ok());
  EXPECT_EQ(nullptr, static_cast<ecjit::runtime::JitImpl &>(**j).pool());
  EXPECT_EQ(1u, static_cast<ecjit::runtime::JitImpl &>(**j).threads());
}

TEST(ParallelOptions, ZeroIsOnePerHardwareThread) {
  JitOptions o;
  o.disk_cache = false;
  o.threads = 0;
  auto j = Jit::create(o);
  ASSERT_TRUE(j.ok());
  const auto &impl = static_cast<ecjit::runtime::JitImpl &>(**j);
  const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  EXPECT_EQ(hw, impl.threads());
  if (hw > 1) {
    ASSERT_NE(nullptr, impl.pool());
    EXPECT_EQ(hw - 1, impl.pool()->workers());
  } else {
    EXPECT_EQ(nullptr, impl.pool());
  }
}

// ---------------------------------------------------------------------------------------------
// Codec calls

// Splits every call of at least two 4 KiB pieces (parallel_min_bytes tiny). Static strategy,
// so that Jits with different thread counts run the same kernels. One Jit per thread count,
// shared by the tests of this binary.
std::shared_ptr<Jit> jit_for(unsigned threads) {
  static std::mutex mu;
  static std::map<unsigned, std::shared_ptr<Jit>> jits;
  std::lock_guard<std::mutex> lock(mu);
  std::shared_ptr<Jit> &j = jits[threads];
  if (!j) {
    JitOptions o;
    o.disk_cache = false;
    o.tune = false;
    o.threads = threads;
    o.parallel_min_bytes = 4096;
    auto made = Jit::create(o);
    EXPECT_TRUE(made.ok()) << made.status().to_string();
    if (made.ok()) j = *made;
  }
  return j;
}

const ecjit::runtime::JitImpl &impl(const std::shared_ptr<Jit> &j) {
  return static_cast<const ecjit::runtime::JitImpl &>(*j);
}
uint64_t parallel_runs(const std::shared_ptr<Jit> &j) {
  return impl(j).pool() ? impl(j).pool()->parallel_runs() : 0;
}
// Whether a call on shards of `len` bytes is split by `j` (JitOptions::parallel_min_bytes 4096
// is below every code's minimum piece here, so only the thread count and len decide).
bool splits(const std::shared_ptr<Jit> &j, size_t len) {
  return impl(j).threads() > 1 && len >= 2 * ecjit::runtime::kSplitAlign;
}

const unsigned kThreadCounts[] = {1, 2, 4, 0};

// n shards in guarded buffers: random data, reference parity (codes::ref_encode).
struct Stripe {
  ecjit::codes::LinearCode code;
  size_t len = 0;
  std::vector<std::unique_ptr<GuardedBuffer>> bufs;
  std::vector<uint8_t *> shards;  // n
  std::vector<std::vector<uint8_t>> original;  // n: data, then reference parity

  Stripe(const std::string &spec, size_t len_, uint64_t seed) : code(build(spec)), len(len_) {
    const unsigned n = code.n();
    std::mt19937_64 rng(seed);
    original.assign(n, std::vector<uint8_t>(len));
    for (unsigned s = 0; s < n; ++s) {
      bufs.push_back(std::make_unique<GuardedBuffer>(len));
      shards.push_back(bufs.back()->data());
      if (s >= code.k) continue;
      for (size_t b = 0; b < len; b += 8) {
        const uint64_t v = rng();
        std::memcpy(&original[s][b], &v, std::min<size_t>(8, len - b));
      }
    }
    std::vector<const uint8_t *> data;
    std::vector<uint8_t *> parity;
    for (unsigned s = 0; s < code.k; ++s) data.push_back(original[s].data());
    for (unsigned r = 0; r < code.m; ++r) parity.push_back(original[code.k + r].data());
    auto st = ecjit::codes::ref_encode(code, data.data(), parity.data(), len);
    EXPECT_TRUE(st.ok()) << st.to_string();
    data_.assign(shards.begin(), shards.begin() + code.k);
    parity_.assign(shards.begin() + code.k, shards.end());
    reset();
  }
  // The code of `spec` (a test failure and a tiny code if it does not parse).
  static ecjit::codes::LinearCode build(const std::string &spec) {
    auto c = ecjit::codes::build_code(spec);
    if (c.ok()) return *c;
    ADD_FAILURE() << spec << ": " << c.status().to_string();
    return *ecjit::codes::build_code("rs-vand:k=2,m=1,gf=8");
  }
  bool ok() const {
    for (const auto &b : bufs)
      if (!b->ok()) return false;
    return true;
  }
  // Every shard back to its original contents.
  void reset() {
    for (unsigned s = 0; s < code.n(); ++s) std::memcpy(shards[s], original[s].data(), len);
  }
  const std::vector<const uint8_t *> &data() const { return data_; }
  const std::vector<uint8_t *> &parity() const { return parity_; }
  // Index of the first byte of shard s that differs from its original, or len.
  size_t first_difference(unsigned s) const {
    if (std::memcmp(shards[s], original[s].data(), len) == 0) return len;
    size_t i = 0;
    while (shards[s][i] == original[s][i]) ++i;
    return i;
  }

 private:
  std::vector<const uint8_t *> data_;  // shards[0, k)
  std::vector<uint8_t *> parity_;      // shards[k, n)
};

struct SplitCase {
  std::string spec;
  size_t len;
};

void PrintTo(const SplitCase &c, std::ostream *os) { *os << c.spec << "_len" << c.len; }

std::string case_name(const testing::TestParamInfo<SplitCase> &info) {
  std::string s = info.param.spec + "_len" + std::to_string(info.param.len);
  for (char &ch : s)
    if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return s;
}

class SplitCodec : public testing::TestWithParam<SplitCase> {};

std::string describe(unsigned threads, const Codec &codec, size_t len) {
  return "threads=" + std::to_string(threads) + " " + codec.spec().to_string() +
         " len=" + std::to_string(len) + " encoder " + codec.encoder_info().symbol;
}

// encode, reconstruct, reconstruct_data and reconstruct_some with each thread count equal
// the reference codec's shards (and so each other, and the single-threaded result).
TEST_P(SplitCodec, EncodeAndReconstructEqualTheReference) {
  const SplitCase &c = GetParam();
  Stripe stripe(c.spec, c.len, 42);
  ASSERT_TRUE(stripe.ok());
  const unsigned k = stripe.code.k, m = stripe.code.m, n = k + m;
  // Lost: the first ceil(m/2) data shards and the last floor(m/2) parity shards.
  std::vector<bool> present(n, true);
  for (unsigned i = 0; i < (m + 1) / 2; ++i) present[i] = false;
  for (unsigned i = 0; i < m / 2; ++i) present[n - 1 - i] = false;
  for (unsigned threads : kThreadCounts) {
    auto jit = jit_for(threads);
    ASSERT_TRUE(jit);
    auto codec = jit->codec(c.spec);
    ASSERT_TRUE(codec.ok()) << codec.status().to_string();
    const Codec &cd = **codec;
    const std::string what = describe(threads, cd, c.len);
    const uint64_t split = splits(jit, c.len) ? 1 : 0;

    // encode
    stripe.reset();
    for (unsigned r = 0; r < m; ++r) std::memset(stripe.shards[k + r], 0x5A, c.len);
    uint64_t runs = parallel_runs(jit);
    ASSERT_TRUE(cd.encode(stripe.data(), stripe.parity(), c.len).ok()) << what;
    EXPECT_EQ(runs + split, parallel_runs(jit)) << what << ": split path taken?";
    for (unsigned r = 0; r < m; ++r)
      ASSERT_EQ(c.len, stripe.first_difference(k + r)) << what << " parity " << r;

    // reconstruct
    for (unsigned s = 0; s < n; ++s)
      if (!present[s]) std::memset(stripe.shards[s], 0xA5, c.len);
    runs = parallel_runs(jit);
    ASSERT_TRUE(cd.reconstruct(stripe.shards, present, c.len).ok()) << what;
    EXPECT_EQ(runs + split, parallel_runs(jit)) << what << ": split path taken?";
    for (unsigned s = 0; s < n; ++s)
      ASSERT_EQ(c.len, stripe.first_difference(s)) << what << " reconstruct, shard " << s;

    // reconstruct_data: the lost data shards only; lost parity pointers may be null.
    std::vector<uint8_t *> ptrs = stripe.shards;
    for (unsigned s = 0; s < n; ++s)
      if (!present[s]) {
        std::memset(stripe.shards[s], 0xA5, c.len);
        if (s >= k) ptrs[s] = nullptr;
      }
    ASSERT_TRUE(cd.reconstruct_data(ptrs, present, c.len).ok()) << what;
    for (unsigned s = 0; s < k; ++s)
      ASSERT_EQ(c.len, stripe.first_difference(s)) << what << " reconstruct_data, shard " << s;

    // reconstruct_some: one lost parity shard.
    const unsigned wanted = n - 1;
    ASSERT_FALSE(present[wanted]);
    ASSERT_TRUE(cd.reconstruct_some(ShardSet{wanted}, stripe.shards, present, c.len).ok()) << what;
    ASSERT_EQ(c.len, stripe.first_difference(wanted)) << what << " reconstruct_some";
  }
}

// update and encode_partial (accumulating kernels) split too and agree with encode.
TEST_P(SplitCodec, UpdateAndEncodePartialEqualTheReference) {
  const SplitCase &c = GetParam();
  Stripe stripe(c.spec, c.len, 7);
  ASSERT_TRUE(stripe.ok());
  const unsigned k = stripe.code.k, m = stripe.code.m;
  std::vector<std::vector<uint8_t>> new_data(2, std::vector<uint8_t>(c.len));
  std::mt19937_64 rng(99);
  for (auto &d : new_data)
    for (auto &b : d) b = uint8_t(rng());
  // The reference parity after data shards 0 and k-1 are replaced.
  std::vector<std::vector<uint8_t>> want(m, std::vector<uint8_t>(c.len));
  {
    std::vector<const uint8_t *> data;
    for (unsigned s = 0; s < k; ++s) data.push_back(stripe.original[s].data());
    data[0] = new_data[0].data();
    data[k - 1] = new_data[1].data();
    std::vector<uint8_t *> wp;
    for (auto &w : want) wp.push_back(w.data());
    ASSERT_TRUE(ecjit::codes::ref_encode(stripe.code, data.data(), wp.data(), c.len).ok());
  }
  for (unsigned threads : kThreadCounts) {
    auto jit = jit_for(threads);
    ASSERT_TRUE(jit);
    auto codec = jit->codec(c.spec);
    ASSERT_TRUE(codec.ok()) << codec.status().to_string();
    const Codec &cd = **codec;
    const std::string what = describe(threads, cd, c.len);
    stripe.reset();
    std::vector<const uint8_t *> old_d{stripe.shards[0], stripe.shards[k - 1]};
    std::vector<const uint8_t *> new_d{new_data[0].data(), new_data[1].data()};
    const uint64_t runs = parallel_runs(jit);
    ASSERT_TRUE(cd.update(ShardSet{0, k - 1}, old_d, new_d, stripe.parity(), c.len).ok()) << what;
    EXPECT_EQ(runs + (splits(jit, c.len) ? 1 : 0), parallel_runs(jit)) << what;
    for (unsigned r = 0; r < m; ++r)
      ASSERT_EQ(0, std::memcmp(stripe.shards[k + r], want[r].data(), c.len)) << what << " update, parity " << r;

    // encode_partial of every data shard into zeroed accumulators = the original parity.
    for (unsigned r = 0; r < m; ++r) std::memset(stripe.shards[k + r], 0, c.len);
    for (unsigned s = 0; s < k; ++s)
      ASSERT_TRUE(cd.encode_partial(s, stripe.original[s].data(), stripe.parity(), c.len).ok()) << what;
    for (unsigned r = 0; r < m; ++r)
      ASSERT_EQ(c.len, stripe.first_difference(k + r)) << what << " encode_partial, parity " << r;
  }
}

// verify with each thread count returns the single-threaded Jit's result and offset for a
// byte changed at the start, around the piece boundaries, in the middle and at the end.
TEST_P(SplitCodec, VerifyReportsTheSingleThreadedOffset) {
  const SplitCase &c = GetParam();
  Stripe stripe(c.spec, c.len, 5);
  ASSERT_TRUE(stripe.ok());
  const unsigned k = stripe.code.k, n = stripe.code.n();
  auto one = jit_for(1)->codec(c.spec);
  ASSERT_TRUE(one.ok());
  std::vector<size_t> where = {0, c.len / 2, c.len - 1};
  for (unsigned t : {2u, 4u}) {
    const SplitPlan p = ecjit::runtime::plan_split(c.len, n, t, 4096);
    for (size_t i = 1; i < p.pieces; ++i)
      for (size_t d : {size_t(0), size_t(1), size_t(63), size_t(64)})
        if (i * p.step >= d && i * p.step - d < c.len) where.push_back(i * p.step - d);
  }
  const std::vector<const uint8_t *> all(stripe.shards.begin(), stripe.shards.end());
  for (unsigned threads : kThreadCounts) {
    auto jit = jit_for(threads);
    ASSERT_TRUE(jit);
    auto codec = jit->codec(c.spec);
    ASSERT_TRUE(codec.ok());
    const std::string what = describe(threads, **codec, c.len);
    stripe.reset();
    size_t off = 0;
    auto good = (*codec)->verify(all, c.len, &off);
    ASSERT_TRUE(good.ok()) << what << ": " << good.status().to_string();
    EXPECT_TRUE(*good) << what;
    EXPECT_EQ(c.len, off) << what;
    for (size_t at : where)
      for (unsigned s : {0u, k, n - 1}) {  // a data shard, the first and the last parity
        stripe.shards[s][at] ^= 0x01;
        size_t want_off = 0, got_off = 0;
        auto want = (*one)->verify(all, c.len, &want_off);
        const uint64_t runs = parallel_runs(jit);
        auto got = (*codec)->verify(all, c.len, &got_off);
        ASSERT_TRUE(want.ok() && got.ok()) << what;
        EXPECT_EQ(runs + (splits(jit, c.len) ? 1 : 0), parallel_runs(jit)) << what;
        EXPECT_FALSE(*got) << what << " shard " << s << " byte " << at;
        EXPECT_EQ(want_off, got_off) << what << " shard " << s << " byte " << at;
        EXPECT_LE(got_off, at) << what << " shard " << s << " byte " << at;
        stripe.shards[s][at] ^= 0x01;
      }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Lengths, SplitCodec,
    testing::Values(SplitCase{"rs-vand:k=10,m=4,gf=8", 1},
                    SplitCase{"rs-vand:k=10,m=4,gf=8", 64 * 1024 + 1},
                    SplitCase{"rs-vand:k=10,m=4,gf=8", (3 << 20) + 3},
                    // 64-byte aligned buffers and len: the streaming-store encoder, split.
                    SplitCase{"rs-vand:k=10,m=4,gf=8", 8 << 20},
                    SplitCase{"rs-vand:k=10,m=4,gf=8", (8 << 20) + 1},
                    SplitCase{"rs-cauchy:k=4,m=2,gf=16", 2},
                    SplitCase{"rs-cauchy:k=4,m=2,gf=16", 64 * 1024 + 2},
                    SplitCase{"rs-cauchy:k=4,m=2,gf=16", (3 << 20) + 6},
                    SplitCase{"rs-cauchy:k=4,m=2,gf=16", (8 << 20) + 2},
                    SplitCase{"rs-vand:k=6,m=3,gf=32", (1 << 20) + 4},
                    SplitCase{"rs-vand:k=6,m=3,gf=64", (1 << 20) + 8}),
    case_name);

// Many threads call one multi-threaded codec at once, each on its own stripe.
TEST(SplitCodecThreads, ManyCallersShareOneCodec) {
  const std::string spec = "rs-vand:k=10,m=4,gf=8";
  auto jit = jit_for(4);
  ASSERT_TRUE(jit);
  auto codec = jit->codec(spec);
  ASSERT_TRUE(codec.ok());
  constexpr unsigned kCallers = 6, kRounds = 8;
  const uint64_t runs = parallel_runs(jit);
  std::vector<std::unique_ptr<Stripe>> stripes;
  for (unsigned c = 0; c < kCallers; ++c)
    stripes.push_back(std::make_unique<Stripe>(spec, (256 << 10) + 1 + c, 100 + c));
  std::atomic<unsigned> failures{0};
  std::vector<std::thread> callers;
  for (unsigned c = 0; c < kCallers; ++c)
    callers.emplace_back([&, c] {
      Stripe &st = *stripes[c];
      const unsigned k = st.code.k, n = st.code.n();
      std::vector<bool> present(n, true);
      present[c % n] = present[(c + 5) % n] = false;
      for (unsigned r = 0; r < kRounds; ++r) {
        for (unsigned s = k; s < n; ++s) std::memset(st.shards[s], 0, st.len);
        if (!(*codec)->encode(st.data(), st.parity(), st.len).ok()) ++failures;
        for (unsigned s = 0; s < n; ++s)
          if (!present[s]) std::memset(st.shards[s], 0xA5, st.len);
        if (!(*codec)->reconstruct(st.shards, present, st.len).ok()) ++failures;
        for (unsigned s = 0; s < n; ++s)
          if (st.first_difference(s) != st.len) ++failures;
      }
    });
  for (std::thread &t : callers) t.join();
  EXPECT_EQ(0u, failures.load());
  EXPECT_EQ(runs + 2 * kCallers * kRounds, parallel_runs(jit));
}

// Below parallel_min_bytes of input per thread a call stays on the calling thread.
TEST(SplitCodecThreads, SmallCallsAreNotSplit) {
  JitOptions o;
  o.disk_cache = false;
  o.tune = false;
  o.threads = 4;  // parallel_min_bytes stays 1 MiB
  auto jit = Jit::create(o);
  ASSERT_TRUE(jit.ok());
  auto codec = (*jit)->codec("rs-vand:k=10,m=4,gf=8");
  ASSERT_TRUE(codec.ok());
  const ThreadPool *pool = impl(*jit).pool();
  ASSERT_NE(nullptr, pool);
  Stripe small((*codec)->spec().to_string(), 200 << 10, 1);  // 2 MB of input: under 2 x 1 MiB
  ASSERT_TRUE((*codec)->encode(small.data(), small.parity(), small.len).ok());
  EXPECT_EQ(0u, pool->parallel_runs());
  EXPECT_EQ(0u, pool->started());
  Stripe big((*codec)->spec().to_string(), 256 << 10, 1);  // 2.5 MiB: two pieces
  ASSERT_TRUE((*codec)->encode(big.data(), big.parity(), big.len).ok());
  EXPECT_EQ(1u, pool->parallel_runs());
  for (unsigned r = 0; r < big.code.m; ++r) EXPECT_EQ(big.len, big.first_difference(big.code.k + r));
}

// A Jit whose workers have run and that is then idle joins them when it goes away (with its
// last codec), so no thread outlives it (and ASan sees no leak).
TEST(SplitCodecThreads, DestroyedJitJoinsItsWorkers) {
  const size_t before = process_threads();
  std::weak_ptr<Jit> weak;
  {
    JitOptions o;
    o.disk_cache = false;
    o.tune = false;
    o.threads = 3;
    o.parallel_min_bytes = 0;
    auto jit = Jit::create(o);
    ASSERT_TRUE(jit.ok());
    weak = *jit;
    auto codec = (*jit)->codec("rs-vand:k=4,m=2,gf=8");
    ASSERT_TRUE(codec.ok());
    Stripe st("rs-vand:k=4,m=2,gf=8", 1 << 20, 3);
    ASSERT_TRUE((*codec)->encode(st.data(), st.parity(), st.len).ok());
    const ThreadPool *pool = impl(*jit).pool();
    ASSERT_NE(nullptr, pool);
    EXPECT_EQ(1u, pool->parallel_runs());
    EXPECT_EQ(2u, pool->started());
    EXPECT_GE(process_threads(), before + 2);
    for (unsigned r = 0; r < st.code.m; ++r) EXPECT_EQ(st.len, st.first_difference(st.code.k + r));
  }
  EXPECT_TRUE(weak.expired());
  EXPECT_EQ(before, process_threads()) << "worker threads outlived their Jit";
}

}  // namespace
