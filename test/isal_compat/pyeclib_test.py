#!/usr/bin/env python3
"""pyeclib (OpenStack Swift's EC binding) round trips on whichever libisal.so.2 the loader finds.

Run by ctest with LD_LIBRARY_PATH at ecjit's build/isal-compat: proves that library is the one
mapped (and exports ecjit_isal_compat_version), then encodes, decodes with every missing set
up to m, and reconstructs, for isa_l_rs_vand and isa_l_rs_cauchy. Exit 0 = pass.
"""
import ctypes
import itertools
import os
import random
import sys

from pyeclib.ec_iface import ECDriver


def mapped_isal():
    with open("/proc/self/maps") as f:
        return sorted({line.split()[-1] for line in f if "libisal.so" in line})


def main():
    ours_dir = sys.argv[1]
    failures = 0
    for ec_type, k, m in [("isa_l_rs_vand", 4, 2), ("isa_l_rs_vand", 10, 4),
                          ("isa_l_rs_cauchy", 6, 3)]:
        driver = ECDriver(k=k, m=m, ec_type=ec_type)
        maps = mapped_isal()
        if len(maps) != 1 or not maps[0].startswith(os.path.realpath(ours_dir)):
            print(f"FAIL: expected ecjit's libisal from {ours_dir}, mapped {maps}")
            return 1
        lib = ctypes.CDLL("libisal.so.2", mode=os.RTLD_NOLOAD | os.RTLD_NOW)
        lib.ecjit_isal_compat_version.restype = ctypes.c_char_p
        version = lib.ecjit_isal_compat_version().decode()
        rng = random.Random(k * 100 + m)
        for size in (1, 1000, 65536 + 3, (1 << 20) + 7):
            data = bytes(rng.getrandbits(8) for _ in range(min(size, 4096))) * (size // 4096 + 1)
            data = data[:size]
            frags = driver.encode(data)
            sets = [s for r in range(m + 1) for s in itertools.combinations(range(k + m), r)]
            if size > 65536:
                sets = sets[:: max(1, len(sets) // 12)]  # a sample for the large object
            for missing in sets:
                avail = [f for i, f in enumerate(frags) if i not in missing]
                if driver.decode(avail) != data:
                    print(f"FAIL: {ec_type} k={k} m={m} size={size} decode missing {missing}")
                    failures += 1
                if missing:
                    rebuilt = driver.reconstruct(avail, list(missing))
                    if rebuilt != [frags[i] for i in missing]:
                        print(f"FAIL: {ec_type} k={k} m={m} size={size} reconstruct {missing}")
                        failures += 1
        print(f"ok: {ec_type} k={k} m={m} on {maps[0]} ({version})")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
