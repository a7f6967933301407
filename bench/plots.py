#!/usr/bin/python3
"""plots.py: benchmark figures for docs/figures/ (SVG + PNG, each beside the CSV of the values it plots).

  /usr/bin/python3 bench/plots.py [--data docs/figures/data] [--out docs/figures]
      Plots every figure whose raw data is in --data (bench/figures.sh writes it):
        stats_sweep.csv      ecjit stats --sweep --csv        -> fig5-4_shifts_xors.{svg,png,csv}
        encode_k.csv         plots.py measure-encode-k        -> encode_vs_k.{svg,png,csv}
        bench_encode.json    bench_encode (Google Benchmark)  -> encode_rs10_4_backends.{svg,png,csv}
                             (also the k = 10 cross-check points of encode_vs_k)
        degraded.txt         bench_degraded's table           -> degraded_read.{svg,png,csv}
        rs_fft_originals.txt bench_fft (and rs_fft_mixed.txt, -> rs_fft.{svg,png,csv}
                             rs_fft_half.txt, rs_fft_random.txt: other losses)
      plus machine.txt (key=value: CPU, nproc, versions) and <name>.meta per timing run (date,
      load average before and after, seconds waited for a quiet machine, under_load=0/1).

  /usr/bin/python3 bench/plots.py measure-encode-k --out FILE [--build DIR] [--ks 2,4,...]
                   [--m 4] [--size 65536] [--seconds 0.3] [--reps 3]
      Encode throughput of RS(k, m) over GF(2^8) against k, one thread. bench_encode fixes
      k = 10 (kK in bench/shards.h), so this sweeps k with the programs already built:
        ecjit       `ecjit demo --spec isal-cauchy:k=K,m=M` (C++ API, tuned codec, its own timing loop)
        dropin      ecjit's libisal.so.2 (build/isal-compat), ec_encode_data through ctypes
        isal-2.30   the system libisal.so.2 (Debian 2.30), ec_encode_data through ctypes
        isal-2.31   $ECJIT_ISAL231 when set (bench/fetch_isal231.sh), through ctypes
        jerasure-w8 libJerasure.so.2, jerasure_matrix_encode with reed_sol_vandermonde, w = 8
      ctypes backends run in a child process each, in rotating order per repetition; each
      checks its parity against a numpy GF(2^8) reference before timing and reports the cost
      of an empty call (ec_encode_data with len 0), which its per-call times include.

Matplotlib from Debian (python3-matplotlib); run with /usr/bin/python3.
"""

import argparse
import csv
import ctypes
import ctypes.util
import datetime
import json
import os
import re
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_KS = [2, 4, 6, 8, 10, 12, 16, 20, 24, 32]


# ----------------------------------------------------------------------------------------
# Metadata: machine and per-run files
# ----------------------------------------------------------------------------------------

def read_kv(path):
    """key=value lines; a missing file gives {}."""
    out = {}
    try:
        with open(path) as f:
            for line in f:
                line = line.rstrip("\n")
                if "=" in line and not line.startswith("#"):
                    k, v = line.split("=", 1)
                    out[k.strip()] = v.strip()
    except FileNotFoundError:
        pass
    return out


def live_machine():
    """The machine as /proc says now (used when machine.txt is absent)."""
    info = {"nproc": str(os.cpu_count())}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if ":" not in line:
                    continue
                k, v = (s.strip() for s in line.split(":", 1))
                if k == "model name" and "cpu_model" not in info:
                    info["cpu_model"] = v
                elif k == "cpu family" and "cpu_family" not in info:
                    info["cpu_family"] = v
                elif k == "model" and "cpu_model_number" not in info:
                    info["cpu_model_number"] = v
                elif k == "flags" and "flags" not in info:
                    fl = set(v.split())
                    keep = [x for x in ("avx2", "avx512f", "avx512bw", "gfni", "vpclmulqdq") if x in fl]
                    info["flags"] = ",".join(keep)
                    if "hypervisor" in fl:
                        info["virtualized"] = "yes"
    except OSError:
        pass
    info["source"] = "read at plot time"
    return info


def machine_line(m):
    """One line naming the machine, e.g. '2 x AMD EPYC (family 25 model 17, znver4; avx2, avx512f, gfni), VM'."""
    fam = ""
    if m.get("cpu_family"):
        fam = "family %s model %s" % (m.get("cpu_family"), m.get("cpu_model_number", "?"))
    if m.get("llvm_cpu"):
        fam += (", " if fam else "") + "LLVM cpu " + m["llvm_cpu"]
    flags = m.get("flags", "").replace(",", ", ")
    inner = "; ".join(x for x in (fam, flags) if x)
    s = "%s CPUs (nproc), %s" % (m.get("nproc", "?"), m.get("cpu_model", "unknown CPU"))
    if inner:
        s += " (" + inner + ")"
    if m.get("virtualized") == "yes":
        s += ", VM"
    return s


def timing_note(meta, what):
    """Footer lines of a timing figure: date, load, 'noisy shared VM, one run'."""
    lines = []
    date = meta.get("date", "date unknown")
    load = meta.get("load_before", "?")
    after = meta.get("load_after")
    s = "measured %s; noisy shared VM, one run (%s); 1-min load average %s before" % (date, what, load)
    if after:
        s += ", %s after (the run itself adds ~1)" % after
    lines.append(s)
    if meta.get("under_load") == "1":
        lines.append("MEASURED UNDER LOAD (load average %s; waited %s s for it to drop below 1.0)"
                     % (load, meta.get("waited_s", "?")))
    return lines


def footer(fig, machine, extra_lines, threads=True):
    """Small text at the bottom: the machine, then extra_lines, wrapped to the figure's width."""
    import textwrap
    width = int(fig.get_figwidth() * 17)  # characters of 7-point text per line
    lines = [machine_line(machine) + (", one thread" if threads else "")] + list(extra_lines)
    wrapped = []
    for line in lines:
        wrapped.extend(textwrap.wrap(line, width, subsequent_indent="  ") or [""])
    fig.text(0.01, 0.005, "\n".join(wrapped), fontsize=7, va="bottom", ha="left", color="#333333")
    return len(wrapped)


def bottom_margin(fig, n_lines):
    """Fraction of the figure height the footer's n_lines take (7-point text, plus a gap)."""
    return min(0.4, (n_lines * 7 * 1.25 + 10) / 72 / fig.get_figheight())


def save(fig, out_dir, name, rows, header):
    """name.svg, name.png and name.csv (the plotted values) in out_dir."""
    os.makedirs(out_dir, exist_ok=True)
    import matplotlib
    matplotlib.rcParams["svg.hashsalt"] = "ecjit"  # stable element ids between runs
    fig.savefig(os.path.join(out_dir, name + ".svg"), metadata={"Date": None})
    fig.savefig(os.path.join(out_dir, name + ".png"), dpi=150, metadata={"Software": None})
    with open(os.path.join(out_dir, name + ".csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)
    written = [os.path.join(out_dir, name + e) for e in (".svg", ".png", ".csv")]
    for p in written:
        print("  " + os.path.relpath(p))
    return written


# ----------------------------------------------------------------------------------------
# Figure 5-4: instruction counts of the main loop (ecjit stats --sweep)
# ----------------------------------------------------------------------------------------

def plot_sweep(data_dir, out_dir, machine):
    import matplotlib.pyplot as plt
    path = os.path.join(data_dir, "stats_sweep.csv")
    with open(path) as f:
        rows = list(csv.DictReader(f))
    n = [int(r["n"]) for r in rows]
    col = lambda c: [float(r[c]) for r in rows]
    s0, s3, x3 = col("shifts_O0"), col("shifts_O3"), col("xors_O3")
    e0, e3 = col("ref_nkl_2"), col("ref_7_7n")
    meta = read_kv(os.path.join(data_dir, "stats_sweep.meta"))

    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 5.4))
    pos = lambda v: [x if x > 0 else float("nan") for x in v]  # a zero count has no place on a log axis
    a.plot(n, pos(s0), "o-", color="C0", label="shifts, O0 (measured)")
    a.plot(n, e0, "--", color="C0", alpha=0.7, label="shifts, unoptimized: n·k·l/2 (Nešković 2018's estimate)")
    a.plot(n, pos(s3), "s-", color="C1", label="shifts, O3 (measured)")
    a.plot(n, e3, "--", color="C1", alpha=0.7, label="shifts, optimized: 7.7n (Nešković 2018's estimate)")
    a.plot(n, pos(x3), "^-", color="C2", label="XORs, O3 (measured)")
    a.set_yscale("log")
    a.set_xlabel("n (RS(n, k = 3n/4), GF(2^8), l = 8)")
    a.set_ylabel("instructions in the main loop's IR (log scale)")
    a.set_title("measured vs Nešković 2018's estimates")
    a.grid(True, which="both", alpha=0.3)
    a.legend(fontsize=8, loc="lower right")

    b.plot(n, s3, "s-", color="C1", label="shifts, O3 (measured)")
    b.plot(n, e3, "--", color="C1", label="7.7n (Nešković 2018's estimate)")
    # Per-n slope of the measured count, for the text.
    big = [(ni, si) for ni, si in zip(n, s3) if ni >= 16]
    slope = sum(si for _, si in big) / sum(ni for ni, _ in big) if big else float("nan")
    b.plot(n, [slope * ni for ni in n], ":", color="gray",
           label="%.1fn (least-squares line through 0, n >= 16)" % slope)
    b.set_xlabel("n")
    b.set_ylabel("shifts in the main loop's IR after O3")
    b.set_title("optimized shifts: measured vs 7.7n")
    b.grid(True, alpha=0.3)
    b.legend(fontsize=8, loc="upper left")
    last = len(n) - 1
    b.annotate("n = %d: %d measured\nvs %.0f estimated (%.2fx)" % (n[last], s3[last], e3[last], s3[last] / e3[last]),
               (n[last], s3[last]), xytext=(n[last] * 0.72, s3[last] * 0.2), textcoords="data", fontsize=8,
               ha="center", arrowprops=dict(arrowstyle="->", color="gray"))
    fig.suptitle("Nešković 2018, Figure 5-4 reproduced: shifts and XORs in the main loop of RS(n, 3n/4) "
                 "encoders, GF(2^8), clmul-shift lowering")
    zeros = [str(ni) for ni, v in zip(n, s0) if v == 0]
    nl = footer(fig, machine, [
        "ecjit stats --sweep (spec rs-vand:k=3n/4,m=n/4, target host, IR after the pipeline at O0 / O3, main "
        "loop = blocks vloop*, a vector instruction counts once): deterministic counts, no timing; generated %s. "
        "Solid: measured by ecjit; dashed: the estimates given in the text of Nešković 2018 (ch. 5.3), not "
        "measurements.%s" % (meta.get("date", "?"),
                             " n = %s: 0 shifts (off the log axis)." % ", ".join(zeros) if zeros else "")],
        threads=False)
    fig.tight_layout(rect=(0, bottom_margin(fig, nl), 1, 0.95))
    out_rows = [[r["n"], r["k"], r["m"], r["shifts_O0"], r["ref_nkl_2"], r["shifts_O3"], r["ref_7_7n"],
                 r["xors_O3"]] for r in rows]
    w = save(fig, out_dir, "fig5-4_shifts_xors", out_rows,
             ["n", "k", "m", "shifts_O0_measured", "estimate_nkl_2", "shifts_O3_measured", "estimate_7_7n",
              "xors_O3_measured"])
    plt.close(fig)
    i64 = n.index(64) if 64 in n else last
    summary = ("n=%d: shifts O0 %d vs n*k*l/2 %.0f (%.2fx); shifts O3 %d vs 7.7n %.1f (%.2fx); XORs O3 %d; "
               "O3 shifts ~ %.1fn" % (n[i64], s0[i64], e0[i64], s0[i64] / e0[i64], s3[i64], e3[i64],
                                       s3[i64] / e3[i64], x3[i64], slope))
    return w, summary


# ----------------------------------------------------------------------------------------
# bench_encode JSON (RS(10, 4), 64 KiB): every backend, and the k = 10 cross-check points
# ----------------------------------------------------------------------------------------

# Benchmark name (without /<size>) -> (label, group). Groups colour the bars.
ENCODE_NAMES = [
    ("BM_ecjit/gf8/host/auto/O3", "ecjit GF(2^8) rs-vand, host tier, auto (tuned)", "ecjit"),
    ("BM_ecjit/gf8-isal-cauchy/host/auto/O3", "ecjit GF(2^8) isal-cauchy (ISA-L's matrix), host, auto", "ecjit"),
    ("BM_ecjit/gf8/host/gfni/O3", "ecjit GF(2^8) host, gfni forced", "ecjit"),
    ("BM_ecjit/gf8/host/split-table/O3", "ecjit GF(2^8) host, split-table forced", "ecjit"),
    ("BM_ecjit/gf8/host/clmul-shift/O3", "ecjit GF(2^8) host, clmul-shift (Nešković 2018's lowering), O3", "ecjit"),
    ("BM_ecjit/gf8/host/clmul-shift/O0", "ecjit GF(2^8) host, clmul-shift, O0", "ecjit"),
    ("BM_ecjit/gf8/host-gfni/auto/O3", "ecjit GF(2^8) AVX-512BW tier, no GFNI, auto", "ecjit"),
    ("BM_ecjit/gf8/host-avx512f,-gfni/auto/O3", "ecjit GF(2^8) AVX2 tier (256-bit), auto", "ecjit"),
    ("BM_ecjit/gf8/host-avx2,-gfni/auto/O3", "ecjit GF(2^8) SSE tier (128-bit), auto", "ecjit"),
    ("BM_isal231/gf8/ec_encode_data", "ISA-L 2.31 ec_encode_data", "isal"),
    ("BM_isal/gf8/ec_encode_data", "ISA-L 2.30 ec_encode_data (its dispatch)", "isal"),
    ("BM_isal/gf8/avx512", "ISA-L 2.30 AVX-512 kernel", "isal"),
    ("BM_isal/gf8/avx2", "ISA-L 2.30 AVX2 kernel", "isal"),
    ("BM_isal/gf8/avx", "ISA-L 2.30 AVX kernel", "isal"),
    ("BM_isal/gf8/sse", "ISA-L 2.30 SSE kernel", "isal"),
    ("BM_isal/gf8/base", "ISA-L 2.30 base (scalar) kernel", "isal"),
    ("BM_jerasure/w8", "Jerasure 2.0 w=8", "other"),
    ("BM_reference/gf8", "ecjit scalar reference codec GF(2^8)", "other"),
    ("BM_ecjit/gf16/host/auto/O3", "ecjit GF(2^16) host, auto", "ecjit-wide"),
    ("BM_jerasure/w16", "Jerasure 2.0 w=16", "other-wide"),
    ("BM_reference/gf16", "ecjit scalar reference codec GF(2^16)", "other-wide"),
    ("BM_ecjit/gf32/host/auto/O3", "ecjit GF(2^32) host, auto", "ecjit-wide"),
    ("BM_jerasure/w32", "Jerasure 2.0 w=32", "other-wide"),
    ("BM_ecjit/gf64/host/auto/O3", "ecjit GF(2^64) host, auto", "ecjit-wide"),
    ("BM_gf_complete/w64", "GF-Complete w=64 multiply_region", "other-wide"),
    ("BM_isal_xor_gen", "ISA-L xor_gen: XOR of 10 shards into 1 (bandwidth reference)", "xor"),
]
GROUP_COLOURS = {"ecjit": "C0", "ecjit-wide": "#7fb2d9", "isal": "C3", "other": "C2",
                 "other-wide": "#8fd08f", "xor": "gray"}


def load_bench_encode(path, size=65536):
    """{base name: dict(gbps, label, strategy, cpu_ns, real_ns, reps)} from Google Benchmark JSON.

    GB/s = k x shard bytes (bench_encode's bytes_per_second) over the median wall-clock time
    per iteration (real_time), GB = 1e9 B; the median of the repetitions when there are some."""
    with open(path) as f:
        j = json.load(f)
    per = {}
    for b in j.get("benchmarks", []):
        if b.get("error_occurred"):
            continue
        name = b.get("run_name") or b["name"]
        if not name.endswith("/%d" % size):
            continue
        base = name[: -len("/%d" % size)]
        if b.get("run_type") == "aggregate":
            continue
        unit = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[b.get("time_unit", "ns")]
        real_s = b["real_time"] * unit
        cpu_s = b["cpu_time"] * unit
        # bytes_per_second is iterations * k * len / cpu time: recover bytes per iteration.
        bytes_per_iter = b["bytes_per_second"] * cpu_s if "bytes_per_second" in b else None
        e = per.setdefault(base, {"real": [], "cpu": [], "bytes": bytes_per_iter, "label": b.get("label", "")})
        e["real"].append(real_s)
        e["cpu"].append(cpu_s)
    out = {}
    for base, e in per.items():
        if not e["bytes"]:
            continue
        real = statistics.median(e["real"])
        out[base] = {"gbps": e["bytes"] / real / 1e9, "gbps_cpu": e["bytes"] / statistics.median(e["cpu"]) / 1e9,
                     "real_us": real * 1e6, "reps": len(e["real"]), "label": e["label"],
                     "bytes": round(e["bytes"])}
    return out, j.get("context", {})


def plot_bench_encode(data_dir, out_dir, machine):
    import matplotlib.pyplot as plt
    res, ctx = load_bench_encode(os.path.join(data_dir, "bench_encode.json"))
    meta = read_kv(os.path.join(data_dir, "bench_encode.meta"))
    rows = [(name, label, grp, res[name]) for name, label, grp in ENCODE_NAMES if name in res]
    if not rows:
        print("bench_encode.json: no 64 KiB results, figure skipped", file=sys.stderr)
        return [], ""
    fig, ax = plt.subplots(figsize=(11, 0.32 * len(rows) + 2.4))
    y = list(range(len(rows)))[::-1]
    vals = [r[3]["gbps"] for r in rows]
    ax.barh(y, vals, color=[GROUP_COLOURS[r[2]] for r in rows])
    ax.set_yticks(y)
    ax.set_yticklabels([r[1] for r in rows], fontsize=8)
    isal = res.get("BM_isal/gf8/ec_encode_data", {}).get("gbps")
    # Each GF(2^8) ecjit row against ISA-L 2.30 on the same vector ISA: its dispatch (AVX-512) for
    # the host tier, else the kernel of the tier ecjit was limited to.
    same_isa = {"host-gfni": ("BM_isal/gf8/avx512", "ISA-L AVX-512"),
                "host-avx512f,-gfni": ("BM_isal/gf8/avx2", "ISA-L AVX2"),
                "host-avx2,-gfni": ("BM_isal/gf8/sse", "ISA-L SSE")}
    for yi, r in zip(y, rows):
        g = r[3]["gbps"]
        t = "%.2f" % g
        if r[2] == "ecjit" and r[0].startswith("BM_ecjit/gf8"):
            ref, lab = same_isa.get(r[0].split("/")[2], ("BM_isal/gf8/ec_encode_data", "ISA-L 2.30"))
            if ref in res:
                t += "  (%.2fx %s)" % (g / res[ref]["gbps"], lab)
        kern = r[3]["label"]
        if kern and r[0].startswith("BM_ecjit"):
            t += "  [" + kern + "]"
        ax.text(g, yi, " " + t, va="center", fontsize=7)
    ax.set_xlim(0, max(vals) * 1.45)
    from matplotlib.patches import Patch
    groups = [("ecjit", "ecjit, GF(2^8)"), ("isal", "ISA-L 2.30 / 2.31"), ("other", "other GF(2^8) codecs"),
              ("ecjit-wide", "ecjit, GF(2^16..2^64)"), ("other-wide", "others, GF(2^16..2^64)"),
              ("xor", "memory-bandwidth reference")]
    present = {r[2] for r in rows}
    ax.legend(handles=[Patch(color=GROUP_COLOURS[g], label=l) for g, l in groups if g in present],
              fontsize=8, loc="upper right")
    ax.set_xlabel("encode throughput, GB/s (k x shard bytes per second, GB = 1e9 B; higher is better)")
    ax.grid(True, axis="x", alpha=0.3)
    ax.set_title("Encode RS(10, 4), 64 KiB shards, one thread: ecjit and the baselines of bench_encode")
    reps = max(r[3]["reps"] for r in rows)
    nl = footer(fig, machine, timing_note(meta, "bench_encode, %d repetition%s in random order, median wall time"
                                          % (reps, "s" if reps > 1 else "")) + [
        "k = 10 data shards, m = 4 parity; GF(2^16..2^64) rows are other fields (different codes). "
        "( ): ecjit GF(2^8) against ISA-L 2.30 on the same vector ISA (the host tier: ISA-L's own dispatch, "
        "AVX-512 without GFNI). [ ]: the kernel ecjit ran (CPU, vector bits, strategy). "
        "Raw: data/bench_encode.json."])
    fig.tight_layout(rect=(0, bottom_margin(fig, nl), 1, 1))
    out_rows = [[r[0] + "/65536", r[1], "%.3f" % r[3]["gbps"], "%.3f" % r[3]["gbps_cpu"], "%.2f" % r[3]["real_us"],
                 r[3]["reps"], r[3]["label"]] for r in rows]
    w = save(fig, out_dir, "encode_rs10_4_backends", out_rows,
             ["benchmark", "label", "gbps_wall", "gbps_cpu", "us_per_call_wall", "repetitions", "kernel"])
    plt.close(fig)
    parts = []
    for key, lab in (("BM_ecjit/gf8/host/auto/O3", "ecjit rs-vand auto"),
                     ("BM_ecjit/gf8-isal-cauchy/host/auto/O3", "ecjit isal-cauchy auto"),
                     ("BM_ecjit/gf8/host-gfni/auto/O3", "ecjit AVX-512 no GFNI"),
                     ("BM_isal/gf8/ec_encode_data", "ISA-L 2.30"),
                     ("BM_isal231/gf8/ec_encode_data", "ISA-L 2.31"),
                     ("BM_jerasure/w8", "Jerasure w8")):
        if key in res:
            parts.append("%s %.2f GB/s" % (lab, res[key]["gbps"]))
    summary = "RS(10,4) 64 KiB: " + ", ".join(parts)
    if isal and "BM_ecjit/gf8-isal-cauchy/host/auto/O3" in res:
        summary += "; isal-cauchy ecjit/ISA-L 2.30 = %.2fx" % (res["BM_ecjit/gf8-isal-cauchy/host/auto/O3"]["gbps"] / isal)
    return w, summary


# ----------------------------------------------------------------------------------------
# Encode against k: measurement (measure-encode-k) and figure
# ----------------------------------------------------------------------------------------

def median_batch_seconds(call, seconds, step=1):
    """5 batches of seconds/5 each, calling `call` `step` times between clock reads: the
    median batch's seconds per call, and the number of calls made."""
    per_call, calls = [], 0
    for _ in range(5):
        n = 0
        t0 = time.perf_counter()
        while True:
            for _ in range(step):
                call()
            n += step
            dt = time.perf_counter() - t0
            if dt >= seconds / 5:
                break
        per_call.append(dt / n)
        calls += n
    return statistics.median(per_call), calls


def gf256_mul_table():
    import numpy as np
    exp = [0] * 512
    log = [0] * 256
    x = 1
    for i in range(255):
        exp[i] = x
        log[x] = i
        x <<= 1
        if x & 0x100:
            x ^= 0x11D
    for i in range(255, 512):
        exp[i] = exp[i - 255]
    t = np.zeros((256, 256), dtype=np.uint8)
    for a in range(1, 256):
        for b in range(1, 256):
            t[a, b] = exp[log[a] + log[b]]
    return t


def aligned(np, n, align=64):
    buf = np.empty(n + align, dtype=np.uint8)
    off = (-buf.ctypes.data) % align
    return buf[off:off + n]


def worker_encode_k(backend, lib_path, ks, m, size, seconds):
    """Child process: one ctypes backend over every k; prints CSV rows on stdout."""
    import numpy as np
    mul = gf256_mul_table()
    mode = os.RTLD_NOW | os.RTLD_LOCAL | getattr(os, "RTLD_DEEPBIND", 0)
    lib = ctypes.CDLL(lib_path, mode=mode)
    isal_api = backend != "jerasure-w8"
    overhead_us = float("nan")
    if isal_api:
        enc = lib.ec_encode_data
        enc.restype = None
        enc.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
    else:
        gen = lib.reed_sol_vandermonde_coding_matrix
        gen.restype = ctypes.POINTER(ctypes.c_int)
        gen.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int]
        enc = lib.jerasure_matrix_encode
        enc.restype = None
        enc.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p,
                        ctypes.c_void_p, ctypes.c_int]
    w = csv.writer(sys.stdout)
    for k in ks:
        rng = np.random.default_rng(1000 + k)
        data = [aligned(np, size) for _ in range(k)]
        for d in data:
            d[:] = rng.integers(0, 256, size, dtype=np.uint8)
        par = [aligned(np, size) for _ in range(m)]
        dptr = (ctypes.c_void_p * k)(*[d.ctypes.data for d in data])
        pptr = (ctypes.c_void_p * m)(*[p.ctypes.data for p in par])
        if isal_api:
            mat = (ctypes.c_ubyte * ((k + m) * k))()
            lib.gf_gen_cauchy1_matrix(mat, k + m, k)
            coef = [[mat[(k + i) * k + j] for j in range(k)] for i in range(m)]
            tbl = (ctypes.c_ubyte * (32 * k * m))()
            lib.ec_init_tables(k, m, ctypes.byref(mat, k * k), tbl)
            args = (size, k, m, ctypes.addressof(tbl), ctypes.addressof(dptr), ctypes.addressof(pptr))
        else:
            mp = gen(k, m, 8)
            coef = [[mp[i * k + j] for j in range(k)] for i in range(m)]
            args = (k, m, 8, ctypes.cast(mp, ctypes.c_void_p).value, ctypes.addressof(dptr), ctypes.addressof(pptr), size)
        # Check against a numpy GF(2^8) reference (polynomial 0x11d, ISA-L's and Jerasure's).
        enc(*args)
        check = "ok"
        for i in range(m):
            want = np.zeros(size, dtype=np.uint8)
            for j in range(k):
                want ^= mul[coef[i][j]][data[j]]
            if not np.array_equal(want, par[i]):
                check = "MISMATCH"
        # Warm-up (ecjit's drop-in compiles a matrix's kernel on first use), then 5 batches:
        # the median batch's time per call.
        warm = 0.4 if backend == "dropin" else 0.1  # the drop-in's kernel arrives after a compile
        t0 = time.perf_counter()
        calls = 0
        while time.perf_counter() - t0 < warm or calls < 20:
            enc(*args)
            calls += 1
        t, total_calls = median_batch_seconds(lambda: enc(*args), seconds, step=8)
        if isal_api and overhead_us != overhead_us:  # nan: measure an empty call once
            empty = (0,) + args[1:]
            n = 20000
            t0 = time.perf_counter()
            for _ in range(n):
                enc(*empty)
            overhead_us = (time.perf_counter() - t0) / n * 1e6
        w.writerow([backend, k, m, size, "%.4f" % (k * size / t / 1e9), "%.3f" % (t * 1e6), total_calls,
                    "%.3f" % overhead_us, check, os.path.basename(lib_path)])
        sys.stdout.flush()
        if not isal_api:
            ctypes.CDLL(None).free(ctypes.cast(mp, ctypes.c_void_p))


def run_ecjit_demo(ecjit, k, m, size, seconds):
    env = dict(os.environ, ECJIT_DISK_CACHE="0")
    cmd = [ecjit, "demo", "--spec", "isal-cauchy:k=%d,m=%d" % (k, m), "--size", str(size), "--seconds", str(seconds)]
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    mo = re.search(r"^encode:\s+([0-9.]+) GB/s \(([0-9.]+) us per call, (\d+) calls\)", p.stdout, re.M)
    strat = re.search(r"^encoder:.*\(strategy ([^)]+)\)", p.stdout, re.M)
    cpu = re.search(r"cpu (\S+), (\d+)-bit vectors", p.stdout)
    ok = p.returncode == 0 and re.search(r"^OK$", p.stdout, re.M)
    if not mo:
        sys.stderr.write("ecjit demo failed for k=%d:\n%s%s" % (k, p.stdout, p.stderr))
        return None
    return ["ecjit", k, m, size, mo.group(1), mo.group(2), mo.group(3), "", "ok" if ok else "MISMATCH",
            "%s %s-bit %s" % (cpu.group(1) if cpu else "?", cpu.group(2) if cpu else "?",
                              strat.group(1) if strat else "?")]


def measure_encode_k(argv):
    ap = argparse.ArgumentParser(prog="plots.py measure-encode-k")
    ap.add_argument("--out", required=True)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--ks", default=",".join(map(str, DEFAULT_KS)))
    ap.add_argument("--m", type=int, default=4)
    ap.add_argument("--size", type=int, default=65536)
    ap.add_argument("--seconds", type=float, default=0.3, help="timed seconds per (backend, k, repetition)")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--backends", default="ecjit,dropin,isal-2.30,isal-2.31,jerasure-w8")
    a = ap.parse_args(argv)
    ks = [int(x) for x in a.ks.split(",")]
    libs = {
        "dropin": os.path.join(a.build, "isal-compat", "libisal.so.2"),
        "isal-2.30": "/lib/x86_64-linux-gnu/libisal.so.2" if os.path.exists("/lib/x86_64-linux-gnu/libisal.so.2")
        else (ctypes.util.find_library("isal") or "libisal.so.2"),
        "isal-2.31": os.environ.get("ECJIT_ISAL231", ""),
        "jerasure-w8": "/lib/x86_64-linux-gnu/libJerasure.so.2" if os.path.exists("/lib/x86_64-linux-gnu/libJerasure.so.2")
        else (ctypes.util.find_library("Jerasure") or "libJerasure.so.2"),
    }
    ecjit = os.path.join(a.build, "tools", "ecjit")
    order = []
    for b in a.backends.split(","):
        if b == "ecjit":
            if os.access(ecjit, os.X_OK):
                order.append(b)
            else:
                print("measure-encode-k: %s missing, ecjit skipped" % ecjit, file=sys.stderr)
        elif libs.get(b) and (os.path.exists(libs[b]) or "/" not in libs[b]):
            order.append(b)
        else:
            print("measure-encode-k: %s skipped (no library%s)" % (b, " at " + libs[b] if libs.get(b) else ""),
                  file=sys.stderr)
    header = ["backend", "k", "m", "shard_bytes", "gbps", "us_per_call", "calls", "call_overhead_us", "check",
              "detail", "rep"]
    rows = []
    for rep in range(a.reps):
        for i in range(len(order)):
            b = order[(i + rep) % len(order)]  # rotating order: a burst of load spreads over backends
            if b == "ecjit":
                for k in ks:
                    r = run_ecjit_demo(ecjit, k, a.m, a.size, a.seconds)
                    if r:
                        rows.append(r + [rep])
            else:
                p = subprocess.run([sys.executable, os.path.abspath(__file__), "_encode-k-worker", b, libs[b],
                                    ",".join(map(str, ks)), str(a.m), str(a.size), str(a.seconds)],
                                   capture_output=True, text=True)
                if p.returncode != 0:
                    sys.stderr.write("measure-encode-k: %s failed:\n%s" % (b, p.stderr))
                    continue
                for r in csv.reader(p.stdout.splitlines()):
                    rows.append(r + [rep])
            print("measure-encode-k: repetition %d/%d, %s done" % (rep + 1, a.reps, b), file=sys.stderr)
    with open(a.out, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)
    bad = [r for r in rows if r[8] != "ok"]
    for r in bad:
        print("measure-encode-k: WRONG PARITY: %s k=%s" % (r[0], r[1]), file=sys.stderr)
    return 1 if bad else 0


ENC_K_STYLE = {
    "ecjit": ("ecjit C++ API (ecjit demo, tuned)", "C0", "o-"),
    "dropin": ("ecjit's libisal.so.2 drop-in (ISA-L API, untuned)", "C0", "o--"),
    "isal-2.31": ("ISA-L 2.31 ec_encode_data", "C1", "d-"),
    "isal-2.30": ("ISA-L 2.30 ec_encode_data (Debian)", "C3", "s-"),
    "jerasure-w8": ("Jerasure 2.0 w=8 (reed_sol_vandermonde)", "C2", "^-"),
}


def plot_encode_k(data_dir, out_dir, machine):
    import matplotlib.pyplot as plt
    path = os.path.join(data_dir, "encode_k.csv")
    with open(path) as f:
        raw = list(csv.DictReader(f))
    meta = read_kv(os.path.join(data_dir, "encode_k.meta"))
    med = {}
    for r in raw:
        med.setdefault((r["backend"], int(r["k"])), []).append(float(r["gbps"]))
    series = {}
    for (b, k), v in med.items():
        series.setdefault(b, {})[k] = (statistics.median(v), min(v), max(v), len(v))
    m = raw[0]["m"] if raw else "4"
    size = int(raw[0]["shard_bytes"]) if raw else 65536
    overhead = [float(r["call_overhead_us"]) for r in raw if r["backend"] == "isal-2.30" and r["call_overhead_us"]]
    bad = sorted({(r["backend"], r["k"]) for r in raw if r["check"] != "ok"})

    fig, (a, b) = plt.subplots(2, 1, figsize=(10, 8.2), sharex=True, gridspec_kw={"height_ratios": [3, 1.4]})
    for key in ("ecjit", "dropin", "isal-2.31", "isal-2.30", "jerasure-w8"):
        if key not in series:
            continue
        lab, colour, style = ENC_K_STYLE[key]
        ks = sorted(series[key])
        ys = [series[key][k][0] for k in ks]
        lo = [series[key][k][0] - series[key][k][1] for k in ks]
        hi = [series[key][k][2] - series[key][k][0] for k in ks]
        a.errorbar(ks, ys, yerr=[lo, hi], fmt=style, color=colour, label=lab, capsize=2, markersize=5,
                   mfc="white" if key == "dropin" else colour)
    # Cross-check: bench_encode's k = 10 points (Google Benchmark, native calls, same machine).
    cross = []
    be = os.path.join(data_dir, "bench_encode.json")
    if os.path.exists(be):
        res, _ = load_bench_encode(be, size)
        for name, key, lab in (("BM_ecjit/gf8-isal-cauchy/host/auto/O3", "ecjit", "ecjit isal-cauchy"),
                               ("BM_isal/gf8/ec_encode_data", "isal-2.30", "ISA-L 2.30"),
                               ("BM_isal231/gf8/ec_encode_data", "isal-2.31", "ISA-L 2.31"),
                               ("BM_jerasure/w8", "jerasure-w8", "Jerasure w8")):
            if name in res and key in ENC_K_STYLE and int(m) == 4:
                a.plot([10], [res[name]["gbps"]], marker="*", markersize=13, color=ENC_K_STYLE[key][1],
                       linestyle="none", markeredgecolor="black", markeredgewidth=0.6)
                cross.append((lab, res[name]["gbps"], series.get(key, {}).get(10, (None,))[0]))
        if cross:
            a.plot([], [], marker="*", markersize=11, color="white", markeredgecolor="black", linestyle="none",
                   label="k = 10 from bench_encode (Google Benchmark), same colours")
    a.set_ylabel("encode GB/s (k x shard bytes / s, GB = 1e9 B)")
    a.set_title("Encode RS(k, %s) over GF(2^8) against k, %d KiB shards, one thread" % (m, size // 1024))
    a.grid(True, alpha=0.3)
    a.set_ylim(bottom=0)
    a.legend(fontsize=8, loc="best")
    # Ratio panel: ecjit / ISA-L 2.30 (and 2.31 when present).
    ratios = []
    for num, den, colour, lab in (("ecjit", "isal-2.30", "C0", "ecjit C++ API / ISA-L 2.30"),
                                  ("dropin", "isal-2.30", "C0", "drop-in / ISA-L 2.30"),
                                  ("ecjit", "isal-2.31", "C1", "ecjit C++ API / ISA-L 2.31")):
        if num in series and den in series:
            ks = sorted(set(series[num]) & set(series[den]))
            rs = [series[num][k][0] / series[den][k][0] for k in ks]
            b.plot(ks, rs, "o-" if num == "ecjit" else "o--", color=colour, label=lab,
                   mfc="white" if num == "dropin" else colour)
            ratios.append((lab, dict(zip(ks, rs))))
            for k, r in zip(ks, rs):
                if num == "ecjit" and k in (ks[0], 10, ks[-1]):
                    b.annotate("%.2fx" % r, (k, r), xytext=(0, 6), textcoords="offset points", fontsize=7, ha="center")
    b.axhline(1.0, color="black", linewidth=0.8)
    b.set_ylabel("ratio")
    b.set_xlabel("k (data shards); m = %s parity shards" % m)
    b.grid(True, alpha=0.3)
    b.set_ylim(0, max([r for _, rs in ratios for r in rs.values()] or [1]) * 1.2)
    b.legend(fontsize=8, loc="lower right")
    allk = sorted({k for s in series.values() for k in s})
    b.set_xticks(allk)
    reps = max((v[3] for s in series.values() for v in s.values()), default=1)
    notes = timing_note(meta, "plots.py measure-encode-k, %d repetitions in rotating order; "
                              "points: median, bars: min..max" % reps)
    notes.append("ecjit: `ecjit demo --spec isal-cauchy:k=K,m=%s` (ISA-L's Cauchy matrix; codec tuned, own C++ "
                 "timing loop). ISA-L / drop-in / Jerasure: called from Python ctypes, each in its own process;"
                 % m)
    share = []
    if overhead:
        ov = statistics.median(overhead)
        for key, lab in (("isal-2.30", "ISA-L 2.30's"), ("dropin", "the drop-in's")):
            for k in (10, min(series.get(key, {10: 0}))):
                if k in series.get(key, {}):
                    share.append("%.1f%% of %s call at k = %d" % (100 * ov / (k * size / series[key][k][0] / 1e3), lab, k))
    notes.append("their per-call times include an empty ctypes call of %s us (%s). Every backend's parity was "
                 "checked against a GF(2^8) reference first%s. Raw: data/encode_k.csv." % (
                     "%.2f" % statistics.median(overhead) if overhead else "?", ", ".join(dict.fromkeys(share)),
                     "" if not bad else " - WRONG PARITY: " + ", ".join("%s k=%s" % x for x in bad)))
    nl = footer(fig, machine, notes)
    fig.tight_layout(rect=(0, bottom_margin(fig, nl), 1, 1))
    out_rows = []
    for key in sorted(series):
        for k in sorted(series[key]):
            md, lo, hi, n = series[key][k]
            out_rows.append([key, k, m, size, "%.3f" % md, "%.3f" % lo, "%.3f" % hi, n])
    w = save(fig, out_dir, "encode_vs_k", out_rows,
             ["backend", "k", "m", "shard_bytes", "gbps_median", "gbps_min", "gbps_max", "repetitions"])
    plt.close(fig)
    parts = []
    for lab, rs in ratios:
        parts.append("%s: %s" % (lab, ", ".join("k=%d %.2fx" % (k, rs[k]) for k in sorted(rs) if k in (allk[0], 10, allk[-1]))))
    for key in ("ecjit", "dropin", "isal-2.30", "isal-2.31", "jerasure-w8"):
        if key in series and 10 in series[key]:
            parts.append("%s k=10 %.2f GB/s" % (key, series[key][10][0]))
    for lab, g, sw in cross:
        parts.append("bench_encode k=10 %s %.2f GB/s (sweep %s)" % (lab, g, "%.2f" % sw if sw else "-"))
    return w, "; ".join(parts)


# ----------------------------------------------------------------------------------------
# Degraded reads (bench_degraded's table)
# ----------------------------------------------------------------------------------------

DEG_ROW = re.compile(r"^(\S+)\s+(\S+)\s+(\S+)\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)\s*(.*)$")


def parse_degraded_lines(lines):
    rows = []
    title = ""
    for line in lines:
        line = line.rstrip("\n")
        if not title and "one thread" in line:
            title = line
        mo = DEG_ROW.match(line)
        if mo and mo.group(1) != "shard":
            rows.append({"shard": mo.group(1), "lost": mo.group(2), "backend": mo.group(3),
                         "gbps": float(mo.group(4)), "p50_us": float(mo.group(5)), "p99_us": float(mo.group(6)),
                         "max_us": float(mo.group(7)), "notes": mo.group(8)})
    return title, rows


def parse_degraded(path):
    with open(path) as f:
        return parse_degraded_lines(f)


def plot_degraded_k(data_dir, out_dir, machine):
    """Degraded reads against k (figures.sh step degraded_k: bench_degraded once per k, each
    block of data/degraded_k.txt headed '## k=K')."""
    import matplotlib.pyplot as plt
    blocks, k, cur = {}, None, []
    with open(os.path.join(data_dir, "degraded_k.txt")) as f:
        for line in f:
            mo = re.match(r"^## k=(\d+)", line)
            if mo:
                if k is not None:
                    blocks[k] = parse_degraded_lines(cur)[1]
                k, cur = int(mo.group(1)), []
            else:
                cur.append(line)
    if k is not None:
        blocks[k] = parse_degraded_lines(cur)[1]
    rows = [dict(r, k=kk) for kk, rs in sorted(blocks.items()) for r in rs]
    if not rows:
        print("degraded_k.txt: no rows, figure skipped", file=sys.stderr)
        return [], ""
    meta = read_kv(os.path.join(data_dir, "degraded_k.meta"))
    lost = []
    for r in rows:
        if r["lost"] not in lost:
            lost.append(r["lost"])
    backends = [b for b in ("ecjit", "dropin", "isal-2.31", "isal-2.30") if any(r["backend"] == b for r in rows)]
    ks = sorted(blocks)
    fig, axes = plt.subplots(2, len(lost), figsize=(5.2 * len(lost) + 1, 8.2), squeeze=False, sharex=True,
                             gridspec_kw={"height_ratios": [3, 1.4]})
    summary = []
    for col, l in enumerate(lost):
        a, b = axes[0][col], axes[1][col]
        for be in backends:
            pts = [(r["k"], r["gbps"]) for r in rows if r["lost"] == l and r["backend"] == be]
            lab, colour, _ = DEG_STYLE.get(be, (be, "gray", None))
            a.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", color=colour, label=lab)
        ratios = []
        for kk in ks:
            get = lambda be: next((r["gbps"] for r in rows if r["k"] == kk and r["lost"] == l and r["backend"] == be), None)
            best = max([v for v in (get("isal-2.30"), get("isal-2.31")) if v] or [0])
            for be, style in (("ecjit", "C0"), ("dropin", "#9ecae1")):
                v = get(be)
                if v and best:
                    ratios.append((be, kk, v / best))
        for be, style in (("ecjit", "C0"), ("dropin", "#9ecae1")):
            pts = [(kk, q) for (bb, kk, q) in ratios if bb == be]
            if pts:
                b.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", color=style,
                       label=DEG_STYLE[be][0] + " / the better ISA-L")
        e = [q for (bb, kk, q) in ratios if bb == "ecjit"]
        d = [q for (bb, kk, q) in ratios if bb == "dropin"]
        if e:
            summary.append("%s lost: ecjit / ISA-L %.2f-%.2fx%s" % (
                l, min(e), max(e), (", drop-in %.2f-%.2fx" % (min(d), max(d))) if d else ""))
        b.axhline(1.0, color="gray", linewidth=0.8)
        a.set_title("%s lost per call, 64 KiB shards" % l)
        a.set_ylim(bottom=0)
        a.grid(True, alpha=0.3)
        b.grid(True, alpha=0.3)
        b.set_xlabel("k (data shards), m = 4")
        b.set_xticks(ks)
    axes[0][0].set_ylabel("GB/s (k x shard bytes per call / s)")
    axes[1][0].set_ylabel("ratio to ISA-L")
    axes[1][0].legend(fontsize=8)
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, fontsize=8, loc="upper center", ncol=len(backends), bbox_to_anchor=(0.5, 0.955),
               frameon=False)
    fig.suptitle("Degraded reads against k: RS(k, 4) GF(2^8), ISA-L's Cauchy matrix, a seeded random erasure set "
                 "per call", fontsize=9)
    notes = timing_note(meta, "bench_degraded per k, medians of the repetitions in rotating order")
    notes.append("Each k is its own bench_degraded run (codec() and the drop-in's plans built afresh); first calls "
                 "of every new erasure set included. Raw tables: data/degraded_k.txt.")
    nl = footer(fig, machine, notes)
    fig.tight_layout(rect=(0, bottom_margin(fig, nl), 1, 0.92))
    out_rows = [[r["k"], r["lost"], r["backend"], r["gbps"], r["p50_us"], r["p99_us"], r["max_us"]] for r in rows]
    w = save(fig, out_dir, "degraded_vs_k", out_rows, ["k", "lost", "backend", "gbps", "p50_us", "p99_us", "max_us"])
    plt.close(fig)
    return w, "; ".join(summary)


DEG_STYLE = {"ecjit": ("ecjit C++ API", "C0", None), "dropin": ("ecjit's libisal.so.2 drop-in", "#9ecae1", None),
             "isal-2.30": ("ISA-L 2.30 (Debian)", "C3", None), "isal-2.31": ("ISA-L 2.31", "C1", None)}


def plot_degraded(data_dir, out_dir, machine):
    import matplotlib.pyplot as plt
    title, rows = parse_degraded(os.path.join(data_dir, "degraded.txt"))
    meta = read_kv(os.path.join(data_dir, "degraded.meta"))
    if not rows:
        print("degraded.txt: no rows, figure skipped", file=sys.stderr)
        return [], ""
    sizes = []
    for r in rows:
        if r["shard"] not in sizes:
            sizes.append(r["shard"])
    backends = [b for b in ("ecjit", "dropin", "isal-2.31", "isal-2.30") if any(r["backend"] == b for r in rows)]
    fig, axes = plt.subplots(2, len(sizes), figsize=(4.2 * len(sizes) + 1, 9.0), squeeze=False,
                             gridspec_kw={"height_ratios": [3, 2]})
    summary = []
    for col, (ax, size) in enumerate(zip(axes[0], sizes)):
        lost = []
        for r in rows:
            if r["shard"] == size and r["lost"] not in lost:
                lost.append(r["lost"])
        width = 0.8 / len(backends)
        for bi, b in enumerate(backends):
            xs, ys = [], []
            for li, l in enumerate(lost):
                v = [r["gbps"] for r in rows if r["shard"] == size and r["lost"] == l and r["backend"] == b]
                if v:
                    xs.append(li + (bi - (len(backends) - 1) / 2) * width)
                    ys.append(v[0])
            lab, colour, _ = DEG_STYLE.get(b, (b, "gray", None))
            ax.bar(xs, ys, width, color=colour, label=lab)
        top = max(r["gbps"] for r in rows if r["shard"] == size)
        for li, l in enumerate(lost):
            get = lambda b: next((r["gbps"] for r in rows if r["shard"] == size and r["lost"] == l and r["backend"] == b), None)
            e = get("ecjit")
            i30 = max([v for v in (get("isal-2.30"), get("isal-2.31")) if v] or [0])  # the better ISA-L
            if e and i30:
                bi = backends.index("ecjit")
                ax.annotate("%.2fx" % (e / i30), (li + (bi - (len(backends) - 1) / 2) * width, e),
                            xytext=(0, 3), textcoords="offset points", ha="center", fontsize=8, fontweight="bold")
                summary.append("%s lost %s: ecjit %.1f vs ISA-L %.1f GB/s (%.2fx)" % (size, l, e, i30, e / i30))
        ax.set_xticks(range(len(lost)))
        ax.set_xticklabels(["%s lost" % l for l in lost])
        ax.set_title("%s shards" % re.sub(r"^(\d+)([KM])$", r"\1 \2iB", size))
        ax.set_ylim(0, top * 1.15)
        ax.grid(True, axis="y", alpha=0.3)
        # Latency per call: p50 bars, p99 as a tick above each (the max is in the CSV).
        lx = axes[1][col]
        for bi, b in enumerate(backends):
            for li, l in enumerate(lost):
                r = next((r for r in rows if r["shard"] == size and r["lost"] == l and r["backend"] == b), None)
                if not r:
                    continue
                x = li + (bi - (len(backends) - 1) / 2) * width
                lx.bar([x], [r["p50_us"]], width, color=DEG_STYLE.get(b, (b, "gray"))[1])
                lx.plot([x], [r["p99_us"]], marker="_", markersize=12, color="black")
                lx.plot([x, x], [r["p50_us"], r["p99_us"]], color="black", linewidth=0.6)
        lx.set_xticks(range(len(lost)))
        lx.set_xticklabels(["%s lost" % l for l in lost])
        lx.set_ylim(bottom=0)
        lx.grid(True, axis="y", alpha=0.3)
    axes[0][0].set_ylabel("GB/s (k x shard bytes per call / s, GB = 1e9 B)")
    axes[1][0].set_ylabel("latency per call, us: p50 (bar), p99 (tick)")
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, fontsize=8, loc="upper center", ncol=len(backends), bbox_to_anchor=(0.5, 0.955),
               frameon=False)
    fig.suptitle("Degraded reads, RS(10, 4) GF(2^8) with ISA-L's Cauchy matrix: a seeded random erasure set per "
                 "call, rebuilt by reconstruct (ecjit) or invert + ec_init_tables + ec_encode_data (ISA-L API)",
                 fontsize=9)
    notes = timing_note(meta, "bench_degraded, medians of 3 repetitions in rotating order")
    notes.append("'1..2 lost' = each call loses a random 1 or 2 shards (data or parity); first calls and new "
                 "erasure sets included; bold: ecjit / ISA-L (the better of 2.30 and 2.31 when both ran). GB/s is "
                 "total bytes over the sum of call times, so at 4 KiB (2,000 calls of a few us) one stall of a few "
                 "ms moves it a lot: see the max column of the raw table data/degraded.txt.")
    nl = footer(fig, machine, notes)
    fig.tight_layout(rect=(0, bottom_margin(fig, nl), 1, 0.92))
    out_rows = [[r["shard"], r["lost"], r["backend"], r["gbps"], r["p50_us"], r["p99_us"], r["max_us"], r["notes"]]
                for r in rows]
    w = save(fig, out_dir, "degraded_read", out_rows,
             ["shard", "lost", "backend", "gbps", "p50_us", "p99_us", "max_us", "notes"])
    plt.close(fig)
    return w, "; ".join(summary)


# ----------------------------------------------------------------------------------------
# rs-fft against reed-solomon-simd (bench_fft, figures.sh step rsfft)
# ----------------------------------------------------------------------------------------

# "k:m:shard codec_ms enc crate ratio dec crate ratio  strategy / why" (crate columns "-" without it)
FFT_ROW = re.compile(r"^(\d+):(\d+):(\d+)\s+([\d.]+)\s+([\d.]+)\s+(\S+)\s+(\S+)\s+([\d.]+)\s+(\S+)\s+(\S+)")
# File -> (key, label): which losses ecjit decoded in that run (the crate always loses originals).
FFT_RUNS = [("originals", "rs_fft_originals.txt", "ecjit decode, m originals lost"),
            ("mixed", "rs_fft_mixed.txt", "ecjit decode, m - 1 originals + 1 recovery lost"),
            ("half", "rs_fft_half.txt", "ecjit decode, m/2 originals + m/2 recovery lost"),
            ("random", "rs_fft_random.txt", "ecjit decode, m lost at random (a failure's pattern)")]


def parse_fft(path):
    rows = {}
    if not os.path.exists(path):
        return rows
    with open(path) as f:
        for line in f:
            mo = FFT_ROW.match(line)
            if not mo:
                continue
            num = lambda v: float(v) if re.match(r"^[\d.]+$", v) else None
            rows[(int(mo.group(1)), int(mo.group(2)), int(mo.group(3)))] = {
                "enc": float(mo.group(5)), "crate_enc": num(mo.group(6)),
                "dec": float(mo.group(8)), "crate_dec": num(mo.group(9))}
    return rows


def plot_rs_fft(data_dir, out_dir, machine):
    """Encode and decode GB/s of rs-fft codes against reed-solomon-simd, per shard size."""
    import matplotlib.pyplot as plt
    runs = {key: parse_fft(os.path.join(data_dir, fname)) for key, fname, _ in FFT_RUNS}
    base = runs["originals"]
    if not base:
        print("rs_fft_originals.txt: no rows, figure skipped", file=sys.stderr)
        return [], ""
    meta = read_kv(os.path.join(data_dir, "rs_fft.meta"))
    sizes = sorted({c[2] for c in base})
    fig, axes = plt.subplots(1, len(sizes), figsize=(5.6 * len(sizes) + 0.5, 6.4), squeeze=False)
    series = [("enc", "originals", "ecjit encode", "#1f77b4"), ("crate_enc", "originals", "crate encode", "#aec7e8")]
    series += [("dec", key, label, colour) for (key, _, label), colour in
               zip(FFT_RUNS, ("#d62728", "#ff7f0e", "#8c564b", "#9467bd"))]
    series.append(("crate_dec", "originals", "crate decode (originals lost; the same transforms for any loss)",
                   "#c7c7c7"))
    out_rows, summary = [], []
    for ax, size in zip(axes[0], sizes):
        codes = sorted((c for c in base if c[2] == size), key=lambda c: c[0] + c[1])
        width = 0.8 / len(series)
        for si, (field, key, label, colour) in enumerate(series):
            xs, ys = [], []
            for ci, c in enumerate(codes):
                v = runs[key].get(c, {}).get(field)
                if v:
                    xs.append(ci + (si - (len(series) - 1) / 2) * width)
                    ys.append(v)
                    out_rows.append(["%d:%d" % (c[0], c[1]), size, label, v])
            ax.bar(xs, ys, width, color=colour, label=label)
        for ci, c in enumerate(codes):
            crate_enc, crate_dec = base[c].get("crate_enc"), base[c].get("crate_dec")
            for si, (field, key, _, _) in enumerate(series):
                v = runs[key].get(c, {}).get(field)
                ref = crate_enc if field == "enc" else crate_dec if field == "dec" else None
                if v and ref:
                    ax.annotate("%.1fx" % (v / ref), (ci + (si - (len(series) - 1) / 2) * width, v), xytext=(0, 2),
                                textcoords="offset points", ha="center", fontsize=6, rotation=90)
            if crate_dec and runs["random"].get(c):
                summary.append("%d:%d %d B: decode (m lost at random) %.1fx the crate" % (
                    c[0], c[1], size, runs["random"][c]["dec"] / crate_dec))
        ax.set_xticks(range(len(codes)))
        ax.set_xticklabels(["%d:%d" % (c[0], c[1]) for c in codes])
        ax.set_yscale("log")
        shown = [r[3] for r in out_rows if r[1] == size]
        ax.set_ylim(min(shown) * 0.7, max(shown) * 1.8)  # room for the ratios above the bars
        ax.set_title("%s shards" % ("%d KiB" % (size // 1024) if size % 1024 == 0 else "%d B" % size))
        ax.grid(True, axis="y", which="both", alpha=0.3)
        ax.set_xlabel("original : recovery shards")
    axes[0][0].set_ylabel("GB/s (k x shard bytes per call / s, GB = 1e9 B; log scale)")
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, fontsize=7, loc="upper center", ncol=3, bbox_to_anchor=(0.5, 0.955), frameon=False)
    fig.suptitle("rs-fft (additive FFT over GF(2^16), byte for byte reed-solomon-simd 3.1) against the crate, "
                 "one erasure set per run", fontsize=9)
    notes = timing_note(meta, "bench_fft, medians of %s repetitions, ecjit and the crate's binary alternating" %
                        meta.get("reps", "3"))
    notes.append("Ratios over each bar: ecjit / the crate in the same run (encode to its encode, every decode to "
                 "its decode). The crate's harness loses originals only; its decoder runs the same erasure-locator "
                 "transforms for any loss. Raw: data/rs_fft_*.txt.")
    nl = footer(fig, machine, notes)
    fig.tight_layout(rect=(0, bottom_margin(fig, nl), 1, 0.9))
    w = save(fig, out_dir, "rs_fft", out_rows, ["code", "shard_bytes", "series", "gbps"])
    plt.close(fig)
    return w, "; ".join(summary)


# ----------------------------------------------------------------------------------------
# Nešković 2018, Figures 5-5 / 5-6 (O0 / O3 encode throughput against n, x86 tiers) and 5-7
# (ARM, as llvm-mca estimates): measurement, estimate, figures
# ----------------------------------------------------------------------------------------

# The n of Figure 5-4 (ecjit stats --sweep: n = 4..64 step 4, k = 3n/4, m = n/4), thinned so
# that compiling the O0 encoders (about 5 s each at n = 64) keeps the run near 2-3 minutes.
FIG56_NS = [4, 8, 16, 24, 32, 48, 64]
# Tier -> (target string, label). "host" is the widest tier of the machine measured.
FIG56_TIERS = [
    ("scalar", "host-sse2", "scalar (host-sse2: no vector unit, 64-bit GPRs)"),
    ("sse", "host-avx2", "SSE tier (host-avx2: 128-bit)"),
    ("avx2", "host", "AVX2 (host: 256-bit)"),
]
FIG57_TIERS = [
    ("scalar", "aarch64-neon", "scalar (aarch64-neon: 64-bit GPRs)"),
    ("neon", "aarch64", "NEON (aarch64: 128-bit)"),
]
FIG57_CPU = "cortex-a72"
FIG57_GHZ = 2.0


def fig56_k_m(n):
    """Figure 5-4's rule: RS(n, k = 3n/4), m = n - k (25 % redundancy)."""
    k = 3 * n // 4
    return k, n - k


class _JitOptions(ctypes.Structure):  # ecjit_jit_options of runtime/include/ecjit/ecjit_c.h
    _fields_ = [("target", ctypes.c_char_p), ("strategy", ctypes.c_char_p), ("opt_level", ctypes.c_uint),
                ("max_cached_kernels", ctypes.c_size_t), ("disk_cache", ctypes.c_int), ("threads", ctypes.c_uint),
                ("tune", ctypes.c_int), ("tune_in_background", ctypes.c_int)]


def worker_fig56(lib_path, n, gf, size, seconds):
    """Child process: RS(n, 3n/4) over GF(2^gf), every tier at O0 and O3, clmul-shift, through
    the C API (ecjit_c.h) with the disk cache and tuning off. Prints CSV rows on stdout. All six
    encoders must write the same parity (check column)."""
    import numpy as np
    lib = ctypes.CDLL(lib_path)
    lib.ecjit_last_error.restype = ctypes.c_char_p
    lib.ecjit_encode.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t]
    k, m = fig56_k_m(n)
    spec = "rs-vand:k=%d,m=%d,gf=%d" % (k, m, gf)
    rng = np.random.default_rng(5600 + n + gf)
    data = [aligned(np, size) for _ in range(k)]
    for d in data:
        d[:] = rng.integers(0, 256, size, dtype=np.uint8)
    par = [aligned(np, size) for _ in range(m)]
    dptr = (ctypes.c_void_p * k)(*[d.ctypes.data for d in data])
    pptr = (ctypes.c_void_p * m)(*[p.ctypes.data for p in par])
    first = None
    w = csv.writer(sys.stdout)
    for tier, target, _ in FIG56_TIERS:
        for opt in (0, 3):
            o = _JitOptions()
            lib.ecjit_jit_options_init(ctypes.byref(o))
            o.target, o.strategy, o.opt_level = target.encode(), b"clmul-shift", opt
            o.disk_cache, o.tune, o.tune_in_background, o.threads = 0, 0, 0, 1
            jit, codec = ctypes.c_void_p(), ctypes.c_void_p()
            if lib.ecjit_jit_create(ctypes.byref(o), ctypes.byref(jit)) != 0:
                sys.stderr.write("%s %s O%d: %s\n" % (spec, target, opt, lib.ecjit_last_error().decode()))
                continue
            t0 = time.perf_counter()
            if lib.ecjit_codec_create(jit, spec.encode(), ctypes.byref(codec)) != 0:
                sys.stderr.write("%s %s O%d: %s\n" % (spec, target, opt, lib.ecjit_last_error().decode()))
                lib.ecjit_jit_destroy(jit)
                continue
            compile_s = time.perf_counter() - t0
            args = (codec, ctypes.addressof(dptr), ctypes.addressof(pptr), size)
            for p in par:
                p[:] = 0
            if lib.ecjit_encode(*args) != 0:
                sys.stderr.write("%s %s O%d: encode: %s\n" % (spec, target, opt, lib.ecjit_last_error().decode()))
                continue
            got = b"".join(p.tobytes() for p in par)
            first = got if first is None else first
            check = "ok" if got == first else "MISMATCH"
            # Warm-up, then 5 batches of seconds/5: the median batch's time per call.
            t0 = time.perf_counter()
            while time.perf_counter() - t0 < 0.05:
                lib.ecjit_encode(*args)
            t, calls = median_batch_seconds(lambda: lib.ecjit_encode(*args), seconds)
            w.writerow([n, k, m, gf, tier, target, "O%d" % opt, "%.4f" % (k * size / t / 1e9), 0,
                        "%.3f" % (t * 1e6), calls, "%.2f" % compile_s, check])
            sys.stdout.flush()
            lib.ecjit_codec_destroy(codec)
            lib.ecjit_jit_destroy(jit)


def llvm_cpu_name():
    """LLVM's name for this CPU (clang-19 -march=native), or ''."""
    try:
        p = subprocess.run(["clang-19", "-march=native", "-###", "-x", "c", "/dev/null", "-c"],
                           capture_output=True, text=True)
        mo = re.search(r'"-target-cpu" "([^"]+)"', p.stderr)
        return mo.group(1) if mo else ""
    except OSError:
        return ""


def append_machine_meta(path):
    """Appends the live machine (machine_* keys) to a .meta file: machine.txt may be older."""
    if not path:
        return
    m = live_machine()
    m["llvm_cpu"] = llvm_cpu_name()
    with open(path, "a") as f:
        for key in ("nproc", "cpu_model", "cpu_family", "cpu_model_number", "flags", "virtualized", "llvm_cpu"):
            if m.get(key):
                f.write("machine_%s=%s\n" % (key, m[key]))


def meta_machine(meta, machine):
    """The machine_* keys of a .meta file when present, else machine (machine.txt)."""
    own = {k[len("machine_"):]: v for k, v in meta.items() if k.startswith("machine_")}
    return own or machine


def measure_fig56(argv):
    ap = argparse.ArgumentParser(prog="plots.py measure-fig56")
    ap.add_argument("--out", required=True)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--ns", default=",".join(map(str, FIG56_NS)))
    ap.add_argument("--size", type=int, default=65536)
    ap.add_argument("--seconds", type=float, default=0.2, help="timed seconds per (n, gf, tier, opt)")
    ap.add_argument("--meta", default="", help="append this machine (machine_* keys) to this .meta file")
    a = ap.parse_args(argv)
    lib = os.path.join(a.build, "lib", "libecjit.so")
    if not os.path.exists(lib):
        print("measure-fig56: %s missing (build ecjit first)" % lib, file=sys.stderr)
        return 1
    header = ["n", "k", "m", "gf", "tier", "target", "opt", "gbps", "rep", "us_per_call", "calls", "compile_s",
              "check"]
    rows = []
    for n in [int(x) for x in a.ns.split(",")]:
        for gf in (8, 16):
            t0 = time.time()
            p = subprocess.run([sys.executable, os.path.abspath(__file__), "_fig56-worker", lib, str(n), str(gf),
                                str(a.size), str(a.seconds)], capture_output=True, text=True,
                               env=dict(os.environ, ECJIT_DISK_CACHE="0"))
            sys.stderr.write(p.stderr)
            got = list(csv.reader(p.stdout.splitlines()))
            rows.extend(got)
            print("measure-fig56: n=%d gf=%d: %d configurations, %.0f s%s" % (
                n, gf, len(got), time.time() - t0, "" if p.returncode == 0 else " (worker failed)"), file=sys.stderr)
    with open(a.out, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)
    append_machine_meta(a.meta)
    bad = [r for r in rows if r[-1] != "ok"]
    for r in bad:
        print("measure-fig56: PARITY DIFFERS from the scalar O0 encoder: n=%s gf=%s %s %s" % (r[0], r[3], r[5], r[6]),
              file=sys.stderr)
    return 1 if bad else 0


def asm_main_loop(text):
    """Instructions of the blocks whose IR name starts with vloop (kMainLoopBlock), LLVM comments
    naming the blocks as tools/asm_counts.cpp reads them; labels, directives, comments dropped."""
    out, block = [], ""
    for line in text.splitlines():
        code, _, comment = line.partition("//")
        code, tc = code.strip(), comment.strip()
        if code.endswith(":") or (not code and tc.startswith("%bb.")):
            mo = re.search(r"%(\S+)\s*$", tc.split(":", 1)[1] if tc.startswith("%bb.") else tc)
            block = mo.group(1) if mo else ""
            continue
        if code and not code.startswith(".") and block.startswith("vloop"):
            out.append(code)
    return out


def measure_fig57(argv):
    ap = argparse.ArgumentParser(prog="plots.py measure-fig57")
    ap.add_argument("--out", required=True)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--ns", default=",".join(map(str, FIG56_NS)))
    ap.add_argument("--mca", default="llvm-mca-19")
    ap.add_argument("--cpu", default=FIG57_CPU)
    ap.add_argument("--ghz", type=float, default=FIG57_GHZ)
    ap.add_argument("--iterations", type=int, default=200)
    a = ap.parse_args(argv)
    ecjit = os.path.join(a.build, "tools", "ecjit")
    header = ["n", "k", "m", "gf", "tier", "cycles_per_iter", "bytes_per_iter", "gbps_est", "target", "mcpu",
              "ghz", "loop_instructions", "block_rthroughput"]
    rows = []
    for n in [int(x) for x in a.ns.split(",")]:
        k, m = fig56_k_m(n)
        for gf in (8, 16):
            spec = "rs-vand:k=%d,m=%d,gf=%d" % (k, m, gf)
            for tier, target, _ in FIG57_TIERS:
                p = subprocess.run([ecjit, "asm", "--spec", spec, "--target", target, "--strategy", "clmul-shift",
                                    "--opt", "O3"], capture_output=True, text=True,
                                   env=dict(os.environ, ECJIT_DISK_CACHE="0"))
                bits = re.search(r"(\d+)-bit vectors", p.stdout.splitlines()[0] if p.stdout else "")
                loop = asm_main_loop(p.stdout)
                if p.returncode != 0 or not bits or not loop:
                    sys.stderr.write("measure-fig57: %s %s: no main loop\n%s" % (spec, target, p.stderr))
                    continue
                q = subprocess.run([a.mca, "-mtriple=aarch64", "-mcpu=" + a.cpu, "-iterations=%d" % a.iterations],
                                   input="\n".join(loop) + "\n", capture_output=True, text=True)
                it = re.search(r"^Iterations:\s+(\d+)", q.stdout, re.M)
                cyc = re.search(r"^Total Cycles:\s+(\d+)", q.stdout, re.M)
                rt = re.search(r"^Block RThroughput:\s+([0-9.]+)", q.stdout, re.M)
                if q.returncode != 0 or not it or not cyc:
                    sys.stderr.write("measure-fig57: llvm-mca failed on %s %s:\n%s" % (spec, target, q.stderr[:2000]))
                    continue
                cpi = int(cyc.group(1)) / int(it.group(1))
                bpi = k * int(bits.group(1)) // 8  # one step of the loop reads one vector per data shard
                rows.append([n, k, m, gf, tier, "%.2f" % cpi, bpi, "%.3f" % (bpi / cpi * a.ghz), target, a.cpu,
                             a.ghz, len(loop), rt.group(1) if rt else ""])
                print("measure-fig57: %s %s: %d instructions, %.1f cycles/iter" % (spec, target, len(loop), cpi),
                      file=sys.stderr)
    with open(a.out, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)
    return 0 if rows else 1


def plot_fig56(data_dir, out_dir, machine):
    import matplotlib.pyplot as plt
    with open(os.path.join(data_dir, "fig56.csv")) as f:
        raw = list(csv.DictReader(f))
    meta = read_kv(os.path.join(data_dir, "fig56.meta"))
    mach = meta_machine(meta, machine)
    val = {}
    for r in raw:
        val.setdefault((int(r["gf"]), r["tier"], r["opt"]), {}).setdefault(int(r["n"]), []).append(float(r["gbps"]))
    med = {key: {n: statistics.median(v) for n, v in d.items()} for key, d in val.items()}
    allv = [g for d in med.values() for g in d.values() if g > 0]
    ylim = (10 ** math_floor_log10(min(allv)), 10 ** (math_floor_log10(max(allv)) + 1))  # one scale for 5-5 and 5-6
    bad = sorted({(r["n"], r["gf"], r["target"], r["opt"]) for r in raw if r.get("check", "ok") != "ok"})
    comp = {}
    for r in raw:
        comp.setdefault(r["opt"], []).append((float(r.get("compile_s") or 0), r["n"], r["gf"], r["target"]))
    size = int(raw[0]["k"]) and 65536
    written, summary = [], []
    styles = {"scalar": ("C3", "o-"), "sse": ("C0", "s-"), "avx2": ("C2", "^-")}
    for opt, name, title in (("O0", "fig5-5_unoptimized", "Figure 5-5 reproduced: UNOPTIMIZED (LLVM O0)"),
                             ("O3", "fig5-6_optimized", "Figure 5-6 reproduced: OPTIMIZED (LLVM O3)")):
        fig, axes = plt.subplots(1, 2, figsize=(11, 5.2), sharey=True)
        rows = []
        for ax, gf in zip(axes, (8, 16)):
            for tier, target, lab in FIG56_TIERS:
                d = med.get((gf, tier, opt), {})
                if not d:
                    continue
                ns = sorted(d)
                colour, style = styles[tier]
                ax.plot(ns, [d[n] for n in ns], style, color=colour, label=lab)
                for n in ns:
                    k, m = fig56_k_m(n)
                    rows.append([n, k, m, gf, tier, target, opt, "%.4f" % d[n], len(val[(gf, tier, opt)][n])])
            ax.set_yscale("log")
            ax.set_ylim(*ylim)
            ax.set_xlabel("n (RS(n, k = 3n/4), m = n/4; as Figure 5-4)")
            ax.set_title("GF(2^%d)" % gf)
            ax.grid(True, which="both", alpha=0.3)
            ax.set_xticks(FIG56_NS if set(FIG56_NS) >= {int(r[0]) for r in rows} else sorted({int(r[0]) for r in rows}))
        axes[0].set_ylabel("encode GB/s, log scale\n(k x shard bytes / s, GB = 1e9 B)")
        axes[0].legend(fontsize=8, loc="lower left")
        fig.suptitle("%s Reed-Solomon(n, k) encoders, clmul-shift lowering,\n"
                     "scalar / SSE / AVX2 code (same y scale in 5-5 and 5-6)" % title, fontsize=10)
        notes = timing_note(meta, "plots.py measure-fig56, one repetition, median of 5 batches per point")
        cs = sorted(comp.get(opt, []))
        notes.append("Encoders from the C API (libecjit.so via Python ctypes, one process per (n, field)): spec "
                     "rs-vand:k=K,m=M,gf=8|16, --strategy clmul-shift forced, tuning and disk cache off, %d KiB "
                     "shards, one thread; per-call times include a ctypes call (~1 us). The six encoders of each "
                     "(n, field) wrote identical parity%s. JIT compile at %s: up to %.1f s (n = %s, GF(2^%s), %s). "
                     "Nešković 2018: Intel Haswell Xeon E5-2660v3, absolute values not tabulated in the text; this is a "
                     "different CPU, compare shapes, not values. O0 = LLVM's O0 IR pipeline and code generation "
                     "at CodeGenOptLevel::None (fast register allocation, no scheduling); x86 instruction "
                     "selection still merges the repeated shifts (ecjit stats, RS(32,24) GF(2^8): 1520 shifts in "
                     "the O0 IR, 384 in the machine code at O0 and at O3), so O0 is faster than Nešković 2018's "
                     "unoptimized code. 64 KiB shards re-encoded: small n runs from cache. Raw: data/fig56.csv."
                     % (size // 1024, "" if not bad else " EXCEPT " + ", ".join("n=%s gf=%s %s %s" % b for b in bad),
                        opt, cs[-1][0] if cs else 0, cs[-1][1] if cs else "?", cs[-1][2] if cs else "?",
                        cs[-1][3] if cs else "?"))
        nl = footer(fig, mach, notes)
        fig.tight_layout(rect=(0, bottom_margin(fig, nl), 1, 0.93))
        written += save(fig, out_dir, name, rows, ["n", "k", "m", "gf", "tier", "target", "opt", "gbps", "runs"])
        plt.close(fig)
    for gf in (8, 16):
        for tier, _, _ in FIG56_TIERS:
            d0, d3 = med.get((gf, tier, "O0"), {}), med.get((gf, tier, "O3"), {})
            ns = sorted(set(d0) & set(d3))
            if ns:
                r = [d3[n] / d0[n] for n in ns]
                summary.append("GF(2^%d) %s: O0 %.2f..%.2f, O3 %.2f..%.2f GB/s, O3/O0 %.1fx..%.1fx" % (
                    gf, tier, min(d0[n] for n in ns), max(d0[n] for n in ns), min(d3[n] for n in ns),
                    max(d3[n] for n in ns), min(r), max(r)))
    return written, "; ".join(summary)


def math_floor_log10(x):
    import math
    return math.floor(math.log10(x))


def plot_fig57(data_dir, out_dir, machine):
    import matplotlib.pyplot as plt
    with open(os.path.join(data_dir, "fig57.csv")) as f:
        raw = list(csv.DictReader(f))
    meta = read_kv(os.path.join(data_dir, "fig57.meta"))
    cpu = raw[0]["mcpu"] if raw else FIG57_CPU
    ghz = float(raw[0]["ghz"]) if raw else FIG57_GHZ
    label = "llvm-mca estimate, %s, %.1f GHz nominal, not a measurement" % (cpu.replace("cortex-a", "Cortex-A"), ghz)
    fig, axes = plt.subplots(1, 2, figsize=(11, 5.2), sharey=True)
    styles = {"scalar": ("C3", "o-"), "neon": ("C4", "D-")}
    rows, summary = [], []
    for ax, gf in zip(axes, (8, 16)):
        for tier, target, lab in FIG57_TIERS:
            pts = sorted((int(r["n"]), r) for r in raw if int(r["gf"]) == gf and r["tier"] == tier)
            if not pts:
                continue
            colour, style = styles[tier]
            ax.plot([n for n, _ in pts], [float(r["gbps_est"]) for _, r in pts], style, color=colour,
                    label=lab + " (estimate)")
            for n, r in pts:
                rows.append([n, r["k"], r["m"], gf, tier, target, r["cycles_per_iter"], r["bytes_per_iter"],
                             r["gbps_est"]])
            g = [float(r["gbps_est"]) for _, r in pts]
            summary.append("GF(2^%d) %s %.2f..%.2f GB/s est." % (gf, tier, min(g), max(g)))
        ax.set_yscale("log")
        ax.set_xlabel("n (RS(n, k = 3n/4), m = n/4; as Figure 5-4)")
        ax.set_title("GF(2^%d)" % gf)
        ax.grid(True, which="both", alpha=0.3)
        ax.set_xticks(sorted({int(r["n"]) for r in raw}))
        ax.text(0.5, 0.97, "ESTIMATE, not a measurement", transform=ax.transAxes, ha="center", va="top",
                fontsize=9, color="#aa0000")
    axes[0].set_ylabel("estimated encode GB/s at %.1f GHz (log scale)" % ghz)
    axes[0].legend(fontsize=8, loc="lower left")
    fig.suptitle("Figure 5-7 reproduced as an estimate: optimized (O3) RS(n, k) encoders for AArch64, scalar and "
                 "NEON, clmul-shift\n" + label, fontsize=10)
    notes = ["%s; generated %s. `ecjit asm --spec rs-vand:k=K,m=M,gf=G --target aarch64-neon|aarch64 --strategy "
             "clmul-shift --opt O3` (code generated for LLVM's generic AArch64 CPU), main loop = the blocks LLVM "
             "names vloop*, fed to `llvm-mca-19 -mtriple=aarch64 -mcpu=%s`: GB/s = k x vector bytes per iteration "
             "/ (Total Cycles / Iterations) x %.1f GHz. llvm-mca models the core's pipeline only: every load hits "
             "L1, no memory bandwidth limit, no front-end stalls, so small n is not capped by DRAM as on the "
             "board of Nešković 2018, whose ARM platform's absolute values are not tabulated in its text."
             % (label, meta.get("date", "?"), cpu, ghz)]
    import textwrap  # footer() starts with the machine's line; no ARM machine ran anything here
    lines = [x for line in ["No ARM machine: computed on the x86 host."] + notes
             for x in textwrap.wrap(line, int(fig.get_figwidth() * 17), subsequent_indent="  ")]
    fig.text(0.01, 0.005, "\n".join(lines), fontsize=7, va="bottom", ha="left", color="#333333")
    nl = len(lines)
    fig.tight_layout(rect=(0, bottom_margin(fig, nl), 1, 0.93))
    w = save(fig, out_dir, "fig5-7_arm_estimates", rows,
             ["n", "k", "m", "gf", "tier", "target", "cycles_per_iter", "bytes_per_iter", "gbps_est"])
    plt.close(fig)
    return w, "; ".join(summary)


# ----------------------------------------------------------------------------------------

def main(argv):
    if argv and argv[0] == "measure-encode-k":
        return measure_encode_k(argv[1:])
    if argv and argv[0] == "measure-fig56":
        return measure_fig56(argv[1:])
    if argv and argv[0] == "measure-fig57":
        return measure_fig57(argv[1:])
    if argv and argv[0] == "_fig56-worker":
        lib, n, gf, size, secs = argv[1:6]
        worker_fig56(lib, int(n), int(gf), int(size), float(secs))
        return 0
    if argv and argv[0] == "_encode-k-worker":
        b, lib, ks, m, size, secs = argv[1:7]
        worker_encode_k(b, lib, [int(x) for x in ks.split(",")], int(m), int(size), float(secs))
        return 0
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=os.path.join(ROOT, "docs", "figures", "data"))
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "figures"))
    ap.add_argument("--only", default="", help="comma-separated data files to plot, e.g. fig56.csv,fig57.csv")
    a = ap.parse_args(argv)
    import matplotlib
    matplotlib.use("Agg")
    machine = read_kv(os.path.join(a.data, "machine.txt")) or live_machine()
    # (data file, its run's name in figures.sh, plot): a run's <name>.machine, where figures.sh
    # wrote one, names the machine it measured on; machine.txt is only the last run's.
    jobs = [("stats_sweep.csv", "stats_sweep", plot_sweep), ("encode_k.csv", "encode_k", plot_encode_k),
            ("bench_encode.json", "bench_encode", plot_bench_encode), ("degraded.txt", "degraded", plot_degraded),
            ("degraded_k.txt", "degraded_k", plot_degraded_k), ("rs_fft_originals.txt", "rs_fft", plot_rs_fft),
            ("fig56.csv", "fig56", plot_fig56), ("fig57.csv", "fig57", plot_fig57)]
    made = 0
    for fname, run, fn in jobs:
        if a.only and fname not in a.only.split(","):
            continue
        if not os.path.exists(os.path.join(a.data, fname)):
            print("plots.py: %s not in %s, its figure skipped" % (fname, a.data), file=sys.stderr)
            continue
        print("%s ->" % fname)
        files, summary = fn(a.data, a.out, read_kv(os.path.join(a.data, run + ".machine")) or machine)
        made += bool(files)
        if summary:
            print("  " + summary)
    if not made:
        print("plots.py: no data in %s (run bench/figures.sh)" % a.data, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
