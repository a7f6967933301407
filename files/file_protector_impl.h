// FileProtector::Impl: the state shared by protect (file_protect.cpp), scrub / restore
// (file_check.cpp) and the rest of file protection (file_protector.cpp); internal to them.
#pragma once

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

#include "codes/families.h"
#include "codes/gf.h"
#include "ecjit/file_protection.h"
#include "ecjit/jit.h"
#include "files/failpoint.h"
#include "files/file_io.h"
#include "files/loss_record.h"
#include "files/redundancy_header.h"
#include "files/redundancy_set.h"
#include "files/stripe_workers.h"
#include "files/unit_signature.h"

namespace ecjit::files {

// What a restore leaves beside a data file; a tree walk never takes them for data.
inline constexpr const char *kPartialSuffix = ".ecjit-partial";  // the recoverable parts of a file with losses
inline constexpr const char *kTmpSuffix = ".ecjit-tmp";          // a restore's file before its rename

inline constexpr uint64_t kMaxUnit = uint64_t(256) << 20;

// A protect run's id (it names the run's temporaries, opened O_EXCL): random, from a generator
// seeded once per thread (a std::random_device per run cost ~4% of protecting small files).
inline uint64_t fresh_run_id() {
  thread_local std::mt19937_64 gen{(uint64_t(std::random_device{}()) << 32) ^ std::random_device{}()};
  return gen();
}

inline int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

inline double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// kUnsupported for codes without algebraic signatures over GF(2^l) symbols, which file
// protection stores: bit-matrix codes and rs-fft (Cantor-basis elements split over byte halves).
inline Status check_protectable(const CodeSpec &spec) {
  const codes::CodecKind kind = codes::codec_kind(spec);
  if (kind == codes::CodecKind::kBitmatrix)
    return Status(StatusCode::kUnsupported,
                  "'" + spec.to_string() + "' is a bit-matrix code: file protection stores algebraic signatures, "
                  "which need a code over GF(2^l) symbols (rs-vand, rs-cauchy, ...)");
  if (kind == codes::CodecKind::kFft)
    return Status(StatusCode::kUnsupported,
                  "'" + spec.to_string() + "' (reed-solomon-simd's code) has no algebraic signatures, which file "
                  "protection stores; use a code over GF(2^l) symbols (rs-vand, rs-cauchy, ...)");
  return Status::Ok();
}

// Reads data unit j of stripe s into buf, zero-padded to the stripe's unit bytes. Returns the
// bytes read, or an error for an unreadable range.
inline Result<size_t> read_data_unit(int fd, const RedundancyHeader &h, uint64_t s, unsigned j, uint8_t *buf,
                              const std::string &what) {
  const uint64_t want = h.data_bytes(s, j);
  size_t got = 0;
  if (want && fd >= 0) ECJIT_RETURN_IF_ERROR(read_at(fd, h.data_offset(s, j), size_t(want), buf, &got, what));
  memset(buf + got, 0, size_t(h.stripe_unit(s) - got));
  return got;
}


class FileProtector::Impl {
 public:
  Impl(Jit &jit, ProtectOptions opt, std::shared_ptr<const Codec> codec)
      : jit_(jit), opt_(std::move(opt)), rate_(opt_.max_rate), default_(std::move(codec)) {
    codecs_[default_->spec().to_string()] = default_;
    if (!opt_.ecc_domains.empty())
      for (const std::string &d : opt_.ecc_domains) roots_.push_back(absolute_path(d));
    else if (!opt_.ecc_dir.empty())
      roots_.push_back(absolute_path(opt_.ecc_dir));
  }

  void on_progress(std::function<void(const Progress &)> callback) { progress_ = std::move(callback); }
  std::string redundancy_path(const std::string &path, unsigned r) const { return ecc_path(absolute_path(path), r); }
  // Whether a data file has redundancy to check: its redundancy file 0, or with failure
  // domains its file in any of them (domain 0, and its lock with it, may be the one lost).
  bool has_redundancy_file(const std::string &abs) const {
    for (unsigned r = 0; r < std::max<size_t>(1, roots_.size()); ++r)
      if (::access(ecc_path(abs, r).c_str(), F_OK) == 0) return true;
    return false;
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
    std::string abs;               // the data file
    unsigned m = 0;
    std::vector<std::string> tmp;  // temporary of redundancy file r
    std::vector<Fd> fds;           // their descriptors (closed for a batched commit)
    dev_t dev = 0;                 // the temporaries' file system
    bool one_dev = true;           // whether they share it (failure domains: rarely)
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

  // kInvalidArgument where a code's m redundancy files would share a failure domain.
  Status check_domains(const Codec &codec) const {
    if (roots_.size() <= 1 || codec.m() <= roots_.size()) return Status::Ok();
    return Status(StatusCode::kInvalidArgument,
                  codec.spec().to_string() + " writes " + std::to_string(codec.m()) + " redundancy files per file, which " +
                      std::to_string(roots_.size()) + " failure domains cannot hold one to a domain; give at least " +
                      std::to_string(codec.m()) + " (--ecc-dir D0,D1,...)");
  }
 private:
  struct Check;

  // The shadow name of a data file in the domain of its redundancy file r, without the
  // ".ecc<r>" suffix; r = 0 also names its lock, loss record and repair marker.
  std::string ecc_base(const std::string &abs, unsigned r = 0) const {
    if (roots_.empty()) return dir_name(abs) + "/.ecjit/" + base_name(abs);
    return roots_[std::min<size_t>(r, roots_.size() - 1)] + abs;
  }
  std::string ecc_path(const std::string &abs, unsigned r) const { return ecc_base(abs, r) + ".ecc" + std::to_string(r); }
  // The data file's shadow names in the domains of its redundancy files 0 .. m-1 (default: in
  // every domain); one without failure domains. Entry r is redundancy file r's.
  std::vector<std::string> ecc_bases(const std::string &abs, unsigned m = ~0u) const {
    std::vector<std::string> bases;
    for (unsigned r = 0; r < std::max<size_t>(1, std::min<size_t>(m, roots_.size())); ++r) bases.push_back(ecc_base(abs, r));
    return bases;
  }
  // Their directories: what a commit of m redundancy files renames into and syncs.
  std::vector<std::string> ecc_dirs(const std::string &abs, unsigned m = ~0u) const {
    std::vector<std::string> dirs;
    for (const std::string &b : ecc_bases(abs, m)) dirs.push_back(dir_name(b));
    return dirs;
  }
  // The redundancy files of a data file as found on disk (RedundancySet::load).
  RedundancySet load_set(const std::string &abs, unsigned m_hint, bool writable) const {
    return RedundancySet::load([this, abs](unsigned r) { return ecc_path(abs, r); }, base_name(abs), m_hint, writable);
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

  // Whether `abs` is redundancy rather than data: inside a `.ecjit` directory, the ecc_dir
  // or a failure domain.
  bool is_redundancy(const std::string &abs) const {
    if (abs.find("/.ecjit/") != std::string::npos || (abs.size() >= 7 && abs.compare(abs.size() - 7, 7, "/.ecjit") == 0))
      return true;
    for (const std::string &root : roots_)
      if (abs == root || abs.compare(0, root.size() + 1, root + "/") == 0) return true;
    return false;
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
  // Where redundancy goes, absolute: none (.ecjit beside each file), the ecc_dir, or the
  // failure domains (file r in roots_[r]).
  std::vector<std::string> roots_;
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

}  // namespace ecjit::files
