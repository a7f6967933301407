#!/usr/bin/env python3
"""mca_table.py: llvm-mca static estimates of the kernels' main loop, as the Markdown table of docs/targets.md.

For each code, CPU model and strategy it asks `ecjit asm` for the verbose assembly of the
encoder (the same build path as `ecjit aot`), cuts out the basic block LLVM labels "%vloop"
(the one-vector main loop: k vector loads, the m x k products, m stores), runs
`llvm-mca-19 -mcpu=<cpu>` on it and reports bytes encoded per cycle = k x vector bytes /
(cycles per iteration). Then the code size of every kernel of an AOT object per target
(`ecjit aot --sizes`).

usage: scripts/mca_table.py [--ecjit build/tools/ecjit] [--mca llvm-mca-19]
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

CODES = ["rs-vand:k=10,m=4,gf=8", "rs-vand:k=8,m=3,gf=16", "rs-vand:k=12,m=4,gf=16"]
# (CPU model for llvm-mca, ecjit target whose tier that CPU runs)
CPUS = [("cortex-a72", "aarch64"), ("neoverse-n1", "aarch64"),
        ("skylake", "x86_64-v3"), ("znver4", "x86_64-v4")]
STRATEGIES = ["clmul-shift", "split-table"]
SIZE_TARGETS = ["x86_64", "x86_64-v3", "x86_64-v4", "aarch64", "armv7", "hexagon-v68",
                "hexagon-v68+hvx", "riscv64", "riscv64-v"]


def vloop_block(asm):
    """Instructions of the block whose label comment names %vloop, and the vector width."""
    m = re.search(r"\((?:[^()]*), (\d+)-bit vectors\)", asm)
    bits = int(m.group(1)) if m else 0
    lines, inside, comment = [], False, "#"
    for line in asm.splitlines():
        is_label = re.match(r"^[.$\w]+:", line) is not None
        if is_label:
            if inside:
                break
            hit = re.search(r"(#|//)\s*%vloop\s*$", line)
            inside = hit is not None
            if hit:
                comment = hit.group(1)  # '//' on AArch64 ('#' starts an immediate there)
            continue
        if not inside:
            continue
        code = line.split(comment, 1)[0].rstrip()
        if not code.strip() or code.strip().startswith("."):
            continue
        lines.append(code)
    return lines, bits


def mca_cycles(mca, cpu, triple, block):
    with tempfile.NamedTemporaryFile("w", suffix=".s", delete=False) as f:
        f.write("\n".join(block) + "\n")
        path = f.name
    try:
        out = subprocess.run([mca, "-mtriple=" + triple, "-mcpu=" + cpu, "-iterations=200",
                              path], capture_output=True, text=True, check=True).stdout
    finally:
        os.unlink(path)
    it = int(re.search(r"Iterations:\s+(\d+)", out).group(1))
    total = int(re.search(r"Total Cycles:\s+(\d+)", out).group(1))
    return total / it


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ecjit", default="build/tools/ecjit")
    ap.add_argument("--mca", default="llvm-mca-19")
    a = ap.parse_args()

    print("| code | CPU (target) | strategy | loop instructions | cycles / iteration | bytes / iteration | bytes / cycle |")
    print("|---|---|---|---:|---:|---:|---:|")
    for spec in CODES:
        k = int(re.search(r"k=(\d+)", spec).group(1))
        for cpu, target in CPUS:
            for strategy in STRATEGIES:
                r = subprocess.run([a.ecjit, "asm", "--spec", spec, "--target", target,
                                    "--strategy", strategy], capture_output=True, text=True)
                if r.returncode != 0:
                    print(f"| {spec} | {cpu} ({target}) | {strategy} | n/a | | | |")
                    continue
                block, bits = vloop_block(r.stdout)
                triple = re.search(r"\((\S+), cpu", r.stdout).group(1)
                cycles = mca_cycles(a.mca, cpu, triple, block)
                per_iter = k * bits // 8
                print(f"| {spec} | {cpu} ({target}) | {strategy} | {len(block)} | {cycles:.2f} | "
                      f"{per_iter} | {per_iter / cycles:.1f} |")
    print()
    print("| target | kernel | bytes |")
    print("|---|---|---:|")
    with tempfile.TemporaryDirectory() as d:
        for target in SIZE_TARGETS:
            r = subprocess.run([a.ecjit, "aot", "--spec", CODES[0], "--target", target,
                                "--decoders", "0,1,2,3", "--generic", "-o", d + "/k.o", "--sizes"],
                               capture_output=True, text=True)
            if r.returncode != 0:
                print(f"| {target} | (failed: {r.stderr.strip()}) | |")
                continue
            for line in r.stdout.splitlines():
                size, name = line.split()
                kind = name.split("__")[0].replace("ecjit_", "")
                print(f"| {target} | {kind} | {size} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
