// ThreadPool: an intrusive queue of caller-owned jobs under one mutex; workers and callers claim tasks.
#include "runtime/thread_pool.h"

#include <pthread.h>

namespace ecjit::runtime {

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  work_.notify_all();
  for (std::thread &t : threads_) t.join();
}

size_t ThreadPool::started() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return threads_.size();
}

void ThreadPool::start_workers() {
  started_ = true;
  threads_.reserve(workers_);
  for (unsigned i = 0; i < workers_; ++i) threads_.emplace_back([this] {
      pthread_setname_np(pthread_self(), "ecjit-pool");  // as top -H and perf show it
      worker_loop();
    });
}

void ThreadPool::unlink(Job *job) {
  Job *prev = nullptr;
  for (Job *j = head_; j; prev = j, j = j->link) {
    if (j != job) continue;
    (prev ? prev->link : head_) = j->link;
    if (tail_ == j) tail_ = prev;
    j->link = nullptr;
    return;
  }
}

void ThreadPool::finish_task(Job *job) {
  // Notified under the lock: the caller cannot see done == n, return and destroy the job
  // (and its condition variable) before this thread has let go of the mutex.
  if (++job->done == job->n) job->finished.notify_one();
}

void ThreadPool::run_tasks(size_t n_tasks, TaskFn fn, const void *ctx) {
  if (n_tasks <= 1 || workers_ == 0) {
    for (size_t i = 0; i < n_tasks; ++i) fn(ctx, i);
    return;
  }
  parallel_runs_.fetch_add(1, std::memory_order_relaxed);
  Job job;
  job.fn = fn;
  job.ctx = ctx;
  job.n = n_tasks;
  std::unique_lock<std::mutex> lock(mutex_);
  if (!started_) start_workers();
  (tail_ ? tail_->link : head_) = &job;
  tail_ = &job;
  lock.unlock();
  if (n_tasks - 1 >= workers_) work_.notify_all();
  else for (size_t i = 0; i + 1 < n_tasks; ++i) work_.notify_one();
  lock.lock();
  // The caller works on its own job until every task is claimed, then waits for the rest.
  while (job.next < job.n) {
    const size_t i = job.next++;
    if (job.next == job.n) unlink(&job);
    lock.unlock();
    fn(ctx, i);
    lock.lock();
    finish_task(&job);
  }
  job.finished.wait(lock, [&job] { return job.done == job.n; });
}

void ThreadPool::worker_loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    work_.wait(lock, [this] { return stop_ || head_; });
    if (!head_) return;  // stop_ and nothing queued
    Job *job = head_;
    const size_t i = job->next++;
    if (job->next == job->n) unlink(job);
    lock.unlock();
    job->fn(job->ctx, i);
    worker_tasks_.fetch_add(1, std::memory_order_relaxed);
    lock.lock();
    finish_task(job);
  }
}

}  // namespace ecjit::runtime
