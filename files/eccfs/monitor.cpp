// run_monitor and scan_tree: inotify watches over the tree, a walk through FileProtector::expand, both into Changelog::notify.
#include "files/eccfs/monitor.h"

#include <dirent.h>
#include <poll.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <deque>
#include <unordered_map>

#include "files/eccfs/changelog.h"
#include "files/eccfs/tree_protector.h"

namespace ecjit::eccfs {
namespace {

struct Note {
  std::string rel;
  bool removed;
};

class Monitor {
 public:
  Monitor(Changelog &cl, const TreeConfig &tree, const std::function<void(const std::string &)> &log)
      : cl_(cl), tree_(tree), log_(log) {}
  ~Monitor() {
    if (fd_ >= 0) ::close(fd_);
  }

  Result<MonitorReport> run(const std::atomic<bool> &stop) {
    fd_ = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
    if (fd_ < 0) return Status(StatusCode::kIoError, std::string("inotify: ") + std::strerror(errno));
    ECJIT_RETURN_IF_ERROR(watch_tree(tree_.root, /*note_files=*/false));
    log_("watching " + std::to_string(dirs_.size()) + " directories under " + tree_.root);
    alignas(inotify_event) char buf[64 * 1024];
    while (!stop.load()) {
      flush();
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 200) <= 0) continue;
      for (;;) {
        const ssize_t n = ::read(fd_, buf, sizeof buf);
        if (n <= 0) break;
        for (ssize_t at = 0; at < n;) {
          const auto *e = reinterpret_cast<const inotify_event *>(buf + at);
          handle(*e);
          at += ssize_t(sizeof(inotify_event) + e->len);
        }
      }
    }
    flush();
    rep_.directories = dirs_.size();
    return rep_;
  }

 private:
  // Watches `dir` and every directory below it; with note_files, notes their files too (a
  // directory that appeared: its files may predate the watch).
  Status watch_tree(const std::string &dir, bool note_files) {
    const uint32_t mask = IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE | IN_CREATE | IN_DELETE_SELF |
                          IN_ONLYDIR | IN_EXCL_UNLINK;
    const int wd = inotify_add_watch(fd_, dir.c_str(), mask);
    if (wd < 0) {
      if (dir == tree_.root) return Status(StatusCode::kIoError, "inotify_add_watch " + dir + ": " + std::strerror(errno));
      log_("cannot watch " + dir + ": " + std::strerror(errno) + " (eccfs scan covers it)");
      return Status::Ok();
    }
    dirs_[wd] = dir;
    DIR *d = ::opendir(dir.c_str());
    if (!d) return Status::Ok();
    while (dirent *e = ::readdir(d)) {
      const std::string name = e->d_name;
      if (name == "." || name == ".." || name == ".ecjit") continue;
      const std::string path = dir + "/" + name;
      struct stat st;
      if (::lstat(path.c_str(), &st) != 0) continue;
      if (S_ISDIR(st.st_mode)) (void)watch_tree(path, note_files);
      else if (S_ISREG(st.st_mode) && note_files) note(path, false);
    }
    ::closedir(d);
    return Status::Ok();
  }

  void handle(const inotify_event &e) {
    if (e.mask & IN_Q_OVERFLOW) {
      ++rep_.overflows;
      log_("event queue overflowed: rescanning the tree");
      (void)watch_tree(tree_.root, /*note_files=*/true);
      return;
    }
    auto it = dirs_.find(e.wd);
    if (it == dirs_.end()) return;
    if (e.mask & (IN_DELETE_SELF | IN_IGNORED)) {
      dirs_.erase(it);
      return;
    }
    if (!e.len) return;
    const std::string name = e.name;
    if (name == ".ecjit") return;
    const std::string path = it->second + "/" + name;
    if (e.mask & IN_ISDIR) {
      if (e.mask & (IN_CREATE | IN_MOVED_TO)) (void)watch_tree(path, /*note_files=*/true);
      return;  // a directory moved out or deleted: its files' own events (or a scan) cover them
    }
    if (e.mask & (IN_CLOSE_WRITE | IN_MOVED_TO)) note(path, false);
    else if (e.mask & (IN_MOVED_FROM | IN_DELETE)) note(path, true);
  }

  void note(const std::string &path, bool removed) {
    if (path.size() <= tree_.root.size() + 1) return;
    queue_.push_back({path.substr(tree_.root.size() + 1), removed});
  }

  // Records what waits; keeps it (Redis unreachable past the changelog's patience) for the next try.
  void flush() {
    while (!queue_.empty()) {
      const Note &n = queue_.front();
      if (Status st = cl_.notify(n.rel, n.removed, 0, -1, now_ms()); !st.ok()) {
        log_("cannot record changes (" + std::to_string(queue_.size()) + " waiting): " + st.message());
        return;
      }
      ++rep_.notes;
      queue_.pop_front();
    }
  }

  Changelog &cl_;
  const TreeConfig &tree_;
  const std::function<void(const std::string &)> &log_;
  int fd_ = -1;
  std::unordered_map<int, std::string> dirs_;
  std::deque<Note> queue_;
  MonitorReport rep_;
};

}  // namespace

Result<MonitorReport> run_monitor(const std::string &redis_url, const std::atomic<bool> &stop,
                                  const std::function<void(const std::string &)> &log) {
  auto cl = Changelog::connect(redis_url, 5000);
  if (!cl.ok()) return cl.status();
  auto tree = (*cl)->config();
  if (!tree.ok()) return tree.status();
  Monitor m(**cl, *tree, log);
  return m.run(stop);
}

Result<uint64_t> scan_tree(const std::string &redis_url, const std::function<void(const std::string &)> &log) {
  auto cl = Changelog::connect(redis_url, 5000);
  if (!cl.ok()) return cl.status();
  auto tree = (*cl)->config();
  if (!tree.ok()) return tree.status();
  auto tp = open_tree_protector(*tree);
  if (!tp.ok()) return tp.status();
  files::Skipped skipped;
  auto found = tp->protector->expand({tree->root}, /*protected_missing=*/true, &skipped);
  if (!found.ok()) return found.status();
  uint64_t notes = 0;
  for (const std::string &f : *found) {
    if (f.compare(0, tree->root.size() + 1, tree->root + "/") != 0) continue;
    ECJIT_RETURN_IF_ERROR((*cl)->notify(f.substr(tree->root.size() + 1), !path_exists(f), 0, -1, now_ms()));
    ++notes;
  }
  log("scanned " + tree->root + ": " + std::to_string(notes) + " files recorded (" +
      std::to_string(skipped.symlinks.size() + skipped.special.size()) + " links and special files left out)");
  return notes;
}

}  // namespace ecjit::eccfs
