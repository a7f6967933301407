#!/usr/bin/env python3
# ratio_table: reads bench_encode's Google Benchmark JSON and prints throughput ratios to ISA-L from the same run.
import json
import sys
from collections import OrderedDict

ISAL = "BM_isal/gf8/ec_encode_data"
# ecjit tier -> the ISA-L function of the same vector width (scalar ecjit vs ISA-L's table-lookup base).
SAME_TIER = OrderedDict([("host", "BM_isal/gf8/avx2"), ("host-avx2", "BM_isal/gf8/sse"),
                         ("host-sse2", "BM_isal/gf8/base")])


def size_label(n):
    for unit, shift in (("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift and n % (1 << shift) == 0:
            return "%d %s" % (n >> shift, unit)
    return "%d B" % n


def load(path):
    with open(path) as f:
        doc = json.load(f)
    rates, errors, compile_rows = OrderedDict(), [], []
    for b in doc.get("benchmarks", []):
        if b.get("run_type", "iteration") != "iteration":
            continue
        name = b["name"]
        if b.get("error_occurred"):
            errors.append("%s: %s" % (name, b.get("error_message", "error")))
            continue
        if name.startswith("BM_compile/"):
            compile_rows.append((name.split("/iterations:")[0], b["real_time"], b.get("time_unit", "ns"),
                                 b.get("compile_ms")))
            continue
        base, _, size = name.rpartition("/")
        if "bytes_per_second" in b and size.isdigit():
            rates.setdefault(base, {})[int(size)] = b["bytes_per_second"]
    return doc.get("context", {}), rates, errors, compile_rows


def table(title, rows, sizes, rates, denom_of):
    print(title)
    width = max([len(r) for r in rows] + [10])
    print("  %-*s" % (width, "") + "".join("%11s" % size_label(s) for s in sizes))
    for r in rows:
        cells = []
        for s in sizes:
            num, den = rates.get(r, {}).get(s), rates.get(denom_of(r), {}).get(s)
            cells.append("%11s" % ("%.2f" % (num / den) if num and den else "-"))
        print("  %-*s" % (width, r) + "".join(cells))
    print()


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: ratio_table.py BENCH_JSON")
    context, rates, errors, compile_rows = load(sys.argv[1])
    if ISAL not in rates:
        sys.exit("ratio_table: no %s results in %s" % (ISAL, sys.argv[1]))
    sizes = sorted(rates[ISAL])
    print("bench_encode, RS(10,4): throughput ratio to ISA-L ec_encode_data from the same run")
    print("(bytes = k x shard size per call, single thread; host %s, %s CPUs, load %s)\n" % (
        context.get("host_name", "?"), context.get("num_cpus", "?"),
        ", ".join("%.2f" % x for x in context.get("load_avg", []))))
    print("  ISA-L ec_encode_data GB/s: " + ", ".join(
        "%s %.2f" % (size_label(s), rates[ISAL][s] / 1e9) for s in sizes) + "\n")
    ecjit = [r for r in rates if r.startswith("BM_ecjit/")]
    table("ecjit / ISA-L ec_encode_data (rs-vand matrix; gf8-isal-cauchy uses ISA-L's own matrix):",
          ecjit, sizes, rates, lambda r: ISAL)
    gf8 = [r for r in ecjit if r.split("/")[1] == "gf8" and r.split("/")[2] in SAME_TIER]
    table("ecjit GF(2^8) / ISA-L at the same vector width (host: avx2, host-avx2: sse, host-sse2: base):",
          gf8, sizes, rates, lambda r: SAME_TIER[r.split("/")[2]])
    others = [r for r in rates if r != ISAL and not r.startswith("BM_ecjit/")]
    table("baselines / ISA-L ec_encode_data (xor_gen = memory-bandwidth reference):",
          others, sizes, rates, lambda r: ISAL)
    if compile_rows:
        print("cold JIT compile (fresh Jit per iteration; wall time of Jit::codec):")
        for name, t, unit, ms in compile_rows:
            print("  %-44s %8.1f %s%s" % (name, t, unit, "" if ms is None else "  (LLVM %.1f ms)" % ms))
        print()
    for e in errors:
        print("ERROR " + e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
