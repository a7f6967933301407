// ECCFS's changelog and job queue in Redis (Nešković 2018, ch. 7): updates per file, compacted, leased to workers with expiry.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ecjit/status.h"

namespace ecjit::eccfs {

// What a tree's workers share, stored in Redis by `init`.
struct TreeConfig {
  std::string root;     // the protected tree (absolute); changelog paths are relative to it
  std::string ecc_dir;  // where redundancy goes: a directory, or failure domains D0,D1,... (files::set_redundancy_dirs)
  std::string spec;     // the code of new redundancy ("" = the file protector's default)
  uint64_t unit = 0;    // bytes per unit (0 = the file protector's default)
  uint64_t delay_ms = 30000;  // a file is encoded once it has been quiet this long
};

// One file's pending change, as a worker leases it.
struct Job {
  std::string path;    // relative to the root
  bool remove = false; // the file was deleted: drop its redundancy
  std::string ranges;  // changed byte ranges, merged ("OFF-END,..."; END "" = to the end of the file)
  uint64_t generation = 0;  // the file's change count when leased (a later change re-queues it)
  uint64_t first_ms = 0;    // when its oldest unprotected change was noted
};

struct QueueStatus {
  uint64_t pending = 0;      // files with changes not yet leased
  uint64_t due = 0;          // of those, quiet for their delay already
  uint64_t leased = 0;       // files a worker is encoding now
  uint64_t workers = 0;      // workers seen within the last 10 s
  uint64_t done = 0, failed = 0, expired = 0;  // jobs completed, failed (retried), leases expired
  int64_t oldest_ms = -1;    // age of the oldest unprotected change (-1: none)
  std::vector<std::string> errors;  // the latest failures, newest first ("path: message")
};

// A connection to the Redis of one tree (`redis://HOST:PORT[/DB]`; a single Redis server, not
// a Cluster: the scripts name keys they compute). Every step that changes the queue is one Lua
// script, atomic on the server. Calls retry a lost connection for up to `patience_ms` (Redis
// restarted, or unreachable for a while) and then fail with kIoError naming the server.
// Not thread-safe: one per thread.
class Changelog {
 public:
  static Result<std::unique_ptr<Changelog>> connect(const std::string &url, uint64_t patience_ms = 30000);
  ~Changelog();

  Status init(const TreeConfig &config);  // writes the tree's configuration (replaces it)
  Result<TreeConfig> config();            // kInvalidArgument when `init` has not run

  // A change of `path` (relative) at `now_ms`: bytes [offset, offset + length) written
  // (length < 0: to the end, the whole file when offset is 0 too), or the file removed. The
  // file is due delay_ms after its latest change; ranges merge, a removal drops them.
  Status notify(const std::string &path, bool removed, uint64_t offset, int64_t length, uint64_t now_ms);
  // The next due files for `worker` (at most max_jobs, oldest due first), leased until now +
  // lease_ms; none when none is due. Leases that expired first go back to the queue (their
  // worker died: the job is redone).
  Result<std::vector<Job>> lease(const std::string &worker, uint64_t now_ms, uint64_t lease_ms, unsigned max_jobs = 1);
  // Keeps a lease of a long job; false when it was lost (expired and taken again).
  Result<bool> extend(const Job &job, const std::string &worker, uint64_t now_ms, uint64_t lease_ms);
  // The job is done: the file leaves the queue unless it changed meanwhile (then it stays,
  // due after its latest change). false when the lease had been lost (someone else redoes it).
  Result<bool> complete(const Job &job, const std::string &worker);
  // The job failed: its lease ends, the file is due again at retry_ms, the error is kept.
  Status fail(const Job &job, const std::string &worker, const std::string &message, uint64_t retry_ms);
  // A worker is alive (status counts those seen within 10 s).
  Status heartbeat(const std::string &worker, uint64_t now_ms);
  Result<QueueStatus> status(uint64_t now_ms);

  class Impl;

 private:
  explicit Changelog(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

uint64_t now_ms();  // wall-clock milliseconds (shared by every machine of a tree)

}  // namespace ecjit::eccfs
