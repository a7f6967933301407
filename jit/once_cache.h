// OnceCache: a thread-safe map from a key to a shared value made at most once at a time, optionally bounded (LRU).
#pragma once

#include <algorithm>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <utility>

#include "ecjit/status.h"

namespace ecjit::jit {

// The one compile-once cache: the kernel service's shared kernels by key (unbounded, for the
// service's lifetime) and the codecs' per-erasure-set kernels and plans (bounded).
//
// Holds at most `capacity` finished values; inserting one more drops the least recently
// used finished value (values being made are never dropped, so the count may exceed the
// capacity by the number of makes in flight). Concurrent get() calls for one absent key run
// `make` once, outside the lock (a make may use the cache for other keys); the others wait
// for it. A failed make is returned to every waiter and not cached: a later get() retries.
// Values are shared: a dropped value lives on while a caller holds it.
template <typename Key, typename Value, typename Hash = std::hash<Key>>
class OnceCache {
 public:
  using Ptr = std::shared_ptr<const Value>;
  static constexpr size_t kUnbounded = SIZE_MAX;
  explicit OnceCache(size_t capacity = kUnbounded) : capacity_(std::max<size_t>(1, capacity)) {}
  OnceCache(const OnceCache &) = delete;
  OnceCache &operator=(const OnceCache &) = delete;

  // make: () -> Result<Ptr>; a null value is reported as an error. Never allocates on a hit.
  template <typename Make>
  Result<Ptr> get(const Key &key, Make &&make) {
    std::unique_lock<std::mutex> lock(mutex_);
    auto it = map_.find(key);
    if (it != map_.end()) {
      ++hits_;
      std::shared_ptr<Slot> slot = it->second->slot;
      if (slot->done) {
        order_.splice(order_.begin(), order_, it->second);
        return slot->value;
      }
      slot->ready.wait(lock, [&] { return slot->done; });
      if (slot->value) return slot->value;
      return slot->error;
    }
    auto slot = std::make_shared<Slot>();
    order_.push_front(Node{key, slot});
    map_.emplace(key, order_.begin());
    ++compiles_;
    lock.unlock();
    Result<Ptr> made = make();
    if (made.ok() && !*made) made = Status(StatusCode::kInternal, "made nothing");
    lock.lock();
    slot->done = true;
    auto mine = map_.find(key);  // still there: only finished entries are evicted
    if (made.ok()) {
      slot->value = *made;
      evict_locked();
    } else {
      slot->error = made.status();
      if (mine != map_.end() && mine->second->slot == slot) {
        order_.erase(mine->second);
        map_.erase(mine);
      }
    }
    slot->ready.notify_all();
    return made;
  }

  // Whether get(key) would return a value without running make or waiting for one.
  bool ready(const Key &key) const {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = map_.find(key);
    return it != map_.end() && it->second->slot->done && it->second->slot->value;
  }

  // The finished value under `key`, or null (absent, being made, or failed): never makes,
  // never waits, counts no hit and leaves the LRU order alone.
  Ptr peek(const Key &key) const {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = map_.find(key);
    return it != map_.end() && it->second->slot->done ? it->second->slot->value : nullptr;
  }

  // finished, successful entries (and makes in flight)
  size_t size() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return map_.size();
  }
  size_t capacity() const { return capacity_; }
  uint64_t compiles() const {  // make runs, failed ones included
    std::lock_guard<std::mutex> lock(mutex_);
    return compiles_;
  }
  uint64_t hits() const {  // get() calls answered without running make
    std::lock_guard<std::mutex> lock(mutex_);
    return hits_;
  }
  uint64_t evictions() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return evictions_;
  }

 private:
  struct Slot {
    bool done = false;
    Ptr value;
    Status error;
    std::condition_variable ready;
  };
  struct Node {
    Key key;
    std::shared_ptr<Slot> slot;
  };

  void evict_locked() {
    auto it = order_.end();
    while (map_.size() > capacity_ && it != order_.begin()) {
      --it;
      if (!it->slot->done) continue;
      map_.erase(it->key);
      it = order_.erase(it);
      ++evictions_;
    }
  }

  const size_t capacity_;
  mutable std::mutex mutex_;
  std::list<Node> order_;  // most recently used first
  std::unordered_map<Key, typename std::list<Node>::iterator, Hash> map_;
  uint64_t compiles_ = 0, hits_ = 0, evictions_ = 0;
};

}  // namespace ecjit::jit
