// ECCFS's monitor and scan: a tree's changes into the changelog, by inotify as they happen or by a walk after downtime.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>

#include "ecjit/status.h"

namespace ecjit::eccfs {

struct MonitorReport {
  uint64_t notes = 0;        // changes recorded
  uint64_t directories = 0;  // directories watched at the end
  uint64_t overflows = 0;    // times the kernel's event queue overflowed (each followed by a scan)
};

// Watches the tree of the changelog at `redis_url` (every directory, new ones as they appear)
// and records each file closed after writing, moved in, moved out or deleted, until *stop.
// Events wait in memory while Redis is unreachable and are recorded once it is back. A
// directory created or moved in is walked (files written before its watch existed); an event
// queue overflow rescans the whole tree. Redundancy directories (`.ecjit`) are not watched.
// Errors: kIoError (inotify unavailable, the root unreadable), kInvalidArgument (no tree).
Result<MonitorReport> run_monitor(const std::string &redis_url, const std::atomic<bool> &stop,
                                  const std::function<void(const std::string &)> &log);

// Records every regular file of the tree as written and every file whose redundancy remains
// but whose data is gone as removed: after downtime, or on file systems without events.
// Workers then skip files whose size and mtime are as protected without reading them.
// Returns the number of changes recorded.
Result<uint64_t> scan_tree(const std::string &redis_url, const std::function<void(const std::string &)> &log);

}  // namespace ecjit::eccfs
