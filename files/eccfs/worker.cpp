// run_worker: the lease loop, a keep-alive thread per job, and the file protector that does the work.
#include "files/eccfs/worker.h"

#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "files/eccfs/tree_protector.h"

namespace ecjit::eccfs {
namespace {

// Jobs leased at once: their small files commit together (FileProtector::run's batches).
constexpr unsigned kBatchJobs = 32;

std::string default_name() {
  char host[256] = "host";
  (void)gethostname(host, sizeof host - 1);
  return std::string(host) + ":" + std::to_string(getpid());
}

// Renews the leases of the jobs in hand every third of a lease, on a connection and a thread of
// their own that live as long as the worker (a connection per job cost ~1 ms of a small file's).
class LeaseKeeper {
 public:
  LeaseKeeper(const WorkerOptions &o, const std::string &name) : o_(o), name_(name) {
    thread_ = std::thread([this] { run(); });
  }
  ~LeaseKeeper() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      quit_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  void start(const std::vector<Job> &jobs) {
    std::lock_guard<std::mutex> lock(mutex_);
    jobs_ = jobs;
    active_ = true;
  }
  // Ends the renewals (a lease lost meanwhile shows when its job completes).
  void stop() {
    std::lock_guard<std::mutex> lock(mutex_);
    active_ = false;
  }

 private:
  void run() {
    std::unique_ptr<Changelog> log;
    const auto period = std::chrono::milliseconds(std::max<uint64_t>(1, o_.lease_ms / 3));
    std::unique_lock<std::mutex> lock(mutex_);
    while (!cv_.wait_for(lock, period, [this] { return quit_; })) {
      if (!active_) continue;
      const std::vector<Job> jobs = jobs_;
      lock.unlock();
      if (!log) {
        auto c = Changelog::connect(o_.redis_url, o_.lease_ms / 3);
        if (c.ok()) log = std::move(*c);
      }
      for (const Job &job : jobs)
        if (log && !log->extend(job, name_, now_ms(), o_.lease_ms).ok()) log.reset();  // reconnect next time
      lock.lock();
    }
  }

  const WorkerOptions &o_;
  const std::string name_;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool quit_ = false, active_ = false;
  std::vector<Job> jobs_;
  std::thread thread_;
};

}  // namespace

Result<WorkerReport> run_worker(const WorkerOptions &o, const std::function<void(const std::string &)> &log) {
  auto changelog = Changelog::connect(o.redis_url);
  if (!changelog.ok()) return changelog.status();
  Changelog &cl = **changelog;
  auto tree = cl.config();
  if (!tree.ok()) return tree.status();
  const std::string name = o.name.empty() ? default_name() : o.name;
  auto tp = open_tree_protector(*tree, o.max_rate);
  if (!tp.ok()) return tp.status();
  files::FileProtector *const protector = tp->protector.get();
  WorkerReport rep;
  LeaseKeeper keeper(o, name);
  uint64_t last_beat = 0;
  for (;;) {
    if (o.stop && o.stop->load()) break;
    if (o.max_jobs && rep.jobs >= o.max_jobs) break;
    if (const uint64_t t = now_ms(); t >= last_beat + 1000) {  // status counts workers seen within 10 s
      ECJIT_RETURN_IF_ERROR(cl.heartbeat(name, t));
      last_beat = t;
    }
    const unsigned batch = unsigned(o.max_jobs ? std::min<uint64_t>(kBatchJobs, o.max_jobs - rep.jobs) : kBatchJobs);
    auto leased = cl.lease(name, now_ms(), o.lease_ms, batch);
    if (!leased.ok()) return leased.status();
    const std::vector<Job> &jobs = *leased;
    if (jobs.empty()) {
      if (o.until_idle) {
        auto st = cl.status(now_ms());
        if (!st.ok()) return st.status();
        if (st->pending == 0 && st->leased == 0) break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(o.poll_ms));
      continue;
    }
    rep.jobs += jobs.size();
    keeper.start(jobs);
    // Files written are protected together (FileProtector::run: small files commit in batches,
    // one syncfs instead of m + 1 fsyncs each, every report after its commit); files gone have
    // their redundancy pruned one by one.
    std::vector<Status> outcome(jobs.size());
    std::vector<std::string> what(jobs.size());
    std::vector<std::string> paths;
    std::vector<size_t> of_path;
    for (size_t i = 0; i < jobs.size(); ++i) {
      const std::string path = tree->root + "/" + jobs[i].path;
      if (path_exists(path)) {  // written (or removed, then created again: protect what is there)
        paths.push_back(path);
        of_path.push_back(i);
      } else if (protector->has_redundancy(path)) {  // in any domain: domain 0 may be the one lost
        auto pruned = protector->prune({path}, /*apply=*/true);
        outcome[i] = pruned.ok() ? Status::Ok() : pruned.status();
        what[i] = "redundancy removed";
        rep.removed += pruned.ok();
      } else {
        what[i] = "gone, no redundancy";
      }
    }
    protector->run(paths, files::FileProtector::Command::kProtect, [&](size_t p, const Result<files::FileReport> &r) {
      const size_t i = of_path[p];
      if (!r.ok()) {
        outcome[i] = r.status();
        return;
      }
      ++rep.protected_files;
      rep.bytes_read += r->bytes_read;
      rep.bytes_written += r->bytes_written;
      what[i] = std::to_string(r->stripes_encoded) + " of " + std::to_string(r->stripes) + " stripes encoded";
    });
    keeper.stop();
    for (size_t i = 0; i < jobs.size(); ++i) {
      const Job &j = jobs[i];
      if (!outcome[i].ok()) {
        ++rep.failed;
        log("failed " + j.path + ": " + outcome[i].to_string());
        ECJIT_RETURN_IF_ERROR(cl.fail(j, name, outcome[i].to_string(), now_ms() + o.retry_ms));
        continue;
      }
      auto done = cl.complete(j, name);
      if (!done.ok()) return done.status();
      if (!*done) {
        ++rep.lost_leases;
        log("lease lost " + j.path + " (another worker redoes it)");
        continue;
      }
      log("done " + j.path + ": " + what[i] + " (" + std::to_string(now_ms() - j.first_ms) + " ms after its change)");
    }
  }
  return rep;
}

}  // namespace ecjit::eccfs
