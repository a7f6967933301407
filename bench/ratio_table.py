#!/usr/bin/env python3
# ratio_table: reads bench_encode's Google Benchmark JSON; prints every ecjit row as a ratio to its baseline from the same run, and the project's performance targets met or not.
#   ratio_table.py BENCH_JSON [--markdown]
import json
import sys
from collections import OrderedDict

ISAL = "BM_isal/gf8/ec_encode_data"
# ecjit tier (target string) -> (what it is, the baseline of the same field and width).
TIERS = OrderedDict([
    ("host", "all features"),
    ("host-gfni", "GFNI masked off"),
    ("host-avx512f,-gfni", "AVX2 (256-bit)"),
    ("host-avx2,-gfni", "SSE (128-bit)"),
    ("host-sse2", "no vector unit"),
])
GF8_SAME_WIDTH = {"host": ISAL, "host-gfni": "BM_isal/gf8/avx512", "host-avx512f,-gfni": "BM_isal/gf8/avx2",
                  "host-avx2,-gfni": "BM_isal/gf8/sse", "host-sse2": "BM_isal/gf8/base"}
WIDE_BASELINE = {16: ("BM_jerasure/w16", "Jerasure w=16"), 32: ("BM_jerasure/w32", "Jerasure w=32"),
                 64: ("BM_gf_complete/w64", "GF-Complete w=64")}
KIB64, MIB16 = 64 << 10, 16 << 20


def size_label(n):
    for unit, shift in (("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return "%d %s" % (n >> shift, unit)
    return "%d B" % n


def load(path):
    with open(path) as f:
        doc = json.load(f)
    rates, labels, errors, times = {}, {}, [], OrderedDict()
    # With --benchmark_repetitions the medians stand for each benchmark; without, the runs.
    benches = doc.get("benchmarks", [])
    medians = any(b.get("aggregate_name") == "median" for b in benches)
    for b in benches:
        if medians:
            if b.get("run_type") != "aggregate" or b.get("aggregate_name") != "median":
                continue
        elif b.get("run_type", "iteration") != "iteration":
            continue
        name = b.get("run_name", b["name"]) if medians else b["name"]
        if b.get("error_occurred"):
            errors.append("%s: %s" % (name, b.get("error_message", "error")))
            continue
        if name.startswith("BM_compile/"):
            scale = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[b.get("time_unit", "ns")]
            times[name.split("/iterations:")[0]] = (b["real_time"] * scale, b.get("label", ""))
            continue
        base, _, size = name.rpartition("/")
        if "bytes_per_second" in b and size.isdigit():
            rates[(base, int(size))] = b["bytes_per_second"]
            labels[base] = b.get("label", "")
    return doc.get("context", {}), rates, labels, errors, times


def strategy_of(label):
    return label.split()[-1] if label else "?"  # e.g. "gfni", or "gfni+u2": main loop unrolled 2x


class Report:
    def __init__(self, markdown):
        self.md = markdown

    def table(self, header, rows):
        if self.md:
            print("| " + " | ".join(header) + " |")
            print("|" + "---|" * len(header))
            for r in rows:
                print("| " + " | ".join(r) + " |")
        else:
            widths = [max(len(str(x)) for x in col) for col in zip(header, *rows)]
            for r in [header] + rows:
                print("  " + "  ".join(str(x).ljust(w) for x, w in zip(r, widths)))
        print()


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if len(args) != 1:
        sys.exit("usage: ratio_table.py BENCH_JSON [--markdown]")
    rep = Report("--markdown" in sys.argv)
    context, rates, labels, errors, times = load(args[0])
    if (ISAL, KIB64) not in rates:
        sys.exit("ratio_table: no %s/65536 result in %s" % (ISAL, args[0]))
    print("bench_encode, RS(10,4), one thread, bytes = k x shard size per call; host %s, %s CPUs, load %s\n" % (
        context.get("host_name", "?"), context.get("num_cpus", "?"),
        ", ".join("%.2f" % x for x in context.get("load_avg", []))))

    def gbps(name, size=KIB64):
        r = rates.get((name, size))
        return "%.1f" % (r / 1e9) if r else "-"

    def ratio(num, den, size=KIB64):
        a, b = rates.get((num, size)), rates.get((den, size))
        return a / b if a and b else None

    # Every field and tier: what the tuner chose, GB/s at 64 KiB, ratio to the baseline.
    rows = []
    for gf in (8, 16, 32, 64):
        for tier, what in TIERS.items():
            name = "BM_ecjit/gf%d/%s/auto/O3" % (gf, tier)
            if (name, KIB64) not in rates:
                continue
            base, base_name = (GF8_SAME_WIDTH[tier], GF8_SAME_WIDTH[tier].split("/")[-1]) if gf == 8 \
                else WIDE_BASELINE[gf]
            if gf == 8:
                base_name = "ISA-L " + ("ec_encode_data" if base == ISAL else "ec_encode_data_" + base_name)
            r = ratio(name, base)
            others = ", ".join("%s %s" % (s, gbps("BM_ecjit/gf%d/%s/%s/O3" % (gf, tier, s)))
                               for s in ("gfni", "split-table", "clmul-insn", "clmul-mixed", "clmul-shift")
                               if ("BM_ecjit/gf%d/%s/%s/O3" % (gf, tier, s), KIB64) in rates)
            rows.append(["GF(2^%d)" % gf, "%s (%s)" % (tier, what), strategy_of(labels.get(name)), gbps(name),
                         "%.2fx %s" % (r, base_name) if r else "-", others])
    print("Per field and tier, 64 KiB shards: the tuner's choice (auto), and every strategy forced:\n")
    rep.table(["field", "tier", "tuner chose", "GB/s", "vs baseline (same run)", "each strategy, GB/s"], rows)

    # The project's performance targets.
    targets = []
    extra = []  # notes printed under the targets table

    def target(what, value, goal, fmt="%.2fx", higher=True):
        if value is None:
            targets.append([what, "-", (">= " if higher else "<= ") + fmt % goal, "not measured"])
            return
        met = value >= goal if higher else value <= goal
        targets.append([what, fmt % value, (">= " if higher else "<= ") + fmt % goal, "met" if met else "NOT met"])

    target("GF(2^8) best kernel / ISA-L ec_encode_data", ratio("BM_ecjit/gf8/host/auto/O3", ISAL), 3.5)
    # The strongest peer: ISA-L 2.31 (its GFNI kernels), when bench/run.sh could build it.
    r231 = ratio("BM_ecjit/gf8/host/auto/O3", "BM_isal231/gf8/ec_encode_data")
    if r231 is not None:
        target("GF(2^8) best kernel / ISA-L 2.31 ec_encode_data", r231, 1.3)
    target("GF(2^8), GFNI masked (AVX-512BW) / ISA-L ec_encode_data_avx512",
           ratio("BM_ecjit/gf8/host-gfni/auto/O3", "BM_isal/gf8/avx512"), 1.2)
    target("GF(2^8), AVX2 only / ISA-L ec_encode_data_avx2",
           ratio("BM_ecjit/gf8/host-avx512f,-gfni/auto/O3", "BM_isal/gf8/avx2"), 1.2)
    target("GF(2^8), 16 MiB shards / ISA-L xor_gen (same 10 inputs)",
           ratio("BM_ecjit/gf8/host/auto/O3", "BM_isal_xor_gen", MIB16), 0.75)
    for gf in (16, 32, 64):
        base, base_name = WIDE_BASELINE[gf]
        target("GF(2^%d) / %s" % (gf, base_name), ratio("BM_ecjit/gf%d/host/auto/O3" % gf, base),
               {16: 4.0, 32: 5.0, 64: 4.0}[gf])
    for gf in (8, 16, 32, 64):
        target("GF(2^%d) reconstruct of 4 lost data shards (one set, promoted) / encode" % gf,
               ratio("BM_ecjit_reconstruct/gf%d/host/auto/O3" % gf, "BM_ecjit/gf%d/host/auto/O3" % gf),
               1.15 if gf == 8 else 0.9)

    def ms(mode, spec="rs-vand:k=10,m=4,gf=8"):
        t = times.get("BM_compile/%s/%s" % (spec, mode))
        return t[0] * 1e3 if t else None

    target("JIT cold compile RS(10,4) GF(2^8), ms (codec ready; tuning goes on in the background)",
           ms("cold"), 50, "%.1f", False)
    tuned = ms("tuned")
    if tuned is not None:
        extra.append("Synchronous tuning (tune_in_background = false): codec() after every "
                     "candidate is compiled and timed, %.1f ms (no target)." % tuned)
    target("JIT from the disk cache, ms", ms("disk"), 2, "%.2f", False)
    mem = ms("memory")
    target("JIT from memory, us", mem * 1e3 if mem is not None else None, 1, "%.3f", False)
    print("Targets (64 KiB shards unless noted, ratios from this run):\n")
    rep.table(["target", "measured", "goal", ""], targets)
    for line in extra:
        print(line + "\n")

    # Everything else, as measured.
    rows = [[name, size_label(size), "%.2f" % (r / 1e9), labels.get(name, "")]
            for (name, size), r in sorted(rates.items()) if not name.startswith("BM_ecjit/")]
    print("Baselines and reconstruct, GB/s:\n")
    rep.table(["benchmark", "shard", "GB/s", "label"], rows)
    if times:
        print("JIT compile (wall time of Jit::codec, real time per iteration):\n")
        rep.table(["benchmark", "time", "strategy"],
                  [[n, "%.3f ms" % (t * 1e3), lab] for n, (t, lab) in times.items()])
    for e in errors:
        print("ERROR " + e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
