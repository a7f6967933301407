// DiskCache: validated, atomically written kernel object files.
#include "jit/disk_cache.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <unistd.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <utility>
#include <vector>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>

#include "llvm/Config/llvm-config.h"
#include "llvm/Object/ObjectFile.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"

namespace ecjit::jit {
namespace {

constexpr char kMagic[8] = {'E', 'C', 'J', 'I', 'T', 'O', 'B', 'J'};
constexpr uint32_t kFormat = 1;

struct Header {
  char magic[8];
  uint32_t format;
  uint32_t key_size;
  uint64_t object_size;
  uint64_t object_hash;
};

std::string hex64(uint64_t v) {
  char buf[17];
  snprintf(buf, sizeof buf, "%016llx", (unsigned long long)v);
  return buf;
}

}  // namespace

DiskCache::DiskCache(std::string dir) : dir_(std::move(dir)) {
  if (dir_.empty()) return;
  // The parents as the user's umask has them; the cache directory itself private.
  const std::string parent = std::string(llvm::sys::path::parent_path(dir_));
  if (!parent.empty()) (void)llvm::sys::fs::create_directories(parent);
  if (mkdir(dir_.c_str(), 0700) != 0 && errno != EEXIST) {
    problem_ = "cannot create " + dir_ + ": " + strerror(errno);
    return;
  }
  struct stat st;
  if (stat(dir_.c_str(), &st) != 0) {
    problem_ = "cannot stat " + dir_ + ": " + strerror(errno);
  } else if (!S_ISDIR(st.st_mode)) {
    problem_ = dir_ + " is not a directory";
  } else if (st.st_uid != geteuid()) {
    problem_ = dir_ + " belongs to uid " + std::to_string(st.st_uid) + ", not to this user (" +
               std::to_string(geteuid()) + ")";
  } else if (st.st_mode & 022) {
    char mode[8];
    snprintf(mode, sizeof mode, "%04o", unsigned(st.st_mode & 07777));
    problem_ = dir_ + " is writable by " + ((st.st_mode & 020) ? "its group" : "others") +
               " (mode " + mode + "); chmod go-w it or choose another ECJIT_CACHE_DIR";
  }
}

std::string DiskCache::default_dir() {
  if (const char *d = getenv("ECJIT_CACHE_DIR"); d && *d) return d;
  if (const char *x = getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/ecjit";
  if (const char *h = getenv("HOME"); h && *h) return std::string(h) + "/.cache/ecjit";
  return "";
}

const std::string &DiskCache::build_identity() {
  // Never destroyed: the background thread of a Jit held in a static still makes cache keys
  // while exit handlers run, and this static, made after that Jit, is destroyed before it
  // (codec_fuzz under ASan: heap-use-after-free at exit).
  static const std::string *const id = new std::string([] {
    std::string s = "llvm-" LLVM_VERSION_STRING;
    Dl_info info;
    struct stat st;
    // The binary by its canonical path: one build run as ./ecjit, by an absolute path or
    // through a link shares its entries.
    char canonical[PATH_MAX];
    if (dladdr(reinterpret_cast<void *>(&DiskCache::default_dir), &info) && info.dli_fname &&
        stat(info.dli_fname, &st) == 0) {
      const char *name = realpath(info.dli_fname, canonical) ? canonical : info.dli_fname;
      s += std::string("|") + name + "|" + std::to_string(st.st_size) + "|" +
           std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec);
    } else {
      s += "|unknown-binary|" + std::to_string(reinterpret_cast<uintptr_t>(&DiskCache::default_dir));
    }
    return s;
  }());
  return *id;
}

std::string DiskCache::path_for(const std::string &key) const {
  return dir_ + "/" + hex64(llvm::xxh3_64bits(llvm::StringRef(key))) + ".ecjit-obj";
}

namespace {

// The whole file at `path` when it is a regular file owned by this user of at most
// kMaxEntryBytes, opened without following a link and without blocking; else nullopt.
std::optional<std::string> read_regular_file(const std::string &path) {
  const int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  struct stat st;
  std::optional<std::string> out;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
      uint64_t(st.st_size) <= DiskCache::kMaxEntryBytes) {
    std::string bytes(size_t(st.st_size), '\0');
    size_t got = 0;
    while (got < bytes.size()) {
      const ssize_t n = read(fd, &bytes[got], bytes.size() - got);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      got += size_t(n);
    }
    if (got == bytes.size()) out = std::move(bytes);
  }
  close(fd);
  return out;
}

// The payload of a valid entry at `path` for `key`, or nullopt.
std::optional<std::string> read_entry(const std::string &path, const std::string &key) {
  const std::optional<std::string> file = read_regular_file(path);
  if (!file) return std::nullopt;
  llvm::StringRef bytes(*file);
  Header h;
  if (bytes.size() < sizeof h) return std::nullopt;
  memcpy(&h, bytes.data(), sizeof h);
  if (memcmp(h.magic, kMagic, sizeof kMagic) != 0 || h.format != kFormat) return std::nullopt;
  if (h.key_size != key.size() || bytes.size() != sizeof h + h.key_size + h.object_size) return std::nullopt;
  if (bytes.substr(sizeof h, h.key_size) != key) return std::nullopt;
  llvm::StringRef object = bytes.substr(sizeof h + h.key_size);
  if (llvm::xxh3_64bits(object) != h.object_hash) return std::nullopt;
  return object.str();
}

}  // namespace

std::optional<std::string> DiskCache::load_text(const std::string &key) const {
  if (dir_.empty() || !problem_.empty()) return std::nullopt;
  return read_entry(path_for(key + "|text"), key + "|text");
}

void DiskCache::store_text(const std::string &key, const std::string &text) const {
  store(key + "|text", *llvm::MemoryBuffer::getMemBuffer(text, "", false));
}

std::unique_ptr<llvm::MemoryBuffer> DiskCache::load(const std::string &key) const {
  if (dir_.empty() || !problem_.empty()) return nullptr;
  std::optional<std::string> object = read_entry(path_for(key), key);
  if (!object) return nullptr;
  auto copy = llvm::MemoryBuffer::getMemBufferCopy(*object, "ecjit-cached-kernel");
  auto parsed = llvm::object::ObjectFile::createObjectFile(copy->getMemBufferRef());
  if (!parsed) {
    llvm::consumeError(parsed.takeError());
    return nullptr;
  }
  return copy;
}

void DiskCache::store(const std::string &key, const llvm::MemoryBuffer &object) const {
  if (dir_.empty() || !problem_.empty()) return;
  const std::string path = path_for(key);
  llvm::SmallString<128> tmp;
  int fd = -1;
  if (llvm::sys::fs::createUniqueFile(path + ".tmp-%%%%%%%%", fd, tmp)) return;
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    Header h;
    memcpy(h.magic, kMagic, sizeof kMagic);
    h.format = kFormat;
    h.key_size = uint32_t(key.size());
    h.object_size = object.getBufferSize();
    h.object_hash = llvm::xxh3_64bits(object.getBuffer());
    os.write(reinterpret_cast<const char *>(&h), sizeof h);
    os << key;
    os << object.getBuffer();
    os.close();
    if (os.has_error()) {
      os.clear_error();
      llvm::sys::fs::remove(tmp);
      return;
    }
  }
  if (llvm::sys::fs::rename(tmp, path)) llvm::sys::fs::remove(tmp);
  static std::atomic<unsigned> stores{0};
  if (stores.fetch_add(1) % 64 != 0 && !prune_pending_.load(std::memory_order_relaxed)) return;
  if (!background_) (void)prune();
  else (void)background_([this] { (void)prune(); });
}

DiskCache::PruneRun DiskCache::prune(std::chrono::steady_clock::duration budget) const {
  PruneRun run;
  if (dir_.empty() || !problem_.empty()) return run;
  const auto deadline = std::chrono::steady_clock::now() + budget;
  auto out_of_time = [&] { return std::chrono::steady_clock::now() >= deadline; };
  // Entries of older ecjit builds are never looked up again: keep the newest kMaxEntries.
  std::vector<std::pair<llvm::sys::TimePoint<>, std::string>> files;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(dir_, ec), end; it != end && !ec; it.increment(ec)) {
    if (out_of_time()) {
      run.complete = false;
      break;
    }
    ++run.scanned;
    if (!llvm::StringRef(it->path()).ends_with(".ecjit-obj")) continue;
    llvm::sys::fs::file_status st;
    if (llvm::sys::fs::status(it->path(), st)) continue;
    files.emplace_back(st.getLastModificationTime(), it->path());
  }
  // The unseen rest of the directory only adds entries: trimming the seen ones to
  // kMaxEntries keeps at least kMaxEntries in all.
  if (files.size() > kMaxEntries) {
    std::sort(files.begin(), files.end());
    for (size_t i = 0; i + kMaxEntries < files.size(); ++i) {
      if (out_of_time()) {
        run.complete = false;
        break;
      }
      if (!llvm::sys::fs::remove(files[i].second)) ++run.removed;
    }
  }
  prune_pending_.store(!run.complete, std::memory_order_relaxed);
  return run;
}

}  // namespace ecjit::jit
