// BackgroundWorker: the one thread of a kernel service's background jobs - tunings, and tasks such as
// promoted decoders and a codec's own kernels compiled behind the built-in ones.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "jit/disk_cache.h"
#include "jit/jit_session.h"
#include "jit/kernel_compiler.h"
#include "jit/tuner.h"

namespace ecjit::jit {

// Tiered compilation for kernels: the caller compiles the static strategy (or takes a built-in
// kernel) and returns at once; this worker compiles the other candidates, times them against
// the running kernel and hands the result to the job's `done` callback (on the worker thread),
// which swaps the winner in. One worker per service, started on the first job, so tuning never
// takes more than one core and never runs two timings at once (they would disturb each other).
//
// Thread-safe. Destruction raises the cancel flag (the job in progress stops at its next
// compile or timing slice; its callback is not called), drops queued jobs and joins (a worker
// destroyed from its own thread, by a task that dropped the last reference to its owner,
// detaches instead; the worker then touches nothing of the object after the task).
class BackgroundWorker {
 public:
  struct Job {
    std::optional<CompileRequest> request;         // strategy kAuto (unset for a task)
    std::shared_ptr<const CompiledKernel> given;   // the kernel serving calls meanwhile
    // Called once with the result and the job's wall time on the worker (compiles and
    // timing, not the wait in the queue), unless the tuner is destroyed first. Must not submit.
    std::function<void(llvm::Expected<TuneResult>, double seconds)> done;
    // Checked before the job starts: false skips it (e.g. the decoder was evicted).
    std::function<bool()> still_wanted;
    // When set, the job is this task instead of a tuning (request, given and done are
    // ignored): work that must not run on a caller's thread, e.g. compiling a promoted
    // decoder. It runs on the worker like a tuning, one job at a time.
    std::function<void()> task;
    // Optional jobs are refused (submit returns false) while `max_optional_backlog` jobs
    // wait, so that a storm of distinct erasure sets cannot queue unbounded work.
    bool optional = false;
  };

  BackgroundWorker(JitSession &session, const DiskCache *disk, double budget_ms,
                  size_t max_optional_backlog = 8);
  ~BackgroundWorker();
  BackgroundWorker(const BackgroundWorker &) = delete;
  BackgroundWorker &operator=(const BackgroundWorker &) = delete;

  // What the destructor does, leaving the object in place: queued jobs are dropped, the one
  // running is cancelled at its next compile or timing slice and joined; later submits are
  // refused. For owners that are never destroyed (a process-wide Jit stopped at exit).
  void stop();
  // Queues a job; false when it was refused (optional and the backlog is full, or stopped).
  bool submit(Job job);
  // Blocks until no job is queued or running.
  void wait_idle();
  // Jobs queued or running.
  size_t pending() const;

 private:
  void run();

  JitSession &session_;
  const DiskCache *disk_;
  const double budget_ms_;
  const size_t max_optional_backlog_;
  mutable std::mutex mutex_;
  std::condition_variable wake_, idle_;
  std::deque<Job> queue_;
  bool running_job_ = false;
  bool stop_ = false;
  std::atomic<bool> cancel_{false};
  std::thread worker_;  // started by the first submit
  std::mutex join_mutex_;  // one stop() joins
  // Set when the tuner is destroyed from its own worker (see the class comment).
  std::shared_ptr<bool> orphaned_ = std::make_shared<bool>(false);
};

}  // namespace ecjit::jit
