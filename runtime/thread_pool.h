// ThreadPool: a fixed set of worker threads that run the pieces of a call together with the caller.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace ecjit::runtime {

// `workers` threads, started on the first run() that has more than one task and joined by
// the destructor (which must not race with a run(): the owner destroys the pool only when
// nobody can call it any more). run() may be called from any number of threads at once:
// calls queue their jobs, workers take tasks from the oldest job first, and every caller
// works on its own job too, so a call always finishes even when every worker is busy (or
// could not be started) and a task may itself call run(). run() does not allocate.
class ThreadPool {
 public:
  explicit ThreadPool(unsigned workers) : workers_(workers) {}
  ~ThreadPool();
  ThreadPool(const ThreadPool &) = delete;
  ThreadPool &operator=(const ThreadPool &) = delete;

  // Runs fn(i) for every i in [0, n_tasks) on the workers and the calling thread; returns
  // when all have returned. Each i runs exactly once, in no particular order or thread.
  // fn must not throw.
  template <typename Fn>
  void run(size_t n_tasks, const Fn &fn) {
    run_tasks(n_tasks, [](const void *ctx, size_t i) { (*static_cast<const Fn *>(ctx))(i); }, &fn);
  }

  unsigned workers() const { return workers_; }
  // Test hooks: run() calls that had more than one task; tasks a worker (not the caller)
  // ran; workers started.
  uint64_t parallel_runs() const { return parallel_runs_.load(std::memory_order_relaxed); }
  uint64_t worker_tasks() const { return worker_tasks_.load(std::memory_order_relaxed); }
  size_t started() const;

 private:
  using TaskFn = void (*)(const void *ctx, size_t i);
  // One run() call, on its caller's stack; queued while it has unclaimed tasks.
  struct Job {
    TaskFn fn;
    const void *ctx;
    size_t n;
    size_t next = 0;  // next unclaimed task
    size_t done = 0;  // tasks finished
    Job *link = nullptr;
    std::condition_variable finished;
  };

  void run_tasks(size_t n_tasks, TaskFn fn, const void *ctx);
  void start_workers();                       // under mutex_
  void unlink(Job *job);                      // under mutex_
  void finish_task(Job *job);                 // under mutex_
  void worker_loop();

  const unsigned workers_;
  mutable std::mutex mutex_;
  std::condition_variable work_;  // a job was queued, or stop_
  Job *head_ = nullptr, *tail_ = nullptr;
  bool stop_ = false;
  bool started_ = false;
  std::vector<std::thread> threads_;
  std::atomic<uint64_t> parallel_runs_{0}, worker_tasks_{0};
};

}  // namespace ecjit::runtime
