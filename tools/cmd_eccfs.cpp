// `ecjit eccfs`: a tree's changelog and job queue in Redis, and the workers that protect its files (docs/eccfs.md).
#include <limits.h>
#include <signal.h>
#include <stdlib.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

#include "ecjit/file_protection.h"
#include "files/eccfs/changelog.h"
#include "files/eccfs/monitor.h"
#include "files/eccfs/tree_protector.h"
#include "files/eccfs/worker.h"
#include "tools/args.h"
#include "tools/commands.h"

namespace ecjit::tools {
namespace {

const char kCmd[] = "eccfs";
std::atomic<bool> g_stop{false};  // SIGINT / SIGTERM: workers and the monitor finish and return

Option redis_option() {
  return {"redis", "URL", "the tree's Redis, redis://HOST:PORT[/DB] (default $ECJIT_REDIS, else redis://127.0.0.1:6379)"};
}

std::string redis_url(const Args &a) {
  if (a.has("redis")) return a.get("redis");
  const char *env = std::getenv("ECJIT_REDIS");
  return env && *env ? env : "redis://127.0.0.1:6379";
}

// Durations: a number with ms, s (the default), m or h.
bool parse_duration(const std::string &text, uint64_t *ms) {
  std::string digits = text;
  uint64_t scale = 1000;
  for (const auto &[suffix, s] : {std::pair<const char *, uint64_t>{"ms", 1}, {"s", 1000}, {"m", 60000}, {"h", 3600000}}) {
    const std::string sfx = suffix;
    if (text.size() > sfx.size() && text.compare(text.size() - sfx.size(), sfx.size(), sfx) == 0) {
      digits = text.substr(0, text.size() - sfx.size());
      scale = s;
      break;
    }
  }
  uint64_t v = 0;
  if (!parse_u64(digits, &v) || v > UINT64_MAX / scale) return false;
  *ms = v * scale;
  return true;
}

std::string sub_cmd(const std::string &sub) { return std::string(kCmd) + " " + sub; }

Result<std::unique_ptr<eccfs::Changelog>> open(const Args &a, uint64_t patience_ms = 2000) {
  return eccfs::Changelog::connect(redis_url(a), patience_ms);
}

// A failed connection: a bad URL, or no tree at it, is a usage error (2); an unreachable
// server a failure (1).
int connect_error(const std::string &cmd, const Status &st) {
  return st.code() == StatusCode::kInvalidArgument ? usage_error(cmd, st.message()) : runtime_error(cmd, st.message());
}

std::string absolute(const std::string &p) {
  char buf[PATH_MAX];
  return ::realpath(p.c_str(), buf) ? std::string(buf) : "";
}

int run_init(int argc, char **argv) {
  CommandDef d;
  d.name = sub_cmd("init");
  d.synopsis = "--root DIR --ecc-dir DIR[,DIR...] [--spec S] [--unit SIZE] [--delay 30s] [--redis URL]";
  d.summary = "store a tree's configuration in Redis";
  d.details = "Names the tree whose files the workers protect and where their redundancy goes (a\n"
              "directory on another failure domain; each data file's redundancy mirrors its path\n"
              "under it). A file is encoded once it has been quiet for --delay after its last\n"
              "change. Running init again replaces the configuration; pending changes stay.";
  d.options = {redis_option(),
               {"root", "DIR", "the tree to protect"},
               {"ecc-dir", "DIR[,DIR...]", "where the redundancy files go; several DIRs are failure domains, redundancy file r of every file in the r-th (at least m)"},
               {"spec", "S", "code of new redundancy (default the file protector's, rs-vand:k=10,m=4)"},
               {"unit", "SIZE", "bytes per unit, e.g. 1M (default the file protector's, 1 MiB)"},
               {"delay", "TIME", "quiet period before a changed file is encoded: 500ms, 30s, 5m (default 30s)"}};
  Args a;
  if (auto done = parse_command(d, argc, argv, &a)) return *done;
  if (!a.has("root") || !a.has("ecc-dir")) return usage_error(d.name, "give --root DIR and --ecc-dir DIR");
  eccfs::TreeConfig c;
  c.root = absolute(a.get("root"));
  if (c.root.empty()) return usage_error(d.name, "--root " + a.get("root") + ": no such directory");
  files::ProtectOptions dirs;
  files::set_redundancy_dirs(dirs, a.get("ecc-dir"));
  if (dirs.ecc_domains.empty()) dirs.ecc_domains.push_back(dirs.ecc_dir);
  for (const std::string &given : dirs.ecc_domains) {
    const std::string dir = absolute(given);
    if (dir.empty()) return usage_error(d.name, "--ecc-dir " + given + ": no such directory");
    if (dir == c.root || dir.rfind(c.root + "/", 0) == 0)
      return usage_error(d.name, "--ecc-dir " + given + " must lie outside --root (another failure domain)");
    c.ecc_dir += (c.ecc_dir.empty() ? "" : ",") + dir;
  }
  c.spec = a.get("spec");
  if (a.has("unit") && !parse_size(a.get("unit"), &c.unit)) return usage_error(d.name, "--unit '" + a.get("unit") + "' is not a size");
  if (a.has("delay") && !parse_duration(a.get("delay"), &c.delay_ms))
    return usage_error(d.name, "--delay '" + a.get("delay") + "' is not a duration (e.g. 500ms, 30s, 5m)");
  {  // the code, unit and domains as the workers will take them: bad ones refused now
    eccfs::TreeConfig check = c;
    if (check.spec.empty()) check.spec = files::ProtectOptions::kDefaultSpec;
    auto tp = eccfs::open_tree_protector(check);
    if (!tp.ok()) return usage_error(d.name, tp.status().message());
  }
  auto cl = open(a);
  if (!cl.ok()) return connect_error(d.name, cl.status());
  if (Status st = (*cl)->init(c); !st.ok()) return runtime_error(d.name, st.message());
  std::printf("eccfs: tree %s, redundancy in %s, delay %llu ms, in %s\n", c.root.c_str(), c.ecc_dir.c_str(),
              (unsigned long long)c.delay_ms, redis_url(a).c_str());
  return 0;
}

int run_notify(int argc, char **argv) {
  CommandDef d;
  d.name = sub_cmd("notify");
  d.synopsis = "FILE [OFFSET LEN] [--removed] [--redis URL]";
  d.summary = "record a change of a file (for applications and hooks)";
  d.details = "Records that FILE (inside the tree's root) was written - bytes [OFFSET, OFFSET + LEN),\n"
              "or the whole file - or, with --removed, deleted. Changes of one file merge; it is\n"
              "encoded once quiet for the tree's delay.";
  d.options = {redis_option(), {"removed", "", "the file was deleted: its redundancy goes"}};
  d.positional = "FILE [OFFSET LEN]";
  Args a;
  if (auto done = parse_command(d, argc, argv, &a)) return *done;
  const auto &pos = a.positional();
  if (pos.size() != 1 && pos.size() != 3) return usage_error(d.name, "give FILE, or FILE OFFSET LEN");
  uint64_t off = 0, len = 0;
  if (pos.size() == 3 && (!parse_u64(pos[1], &off) || !parse_u64(pos[2], &len) || len > uint64_t(INT64_MAX)))
    return usage_error(d.name, "OFFSET and LEN must be byte counts");
  auto cl = open(a);
  if (!cl.ok()) return connect_error(d.name, cl.status());
  auto tree = (*cl)->config();
  if (!tree.ok()) return connect_error(d.name, tree.status());
  // The file's path under the root: its directory resolved (the file itself may be gone).
  const std::string &file = pos[0];
  const size_t slash = file.rfind('/');
  const std::string dir = absolute(slash == std::string::npos ? "." : slash == 0 ? "/" : file.substr(0, slash));
  const std::string full = dir + "/" + (slash == std::string::npos ? file : file.substr(slash + 1));
  if (dir.empty() || full.rfind(tree->root + "/", 0) != 0)
    return usage_error(d.name, file + " is not inside the tree's root " + tree->root);
  const bool removed = a.has("removed");
  if (Status st = (*cl)->notify(full.substr(tree->root.size() + 1), removed, off, pos.size() == 3 ? int64_t(len) : -1,
                                eccfs::now_ms());
      !st.ok())
    return runtime_error(d.name, st.message());
  return 0;
}

int run_worker_cmd(int argc, char **argv) {
  CommandDef d;
  d.name = sub_cmd("worker");
  d.synopsis = "[--redis URL] [--name N] [--lease 60s] [--until-idle] [--max-jobs N] [--rate BYTES/S]";
  d.summary = "protect the tree's changed files: lease, encode, complete";
  d.details = "Leases files whose changes have been quiet for the tree's delay, re-encodes their\n"
              "changed stripes (ecjit protect's format and guarantees), removes the redundancy of\n"
              "deleted files, and completes the job. Any number of workers, on any machines that\n"
              "mount the tree and reach Redis; a worker that dies loses nothing: its lease expires\n"
              "and another redoes the job. A file that fails (unreadable, changed while read) is\n"
              "retried 5 s later and its error kept for `eccfs status`. SIGINT / SIGTERM: finish\n"
              "the job in hand, then stop.";
  d.options = {redis_option(),
               {"name", "N", "this worker's name (default host:pid)"},
               {"lease", "TIME", "a job's lease, renewed while it runs (default 60s)"},
               {"until-idle", "", "stop once nothing is pending or leased"},
               {"max-jobs", "N", "stop after N jobs"},
               {"rate", "BYTES", "bytes per second read and written, e.g. 100M (default unlimited)"}};
  d.exit_status = "0 stopped as asked, 1 Redis unreachable, 2 bad arguments (a bad URL, or no tree initialised there)";
  Args a;
  if (auto done = parse_command(d, argc, argv, &a)) return *done;
  eccfs::WorkerOptions o;
  o.redis_url = redis_url(a);
  o.name = a.get("name");
  if (a.has("lease") && (!parse_duration(a.get("lease"), &o.lease_ms) || o.lease_ms < 300))
    return usage_error(d.name, "--lease '" + a.get("lease") + "' is not a duration of at least 300ms");
  if (a.has("max-jobs") && !parse_u64(a.get("max-jobs"), &o.max_jobs)) return usage_error(d.name, "--max-jobs must be a number");
  if (a.has("rate") && !parse_size(a.get("rate"), &o.max_rate)) return usage_error(d.name, "--rate must be a size");
  o.until_idle = a.has("until-idle");
  o.stop = &g_stop;
  signal(SIGINT, [](int) { g_stop.store(true); });
  signal(SIGTERM, [](int) { g_stop.store(true); });
  auto rep = eccfs::run_worker(o, [](const std::string &line) {
    std::printf("eccfs worker: %s\n", line.c_str());
    std::fflush(stdout);
  });
  if (!rep.ok()) return connect_error(d.name, rep.status());
  std::printf("eccfs worker: %llu jobs: %llu files protected, %llu removed, %llu failed, %llu leases lost; %llu bytes "
              "read, %llu written\n",
              (unsigned long long)rep->jobs, (unsigned long long)rep->protected_files, (unsigned long long)rep->removed,
              (unsigned long long)rep->failed, (unsigned long long)rep->lost_leases, (unsigned long long)rep->bytes_read,
              (unsigned long long)rep->bytes_written);
  return 0;
}

int run_monitor_cmd(int argc, char **argv) {
  CommandDef d;
  d.name = sub_cmd("monitor");
  d.synopsis = "[--redis URL]";
  d.summary = "record the tree's changes as they happen (inotify)";
  d.details = "Watches every directory of the tree's root (new ones as they appear) and records each\n"
              "file closed after writing, moved in, moved out or deleted. Changes wait in memory\n"
              "while Redis is unreachable. Run it on the machine where the files are written (a\n"
              "local or NFS-exported file system: inotify sees only this machine's writes); after\n"
              "downtime, or elsewhere, `eccfs scan`. SIGINT / SIGTERM stops it.";
  d.options = {redis_option()};
  d.exit_status = "0 stopped as asked, 1 inotify or Redis failed, 2 bad arguments (no tree)";
  Args a;
  if (auto done = parse_command(d, argc, argv, &a)) return *done;
  signal(SIGINT, [](int) { g_stop.store(true); });
  signal(SIGTERM, [](int) { g_stop.store(true); });
  auto rep = eccfs::run_monitor(redis_url(a), g_stop, [](const std::string &line) {
    std::printf("eccfs monitor: %s\n", line.c_str());
    std::fflush(stdout);
  });
  if (!rep.ok()) return connect_error(d.name, rep.status());
  std::printf("eccfs monitor: %llu changes recorded, %llu directories watched, %llu overflows\n",
              (unsigned long long)rep->notes, (unsigned long long)rep->directories, (unsigned long long)rep->overflows);
  return 0;
}

int run_scan(int argc, char **argv) {
  CommandDef d;
  d.name = sub_cmd("scan");
  d.synopsis = "[--redis URL]";
  d.summary = "record every file of the tree (after downtime, or without inotify)";
  d.details = "Walks the tree's root and records every regular file as written and every file whose\n"
              "redundancy remains but whose data is gone as deleted. Workers skip files whose size\n"
              "and mtime are as protected without reading them.";
  d.options = {redis_option()};
  Args a;
  if (auto done = parse_command(d, argc, argv, &a)) return *done;
  auto n = eccfs::scan_tree(redis_url(a), [](const std::string &line) { std::printf("eccfs scan: %s\n", line.c_str()); });
  if (!n.ok()) return connect_error(d.name, n.status());
  return 0;
}

int run_status(int argc, char **argv) {
  CommandDef d;
  d.name = sub_cmd("status");
  d.synopsis = "[--json] [--redis URL]";
  d.summary = "pending changes, leased jobs, live workers, the oldest unprotected change, errors";
  d.options = {redis_option(), {"json", "", "one JSON object instead of lines"}};
  Args a;
  if (auto done = parse_command(d, argc, argv, &a)) return *done;
  auto cl = open(a);
  if (!cl.ok()) return connect_error(d.name, cl.status());
  auto tree = (*cl)->config();
  if (!tree.ok()) return connect_error(d.name, tree.status());
  auto s = (*cl)->status(eccfs::now_ms());
  if (!s.ok()) return runtime_error(d.name, s.status().message());
  if (a.has("json")) {
    std::printf("{\"root\":\"%s\",\"pending\":%llu,\"due\":%llu,\"leased\":%llu,\"workers\":%llu,\"done\":%llu,"
                "\"failed\":%llu,\"expired\":%llu,\"oldest_ms\":%lld,\"errors\":%zu}\n",
                tree->root.c_str(), (unsigned long long)s->pending, (unsigned long long)s->due,
                (unsigned long long)s->leased, (unsigned long long)s->workers, (unsigned long long)s->done,
                (unsigned long long)s->failed, (unsigned long long)s->expired, (long long)s->oldest_ms, s->errors.size());
    return 0;
  }
  std::printf("tree:      %s (redundancy in %s, delay %llu ms)\n", tree->root.c_str(), tree->ecc_dir.c_str(),
              (unsigned long long)tree->delay_ms);
  std::printf("pending:   %llu files (%llu due), %llu being encoded, %llu workers alive\n", (unsigned long long)s->pending,
              (unsigned long long)s->due, (unsigned long long)s->leased, (unsigned long long)s->workers);
  std::printf("jobs:      %llu done, %llu failed (retried), %llu leases expired\n", (unsigned long long)s->done,
              (unsigned long long)s->failed, (unsigned long long)s->expired);
  if (s->oldest_ms >= 0) std::printf("oldest:    an unprotected change %.1f s old\n", s->oldest_ms / 1000.0);
  for (const std::string &e : s->errors) std::printf("error:     %s\n", e.c_str());
  return 0;
}

int run_wait(int argc, char **argv) {
  CommandDef d;
  d.name = sub_cmd("wait");
  d.synopsis = "[--timeout TIME] [--redis URL]";
  d.summary = "wait until no change is pending or being encoded";
  d.options = {redis_option(), {"timeout", "TIME", "give up after this long (default: wait forever)"}};
  d.exit_status = "0 nothing pending, 1 timed out or Redis unreachable, 2 bad arguments";
  Args a;
  if (auto done = parse_command(d, argc, argv, &a)) return *done;
  uint64_t timeout = 0;
  if (a.has("timeout") && !parse_duration(a.get("timeout"), &timeout))
    return usage_error(d.name, "--timeout '" + a.get("timeout") + "' is not a duration");
  auto cl = open(a, 30000);
  if (!cl.ok()) return connect_error(d.name, cl.status());
  const auto t0 = std::chrono::steady_clock::now();
  for (;;) {
    auto s = (*cl)->status(eccfs::now_ms());
    if (!s.ok()) return runtime_error(d.name, s.status().message());
    if (s->pending == 0 && s->leased == 0) return 0;
    const auto waited = uint64_t(std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count());
    if (timeout && waited >= timeout)
      return runtime_error(d.name, "timed out: " + std::to_string(s->pending) + " pending, " + std::to_string(s->leased) +
                                       " being encoded");
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

}  // namespace

int cmd_eccfs(int argc, char **argv) {
  const std::string sub = argc > 0 ? argv[0] : "";
  if (sub == "init") return run_init(argc - 1, argv + 1);
  if (sub == "notify") return run_notify(argc - 1, argv + 1);
  if (sub == "worker") return run_worker_cmd(argc - 1, argv + 1);
  if (sub == "status") return run_status(argc - 1, argv + 1);
  if (sub == "monitor") return run_monitor_cmd(argc - 1, argv + 1);
  if (sub == "scan") return run_scan(argc - 1, argv + 1);
  if (sub == "wait") return run_wait(argc - 1, argv + 1);
  const bool help = sub == "--help" || sub == "-h" || sub == "help";
  std::FILE *out = help ? stdout : stderr;
  std::fprintf(out,
               "usage: ecjit eccfs <init|notify|monitor|scan|worker|status|wait> [options]   (each takes --help)\n\n"
               "A tree's files protected by workers on any number of machines around one Redis: changes are\n"
               "recorded (notify), merged per file and leased to workers once quiet; a worker re-encodes the\n"
               "changed stripes into the tree's redundancy directory (ecjit protect's format). docs/eccfs.md.\n"
               "  init     store the tree's root, redundancy directory, code, unit and delay\n"
               "  notify   record a change of a file (for applications and hooks)\n"
               "  monitor  record the tree's changes as they happen (inotify)\n"
               "  scan     record every file of the tree (after downtime, or without inotify)\n"
               "  worker   lease, encode and complete jobs\n"
               "  status   pending changes, jobs, workers, the oldest unprotected change, errors\n"
               "  wait     return once nothing is pending\n"
               "\nexit status: 0 success, 1 Redis unreachable (or a failure the message names), 2 bad arguments\n"
               "(a bad URL, no tree initialised at it, a file outside the root)\n");
  if (help) return 0;
  if (!sub.empty()) std::fprintf(stderr, "ecjit eccfs: error: unknown subcommand '%s'\n", sub.c_str());
  return 2;
}

}  // namespace ecjit::tools
