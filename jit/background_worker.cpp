// BackgroundWorker: one worker thread draining a queue of tuning jobs and tasks.
#include "jit/background_worker.h"

#include <pthread.h>
#ifdef __linux__
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include <utility>

namespace ecjit::jit {

BackgroundWorker::BackgroundWorker(JitSession &session, const DiskCache *disk, double budget_ms,
                                 size_t max_optional_backlog)
    : session_(session), disk_(disk), budget_ms_(budget_ms),
      max_optional_backlog_(max_optional_backlog) {}

BackgroundWorker::~BackgroundWorker() { stop(); }

void BackgroundWorker::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
    queue_.clear();
  }
  cancel_.store(true);
  wake_.notify_all();
  std::lock_guard<std::mutex> join_lock(join_mutex_);
  if (!worker_.joinable()) return;
  if (worker_.get_id() == std::this_thread::get_id()) {
    *orphaned_ = true;  // read by run() after the task that destroyed us returns
    worker_.detach();
    return;
  }
  worker_.join();
}

bool BackgroundWorker::submit(Job job) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stop_) return false;
    if (job.optional && queue_.size() >= max_optional_backlog_) return false;
    queue_.push_back(std::move(job));
    if (!worker_.joinable()) worker_ = std::thread([this] { run(); });
  }
  wake_.notify_one();
  return true;
}

void BackgroundWorker::wait_idle() {
  std::unique_lock<std::mutex> lock(mutex_);
  idle_.wait(lock, [this] { return stop_ || (queue_.empty() && !running_job_); });
}

size_t BackgroundWorker::pending() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return queue_.size() + (running_job_ ? 1 : 0);
}

void BackgroundWorker::run() {
  pthread_setname_np(pthread_self(), "ecjit-bg");  // as top -H and perf show it
#ifdef __linux__
  // Compiles and tuning yield to the callers' threads: at the default priority, a
  // ThreadPool worker that split a caller's 1 MiB reconstruct and shared a core with this
  // thread waited out a scheduler slice, and the caller with it (RS(10,4) random sets, 2
  // cores: 1-2 calls of 1-4 ms per run; at nice 19 none). Linux's nice is per thread.
  (void)setpriority(PRIO_PROCESS, id_t(syscall(SYS_gettid)), 19);
#endif
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    wake_.wait(lock, [this] { return stop_ || !queue_.empty(); });
    if (stop_) break;
    Job job = std::move(queue_.front());
    queue_.pop_front();
    running_job_ = true;
    lock.unlock();
    if (job.task) {
      if (!job.still_wanted || job.still_wanted()) {
        std::shared_ptr<bool> orphaned = orphaned_;  // outlives this tuner
        std::function<void()> task = std::move(job.task);
        job.task = nullptr;
        job.still_wanted = nullptr;
        task();
        task = nullptr;
        if (*orphaned) return;  // the task destroyed this tuner: nothing of it is left
      }
    } else if (job.request && (!job.still_wanted || job.still_wanted())) {
      TuneOptions options;
      options.budget_ms = budget_ms_;
      options.given_strategy = job.given ? job.given->strategy() : ir::Strategy::kAuto;
      options.given_address = job.given ? job.given->address() : nullptr;
      options.cancel = &cancel_;
      const auto start = std::chrono::steady_clock::now();
      llvm::Expected<TuneResult> result = tune_kernel(session_, *job.request, disk_, options);
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (cancel_.load()) llvm::consumeError(result.takeError());
      else job.done(std::move(result), seconds);
    }
    job.given.reset();  // release what the job held before reporting idle
    job.done = nullptr;
    job.still_wanted = nullptr;
    lock.lock();
    running_job_ = false;
    if (queue_.empty()) idle_.notify_all();
  }
  running_job_ = false;
  idle_.notify_all();
}

}  // namespace ecjit::jit
