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

bool exists(const std::string &p) { return ::access(p.c_str(), F_OK) == 0; }

std::string default_name() {
  char host[256] = "host";
  (void)gethostname(host, sizeof host - 1);
  return std::string(host) + ":" + std::to_string(getpid());
}

// Renews a job's lease every third of it on a connection of its own until stopped; `lost` is
// set when the lease was taken away (expired while this machine stalled).
class KeepAlive {
 public:
  KeepAlive(const WorkerOptions &o, const std::string &name, const Job &job) {
    thread_ = std::thread([this, o, name, job] {
      auto log = Changelog::connect(o.redis_url, o.lease_ms / 3);
      std::unique_lock<std::mutex> lock(mutex_);
      while (!cv_.wait_for(lock, std::chrono::milliseconds(std::max<uint64_t>(1, o.lease_ms / 3)), [this] { return done_; })) {
        if (!log.ok()) continue;
        auto kept = (*log)->extend(job, name, now_ms(), o.lease_ms);
        if (kept.ok() && !*kept) lost_ = true;
      }
    });
  }
  ~KeepAlive() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  bool lost() const { return lost_; }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool done_ = false;
  std::atomic<bool> lost_{false};
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
  for (;;) {
    if (o.stop && o.stop->load()) break;
    if (o.max_jobs && rep.jobs >= o.max_jobs) break;
    ECJIT_RETURN_IF_ERROR(cl.heartbeat(name, now_ms()));
    auto job = cl.lease(name, now_ms(), o.lease_ms);
    if (!job.ok()) return job.status();
    if (!*job) {
      if (o.until_idle) {
        auto st = cl.status(now_ms());
        if (!st.ok()) return st.status();
        if (st->pending == 0 && st->leased == 0) break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(o.poll_ms));
      continue;
    }
    const Job &j = **job;
    const std::string path = tree->root + "/" + j.path;
    ++rep.jobs;
    Status outcome;
    std::string what;
    bool lost_lease = false;
    {
      KeepAlive keep(o, name, j);
      if (j.remove || !exists(path)) {
        if (!exists(path) && exists(protector->redundancy_path(path, 0))) {
          auto pruned = protector->prune({path}, /*apply=*/true);
          outcome = pruned.ok() ? Status::Ok() : pruned.status();
          what = "redundancy removed";
          if (pruned.ok()) ++rep.removed;
        } else if (exists(path)) {  // removed, then created again: protect what is there
          auto r = protector->protect(path);
          outcome = r.ok() ? Status::Ok() : r.status();
          what = "protected";
        } else {
          what = "gone, no redundancy";
        }
      } else {
        auto r = protector->protect(path);
        if (r.ok()) {
          ++rep.protected_files;
          rep.bytes_read += r->bytes_read;
          rep.bytes_written += r->bytes_written;
          what = std::to_string(r->stripes_encoded) + " of " + std::to_string(r->stripes) + " stripes encoded";
        } else {
          outcome = r.status();
        }
      }
      lost_lease = keep.lost();
    }
    if (!outcome.ok()) {
      ++rep.failed;
      log("failed " + j.path + ": " + outcome.to_string());
      ECJIT_RETURN_IF_ERROR(cl.fail(j, name, outcome.to_string(), now_ms() + o.retry_ms));
      continue;
    }
    auto done = cl.complete(j, name);
    if (!done.ok()) return done.status();
    if (!*done || lost_lease) {
      ++rep.lost_leases;
      log("lease lost " + j.path + " (another worker redoes it)");
      continue;
    }
    log("done " + j.path + ": " + what + " (" + std::to_string(now_ms() - j.first_ms) + " ms after its change)");
  }
  return rep;
}

}  // namespace ecjit::eccfs
