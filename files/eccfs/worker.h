// An ECCFS worker: leases due files from the changelog, protects (or prunes) them, keeps its lease alive, completes.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>

#include "ecjit/status.h"
#include "files/eccfs/changelog.h"

namespace ecjit::eccfs {

struct WorkerOptions {
  std::string redis_url;
  std::string name;             // unique per worker ("" = host:pid)
  uint64_t lease_ms = 60000;    // a job's lease, renewed every third of it while it runs
  uint64_t poll_ms = 200;       // how often an idle worker asks again
  uint64_t retry_ms = 5000;     // a failed job is due again this much later
  uint64_t max_rate = 0;        // bytes per second read and written (0: unlimited)
  bool until_idle = false;      // return once nothing is pending or leased
  uint64_t max_jobs = 0;        // return after this many jobs (0: no limit)
  const std::atomic<bool> *stop = nullptr;  // return when set (SIGINT / SIGTERM)
};

struct WorkerReport {
  uint64_t jobs = 0, protected_files = 0, removed = 0, failed = 0, lost_leases = 0;
  uint64_t bytes_read = 0, bytes_written = 0;
};

// Runs jobs until options say stop, leasing up to 32 at a time. A job: a file written is
// protected (its changed stripes re-encoded; the leased files together through
// FileProtector::run, whose small files commit in batches), a file gone has its redundancy
// pruned; each job completes only once its redundancy is durable. A failure
// (unreadable, changed while read, no space) goes back to the queue with its message. `log`
// gets one line per job. Errors: kIoError when Redis stays unreachable past its patience,
// kInvalidArgument when the tree is not initialised.
Result<WorkerReport> run_worker(const WorkerOptions &options, const std::function<void(const std::string &)> &log);

}  // namespace ecjit::eccfs
