// once_cache_test: jit::OnceCache - one make per key under concurrency, failures not cached,
// LRU eviction when bounded, none when unbounded, makes in flight never dropped.
#include "jit/once_cache.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace ecjit::jit {
namespace {

using Cache = OnceCache<std::string, int>;

Result<std::shared_ptr<const int>> value(int v) { return std::make_shared<const int>(v); }

TEST(OnceCache, PeekNeitherMakesNorCounts) {
  Cache cache;
  EXPECT_EQ(cache.peek("k"), nullptr);
  ASSERT_TRUE(cache.get("k", [] { return value(3); }).ok());
  auto seen = cache.peek("k");
  ASSERT_NE(seen, nullptr);
  EXPECT_EQ(*seen, 3);
  EXPECT_EQ(cache.hits(), 0u);
  EXPECT_EQ(cache.compiles(), 1u);
  EXPECT_FALSE(cache.get("bad", [] { return Result<std::shared_ptr<const int>>(Status(StatusCode::kInternal, "no")); }).ok());
  EXPECT_EQ(cache.peek("bad"), nullptr);
}

TEST(OnceCache, SameKeyIsMadeOnceAndShared) {
  Cache cache;
  int makes = 0;
  auto make = [&] {
    ++makes;
    return value(42);
  };
  auto first = cache.get("k1", make);
  auto second = cache.get("k1", make);
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_EQ(first->get(), second->get());
  EXPECT_EQ(**first, 42);
  EXPECT_EQ(makes, 1);
  EXPECT_EQ(cache.compiles(), 1u);
  EXPECT_EQ(cache.hits(), 1u);
  auto other = cache.get("k2", [] { return value(7); });
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(**other, 7);
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_EQ(cache.compiles(), 2u);
}

TEST(OnceCache, ConcurrentFirstRequestsMakeOnce) {
  Cache cache;
  std::atomic<int> makes{0};
  constexpr int kThreads = 8;
  std::vector<const int *> got(kThreads, nullptr);
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      ready.fetch_add(1);
      while (ready.load() < kThreads) std::this_thread::yield();
      auto v = cache.get("shared", [&] {
        makes.fetch_add(1);
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        return value(9);
      });
      if (v.ok()) got[t] = v->get();
    });
  }
  for (std::thread &thread : threads) thread.join();
  EXPECT_EQ(makes.load(), 1);
  EXPECT_EQ(cache.compiles(), 1u);
  EXPECT_EQ(cache.hits(), uint64_t(kThreads - 1));
  for (const int *v : got) {
    ASSERT_NE(v, nullptr);
    EXPECT_EQ(v, got[0]);
  }
}

TEST(OnceCache, FailureReachesEveryWaiterAndIsRetried) {
  Cache cache;
  std::atomic<int> makes{0}, failures{0}, ready{0};
  constexpr int kThreads = 4;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      ready.fetch_add(1);
      while (ready.load() < kThreads) std::this_thread::yield();
      auto v = cache.get("bad", [&]() -> Result<std::shared_ptr<const int>> {
        makes.fetch_add(1);
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        return Status(StatusCode::kJitFailure, "backend exploded");
      });
      if (!v.ok()) {
        EXPECT_EQ(v.status().code(), StatusCode::kJitFailure);
        EXPECT_NE(v.status().message().find("backend exploded"), std::string::npos);
        failures.fetch_add(1);
      }
    });
  }
  for (std::thread &thread : threads) thread.join();
  EXPECT_EQ(failures.load(), kThreads);
  EXPECT_GE(makes.load(), 1);  // late arrivals may have tried again; every one failed
  EXPECT_EQ(cache.size(), 0u);
  auto v = cache.get("bad", [] { return value(5); });  // not cached: made again, now fine
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(**v, 5);
  EXPECT_EQ(cache.size(), 1u);
}

TEST(OnceCache, NullValueIsAnError) {
  Cache cache;
  auto v = cache.get("null", []() -> Result<std::shared_ptr<const int>> { return std::shared_ptr<const int>(); });
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.status().code(), StatusCode::kInternal);
  EXPECT_EQ(cache.size(), 0u);
}

TEST(OnceCache, BoundedDropsTheLeastRecentlyUsed) {
  Cache cache(2);
  std::weak_ptr<const int> b_weak;
  ASSERT_TRUE(cache.get("a", [] { return value(1); }).ok());
  {
    auto b = cache.get("b", [] { return value(2); });
    ASSERT_TRUE(b.ok());
    b_weak = *b;
  }
  ASSERT_TRUE(cache.get("a", [] { return value(-1); }).ok());  // a is now the most recent
  auto c = cache.get("c", [] { return value(3); });
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_EQ(cache.evictions(), 1u);
  EXPECT_TRUE(b_weak.expired());  // b went, and nobody held it
  int made_a = 0, made_b = 0;
  auto a = cache.get("a", [&] { ++made_a; return value(-1); });
  auto b = cache.get("b", [&] { ++made_b; return value(22); });
  EXPECT_EQ(made_a, 0);
  EXPECT_EQ(made_b, 1);
  EXPECT_EQ(**a, 1);
  EXPECT_EQ(**b, 22);
}

TEST(OnceCache, HeldValuesOutliveEviction) {
  Cache cache(1);
  auto a = cache.get("a", [] { return value(1); });
  ASSERT_TRUE(cache.get("b", [] { return value(2); }).ok());
  EXPECT_EQ(cache.evictions(), 1u);
  EXPECT_EQ(**a, 1);
}

TEST(OnceCache, UnboundedNeverEvicts) {
  Cache cache;
  for (int i = 0; i < 2000; ++i) ASSERT_TRUE(cache.get(std::to_string(i), [i] { return value(i); }).ok());
  EXPECT_EQ(cache.size(), 2000u);
  EXPECT_EQ(cache.evictions(), 0u);
  int makes = 0;
  auto v = cache.get("0", [&] { ++makes; return value(-1); });
  EXPECT_EQ(makes, 0);
  EXPECT_EQ(**v, 0);
}

TEST(OnceCache, AMakeInFlightIsNeverDropped) {
  Cache cache(1);
  std::mutex m;
  std::condition_variable cv;
  bool started = false, release = false;
  std::thread slow([&] {
    auto v = cache.get("slow", [&] {
      {
        std::unique_lock<std::mutex> lock(m);
        started = true;
        cv.notify_all();
        cv.wait(lock, [&] { return release; });
      }
      return value(100);
    });
    EXPECT_TRUE(v.ok());
  });
  {
    std::unique_lock<std::mutex> lock(m);
    cv.wait(lock, [&] { return started; });
  }
  // Over capacity while "slow" is being made: finished entries go, the one in flight stays.
  ASSERT_TRUE(cache.get("x", [] { return value(1); }).ok());
  ASSERT_TRUE(cache.get("y", [] { return value(2); }).ok());
  EXPECT_EQ(cache.size(), 1u);  // "slow", in flight; x and y went as soon as they were made
  EXPECT_EQ(cache.evictions(), 2u);
  {
    std::lock_guard<std::mutex> lock(m);
    release = true;
    cv.notify_all();
  }
  slow.join();
  int makes = 0;
  auto v = cache.get("slow", [&] { ++makes; return value(-1); });
  EXPECT_EQ(makes, 0);
  EXPECT_EQ(**v, 100);
}

TEST(OnceCache, AMakeMayUseTheCacheForAnotherKey) {
  Cache cache;
  auto outer = cache.get("outer", [&]() -> Result<std::shared_ptr<const int>> {
    auto inner = cache.get("inner", [] { return value(20); });
    if (!inner.ok()) return inner.status();
    return value(**inner + 1);
  });
  ASSERT_TRUE(outer.ok());
  EXPECT_EQ(**outer, 21);
  EXPECT_EQ(cache.size(), 2u);
}

}  // namespace
}  // namespace ecjit::jit
