#!/usr/bin/env python3
"""The damage table of `ecjit protect / scrub / restore / prune`: one row per kind of damage.

Each row builds a small tree (RS(4,2), 4 KiB units: a 40 KiB file of three stripes, a 100 B file,
an empty file, a sparse file and a file with a unicode name), protects it, inflicts its damage,
runs the commands a user would, and checks the exit status and verdict of each (from --json),
then every file's bytes by sha256 against what the row expects: the original bytes where the code
can rebuild them, the lost ranges exactly as reported where it cannot. After every row, an
independent check of the rule that matters most: no file passes for intact unless every byte is -
a file with its protected size and mtime must have its protected bytes, except where the damage
itself kept them (silent corruption the tool has recorded), and every file ecjit reports clean,
unchanged or repaired must have them.

    damage_table.py path/to/ecjit [--crash] [ROW-NAME-SUBSTRING]

--crash runs the other rows: a process killed (SIGKILL) at each write step of protect, repair and
restore, a file changed while protect reads it (both through the failpoints of a test build,
ECJIT_FAILPOINT), and full (ENOSPC) or read-only (EROFS) file systems (tmpfs mounts; skipped
where this user cannot mount). Prints a line per row and closes with "N passed, N failed".
"""
import hashlib
import json
import os
import signal
import random
import shutil
import subprocess
import sys
import tempfile
import time

ECJIT = sys.argv[1]
CRASH = "--crash" in sys.argv[2:]
ONLY = next((a for a in sys.argv[2:] if a != "--crash"), "")
SPEC = ["--spec", "rs-vand:k=4,m=2", "--unit", "4K"]
K, M, UNIT = 4, 2, 4096
STRIPE = K * UNIT
CACHE = tempfile.mkdtemp(prefix="ecjit-damage-cache-")
ENV = dict(os.environ, ECJIT_CACHE_DIR=CACHE)
UNICODE = "ünï cødé ✓.bin"


class RowFailure(Exception):
    pass


def seeded(n, seed):
    return random.Random(seed).randbytes(n)


def sha(data):
    return hashlib.sha256(data).hexdigest()


class Tree:
    """One row's scratch tree, its original bytes, and the identity protect recorded."""

    def __init__(self, name):
        self.root = tempfile.mkdtemp(prefix="ecjit-damage-")
        self.d = os.path.join(self.root, "d")
        os.mkdir(self.d)
        self.orig = {}
        self.ident = {}        # path -> (size, mtime_ns) at protection
        self.identity_moved = set()  # files whose damage changed size or mtime
        self.recorded_rot = set()    # silent corruption: identity kept by the damage itself
        self.add("a.bin", seeded(40 * 1024 + 123, 1))
        self.add("small.txt", seeded(100, 2))
        self.add("empty", b"")
        self.add(UNICODE, seeded(9000, 3))
        sparse = self.p("sparse.img")
        with open(sparse, "wb") as f:
            f.write(seeded(8192, 4))
            f.truncate(256 * 1024)
        self.orig["sparse.img"] = open(sparse, "rb").read()

    def p(self, name):
        return os.path.join(self.d, name)

    def ecc(self, name, r):
        return os.path.join(self.d, ".ecjit", name + ".ecc%d" % r)

    def add(self, name, data):
        with open(self.p(name), "wb") as f:
            f.write(data)
        self.orig[name] = data

    def read(self, name):
        with open(self.p(name), "rb") as f:
            return f.read()

    def identity(self, name):
        st = os.stat(self.p(name))
        return st.st_size, st.st_mtime_ns

    def protect_all(self):
        run(self, ["protect", self.d] + SPEC, 0)
        for name in self.orig:
            self.ident[name] = self.identity(name)

    def cleanup(self):
        shutil.rmtree(self.root, ignore_errors=True)


def run(tree, args, want_exit, json_out=True):
    """Runs ecjit; checks the exit status; returns the parsed JSON (or stdout)."""
    cmd = [ECJIT] + args + (["--json"] if json_out else [])
    p = subprocess.run(cmd, capture_output=True, text=True, env=ENV, timeout=120)
    if p.returncode != want_exit:
        raise RowFailure("%s -> exit %d, want %d\nstdout: %s\nstderr: %s" %
                         (" ".join(args), p.returncode, want_exit, p.stdout[-1500:], p.stderr[-800:]))
    if not json_out:
        return p.stdout
    try:
        doc = json.loads(p.stdout)
    except ValueError as e:
        raise RowFailure("%s: --json output does not parse (%s): %s" % (" ".join(args), e, p.stdout[:500]))
    check_schema(doc, args)
    return doc


def check_schema(doc, args):
    """The documented shape of the JSON summary (docs/files.md, schema ecjit-files/2)."""
    def need(obj, key, kinds, where):
        if key not in obj or not isinstance(obj[key], kinds):
            raise RowFailure("%s: JSON %s lacks %s of type %s: %s" % (" ".join(args), where, key, kinds, obj))
    for key, kind in (("schema", str), ("command", str), ("files", list), ("exit", int)):
        need(doc, key, kind, "summary")
    if doc["schema"] != "ecjit-files/2":
        raise RowFailure("schema %r" % doc["schema"])
    for f in doc["files"]:
        need(f, "path", str, "file")
        need(f, "verdict", str, "file")
        if f["verdict"] == "error":
            need(f, "error", str, "file")
            continue
        for key in ("k", "m", "file_size", "stripes", "stripes_encoded", "bytes_read", "bytes_written"):
            need(f, key, int, "file")
        for key in ("damage", "lost", "notes"):
            need(f, key, list, "file")
        for d in f["damage"]:
            for key, kind in (("stripe", int), ("kind", str), ("unit", int)):
                need(d, key, kind, "damage")
            if d["kind"] not in ("data", "ecc") or d["unit"] >= (f["k"] if d["kind"] == "data" else f["m"]):
                raise RowFailure("damage unit numbered outside its kind: %s" % d)
        for r in f["lost"]:
            need(r, "offset", int, "lost range")
            need(r, "length", int, "lost range")


def verdicts(doc):
    return {os.path.basename(f["path"]): f for f in doc["files"]}


def expect_verdict(doc, name, want):
    got = verdicts(doc).get(name)
    if got is None or got["verdict"] != want:
        raise RowFailure("%s: verdict %s, want %s (%s)" % (name, got and got["verdict"], want, got))
    return got


def expect_bytes(tree, name, want=None):
    want = tree.orig[name] if want is None else want
    if not os.path.exists(tree.p(name)):
        raise RowFailure("%s does not exist" % name)
    got = tree.read(name)
    if sha(got) != sha(want):
        first = next((i for i in range(min(len(got), len(want))) if got[i] != want[i]), min(len(got), len(want)))
        raise RowFailure("%s: %d bytes, want %d; first difference at %d" % (name, len(got), len(want), first))


def expect_lost(info, ranges):
    got = [(r["offset"], r["length"]) for r in info["lost"]]
    if got != ranges:
        raise RowFailure("%s: lost ranges %s, want %s" % (info["path"], got, ranges))


def flip(path, off, keep_mtime=True):
    st = os.stat(path)
    with open(path, "r+b") as f:
        f.seek(off)
        b = f.read(1)
        f.seek(off)
        f.write(bytes([b[0] ^ 0x5A]))
    if keep_mtime:
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def rot(tree, name, off):
    """Silent corruption of a data file: a flipped byte, the mtime kept."""
    flip(tree.p(name), off)
    tree.recorded_rot.add(name)


def cut(tree, name, size):
    os.truncate(tree.p(name), size)
    tree.identity_moved.add(name)


def final_rule(tree):
    """No file passes for intact unless every byte is (an oracle independent of ecjit's verdicts)."""
    p = subprocess.run([ECJIT, "scrub", tree.d, "--json"], capture_output=True, text=True, env=ENV, timeout=120)
    doc = json.loads(p.stdout)
    for name, f in verdicts(doc).items():
        if name not in tree.orig:
            continue
        exists = os.path.exists(tree.p(name))
        intact = exists and tree.read(name) == tree.orig[name]
        if f["verdict"] == "clean" and not intact:
            raise RowFailure("rule: scrub calls %s clean but its bytes differ from the protected ones" % name)
        if exists and name in tree.ident and not intact and name not in tree.recorded_rot:
            if tree.identity(name) == tree.ident[name] and f["verdict"] != "modified":
                raise RowFailure("rule: %s has its protected size and mtime but not its protected bytes" % name)


ROWS = []


class Skip(Exception):
    pass


def row(name, crash=False):
    def wrap(fn):
        ROWS.append((name, fn, crash))
        return fn
    return wrap


# --- data damage -------------------------------------------------------------------------------

@row("flipped byte in a data unit")
def _(t):
    rot(t, "a.bin", 5000)
    expect_verdict(run(t, ["scrub", t.d], 4), "a.bin", "damaged")
    expect_verdict(run(t, ["scrub", t.d, "--repair"], 3), "a.bin", "repaired")
    expect_bytes(t, "a.bin")
    t.recorded_rot.discard("a.bin")
    expect_verdict(run(t, ["scrub", t.d], 0), "a.bin", "clean")


@row("flipped bytes in m data units of one stripe")
def _(t):
    rot(t, "a.bin", STRIPE + 10)
    rot(t, "a.bin", STRIPE + 2 * UNIT + 10)
    expect_verdict(run(t, ["scrub", t.d, "--repair"], 3), "a.bin", "repaired")
    expect_bytes(t, "a.bin")


@row("flipped bytes in m+1 data units of one stripe: lost, named exactly")
def _(t):
    for j in range(3):
        rot(t, "a.bin", STRIPE + j * UNIT + 7)
    info = expect_verdict(run(t, ["scrub", t.d], 5), "a.bin", "data-lost")
    expect_lost(info, [(STRIPE, 3 * UNIT)])
    info = expect_verdict(run(t, ["scrub", t.d, "--repair"], 5), "a.bin", "data-lost")
    expect_lost(info, [(STRIPE, 3 * UNIT)])
    # Nothing guessed: the lost units stay as they were, the rest of the file is untouched.
    got, orig = t.read("a.bin"), t.orig["a.bin"]
    if got[:STRIPE] != orig[:STRIPE] or got[STRIPE + 3 * UNIT:] != orig[STRIPE + 3 * UNIT:]:
        raise RowFailure("bytes outside the lost units changed")
    expect_verdict(run(t, ["protect", t.d], 5), "a.bin", "data-lost")


@row("m+1 bad units in one stripe beside a repairable stripe of the same file")
def _(t):
    for j in range(3):
        rot(t, "a.bin", j * UNIT + 1)
    rot(t, "a.bin", 2 * STRIPE + 3)
    info = expect_verdict(run(t, ["scrub", t.d, "--repair"], 5), "a.bin", "data-lost")
    expect_lost(info, [(0, 3 * UNIT)])
    got, orig = t.read("a.bin"), t.orig["a.bin"]
    if got[3 * UNIT:] != orig[3 * UNIT:]:
        raise RowFailure("the repairable stripe was not repaired")
    if t.identity("a.bin") == t.ident["a.bin"]:
        raise RowFailure("a file with lost ranges kept its protected identity after the repair wrote into it")


@row("zeroed data unit")
def _(t):
    path = t.p("a.bin")
    st = os.stat(path)
    with open(path, "r+b") as f:
        f.seek(UNIT)
        f.write(bytes(UNIT))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    t.recorded_rot.add("a.bin")
    expect_verdict(run(t, ["scrub", t.d, "--repair"], 3), "a.bin", "repaired")
    expect_bytes(t, "a.bin")


@row("truncated to 0: data lost, never given back its protected identity")
def _(t):
    cut(t, "a.bin", 0)
    info = expect_verdict(run(t, ["scrub", t.d, "--repair"], 5), "a.bin", "data-lost")
    expect_lost(info, [(0, len(t.orig["a.bin"]))])
    if os.path.getsize(t.p("a.bin")) != 0:
        raise RowFailure("a file of nothing but lost bytes was given its size back")
    if os.path.exists(t.p("a.bin.ecjit-partial")):
        raise RowFailure("a partial file of nothing but holes was written")
    expect_verdict(run(t, ["protect", t.d], 5), "a.bin", "data-lost")
    expect_verdict(run(t, ["protect", t.d, "--accept-loss"], 0), "a.bin", "updated")
    t.orig["a.bin"] = b""
    expect_verdict(run(t, ["scrub", t.d], 0), "a.bin", "clean")


@row("truncated inside the last stripe's last unit")
def _(t):
    cut(t, "a.bin", len(t.orig["a.bin"]) - 1000)
    expect_verdict(run(t, ["scrub", t.d, "--repair"], 3), "a.bin", "repaired")
    expect_bytes(t, "a.bin")
    if t.identity("a.bin") != t.ident["a.bin"]:
        raise RowFailure("a fully repaired file did not get its protected identity back")


@row("truncated to a unit boundary: stripe kept whole, next stripe lost, partial written")
def _(t):
    size = len(t.orig["a.bin"])
    cut(t, "a.bin", STRIPE + 2 * UNIT)
    info = expect_verdict(run(t, ["scrub", t.d, "--repair"], 5), "a.bin", "data-lost")
    expect_lost(info, [(2 * STRIPE, size - 2 * STRIPE)])
    if os.path.getsize(t.p("a.bin")) != STRIPE + 2 * UNIT:
        raise RowFailure("the truncated file changed size")
    partial = t.p("a.bin.ecjit-partial")
    if info.get("partial_path") != partial or not os.path.exists(partial):
        raise RowFailure("no partial file: %s" % info.get("partial_path"))
    got = open(partial, "rb").read()
    if len(got) != size or got[:2 * STRIPE] != t.orig["a.bin"][:2 * STRIPE] or any(got[2 * STRIPE:]):
        raise RowFailure("the partial file is not the recoverable bytes with holes at the lost range")
    if os.stat(partial).st_mtime_ns == t.ident["a.bin"][1]:
        raise RowFailure("the partial file has the protected mtime")


@row("restore of a truncated file in place")
def _(t):
    cut(t, UNICODE, 8000)
    expect_verdict(run(t, ["restore", t.p(UNICODE)], 3), UNICODE, "repaired")
    expect_bytes(t, UNICODE)


@row("truncated, then protect without a scrub: refused as cut short, not folded in")
def _(t):
    cut(t, "a.bin", len(t.orig["a.bin"]) - 3000)
    expect_verdict(run(t, ["protect", t.d], 4), "a.bin", "damaged")
    expect_verdict(run(t, ["scrub", t.d, "--repair"], 3), "a.bin", "repaired")
    expect_bytes(t, "a.bin")


@row("a file cut short on purpose: protect --accept-loss protects it as it is")
def _(t):
    cut(t, "a.bin", 2 * STRIPE + 100)
    expect_verdict(run(t, ["protect", t.d], 4), "a.bin", "damaged")
    expect_verdict(run(t, ["protect", t.d, "--accept-loss"], 0), "a.bin", "updated")
    t.orig["a.bin"] = t.orig["a.bin"][:2 * STRIPE + 100]
    expect_verdict(run(t, ["scrub", t.d], 0), "a.bin", "clean")


@row("a one-stripe file made shorter is an edit: protect updates it")
def _(t):
    with open(t.p("small.txt"), "r+b") as f:
        f.truncate(50)
    t.identity_moved.add("small.txt")
    expect_verdict(run(t, ["protect", t.d], 0), "small.txt", "updated")
    t.orig["small.txt"] = t.orig["small.txt"][:50]
    expect_verdict(run(t, ["scrub", t.d], 0), "small.txt", "clean")


@row("extended file (appended, mtime moved) is an edit")
def _(t):
    with open(t.p("small.txt"), "ab") as f:
        f.write(b"more")
    t.identity_moved.add("small.txt")
    expect_verdict(run(t, ["scrub", t.d], 4), "small.txt", "modified")
    expect_bytes(t, "small.txt", t.orig["small.txt"] + b"more")
    expect_verdict(run(t, ["protect", t.d], 0), "small.txt", "updated")
    t.orig["small.txt"] += b"more"
    expect_verdict(run(t, ["scrub", t.d], 0), "small.txt", "clean")


@row("modified between protect and scrub: reported, never rolled back; restore --to gives the old")
def _(t):
    edited = bytearray(t.orig["a.bin"])
    edited[100:105] = b"hello"
    with open(t.p("a.bin"), "r+b") as f:
        f.seek(100)
        f.write(b"hello")
    os.utime(t.p("a.bin"), ns=(t.ident["a.bin"][1] + 5 * 10**9,) * 2)
    t.identity_moved.add("a.bin")
    expect_verdict(run(t, ["scrub", t.d, "--repair"], 4), "a.bin", "modified")
    expect_bytes(t, "a.bin", bytes(edited))
    out = os.path.join(t.root, "old.bin")
    expect_verdict(run(t, ["restore", t.p("a.bin"), "--to", out], 3), "a.bin", "repaired")
    if open(out, "rb").read() != t.orig["a.bin"]:
        raise RowFailure("restore --to did not give the protected version")
    t.orig["a.bin"] = bytes(edited)
    expect_verdict(run(t, ["protect", t.d], 0), "a.bin", "updated")


@row("silent corruption, then protect --force: reported corrupt, never folded in")
def _(t):
    rot(t, "a.bin", 2 * STRIPE + 50)
    info = expect_verdict(run(t, ["protect", t.d, "--force"], 4), "a.bin", "corrupt")
    if not any(d["stripe"] == 2 and d["kind"] == "data" and d["unit"] == 0 for d in info["damage"]):
        raise RowFailure("the corrupt unit is not named: %s" % info["damage"])
    expect_verdict(run(t, ["scrub", t.d], 4), "a.bin", "damaged")
    expect_verdict(run(t, ["scrub", t.d, "--repair"], 3), "a.bin", "repaired")
    expect_bytes(t, "a.bin")


@row("silent corruption with a redundancy file gone: protect writes nothing")
def _(t):
    rot(t, "a.bin", 10)
    os.unlink(t.ecc("a.bin", 1))
    expect_verdict(run(t, ["protect", t.d], 4), "a.bin", "corrupt")
    if os.path.exists(t.ecc("a.bin", 1)):
        raise RowFailure("protect wrote redundancy of a corrupt file")
    expect_verdict(run(t, ["scrub", t.d, "--repair"], 3), "a.bin", "repaired")
    expect_bytes(t, "a.bin")


@row("unicode name: flipped byte repaired")
def _(t):
    rot(t, UNICODE, 4500)
    expect_verdict(run(t, ["scrub", t.d, "--repair"], 3), UNICODE, "repaired")
    expect_bytes(t, UNICODE)


def deleted_and_restored_row(title, name):
    @row(title)
    def _(t):
        os.unlink(t.p(name))
        expect_verdict(run(t, ["scrub", t.d], 4), name, "missing")
        expect_verdict(run(t, ["restore", t.p(name)], 3), name, "repaired")
        expect_bytes(t, name)


deleted_and_restored_row("small file deleted: restore brings it back (at most m of its units were data)", "small.txt")
deleted_and_restored_row("empty file deleted and restored", "empty")


@row("large file deleted: missing, restore says every byte is lost and creates nothing")
def _(t):
    os.unlink(t.p("a.bin"))
    expect_verdict(run(t, ["scrub", t.d, "--repair"], 4), "a.bin", "missing")
    if os.path.exists(t.p("a.bin")):
        raise RowFailure("scrub --repair brought a deleted file back")
    info = expect_verdict(run(t, ["restore", t.p("a.bin")], 5), "a.bin", "data-lost")
    expect_lost(info, [(0, len(t.orig["a.bin"]))])
    if os.path.exists(t.p("a.bin")) or os.path.exists(t.p("a.bin.ecjit-partial")):
        raise RowFailure("a file (or partial) of holes was created")


@row("renamed data file: renamed from / to, prune drops the old redundancy")
def _(t):
    os.rename(t.p("a.bin"), t.p("b.bin"))
    doc = run(t, ["scrub", t.d], 4)
    info = expect_verdict(doc, "a.bin", "renamed")
    if info.get("renamed_to") != t.p("b.bin"):
        raise RowFailure("renamed_to %s" % info.get("renamed_to"))
    new = expect_verdict(doc, "b.bin", "unprotected")
    if not any("renamed from" in n for n in new["notes"]):
        raise RowFailure("the new name does not say where it came from")
    orphans = run(t, ["scrub", t.d, "--orphans"], 4)
    if [os.path.basename(f["path"]) for f in orphans["files"]] != ["a.bin"]:
        raise RowFailure("--orphans listed %s" % [f["path"] for f in orphans["files"]])
    run(t, ["prune", t.d], 0)
    if not os.path.exists(t.ecc("a.bin", 0)):
        raise RowFailure("prune without --apply removed something")
    run(t, ["prune", t.d, "--apply"], 0)
    if os.path.exists(t.ecc("a.bin", 0)):
        raise RowFailure("prune --apply left the old redundancy")
    t.orig["b.bin"] = t.orig.pop("a.bin")
    expect_verdict(run(t, ["protect", t.d], 0), "b.bin", "protected")
    expect_verdict(run(t, ["scrub", t.d], 0), "b.bin", "clean")


@row("copied under a new name and deleted: renamed, matched by its data")
def _(t):
    shutil.copyfile(t.p("a.bin"), t.p("copy.bin"))
    os.unlink(t.p("a.bin"))
    doc = run(t, ["scrub", t.d], 4)
    info = expect_verdict(doc, "a.bin", "renamed")
    if info.get("renamed_to") != t.p("copy.bin") or not any("same data" in n for n in info["notes"]):
        raise RowFailure("not matched by its data: %s" % info)
    expect_verdict(doc, "copy.bin", "unprotected")
    # A file of the same size but other data is no match.
    os.unlink(t.p("copy.bin"))
    with open(t.p("other.bin"), "wb") as f:
        f.write(seeded(len(t.orig["a.bin"]), 77))
    expect_verdict(run(t, ["scrub", t.d], 4), "a.bin", "missing")


@row("deleted file with --ecc-dir: missing in the mirrored tree")
def _(t):
    ecc = os.path.join(t.root, "ecc")
    run(t, ["protect", t.d, "--ecc-dir", ecc] + SPEC, 0)
    os.unlink(t.p("small.txt"))
    expect_verdict(run(t, ["scrub", t.d, "--ecc-dir", ecc], 4), "small.txt", "missing")
    expect_verdict(run(t, ["restore", t.p("small.txt"), "--ecc-dir", ecc], 3), "small.txt", "repaired")
    expect_bytes(t, "small.txt")


# --- redundancy damage ------------------------------------------------------------------------

def ecc_damage_row(name, damage, found="damaged"):
    @row(name)
    def _(t):
        damage(t)
        expect_verdict(run(t, ["scrub", t.d], 4), "a.bin", found)
        expect_verdict(run(t, ["scrub", t.d, "--repair"], 3), "a.bin", "repaired")
        expect_bytes(t, "a.bin")
        expect_verdict(run(t, ["scrub", t.d], 0), "a.bin", "clean")


ecc_damage_row("flipped byte in an ECC unit", lambda t: flip(t.ecc("a.bin", 0), 4096 + UNIT + 9))
ecc_damage_row("flipped byte in the last ECC unit", lambda t: flip(t.ecc("a.bin", 1), os.path.getsize(t.ecc("a.bin", 1)) - 1))
ecc_damage_row("flipped byte in a header's fixed fields", lambda t: flip(t.ecc("a.bin", 1), 30))
ecc_damage_row("flipped byte in a header's spec", lambda t: flip(t.ecc("a.bin", 0), 130))
ecc_damage_row("flipped byte in a signature table", lambda t: flip(t.ecc("a.bin", 0), 200))
ecc_damage_row("redundancy file truncated inside a unit", lambda t: os.truncate(t.ecc("a.bin", 1), 4096 + UNIT + 100))
ecc_damage_row("redundancy file truncated to its header", lambda t: os.truncate(t.ecc("a.bin", 0), 4096))
ecc_damage_row("redundancy file truncated to 0", lambda t: os.truncate(t.ecc("a.bin", 1), 0))


@row("redundancy file extended: what it holds still checks")
def _(t):
    with open(t.ecc("a.bin", 0), "ab") as f:
        f.write(b"junk" * 100)
    expect_verdict(run(t, ["scrub", t.d], 0), "a.bin", "clean")
    rot(t, "a.bin", 3 * UNIT)
    expect_verdict(run(t, ["scrub", t.d, "--repair"], 3), "a.bin", "repaired")
    expect_bytes(t, "a.bin")


ecc_damage_row("redundancy file 0 deleted", lambda t: os.unlink(t.ecc("a.bin", 0)))
ecc_damage_row("redundancy file 1 deleted", lambda t: os.unlink(t.ecc("a.bin", 1)))
ecc_damage_row("redundancy file renamed away", lambda t: os.rename(t.ecc("a.bin", 0), t.ecc("a.bin", 0) + ".old"))
ecc_damage_row("redundancy file swapped with another file's",
               lambda t: shutil.copyfile(t.ecc(UNICODE, 0), t.ecc("a.bin", 0)))


@row("flipped data byte and a redundancy file deleted (m bad units per stripe)")
def _(t):
    rot(t, "a.bin", 3)
    os.unlink(t.ecc("a.bin", 1))
    expect_verdict(run(t, ["scrub", t.d, "--repair"], 3), "a.bin", "repaired")
    expect_bytes(t, "a.bin")
    expect_verdict(run(t, ["scrub", t.d], 0), "a.bin", "clean")


@row("both redundancy files deleted and a data byte flipped: that stripe lost, the rest intact")
def _(t):
    rot(t, "a.bin", STRIPE + 3)
    os.unlink(t.ecc("a.bin", 0))
    os.unlink(t.ecc("a.bin", 1))
    expect_verdict(run(t, ["scrub", t.d], 4), "a.bin", "unprotected")


@row("the whole .ecjit directory deleted: unprotected")
def _(t):
    shutil.rmtree(os.path.join(t.d, ".ecjit"))
    doc = run(t, ["scrub", t.d], 4)
    for name in ("a.bin", "small.txt"):
        expect_verdict(doc, name, "unprotected")


# --- restore --to -----------------------------------------------------------------------------

@row("restore --to an existing file is refused without --overwrite")
def _(t):
    other = os.path.join(t.root, "keep.txt")
    open(other, "wb").write(b"do not touch")
    run(t, ["restore", t.p("a.bin"), "--to", other], 2, json_out=False)
    if open(other, "rb").read() != b"do not touch":
        raise RowFailure("restore --to overwrote an unrelated file")
    run(t, ["restore", t.p("a.bin"), "--to", other, "--overwrite"], 0)
    if open(other, "rb").read() != t.orig["a.bin"]:
        raise RowFailure("restore --to --overwrite did not write the protected file")


@row("restore --to a directory writes DIR/NAME and leaves no temporary")
def _(t):
    out = os.path.join(t.root, "out")
    os.mkdir(out)
    run(t, ["restore", t.p(UNICODE), "--to", out], 0)
    if os.listdir(out) != [UNICODE] or open(os.path.join(out, UNICODE), "rb").read() != t.orig[UNICODE]:
        raise RowFailure("restore --to DIR wrote %s" % os.listdir(out))


@row("restore --to of a file with lost stripes writes OUT.ecjit-partial, never OUT")
def _(t):
    for j in range(3):
        rot(t, "a.bin", STRIPE + j * UNIT)
    out = os.path.join(t.root, "copy.bin")
    info = expect_verdict(run(t, ["restore", t.p("a.bin"), "--to", out], 5), "a.bin", "data-lost")
    if os.path.exists(out) or info.get("partial_path") != out + ".ecjit-partial":
        raise RowFailure("restore --to wrote %s / partial %s" % (os.path.exists(out), info.get("partial_path")))
    got = open(out + ".ecjit-partial", "rb").read()
    orig = t.orig["a.bin"]
    if got[:STRIPE] != orig[:STRIPE] or got[STRIPE + 3 * UNIT:] != orig[STRIPE + 3 * UNIT:]:
        raise RowFailure("the partial copy lacks recoverable bytes")
    if any(got[STRIPE:STRIPE + 3 * UNIT]):
        raise RowFailure("the lost range of the partial copy is not a hole")


# --- the tree ---------------------------------------------------------------------------------

@row("sparse file: truncated, repaired, its hole stays a hole")
def _(t):
    before = os.stat(t.p("sparse.img")).st_blocks
    cut(t, "sparse.img", 8192)
    expect_verdict(run(t, ["scrub", t.d, "--repair"], 3), "sparse.img", "repaired")
    expect_bytes(t, "sparse.img")
    after = os.stat(t.p("sparse.img")).st_blocks
    if after > 2 * before + 16:
        raise RowFailure("repair filled the hole: %d blocks before, %d after" % (before, after))


@row("symlinks and FIFOs are skipped and named, never followed or read")
def _(t):
    os.symlink("a.bin", t.p("link"))
    os.mkfifo(t.p("fifo"))
    doc = run(t, ["protect", t.d] + SPEC, 0)
    if doc["skipped"]["symlinks"] != [t.p("link")] or doc["skipped"]["special"] != [t.p("fifo")]:
        raise RowFailure("skipped: %s" % doc["skipped"])
    if os.path.exists(t.ecc("link", 0)):
        raise RowFailure("a symlink was protected")
    text = run(t, ["scrub", t.d, "--verbose"], 0, json_out=False)
    if "skipped 1 symbolic links" not in text or "(symbolic link, not followed)" not in text:
        raise RowFailure("the text summary does not name the skipped entries:\n" + text)


@row("the redundancy directory itself is refused as data")
def _(t):
    run(t, ["protect", os.path.join(t.d, ".ecjit")], 2, json_out=False)
    run(t, ["scrub", t.ecc("a.bin", 0)], 2, json_out=False)


@row("an unchanged tree: every file unchanged, nothing read")
def _(t):
    doc = run(t, ["protect", t.d], 0)
    for f in doc["files"]:
        if f["verdict"] != "unchanged" or f["bytes_read"] != 0:
            raise RowFailure("%s: %s, %d bytes read" % (f["path"], f["verdict"], f["bytes_read"]))


@row("--quiet prints only problems")
def _(t):
    rot(t, "small.txt", 5)
    text = run(t, ["scrub", t.d, "--quiet"], 4, json_out=False)
    lines = [l for l in text.splitlines() if not l.startswith("    ")]
    if not lines or not lines[0].startswith("damaged") or any(l.startswith("clean") for l in lines):
        raise RowFailure("--quiet printed:\n" + text)


@row("bad arguments of the file commands: exit 2 with a message naming the option")
def _(t):
    for args, fragment in [(["protect", t.d, "--threads", "x"], "--threads 'x'"),
                           (["protect", t.d, "--unit", "100"], "unit"),
                           (["protect", t.d, "--max-rate", "0"], "--max-rate"),
                           (["restore", t.p("a.bin"), t.p("small.txt")], "exactly one FILE"),
                           (["restore", t.p("a.bin"), "--overwrite"], "--overwrite is for --to"),
                           (["prune"], "no PATH"),
                           (["scrub", t.d, "--bogus"], "bogus")]:
        p = subprocess.run([ECJIT] + args, capture_output=True, text=True, env=ENV, timeout=60)
        if p.returncode != 2 or fragment not in p.stderr:
            raise RowFailure("ecjit %s -> exit %d, stderr %r; want 2 and %r" % (" ".join(args), p.returncode,
                                                                              p.stderr, fragment))
        # With --json the error is a JSON object on stdout as well.
        p = subprocess.run([ECJIT] + args + ["--json"], capture_output=True, text=True, env=ENV, timeout=60)
        doc = json.loads(p.stdout) if p.stdout.strip() else {}
        if p.returncode != 2 or doc.get("exit") != 2 or fragment not in doc.get("error", ""):
            raise RowFailure("ecjit %s --json -> exit %d, stdout %r" % (" ".join(args), p.returncode, p.stdout))


@row("a scrub after protect is clean for every file, and JSON follows its schema")
def _(t):
    doc = run(t, ["scrub", t.d], 0)
    names = sorted(verdicts(doc))
    if names != sorted(t.orig):
        raise RowFailure("scrub saw %s" % names)


# --- crashes, a changing file, full and read-only file systems (--crash) -----------------------

def killed_at(tree, step, args):
    """Runs ecjit with ECJIT_FAILPOINT=step; it must die by SIGKILL there."""
    p = subprocess.run([ECJIT] + args, capture_output=True, text=True, timeout=120,
                       env=dict(ENV, ECJIT_FAILPOINT=step))
    if p.returncode != -signal.SIGKILL:
        raise RowFailure("%s with ECJIT_FAILPOINT=%s -> exit %d (not killed: a build without failpoints?)\n%s" %
                         (" ".join(args), step, p.returncode, p.stderr[-500:]))


def leftovers(tree):
    found = []
    for root, _, names in os.walk(tree.root):
        found += [os.path.join(root, n) for n in names if ".tmp" in n or n.endswith(".repairing")]
    return found


@row("killed after protect wrote its temporaries: the next protect finishes", crash=True)
def _(t):
    shutil.rmtree(os.path.join(t.d, ".ecjit"))
    killed_at(t, "protect.temps-written", ["protect", t.p("a.bin")] + SPEC)
    if os.path.exists(t.ecc("a.bin", 0)):
        raise RowFailure("a killed first protect left a final redundancy file")
    expect_verdict(run(t, ["protect", t.d] + SPEC, 0), "a.bin", "protected")
    if leftovers(t):
        raise RowFailure("temporaries left: %s" % leftovers(t))
    expect_verdict(run(t, ["scrub", t.d], 0), "a.bin", "clean")


@row("killed between protect's renames after an edit: scrub repairs, protect finishes", crash=True)
def _(t):
    with open(t.p("a.bin"), "r+b") as f:
        f.seek(STRIPE + 5)
        f.write(b"edit")
    os.utime(t.p("a.bin"), ns=(t.ident["a.bin"][1] + 7 * 10**9,) * 2)
    t.orig["a.bin"] = t.read("a.bin")
    killed_at(t, "protect.between-renames", ["protect", t.p("a.bin")])
    doc = run(t, ["scrub", t.p("a.bin")], 4)
    expect_verdict(doc, "a.bin", "damaged")  # one redundancy file of the old run: stale there
    expect_verdict(run(t, ["protect", t.d], 0), "a.bin", "updated")
    expect_verdict(run(t, ["scrub", t.d], 0), "a.bin", "clean")
    expect_bytes(t, "a.bin")
    t.ident["a.bin"] = t.identity("a.bin")


@row("killed mid repair, after the units were written: the next repair finishes, no edit seen", crash=True)
def _(t):
    cut(t, UNICODE, 5000)
    killed_at(t, "repair.units-written", ["scrub", t.p(UNICODE), "--repair"])
    expect_verdict(run(t, ["protect", t.d], 4), UNICODE, "damaged")  # refuses a half-repaired file
    expect_verdict(run(t, ["scrub", t.d, "--repair"], 3), UNICODE, "repaired")
    expect_bytes(t, UNICODE)
    if t.identity(UNICODE) != t.ident[UNICODE] or leftovers(t):
        raise RowFailure("identity %s, leftovers %s" % (t.identity(UNICODE), leftovers(t)))


@row("killed before a regenerated redundancy file's rename: the next repair finishes", crash=True)
def _(t):
    os.unlink(t.ecc("a.bin", 1))
    killed_at(t, "repair.before-regenerated-rename", ["scrub", t.p("a.bin"), "--repair"])
    expect_verdict(run(t, ["scrub", t.d, "--repair"], 3), "a.bin", "repaired")
    expect_verdict(run(t, ["scrub", t.d], 0), "a.bin", "clean")
    if leftovers(t):
        raise RowFailure("temporaries left: %s" % leftovers(t))


@row("killed before restore --to renamed its file: OUT absent, the next restore writes it", crash=True)
def _(t):
    out = os.path.join(t.root, "copy.bin")
    killed_at(t, "restore.before-rename", ["restore", t.p("a.bin"), "--to", out])
    if os.path.exists(out):
        raise RowFailure("a killed restore --to left OUT")
    run(t, ["restore", t.p("a.bin"), "--to", out], 0)
    if open(out, "rb").read() != t.orig["a.bin"] or leftovers(t):
        raise RowFailure("the second restore: wrong bytes or leftovers %s" % leftovers(t))


@row("a file changed while protect reads it: refused, no redundancy written, the next run protects", crash=True)
def _(t):
    shutil.rmtree(os.path.join(t.d, ".ecjit"))
    p = subprocess.Popen([ECJIT, "protect", t.p("a.bin")] + SPEC, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, env=dict(ENV, ECJIT_FAILPOINT="protect.reading:stop"))
    for _ in range(600):
        with open("/proc/%d/stat" % p.pid) as f:
            if f.read().rsplit(")", 1)[1].split()[0] == "T":
                break
        time.sleep(0.01)
    else:
        p.kill()
        raise RowFailure("protect never reached its failpoint")
    with open(t.p("a.bin"), "ab") as f:
        f.write(b"written meanwhile")
    os.kill(p.pid, signal.SIGCONT)
    out, err = p.communicate(timeout=60)
    if p.returncode != 1 or "changed while it was being protected; no redundancy written" not in err:
        raise RowFailure("exit %d, stderr %r" % (p.returncode, err))
    if os.path.exists(t.ecc("a.bin", 0)) or leftovers(t):
        raise RowFailure("redundancy written for a file that changed while it was read")
    t.orig["a.bin"] = t.read("a.bin")
    expect_verdict(run(t, ["protect", t.d] + SPEC, 0), "a.bin", "protected")
    t.ident["a.bin"] = t.identity("a.bin")


def tmpfs(path, size, ro=False):
    os.makedirs(path, exist_ok=True)
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=%s" % size, "tmpfs", path],
                      capture_output=True).returncode != 0:
        raise Skip("cannot mount a tmpfs here")


def umount(path):
    subprocess.run(["umount", path], capture_output=True)


@row("redundancy onto a full file system (ENOSPC): an error, nothing left behind", crash=True)
def _(t):
    ecc = os.path.join(t.root, "full")
    tmpfs(ecc, "16k")
    try:
        doc = run(t, ["protect", t.p("a.bin"), "--ecc-dir", ecc] + SPEC, 1)
        f = doc["files"][0]
        if f["verdict"] != "error" or "No space left" not in f["error"]:
            raise RowFailure("protect onto a full file system: %s" % f)
        if leftovers(t):
            raise RowFailure("temporaries left on the full file system: %s" % leftovers(t))
        expect_bytes(t, "a.bin")
    finally:
        umount(ecc)


@row("repair on a read-only file system (EROFS): an error, the verdict no lie, nothing changed", crash=True)
def _(t):
    data = os.path.join(t.root, "ro")
    tmpfs(data, "1m")
    try:
        shutil.copy2(t.p("a.bin"), os.path.join(data, "a.bin"))
        run(t, ["protect", data] + SPEC, 0)
        flip(os.path.join(data, "a.bin"), 77)
        damaged = open(os.path.join(data, "a.bin"), "rb").read()
        if subprocess.run(["mount", "-o", "remount,ro", data], capture_output=True).returncode != 0:
            raise Skip("cannot remount read-only here")
        doc = run(t, ["scrub", data, "--repair"], 1)
        if doc["files"][0]["verdict"] != "error":
            raise RowFailure("a repair that could not write said %s" % doc["files"][0]["verdict"])
        if open(os.path.join(data, "a.bin"), "rb").read() != damaged:
            raise RowFailure("the file changed on a read-only file system")
        expect_verdict(run(t, ["scrub", data], 4), "a.bin", "damaged")
    finally:
        umount(data)


def main():
    passed = failed = skipped = 0
    for name, fn, crash in ROWS:
        if (ONLY and ONLY not in name) or crash != CRASH:
            continue
        t = Tree(name)
        try:
            t.protect_all()
            fn(t)
            final_rule(t)
            passed += 1
            print("ok    %s" % name)
        except Skip as e:
            skipped += 1
            print("skip  %s (%s)" % (name, e))
        except (RowFailure, OSError, ValueError, KeyError, subprocess.TimeoutExpired) as e:
            failed += 1
            print("FAIL  %s\n      %s" % (name, str(e).replace("\n", "\n      ")))
        finally:
            t.cleanup()
    shutil.rmtree(CACHE, ignore_errors=True)
    print("%d passed, %d failed" % (passed, failed) + (", %d skipped" % skipped if skipped else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
