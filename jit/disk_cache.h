// DiskCache: compiled kernel objects on disk, keyed by everything the machine code depends on.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <cstddef>
#include <string>

namespace llvm {
class MemoryBuffer;
}  // namespace llvm

namespace ecjit::jit {

// One file per kernel under `dir`: <hex xxh3(key)>.ecjit-obj holding a header (magic,
// format version, the full key, object size, xxh3 of the object) and the object bytes.
// load() returns the object only when the magic, the full key, the size and the checksum
// all match and the bytes parse as an object file for this host; anything else (truncated,
// tampered, written by another LLVM / CPU / ecjit build: those are part of the key) is
// treated as a miss and later overwritten. store() writes a temporary file and renames it,
// so readers never see half a file. Thread- and process-safe; failures to write are
// silent (the cache is an optimisation).
// Trust: the directory is created 0700 and used only when it is a directory owned by this
// user and not writable by group or others (else problem() says why and nothing is read or
// written); entries are read only when they are regular files owned by this user, at most
// kMaxEntryBytes, opened without following links and without blocking (a FIFO or a link to
// /dev/zero is a miss, not a hang). An entry with the right key and checksum can still be
// forged by this user's own processes: jit_kernel runs every loaded kernel on a few vectors
// against the reference map before it serves (kernel_self_test.h).
class DiskCache {
 public:
  // Creates `dir` (mode 0700) when it is missing and checks it as above.
  explicit DiskCache(std::string dir);
  // Why the directory is not used ("" when it is).
  const std::string &problem() const { return problem_; }
  // Largest entry read (a kernel object is tens of KiB).
  static constexpr size_t kMaxEntryBytes = size_t(64) << 20;

  // The default directory: $ECJIT_CACHE_DIR, else $XDG_CACHE_HOME/ecjit, else
  // $HOME/.cache/ecjit; empty when none can be formed.
  static std::string default_dir();
  // Identity of the code that generated the objects: LLVM version plus the path, size and
  // modification time of the binary ecjit is linked into, so a rebuilt ecjit never reuses
  // objects of an older builder.
  static const std::string &build_identity();

  const std::string &dir() const { return dir_; }
  std::unique_ptr<llvm::MemoryBuffer> load(const std::string &key) const;
  void store(const std::string &key, const llvm::MemoryBuffer &object) const;
  // Path of the file for `key` (tests corrupt it on purpose).
  std::string path_for(const std::string &key) const;
  // Small text records (tuning decisions), validated like objects but not parsed.
  std::optional<std::string> load_text(const std::string &key) const;
  void store_text(const std::string &key, const std::string &text) const;
  // Deletes the oldest entries beyond kMaxEntries. Every 64th store() asks for it: through
  // the runner given to set_background (a Jit's background thread: a directory of many
  // thousand entries takes seconds to scan, never on a caller's thread), else inline.
  // One run stops at `budget` (the background thread also compiles promoted kernels): it
  // then deletes only among the entries it saw - the oldest of them beyond kMaxEntries, so
  // the directory never drops below kMaxEntries - and the next store() asks again.
  struct PruneRun {
    size_t scanned = 0;
    size_t removed = 0;
    bool complete = true;  // the whole directory was scanned and trimmed
  };
  PruneRun prune(std::chrono::steady_clock::duration budget = kPruneBudget) const;
  // `run(task)` queues task on another thread and returns false when it refused it (then the
  // prune waits for a later store). The runner must outlive this cache's stores, and the
  // tasks it runs must finish before the cache is destroyed.
  void set_background(std::function<bool(std::function<void()>)> run) { background_ = std::move(run); }
  static constexpr size_t kMaxEntries = 4096;
  static constexpr std::chrono::milliseconds kPruneBudget{100};

 private:
  std::string dir_;
  std::string problem_;  // non-empty: the directory is not trusted, the cache is off
  std::function<bool(std::function<void()>)> background_;
  mutable std::atomic<bool> prune_pending_{false};  // the last run ran out of budget
};

}  // namespace ecjit::jit
