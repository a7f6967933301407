// ecjit protect / scrub / restore: redundancy files for ordinary files, with a progress line
// on a terminal and a --json summary (files does the work).
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "ecjit/file_protection.h"
#include "ecjit/jit.h"
#include "tools/args.h"
#include "tools/commands.h"

namespace ecjit::tools {
namespace {

// The path a report names (reports carry absolute paths).
std::string absolute_path_of(const std::string &path) {
  if (!path.empty() && path[0] == '/') return path;
  char cwd[4096];
  return getcwd(cwd, sizeof cwd) ? std::string(cwd) + "/" + path : path;
}

// Exit status of protect / scrub / restore (documented in every --help and docs/files.md).
constexpr int kExitClean = 0, kExitFailure = 1, kExitRepaired = 3, kExitDamaged = 4, kExitLost = 5;

const char *kExitHelp =
    "0 clean (or protected), 1 an error stopped a file, 2 bad arguments,\n"
    "3 damage found and all of it repaired, 4 damage, a modified, missing, renamed or corrupt\n"
    "file found and not repaired, 5 data lost (more bad units in a stripe than the code can\n"
    "rebuild: the lost byte ranges are listed, and protect refuses the file until --accept-loss).";

const std::vector<Option> kCommonOptions = {
    {"ecc-dir", "DIR[,DIR...]", "redundancy under DIR (mirroring absolute paths) instead of .ecjit/ beside each file; several DIRs are failure domains, redundancy file r of every file in the r-th (at least m of them)"},
    {"threads", "N", "workers: small files side by side, a large file's stripes shared out (0, the default: one per hardware thread)"},
    {"max-rate", "RATE", "cap bytes read + written per second, e.g. 50M (default: no cap)"},
    {"json", "", "print a machine-readable summary on stdout instead of the text report"},
    {"quiet", "", "print only problems (no progress line, no report of a clean, unchanged or protected file)"},
    {"verbose", "", "also name every symbolic link and special file left out (the summary counts them)"},
};

CommandDef protect_def() {
  CommandDef d{"protect", "PATH... [--spec S] [--unit SIZE] [--ecc-dir DIR] [--force]",
               "write redundancy files for files (directories are walked)",
               "Cuts each file into stripes of k units and writes m redundancy files holding the ECC\n"
               "units and, in a checksummed header, the algebraic signature of every data and ECC unit\n"
               "(docs/files.md). A file protected before is updated: only stripes whose data changed are\n"
               "re-encoded; a file whose size and mtime are as protected is skipped. New redundancy is\n"
               "written to temporary files, fsynced and renamed: an interrupted run leaves the old\n"
               "redundancy valid. The data files are only read. A file whose size and mtime are as\n"
               "protected but whose data differs from its signatures is corrupt, never re-encoded; a file\n"
               "a check found data lost in is refused until --accept-loss.",
               {{"spec", "S", "code over GF(2^l) symbols (default: a protected file's own, else rs-vand:k=10,m=4)"},
                {"unit", "SIZE", "bytes per unit, a multiple of 64 (default: a protected file's own, else 1M)"},
                {"force", "", "read and re-encode even files whose size and mtime are as protected (units that fail their signatures are reported, not re-encoded)"},
                {"accept-loss", "", "protect files a check found data lost in, as they are now"}},
               "PATH..."};
  d.options.insert(d.options.end(), kCommonOptions.begin(), kCommonOptions.end());
  d.exit_status = kExitHelp;
  return d;
}

CommandDef scrub_def() {
  CommandDef d{"scrub", "PATH... [--repair] [--ecc-dir DIR]",
               "check protected files by signatures; --repair rebuilds bad units",
               "Checks every data unit and ECC unit against the signatures stored with the redundancy\n"
               "(which unit is corrupt), and that the redundancy is consistent with the data (Nešković\n"
               "2018, eq. 2.37, on signatures only: the RAID write hole). With --repair, bad units are\n"
               "rebuilt from units whose signatures check and rewritten in place, and missing or torn\n"
               "redundancy files are written afresh; a rebuilt unit is written only when its signature\n"
               "is the stored one. A file changed after protection (new mtime, units differ) is reported\n"
               "as modified and never rolled back (ecjit restore does that). Every protected file of a\n"
               "walked directory is accounted for: one deleted after protection is missing, one whose\n"
               "inode now has another name renamed (ecjit prune drops their redundancy).",
               {{"repair", "", "rebuild and rewrite bad units and redundancy files"},
                {"orphans", "", "only list protected files that are gone (missing or renamed)"}},
               "PATH..."};
  d.options.insert(d.options.end(), kCommonOptions.begin(), kCommonOptions.end());
  d.exit_status = kExitHelp;
  return d;
}

CommandDef restore_def() {
  CommandDef d{"restore", "FILE [--to OUT] [--ecc-dir DIR]",
               "rebuild a file's protected contents from its redundancy",
               "Rebuilds a data file that is missing, truncated, partly unreadable, corrupt or modified\n"
               "since protection back to its protected contents: in place (only the bad units are\n"
               "written, then its size and mtime are set back), or with --to into a new file (written to\n"
               "a temporary file and renamed; FILE is only read). A file is rebuilt only as far as each\n"
               "stripe has k good units of k + m: where one does not, the lost byte ranges are listed,\n"
               "the file keeps its size and mtime, and the recoverable parts of a file that is gone (or\n"
               "of OUT) are written to NAME.ecjit-partial.",
               {{"to", "OUT", "write the restored file to OUT (a directory: OUT/NAME) instead of in place"},
                {"overwrite", "", "let --to replace an existing file"}},
               "FILE"};
  d.options.insert(d.options.end(), kCommonOptions.begin(), kCommonOptions.end());
  d.exit_status = kExitHelp;
  return d;
}

CommandDef prune_def() {
  CommandDef d{"prune", "PATH... [--apply] [--ecc-dir DIR]",
               "drop the redundancy of protected files that are gone (dry run by default)",
               "Lists the redundancy files (and lock and loss record) of every protected file under the\n"
               "paths whose data file no longer exists - deleted or renamed since protection, as scrub\n"
               "reports them - and with --apply removes them. Without --apply nothing is removed.",
               {{"apply", "", "remove the files listed (default: only list them)"}},
               "PATH..."};
  for (const Option &o : kCommonOptions)
    if (std::string(o.name) == "ecc-dir" || std::string(o.name) == "json") d.options.push_back(o);
  d.exit_status = "0 done (or nothing to prune), 1 an error, 2 bad arguments";
  return d;
}

std::string json_string(const std::string &s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += char(c);
    } else if (c < 0x20) {
      char buf[8];
      snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += char(c);
    }
  }
  return out + "\"";
}

int exit_for(files::Verdict v) {
  switch (v) {
    case files::Verdict::kRepaired: return kExitRepaired;
    case files::Verdict::kDamaged:
    case files::Verdict::kModified:
    case files::Verdict::kMissing:
    case files::Verdict::kRenamed:
    case files::Verdict::kCorrupt:
    case files::Verdict::kUnprotected: return kExitDamaged;
    case files::Verdict::kDataLost: return kExitLost;
    default: return kExitClean;
  }
}
// Worst first: lost > failure > damaged > repaired > clean.
int worse(int a, int b) {
  static const int rank[] = {0, 3, 0, 1, 2, 4};  // by exit code 0..5
  return rank[b] > rank[a] ? b : a;
}

// One progress line on stderr, redrawn in place; files may report from several threads.
class ProgressLine {
 public:
  ProgressLine(bool on, size_t files) : on_(on), files_(files) {}
  void draw(const files::Progress &p) {
    if (!on_) return;
    std::lock_guard<std::mutex> lock(mu_);
    auto &f = per_file_[p.path];
    if (f.start == std::chrono::steady_clock::time_point()) f.start = std::chrono::steady_clock::now();
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - f.start).count();
    // A rate only once there is time to divide by (the first sample comes at once).
    const double rate = secs >= 0.2 ? p.bytes_done / secs / 1e6 : 0;
    std::string eta = "--";
    if (p.units_done && p.units_total > p.units_done) {
      const double left = secs * double(p.units_total - p.units_done) / double(p.units_done);
      eta = std::to_string(int(left) / 60) + ":" + (int(left) % 60 < 10 ? "0" : "") + std::to_string(int(left) % 60);
    } else if (p.units_done >= p.units_total) {
      eta = "0:00";
    }
    std::string name = p.path;
    if (name.size() > 40) name = "..." + name.substr(name.size() - 37);
    char speed[32] = "-- MB/s";
    if (secs >= 0.2) snprintf(speed, sizeof speed, "%.1f MB/s", rate);
    std::fprintf(stderr, "\r\033[K[%zu/%zu done] %s  units %llu/%llu  %s  ETA %s", done_, files_, name.c_str(),
                 static_cast<unsigned long long>(p.units_done), static_cast<unsigned long long>(p.units_total), speed,
                 eta.c_str());
    drawn_ = true;
  }
  // A file finished: its line is cleared before its report is printed.
  void file_done(const std::string &path) {
    std::lock_guard<std::mutex> lock(mu_);
    ++done_;
    per_file_.erase(path);
    if (drawn_) std::fprintf(stderr, "\r\033[K");
    drawn_ = false;
  }

 private:
  struct FileState {
    std::chrono::steady_clock::time_point start;
  };
  bool on_;
  size_t files_, done_ = 0;
  bool drawn_ = false;
  std::mutex mu_;
  std::map<std::string, FileState> per_file_;
};

std::string human_bytes(uint64_t b) {
  char buf[32];
  if (b < 1024) snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(b));
  else if (b < (uint64_t(1) << 20)) snprintf(buf, sizeof buf, "%.1f KiB", b / 1024.0);
  else if (b < (uint64_t(1) << 30)) snprintf(buf, sizeof buf, "%.1f MiB", b / 1048576.0);
  else snprintf(buf, sizeof buf, "%.2f GiB", b / 1073741824.0);
  return buf;
}

void print_report(const files::FileReport &r, const std::string &command) {
  const double mb = double(r.bytes_read + r.bytes_written) / 1e6;
  std::printf("%-11s %s", files::verdict_name(r.verdict), r.path.c_str());
  const bool sized = r.verdict != files::Verdict::kUnprotected && r.verdict != files::Verdict::kMissing &&
                     r.verdict != files::Verdict::kRenamed;
  if (command == "protect" && r.verdict != files::Verdict::kUnchanged && r.verdict != files::Verdict::kDataLost)
    std::printf("  (%llu of %llu stripes encoded, %s, %.1f MB/s)", static_cast<unsigned long long>(r.stripes_encoded),
                static_cast<unsigned long long>(r.stripes), human_bytes(r.file_size).c_str(),
                r.seconds > 0 ? mb / r.seconds : 0.0);
  else if (command != "protect" && sized)
    std::printf("  (%llu stripes, %s, %.1f MB/s)", static_cast<unsigned long long>(r.stripes),
                human_bytes(r.file_size).c_str(), r.seconds > 0 ? mb / r.seconds : 0.0);
  std::printf("\n");
  size_t shown = 0;
  for (const files::UnitDamage &d : r.damage) {
    if (++shown > 12) {
      std::printf("    ... %zu more bad units\n", r.damage.size() - 12);
      break;
    }
    const bool data = d.unit < r.k;
    std::printf("    stripe %llu %s unit %u: %s%s\n", static_cast<unsigned long long>(d.stripe), data ? "data" : "ecc",
                data ? d.unit : d.unit - r.k, d.what.c_str(), d.repaired ? ", repaired" : "");
  }
  shown = 0;
  for (const files::FileReport::ByteRange &l : r.lost) {
    if (++shown > 12) {
      std::printf("    ... %zu more lost ranges\n", r.lost.size() - 12);
      break;
    }
    std::printf("    lost bytes %llu-%llu (%llu bytes)\n", static_cast<unsigned long long>(l.offset),
                static_cast<unsigned long long>(l.offset + l.length - 1), static_cast<unsigned long long>(l.length));
  }
  for (const std::string &note : r.notes) std::printf("    %s\n", note.c_str());
}

// One file of the JSON summary (schema in docs/files.md): units numbered as in the text, a
// data unit by j in 0..k-1, an ECC unit by r in 0..m-1 (its redundancy file).
void print_json_report(const files::FileReport &r, bool first) {
  std::printf("%s\n    {\"path\": %s, \"verdict\": \"%s\", \"k\": %u, \"m\": %u, \"file_size\": %llu, \"stripes\": %llu, "
              "\"stripes_encoded\": %llu, \"bytes_read\": %llu, \"bytes_written\": %llu, \"seconds\": %.6f, "
              "\"damage\": [",
              first ? "" : ",", json_string(r.path).c_str(), files::verdict_name(r.verdict), r.k, r.m,
              static_cast<unsigned long long>(r.file_size), static_cast<unsigned long long>(r.stripes),
              static_cast<unsigned long long>(r.stripes_encoded), static_cast<unsigned long long>(r.bytes_read),
              static_cast<unsigned long long>(r.bytes_written), r.seconds);
  for (size_t i = 0; i < r.damage.size(); ++i) {
    const files::UnitDamage &d = r.damage[i];
    const bool data = d.unit < r.k;
    std::printf("%s{\"stripe\": %llu, \"kind\": \"%s\", \"unit\": %u, \"what\": \"%s\", \"repaired\": %s}", i ? ", " : "",
                static_cast<unsigned long long>(d.stripe), data ? "data" : "ecc", data ? d.unit : d.unit - r.k,
                d.what.c_str(), d.repaired ? "true" : "false");
  }
  std::printf("], \"lost\": [");
  for (size_t i = 0; i < r.lost.size(); ++i)
    std::printf("%s{\"offset\": %llu, \"length\": %llu}", i ? ", " : "", static_cast<unsigned long long>(r.lost[i].offset),
                static_cast<unsigned long long>(r.lost[i].length));
  std::printf("], \"partial_path\": %s, \"renamed_to\": %s, \"notes\": [",
              r.partial_path.empty() ? "null" : json_string(r.partial_path).c_str(),
              r.renamed_to.empty() ? "null" : json_string(r.renamed_to).c_str());
  for (size_t i = 0; i < r.notes.size(); ++i) std::printf("%s%s", i ? ", " : "", json_string(r.notes[i]).c_str());
  std::printf("]}");
}

// A report --quiet still prints: anything but a clean, unchanged or freshly protected file.
bool is_problem(files::Verdict v) {
  return v != files::Verdict::kClean && v != files::Verdict::kUnchanged && v != files::Verdict::kProtected &&
         v != files::Verdict::kUpdated;
}

void print_json_list(const char *name, const std::vector<std::string> &items) {
  std::printf("\"%s\": [", name);
  for (size_t i = 0; i < items.size(); ++i) std::printf("%s%s", i ? ", " : "", json_string(items[i]).c_str());
  std::printf("]");
}

int run(const CommandDef &def, int argc, char **argv) {
  Args args;
  const std::string cmd = def.name;
  // With --json an error of the arguments or of the set-up is a JSON object on stdout too.
  bool json_wanted = false;
  for (int i = 0; i < argc; ++i) json_wanted = json_wanted || std::string(argv[i]) == "--json";
  auto fail = [&](int code, const std::string &message) {
    if (json_wanted)
      std::printf("{\"schema\": \"ecjit-files/2\", \"command\": \"%s\", \"files\": [], \"error\": %s, \"exit\": %d}\n",
                  cmd.c_str(), json_string(message).c_str(), code);
    return code == 2 ? usage_error(cmd, message) : runtime_error(cmd, message);
  };
  std::string parse_error;
  if (!args.parse(def, argc, argv, &parse_error)) return fail(2, parse_error);
  if (args.help()) {
    print_help(def);
    return kExitClean;
  }
  if (args.positional().empty()) return fail(2, "no " + def.positional + " given (see --help)");
  if (cmd == "restore" && args.positional().size() != 1)
    return fail(2, "restore takes exactly one FILE");
  if (cmd == "restore" && args.has("overwrite") && !args.has("to"))
    return fail(2, "--overwrite is for --to (an in-place restore rewrites only the file's bad units)");
  files::ProtectOptions opt;
  opt.spec = args.get("spec", opt.spec);
  files::set_redundancy_dirs(opt, args.get("ecc-dir"));
  opt.force = args.has("force");
  opt.accept_loss = args.has("accept-loss");
  if (args.has("unit") && (!parse_size(args.get("unit"), &opt.unit) || opt.unit == 0))
    return fail(2, "--unit '" + args.get("unit") + "': expected a size such as 65536, 64K or 1M");
  uint64_t v = 0;
  if (args.has("threads")) {  // 0: one per hardware thread, as everywhere in ecjit
    if (!parse_u64(args.get("threads"), &v) || v > 256)
      return fail(2, "--threads '" + args.get("threads") + "': expected 0..256 (0: one per hardware thread)");
    opt.threads = unsigned(v);
  }
  if (args.has("max-rate") && (!parse_size(args.get("max-rate"), &opt.max_rate) || opt.max_rate == 0))
    return fail(2, "--max-rate '" + args.get("max-rate") + "': expected bytes per second such as 50M");
  const bool json = args.has("json"), quiet = args.has("quiet"), verbose = args.has("verbose");

  JitOptions jo;
  auto jit = Jit::create(jo);
  if (!jit.ok()) return fail(1, jit.status().to_string());
  auto protector = files::FileProtector::create(**jit, opt);
  if (!protector.ok()) {
    const StatusCode c = protector.status().code();
    if (c == StatusCode::kInvalidSpec || c == StatusCode::kUnsupported || c == StatusCode::kInvalidArgument)
      return fail(2, protector.status().to_string());
    return fail(1, protector.status().to_string());
  }
  auto path_error = [&](const Status &st) {
    return fail(st.code() == StatusCode::kInvalidArgument ? 2 : 1, st.message());
  };
  if (cmd == "prune") {
    auto reports = (*protector)->prune(args.positional(), args.has("apply"));
    if (!reports.ok()) return path_error(reports.status());
    if (json) std::printf("{\"schema\": \"ecjit-files/2\", \"command\": \"prune\", \"apply\": %s, \"files\": [",
                          args.has("apply") ? "true" : "false");
    for (size_t i = 0; i < reports->size(); ++i) {
      if (json) print_json_report((*reports)[i], i == 0);
      else print_report((*reports)[i], cmd);
    }
    if (json) std::printf("\n  ], \"exit\": 0}\n");
    else std::printf("%zu protected files gone; %s\n", reports->size(),
                     args.has("apply") ? "their redundancy removed" : "nothing removed (dry run: --apply removes)");
    return kExitClean;
  }
  std::vector<std::string> paths;
  files::Skipped skipped;
  if (cmd == "restore") {
    paths = args.positional();  // the file may be gone: that is what restore is for
  } else {
    // A scrub accounts for every protected file: those gone are checked (missing / renamed) too.
    auto expanded = (*protector)->expand(args.positional(), cmd == "scrub", &skipped);
    if (!expanded.ok()) return path_error(expanded.status());
    paths = std::move(*expanded);
    if (args.has("orphans")) {  // only the protected files that are gone
      std::vector<std::string> gone;
      for (const std::string &p : paths)
        if (::access(p.c_str(), F_OK) != 0) gone.push_back(p);
      paths = std::move(gone);
    }
  }
  ProgressLine line(!json && !quiet && isatty(STDERR_FILENO), paths.size());
  (*protector)->on_progress([&](const files::Progress &p) { line.draw(p); });

  int exit_code = kExitClean;
  std::map<std::string, size_t> counts;
  // restore checks its --to first: a refusal is an argument error, before any report.
  std::optional<Result<files::FileReport>> restored;
  if (cmd == "restore") {
    restored = (*protector)->restore(paths[0], args.get("to"), args.has("overwrite"));
    if (!restored->ok() && restored->status().code() == StatusCode::kInvalidArgument)
      return fail(2, restored->status().message());
  }
  if (json) std::printf("{\"schema\": \"ecjit-files/2\", \"command\": \"%s\", \"files\": [", cmd.c_str());
  bool first = true;
  // Reports in the order files finish (several run side by side).
  auto done = [&](size_t i, const Result<files::FileReport> &r) {
    line.file_done(absolute_path_of(paths[i]));
    if (!r.ok()) {
      std::fprintf(stderr, "ecjit %s: error: %s\n", cmd.c_str(), r.status().to_string().c_str());
      exit_code = worse(exit_code, kExitFailure);
      counts["error"]++;
      if (json) {
        std::printf("%s\n    {\"path\": %s, \"verdict\": \"error\", \"error\": %s}", first ? "" : ",",
                    json_string(paths[i]).c_str(), json_string(r.status().to_string()).c_str());
        first = false;
      }
      return;
    }
    counts[files::verdict_name(r->verdict)]++;
    exit_code = worse(exit_code, exit_for(r->verdict));
    if (json) {
      print_json_report(*r, first);
      first = false;
    } else if (!quiet || is_problem(r->verdict)) {
      print_report(*r, cmd);
    }
    std::fflush(stdout);
  };
  if (cmd == "restore") {
    done(0, *restored);
  } else {
    const auto command = cmd == "protect"      ? files::FileProtector::Command::kProtect
                         : args.has("repair") ? files::FileProtector::Command::kRepair
                                              : files::FileProtector::Command::kScrub;
    (*protector)->run(paths, command, done);
  }
  if (json) {
    std::printf("\n  ], \"skipped\": {");
    print_json_list("symlinks", skipped.symlinks);
    std::printf(", ");
    print_json_list("special", skipped.special);
    std::printf(", ");
    print_json_list("partial", skipped.partial);
    std::printf("}, \"summary\": {");
    bool f = true;
    for (const auto &kv : counts) {
      std::printf("%s\"%s\": %zu", f ? "" : ", ", kv.first.c_str(), kv.second);
      f = false;
    }
    std::printf("}, \"exit\": %d}\n", exit_code);
    return exit_code;
  }
  if (verbose) {
    for (const std::string &l : skipped.symlinks) std::printf("skipped     %s  (symbolic link, not followed)\n", l.c_str());
    for (const std::string &l : skipped.special) std::printf("skipped     %s  (not a regular file)\n", l.c_str());
    for (const std::string &l : skipped.partial)
      std::printf("skipped     %s  (recovered parts of a file with losses)\n", l.c_str());
  }
  const size_t n_skipped = skipped.symlinks.size() + skipped.special.size() + skipped.partial.size();
  if ((paths.size() > 1 || n_skipped) && (!quiet || exit_code != kExitClean)) {
    std::printf("%zu files:", paths.size());
    for (const auto &kv : counts) std::printf(" %zu %s", kv.second, kv.first.c_str());
    if (!skipped.symlinks.empty()) std::printf("; skipped %zu symbolic links", skipped.symlinks.size());
    if (!skipped.special.empty()) std::printf("; skipped %zu special files", skipped.special.size());
    if (!skipped.partial.empty()) std::printf("; skipped %zu .ecjit-partial files", skipped.partial.size());
    std::printf("\n");
  }
  return exit_code;
}

}  // namespace

int cmd_protect(int argc, char **argv) { return run(protect_def(), argc, argv); }
int cmd_scrub(int argc, char **argv) { return run(scrub_def(), argc, argv); }
int cmd_restore(int argc, char **argv) { return run(restore_def(), argc, argv); }
int cmd_prune(int argc, char **argv) { return run(prune_def(), argc, argv); }

}  // namespace ecjit::tools
