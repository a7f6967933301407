// FileProtector::Impl::check: scrub and restore of one data file in three steps - every unit
// against its signature (scan), the verdict (judge), the rebuild (rebuild).
#include "files/file_protector_impl.h"

namespace ecjit::files {

namespace {
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
}  // namespace

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
  if (::access(lock_path(c.abs).c_str(), F_OK) != 0 && !has_redundancy_file(c.abs)) {
    c.rep.verdict = Verdict::kUnprotected;
    c.rep.notes.push_back("no redundancy files " + ecc_base(c.abs) + ".ecc*");
    auto from = renamed_from_.find(c.abs);
    if (from != renamed_from_.end()) c.rep.notes.push_back(c.abs + ": renamed from " + from->second);
    return finish();
  }
  if (roots_.size() > 1) (void)make_dirs(dir_name(lock_path(c.abs)));  // domain 0 may be the one lost
  auto lock = RunLock::acquire(lock_path(c.abs), c.abs);
  if (!lock.ok()) {
    if (lock.status().message().find("busy") != std::string::npos) return lock.status();
    c.rep.verdict = Verdict::kUnprotected;
    c.rep.notes.push_back(lock.status().message());
    return finish();
  }
  // A repair that cannot write says so before it reads anything (not "unprotected").
  if (repair && (c.to.empty() || c.write_ecc)) {
    std::vector<std::string> writes = ecc_dirs(c.abs);
    writes.insert(writes.begin(), c.abs);
    for (const std::string &p : writes)
      if (::access(p.c_str(), W_OK) != 0 && errno == EROFS)
        return Status(StatusCode::kIoError, p + ": read-only file system; nothing repaired (a scrub without "
                                                "--repair checks it as it is)");
  }
  c.set = load_set(c.abs, default_->m(), c.write_ecc);
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
  // recoverable image goes to a kPartialSuffix (.ecjit-partial) file beside it (or beside --to's file) when
  // the file is gone or shorter than protected.
  const bool loss = c.lost_stripes > 0;
  const bool write_out = !c.to.empty();
  std::string image_path;
  // (A partial image only when some byte of it can be had.)
  const bool some_left = total_bytes(c.rep.lost) < auth.data.size;
  if (write_out) image_path = !loss ? c.to : some_left ? c.to + kPartialSuffix : "";
  else if (loss && some_left && (!c.exists || c.cur.size < auth.data.size)) image_path = abs + kPartialSuffix;
  const bool image = !image_path.empty();
  const bool in_place = !write_out && (c.exists || !loss);
  const uint64_t old_size = c.exists ? c.cur.size : 0;  // bytes the data file has (before any resize)
  Fd out;
  const std::string out_tmp = image ? image_path + kTmpSuffix : "";
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
    ECJIT_RETURN_IF_ERROR(make_dirs(dir_name(fresh_tmp[r])));  // a lost domain's shadow tree
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
  if (c.any_regen)
    for (const std::string &d : ecc_dirs(abs, m)) ECJIT_RETURN_IF_ERROR(sync_dir(d));
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

}  // namespace ecjit::files
