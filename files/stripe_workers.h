// StripeWorkers: runs a per-stripe function on worker threads, each with its own unit buffers,
// under one rate limit, and reports progress.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "ecjit/file_protection.h"
#include "ecjit/status.h"
#include "files/file_io.h"

namespace ecjit::files {

// One worker's buffers: `count` units of `unit` bytes, 64-byte aligned.
struct UnitBuffers {
  struct Free {
    void operator()(uint8_t *p) const;
  };
  std::unique_ptr<uint8_t, Free> mem;
  std::vector<uint8_t *> unit;
};

// The workers of one file: threads over its stripes, progress reports for it, and a rate limit
// shared with the other files of the run.
class StripeWorkers {
 public:
  // threads: 0 = one per hardware thread. progress may be empty.
  StripeWorkers(unsigned threads, RateLimit &rate, std::function<void(const Progress &)> progress)
      : threads_(threads), rate_(rate), progress_(std::move(progress)) {}
  // Unit buffers of all workers together stay under this; fewer workers when a unit is big.
  static constexpr uint64_t kMemory = uint64_t(1) << 30;

  // Starts (or restarts, for a second pass) the progress of the file.
  void begin(const std::string &path, uint64_t units_total);
  // Accounts bytes read or written (into *counter), `units` data units done, and sleeps as the
  // rate limit asks. Called from the workers.
  void moved(std::atomic<uint64_t> *counter, uint64_t bytes, uint64_t units);
  // Reports the file's final progress.
  void finish() { tick(0, 0, true); }

  // Runs fn(i, buffers) for i in [0, count), `units` x `unit` bytes of buffers per worker; the
  // first error stops the rest and is returned.
  Status run(uint64_t count, unsigned units, uint64_t unit, const std::function<Status(uint64_t, UnitBuffers &)> &fn);

 private:
  void tick(uint64_t units, uint64_t bytes, bool final);

  unsigned threads_;
  RateLimit &rate_;
  std::function<void(const Progress &)> progress_;
  std::string path_;
  uint64_t total_ = 0;
  std::atomic<uint64_t> units_{0}, bytes_{0};
  std::mutex mu_;
  std::chrono::steady_clock::time_point last_;
};

}  // namespace ecjit::files
