// ShardSet: a set of shard indices (a fixed-size bitset), how ecjit's API names groups of shards.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <vector>

#include "ecjit/code_spec.h"

namespace ecjit {

// A set of shard indices in [0, kMaxShards). Value type, no heap memory, cheap to compare;
// not synchronized (like any value). Inserting an index >= kMaxShards leaves the set
// "invalid": every Codec call that takes it then fails with kInvalidArgument.
class ShardSet {
 public:
  ShardSet() = default;
  ShardSet(std::initializer_list<unsigned> shards) {
    for (unsigned s : shards) insert(s);
  }
  // The shards s with mask[s] == true (e.g. the `present` vector of reconstruct()).
  static ShardSet from_mask(const std::vector<bool> &mask) {
    ShardSet set;
    for (size_t s = 0; s < mask.size(); ++s)
      if (mask[s]) set.insert(unsigned(s));
    return set;
  }
  // The shards 0 .. count-1.
  static ShardSet first(unsigned count) {
    ShardSet set;
    for (unsigned s = 0; s < count; ++s) set.insert(s);
    return set;
  }

  void insert(unsigned s) {
    if (s >= kMaxShards) {
      invalid_ = true;
      return;
    }
    bits_[s / 64] |= uint64_t(1) << (s % 64);
  }
  void erase(unsigned s) {
    if (s < kMaxShards) bits_[s / 64] &= ~(uint64_t(1) << (s % 64));
  }
  bool contains(unsigned s) const {
    return s < kMaxShards && (bits_[s / 64] >> (s % 64) & 1) != 0;
  }
  unsigned size() const {
    unsigned n = 0;
    for (uint64_t w : bits_) n += unsigned(__builtin_popcountll(w));
    return n;
  }
  bool empty() const { return size() == 0 && !invalid_; }
  // True when an index >= kMaxShards was inserted.
  bool invalid() const { return invalid_; }
  // One past the largest member (0 for the empty set).
  unsigned end_index() const {
    for (unsigned w = kWords; w-- > 0;)
      if (bits_[w]) return w * 64 + 64 - unsigned(__builtin_clzll(bits_[w]));
    return 0;
  }
  // Members in ascending order.
  std::vector<unsigned> to_vector() const {
    std::vector<unsigned> out;
    for (unsigned s = 0, e = end_index(); s < e; ++s)
      if (contains(s)) out.push_back(s);
    return out;
  }
  bool includes(const ShardSet &o) const {
    for (unsigned w = 0; w < kWords; ++w)
      if (o.bits_[w] & ~bits_[w]) return false;
    return !o.invalid_;
  }
  ShardSet operator|(const ShardSet &o) const { return combine(o, [](uint64_t a, uint64_t b) { return a | b; }); }
  ShardSet operator&(const ShardSet &o) const { return combine(o, [](uint64_t a, uint64_t b) { return a & b; }); }
  ShardSet operator-(const ShardSet &o) const { return combine(o, [](uint64_t a, uint64_t b) { return a & ~b; }); }
  bool operator==(const ShardSet &o) const { return bits_ == o.bits_ && invalid_ == o.invalid_; }
  bool operator!=(const ShardSet &o) const { return !(*this == o); }

  static constexpr unsigned kWords = kMaxShards / 64;
  const std::array<uint64_t, kWords> &words() const { return bits_; }

 private:
  template <typename F>
  ShardSet combine(const ShardSet &o, F f) const {
    ShardSet r;
    for (unsigned w = 0; w < kWords; ++w) r.bits_[w] = f(bits_[w], o.bits_[w]);
    r.invalid_ = invalid_ || o.invalid_;
    return r;
  }
  std::array<uint64_t, kWords> bits_{};
  bool invalid_ = false;
};

}  // namespace ecjit
