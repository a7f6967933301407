// `ecjit edp`: Shen et al. 2016's evaluation - degraded reads over RDP, X-Code and BP-Code with horizontal, vertical and EDP data placement.
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <random>
#include <cstdio>
#include <cmath>
#include <cstring>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "codes/array_layout.h"
#include "codes/edp.h"
#include "tools/args.h"
#include "tools/commands.h"
#include "tools/array_store.h"
#include "tools/read_trace.h"

namespace ecjit::tools {
namespace {

const char kCmd[] = "edp";

CommandDef edp_def() {
  CommandDef d;
  d.name = kCmd;
  d.synopsis = "[--codes rdp,xcode,bpcode] [--p P] [--workloads W,...] [--reads N] [--element SIZE] [--seed N] [--csv FILE]";
  d.summary = "degraded reads under horizontal, vertical and EDP data placement (Shen et al. 2016)";
  d.details =
      "Replays a synthetic read trace for each of Shen et al. 2016's workloads (Table II: read count and\n"
      "mean size; sizes geometric in 4 KiB units, offsets uniform over 64 GiB, seeded) over a\n"
      "volume striped across the code's disks, element by element, with one disk failed - each\n"
      "disk in turn, averaged. Each stripe's degraded read is planned by codes::plan_degraded_read\n"
      "(every lost element rebuilt from the chain choice that reads the fewest elements).\n"
      "Reported per code, workload and placement: elements read per read (requested + extra),\n"
      "elements read on the most loaded disk (Q_max, Shen et al. 2016, Fig. 15), and a parallel-disk\n"
      "time model: a read lasts as long as its busiest disk's element count (Fig. 14 measures\n"
      "real disks; this is not that). Reductions are EDP's against the other two placements.\n"
      "With --store the reads also run for real on disk files (--reads defaults to 2000 there).";
  d.options = {
      {"codes", "LIST", std::string("array codes (default rdp,xcode,bpcode; known: ") + codes::array_layout_families() + ")"},
      {"p", "P", "the prime of every code (default 7, as Shen et al. 2016)"},
      {"workloads", "LIST", "of mds_0, rsrch_1, web_1, web_3 (default all)"},
      {"reads", "N", "reads per workload (default: Table II's count)"},
      {"element", "SIZE", "element size (default 16K, as Shen et al. 2016)"},
      {"seed", "N", "trace seed (default 1)"},
      {"csv", "FILE", "also write the rows as CSV"},
      {"store", "DIR", "also lay a file over disk files under DIR (one directory per disk) for each code and\n"
                       "placement, and replay the reads on it: pread of the planned cells, lost elements rebuilt\n"
                       "by XOR programs, every byte checked against the file; wall time (page cache, not disks)"},
      {"size", "SIZE", "with --store: the file's size (default 64M; offsets of the trace wrap around it)"},
  };
  return d;
}

std::vector<std::string> split(const std::string &s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

struct Totals {
  double elements = 0;   // cells read, summed over reads
  double max_disk = 0;   // the most loaded disk's cells
  double time = 0;       // sum over reads of the busiest disk's cells in that read
};

// One code, placement and failed disk over a trace; plans memoised per (first, count).
Totals replay(const codes::ArrayLayout &L, const codes::DataPlacement &P, unsigned failed,
              const std::vector<TraceRead> &trace, uint64_t element) {
  const unsigned K = unsigned(P.cell_of.size());
  std::map<std::pair<unsigned, unsigned>, codes::ReadPlan> memo;
  std::vector<double> disk(L.disks, 0);
  std::vector<unsigned> in_read(L.disks);
  Totals t;
  for (const TraceRead &r : trace) {
    std::fill(in_read.begin(), in_read.end(), 0);
    const uint64_t a = r.offset / element, b = (r.offset + r.size - 1) / element;
    for (uint64_t e = a; e <= b;) {
      const unsigned first = unsigned(e % K), count = unsigned(std::min<uint64_t>(b - e + 1, K - first));
      auto it = memo.find({first, count});
      if (it == memo.end()) it = memo.emplace(std::make_pair(first, count), *codes::plan_degraded_read(L, P, failed, first, count)).first;
      for (unsigned c : it->second.cells) ++in_read[L.disk_of(c)];
      t.elements += double(it->second.cells.size());
      e += count;
    }
    unsigned busiest = 0;
    for (unsigned d = 0; d < L.disks; ++d) disk[d] += in_read[d], busiest = std::max(busiest, in_read[d]);
    t.time += busiest;
  }
  t.max_disk = *std::max_element(disk.begin(), disk.end());
  return t;
}

double reduction(double edp, double other) { return other > 0 ? 100.0 * (1.0 - edp / other) : 0.0; }

// --store: the file written once per code and placement, then the trace read with each disk
// failed in turn; cells read per disk counted by the store, bytes checked.
int replay_store(const std::string &dir, const codes::ArrayLayout &L, codes::Placement pl, const Workload &w,
                 const std::vector<TraceRead> &trace, uint64_t element, const std::vector<uint8_t> &file,
                 const std::shared_ptr<Jit> &jit, const std::shared_ptr<ecjit::jit::KernelService> &programs,
                 Totals *out, double *seconds, uint64_t *compiled, uint64_t *runner) {
  const std::string spec = L.family + ":p=" + std::to_string(L.p) + ",element=" + std::to_string(element);
  auto codec = jit->array_codec(spec);
  if (!codec.ok()) return runtime_error(kCmd, codec.status().message());
  const codes::DataPlacement P = codes::place(L, pl);
  const std::string where = dir + "/" + L.family + "_" + codes::placement_name(pl);
  if (Status st = ArrayStore::write(where, **codec, L, P, file); !st.ok()) return runtime_error(kCmd, st.message());
  std::vector<uint8_t> buf;
  *out = Totals();
  *seconds = 0;
  for (unsigned f = 0; f < L.disks; ++f) {
    auto store = ArrayStore::open(where, L, P, element, f, programs);
    if (!store.ok()) return runtime_error(kCmd, store.status().message());
    const auto t0 = std::chrono::steady_clock::now();
    for (const TraceRead &r : trace) {
      const uint64_t size = std::min<uint64_t>(r.size, file.size());
      const uint64_t off = r.offset % (file.size() - size + 1);
      buf.resize(size);
      if (Status st = (*store)->read(off, size, buf.data()); !st.ok()) return runtime_error(kCmd, st.message());
      if (std::memcmp(buf.data(), file.data() + off, size) != 0)
        return runtime_error(kCmd, "MISMATCH: " + spec + " " + codes::placement_name(pl) + " disk " +
                                       std::to_string(f) + " failed, read of " + std::to_string(size) + " at " +
                                       std::to_string(off) + " (" + w.name + ")");
    }
    *seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / L.disks;
    uint64_t total = 0, most = 0;
    for (uint64_t n : (*store)->cells_read()) total += n, most = std::max(most, n);
    out->elements += double(total) / L.disks;
    out->max_disk += double(most) / L.disks;
    *compiled += (*store)->compiled_rebuilds();
    *runner += (*store)->runner_rebuilds();
  }
  return 0;
}

}  // namespace

int cmd_edp(int argc, char **argv) {
  const CommandDef def = edp_def();
  Args args;
  if (auto done = parse_command(def, argc, argv, &args)) return *done;
  uint64_t p = 7, reads = 0, element = 16384, seed = 1;
  if (args.has("p") && (!parse_u64(args.get("p"), &p) || p > 61))
    return usage_error(kCmd, "--p '" + args.get("p") + "' is not a prime up to 61");
  if (args.has("reads") && (!parse_u64(args.get("reads"), &reads) || reads == 0 || reads > 10000000))
    return usage_error(kCmd, "--reads '" + args.get("reads") + "' is not a number in 1..10000000");
  if (args.has("element") && (!parse_size(args.get("element"), &element) || element < 4096 || element % 4096))
    return usage_error(kCmd, "--element '" + args.get("element") + "' is not a multiple of 4K");
  if (args.has("seed") && !parse_u64(args.get("seed"), &seed))
    return usage_error(kCmd, "--seed '" + args.get("seed") + "' is not a number");
  std::vector<codes::ArrayLayout> layouts;
  for (const std::string &name : split(args.get("codes", "rdp,xcode,bpcode"))) {
    auto L = codes::array_layout(name, unsigned(p));
    if (!L.ok()) return usage_error(kCmd, L.status().message());
    layouts.push_back(std::move(*L));
  }
  std::vector<Workload> workloads;
  for (const std::string &name : split(args.get("workloads", "mds_0,rsrch_1,web_1,web_3"))) {
    auto w = std::find_if(shen2016_workloads().begin(), shen2016_workloads().end(),
                          [&](const Workload &x) { return name == x.name; });
    if (w == shen2016_workloads().end())
      return usage_error(kCmd, "unknown workload '" + name + "'; known: mds_0, rsrch_1, web_1, web_3");
    workloads.push_back(*w);
  }
  if (layouts.empty() || workloads.empty()) return usage_error(kCmd, "nothing to replay");
  const std::string store_dir = args.get("store");
  uint64_t file_size = uint64_t(64) << 20;
  if (args.has("size") && (store_dir.empty() || !parse_size(args.get("size"), &file_size) || file_size == 0 ||
                           file_size > (uint64_t(4) << 30)))
    return usage_error(kCmd, "--size '" + args.get("size") + "' needs --store and a size in 1..4G");
  if (!store_dir.empty() && !args.has("reads")) reads = 2000;
  std::vector<uint8_t> file;
  std::shared_ptr<Jit> jit;
  std::shared_ptr<ecjit::jit::KernelService> programs;
  if (!store_dir.empty()) {
    if (::mkdir(store_dir.c_str(), 0700) != 0 && errno != EEXIST)
      return runtime_error(kCmd, "cannot create " + store_dir + ": " + std::strerror(errno));
    file.resize(file_size);
    std::mt19937_64 rng(seed);
    for (size_t i = 0; i + 8 <= file.size(); i += 8) {
      const uint64_t v = rng();
      std::memcpy(file.data() + i, &v, 8);
    }
    auto j = Jit::create();
    if (!j.ok()) return runtime_error(kCmd, j.status().message());
    jit = *j;
    // The read plans' XOR programs, compiled in the background as the runner serves (many
    // small programs: kept out of the disk cache).
    ecjit::jit::ServiceOptions o;
    o.disk_cache = false;
    o.tune = false;
    auto service = ecjit::jit::KernelService::make(o);
    if (!service.ok()) return runtime_error(kCmd, service.status().message());
    programs = std::move(*service);
  }
  FILE *csv = nullptr;
  if (args.has("csv") && !(csv = std::fopen(args.get("csv").c_str(), "w")))
    return runtime_error(kCmd, "cannot write " + args.get("csv"));
  if (csv) std::fprintf(csv, "code,p,workload,placement,reads,elements_per_read,max_disk_elements,model_time\n");
  const codes::Placement kPlacements[] = {codes::Placement::kHorizontal, codes::Placement::kVertical,
                                          codes::Placement::kEdp};
  std::printf("Degraded reads, one disk failed (each in turn, averaged); element %s, p = %u, seed %llu.\n"
              "elements/read: cells read per request; Q_max: elements read on the most loaded disk;\n"
              "time: parallel-disk model (busiest disk's elements per read, summed). EDP's reductions\n"
              "are against horizontal / vertical.\n\n",
              format_bytes(element).c_str(), unsigned(p), (unsigned long long)seed);
  std::printf("%-8s %-8s %-11s %8s %10s %10s %12s %14s %14s\n", "code", "workload", "placement", "reads",
              "elem/read", "Q_max", "time", "Q_max -% H/V", "time -% H/V");
  for (const codes::ArrayLayout &L : layouts)
    for (const Workload &w : workloads) {
      const std::vector<TraceRead> trace = synthetic_trace(w, seed, uint64_t(64) << 30, unsigned(reads));
      Totals avg[3];
      for (int i = 0; i < 3; ++i) {
        const codes::DataPlacement P = codes::place(L, kPlacements[i]);
        for (unsigned f = 0; f < L.disks; ++f) {
          const Totals t = replay(L, P, f, trace, element);
          avg[i].elements += t.elements / L.disks;
          avg[i].max_disk += t.max_disk / L.disks;
          avg[i].time += t.time / L.disks;
        }
      }
      if (!store_dir.empty()) {
        Totals real[3];
        double secs[3];
        uint64_t compiled[3] = {0, 0, 0}, runner[3] = {0, 0, 0};
        for (int i = 0; i < 3; ++i)
          if (int rc = replay_store(store_dir, L, kPlacements[i], w, trace, element, file, jit, programs, &real[i],
                                    &secs[i], &compiled[i], &runner[i]))
            return rc;
        for (int i = 0; i < 3; ++i)
          std::printf("%-8s %-8s %-11s %8zu %10.2f %10.0f %10.3f s  (store: %s checked; rebuilds %llu compiled, "
                      "%llu on the runner; wall time%s)\n",
                      L.family.c_str(), w.name, codes::placement_name(kPlacements[i]), trace.size(),
                      real[i].elements / double(trace.size()), real[i].max_disk, secs[i], "every byte",
                      (unsigned long long)compiled[i], (unsigned long long)runner[i],
                      i == 2 ? (" " + std::to_string(int(std::lround(reduction(secs[2], secs[0])))) + "% / " +
                                std::to_string(int(std::lround(reduction(secs[2], secs[1])))) + "% less than H / V")
                                   .c_str()
                             : "");
      }
      for (int i = 0; i < 3; ++i) {
        char vs_q[32] = "", vs_t[32] = "";
        if (i == 2) {
          std::snprintf(vs_q, sizeof vs_q, "%.1f / %.1f", reduction(avg[2].max_disk, avg[0].max_disk),
                        reduction(avg[2].max_disk, avg[1].max_disk));
          std::snprintf(vs_t, sizeof vs_t, "%.1f / %.1f", reduction(avg[2].time, avg[0].time),
                        reduction(avg[2].time, avg[1].time));
        }
        std::printf("%-8s %-8s %-11s %8zu %10.2f %10.0f %12.0f %14s %14s\n", L.family.c_str(), w.name,
                    codes::placement_name(kPlacements[i]), trace.size(), avg[i].elements / double(trace.size()),
                    avg[i].max_disk, avg[i].time, vs_q, vs_t);
        if (csv)
          std::fprintf(csv, "%s,%u,%s,%s,%zu,%.4f,%.1f,%.1f\n", L.family.c_str(), unsigned(p), w.name,
                       codes::placement_name(kPlacements[i]), trace.size(), avg[i].elements / double(trace.size()),
                       avg[i].max_disk, avg[i].time);
      }
    }
  if (csv) std::fclose(csv);
  return 0;
}

}  // namespace ecjit::tools
