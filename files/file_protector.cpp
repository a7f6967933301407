// FileProtector: protect / scrub / repair / restore of data files through redundancy files
// whose headers carry the algebraic signatures of every unit (Nešković 2018, ch. 7.3 and 2.4).
#include "ecjit/file_protection.h"

#include "files/file_protector_impl.h"

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
  // Each domain's redundancy file r (domain 0 may be the one lost); without domains, file 0.
  const std::vector<std::string> bases = ecc_bases(dir == "/" ? "/x" : dir + "/x");
  for (unsigned r = 0; r < bases.size(); ++r) {
    DIR *d = ::opendir(dir_name(bases[r]).c_str());
    if (!d) continue;
    const std::string suffix = ".ecc" + std::to_string(r);
    while (struct dirent *e = ::readdir(d)) {
      const std::string name = e->d_name;
      if (name.size() <= suffix.size() || name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
        continue;
      const std::string data = (dir == "/" ? "" : dir) + "/" + name.substr(0, name.size() - suffix.size());
      struct stat st;
      if (::lstat(data.c_str(), &st) != 0 && errno == ENOENT) out.push_back(data);
    }
    ::closedir(d);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

Result<std::vector<std::string>> FileProtector::Impl::expand(const std::vector<std::string> &paths,
                                                             bool protected_missing, Skipped *skipped) {
  std::vector<std::string> out, missing;
  walked_inodes_.clear();
  walked_by_size_.clear();
  renamed_from_.clear();
  renamed_to_.clear();
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
      if (std::find(roots_.begin(), roots_.end(), p) != roots_.end()) continue;  // redundancy, not data
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
                    path + ": is redundancy (a .ecjit directory, the --ecc-dir or a failure domain), not data; name the data files");
    struct stat st;
    if (::stat(abs.c_str(), &st) != 0) {
      // A protected file that is gone, named on the command line: scrub reports it.
      if (protected_missing && errno == ENOENT && has_redundancy_file(abs)) {
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
    RedundancySet set = load_set(m, default_->m(), false);
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
    if (renamed_from_.count(p) || has_redundancy_file(p)) continue;
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
    std::vector<std::string> victims, dirs;
    for (const std::string &base : ecc_bases(f)) {  // every domain's files of it
      const std::string dir = dir_name(base), prefix = base_name(base) + ".";
      DIR *d = ::opendir(dir.c_str());
      if (!d) continue;
      dirs.push_back(dir);
      while (struct dirent *e = ::readdir(d)) {
        const std::string name = e->d_name;
        if (name.compare(0, prefix.size(), prefix) != 0) continue;
        const std::string rest = name.substr(prefix.size());
        if (rest.compare(0, 3, "ecc") == 0 || rest == "lock" || rest == "lost" || rest == "repairing")
          victims.push_back(dir + "/" + name);
      }
      ::closedir(d);
    }
    std::sort(victims.begin(), victims.end());
    for (const std::string &v : victims) {
      if (apply && ::unlink(v.c_str()) != 0)
        return Status(StatusCode::kIoError, v + ": cannot remove: " + std::strerror(errno));
      rep.notes.push_back((apply ? "removed " : "would remove ") + v);
    }
    for (const std::string &dir : dirs)
      if (apply) ECJIT_RETURN_IF_ERROR(sync_dir(dir));
    out.push_back(std::move(rep));
  }
  return out;
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

void set_redundancy_dirs(ProtectOptions &options, const std::string &list) {
  options.ecc_dir.clear();
  options.ecc_domains.clear();
  if (list.find(',') == std::string::npos) {
    options.ecc_dir = list;
    return;
  }
  for (size_t at = 0;;) {
    const size_t comma = list.find(',', at);
    options.ecc_domains.push_back(list.substr(at, comma == std::string::npos ? std::string::npos : comma - at));
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
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
  if (!options.ecc_domains.empty()) {
    if (!options.ecc_dir.empty())
      return Status(StatusCode::kInvalidArgument, "give an ecc_dir or failure domains, not both");
    std::vector<std::string> seen;
    for (const std::string &d : options.ecc_domains) {
      if (d.empty()) return Status(StatusCode::kInvalidArgument, "a failure domain with an empty path");
      const std::string abs = absolute_path(d);
      for (const std::string &o : seen)
        if (abs == o || abs.compare(0, o.size() + 1, o + "/") == 0 || o.compare(0, abs.size() + 1, abs + "/") == 0)
          return Status(StatusCode::kInvalidArgument,
                        "failure domains " + o + " and " + abs + " overlap: each must be a directory of its own");
      seen.push_back(abs);
    }
  }
  auto codec = jit.codec(*spec);
  if (!codec.ok()) return codec.status();
  auto impl = std::make_unique<Impl>(jit, options, *codec);
  if (!options.spec.empty()) ECJIT_RETURN_IF_ERROR(impl->check_domains(**codec));  // else each file's own code
  return std::unique_ptr<FileProtector>(new FileProtector(std::move(impl)));
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
bool FileProtector::has_redundancy(const std::string &path) const {
  return impl_->has_redundancy_file(absolute_path(path));
}

}  // namespace ecjit::files
