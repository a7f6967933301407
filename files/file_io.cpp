// file_io: POSIX helpers with EINTR and short-transfer handling and errors that name the file.
#include "files/file_io.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <thread>
#include <vector>

namespace ecjit::files {
namespace {

Status io_error(const std::string &what, const char *op, int err) {
  return Status(StatusCode::kIoError, what + ": " + op + ": " + std::strerror(err));
}

}  // namespace

Fd &Fd::operator=(Fd &&o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.release();
  }
  return *this;
}

Fd::~Fd() {
  if (fd_ >= 0) ::close(fd_);
}

Result<Fd> open_file(const std::string &path, int flags, mode_t mode) {
  int fd;
  do fd = ::open(path.c_str(), flags | O_CLOEXEC, mode);
  while (fd < 0 && errno == EINTR);
  if (fd < 0) {
    if (errno == ENOENT) return Status(StatusCode::kIoError, path + ": does not exist");
    return io_error(path, "open", errno);
  }
  return Fd(fd);
}

Status read_at(int fd, uint64_t off, size_t len, uint8_t *buf, size_t *got, const std::string &what) {
  size_t done = 0;
  while (done < len) {
    ssize_t r = ::pread(fd, buf + done, std::min<size_t>(len - done, size_t(1) << 30), off_t(off + done));
    if (r < 0) {
      if (errno == EINTR) continue;
      *got = done;
      return io_error(what, "read", errno);
    }
    if (r == 0) break;
    done += size_t(r);
  }
  *got = done;
  return Status::Ok();
}

Status write_at(int fd, uint64_t off, size_t len, const uint8_t *buf, const std::string &what) {
  size_t done = 0;
  while (done < len) {
    ssize_t r = ::pwrite(fd, buf + done, std::min<size_t>(len - done, size_t(1) << 30), off_t(off + done));
    if (r < 0) {
      if (errno == EINTR) continue;
      return io_error(what, "write", errno);
    }
    done += size_t(r);
  }
  return Status::Ok();
}

Status sync_file(int fd, const std::string &what) {
  if (::fsync(fd) != 0) return io_error(what, "fsync", errno);
  return Status::Ok();
}

Status sync_dir(const std::string &dir) {
  auto fd = open_file(dir, O_RDONLY | O_DIRECTORY);
  if (!fd.ok()) return fd.status();
  if (::fsync(fd->get()) != 0 && errno != EINVAL) return io_error(dir, "fsync", errno);
  return Status::Ok();
}

Status make_dirs(const std::string &dir) {
  if (dir.empty() || dir == "/" || dir == ".") return Status::Ok();
  struct stat st;
  if (::stat(dir.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return Status::Ok();
    return Status(StatusCode::kIoError, dir + ": exists and is not a directory");
  }
  ECJIT_RETURN_IF_ERROR(make_dirs(dir_name(dir)));
  if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) return io_error(dir, "mkdir", errno);
  return Status::Ok();
}

Result<DataIdentity> identity_of(int fd, const std::string &what) {
  struct stat st;
  if (::fstat(fd, &st) != 0) return io_error(what, "stat", errno);
  if (!S_ISREG(st.st_mode)) return Status(StatusCode::kIoError, what + ": not a regular file");
  DataIdentity id;
  id.size = uint64_t(st.st_size);
  id.mtime_ns = int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  id.inode = uint64_t(st.st_ino);
  id.dev = uint64_t(st.st_dev);
  return id;
}

Status set_mtime(int fd, int64_t mtime_ns, const std::string &what) {
  struct timespec t[2];
  t[0].tv_sec = 0;
  t[0].tv_nsec = UTIME_OMIT;
  t[1].tv_sec = time_t(mtime_ns / 1000000000);
  t[1].tv_nsec = long(mtime_ns % 1000000000);
  if (::futimens(fd, t) != 0) return io_error(what, "set mtime", errno);
  return Status::Ok();
}

std::string dir_name(const std::string &path) {
  size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string base_name(const std::string &path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string absolute_path(const std::string &path) {
  std::string full = path;
  if (full.empty() || full[0] != '/') {
    char cwd[PATH_MAX];
    if (!::getcwd(cwd, sizeof cwd)) return path;
    full = std::string(cwd) + "/" + path;
  }
  std::vector<std::string> parts;
  size_t i = 0;
  while (i <= full.size()) {
    size_t j = full.find('/', i);
    if (j == std::string::npos) j = full.size();
    std::string part = full.substr(i, j - i);
    if (part == "..") {
      if (!parts.empty()) parts.pop_back();
    } else if (!part.empty() && part != ".") {
      parts.push_back(part);
    }
    i = j + 1;
  }
  std::string out;
  for (const std::string &p : parts) out += "/" + p;
  return out.empty() ? "/" : out;
}

Result<RunLock> RunLock::acquire(const std::string &lock_path, const std::string &what) {
  auto fd = open_file(lock_path, O_RDWR | O_CREAT, 0644);
  // A read-only medium (a backup disk mounted ro) still has the lock file protect left: a
  // read-only descriptor takes the lock as well, so a scrub can check it there.
  if (!fd.ok()) {
    auto read_only = open_file(lock_path, O_RDONLY);
    if (read_only.ok()) fd = std::move(read_only);
  }
  if (!fd.ok()) return fd.status();
  if (::flock(fd->get(), LOCK_EX | LOCK_NB) != 0) {
    if (errno == EWOULDBLOCK)
      return Status(StatusCode::kIoError, what + ": busy: another ecjit run is working on it (lock " + lock_path + ")");
    return io_error(lock_path, "lock", errno);
  }
  RunLock lock;
  lock.fd_ = std::move(*fd);
  return lock;
}

void RateLimit::take(uint64_t bytes) {
  if (rate_ == 0) return;
  std::chrono::steady_clock::time_point due;
  {
    std::lock_guard<std::mutex> lock(mu_);
    total_ += bytes;
    due = start_ + std::chrono::nanoseconds(uint64_t(double(total_) / double(rate_) * 1e9));
  }
  std::this_thread::sleep_until(due);
}

}  // namespace ecjit::files
