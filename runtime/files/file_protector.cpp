// FileProtector: protect / scrub / repair / restore of data files through redundancy files
// whose headers carry the algebraic signatures of every unit (seed 004, ch. 7.3 and 2.4).
#include "ecjit/file_protection.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <thread>

#include "codes/gf.h"
#include "ecjit/jit.h"
#include "runtime/files/file_io.h"
#include "runtime/files/redundancy_header.h"

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
  }
  return "unknown";
}

namespace {

constexpr uint64_t kMaxUnit = uint64_t(256) << 20;
constexpr uint64_t kWorkerMemory = uint64_t(1) << 30;  // unit buffers of all workers together

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

struct AlignedFree {
  void operator()(uint8_t *p) const { std::free(p); }
};

// One worker's unit buffers: n units of `unit` bytes.
struct Buffers {
  std::unique_ptr<uint8_t, AlignedFree> mem;
  std::vector<uint8_t *> unit;
};

bool all_zero(const uint8_t *p, size_t len) {
  static const uint8_t zeros[4096] = {};
  for (size_t off = 0; off < len; off += sizeof zeros)
    if (memcmp(p + off, zeros, std::min(sizeof zeros, len - off)) != 0) return false;
  return true;
}

// Why a unit is bad (empty: good).
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

// A redundancy file as found on disk.
struct EccFile {
  std::string path;
  std::optional<RedundancyHeader> header;  // set when it parsed and belongs to this data file
  std::string problem;                     // why not usable ("" when usable)
  Fd fd;
};

}  // namespace

class FileProtector::Impl {
 public:
  Impl(Jit &jit, ProtectOptions opt, std::shared_ptr<const Codec> codec)
      : jit_(jit), opt_(std::move(opt)), rate_(opt_.max_rate) {
    codecs_[codec->spec().to_string()] = std::move(codec);
  }

  std::function<void(const Progress &)> progress_;

  std::string redundancy_path(const std::string &path, unsigned r) const {
    return ecc_base(absolute_path(path)) + ".ecc" + std::to_string(r);
  }

  Result<std::vector<std::string>> expand(const std::vector<std::string> &paths) const;
  Result<FileReport> protect(const std::string &path);
  // repair: rewrite bad units; to_path: restore into another file (implies repair of data).
  Result<FileReport> check(const std::string &path, bool repair, bool restore, const std::string &to);

 private:
  // The shadow name of a data file, without the ".ecc<r>" suffix.
  std::string ecc_base(const std::string &abs) const {
    if (opt_.ecc_dir.empty()) return dir_name(abs) + "/.ecjit/" + base_name(abs);
    return absolute_path(opt_.ecc_dir) + abs;
  }
  std::string lock_path(const std::string &abs) const { return ecc_base(abs) + ".lock"; }

  Result<std::shared_ptr<const Codec>> codec_for(const std::string &spec) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = codecs_.find(spec);
    if (it != codecs_.end()) return it->second;
    auto c = jit_.codec(spec);
    if (!c.ok()) return c.status();
    codecs_[spec] = *c;
    return *c;
  }

  const std::shared_ptr<const Codec> &default_codec() const { return codecs_.begin()->second; }

  // Packs a unit's signature: 64 / l components of l bits.
  static Result<uint64_t> unit_signature(const Codec &codec, const uint8_t *p, size_t len) {
    const unsigned l = codec.spec().gf, comps = 64 / l;
    uint64_t c[kMaxSignatureComponents];
    ECJIT_RETURN_IF_ERROR(codec.signature(p, len, Span<uint64_t>(c, comps)));
    uint64_t v = 0;
    for (unsigned i = 0; i < comps; ++i) v |= l == 64 ? c[i] : c[i] << (i * l);
    return v;
  }
  // Eq. 2.37: the signature ECC unit r must have, from the data units' signatures.
  static uint64_t expected_ecc_sig(const Codec &codec, const codes::Field &f, const RedundancyHeader &h,
                                   uint64_t stripe, unsigned r) {
    const unsigned l = f.bits(), comps = 64 / l, k = h.k;
    const uint64_t mask = f.mask();
    uint64_t out = 0;
    for (unsigned i = 0; i < comps; ++i) {
      uint64_t acc = 0;
      for (unsigned j = 0; j < k; ++j)
        acc ^= f.mul(codec.parity_matrix()[size_t(r) * k + j], (h.data_sig(stripe, j) >> (i * l)) & mask);
      out |= l == 64 ? acc : acc << (i * l);
    }
    return out;
  }

  unsigned workers_for(unsigned n, uint64_t unit, uint64_t stripes) const {
    unsigned t = opt_.threads ? opt_.threads : std::max(1u, std::thread::hardware_concurrency());
    const uint64_t per = uint64_t(n) * unit;
    t = unsigned(std::min<uint64_t>(t, std::max<uint64_t>(1, kWorkerMemory / per)));
    return unsigned(std::max<uint64_t>(1, std::min<uint64_t>(t, stripes)));
  }

  static Status alloc(Buffers *b, unsigned n, uint64_t unit) {
    const uint64_t bytes = uint64_t(n) * unit;
    b->mem.reset(static_cast<uint8_t *>(std::aligned_alloc(64, bytes)));
    if (!b->mem)
      return Status(StatusCode::kInvalidArgument,
                    "cannot allocate " + std::to_string(bytes) + " bytes of unit buffers; choose a smaller unit");
    b->unit.resize(n);
    for (unsigned i = 0; i < n; ++i) b->unit[i] = b->mem.get() + uint64_t(i) * unit;
    return Status::Ok();
  }

  // Runs fn(index, buffers) for index in [0, count) on the workers; the first error stops the
  // rest and is returned.
  Status parallel(uint64_t count, unsigned n, uint64_t unit,
                  const std::function<Status(uint64_t, Buffers &)> &fn) {
    if (count == 0) return Status::Ok();
    const unsigned workers = workers_for(n, unit, count);
    std::atomic<uint64_t> next{0};
    std::atomic<bool> failed{false};
    std::mutex err_mu;
    Status first_error;
    auto work = [&] {
      Buffers b;
      Status st = alloc(&b, n, unit);
      while (st.ok() && !failed.load()) {
        const uint64_t i = next.fetch_add(1);
        if (i >= count) break;
        st = fn(i, b);
      }
      if (!st.ok()) {
        std::lock_guard<std::mutex> lock(err_mu);
        if (!failed.exchange(true)) first_error = st;
      }
    };
    std::vector<std::thread> pool;
    for (unsigned w = 1; w < workers; ++w) pool.emplace_back(work);
    work();
    for (auto &t : pool) t.join();
    return first_error;
  }

  // Progress of the file being worked on.
  void begin_progress(const std::string &path, uint64_t units_total) {
    prog_path_ = path;
    prog_total_ = units_total;
    prog_units_ = 0;
    prog_bytes_ = 0;
    prog_last_ = std::chrono::steady_clock::now();
  }
  void tick(uint64_t units, uint64_t bytes, bool final = false) {
    prog_units_ += units;
    prog_bytes_ += bytes;
    if (!progress_) return;
    std::unique_lock<std::mutex> lock(prog_mu_, std::try_to_lock);
    if (!lock.owns_lock() && !final) return;
    if (!lock.owns_lock()) lock.lock();
    const auto now = std::chrono::steady_clock::now();
    if (!final && now - prog_last_ < std::chrono::milliseconds(50)) return;
    prog_last_ = now;
    Progress p;
    p.path = prog_path_;
    p.units_done = prog_units_.load();
    p.units_total = prog_total_;
    p.bytes_done = prog_bytes_.load();
    progress_(p);
  }
  // Bytes moved: counted for the report, the rate limit and the progress.
  void moved(std::atomic<uint64_t> *counter, uint64_t bytes, uint64_t units) {
    counter->fetch_add(bytes);
    rate_.take(bytes);
    tick(units, bytes);
  }

  // Reads data unit j of stripe s into buf (zero-padded past the end of the data). Returns
  // the bytes read, or an error for an unreadable range.
  Result<size_t> read_data_unit(int fd, const RedundancyHeader &h, uint64_t s, unsigned j, uint8_t *buf) {
    const uint64_t off = (s * h.k + j) * h.unit;
    const uint64_t want = off >= h.data.size ? 0 : std::min<uint64_t>(h.unit, h.data.size - off);
    size_t got = 0;
    if (want && fd >= 0) {
      Status st = read_at(fd, off, size_t(want), buf, &got, "data");
      if (!st.ok()) return st;
    }
    memset(buf + got, 0, size_t(h.unit - got));
    return got;
  }

  Status load_ecc_files(const std::string &abs, unsigned m_hint, std::vector<EccFile> *out, bool writable);
  Result<FileReport> protect_locked(const std::string &abs);

  Jit &jit_;
  ProtectOptions opt_;
  RateLimit rate_;
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<const Codec>> codecs_;
  std::string prog_path_;
  uint64_t prog_total_ = 0;
  std::atomic<uint64_t> prog_units_{0}, prog_bytes_{0};
  std::mutex prog_mu_;
  std::chrono::steady_clock::time_point prog_last_;
};

Result<std::vector<std::string>> FileProtector::Impl::expand(const std::vector<std::string> &paths) const {
  std::vector<std::string> out;
  const std::string ecc_root = opt_.ecc_dir.empty() ? "" : absolute_path(opt_.ecc_dir);
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
        out.push_back(p);
      }
    }
    return Status::Ok();
  };
  for (const std::string &path : paths) {
    const std::string abs = absolute_path(path);
    struct stat st;
    if (::stat(abs.c_str(), &st) != 0)
      return Status(StatusCode::kIoError, path + ": " + std::strerror(errno));
    if (S_ISDIR(st.st_mode)) {
      ECJIT_RETURN_IF_ERROR(walk(abs));
    } else if (S_ISREG(st.st_mode)) {
      out.push_back(abs);
    } else {
      return Status(StatusCode::kIoError, path + ": not a regular file or directory");
    }
  }
  return out;
}

// Opens and parses every redundancy file of `abs` (m_hint of them at least; more when a
// header says so). A file that is missing, torn, or written for another data file gets a
// problem and no header.
Status FileProtector::Impl::load_ecc_files(const std::string &abs, unsigned m_hint, std::vector<EccFile> *out,
                                           bool writable) {
  out->clear();
  const std::string base = ecc_base(abs);
  unsigned m = m_hint;
  for (unsigned r = 0; r < m; ++r) {
    EccFile e;
    e.path = base + ".ecc" + std::to_string(r);
    auto fd = open_file(e.path, (writable ? O_RDWR : O_RDONLY) | O_NOFOLLOW);
    if (!fd.ok()) {
      e.problem = fd.status().message();
      out->push_back(std::move(e));
      continue;
    }
    e.fd = std::move(*fd);
    std::vector<uint8_t> first(RedundancyHeader::kAlign);
    size_t got = 0;
    Status st = read_at(e.fd.get(), 0, first.size(), first.data(), &got, e.path);
    first.resize(got);
    Result<RedundancyHeader> h = st.ok() ? RedundancyHeader::parse(first, [&](uint64_t off, uint64_t len, uint8_t *p) {
      size_t n = 0;
      ECJIT_RETURN_IF_ERROR(read_at(e.fd.get(), off, size_t(len), p, &n, e.path));
      if (n != len) return Status(StatusCode::kIoError, "torn header: file ends inside it");
      return Status::Ok();
    })
                                         : Result<RedundancyHeader>(st);
    if (!h.ok()) {
      e.problem = e.path + ": " + h.status().message();
    } else if (h->name != base_name(abs) || h->ecc_index != r) {
      e.problem = e.path + ": header belongs to another file ('" + h->name + "', redundancy file " +
                  std::to_string(h->ecc_index) + ")";
    } else {
      if (h->m > m && h->m <= 65536) m = h->m;
      e.header = std::move(*h);
    }
    out->push_back(std::move(e));
  }
  return Status::Ok();
}

Result<FileReport> FileProtector::Impl::protect(const std::string &path) {
  const std::string abs = absolute_path(path);
  ECJIT_RETURN_IF_ERROR(make_dirs(dir_name(ecc_base(abs))));
  auto lock = RunLock::acquire(lock_path(abs), abs);
  if (!lock.ok()) return lock.status();
  return protect_locked(abs);
}

Result<FileReport> FileProtector::Impl::protect_locked(const std::string &abs) {
  const auto t0 = std::chrono::steady_clock::now();
  FileReport rep;
  rep.path = abs;
  auto data = open_file(abs, O_RDONLY);
  if (!data.ok()) return data.status();
  auto id = identity_of(data->get(), abs);
  if (!id.ok()) return id.status();

  std::vector<EccFile> old;
  ECJIT_RETURN_IF_ERROR(load_ecc_files(abs, default_codec()->m(), &old, false));
  // Unless told otherwise, a protected file keeps its code and unit.
  const RedundancyHeader *prev = nullptr;
  for (const EccFile &e : old)
    if (e.header && (!prev || e.header->created_ns > prev->created_ns)) prev = &*e.header;
  std::shared_ptr<const Codec> codec_ptr = default_codec();
  if (opt_.spec.empty() && prev) {
    auto c = codec_for(prev->spec);
    if (!c.ok()) return c.status().with_context(abs + ": redundancy spec '" + prev->spec + "'");
    codec_ptr = *c;
  }
  const Codec &codec = *codec_ptr;
  const unsigned k = codec.k(), m = codec.m(), n = k + m;
  const uint64_t unit = opt_.unit ? opt_.unit : prev ? prev->unit : ProtectOptions::kDefaultUnit;
  if (m > old.size()) ECJIT_RETURN_IF_ERROR(load_ecc_files(abs, m, &old, false));
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
  if (all_current && !opt_.force) {
    rep.verdict = Verdict::kUnchanged;
    rep.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return rep;
  }
  hdr.run_id = std::random_device{}() | uint64_t(std::random_device{}()) << 32;
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
  if (DIR *d = ::opendir(dir_name(base).c_str())) {
    const std::string prefix = base_name(base) + ".ecc";
    while (struct dirent *e = ::readdir(d)) {
      std::string name = e->d_name;
      if (name.compare(0, prefix.size(), prefix) == 0 && name.find(".tmp-") != std::string::npos)
        ::unlink((dir_name(base) + "/" + name).c_str());
    }
    ::closedir(d);
  }
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

  std::atomic<uint64_t> encoded{0}, bytes_read{0}, bytes_written{0};
  begin_progress(abs, rep.stripes * k);
  Status st = parallel(rep.stripes, n, unit, [&](uint64_t s, Buffers &b) -> Status {
    for (unsigned j = 0; j < k; ++j) {
      auto got = read_data_unit(data->get(), hdr, s, j, b.unit[j]);
      if (!got.ok()) return got.status();
      auto sig = unit_signature(codec, b.unit[j], unit);
      if (!sig.ok()) return sig.status();
      for (unsigned r = 0; r < m; ++r) hdrs[r].data_sig(s, j) = *sig;
      moved(&bytes_read, *got, 1);
    }
    std::vector<unsigned> todo;
    for (unsigned r = 0; r < m; ++r) {
      const auto &h = old[r].header;
      bool same = reusable[r] && s < h->stripes();
      for (unsigned j = 0; same && j < k; ++j) same = h->data_sig(s, j) == hdrs[r].data_sig(s, j);
      if (!same) {
        todo.push_back(r);
        continue;
      }
      // Unchanged stripe: this file's old ECC unit serves (copied, checked by its signature).
      size_t got = 0;
      ECJIT_RETURN_IF_ERROR(read_at(old[r].fd.get(), h->unit_offset(s), size_t(unit), b.unit[k + r], &got, old[r].path));
      auto sig = got == unit ? unit_signature(codec, b.unit[k + r], unit) : Result<uint64_t>(uint64_t(0));
      if (!sig.ok()) return sig.status();
      if (got != unit || *sig != h->ecc_sig(s)) {
        todo.push_back(r);  // the old unit is damaged: encode afresh
        continue;
      }
      hdrs[r].ecc_sig(s) = *sig;
      ECJIT_RETURN_IF_ERROR(write_at(tmp[r].get(), hdrs[r].unit_offset(s), size_t(unit), b.unit[k + r], tmp_path[r]));
      moved(&bytes_written, 2 * unit, 0);
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
    ECJIT_RETURN_IF_ERROR(codec.encode(Span<const uint8_t *const>(d, k), Span<uint8_t *const>(p, m), unit));
    encoded.fetch_add(1);
    for (unsigned r : todo) {
      auto sig = unit_signature(codec, b.unit[k + r], unit);
      if (!sig.ok()) return sig.status();
      hdrs[r].ecc_sig(s) = *sig;
      // The temporary is sparse: an all-zero unit (a hole in sparse data) need not be written.
      if (*sig == 0 && all_zero(b.unit[k + r], unit)) continue;
      ECJIT_RETURN_IF_ERROR(write_at(tmp[r].get(), hdrs[r].unit_offset(s), size_t(unit), b.unit[k + r], tmp_path[r]));
      moved(&bytes_written, unit, 0);
    }
    return Status::Ok();
  });
  tick(0, 0, true);
  if (st.ok()) {
    // The data must not have changed while it was read, or the signatures mix two versions.
    auto after = identity_of(data->get(), abs);
    if (!after.ok()) st = after.status();
    else if (!after->same_contents_claim(*id))
      st = Status(StatusCode::kIoError, abs + ": changed while it was being protected; the old redundancy is kept, run again");
  }
  for (unsigned r = 0; st.ok() && r < m; ++r) {
    const std::vector<uint8_t> bytes = hdrs[r].serialize();
    st = write_at(tmp[r].get(), 0, bytes.size(), bytes.data(), tmp_path[r]);
    if (st.ok()) st = sync_file(tmp[r].get(), tmp_path[r]);
  }
  for (unsigned r = 0; st.ok() && r < m; ++r) {
    const std::string final_path = base + ".ecc" + std::to_string(r);
    if (::rename(tmp_path[r].c_str(), final_path.c_str()) != 0)
      st = Status(StatusCode::kIoError, final_path + ": rename: " + std::strerror(errno));
    else
      tmp_path[r].clear();
  }
  if (!st.ok()) {
    remove_temps();
    return st;
  }
  // A code with fewer parities than before leaves no stale redundancy files behind.
  for (unsigned r = m;; ++r) {
    const std::string extra = base + ".ecc" + std::to_string(r);
    if (::unlink(extra.c_str()) != 0) break;
  }
  ECJIT_RETURN_IF_ERROR(sync_dir(dir_name(base)));
  bool any_reused = false;
  for (unsigned r = 0; r < m; ++r) any_reused = any_reused || reusable[r];
  rep.verdict = any_reused ? Verdict::kUpdated : Verdict::kProtected;
  rep.stripes_encoded = encoded.load();
  rep.bytes_read = bytes_read.load();
  rep.bytes_written = bytes_written.load() + uint64_t(m) * hdrs[0].header_bytes();
  rep.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return rep;
}

Result<FileReport> FileProtector::Impl::check(const std::string &path, bool repair, bool restore,
                                               const std::string &to) {
  const auto t0 = std::chrono::steady_clock::now();
  const std::string abs = absolute_path(path);
  FileReport rep;
  rep.path = abs;
  if (::access(dir_name(ecc_base(abs)).c_str(), F_OK) != 0) {
    rep.verdict = Verdict::kUnprotected;
    rep.notes.push_back("no redundancy directory " + dir_name(ecc_base(abs)));
    return rep;
  }
  auto lock = RunLock::acquire(lock_path(abs), abs);
  if (!lock.ok()) {
    if (lock.status().message().find("busy") != std::string::npos) return lock.status();
    rep.verdict = Verdict::kUnprotected;
    rep.notes.push_back(lock.status().message());
    return rep;
  }
  const bool write_ecc = repair && !restore;
  std::vector<EccFile> ecc;
  ECJIT_RETURN_IF_ERROR(load_ecc_files(abs, default_codec()->m(), &ecc, write_ecc));
  // The newest run's header is the authority on the data's signatures.
  const RedundancyHeader *auth = nullptr;
  for (const EccFile &e : ecc)
    if (e.header && (!auth || e.header->created_ns > auth->created_ns)) auth = &*e.header;
  if (!auth) {
    rep.verdict = Verdict::kUnprotected;
    for (const EccFile &e : ecc) rep.notes.push_back(e.problem);
    return rep;
  }
  auto codec_r = codec_for(auth->spec);
  if (!codec_r.ok()) return codec_r.status().with_context(abs + ": redundancy spec '" + auth->spec + "'");
  const Codec &codec = **codec_r;
  const unsigned k = auth->k, m = auth->m, n = k + m;
  const uint64_t unit = auth->unit;
  if (codec.k() != k || codec.m() != m) return Status(StatusCode::kInternal, "spec and header disagree on k, m");
  auto field = codes::Field::make(codec.spec().gf, codec.spec().poly);
  if (!field.ok()) return field.status();
  ecc.resize(m);
  for (unsigned r = 0; r < m; ++r) {
    EccFile &e = ecc[r];
    if (e.path.empty()) e.path = ecc_base(abs) + ".ecc" + std::to_string(r);
    if (e.header && (e.header->spec != auth->spec || e.header->unit != unit || e.header->k != k ||
                     e.header->m != m || e.header->data.size != auth->data.size)) {
      e.problem = e.path + ": written for other parameters or another version of the data";
      e.header.reset();
    }
    if (!e.header) rep.notes.push_back(e.problem);
  }
  // A file of an older run is stale where its data signatures differ from the newest run's.
  auto ecc_usable = [&](unsigned r, uint64_t s) {
    const auto &h = ecc[r].header;
    if (!h) return false;
    if (h->run_id == auth->run_id) return true;
    for (unsigned j = 0; j < k; ++j)
      if (h->data_sig(s, j) != auth->data_sig(s, j)) return false;
    return true;
  };

  rep.file_size = auth->data.size;
  rep.k = k;
  rep.m = m;
  rep.stripes = auth->stripes();
  const bool in_place = to.empty();
  Fd data;
  bool exists = false;
  DataIdentity cur;
  {
    auto fd = open_file(abs, (repair || restore) && in_place ? O_RDWR : O_RDONLY);
    if (fd.ok()) {
      data = std::move(*fd);
      exists = true;
      auto id = identity_of(data.get(), abs);
      if (!id.ok()) return id.status();
      cur = *id;
    } else if (fd.status().message().find("does not exist") == std::string::npos) {
      return fd.status();
    } else {
      rep.notes.push_back(abs + ": data file missing");
    }
  }
  const bool claims_same = exists && cur.same_contents_claim(auth->data);

  // Pass 1: every unit against its signature.
  std::vector<std::vector<UnitState>> states(rep.stripes);
  std::atomic<uint64_t> bytes_read{0}, bytes_written{0};
  begin_progress(abs, rep.stripes * k);
  Status st = parallel(rep.stripes, n, unit, [&](uint64_t s, Buffers &b) -> Status {
    std::vector<UnitState> u(n, UnitState::kGood);
    for (unsigned j = 0; j < k; ++j) {
      const uint64_t off = (s * k + j) * unit;
      const uint64_t want = off >= auth->data.size ? 0 : std::min<uint64_t>(unit, auth->data.size - off);
      size_t got = 0;
      if (want && exists) {
        Status rs = read_at(data.get(), off, size_t(want), b.unit[j], &got, abs);
        if (!rs.ok()) {
          u[j] = UnitState::kUnreadable;
          continue;
        }
      }
      moved(&bytes_read, got, 1);
      if (got < want) {
        u[j] = UnitState::kMissing;
        continue;
      }
      memset(b.unit[j] + got, 0, size_t(unit - got));
      auto sig = unit_signature(codec, b.unit[j], unit);
      if (!sig.ok()) return sig.status();
      if (*sig != auth->data_sig(s, j)) u[j] = UnitState::kCorrupt;
    }
    for (unsigned r = 0; r < m; ++r) {
      if (!ecc[r].header) {
        u[k + r] = UnitState::kMissing;
        continue;
      }
      if (!ecc_usable(r, s)) {
        u[k + r] = UnitState::kStale;
        continue;
      }
      const RedundancyHeader &h = *ecc[r].header;
      if (expected_ecc_sig(codec, *field, h, s, r) != h.ecc_sig(s)) {
        u[k + r] = UnitState::kInconsistent;  // eq. 2.37 fails: a torn update (write hole)
        continue;
      }
      size_t got = 0;
      Status rs = read_at(ecc[r].fd.get(), h.unit_offset(s), size_t(unit), b.unit[k + r], &got, ecc[r].path);
      if (!rs.ok()) {
        u[k + r] = UnitState::kUnreadable;
        continue;
      }
      moved(&bytes_read, got, 0);
      if (got < unit) {
        u[k + r] = UnitState::kMissing;
        continue;
      }
      auto sig = unit_signature(codec, b.unit[k + r], unit);
      if (!sig.ok()) return sig.status();
      if (*sig != h.ecc_sig(s)) u[k + r] = UnitState::kCorrupt;
    }
    states[s] = std::move(u);
    return Status::Ok();
  });
  tick(0, 0, true);
  if (!st.ok()) return st;

  // Verdict of the check.
  uint64_t bad_data = 0, lost_stripes = 0;
  bool ecc_damage = false;
  for (uint64_t s = 0; s < rep.stripes; ++s) {
    unsigned bad = 0;
    for (unsigned i = 0; i < n; ++i)
      if (states[s][i] != UnitState::kGood) {
        ++bad;
        if (i < k) ++bad_data;
        else ecc_damage = true;
      }
    if (bad > m) ++lost_stripes;
  }
  const bool size_changed = exists && cur.size != auth->data.size;
  // Units differ and the mtime moved: somebody wrote the file after protection. A shorter file
  // whose remaining units all check is a truncation (damage), not a modification.
  bool modified = exists && !claims_same && bad_data > 0;
  if (modified && cur.size < auth->data.size) {
    bool only_tail = true;
    for (uint64_t s = 0; s < rep.stripes && only_tail; ++s)
      for (unsigned j = 0; j < k; ++j)
        if (states[s][j] == UnitState::kCorrupt) only_tail = false;
    modified = !only_tail;
  }
  if (exists && cur.size > auth->data.size) modified = true;  // data appended after protection
  for (uint64_t s = 0; s < rep.stripes; ++s)
    for (unsigned i = 0; i < n; ++i)
      if (states[s][i] != UnitState::kGood && !(restore && i >= k && states[s][i] == UnitState::kStale))
        rep.damage.push_back({s, i, unit_state_name(states[s][i]), false});
  if (size_changed && cur.size < auth->data.size)
    rep.notes.push_back(abs + ": " + std::to_string(cur.size) + " bytes, protected with " +
                        std::to_string(auth->data.size));
  if (modified && !restore) {
    rep.verdict = Verdict::kModified;
    std::string what = std::to_string(bad_data) + " data units differ";
    if (size_changed) what += ", " + std::to_string(auth->data.size) + " -> " + std::to_string(cur.size) + " bytes";
    rep.notes.push_back(abs + ": changed after it was protected (" + what +
                        "); run `ecjit protect` to update its redundancy or `ecjit restore` to roll it back");
    rep.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    rep.bytes_read = bytes_read.load();
    return rep;
  }
  // Redundancy files to write afresh (missing, torn, foreign or of an older run).
  std::vector<bool> regenerate(m, false);
  bool any_regen = false;
  if (write_ecc)
    for (unsigned r = 0; r < m; ++r) {
      // Files with a stripe that fails eq. 2.37 carry a wrong stored signature: rewritten whole.
      bool inconsistent = false;
      for (uint64_t s = 0; s < rep.stripes && !inconsistent; ++s)
        inconsistent = states[s][k + r] == UnitState::kInconsistent;
      regenerate[r] = !ecc[r].header || ecc[r].header->run_id != auth->run_id || inconsistent;
      any_regen = any_regen || regenerate[r];
    }
  const bool damaged = bad_data > 0 || ecc_damage || size_changed || !exists;
  const bool write_out = !in_place;  // restore --to: every stripe goes to the new file
  if (!repair && !restore) {
    rep.verdict = lost_stripes ? Verdict::kDataLost : damaged || any_regen ? Verdict::kDamaged : Verdict::kClean;
    for (const EccFile &e : ecc)
      if (!e.header) rep.verdict = lost_stripes ? Verdict::kDataLost : Verdict::kDamaged;
    rep.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    rep.bytes_read = bytes_read.load();
    return rep;
  }

  // Pass 2: rebuild what is bad (and, for --to or a regenerated redundancy file, write every stripe).
  Fd out;
  std::string out_tmp;
  if (write_out) {
    out_tmp = absolute_path(to) + ".ecjit-tmp";
    auto fd = open_file(out_tmp, O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (!fd.ok()) return fd.status();
    out = std::move(*fd);
    if (::ftruncate(out.get(), off_t(auth->data.size)) != 0)
      return Status(StatusCode::kIoError, out_tmp + ": cannot size: " + std::strerror(errno));
  } else if (!exists) {
    auto fd = open_file(abs, O_RDWR | O_CREAT | O_EXCL, 0644);
    if (!fd.ok()) return fd.status();
    data = std::move(*fd);
  }
  // In place, a truncated (or missing) file gets its protected size back first.
  if (in_place && cur.size != auth->data.size && ::ftruncate(data.get(), off_t(auth->data.size)) != 0)
    return Status(StatusCode::kIoError, abs + ": cannot resize: " + std::strerror(errno));
  std::vector<RedundancyHeader> fresh(m);
  std::vector<std::string> fresh_tmp(m);
  std::vector<Fd> fresh_fd(m);
  for (unsigned r = 0; r < m; ++r) {
    if (!regenerate[r]) continue;
    fresh[r] = *auth;
    fresh[r].ecc_index = r;
    fresh_tmp[r] = ecc[r].path + ".tmp-repair";
    auto fd = open_file(fresh_tmp[r], O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (!fd.ok()) return fd.status();
    fresh_fd[r] = std::move(*fd);
    if (::ftruncate(fresh_fd[r].get(), off_t(fresh[r].file_bytes())) != 0)
      return Status(StatusCode::kIoError, fresh_tmp[r] + ": cannot size: " + std::strerror(errno));
  }
  std::vector<uint8_t> lost(rep.stripes, 0);
  std::atomic<bool> data_written{false};
  begin_progress(abs, rep.stripes * k);
  st = parallel(rep.stripes, n, unit, [&](uint64_t s, Buffers &b) -> Status {
    std::vector<UnitState> &u = states[s];
    std::vector<bool> present(n);
    unsigned good = 0;
    bool need = false;
    for (unsigned i = 0; i < n; ++i) {
      present[i] = u[i] == UnitState::kGood;
      good += present[i];
      if (!present[i] && (i < k || write_ecc)) need = true;
    }
    if (!need && !write_out && !any_regen) return Status::Ok();
    if (good < k) {
      lost[s] = 1;
      return Status::Ok();
    }
    // Re-read the good units (pass 1's buffers are gone) and check them again: only units
    // whose signatures check go into a rebuild.
    for (unsigned i = 0; i < n; ++i) {
      if (!present[i]) continue;
      uint64_t want_sig;
      if (i < k) {
        auto got = read_data_unit(data.get(), *auth, s, i, b.unit[i]);
        if (!got.ok()) return got.status();
        moved(&bytes_read, *got, 1);
        want_sig = auth->data_sig(s, i);
      } else {
        size_t got = 0;
        const RedundancyHeader &h = *ecc[i - k].header;
        ECJIT_RETURN_IF_ERROR(read_at(ecc[i - k].fd.get(), h.unit_offset(s), size_t(unit), b.unit[i], &got, ecc[i - k].path));
        moved(&bytes_read, got, 0);
        want_sig = h.ecc_sig(s);
      }
      auto sig = unit_signature(codec, b.unit[i], unit);
      if (!sig.ok()) return sig.status();
      if (*sig != want_sig)
        return Status(StatusCode::kIoError, abs + ": stripe " + std::to_string(s) + " unit " + std::to_string(i) +
                                                " changed during the repair; nothing more written, run again");
    }
    std::vector<uint8_t *> ptr(b.unit.begin(), b.unit.end());
    if (good < n) ECJIT_RETURN_IF_ERROR(codec.reconstruct(Span<uint8_t *const>(ptr.data(), n), present, unit));
    // Regenerated redundancy files need every stripe's ECC unit: encode from the (rebuilt) data.
    std::vector<bool> have = present;
    if (any_regen) {
      ECJIT_RETURN_IF_ERROR(codec.encode(Span<const uint8_t *const>(ptr.data(), k), Span<uint8_t *const>(ptr.data() + k, m), unit));
      for (unsigned r = 0; r < m; ++r)
        if (regenerate[r]) have[k + r] = false;
    }
    // A rebuilt unit is written only when its signature is the stored one.
    for (unsigned i = 0; i < n; ++i) {
      if (have[i]) continue;
      auto sig = unit_signature(codec, b.unit[i], unit);
      if (!sig.ok()) return sig.status();
      const uint64_t want = i < k ? auth->data_sig(s, i)
                            : ecc[i - k].header && !regenerate[i - k] ? ecc[i - k].header->ecc_sig(s)
                                                                       : expected_ecc_sig(codec, *field, *auth, s, i - k);
      if (*sig != want) return Status(StatusCode::kInternal, abs + ": stripe " + std::to_string(s) +
                                                                " unit " + std::to_string(i) +
                                                                ": rebuilt unit does not match its signature; not written");
      if (i >= k) {
        const unsigned r = i - k;
        if (regenerate[r]) {
          fresh[r].ecc_sig(s) = *sig;
          ECJIT_RETURN_IF_ERROR(write_at(fresh_fd[r].get(), fresh[r].unit_offset(s), size_t(unit), b.unit[i], fresh_tmp[r]));
        } else if (write_ecc) {
          ECJIT_RETURN_IF_ERROR(write_at(ecc[r].fd.get(), ecc[r].header->unit_offset(s), size_t(unit), b.unit[i], ecc[r].path));
        } else {
          continue;
        }
        moved(&bytes_written, unit, 0);
      }
    }
    for (unsigned j = 0; j < k; ++j) {
      const uint64_t off = (s * k + j) * unit;
      if (off >= auth->data.size) break;
      const size_t len = size_t(std::min<uint64_t>(unit, auth->data.size - off));
      if (write_out) {
        ECJIT_RETURN_IF_ERROR(write_at(out.get(), off, len, b.unit[j], out_tmp));
      } else if (!present[j]) {
        ECJIT_RETURN_IF_ERROR(write_at(data.get(), off, len, b.unit[j], abs));
        data_written.store(true);
      } else {
        continue;
      }
      moved(&bytes_written, len, 0);
    }
    return Status::Ok();
  });
  tick(0, 0, true);
  if (!st.ok()) {
    if (write_out) ::unlink(out_tmp.c_str());
    for (unsigned r = 0; r < m; ++r)
      if (regenerate[r]) ::unlink(fresh_tmp[r].c_str());
    return st;
  }
  uint64_t n_lost = 0;
  for (uint64_t s = 0; s < rep.stripes; ++s) n_lost += lost[s];
  for (UnitDamage &d : rep.damage)
    d.repaired = !lost[d.stripe] && (d.unit < k || (write_ecc && !(regenerate[d.unit - k] && n_lost)));
  // Finish: sizes, mtimes, syncs, renames.
  if (write_out && n_lost) {
    // A restored copy with holes would pass for the file: none is written.
    ::unlink(out_tmp.c_str());
    rep.notes.push_back(std::to_string(n_lost) + " stripes cannot be rebuilt; nothing written to " + to);
  } else if (write_out) {
    ECJIT_RETURN_IF_ERROR(set_mtime(out.get(), auth->data.mtime_ns, out_tmp));
    ECJIT_RETURN_IF_ERROR(sync_file(out.get(), out_tmp));
    if (::rename(out_tmp.c_str(), absolute_path(to).c_str()) != 0)
      return Status(StatusCode::kIoError, to + ": rename: " + std::strerror(errno));
    ECJIT_RETURN_IF_ERROR(sync_dir(dir_name(absolute_path(to))));
  } else if (!exists && n_lost) {
    // Nothing of the file was there and not all of it can be rebuilt: no file of holes.
    ::unlink(abs.c_str());
    rep.notes.push_back(std::to_string(n_lost) + " stripes cannot be rebuilt; " + abs + " not created");
  } else if (data_written.load() || cur.size != auth->data.size || !exists) {
    ECJIT_RETURN_IF_ERROR(sync_file(data.get(), abs));
    // The protected identity again: later runs check it as protected (units still bad are
    // damage, not a modification).
    ECJIT_RETURN_IF_ERROR(set_mtime(data.get(), auth->data.mtime_ns, abs));
  }
  for (unsigned r = 0; r < m; ++r) {
    if (regenerate[r]) {
      if (n_lost) {  // a redundancy file with holes would claim units it does not have
        ::unlink(fresh_tmp[r].c_str());
        continue;
      }
      const std::vector<uint8_t> bytes = fresh[r].serialize();
      ECJIT_RETURN_IF_ERROR(write_at(fresh_fd[r].get(), 0, bytes.size(), bytes.data(), fresh_tmp[r]));
      ECJIT_RETURN_IF_ERROR(sync_file(fresh_fd[r].get(), fresh_tmp[r]));
      if (::rename(fresh_tmp[r].c_str(), ecc[r].path.c_str()) != 0)
        return Status(StatusCode::kIoError, ecc[r].path + ": rename: " + std::strerror(errno));
      rep.notes.push_back(ecc[r].path + ": rewritten");
    } else if (write_ecc && ecc[r].fd.valid()) {
      ECJIT_RETURN_IF_ERROR(sync_file(ecc[r].fd.get(), ecc[r].path));
    }
  }
  if (any_regen) ECJIT_RETURN_IF_ERROR(sync_dir(dir_name(ecc_base(abs))));
  if (n_lost) rep.verdict = Verdict::kDataLost;
  else if (damaged || any_regen) rep.verdict = Verdict::kRepaired;
  else rep.verdict = Verdict::kClean;
  rep.bytes_read = bytes_read.load();
  rep.bytes_written = bytes_written.load();
  rep.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return rep;
}

FileProtector::FileProtector(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
FileProtector::~FileProtector() = default;

Result<std::unique_ptr<FileProtector>> FileProtector::create(Jit &jit, const ProtectOptions &options) {
  if (options.unit != 0 && (options.unit % 64 != 0 || options.unit > kMaxUnit))
    return Status(StatusCode::kInvalidArgument,
                  "unit " + std::to_string(options.unit) + " bytes: must be a positive multiple of 64, at most 256 MiB");
  auto spec = CodeSpec::parse(options.spec.empty() ? ProtectOptions::kDefaultSpec : options.spec);
  if (!spec.ok()) return spec.status();
  if (spec->bitmatrix())
    return Status(StatusCode::kUnsupported,
                  "'" + options.spec + "' is a bit-matrix code: file protection stores algebraic signatures, "
                  "which need a code over GF(2^l) symbols (rs-vand, rs-cauchy, ...)");
  auto codec = jit.codec(*spec);
  if (!codec.ok()) return codec.status();
  return std::unique_ptr<FileProtector>(new FileProtector(std::make_unique<Impl>(jit, options, *codec)));
}

void FileProtector::on_progress(std::function<void(const Progress &)> callback) {
  impl_->progress_ = std::move(callback);
}
Result<std::vector<std::string>> FileProtector::expand(const std::vector<std::string> &paths) const {
  return impl_->expand(paths);
}
Result<FileReport> FileProtector::protect(const std::string &path) { return impl_->protect(path); }
Result<FileReport> FileProtector::scrub(const std::string &path, bool repair) {
  return impl_->check(path, repair, false, "");
}
Result<FileReport> FileProtector::restore(const std::string &path, const std::string &to) {
  return impl_->check(path, true, true, to);
}
std::string FileProtector::redundancy_path(const std::string &path, unsigned r) const {
  return impl_->redundancy_path(path, r);
}

}  // namespace ecjit::files
