// FileProtector: protect / scrub / repair / restore of data files through redundancy files
// whose headers carry the algebraic signatures of every unit (Nešković 2018, ch. 7.3 and 2.4).
#include "ecjit/file_protection.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <thread>

#include "codes/gf.h"
#include "ecjit/jit.h"
#include "runtime/files/failpoint.h"
#include "runtime/files/file_io.h"
#include "runtime/files/loss_record.h"
#include "runtime/files/redundancy_header.h"
#include "runtime/files/redundancy_set.h"
#include "runtime/files/stripe_workers.h"
#include "runtime/files/unit_signature.h"

namespace ecjit::files {

const char *verdict_name(Verdict v) {
  switch (v) {
    case Verdict::kProtected: return "protected";
    case Verdict::kUpdated: return "updated";
    case Verdict::kUnchanged: return "unchanged";
    case Verdict::kClean: return "clean";
    case Verdict::kDamaged: return "damaged";
    case Verdict::kRepaired: return "repaired";
    case Verdict::kModified: return "modified";
    case Verdict::kDataLost: return "data-lost";
    case Verdict::kUnprotected: return "unprotected";
    case Verdict::kMissing: return "missing";
    case Verdict::kRenamed: return "renamed";
    case Verdict::kCorrupt: return "corrupt";
  }
  return "unknown";
}

namespace {

constexpr uint64_t kMaxUnit = uint64_t(256) << 20;

// A protect run's id (it names the run's temporaries, opened O_EXCL): random, from a generator
// seeded once per thread (a std::random_device per run cost ~4% of protecting small files).
uint64_t fresh_run_id() {
  thread_local std::mt19937_64 gen{(uint64_t(std::random_device{}()) << 32) ^ std::random_device{}()};
  return gen();
}

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// kUnsupported for codes without algebraic signatures over GF(2^l) symbols, which file
// protection stores: bit-matrix codes and rs-fft (Cantor-basis elements split over byte halves).
Status check_protectable(const CodeSpec &spec) {
  if (spec.bitmatrix())
    return Status(StatusCode::kUnsupported,
                  "'" + spec.to_string() + "' is a bit-matrix code: file protection stores algebraic signatures, "
                  "which need a code over GF(2^l) symbols (rs-vand, rs-cauchy, ...)");
  if (spec.family == CodeFamily::kRsFft)
    return Status(StatusCode::kUnsupported,
                  "'" + spec.to_string() + "' (reed-solomon-simd's code) has no algebraic signatures, which file "
                  "protection stores; use a code over GF(2^l) symbols (rs-vand, rs-cauchy, ...)");
  return Status::Ok();
}

// What pass 1 found for one unit.
enum class UnitState { kGood, kCorrupt, kUnreadable, kMissing, kInconsistent, kStale };
const char *unit_state_name(UnitState s) {
  switch (s) {
    case UnitState::kGood: return "good";
    case UnitState::kCorrupt: return "corrupt";
    case UnitState::kUnreadable: return "unreadable";
    case UnitState::kMissing: return "missing";
    case UnitState::kInconsistent: return "inconsistent";
    case UnitState::kStale: return "stale";
  }
  return "?";
}

// Reads data unit j of stripe s into buf, zero-padded to the stripe's unit bytes. Returns the
// bytes read, or an error for an unreadable range.
Result<size_t> read_data_unit(int fd, const RedundancyHeader &h, uint64_t s, unsigned j, uint8_t *buf,
                              const std::string &what) {
  const uint64_t want = h.data_bytes(s, j);
  size_t got = 0;
  if (want && fd >= 0) ECJIT_RETURN_IF_ERROR(read_at(fd, h.data_offset(s, j), size_t(want), buf, &got, what));
  memset(buf + got, 0, size_t(h.stripe_unit(s) - got));
  return got;
}

}  // namespace

class FileProtector::Impl {
 public:
  Impl(Jit &jit, ProtectOptions opt, std::shared_ptr<const Codec> codec)
      : jit_(jit), opt_(std::move(opt)), rate_(opt_.max_rate), default_(std::move(codec)) {
    codecs_[default_->spec().to_string()] = default_;
  }

  void on_progress(std::function<void(const Progress &)> callback) { progress_ = std::move(callback); }
  std::string redundancy_path(const std::string &path, unsigned r) const {
    return ecc_base(absolute_path(path)) + ".ecc" + std::to_string(r);
  }
  Result<std::vector<std::string>> expand(const std::vector<std::string> &paths, bool protected_missing,
                                          Skipped *skipped);
  Result<std::vector<FileReport>> prune(const std::vector<std::string> &paths, bool apply);
  // threads: workers for this file (0: the options').
  // A protect whose new redundancy is written (temporaries with their headers) but not yet in
  // place: commit() makes the temporaries durable (unless a batch's syncfs did), renames them
  // over the old files (in order: a crash between renames leaves older files that scrub
  // reads by their run id) and syncs the directory. Holds the file's run lock until then.
  struct PendingCommit {
    std::string base;              // the redundancy's shadow name
    unsigned m = 0;
    std::vector<std::string> tmp;  // temporary of redundancy file r
    std::vector<Fd> fds;           // their descriptors (closed for a batched commit)
    dev_t dev = 0;                 // the temporaries' file system
    uint64_t bytes = 0;            // written to them
    std::optional<RunLock> lock;
    bool clear_loss = false;       // --accept-loss: the loss record goes with the commit
    bool empty() const { return tmp.empty(); }
  };
  Result<FileReport> protect(const std::string &path, unsigned threads = 0, PendingCommit *pending = nullptr);
  // scrub (repair or not) and restore (in place, or into `to`).
  Result<FileReport> check(const std::string &path, bool repair, bool restore, const std::string &to,
                           unsigned threads = 0, bool overwrite = false);
  void run(const std::vector<std::string> &files, Command command,
           const std::function<void(size_t, const Result<FileReport> &)> &on_done);

 private:
  struct Check;

  // The shadow name of a data file, without the ".ecc<r>" suffix.
  std::string ecc_base(const std::string &abs) const {
    if (opt_.ecc_dir.empty()) return dir_name(abs) + "/.ecjit/" + base_name(abs);
    return absolute_path(opt_.ecc_dir) + abs;
  }
  std::string lock_path(const std::string &abs) const { return ecc_base(abs) + ".lock"; }
  // Present while a repair writes into the data file in place (judge, rebuild).
  std::string repair_marker(const std::string &abs) const { return ecc_base(abs) + ".repairing"; }

  Result<std::shared_ptr<const Codec>> codec_for(const std::string &spec) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = codecs_.find(spec);
    if (it != codecs_.end()) return it->second;
    auto parsed = CodeSpec::parse(spec);
    if (!parsed.ok()) return parsed.status();
    ECJIT_RETURN_IF_ERROR(check_protectable(*parsed));
    auto c = jit_.codec(*parsed);
    if (!c.ok()) return c.status();
    codecs_[spec] = *c;
    return *c;
  }

  Status commit(PendingCommit &p, bool synced, bool sync_directory);
  // Many small files' commits at once: one syncfs for all their temporaries, the renames,
  // one fsync per directory - instead of m + 1 fsyncs per file.
  struct Batched {
    size_t index;
    FileReport report;
    PendingCommit pending;
  };
  void commit_batch(std::vector<Batched> &batch, const std::function<void(size_t, const Result<FileReport> &)> &done);
  // pending: given, the commit is left to the caller (the file's lock moves into it).
  Result<FileReport> protect_locked(const std::string &abs, StripeWorkers &workers, PendingCommit *pending);
  unsigned threads_or_default(unsigned threads) const {
    if (!threads) threads = opt_.threads;
    return threads ? threads : std::max(1u, std::thread::hardware_concurrency());
  }
  // scrub / restore in three steps: every unit against its signature, the verdict, the rebuild.
  Status scan(Check &c);
  bool judge(Check &c);  // false: done (nothing to rebuild)
  Status rebuild(Check &c);

  // Whether `abs` is redundancy rather than data: inside a `.ecjit` directory or the ecc_dir.
  bool is_redundancy(const std::string &abs) const {
    if (abs.find("/.ecjit/") != std::string::npos || (abs.size() >= 7 && abs.compare(abs.size() - 7, 7, "/.ecjit") == 0))
      return true;
    if (opt_.ecc_dir.empty()) return false;
    const std::string root = absolute_path(opt_.ecc_dir);
    return abs == root || abs.compare(0, root.size() + 1, root + "/") == 0;
  }
  // The data files of directory `dir` that have redundancy (".ecc0") but no data file.
  std::vector<std::string> missing_in(const std::string &dir) const;
  // The temporaries of killed protect runs of `base` (the caller holds its lock). A redundancy
  // directory is listed once per object, not once per file: a tree of many files in one
  // directory would list it once per file (quadratic). A temporary listed then but renamed
  // since by a run that held the lock meanwhile is gone, and its unlink a harmless miss.
  std::vector<std::string> leftover_temps(const std::string &base);
  std::mutex temps_mu_;
  std::map<std::string, std::map<std::string, std::vector<std::string>>> temps_;  // dir -> base name -> temps

  Jit &jit_;
  ProtectOptions opt_;
  // From the last expand(): the walked regular files by (device, inode), and the files a
  // missing protected file was renamed to (by inode), for scrub's verdicts.
  std::map<std::pair<uint64_t, uint64_t>, std::string> walked_inodes_;
  std::map<uint64_t, std::vector<std::string>> walked_by_size_;
  std::map<std::string, std::string> renamed_from_;  // new path -> old path
  struct Rename {
    std::string to, how;  // the new path; "same inode" or "same data"
  };
  std::map<std::string, Rename> renamed_to_;  // old path -> its new name
  // A walked file without redundancy of its own whose data is that of the protected file of
  // header h (size, the first and the last data unit's signatures): a copy renamed. "" none.
  std::string same_data(const RedundancyHeader &h);
  // Whether the file at `path` has the signature h stores for data unit j of stripe s.
  bool unit_matches(const RedundancyHeader &h, const std::string &path, uint64_t s, unsigned j);
  RateLimit rate_;  // shared by every file of the object
  std::function<void(const Progress &)> progress_;
  std::shared_ptr<const Codec> default_;  // the options' code
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<const Codec>> codecs_;
};

namespace {
// What a restore leaves beside a data file: never walked as data.
constexpr const char *kPartialSuffix = ".ecjit-partial";  // the recoverable parts of a file with losses
constexpr const char *kTmpSuffix = ".ecjit-tmp";          // a restore's file before its rename
bool ends_with(const std::string &s, const char *suffix) {
  const size_t n = strlen(suffix);
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}
}  // namespace

std::vector<std::string> FileProtector::Impl::leftover_temps(const std::string &base) {
  const std::string dir = dir_name(base);
  std::lock_guard<std::mutex> lock(temps_mu_);
  auto listed = temps_.find(dir);
  if (listed == temps_.end()) {
    listed = temps_.emplace(dir, std::map<std::string, std::vector<std::string>>()).first;
    if (DIR *d = ::opendir(dir.c_str())) {
      while (struct dirent *e = ::readdir(d)) {
        const std::string name = e->d_name;
        const size_t tmp = name.find(".tmp-"), ecc = name.rfind(".ecc", tmp);
        if (tmp == std::string::npos || ecc == std::string::npos) continue;
        listed->second[name.substr(0, ecc)].push_back(dir + "/" + name);
      }
      ::closedir(d);
    }
  }
  auto mine = listed->second.find(base_name(base));
  if (mine == listed->second.end()) return {};
  std::vector<std::string> out = std::move(mine->second);
  listed->second.erase(mine);
  return out;
}

std::vector<std::string> FileProtector::Impl::missing_in(const std::string &dir) const {
  std::vector<std::string> out;
  const std::string shadow = dir_name(ecc_base(dir == "/" ? "/x" : dir + "/x"));
  DIR *d = ::opendir(shadow.c_str());
  if (!d) return out;
  const std::string suffix = ".ecc0";
  while (struct dirent *e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name.size() <= suffix.size() || name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0) continue;
    const std::string data = (dir == "/" ? "" : dir) + "/" + name.substr(0, name.size() - suffix.size());
    struct stat st;
    if (::lstat(data.c_str(), &st) != 0 && errno == ENOENT) out.push_back(data);
  }
  ::closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

Result<std::vector<std::string>> FileProtector::Impl::expand(const std::vector<std::string> &paths,
                                                             bool protected_missing, Skipped *skipped) {
  std::vector<std::string> out, missing;
  walked_inodes_.clear();
  walked_by_size_.clear();
  renamed_from_.clear();
  renamed_to_.clear();
  const std::string ecc_root = opt_.ecc_dir.empty() ? "" : absolute_path(opt_.ecc_dir);
  auto add_file = [&](const std::string &p, const struct stat &st) {
    out.push_back(p);
    walked_inodes_[{uint64_t(st.st_dev), uint64_t(st.st_ino)}] = p;
    if (st.st_size > 0) walked_by_size_[uint64_t(st.st_size)].push_back(p);
  };
  auto skip = [&](const std::string &p, const struct stat &st) {
    if (!skipped) return;
    (S_ISLNK(st.st_mode) ? skipped->symlinks : skipped->special).push_back(p);
  };
  std::function<Status(const std::string &)> walk = [&](const std::string &dir) -> Status {
    DIR *d = ::opendir(dir.c_str());
    if (!d) return Status(StatusCode::kIoError, dir + ": cannot list: " + std::strerror(errno));
    std::vector<std::string> names;
    while (struct dirent *e = ::readdir(d)) {
      std::string name = e->d_name;
      if (name == "." || name == ".." || name == ".ecjit") continue;
      names.push_back(name);
    }
    ::closedir(d);
    std::sort(names.begin(), names.end());
    for (const std::string &name : names) {
      const std::string p = dir == "/" ? "/" + name : dir + "/" + name;
      if (p == ecc_root) continue;
      struct stat st;
      if (::lstat(p.c_str(), &st) != 0) continue;
      if (S_ISDIR(st.st_mode)) {
        ECJIT_RETURN_IF_ERROR(walk(p));
      } else if (S_ISREG(st.st_mode)) {
        if (ends_with(name, kPartialSuffix)) {
          if (skipped) skipped->partial.push_back(p);
        } else if (!ends_with(name, kTmpSuffix)) {
          add_file(p, st);
        }
      } else {
        skip(p, st);
      }
    }
    if (protected_missing)
      for (const std::string &m : missing_in(dir)) missing.push_back(m);
    return Status::Ok();
  };
  for (const std::string &path : paths) {
    const std::string abs = absolute_path(path);
    if (is_redundancy(abs))
      return Status(StatusCode::kInvalidArgument,
                    path + ": is redundancy (a .ecjit directory or the --ecc-dir), not data; name the data files");
    struct stat st;
    if (::stat(abs.c_str(), &st) != 0) {
      // A protected file that is gone, named on the command line: scrub reports it.
      if (protected_missing && errno == ENOENT && ::access((ecc_base(abs) + ".ecc0").c_str(), F_OK) == 0) {
        missing.push_back(abs);
        continue;
      }
      return Status(StatusCode::kIoError, path + ": " + std::strerror(errno));
    }
    if (S_ISDIR(st.st_mode)) {
      ECJIT_RETURN_IF_ERROR(walk(abs));
    } else if (S_ISREG(st.st_mode)) {
      add_file(abs, st);
    } else {
      return Status(StatusCode::kIoError, path + ": not a regular file or directory");
    }
  }
  // A missing file whose protected inode is a walked file was renamed (or hard-linked) there;
  // else one whose data is a walked unprotected file's was copied there and deleted.
  for (const std::string &m : missing) {
    RedundancySet set = RedundancySet::load(ecc_base(m), base_name(m), default_->m(), false);
    if (const RedundancyHeader *h = set.newest()) {
      Rename r;
      auto it = walked_inodes_.find({h->data.dev, h->data.inode});
      // The inode alone is no evidence (a new file may get a deleted one's number): its first
      // unit must still be the protected one (an edit elsewhere after the rename keeps it).
      if (it != walked_inodes_.end() && it->second != m &&
          (h->stripes() == 0 || unit_matches(*h, it->second, 0, 0)))
        r = {it->second, "same inode"};
      else if (std::string to = same_data(*h); !to.empty())
        r = {to, "same data"};
      if (!r.to.empty()) {
        renamed_from_[r.to] = m;
        renamed_to_[m] = r;
      }
    }
    out.push_back(m);
  }
  return out;
}

bool FileProtector::Impl::unit_matches(const RedundancyHeader &h, const std::string &path, uint64_t s, unsigned j) {
  auto codec = codec_for(h.spec);
  auto fd = open_file(path, O_RDONLY);
  if (!codec.ok() || !fd.ok()) return false;
  std::vector<uint8_t> buf(size_t(h.stripe_unit(s)));
  auto got = read_data_unit(fd->get(), h, s, j, buf.data(), path);
  auto sig = got.ok() ? unit_signature(**codec, buf.data(), buf.size()) : Result<uint64_t>(uint64_t(0));
  return got.ok() && sig.ok() && *sig == h.data_sig(s, j);
}

std::string FileProtector::Impl::same_data(const RedundancyHeader &h) {
  auto sized = walked_by_size_.find(h.data.size);
  if (sized == walked_by_size_.end() || h.stripes() == 0) return "";
  // The first data unit and the last one with data: what a copy has and an edit rarely keeps.
  const uint64_t last = h.stripes() - 1;
  unsigned last_j = 0;
  for (unsigned j = 0; j < h.k; ++j)
    if (h.data_bytes(last, j)) last_j = j;
  unsigned tried = 0;
  for (const std::string &p : sized->second) {
    if (renamed_from_.count(p) || ::access((ecc_base(p) + ".ecc0").c_str(), F_OK) == 0) continue;
    if (++tried > 16) break;  // bounded work per missing file
    if (unit_matches(h, p, 0, 0) && unit_matches(h, p, last, last_j)) return p;
  }
  return "";
}

Result<std::vector<FileReport>> FileProtector::Impl::prune(const std::vector<std::string> &paths, bool apply) {
  auto files = expand(paths, true, nullptr);
  if (!files.ok()) return files.status();
  std::vector<FileReport> out;
  for (const std::string &f : *files) {
    struct stat st;
    if (::lstat(f.c_str(), &st) == 0) continue;  // the data file is there: not an orphan
    FileReport rep;
    rep.path = f;
    rep.verdict = Verdict::kMissing;
    const std::string base = ecc_base(f), dir = dir_name(base), prefix = base_name(base) + ".";
    std::vector<std::string> victims;
    if (DIR *d = ::opendir(dir.c_str())) {
      while (struct dirent *e = ::readdir(d)) {
        const std::string name = e->d_name;
        if (name.compare(0, prefix.size(), prefix) != 0) continue;
        const std::string rest = name.substr(prefix.size());
        if (rest.compare(0, 3, "ecc") == 0 || rest == "lock" || rest == "lost" || rest == "repairing") victims.push_back(dir + "/" + name);
      }
      ::closedir(d);
    }
    std::sort(victims.begin(), victims.end());
    for (const std::string &v : victims) {
      if (apply && ::unlink(v.c_str()) != 0)
        return Status(StatusCode::kIoError, v + ": cannot remove: " + std::strerror(errno));
      rep.notes.push_back((apply ? "removed " : "would remove ") + v);
    }
    if (apply) ECJIT_RETURN_IF_ERROR(sync_dir(dir));
    out.push_back(std::move(rep));
  }
  return out;
}

Result<FileReport> FileProtector::Impl::protect(const std::string &path, unsigned threads, PendingCommit *pending) {
  const std::string abs = absolute_path(path);
  ECJIT_RETURN_IF_ERROR(make_dirs(dir_name(ecc_base(abs))));
  auto lock = RunLock::acquire(lock_path(abs), abs);
  if (!lock.ok()) return lock.status();
  StripeWorkers workers(threads_or_default(threads), rate_, progress_);
  auto rep = protect_locked(abs, workers, pending);
  if (rep.ok() && pending && !pending->empty()) pending->lock = std::move(*lock);
  return rep;
}

Status FileProtector::Impl::commit(PendingCommit &p, bool synced, bool sync_directory) {
  Status st;
  for (unsigned r = 0; st.ok() && !synced && r < p.m; ++r) {
    if (r < p.fds.size()) {  // a batched commit holds no descriptors: it reopens each temporary
      st = sync_file(p.fds[r].get(), p.tmp[r]);
      continue;
    }
    auto fd = open_file(p.tmp[r], O_RDONLY);
    st = fd.ok() ? sync_file(fd->get(), p.tmp[r]) : fd.status();
  }
  if (st.ok()) failpoint("protect.temps-written");
  for (unsigned r = 0; st.ok() && r < p.m; ++r) {
    if (r == 1) failpoint("protect.between-renames");
    const std::string final_path = p.base + ".ecc" + std::to_string(r);
    if (::rename(p.tmp[r].c_str(), final_path.c_str()) != 0)
      st = Status(StatusCode::kIoError, final_path + ": rename: " + std::strerror(errno));
    else
      p.tmp[r].clear();
  }
  if (!st.ok()) {
    for (const std::string &t : p.tmp)
      if (!t.empty()) ::unlink(t.c_str());
    return st;
  }
  // A code with fewer parities than before leaves no stale redundancy files behind.
  for (unsigned r = p.m;; ++r) {
    const std::string extra = p.base + ".ecc" + std::to_string(r);
    if (::unlink(extra.c_str()) != 0) break;
  }
  if (sync_directory) ECJIT_RETURN_IF_ERROR(sync_dir(dir_name(p.base)));
  if (p.clear_loss) remove_loss_record(p.base);
  p.fds.clear();
  p.lock.reset();
  return Status::Ok();
}

void FileProtector::Impl::commit_batch(std::vector<Batched> &batch,
                                       const std::function<void(size_t, const Result<FileReport> &)> &done) {
  if (batch.empty()) return;
  // syncfs flushes the file system of the first temporary: every temporary of the batch when
  // they share it (checked by device), else each one's fsync.
  bool one_fs = true;
  for (const Batched &b : batch) one_fs = one_fs && b.pending.dev == batch[0].pending.dev;
  bool synced = false;
  if (one_fs) {
    auto fd = open_file(batch[0].pending.tmp[0], O_RDONLY);
    synced = fd.ok() && ::syncfs(fd->get()) == 0;
  }
  std::vector<std::string> dirs;
  std::vector<Status> status(batch.size());
  for (size_t i = 0; i < batch.size(); ++i) {
    status[i] = commit(batch[i].pending, synced, /*sync_directory=*/false);
    if (status[i].ok()) dirs.push_back(dir_name(batch[i].pending.base));
  }
  std::sort(dirs.begin(), dirs.end());
  dirs.erase(std::unique(dirs.begin(), dirs.end()), dirs.end());
  std::map<std::string, Status> dir_status;
  for (const std::string &d : dirs) dir_status[d] = sync_dir(d);
  for (size_t i = 0; i < batch.size(); ++i) {
    if (status[i].ok()) status[i] = dir_status[dir_name(batch[i].pending.base)];
    if (status[i].ok()) done(batch[i].index, batch[i].report);
    else done(batch[i].index, status[i]);
  }
  batch.clear();
}

Result<FileReport> FileProtector::Impl::protect_locked(const std::string &abs, StripeWorkers &workers,
                                                       PendingCommit *pending) {
  const auto t0 = std::chrono::steady_clock::now();
  FileReport rep;
  rep.path = abs;
  auto data = open_file(abs, O_RDONLY);
  if (!data.ok()) return data.status();
  auto id = identity_of(data->get(), abs);
  if (!id.ok()) return id.status();

  RedundancySet old_set = RedundancySet::load(ecc_base(abs), base_name(abs), default_->m(), false);
  // Unless told otherwise, a protected file keeps its code and unit.
  const RedundancyHeader *prev = old_set.newest();
  std::shared_ptr<const Codec> codec_ptr = default_;
  if (opt_.spec.empty() && prev) {
    auto c = codec_for(prev->spec);
    if (!c.ok()) return c.status().with_context(abs + ": redundancy spec '" + prev->spec + "'");
    codec_ptr = *c;
  }
  const Codec &codec = *codec_ptr;
  const unsigned k = codec.k(), m = codec.m(), n = k + m;
  const uint64_t unit = opt_.unit ? opt_.unit : prev ? prev->unit : ProtectOptions::kDefaultUnit;
  if (m > old_set.files.size()) old_set = RedundancySet::load(ecc_base(abs), base_name(abs), m, false);
  std::vector<EccFile> &old = old_set.files;
  old.resize(m);
  // Old redundancy of the same code and unit can lend its ECC units to unchanged stripes.
  const std::string spec = codec.spec().to_string();
  std::vector<bool> reusable(m, false);
  bool all_current = true;
  for (unsigned r = 0; r < m; ++r) {
    const auto &h = old[r].header;
    reusable[r] = h && h->spec == spec && h->unit == unit && h->k == k && h->m == m;
    all_current = all_current && reusable[r] && h->run_id == old[0].header->run_id &&
                  h->data.same_contents_claim(*id);
  }
  rep.file_size = id->size;
  rep.k = k;
  rep.m = m;
  RedundancyHeader hdr;
  hdr.spec = spec;
  hdr.k = k;
  hdr.m = m;
  hdr.unit = unit;
  hdr.data = *id;
  hdr.name = base_name(abs);
  rep.stripes = hdr.stripes();
  // A loss found by a check stays recorded until the user accepts it: new redundancy of the
  // damaged file would make the loss permanent and pass the file for intact.
  if (std::optional<std::vector<ByteRange>> lost = read_loss_record(ecc_base(abs)); lost && !opt_.accept_loss) {
    rep.verdict = Verdict::kDataLost;
    rep.lost = *lost;
    rep.notes.push_back(abs + ": " + describe_ranges(*lost) +
                        " were found lost by a check, so it is not re-encoded; `ecjit restore` rebuilds what can "
                        "be rebuilt, `ecjit protect --accept-loss` protects the file as it is now");
    return rep;
  }
  if (::access(repair_marker(abs).c_str(), F_OK) == 0) {  // half repaired: neither old nor edited
    rep.verdict = Verdict::kDamaged;
    rep.notes.push_back(abs + ": a repair of this file was interrupted; run `ecjit scrub --repair` to finish it "
                              "before protecting it again");
    return rep;
  }
  if (all_current && !opt_.force) {
    rep.verdict = Verdict::kUnchanged;
    rep.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return rep;
  }
  hdr.run_id = fresh_run_id();
  hdr.created_ns = now_ns();
  hdr.sigs.assign(rep.stripes * (k + 1), 0);
  std::vector<RedundancyHeader> hdrs(m, hdr);
  for (unsigned r = 0; r < m; ++r) hdrs[r].ecc_index = r;

  // Temporaries beside the final files; leftovers of killed runs are removed first.
  const std::string base = ecc_base(abs);
  char suffix[32];
  snprintf(suffix, sizeof suffix, ".tmp-%016llx", static_cast<unsigned long long>(hdr.run_id));
  std::vector<std::string> tmp_path(m);
  std::vector<Fd> tmp(m);
  auto remove_temps = [&] {
    for (unsigned r = 0; r < m; ++r)
      if (!tmp_path[r].empty()) ::unlink(tmp_path[r].c_str());
  };
  for (const std::string &left : leftover_temps(base)) ::unlink(left.c_str());
  const uint64_t file_bytes = hdrs[0].file_bytes();
  for (unsigned r = 0; r < m; ++r) {
    tmp_path[r] = base + ".ecc" + std::to_string(r) + suffix;
    auto fd = open_file(tmp_path[r], O_RDWR | O_CREAT | O_EXCL, 0644);
    if (!fd.ok()) {
      remove_temps();
      return fd.status();
    }
    tmp[r] = std::move(*fd);
    if (::ftruncate(tmp[r].get(), off_t(file_bytes)) != 0) {
      Status st(StatusCode::kIoError, tmp_path[r] + ": cannot size: " + std::strerror(errno));
      remove_temps();
      return st;
    }
  }

  // Size and mtime as protected: the data must be as protected too. A unit that differs from
  // its stored signature is corruption, not an edit (an edit moves the mtime): its stripe is
  // never re-encoded. With every old redundancy file current (--force) the stripe keeps its
  // protected redundancy and the others are re-encoded; otherwise nothing is written.
  const bool check_sigs = prev && prev->spec == spec && prev->unit == unit && prev->k == k && prev->m == m &&
                          prev->data.same_contents_claim(*id);
  std::vector<std::vector<unsigned>> corrupt(rep.stripes);
  std::atomic<uint64_t> encoded{0}, bytes_read{0}, bytes_written{0};
  failpoint("protect.reading");
  workers.begin(abs, rep.stripes * k);
  Status st = workers.run(rep.stripes, n, unit, [&](uint64_t s, UnitBuffers &b) -> Status {
    const uint64_t su = hdr.stripe_unit(s);
    for (unsigned j = 0; j < k; ++j) {
      auto got = read_data_unit(data->get(), hdr, s, j, b.unit[j], abs);
      if (!got.ok()) return got.status();
      auto sig = unit_signature(codec, b.unit[j], su);
      if (!sig.ok()) return sig.status();
      for (unsigned r = 0; r < m; ++r) hdrs[r].data_sig(s, j) = *sig;
      workers.moved(&bytes_read, *got, 1);
    }
    if (check_sigs && s < prev->stripes()) {
      for (unsigned j = 0; j < k; ++j)
        if (hdrs[0].data_sig(s, j) != prev->data_sig(s, j)) corrupt[s].push_back(j);
      if (!corrupt[s].empty()) {
        if (!all_current) return Status::Ok();  // nothing is written (after the pass)
        for (unsigned r = 0; r < m; ++r) {  // the stripe's protected redundancy, as it was
          const auto &h = old[r].header;
          for (unsigned j = 0; j < k; ++j) hdrs[r].data_sig(s, j) = h->data_sig(s, j);
          hdrs[r].ecc_sig(s) = h->ecc_sig(s);
          size_t got = 0;
          ECJIT_RETURN_IF_ERROR(read_at(old[r].fd.get(), h->unit_offset(s), size_t(su), b.unit[k + r], &got, old[r].path));
          if (got) ECJIT_RETURN_IF_ERROR(write_at(tmp[r].get(), hdrs[r].unit_offset(s), got, b.unit[k + r], tmp_path[r]));
          workers.moved(&bytes_written, 2 * got, 0);
        }
        return Status::Ok();
      }
    }
    std::vector<unsigned> todo;
    for (unsigned r = 0; r < m; ++r) {
      const auto &h = old[r].header;
      bool same = reusable[r] && s < h->stripes() && h->stripe_unit(s) == su;
      for (unsigned j = 0; same && j < k; ++j) same = h->data_sig(s, j) == hdrs[r].data_sig(s, j);
      if (!same) {
        todo.push_back(r);
        continue;
      }
      // Unchanged stripe: this file's old ECC unit serves (copied, checked by its signature).
      size_t got = 0;
      ECJIT_RETURN_IF_ERROR(read_at(old[r].fd.get(), h->unit_offset(s), size_t(su), b.unit[k + r], &got, old[r].path));
      auto sig = got == su ? unit_signature(codec, b.unit[k + r], su) : Result<uint64_t>(uint64_t(0));
      if (!sig.ok()) return sig.status();
      if (got != su || *sig != h->ecc_sig(s)) {
        todo.push_back(r);  // the old unit is damaged: encode afresh
        continue;
      }
      hdrs[r].ecc_sig(s) = *sig;
      ECJIT_RETURN_IF_ERROR(write_at(tmp[r].get(), hdrs[r].unit_offset(s), size_t(su), b.unit[k + r], tmp_path[r]));
      workers.moved(&bytes_written, 2 * su, 0);
    }
    if (todo.empty()) return Status::Ok();
    const uint8_t *dp[256];
    uint8_t *pp[256];
    std::vector<const uint8_t *> dv;
    std::vector<uint8_t *> pv;
    const uint8_t **d = k <= 256 ? dp : (dv.resize(k), dv.data());
    uint8_t **p = m <= 256 ? pp : (pv.resize(m), pv.data());
    for (unsigned j = 0; j < k; ++j) d[j] = b.unit[j];
    for (unsigned r = 0; r < m; ++r) p[r] = b.unit[k + r];
    ECJIT_RETURN_IF_ERROR(codec.encode(Span<const uint8_t *const>(d, k), Span<uint8_t *const>(p, m), su));
    encoded.fetch_add(1);
    for (unsigned r : todo) {
      auto sig = unit_signature(codec, b.unit[k + r], su);
      if (!sig.ok()) return sig.status();
      hdrs[r].ecc_sig(s) = *sig;
      // The temporary is sparse: an all-zero unit (a hole in sparse data) need not be written.
      if (*sig == 0 && all_zero(b.unit[k + r], su)) continue;
      ECJIT_RETURN_IF_ERROR(write_at(tmp[r].get(), hdrs[r].unit_offset(s), size_t(su), b.unit[k + r], tmp_path[r]));
      workers.moved(&bytes_written, su, 0);
    }
    return Status::Ok();
  });
  workers.finish();
  if (st.ok()) {
    // The data must not have changed while it was read, or the signatures mix two versions.
    auto after = identity_of(data->get(), abs);
    if (!after.ok()) st = after.status();
    else if (!after->same_contents_claim(*id))
      st = Status(StatusCode::kIoError, abs + ": changed while it was being protected; " +
                                            std::string(prev ? "the old redundancy is kept" : "no redundancy written") +
                                            ", run again");
  }
  // Shorter than protected, and every stripe still whole in both layouts as protected (at
  // least one: a file of one stripe that got shorter is an edit, its units move): that is a
  // cut, not an edit (scrub says the same), so it is not folded into new redundancy.
  if (st.ok() && !opt_.accept_loss && prev && prev->spec == spec && prev->unit == unit && prev->k == k &&
      prev->m == m && id->size < prev->data.size && rep.stripes >= 2) {
    bool as_before = true;
    for (uint64_t s = 0; s + 1 < rep.stripes && as_before; ++s)
      for (unsigned j = 0; j < k && as_before; ++j) as_before = hdrs[0].data_sig(s, j) == prev->data_sig(s, j);
    if (as_before) {
      remove_temps();
      rep.verdict = Verdict::kDamaged;
      rep.notes.push_back(abs + ": " + std::to_string(id->size) + " bytes, protected with " +
                          std::to_string(prev->data.size) + ", and every whole stripe as protected: it looks cut "
                          "short, so it is not re-encoded; `ecjit scrub --repair` restores it, `ecjit protect "
                          "--accept-loss` protects it as it is now");
      rep.bytes_read = bytes_read.load();
      rep.seconds = seconds_since(t0);
      return rep;
    }
  }
  uint64_t corrupt_stripes = 0;
  for (uint64_t s = 0; s < rep.stripes; ++s)
    if (!corrupt[s].empty()) {
      ++corrupt_stripes;
      for (unsigned j : corrupt[s]) rep.damage.push_back({s, j, "corrupt", false});
    }
  if (st.ok() && corrupt_stripes) {
    rep.verdict = Verdict::kCorrupt;
    rep.notes.push_back(abs + ": size and mtime as protected, but " + std::to_string(rep.damage.size()) +
                        " data units differ from their signatures: silent corruption, not an edit; "
                        "`ecjit scrub --repair` rebuilds them");
    if (!all_current) {  // some redundancy file is missing or older: the corrupt stripes have none to keep
      remove_temps();
      rep.notes.push_back("nothing re-encoded (run the repair first)");
      rep.bytes_read = bytes_read.load();
      rep.seconds = seconds_since(t0);
      return rep;
    }
  }
  for (unsigned r = 0; st.ok() && r < m; ++r) {
    const std::vector<uint8_t> bytes = hdrs[r].serialize();
    st = write_at(tmp[r].get(), 0, bytes.size(), bytes.data(), tmp_path[r]);
  }
  if (!st.ok()) {
    remove_temps();
    return st;
  }
  PendingCommit own;
  PendingCommit &p = pending ? *pending : own;
  p.base = base;
  p.m = m;
  p.tmp = std::move(tmp_path);
  p.clear_loss = opt_.accept_loss;
  p.bytes = uint64_t(m) * file_bytes;
  struct stat tmp_stat;
  if (::fstat(tmp[0].get(), &tmp_stat) == 0) p.dev = tmp_stat.st_dev;
  // A batched commit syncs the whole file system (or reopens each temporary): its files hold
  // no descriptors while they wait.
  if (!pending) p.fds = std::move(tmp);
  if (!pending) ECJIT_RETURN_IF_ERROR(commit(p, /*synced=*/false, /*sync_directory=*/true));
  bool any_reused = false;
  for (unsigned r = 0; r < m; ++r) any_reused = any_reused || reusable[r];
  rep.stripes_encoded = encoded.load();
  if (corrupt_stripes) {
    rep.notes.push_back(std::to_string(rep.stripes - corrupt_stripes) + " stripes check (" +
                        std::to_string(rep.stripes_encoded) + " re-encoded, the rest kept); " +
                        std::to_string(corrupt_stripes) + " with corrupt units kept their protected redundancy");
  } else {
    rep.verdict = any_reused ? Verdict::kUpdated : Verdict::kProtected;
  }
  rep.bytes_read = bytes_read.load();
  rep.bytes_written = bytes_written.load() + uint64_t(m) * hdrs[0].header_bytes();
  rep.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return rep;
}

// The state of one scrub / restore of one data file.
struct FileProtector::Impl::Check {
  explicit Check(StripeWorkers &w) : workers(w) {}
  StripeWorkers &workers;
  std::string abs, to;
  bool repair = false, restore = false;
  bool write_ecc = false;  // scrub --repair: redundancy files are repaired too
  RedundancySet set;
  const RedundancyHeader *auth = nullptr;  // the newest run's header
  std::shared_ptr<const Codec> codec;
  std::optional<codes::Field> field;
  unsigned k = 0, m = 0, n = 0;
  uint64_t unit = 0;
  Fd data;
  bool exists = false;
  DataIdentity cur;
  std::vector<std::vector<UnitState>> states;  // per stripe, per unit (data then ECC)
  std::atomic<uint64_t> bytes_read{0}, bytes_written{0};
  uint64_t bad_data = 0, lost_stripes = 0;
  bool ecc_damage = false, size_changed = false;
  bool identity_off = false;  // an interrupted repair left the file without its protected mtime
  std::vector<bool> regenerate;  // redundancy files written afresh by the rebuild
  bool any_regen = false;
  FileReport rep;
};

Result<FileReport> FileProtector::Impl::check(const std::string &path, bool repair, bool restore,
                                               const std::string &to, unsigned threads, bool overwrite) {
  const auto t0 = std::chrono::steady_clock::now();
  StripeWorkers workers(threads_or_default(threads), rate_, progress_);
  Check c(workers);
  c.abs = absolute_path(path);
  if (!to.empty()) {  // a directory means DIR/<name>; an existing file is replaced only when asked
    std::string t = absolute_path(to);
    struct stat st;
    if (::stat(t.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) t += "/" + base_name(c.abs);
    if (t == c.abs)
      return Status(StatusCode::kInvalidArgument, to + ": is the data file itself; restore it in place (no --to)");
    if (::lstat(t.c_str(), &st) == 0 && !overwrite)
      return Status(StatusCode::kInvalidArgument, t + ": exists; restore --to replaces a file only with --overwrite");
    c.to = t;
  }
  c.repair = repair;
  c.restore = restore;
  c.write_ecc = repair && !restore;
  c.rep.path = c.abs;
  auto finish = [&]() -> Result<FileReport> {
    c.rep.bytes_read = c.bytes_read.load();
    c.rep.bytes_written = c.bytes_written.load();
    c.rep.seconds = seconds_since(t0);
    return std::move(c.rep);
  };
  // Never protected (protect leaves the lock file; a copied set has its file 0): nothing to
  // lock, nothing created.
  if (::access(lock_path(c.abs).c_str(), F_OK) != 0 && ::access((ecc_base(c.abs) + ".ecc0").c_str(), F_OK) != 0) {
    c.rep.verdict = Verdict::kUnprotected;
    c.rep.notes.push_back("no redundancy files " + ecc_base(c.abs) + ".ecc*");
    auto from = renamed_from_.find(c.abs);
    if (from != renamed_from_.end()) c.rep.notes.push_back(c.abs + ": renamed from " + from->second);
    return finish();
  }
  auto lock = RunLock::acquire(lock_path(c.abs), c.abs);
  if (!lock.ok()) {
    if (lock.status().message().find("busy") != std::string::npos) return lock.status();
    c.rep.verdict = Verdict::kUnprotected;
    c.rep.notes.push_back(lock.status().message());
    return finish();
  }
  // A repair that cannot write says so before it reads anything (not "unprotected").
  if (repair && (c.to.empty() || c.write_ecc))
    for (const std::string &p : {c.abs, dir_name(ecc_base(c.abs))})
      if (::access(p.c_str(), W_OK) != 0 && errno == EROFS)
        return Status(StatusCode::kIoError, p + ": read-only file system; nothing repaired (a scrub without "
                                                "--repair checks it as it is)");
  c.set = RedundancySet::load(ecc_base(c.abs), base_name(c.abs), default_->m(), c.write_ecc);
  c.auth = c.set.newest();
  if (!c.auth) {
    c.rep.verdict = Verdict::kUnprotected;
    for (const EccFile &e : c.set.files) c.rep.notes.push_back(e.problem);
    return finish();
  }
  auto codec = codec_for(c.auth->spec);
  if (!codec.ok()) return codec.status().with_context(c.abs + ": redundancy spec '" + c.auth->spec + "'");
  c.codec = *codec;
  c.k = c.auth->k;
  c.m = c.auth->m;
  c.n = c.k + c.m;
  c.unit = c.auth->unit;
  if (c.codec->k() != c.k || c.codec->m() != c.m)
    return Status(StatusCode::kInternal, "spec and header disagree on k, m");
  auto field = codes::Field::make(c.codec->spec().gf, c.codec->spec().poly);
  if (!field.ok()) return field.status();
  c.field = *field;
  c.set.align_to(*c.auth);
  for (const EccFile &e : c.set.files)
    if (!e.header) c.rep.notes.push_back(e.problem);
  c.rep.file_size = c.auth->data.size;
  c.rep.k = c.k;
  c.rep.m = c.m;
  c.rep.stripes = c.auth->stripes();

  auto fd = open_file(c.abs, (repair || restore) && to.empty() ? O_RDWR : O_RDONLY);
  if (fd.ok()) {
    c.data = std::move(*fd);
    c.exists = true;
    auto id = identity_of(c.data.get(), c.abs);
    if (!id.ok()) return id.status();
    c.cur = *id;
  } else if (fd.status().message().find("does not exist") == std::string::npos) {
    return fd.status();
  } else if (!restore) {
    // Deleted (or renamed) after protection: reported, never brought back by a scrub.
    auto renamed = renamed_to_.find(c.abs);
    if (renamed != renamed_to_.end()) {
      c.rep.verdict = Verdict::kRenamed;
      c.rep.renamed_to = renamed->second.to;
      c.rep.notes.push_back(c.abs + ": renamed to " + renamed->second.to + " (" + renamed->second.how +
                            "); `ecjit protect` it there, `ecjit prune` drops this redundancy");
    } else {
      c.rep.verdict = Verdict::kMissing;
      c.rep.notes.push_back(c.abs + ": deleted after it was protected; `ecjit restore` rebuilds what it can, "
                            "`ecjit prune` drops its redundancy");
    }
    return finish();
  } else {
    c.rep.notes.push_back(c.abs + ": data file missing");
  }
  ECJIT_RETURN_IF_ERROR(scan(c));
  if (judge(c)) ECJIT_RETURN_IF_ERROR(rebuild(c));
  // The loss stays recorded until a check finds the file whole (protect refuses it till then).
  const std::string base = ecc_base(c.abs);
  if (c.rep.verdict == Verdict::kDataLost) {
    if (Status st = write_loss_record(base, c.rep.lost); !st.ok()) c.rep.notes.push_back(st.message());
  } else if (c.rep.verdict == Verdict::kClean || c.rep.verdict == Verdict::kRepaired ||
             c.rep.verdict == Verdict::kDamaged) {
    remove_loss_record(base);
  }
  if (c.rep.verdict == Verdict::kClean || c.rep.verdict == Verdict::kRepaired) ::unlink(repair_marker(c.abs).c_str());
  return finish();
}

// Pass 1: every data and ECC unit against its stored signature; every ECC signature against
// eq. 2.37.
Status FileProtector::Impl::scan(Check &c) {
  const RedundancyHeader &auth = *c.auth;
  const Codec &codec = *c.codec;
  const unsigned k = c.k, m = c.m;
  const uint64_t unit = c.unit;
  c.states.assign(c.rep.stripes, {});
  c.workers.begin(c.abs, c.rep.stripes * k);
  Status st = c.workers.run(c.rep.stripes, c.n, unit, [&](uint64_t s, UnitBuffers &b) -> Status {
    std::vector<UnitState> u(c.n, UnitState::kGood);
    const uint64_t su = auth.stripe_unit(s);
    for (unsigned j = 0; j < k; ++j) {
      const uint64_t want = auth.data_bytes(s, j);
      size_t got = 0;
      if (want && c.exists && !read_at(c.data.get(), auth.data_offset(s, j), size_t(want), b.unit[j], &got, c.abs).ok()) {
        u[j] = UnitState::kUnreadable;
        continue;
      }
      c.workers.moved(&c.bytes_read, got, 1);
      // Bytes past the end read as zeros: a unit cut short whose signature still checks had
      // only zeros there (a hole of a sparse file), and the protected size brings them back.
      memset(b.unit[j] + got, 0, size_t(su - got));
      auto sig = unit_signature(codec, b.unit[j], su);
      if (!sig.ok()) return sig.status();
      if (*sig != auth.data_sig(s, j)) u[j] = got < want ? UnitState::kMissing : UnitState::kCorrupt;
    }
    for (unsigned r = 0; r < m; ++r) {
      const EccFile &e = c.set.files[r];
      if (!e.header) {
        u[k + r] = UnitState::kMissing;
        continue;
      }
      if (!c.set.serves(r, s, auth)) {
        u[k + r] = UnitState::kStale;
        continue;
      }
      const RedundancyHeader &h = *e.header;
      if (ecc_signature_from_data(codec, *c.field, h, s, r) != h.ecc_sig(s)) {
        u[k + r] = UnitState::kInconsistent;  // eq. 2.37 fails: a torn update (write hole)
        continue;
      }
      size_t got = 0;
      if (!read_at(e.fd.get(), h.unit_offset(s), size_t(su), b.unit[k + r], &got, e.path).ok()) {
        u[k + r] = UnitState::kUnreadable;
        continue;
      }
      c.workers.moved(&c.bytes_read, got, 0);
      if (got < su) {
        u[k + r] = UnitState::kMissing;
        continue;
      }
      auto sig = unit_signature(codec, b.unit[k + r], su);
      if (!sig.ok()) return sig.status();
      if (*sig != h.ecc_sig(s)) u[k + r] = UnitState::kCorrupt;
    }
    c.states[s] = std::move(u);
    return Status::Ok();
  });
  c.workers.finish();
  return st;
}

// The verdict of pass 1: damage list, modified or damaged, what a rebuild must write.
bool FileProtector::Impl::judge(Check &c) {
  const RedundancyHeader &auth = *c.auth;
  const unsigned k = c.k, m = c.m;
  for (uint64_t s = 0; s < c.rep.stripes; ++s) {
    unsigned bad = 0;
    for (unsigned i = 0; i < c.n; ++i)
      if (c.states[s][i] != UnitState::kGood) {
        ++bad;
        if (i < k) ++c.bad_data;
        else c.ecc_damage = true;
      }
    if (bad > m) ++c.lost_stripes;
  }
  c.size_changed = c.exists && c.cur.size != auth.data.size;
  // Units differ and the mtime moved: somebody wrote the file after protection. A shorter file
  // whose remaining units all check is a truncation (damage), not a modification.
  // (An in-place repair that did not finish moved the mtime itself: that is not an edit.)
  const bool interrupted_repair = ::access(repair_marker(c.abs).c_str(), F_OK) == 0;
  bool modified = c.exists && !c.cur.same_contents_claim(auth.data) && c.bad_data > 0 && !interrupted_repair;
  c.identity_off = interrupted_repair && c.exists && !c.cur.same_contents_claim(auth.data);
  if (modified && c.cur.size < auth.data.size) {
    bool only_tail = true;
    for (uint64_t s = 0; s < c.rep.stripes && only_tail; ++s)
      for (unsigned j = 0; j < k; ++j)
        if (c.states[s][j] == UnitState::kCorrupt) only_tail = false;
    modified = !only_tail;
  }
  if (c.exists && c.cur.size > auth.data.size) modified = true;  // data appended after protection
  for (uint64_t s = 0; s < c.rep.stripes; ++s)
    for (unsigned i = 0; i < c.n; ++i)
      if (c.states[s][i] != UnitState::kGood && !(c.restore && i >= k && c.states[s][i] == UnitState::kStale))
        c.rep.damage.push_back({s, i, unit_state_name(c.states[s][i]), false});
  if (c.size_changed && c.cur.size < auth.data.size)
    c.rep.notes.push_back(c.abs + ": " + std::to_string(c.cur.size) + " bytes, protected with " +
                          std::to_string(auth.data.size));
  if (!modified || c.restore) {  // the byte ranges of the data no stripe can rebuild
    std::vector<ByteRange> lost;
    for (uint64_t s = 0; s < c.rep.stripes; ++s) {
      unsigned bad = 0;
      for (unsigned i = 0; i < c.n; ++i) bad += c.states[s][i] != UnitState::kGood;
      if (bad <= m) continue;
      for (unsigned j = 0; j < k; ++j)
        if (c.states[s][j] != UnitState::kGood) lost.push_back({auth.data_offset(s, j), auth.data_bytes(s, j)});
    }
    c.rep.lost = merge_ranges(std::move(lost));
  }
  if (modified && !c.restore) {
    c.rep.verdict = Verdict::kModified;
    std::string what = std::to_string(c.bad_data) + " data units differ";
    if (c.size_changed)
      what += ", " + std::to_string(auth.data.size) + " -> " + std::to_string(c.cur.size) + " bytes";
    c.rep.notes.push_back(c.abs + ": changed after it was protected (" + what +
                          "); run `ecjit protect` to update its redundancy or `ecjit restore` to roll it back");
    return false;
  }
  // Redundancy files to write afresh: missing, torn, foreign, of an older run, or with a stripe
  // that fails eq. 2.37 (their stored signature is wrong).
  c.regenerate.assign(m, false);
  if (c.write_ecc)
    for (unsigned r = 0; r < m; ++r) {
      bool inconsistent = false;
      for (uint64_t s = 0; s < c.rep.stripes && !inconsistent; ++s)
        inconsistent = c.states[s][k + r] == UnitState::kInconsistent;
      const auto &h = c.set.files[r].header;
      c.regenerate[r] = !h || h->run_id != auth.run_id || inconsistent;
      c.any_regen = c.any_regen || c.regenerate[r];
    }
  const bool damaged = c.bad_data > 0 || c.ecc_damage || c.size_changed || !c.exists || c.identity_off;
  if (!c.repair && !c.restore) {
    bool missing_file = false;
    for (const EccFile &e : c.set.files) missing_file = missing_file || !e.header;
    c.rep.verdict = c.lost_stripes                       ? Verdict::kDataLost
                    : damaged || missing_file            ? Verdict::kDamaged
                                                         : Verdict::kClean;
    return false;
  }
  c.rep.verdict = damaged || c.any_regen ? Verdict::kRepaired : Verdict::kClean;
  return true;
}

// Pass 2: rebuilds bad units from good ones and writes them: in place, into an image (restore
// --to; the recoverable parts of a file with lost stripes), and into regenerated redundancy
// files (every stripe).
Status FileProtector::Impl::rebuild(Check &c) {
  const RedundancyHeader &auth = *c.auth;
  const Codec &codec = *c.codec;
  const unsigned k = c.k, m = c.m, n = c.n;
  const uint64_t unit = c.unit;
  const std::string &abs = c.abs;
  // Some stripes cannot be rebuilt (judge): nothing may pass for the protected file. In place
  // the file keeps its size and mtime and only units inside it are written; the whole
  // recoverable image goes to a .ecjit-partial file beside it (or beside --to's file) when
  // the file is gone or shorter than protected.
  const bool loss = c.lost_stripes > 0;
  const bool write_out = !c.to.empty();
  std::string image_path;
  // (A partial image only when some byte of it can be had.)
  const bool some_left = total_bytes(c.rep.lost) < auth.data.size;
  if (write_out) image_path = !loss ? c.to : some_left ? c.to + ".ecjit-partial" : "";
  else if (loss && some_left && (!c.exists || c.cur.size < auth.data.size)) image_path = abs + ".ecjit-partial";
  const bool image = !image_path.empty();
  const bool in_place = !write_out && (c.exists || !loss);
  const uint64_t old_size = c.exists ? c.cur.size : 0;  // bytes the data file has (before any resize)
  Fd out;
  const std::string out_tmp = image ? image_path + ".ecjit-tmp" : "";
  std::vector<RedundancyHeader> fresh(m);
  std::vector<std::string> fresh_tmp(m);
  std::vector<Fd> fresh_fd(m);
  bool created = false;
  // Every failure leaves nothing behind: the image's and regenerated files' temporaries, and a
  // data file this call created.
  bool armed = true;
  struct Cleanup {
    std::function<void()> f;
    ~Cleanup() { f(); }
  } cleanup{[&] {
    if (!armed) return;
    if (image) ::unlink(out_tmp.c_str());
    for (unsigned r = 0; r < m; ++r)
      if (!fresh_tmp[r].empty()) ::unlink(fresh_tmp[r].c_str());
    if (created) ::unlink(abs.c_str());
  }};
  if (image) {
    auto fd = open_file(out_tmp, O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (!fd.ok()) return fd.status();
    out = std::move(*fd);
    if (::ftruncate(out.get(), off_t(auth.data.size)) != 0)  // sparse: holes stay holes
      return Status(StatusCode::kIoError, out_tmp + ": cannot size: " + std::strerror(errno));
  }
  if (in_place && !c.exists) {
    auto fd = open_file(abs, O_RDWR | O_CREAT | O_EXCL, 0644);
    if (!fd.ok()) return fd.status();
    c.data = std::move(*fd);
    created = true;
  }
  // In place without loss, a truncated, missing or grown file gets its protected size first.
  if (in_place && !loss && (!c.exists || c.cur.size != auth.data.size) &&
      ::ftruncate(c.data.get(), off_t(auth.data.size)) != 0)
    return Status(StatusCode::kIoError, abs + ": cannot resize: " + std::strerror(errno));
  for (unsigned r = 0; r < m; ++r) {
    if (!c.regenerate[r]) continue;
    fresh[r] = auth;
    fresh[r].ecc_index = r;
    fresh_tmp[r] = c.set.files[r].path + ".tmp-repair";
    auto fd = open_file(fresh_tmp[r], O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (!fd.ok()) return fd.status();
    fresh_fd[r] = std::move(*fd);
    if (::ftruncate(fresh_fd[r].get(), off_t(fresh[r].file_bytes())) != 0)
      return Status(StatusCode::kIoError, fresh_tmp[r] + ": cannot size: " + std::strerror(errno));
  }
  // A repair in place moves the file's mtime before it sets it back: a marker says so, so that
  // a run after a crash in between still sees damage, not an edit.
  const std::string marker = repair_marker(abs);
  const bool writes_data =
      in_place && (c.bad_data > 0 || !c.exists || c.cur.size != auth.data.size || c.identity_off);
  if (writes_data) {
    auto fd = open_file(marker, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (!fd.ok()) return fd.status();
    ECJIT_RETURN_IF_ERROR(sync_dir(dir_name(marker)));
  }
  std::atomic<bool> data_written{false};
  // Writes data unit j of stripe s from buf: into the image (all-zero units stay holes), and
  // in place when it was rebuilt (clipped to the file's size when stripes are lost; all-zero
  // units past the old end of the file stay holes).
  auto write_data = [&](uint64_t s, unsigned j, const uint8_t *buf, bool rebuilt) -> Status {
    const uint64_t len = auth.data_bytes(s, j), off = auth.data_offset(s, j);
    if (!len) return Status::Ok();
    const bool zero = all_zero(buf, size_t(len));
    if (image && !zero) {
      ECJIT_RETURN_IF_ERROR(write_at(out.get(), off, size_t(len), buf, out_tmp));
      c.workers.moved(&c.bytes_written, len, 0);
    }
    if (!in_place || !rebuilt) return Status::Ok();
    uint64_t w = len;
    if (loss) w = off >= old_size ? 0 : std::min(len, old_size - off);
    if (!w || (zero && off >= old_size)) return Status::Ok();
    ECJIT_RETURN_IF_ERROR(write_at(c.data.get(), off, size_t(w), buf, abs));
    data_written.store(true);
    c.workers.moved(&c.bytes_written, w, 0);
    return Status::Ok();
  };
  std::vector<uint8_t> lost(c.rep.stripes, 0);
  c.workers.begin(abs, c.rep.stripes * k);
  Status st = c.workers.run(c.rep.stripes, n, unit, [&](uint64_t s, UnitBuffers &b) -> Status {
    const std::vector<UnitState> &u = c.states[s];
    const uint64_t su = auth.stripe_unit(s);
    std::vector<bool> present(n);
    unsigned good = 0;
    bool need = false;
    for (unsigned i = 0; i < n; ++i) {
      present[i] = u[i] == UnitState::kGood;
      good += present[i];
      if (!present[i] && (i < k || c.write_ecc)) need = true;
    }
    if (!need && !image && !c.any_regen) return Status::Ok();
    // Re-read the good units (pass 1's buffers are gone) and check them again: only units
    // whose signatures check go into a rebuild (or an image).
    for (unsigned i = 0; i < n; ++i) {
      if (!present[i] || (good < k && i >= k)) continue;
      uint64_t want_sig;
      if (i < k) {
        auto got = read_data_unit(c.data.get(), auth, s, i, b.unit[i], abs);
        if (!got.ok()) return got.status();
        c.workers.moved(&c.bytes_read, *got, 1);
        want_sig = auth.data_sig(s, i);
      } else {
        const EccFile &e = c.set.files[i - k];
        size_t got = 0;
        ECJIT_RETURN_IF_ERROR(read_at(e.fd.get(), e.header->unit_offset(s), size_t(su), b.unit[i], &got, e.path));
        c.workers.moved(&c.bytes_read, got, 0);
        want_sig = e.header->ecc_sig(s);
      }
      auto sig = unit_signature(codec, b.unit[i], su);
      if (!sig.ok()) return sig.status();
      if (*sig != want_sig)
        return Status(StatusCode::kIoError, abs + ": stripe " + std::to_string(s) + " unit " + std::to_string(i) +
                                                " changed during the repair; nothing more written, run again");
    }
    if (good < k) {  // lost: its good data units go to the image, nothing is rebuilt
      lost[s] = 1;
      for (unsigned j = 0; j < k && image; ++j)
        if (present[j]) ECJIT_RETURN_IF_ERROR(write_data(s, j, b.unit[j], false));
      return Status::Ok();
    }
    std::vector<uint8_t *> ptr(b.unit.begin(), b.unit.end());
    if (good < n) ECJIT_RETURN_IF_ERROR(codec.reconstruct(Span<uint8_t *const>(ptr.data(), n), present, su));
    // Regenerated redundancy files need every stripe's ECC unit: encode from the (rebuilt) data.
    std::vector<bool> have = present;
    if (c.any_regen) {
      ECJIT_RETURN_IF_ERROR(
          codec.encode(Span<const uint8_t *const>(ptr.data(), k), Span<uint8_t *const>(ptr.data() + k, m), su));
      for (unsigned r = 0; r < m; ++r)
        if (c.regenerate[r]) have[k + r] = false;
    }
    // A rebuilt unit is written only when its signature is the stored one.
    for (unsigned i = 0; i < n; ++i) {
      if (have[i]) continue;
      auto sig = unit_signature(codec, b.unit[i], su);
      if (!sig.ok()) return sig.status();
      const bool regen = i >= k && c.regenerate[i - k];
      const uint64_t want = i < k  ? auth.data_sig(s, i)
                            : regen ? ecc_signature_from_data(codec, *c.field, auth, s, i - k)
                                    : c.set.files[i - k].header ? c.set.files[i - k].header->ecc_sig(s)
                                                                : ecc_signature_from_data(codec, *c.field, auth, s, i - k);
      if (*sig != want)
        return Status(StatusCode::kInternal, abs + ": stripe " + std::to_string(s) + " unit " + std::to_string(i) +
                                                 ": rebuilt unit does not match its signature; not written");
      if (i < k) continue;
      const unsigned r = i - k;
      if (regen) {
        fresh[r].ecc_sig(s) = *sig;
        if (*sig == 0 && all_zero(b.unit[i], size_t(su))) continue;  // the fresh file is sparse: holes stay holes
        ECJIT_RETURN_IF_ERROR(write_at(fresh_fd[r].get(), fresh[r].unit_offset(s), size_t(su), b.unit[i], fresh_tmp[r]));
      } else if (c.write_ecc) {
        const EccFile &e = c.set.files[r];
        ECJIT_RETURN_IF_ERROR(write_at(e.fd.get(), e.header->unit_offset(s), size_t(su), b.unit[i], e.path));
      } else {
        continue;
      }
      c.workers.moved(&c.bytes_written, su, 0);
    }
    for (unsigned j = 0; j < k; ++j) ECJIT_RETURN_IF_ERROR(write_data(s, j, b.unit[j], !present[j]));
    return Status::Ok();
  });
  c.workers.finish();
  if (!st.ok()) return st;
  failpoint("repair.units-written");
  uint64_t n_lost = 0;
  for (uint64_t s = 0; s < c.rep.stripes; ++s) n_lost += lost[s];
  for (UnitDamage &d : c.rep.damage)
    d.repaired = !lost[d.stripe] && (d.unit < k || (c.write_ecc && !(c.regenerate[d.unit - k] && n_lost)));
  // Finish: sizes, mtimes, syncs, renames. The protected mtime only on a whole file.
  if (image) {
    if (!loss) ECJIT_RETURN_IF_ERROR(set_mtime(out.get(), auth.data.mtime_ns, out_tmp));
    ECJIT_RETURN_IF_ERROR(sync_file(out.get(), out_tmp));
    failpoint("restore.before-rename");
    if (::rename(out_tmp.c_str(), image_path.c_str()) != 0)
      return Status(StatusCode::kIoError, image_path + ": rename: " + std::strerror(errno));
    ECJIT_RETURN_IF_ERROR(sync_dir(dir_name(image_path)));
    if (loss) c.rep.partial_path = image_path;
  }
  if (in_place && (data_written.load() || created || c.identity_off || (!loss && c.cur.size != auth.data.size))) {
    ECJIT_RETURN_IF_ERROR(sync_file(c.data.get(), abs));
    // The protected identity again only when every byte is back: later runs check it as
    // protected (units still bad are damage, not a modification).
    if (!loss) ECJIT_RETURN_IF_ERROR(set_mtime(c.data.get(), auth.data.mtime_ns, abs));
    if (created) ECJIT_RETURN_IF_ERROR(sync_dir(dir_name(abs)));
  }
  for (unsigned r = 0; r < m; ++r) {
    const EccFile &e = c.set.files[r];
    if (c.regenerate[r]) {
      if (n_lost) {  // a redundancy file with holes would claim units it does not have
        ::unlink(fresh_tmp[r].c_str());
        fresh_tmp[r].clear();
        continue;
      }
      const std::vector<uint8_t> bytes = fresh[r].serialize();
      ECJIT_RETURN_IF_ERROR(write_at(fresh_fd[r].get(), 0, bytes.size(), bytes.data(), fresh_tmp[r]));
      ECJIT_RETURN_IF_ERROR(sync_file(fresh_fd[r].get(), fresh_tmp[r]));
      failpoint("repair.before-regenerated-rename");
      if (::rename(fresh_tmp[r].c_str(), e.path.c_str()) != 0)
        return Status(StatusCode::kIoError, e.path + ": rename: " + std::strerror(errno));
      fresh_tmp[r].clear();
      c.rep.notes.push_back(e.path + ": rewritten");
    } else if (c.write_ecc && e.fd.valid()) {
      ECJIT_RETURN_IF_ERROR(sync_file(e.fd.get(), e.path));
    }
  }
  armed = false;
  if (writes_data) ::unlink(marker.c_str());
  if (c.any_regen) ECJIT_RETURN_IF_ERROR(sync_dir(dir_name(ecc_base(abs))));
  if (n_lost) {
    c.rep.verdict = Verdict::kDataLost;
    std::string where = !c.rep.partial_path.empty() ? "the recoverable parts are in " + c.rep.partial_path
                        : !some_left ? "nothing of it can be rebuilt, nothing written"
                        : c.exists ? "every recoverable unit was rewritten in " + abs +
                                         ", the lost ranges left as they were (its size and mtime not set back)"
                                   : abs + " not created";
    c.rep.notes.push_back(std::to_string(n_lost) + " stripes cannot be rebuilt (" + describe_ranges(c.rep.lost) +
                          "); " + where);
  }
  return Status::Ok();
}

void FileProtector::Impl::run(const std::vector<std::string> &files, Command command,
                              const std::function<void(size_t, const Result<FileReport> &)> &on_done) {
  const unsigned threads = threads_or_default(0);
  auto one = [&](size_t i, unsigned t) -> Result<FileReport> {
    switch (command) {
      case Command::kProtect: return protect(files[i], t);
      case Command::kScrub: return check(files[i], false, false, "", t);
      case Command::kRepair: return check(files[i], true, false, "", t);
      case Command::kRestore: return check(files[i], true, true, "", t);
    }
    return Status(StatusCode::kInternal, "unknown command");
  };
  // A file of fewer stripes than workers cannot keep them busy: those go side by side.
  const uint64_t k = default_->k(), unit = opt_.unit ? opt_.unit : ProtectOptions::kDefaultUnit;
  std::vector<size_t> small, large;
  for (size_t i = 0; i < files.size(); ++i) {
    struct stat st;
    const bool big = threads > 1 && ::stat(files[i].c_str(), &st) == 0 && uint64_t(st.st_size) > threads * k * unit;
    (big ? large : small).push_back(i);
  }
  std::mutex done_mu;
  auto report = [&](size_t i, const Result<FileReport> &r) {
    std::lock_guard<std::mutex> lock(done_mu);
    on_done(i, r);
  };
  std::atomic<size_t> next{0};
  // Small files' protects commit in batches (commit_batch): one syncfs per batch instead of
  // m + 1 fsyncs per file (a syncfs costs a journal commit, ~5 ms on ext4, whatever it
  // flushes). A batch ends at 64 MiB of redundancy written, or at 256 files, each holding
  // its run lock's descriptor (at most 512 open in all, under a default RLIMIT_NOFILE of
  // 1024); reports follow their commits.
  constexpr uint64_t kBatchBytes = uint64_t(64) << 20;
  const size_t kBatch = std::clamp<size_t>(512 / size_t(threads), 1, 256);
  auto side_by_side = [&] {
    std::vector<Batched> batch;
    for (size_t j; (j = next.fetch_add(1)) < small.size();) {
      if (command != Command::kProtect) {
        report(small[j], one(small[j], 1));
        continue;
      }
      Batched b{small[j], {}, {}};
      auto r = protect(files[small[j]], 1, &b.pending);
      if (!r.ok() || b.pending.empty()) {
        report(small[j], r);
        continue;
      }
      b.report = std::move(*r);
      batch.push_back(std::move(b));
      uint64_t batch_bytes = 0;
      for (const Batched &waiting : batch) batch_bytes += waiting.pending.bytes;
      if (batch.size() == kBatch || batch_bytes >= kBatchBytes) commit_batch(batch, report);
    }
    commit_batch(batch, report);
  };
  std::vector<std::thread> pool;
  for (unsigned w = 1; w < std::min<size_t>(threads, small.size()); ++w) pool.emplace_back(side_by_side);
  side_by_side();
  for (auto &t : pool) t.join();
  for (size_t i : large) report(i, one(i, threads));
}

FileProtector::FileProtector(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
FileProtector::~FileProtector() = default;

Result<std::unique_ptr<FileProtector>> FileProtector::create(Jit &jit, const ProtectOptions &options) {
  if (options.unit != 0 && (options.unit % 64 != 0 || options.unit > kMaxUnit))
    return Status(StatusCode::kInvalidArgument,
                  "unit " + std::to_string(options.unit) + " bytes: must be a positive multiple of 64, at most 256 MiB");
  auto spec = CodeSpec::parse(options.spec.empty() ? ProtectOptions::kDefaultSpec : options.spec);
  if (!spec.ok()) return spec.status();
  ECJIT_RETURN_IF_ERROR(check_protectable(*spec));
  auto codec = jit.codec(*spec);
  if (!codec.ok()) return codec.status();
  return std::unique_ptr<FileProtector>(new FileProtector(std::make_unique<Impl>(jit, options, *codec)));
}

void FileProtector::on_progress(std::function<void(const Progress &)> callback) {
  impl_->on_progress(std::move(callback));
}
Result<std::vector<std::string>> FileProtector::expand(const std::vector<std::string> &paths,
                                                       bool protected_missing, Skipped *skipped) {
  return impl_->expand(paths, protected_missing, skipped);
}
Result<std::vector<FileReport>> FileProtector::prune(const std::vector<std::string> &paths, bool apply) {
  return impl_->prune(paths, apply);
}
Result<FileReport> FileProtector::protect(const std::string &path) { return impl_->protect(path); }
void FileProtector::run(const std::vector<std::string> &files, Command command,
                        const std::function<void(size_t, const Result<FileReport> &)> &on_done) {
  impl_->run(files, command, on_done);
}
Result<FileReport> FileProtector::scrub(const std::string &path, bool repair) {
  return impl_->check(path, repair, false, "");
}
Result<FileReport> FileProtector::restore(const std::string &path, const std::string &to, bool overwrite) {
  return impl_->check(path, true, true, to, 0, overwrite);
}
std::string FileProtector::redundancy_path(const std::string &path, unsigned r) const {
  return impl_->redundancy_path(path, r);
}

}  // namespace ecjit::files
