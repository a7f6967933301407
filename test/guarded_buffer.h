// GuardedBuffer: test memory that ends flush against a PROT_NONE page (ISA-L efence style).
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace ecjit::test {

// `len` bytes whose last byte is immediately followed by an inaccessible page, so any read
// or write past the end faults. With `gap` > 0 the buffer ends `gap` bytes before the guard
// page instead (to vary the start address's alignment for lengths that are multiples of 64).
class GuardedBuffer {
 public:
  explicit GuardedBuffer(size_t len, size_t gap = 0) : len_(len) {
    const size_t page = size_t(sysconf(_SC_PAGESIZE));
    const size_t body = (len + gap + page - 1) / page * page + page;
    map_len_ = body + page;
    void *p = mmap(nullptr, map_len_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return;
    base_ = static_cast<uint8_t *>(p);
    mprotect(base_ + body, page, PROT_NONE);
    data_ = base_ + body - gap - len;
  }
  ~GuardedBuffer() {
    if (base_) munmap(base_, map_len_);
  }
  GuardedBuffer(const GuardedBuffer &) = delete;
  GuardedBuffer &operator=(const GuardedBuffer &) = delete;

  uint8_t *data() const { return data_; }
  size_t size() const { return len_; }
  bool ok() const { return data_ != nullptr; }

 private:
  size_t len_ = 0, map_len_ = 0;
  uint8_t *base_ = nullptr;
  uint8_t *data_ = nullptr;
};

}  // namespace ecjit::test
