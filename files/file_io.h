// file_io: the POSIX file operations file protection needs, as Status-returning helpers -
// positioned full reads and writes, fsync of files and directories, a run lock, a rate limit.
#pragma once

#include <sys/stat.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>

#include "ecjit/status.h"
#include "files/redundancy_header.h"

namespace ecjit::files {

// An owned file descriptor.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd &&o) noexcept : fd_(o.release()) {}
  Fd &operator=(Fd &&o) noexcept;
  ~Fd();
  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int release() {
    int f = fd_;
    fd_ = -1;
    return f;
  }

 private:
  int fd_ = -1;
};

// open(2) with O_CLOEXEC; kIoError naming the path and errno when it fails (ENOENT keeps its
// own message: "... does not exist").
Result<Fd> open_file(const std::string &path, int flags, mode_t mode = 0644);
// Reads up to len bytes at off; *got < len only at end of file. kIoError on a read error
// (EIO: an unreadable range).
Status read_at(int fd, uint64_t off, size_t len, uint8_t *buf, size_t *got, const std::string &what);
Status write_at(int fd, uint64_t off, size_t len, const uint8_t *buf, const std::string &what);
Status sync_file(int fd, const std::string &what);
Status sync_dir(const std::string &dir);
// mkdir -p (mode 0755).
Status make_dirs(const std::string &dir);
Result<DataIdentity> identity_of(int fd, const std::string &what);
// Sets a file's mtime (after a repair wrote into it, so its identity stays the protected one).
Status set_mtime(int fd, int64_t mtime_ns, const std::string &what);

std::string dir_name(const std::string &path);
std::string base_name(const std::string &path);
// Absolute and lexically normal (no "." or ".." parts, no repeated '/').
std::string absolute_path(const std::string &path);

// An exclusive advisory lock (flock) on a lock file, held for the object's life.
class RunLock {
 public:
  // Errors: kIoError "busy" when another process (or object) holds it.
  static Result<RunLock> acquire(const std::string &lock_path, const std::string &what);

 private:
  Fd fd_;
};

// Caps the bytes per second that all workers move together (0 = no cap).
class RateLimit {
 public:
  explicit RateLimit(uint64_t bytes_per_second) : rate_(bytes_per_second) {}
  // Accounts bytes and sleeps while the run is ahead of the rate.
  void take(uint64_t bytes);

 private:
  uint64_t rate_;
  std::mutex mu_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  uint64_t total_ = 0;
};

}  // namespace ecjit::files
