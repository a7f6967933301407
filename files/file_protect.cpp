// FileProtector::Impl::protect: a file's redundancy written to temporaries beside the old, then
// committed (made durable and renamed into place), alone or in batches of small files.
#include "files/file_protector_impl.h"

namespace ecjit::files {

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
    const std::string final_path = ecc_path(p.abs, r);
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
    const std::string extra = ecc_path(p.abs, r);
    if (::unlink(extra.c_str()) != 0) break;
  }
  if (sync_directory)
    for (const std::string &d : ecc_dirs(p.abs, p.m)) ECJIT_RETURN_IF_ERROR(sync_dir(d));
  if (p.clear_loss) remove_loss_record(ecc_base(p.abs));
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
  for (const Batched &b : batch) one_fs = one_fs && b.pending.one_dev && b.pending.dev == batch[0].pending.dev;
  bool synced = false;
  if (one_fs) {
    auto fd = open_file(batch[0].pending.tmp[0], O_RDONLY);
    synced = fd.ok() && ::syncfs(fd->get()) == 0;
  }
  std::vector<std::string> dirs;
  std::vector<Status> status(batch.size());
  std::vector<std::vector<std::string>> dirs_of(batch.size());
  for (size_t i = 0; i < batch.size(); ++i) {
    status[i] = commit(batch[i].pending, synced, /*sync_directory=*/false);
    dirs_of[i] = ecc_dirs(batch[i].pending.abs, batch[i].pending.m);
    if (status[i].ok()) dirs.insert(dirs.end(), dirs_of[i].begin(), dirs_of[i].end());
  }
  std::sort(dirs.begin(), dirs.end());
  dirs.erase(std::unique(dirs.begin(), dirs.end()), dirs.end());
  std::map<std::string, Status> dir_status;
  for (const std::string &d : dirs) dir_status[d] = sync_dir(d);
  for (size_t i = 0; i < batch.size(); ++i) {
    for (const std::string &d : dirs_of[i])
      if (status[i].ok()) status[i] = dir_status[d];
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

  RedundancySet old_set = load_set(abs, default_->m(), false);
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
  ECJIT_RETURN_IF_ERROR(check_domains(codec));
  if (m > old_set.files.size()) old_set = load_set(abs, m, false);
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

  // Temporaries beside the final files (in their domains); leftovers of killed runs are
  // removed first.
  const std::vector<std::string> bases = ecc_bases(abs, m);
  for (size_t d = 1; d < bases.size(); ++d) ECJIT_RETURN_IF_ERROR(make_dirs(dir_name(bases[d])));
  char suffix[32];
  snprintf(suffix, sizeof suffix, ".tmp-%016llx", static_cast<unsigned long long>(hdr.run_id));
  std::vector<std::string> tmp_path(m);
  std::vector<Fd> tmp(m);
  auto remove_temps = [&] {
    for (unsigned r = 0; r < m; ++r)
      if (!tmp_path[r].empty()) ::unlink(tmp_path[r].c_str());
  };
  for (const std::string &b : bases)
    for (const std::string &left : leftover_temps(b)) ::unlink(left.c_str());
  const uint64_t file_bytes = hdrs[0].file_bytes();
  for (unsigned r = 0; r < m; ++r) {
    tmp_path[r] = ecc_path(abs, r) + suffix;
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
  p.abs = abs;
  p.m = m;
  p.tmp = std::move(tmp_path);
  p.clear_loss = opt_.accept_loss;
  p.bytes = uint64_t(m) * file_bytes;
  for (unsigned r = 0; r < m; ++r) {
    struct stat tmp_stat;
    if (::fstat(tmp[r].get(), &tmp_stat) != 0) p.one_dev = false;
    else if (r == 0) p.dev = tmp_stat.st_dev;
    else p.one_dev = p.one_dev && tmp_stat.st_dev == p.dev;
  }
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

}  // namespace ecjit::files
