// LruCache: a bounded, thread-safe map from a key to a shared value made at most once at a time.
#pragma once

#include <algorithm>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <utility>

#include "ecjit/status.h"

namespace ecjit::runtime {

// Holds at most `capacity` finished values; inserting one more drops the least recently
// used finished value (values being made are never dropped, so the count may exceed the
// capacity by the number of makes in flight). Concurrent get() calls for one absent key run
// `make` once, outside the lock; the others wait for it. A failed make is returned to every
// waiter and not cached. Values are shared: a dropped value lives on while a caller holds it.
template <typename Key, typename Value, typename Hash>
class LruCache {
 public:
  using Ptr = std::shared_ptr<const Value>;
  explicit LruCache(size_t capacity) : capacity_(std::max<size_t>(1, capacity)) {}
  LruCache(const LruCache &) = delete;
  LruCache &operator=(const LruCache &) = delete;

  // make: () -> Result<Ptr>. Never allocates on a hit.
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

  size_t size() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return map_.size();
  }
  size_t capacity() const { return capacity_; }
  uint64_t compiles() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return compiles_;
  }
  uint64_t hits() const {
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

}  // namespace ecjit::runtime
