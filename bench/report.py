#!/usr/bin/env python3
# report: turns bench/report.sh's raw outputs into Markdown tables and splices them into
# docs/performance.md (one block per step, between <!-- report:CLASS:STEP begin/end --> markers)
# and README.md (<!-- report-summary:CLASS begin/end -->), leaving every other block as it is.
#   report.py --class CLASS --data DIR [--root DIR] [--no-write]
# A block whose markers are missing goes at the end of its class's section of docs/performance.md
# (the section is created before the Nešković 2018 figures when the class has none); the summary
# at the end of the README's "How fast" section.
import argparse
import json
import os
import re
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ratio_table  # noqa: E402  (bench_encode JSON: medians per benchmark)

SECTIONS = {
    "x86-avx512-gfni": "## x86-64 with AVX-512 and GFNI",
    "x86-avx512": "## x86-64 with AVX-512, without GFNI",
    "x86-avx2-gfni": "## x86-64 with AVX2 and GFNI, without AVX-512",
    "x86-avx2": "## x86-64 AVX2 without GFNI",
    "aarch64-neon": "## AArch64 NEON",
}
TITLES = {
    "encode": "Encode: RS(10,4) against ISA-L, Jerasure, GF-Complete",
    "matrix": "RS matrix codes against klauspost/reedsolomon",
    "degraded": "Degraded reads against ISA-L",
    "wide16": "Wide codes: rs-fft GF(2^16) against reed-solomon-simd",
    "wide8": "Wide codes: rs-fft GF(2^8) against klauspost's leopard8",
    "xor": "XOR codes against libJerasure",
    "first": "The first codec of a process",
}
STEPS = list(TITLES)


def kv(path):
    out = {}
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                key, sep, value = line.rstrip("\n").partition("=")
                if sep:
                    out[key] = value
    return out


def ratio(a, b):
    return "%.2fx" % (a / b) if a and b else "-"


def gbps(x):
    return "-" if x is None else ("%.1f" % x if x >= 10 else "%.2f" % x)


def size_name(n):
    return "%d MiB" % (n >> 20) if n >= 1 << 20 else "%d KiB" % (n >> 10)


def shard_bytes(text):  # "4K", "64K", "1M", "65536"
    m = re.fullmatch(r"(\d+)([KM]?)", text)
    return int(m.group(1)) << {"": 0, "K": 10, "M": 20}[m.group(2)] if m else 0


class Run:
    """One step's raw output with its machine and metadata."""

    def __init__(self, data, name):
        self.data, self.name = data, name
        self.meta = kv(os.path.join(data, name + ".meta"))
        self.machine = kv(os.path.join(data, name + ".machine"))

    def exists(self, *files):
        return self.meta and all(os.path.exists(os.path.join(self.data, f)) for f in files)

    def path(self, f):
        return os.path.join(self.data, f)

    def caption(self, what, stat):
        m = self.machine
        cpu = m.get("cpu_model", "?")
        llvm = m.get("llvm_cpu")
        where = "%s (%s%d cores)" % (cpu, llvm + ", " if llvm else "", int(m.get("nproc", "0") or 0))
        load = ""
        if self.meta.get("under_load") == "1":
            load = "; **measured under load** (1-minute load average %s)" % self.meta.get("load_before", "?")
        return ("`bench/report.sh --steps %s`: %s, %s, one thread, %s; %s%s.\n\n"
                % (self.name, where, self.meta.get("date", "?"), stat, what, load))


def reps_of(run):
    return "medians of %s" % run.meta["reps"] if "reps" in run.meta else "medians"


def encode_block(run, summary):
    if not run.exists("encode.json"):
        return None
    _, rates, labels, errors, _ = ratio_table.load(run.path("encode.json"))
    size = 65536
    r = lambda name: rates.get((name, size))  # noqa: E731
    peers = {8: [("ISA-L 2.30 `ec_encode_data`", "BM_isal/gf8/ec_encode_data"),
                 ("ISA-L 2.31 `ec_encode_data`", "BM_isal231/gf8/ec_encode_data"),
                 ("Jerasure w=8", "BM_jerasure/w8")],
             16: [("Jerasure w=16", "BM_jerasure/w16")], 32: [("Jerasure w=32", "BM_jerasure/w32")],
             64: [("GF-Complete w=64", "BM_gf_complete/w64")]}
    rows = ["| field | tuner chose | ecjit GB/s | strongest peer | peer GB/s | ecjit / peer |",
            "|---|---|---|---|---|---|"]
    for w in (8, 16, 32, 64):
        name = "BM_ecjit/gf%d/host/auto/O3" % w
        mine = r(name)
        if mine is None:
            continue
        have = [(r(b) or 0, label) for label, b in peers[w] if r(b)]
        best = max(have) if have else (0, "not measured")
        strategy = ratio_table.strategy_of(labels.get(name, ""))
        rows.append("| GF(2^%d) | %s | %s | %s | %s | **%s** |" % (
            w, strategy, gbps(mine / 1e9), best[1], gbps(best[0] / 1e9) if best[0] else "-",
            ratio(mine, best[0])))
        summary.append(("RS(10,4) encode, GF(2^%d), 64 KiB" % w, gbps(mine / 1e9) + " GB/s",
                        "%s, %s GB/s" % (best[1], gbps(best[0] / 1e9)), ratio(mine, best[0])))
    if errors:
        rows.append("")
        rows.extend("Not measured: %s." % e for e in errors)
    others = [("ISA-L 2.30 `ec_encode_data`", "BM_isal/gf8/ec_encode_data"),
              ("ISA-L 2.31", "BM_isal231/gf8/ec_encode_data"), ("Jerasure w=8", "BM_jerasure/w8")]
    line = ", ".join("%s %s" % (label, gbps(r(b) / 1e9)) for label, b in others if r(b))
    if not r("BM_isal231/gf8/ec_encode_data"):
        line += "; ISA-L 2.31 not built (bench/fetch_isal231.sh)"
    return (run.caption("RS(10,4), 64 KiB shards, GB/s of k x shard input", reps_of(run)) + "\n".join(rows) +
            "\n\nGF(2^8) peers in the same run: %s.\n" % line)


def matrix_block(run, summary):
    if not run.exists("matrix.txt"):
        return None
    vals = {}
    with open(run.path("matrix.txt")) as f:
        for line in f:
            parts = line.split()
            if len(parts) == 6:
                who, k, m, size = parts[0], int(parts[1]), int(parts[2]), int(parts[3])
                e, d = vals.setdefault((who, k, m, size), ([], []))
                e.append(float(parts[4]))
                d.append(float(parts[5]))
    med = {key: (statistics.median(e), statistics.median(d)) for key, (e, d) in vals.items()}
    rows = ["| k, m | shard | encode ecjit | klauspost | ratio | rebuild m lost: ecjit | klauspost | ratio |",
            "|---|---|---|---|---|---|---|---|"]
    enc_ratios, dec_ratios = [], []
    for (who, k, m, size), (e, d) in sorted(med.items(), key=lambda kv_: (kv_[0][1], kv_[0][2], kv_[0][3])):
        if who != "ecjit":
            continue
        pe, pd = med.get(("klauspost", k, m, size), (None, None))
        if pe:
            enc_ratios.append(e / pe)
            dec_ratios.append(d / pd)
        rows.append("| %d, %d | %s | %s | %s | %s | %s | %s | %s |" % (
            k, m, size_name(size), gbps(e), gbps(pe), ratio(e, pe), gbps(d), gbps(pd), ratio(d, pd)))
    if enc_ratios:
        summary.append(("rs-vand encode, (6,3) to (20,4), 4 KiB to 1 MiB", "",
                        "klauspost/reedsolomon `New(k, m)`", "%.2f-%.2fx" % (min(enc_ratios), max(enc_ratios))))
        summary.append(("rs-vand rebuild of m lost, the same shapes", "", "klauspost/reedsolomon",
                        "%.2f-%.2fx" % (min(dec_ratios), max(dec_ratios))))
    peer = "" if enc_ratios else "klauspost/reedsolomon not built (bench/leopard8/build.sh needs Go); "
    return (run.caption(peer + "`ecjit demo --spec rs-vand:k=K,m=M` (the C++ API) against `leopard8 bench-matrix` "
                        "(klauspost's `New(k, m)`, the same Vandermonde-derived code, one goroutine); "
                        "GB/s of k x shard input; the rebuild loses data shards 0..m-1", reps_of(run)) +
            "\n".join(rows) + "\n")


def degraded_block(run, summary):
    if not run.exists("degraded.txt"):
        return None
    rows_in = {}
    with open(run.path("degraded.txt")) as f:
        for line in f:
            p = line.split()
            if len(p) >= 7 and shard_bytes(p[0]) and re.fullmatch(r"[0-9.]+", p[3]):
                rows_in.setdefault((shard_bytes(p[0]), p[1]), {})[p[2]] = (float(p[3]), p[4], p[5], float(p[6]))
    names = [("ecjit", "ecjit C++ API"), ("dropin", "ecjit libisal.so.2"), ("isal-2.30", "ISA-L 2.30"),
             ("isal-2.31", "ISA-L 2.31")]
    present = [n for n in names if any(n[0] in v for v in rows_in.values())]
    rows = ["| shard, lost | " + " | ".join(label for _, label in present) + " | C++ / best ISA-L | drop-in / best ISA-L |",
            "|---|" + "---|" * (len(present) + 2)]
    worst = 0.0
    for (size, lost), v in sorted(rows_in.items(), key=lambda x: (x[0][0], len(x[0][1]), x[0][1])):
        cells = []
        for key, _ in present:
            if key in v:
                g, p50, p99, mx = v[key]
                cells.append("%s (%s / %s)" % (gbps(g), p50, p99) if key in ("ecjit", "isal-2.31") else gbps(g))
                if key == "ecjit":
                    worst = max(worst, mx)
            else:
                cells.append("-")
        isal = max([v[k][0] for k in ("isal-2.30", "isal-2.31") if k in v] or [0])
        e = v.get("ecjit", (0,))[0]
        dr = v.get("dropin", (0,))[0]
        rows.append("| %s, %s | %s | **%s** | %s |" % (size_name(size), lost, " | ".join(cells), ratio(e, isal),
                                                      ratio(dr, isal)))
        if size == 65536 and lost == "1..4":
            best = "ISA-L 2.31" if "isal-2.31" in v and v["isal-2.31"][0] >= v.get("isal-2.30", (0,))[0] else "ISA-L 2.30"
            summary.append(("RS(10,4) degraded read, 64 KiB, 1..4 lost at random", gbps(e) + " GB/s",
                            "%s, %s GB/s" % (best, gbps(isal)), ratio(e, isal)))
    return (run.caption("`isal-cauchy:k=10,m=4`, a seeded random erasure set per call, GB/s of k x shard input "
                        "(p50 / p99 us per call)", reps_of(run)) + "\n".join(rows) +
            "\n\nSlowest ecjit call: %.0f us.\n" % worst)


def fft_block(run, summary, file, peer, what):
    if not run.exists(file):
        return None
    rows = ["| k:m | shard | codec() ms | encode | %s | ratio | rebuild m random lost | %s | ratio |" % (peer, peer),
            "|---|---|---|---|---|---|---|---|---|"]
    sets, shapes = [], []
    enc, dec = [], []
    with open(run.path(file)) as f:
        for line in f:
            p = line.split()
            if len(p) >= 8 and re.fullmatch(r"\d+:\d+:\d+", p[0]) and p[2] != "random" and re.fullmatch(r"[0-9.]+", p[2]):
                k, m, size = (int(x) for x in p[0].split(":"))
                ce = float(p[3]) if p[3] != "-" else None
                cd = float(p[6]) if p[6] != "-" else None
                e, d = float(p[2]), float(p[5])
                shapes.append((k, m))
                if ce:
                    enc.append(e / ce)
                    dec.append(d / cd)
                rows.append("| %d:%d | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                    k, m, size_name(size), p[1], gbps(e), gbps(ce), ratio(e, ce), gbps(d), gbps(cd), ratio(d, cd)))
            mm = re.match(r"(\d+):(\d+):(\d+)\s+(\d+) random sets of (\d+) lost, all restored: first call p50 ([0-9.]+) "
                          r"p99 ([0-9.]+) max ([0-9.]+) ms; repeated p50 ([0-9.]+)", line)
            if mm:
                sets.append("%s:%s at %s: p50 %s, p99 %s, max %s ms (repeated: %s ms)" % (
                    mm.group(1), mm.group(2), size_name(int(mm.group(3))), mm.group(6), mm.group(7), mm.group(8),
                    mm.group(9)))
    if enc:
        span = "%d:%d to %d:%d" % (min(shapes) + max(shapes))
        summary.append(("%s encode, %s" % (what, span), "", peer, "%.2f-%.2fx" % (min(enc), max(enc))))
        summary.append(("%s rebuild of m random losses" % what, "", peer, "%.2f-%.2fx" % (min(dec), max(dec))))
    text = run.caption("%s; GB/s of k x shard input; the rebuild loses m shards at random (%s: m originals, "
                       "its decoder's cost does not depend on which)%s" % (
                           what, peer, "" if enc else "; the peer is not built"), reps_of(run)) + "\n".join(rows) + "\n"
    if sets:
        text += "\nFirst call of a new random erasure set (20 sets each, all shards restored): " + "; ".join(sets) + ".\n"
    return text


def xor_block(run, summary):
    if not run.exists("xor.json"):
        return None
    _, rates, labels, errors, _ = ratio_table.load(run.path("xor.json"))
    rows = ["| code | ecjit GB/s | libJerasure GB/s | ratio |", "|---|---|---|---|"]
    ratios = []
    for (name, size), rate in sorted(rates.items()):
        if not name.startswith("BM_xor_encode/ecjit/") or size != 65536:
            continue
        spec = name[len("BM_xor_encode/ecjit/"):]
        peer = rates.get(("BM_xor_encode/jerasure/" + spec, size))
        if peer:
            ratios.append(rate / peer)
        rows.append("| `%s` | %s | %s | %s |" % (spec, gbps(rate / 1e9), gbps(peer / 1e9 if peer else None),
                                                 ratio(rate, peer)))
    if ratios:
        summary.append(("XOR codes (Cauchy, Liberation, Blaum-Roth, EVENODD, RDP, STAR), 64 KiB", "",
                        "libJerasure 2.0", "%.1f-%.1fx" % (min(ratios), max(ratios))))
    text = run.caption("64 KiB shards, encode, GB/s of k x shard input (10^9 bytes)", reps_of(run)) + "\n".join(rows)
    if errors:
        text += "\n\nNot measured: " + "; ".join(errors) + "."
    return text + "\n"


def first_block(run, summary):
    if not run.exists("first.txt"):
        return None
    heads, rows = [], ["| spec | shard | call | built-in GB/s | own GB/s | ratio |", "|---|---|---|---|---|---|"]
    spec = None
    with open(run.path("first.txt")) as f:
        for line in f:
            m = re.match(r"(\S+): Jit::create ([0-9.]+) ms, codec\(\) ([0-9.]+) ms cold; first calls on (\S+)", line)
            if m:
                spec = m.group(1)
                heads.append("`%s`: `Jit::create` %s ms, `codec()` %s ms, first calls on %s" % (
                    spec, m.group(2), m.group(3), m.group(4)))
                summary.append(("`codec(\"%s\")` ready, cold process" % spec, "%s ms" % m.group(3), "", ""))
                continue
            p = line.split()
            if spec and len(p) == 5 and p[0].isdigit() and p[4].endswith("x"):
                rows.append("| `%s` | %s | %s | %s | %s | %s |" % (spec, size_name(int(p[0])), p[1], p[2], p[3], p[4]))
    return (run.caption("`bench_first_codec --spec S`: a cold `Jit::create()` and `codec()` (no disk cache), then "
                        "the built-in kernels that serve the first calls against the codec's own", "best of 5 x 200 calls") +
            "; ".join(heads) + ".\n\n" + "\n".join(rows) + "\n")


def summary_block(cls, runs, summary):
    m = next((r.machine for r in runs if r.machine), {})
    rows = ["| measured | ecjit | strongest peer in the same run | ecjit / peer |", "|---|---|---|---|"]
    for what, mine, peer, r in summary:
        rows.append("| %s | %s | %s | %s |" % (what, mine, peer, "**%s**" % r if r else ""))
    date = max((r.meta.get("date", "") for r in runs), default="")[:10]
    return ("**%s** (%s, %s; `bench/report.sh`, one thread, medians):\n\n" % (
        SECTIONS[cls][3:], m.get("cpu_model", "?") + (" " + m["llvm_cpu"] if m.get("llvm_cpu") else ""), date) +
            "\n".join(rows) + "\n")


def splice(text, begin, end, body, fallback):
    """Replaces the text between the markers, or inserts the marked block where fallback(text) says."""
    block = "%s\n%s%s" % (begin, body if body.endswith("\n") else body + "\n", end)
    i, j = text.find(begin), text.find(end)
    if i >= 0 and j > i:
        return text[:i] + block + text[j + len(end):]
    if (i >= 0) != (j >= 0) or (i >= 0 and j < i):
        sys.exit("report.py: unbalanced markers %s / %s" % (begin, end))
    return fallback(text, block)


def class_section_end(text, cls):
    head = SECTIONS[cls]
    i = text.find("\n" + head)
    if i < 0:  # a new section before the figures (or at the end)
        j = text.find("\n## Nešković 2018")
        j = len(text) if j < 0 else j + 1
        text = text[:j] + "%s (measured by `bench/report.sh`)\n\n" % head + text[j:]
        i = j - 1
    k = text.find("\n## ", i + 1)
    return text, (len(text) if k < 0 else k + 1)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--class", dest="cls", required=True, choices=sorted(SECTIONS))
    ap.add_argument("--data", required=True)
    ap.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap.add_argument("--no-write", action="store_true")
    a = ap.parse_args()
    summary, blocks, runs = [], {}, []
    makers = {"encode": encode_block, "matrix": matrix_block, "degraded": degraded_block,
              "wide16": lambda r, s: fft_block(r, s, "wide16.txt", "reed-solomon-simd 3.1", "rs-fft GF(2^16)"),
              "wide8": lambda r, s: fft_block(r, s, "wide8.txt", "klauspost leopard8", "rs-fft GF(2^8)"),
              "xor": xor_block, "first": first_block}
    for step in STEPS:
        run = Run(a.data, step)
        body = makers[step](run, summary)
        if body:
            blocks[step] = body
            runs.append(run)
    if not blocks:
        sys.exit("report.py: no measurements in %s (run bench/report.sh)" % a.data)
    readme = summary_block(a.cls, runs, summary)
    if a.no_write:
        for step, body in blocks.items():
            print("### %s\n\n%s" % (TITLES[step], body))
        print(readme)
        return
    perf_path = os.path.join(a.root, "docs", "performance.md")
    with open(perf_path) as f:
        perf = f.read()
    for step, body in blocks.items():
        def insert(text, block, step=step):
            text, at = class_section_end(text, a.cls)
            return text[:at] + "### %s\n\n%s\n\n" % (TITLES[step], block) + text[at:]
        perf = splice(perf, "<!-- report:%s:%s begin -->" % (a.cls, step), "<!-- report:%s:%s end -->" % (a.cls, step),
                      body, insert)
    with open(perf_path, "w") as f:
        f.write(perf)
    readme_path = os.path.join(a.root, "README.md")
    with open(readme_path) as f:
        text = f.read()

    def at_how_fast_end(t, block):
        i = t.find("\n## How fast")
        k = t.find("\n## ", i + 1) if i >= 0 else -1
        k = len(t) if k < 0 else k + 1
        return t[:k] + block + "\n\n" + t[k:]
    text = splice(text, "<!-- report-summary:%s begin -->" % a.cls, "<!-- report-summary:%s end -->" % a.cls, readme,
                  at_how_fast_end)
    with open(readme_path, "w") as f:
        f.write(text)
    print("report.py: %d tables of %s in docs/performance.md, its summary in README.md" % (len(blocks), a.cls))


if __name__ == "__main__":
    main()
