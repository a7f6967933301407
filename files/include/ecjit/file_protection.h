// File protection: redundancy files with algebraic signatures beside ordinary data files
// (Nešković 2018, ch. 7.3, ECCFS, with ch. 2.4) - protect, scrub, repair and restore.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ecjit/codec.h"
#include "ecjit/status.h"

namespace ecjit {

class Jit;

namespace files {

// A data file is cut into stripes of k units of `unit` bytes (the last stripe padded with
// zeros); redundancy file r (0..m-1) holds ECC unit r of every stripe after a header with
// the code, the data file's identity and, per stripe, the algebraic signatures of the k
// data units and of that file's ECC unit (docs/files.md has the byte layout).
struct ProtectOptions {
  // Any code over GF(2^l) symbols (signatures need symbols: not the bit-matrix families).
  // Empty: a protected file keeps the code of its redundancy, a new one gets kDefaultSpec.
  std::string spec;
  // Bytes per unit: a multiple of 64, at most 256 MiB. 0: a protected file keeps its unit,
  // a new one gets kDefaultUnit.
  uint64_t unit = 0;
  static constexpr const char *kDefaultSpec = "rs-vand:k=10,m=4";
  static constexpr uint64_t kDefaultUnit = uint64_t(1) << 20;
  // Where redundancy goes: empty = a `.ecjit` directory beside each data file; else this
  // directory, mirroring each data file's absolute path (another file system is another
  // failure domain).
  std::string ecc_dir;
  // Failure domains, instead of ecc_dir: redundancy file r of every file goes in directory
  // ecc_domains[r] (each meant to be its own disk, mount or storage target), mirroring the data
  // file's absolute path as ecc_dir does, so that no domain holds two redundancy files of one
  // file and a lost domain costs each file one of them. A code needs at least m domains
  // (kInvalidArgument). A file's lock, loss record and repair marker live in ecc_domains[0].
  std::vector<std::string> ecc_domains;
  // Workers: 0 = one per hardware thread. run() works small files side by side, one worker
  // each, and shares a large file's stripes out among all of them.
  unsigned threads = 0;
  // Bytes per second read and written in all, 0 = unlimited.
  uint64_t max_rate = 0;
  // Read and re-encode even a file whose size and mtime are as protected: its data units are
  // checked against their stored signatures first, and a stripe with a unit that differs is
  // corrupt (reported, its redundancy kept as it was for a repair), never re-encoded.
  bool force = false;
  // protect a file whose last scrub, repair or restore found data lost (a `<name>.lost`
  // record beside its redundancy): without it protect refuses such a file (kDataLost), as
  // new redundancy would make the loss permanent and pass the damaged file for intact.
  bool accept_loss = false;
};

// Sets where redundancy goes from a list such as a command line gives: one directory is the
// ecc_dir, several separated by commas the failure domains (ecc_domains), "" neither.
void set_redundancy_dirs(ProtectOptions &options, const std::string &list);

// Progress of a file, called from worker threads (at most ~20 times a second per file, and
// once at its end); with run(), several files may report at once.
struct Progress {
  std::string path;
  uint64_t units_done = 0, units_total = 0;  // data units read so far / in the file
  uint64_t bytes_done = 0;                   // bytes read and written so far
};

// What one command found or did to one data file.
enum class Verdict {
  kProtected,   // protect: redundancy written (all stripes encoded)
  kUpdated,     // protect: redundancy rewritten, only changed stripes re-encoded
  kUnchanged,   // protect: size and mtime as protected; nothing read or written
  kClean,       // scrub: every unit matches its signature and the redundancy is consistent
  kDamaged,     // scrub: damage found that the code can repair (run with repair)
  kRepaired,    // scrub --repair / restore: every damaged unit rebuilt and rewritten
  kModified,    // scrub: the data changed after protection (size or mtime differ and units
                // differ): run protect to update, or restore to roll back
  kDataLost,    // some damage is beyond the code (more than m bad units in a stripe):
                // FileReport::lost has the byte ranges; protect refuses the file until
                // ProtectOptions::accept_loss
  kUnprotected, // no usable redundancy file for this data file
  kMissing,     // scrub: the data file is gone but its redundancy is there (deleted after
                // protection: restore brings it back, prune drops the redundancy)
  kRenamed,     // scrub: the data file is gone and a file of the walked tree has its inode
                // (FileReport::renamed_to): protect the new name, prune the old redundancy
  kCorrupt,     // protect: size and mtime as protected but data units differ from their
                // signatures (silent corruption, not an edit): not re-encoded, run a repair
};
const char *verdict_name(Verdict v);

// A unit found bad, and what became of it.
struct UnitDamage {
  uint64_t stripe = 0;
  unsigned unit = 0;       // 0..k-1 data unit j, k..k+m-1 ECC unit r = unit - k (in redundancy file r)
  std::string what;        // "corrupt", "unreadable", "missing", "inconsistent", "stale"
  bool repaired = false;
};

struct FileReport {
  std::string path;
  Verdict verdict = Verdict::kClean;
  unsigned k = 0, m = 0;           // the code's (0 when no redundancy was found)
  uint64_t file_size = 0;
  uint64_t stripes = 0;
  uint64_t stripes_encoded = 0;    // protect: stripes (re-)encoded
  uint64_t bytes_read = 0, bytes_written = 0;
  double seconds = 0;
  std::vector<UnitDamage> damage;  // scrub / restore; protect: corrupt units
  // kDataLost: the byte ranges of the data file that cannot be rebuilt (ascending, merged).
  struct ByteRange {
    uint64_t offset = 0, length = 0;
  };
  std::vector<ByteRange> lost;
  // Where the recoverable parts of a file with lost ranges were written (FILE.ecjit-partial,
  // or OUT.ecjit-partial for a restore into OUT), "" when none was: the protected size with
  // holes at the lost ranges, never the protected mtime.
  std::string partial_path;
  std::string renamed_to;          // kRenamed: the walked file with the protected inode
  std::vector<std::string> notes;  // one line each: redundancy files missing, torn, foreign...
};

// What expand() left out, by kind, named (not protected, checked or counted as files).
struct Skipped {
  std::vector<std::string> symlinks, special;  // links (not followed), FIFOs, sockets, devices
  std::vector<std::string> partial;            // NAME.ecjit-partial: a restore's recoverable parts
};

// Runs the commands on one Jit's codecs. Thread-compatible: one command (or run()) at a time
// per object; separate objects (and processes) may work on different files at once, and on
// one file a second run is refused (a lock file in the redundancy directory).
class FileProtector {
 public:
  // Errors: kInvalidSpec / kUnsupported (the spec, or a bit-matrix code), kInvalidArgument
  // (unit size).
  static Result<std::unique_ptr<FileProtector>> create(Jit &jit, const ProtectOptions &options);
  ~FileProtector();

  void on_progress(std::function<void(const Progress &)> callback);

  // The regular files under each path (a directory is walked; `.ecjit` directories and the
  // ecc_dir are skipped), in order; with `protected_missing`, also every file of a walked
  // directory that has redundancy but no data file (deleted or renamed: scrub reports it).
  // Symbolic links and special files are left out and named in *skipped (when given).
  // Errors: kIoError (a path that does not exist), kInvalidArgument (a path inside a
  // `.ecjit` directory or the ecc_dir: that is redundancy, not data).
  Result<std::vector<std::string>> expand(const std::vector<std::string> &paths, bool protected_missing = false,
                                          Skipped *skipped = nullptr);

  // Writes (or updates) the redundancy of `path`: stripes whose data signatures are unchanged
  // keep their ECC units (the old redundancy file is copied), the others are re-encoded.
  // Crash-safe: new redundancy is written to temporary files, fsynced and renamed; the data
  // file is only read. A data file that changes while it is read is reported (kIoError) and
  // its old redundancy kept. Errors: kIoError (read / write / lock failures, busy).
  Result<FileReport> protect(const std::string &path);

  // Checks every data and ECC unit of `path` against its stored signature and the
  // redundancy's consistency (eq. 2.37, on signatures only). With repair, rebuilds bad units
  // from good ones (only units whose signatures check are used; a rebuilt unit is written
  // only when its signature matches the stored one) and rewrites them in place, redundancy
  // files that are missing or torn included. Never rolls back a modified data file (that is
  // restore's job).
  Result<FileReport> scrub(const std::string &path, bool repair);

  // Rebuilds the protected contents of `path`: in place (missing, truncated, corrupt or
  // modified units rewritten, the size and mtime set back), or into `to` (written to a
  // temporary file and renamed; `path` only read; a directory means `to`/<name>; an
  // existing file is replaced only with `overwrite`, else kInvalidArgument). Where some
  // stripes cannot be rebuilt (kDataLost), nothing passes for the file: in place the
  // recoverable units are written, the lost ranges left as they are and the size and mtime
  // not set back; the recoverable parts of a file that is gone (or of `to`) go to
  // FileReport::partial_path instead. Nothing is left behind on a failure.
  Result<FileReport> restore(const std::string &path, const std::string &to = "", bool overwrite = false);

  // The redundancy files (and lock and loss record) of every file under `paths` whose data
  // file is gone (expand with protected_missing), removed when `apply`, else only listed:
  // one report per such file, verdict kMissing, the files in notes. Errors as expand().
  Result<std::vector<FileReport>> prune(const std::vector<std::string> &paths, bool apply);

  // The command of run().
  enum class Command { kProtect, kScrub, kRepair, kRestore };
  // Runs a command on many files: files of fewer stripes than workers side by side (one worker
  // each, up to `threads` at a time), then the larger ones one at a time with all workers.
  // on_done(index, report) is called once per file as it finishes, one call at a time.
  void run(const std::vector<std::string> &files, Command command,
           const std::function<void(size_t, const Result<FileReport> &)> &on_done);

  // Where redundancy file r of `path` lives.
  std::string redundancy_path(const std::string &path, unsigned r) const;
  // Whether any redundancy file of `path` exists, in any failure domain: with domain 0 (or
  // any one) lost, a file's others still count.
  bool has_redundancy(const std::string &path) const;

  class Impl;

 private:
  explicit FileProtector(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace files
}  // namespace ecjit
