// Docstrings of ecjit._ecjit: each starts with its Python signature (pybind11's own are off).
#pragma once

namespace ecjit_py {

constexpr const char *kErrorDoc =
    "An ecjit call failed (a non-ok ecjit::Status), or an argument broke the C++ API's contract.\n"
    "\n"
    "str(e) is Status::to_string(), \"<status>: <message>\". Attributes:\n"
    "  status   the status name, e.g. \"invalid-spec\", \"invalid-argument\", \"shard-count\",\n"
    "           \"shard-size\", \"too-many-erasures\", \"singular\", \"unsupported-target\"\n"
    "  code     the numeric ecjit::StatusCode (stable, as in the C API)\n"
    "  message  the message without the status prefix\n";

constexpr const char *kCodecDoc = R"doc(A compiled erasure code: k data shards, m parity shards (n = k + m), JIT-compiled for a target.

Codec(spec, target="host", threads=1)

spec     a code description, e.g. "rs-vand:k=10,m=4", "rs-cauchy:k=6,m=3,gf=16",
         "isal-rs:k=8,m=3" (see docs/ of ecjit for the grammar and the families).
target   "host" (this CPU), or a masked host such as "host-avx2" (force a lower tier).
threads  threads per call for large buffers: 1 = the calling thread only, 0 = one per
         hardware thread, N = at most N (0..1024).

One process-wide ecjit::Jit is created per (target, threads) on first use and kept; codecs
of the same spec share its compiled kernels. The encoder is compiled in the constructor (the
GIL is released meanwhile). A Codec is immutable and thread-safe: every method releases the
GIL while the kernel runs, so calls from several Python threads run in parallel.

Shards are objects supporting the buffer protocol (bytes, bytearray, memoryview, array.array,
numpy arrays of any dtype, ...), C-contiguous, all of the same length in bytes, a multiple of
symbol_bytes. They are used in place, never copied; buffers that are written must be writable.
A sequence of shards may be any sequence (list, tuple, or a 2-D numpy array, whose rows are
the shards).

Errors: ecjit.Error (attribute status) for everything the C++ API reports and for contract
violations checked here: wrong number of shards or entries -> "shard-count"; unequal lengths or
a length that is not a multiple of symbol_bytes -> "shard-size"; a read-only buffer where one is
written, a non-contiguous buffer, a bad index or count -> "invalid-argument"; a bad spec ->
"invalid-spec"; an unknown target -> "unsupported-target". TypeError only when an argument has
the wrong Python type (not a sequence, an item without the buffer protocol, a non-int index).
Nothing is written when an error is raised.
)doc";

constexpr const char *kInitDoc = R"doc(__init__(spec: str, target: str = "host", threads: int = 1)

Compiles the code `spec` for `target` (see the class docstring).)doc";

constexpr const char *kSymbolBytesDoc =
    "Unit of every shard length in bytes: gf / 8 for symbol codes, the block of w x packet bytes "
    "for bit-matrix and array codes. Shard lengths must be multiples of it.";

constexpr const char *kStrategyDoc =
    "Lowering strategy of the encoder running now (e.g. \"clmul-shift\", \"gfni\"); may change once "
    "when the background tuner swaps in a faster kernel (see wait_for_tuning()).";

constexpr const char *kParityMatrixDoc =
    "The m x k parity matrix as a list of m rows of k ints (field elements): parity i = sum over j "
    "of parity_matrix[i][j] * data j, in the code's field GF(2^gf). For bit-matrix and array codes "
    "(specs with w= or p=): the (m w) x (k w) bit matrix, entries 0 / 1 (Jerasure's layout: "
    "packet r of each block of parity i is the XOR of the packets c of data j for which row "
    "i w + r, column j w + c is 1). rs-fft (reed-solomon-simd's code): the generator in the crate's "
    "Cantor-basis GF(2^16) representation, or [] when k * m > 65536.";

constexpr const char *kEncodeDoc = R"doc(encode(data, parity=None) -> parity

Computes the m parity shards of the k data shards.

data    a sequence of k buffers (read only), equal lengths.
parity  a sequence of m writable buffers of the same length, overwritten in place and
        returned as given; None: m new bytearrays are allocated and returned (a list).

Raises ecjit.Error: "shard-count" (len(data) != k or len(parity) != m), "shard-size" (unequal
lengths, or not a multiple of symbol_bytes), "invalid-argument" (a read-only or non-contiguous
parity buffer, a non-contiguous data buffer, a parity buffer that is also a data buffer or
another parity buffer). TypeError: data/parity not a sequence, an item without the buffer
protocol. Partially overlapping buffers are not detected.
)doc";

constexpr const char *kReconstructDoc = R"doc(reconstruct(shards, present) -> None

Rebuilds, in place, every shard i with present[i] false, from the present ones.

shards   a sequence of n buffers, data shards then parity shards, equal lengths. Present
         shards are only read (bytes are fine); missing ones must be writable and are
         overwritten.
present  a sequence of n truth values (list of bools, numpy bool array, ...).

Raises ecjit.Error: "shard-count" (len(shards) or len(present) != n), "shard-size",
"too-many-erasures" (more than m missing), "singular" (the code cannot decode this erasure
set), "invalid-argument" (a missing shard is read-only, non-contiguous, or the same buffer as
another shard). TypeError as for encode.
)doc";

constexpr const char *kVerifyDoc = R"doc(verify(shards) -> bool

Whether the m parity shards equal the encoding of the k data shards. shards: n buffers (data
then parity), read only, equal lengths. Nothing is written and nothing is allocated.

Raises ecjit.Error: "shard-count", "shard-size", "invalid-argument" (non-contiguous buffer).
)doc";

constexpr const char *kUpdateDoc = R"doc(update(changed, old_data, new_data, parity) -> None

Parity delta update for a small write: for the data shards listed in `changed`,
parity[r] ^= sum over j of a(r, j) * (old_j ^ new_j). Afterwards the parity equals encode() of
the data with the changed shards replaced by their new contents (store the new data yourself).

changed   a sequence of distinct data shard indices (0 <= i < k), in any order.
old_data  a sequence of buffers, old_data[i] = the old contents of shard changed[i].
new_data  a sequence of buffers, new_data[i] = the new contents of shard changed[i].
parity    a sequence of m writable buffers, updated in place.

Raises ecjit.Error: "invalid-argument" (empty or out-of-range or repeated index, read-only or
non-contiguous parity, a parity buffer that is also a data buffer), "shard-count"
(len(old_data) or len(new_data) != len(changed), len(parity) != m), "shard-size".
TypeError: an index that is not an int, or as for encode.
)doc";

constexpr const char *kSignatureDoc = R"doc(signature(buf, components=4) -> list[int]

Algebraic signature of one shard over the code's field GF(2^gf): sig[i] = sum over the
shard's symbols p_j of p_j * alpha^((i+1) j), alpha the field's primitive element, for
i < components (1..16). Linear: signature(a XOR b) == signature(a) XOR signature(b), and the
code applied to the data shards' signatures gives the parity shards' signatures.

Raises ecjit.Error: "invalid-argument" (components out of range, non-contiguous buffer),
"shard-size" (length not a multiple of symbol_bytes), "unsupported" (bit-matrix and array
codes: they are not linear over a field of the shard's symbols).
)doc";

constexpr const char *kWaitForTuningDoc = R"doc(wait_for_tuning() -> None

Blocks until the background tuning and decoder promotions queued so far, on every codec of
the process, have finished (ecjit tunes kernels in the background: Codec.strategy may change
once). For benchmarks that want the tuned kernels before they measure. Also run at exit.
)doc";

constexpr const char *kArrayCodecDoc = R"doc(An array code whose parity shares the disks with the data (X-Code, BP-Code, RDP, EVENODD, STAR).

ArrayCodec(spec, target="host", threads=1)

spec     "<family>:p=<prime>[,element=<bytes>]": family xcode, bpcode, rdp, evenodd or star,
         element a multiple of 8 (default 64).

A stripe is rows x disks cells of element_bytes each; disk d's buffer holds, stripe after
stripe, its cells in row order (cell (r, d) of stripe s at (s * rows + r) * element_bytes).
is_parity(r, d) says which cells hold parity. Every method takes the disks buffers (one per
disk, equal lengths, a multiple of stripe_bytes), uses them in place and releases the GIL.

Raises ecjit.Error: "invalid-spec" (the rule named), "jit-failure".
)doc";

constexpr const char *kArrayEncodeDoc = R"doc(encode(disks) -> None

Writes every parity cell from the data cells, in place; data cells are only read. disks:
`disks` writable buffers.

Raises ecjit.Error: "shard-count", "shard-size" (not a multiple of stripe_bytes, unequal),
"invalid-argument" (read-only, non-contiguous or the same buffer twice).
)doc";

constexpr const char *kArrayReconstructDoc = R"doc(reconstruct(disks, present) -> None

Rebuilds every cell of the disks whose present[d] is false (those buffers must be writable;
the others are only read): up to two disks, three for STAR.

Raises ecjit.Error: as encode, and "too-many-erasures" (nothing written then).
)doc";

constexpr const char *kArrayVerifyDoc = R"doc(verify(disks) -> bool

Whether every parity cell equals its encoding from the data cells. Nothing is written.

Raises ecjit.Error: "shard-count", "shard-size", "invalid-argument".
)doc";

constexpr const char *kArrayMismatchDoc = R"doc(mismatch(disks) -> (offset, disk) or None

None when every parity cell matches; else the smallest byte offset (in the disk buffers) of
a parity byte that differs, and its disk (the lowest at that offset).

Raises ecjit.Error: as verify.
)doc";

constexpr const char *kArrayReadDoc = R"doc(read(disks, present, disk, offset, size) -> bytes

A degraded read: `size` bytes at `offset` of disk `disk`, as they were before the disks whose
present[d] is false were lost. A present disk's bytes are copied; a lost disk's cells are
rebuilt from the fewest cells of the other disks that their parity chains need (the
buffers of absent disks are never read). For whole disks, reconstruct is faster.

Raises ecjit.Error: as encode, "invalid-argument" (disk out of range, the range past the
disks' length), "too-many-erasures".
)doc";

constexpr const char *kArrayUpdateDoc = R"doc(update(disks, disk, new_data) -> None

Writes the data cells of disk `disk` from new_data (laid out like that disk's buffer; its
parity cells there are ignored) and patches every parity cell they reach, on any disk. The
other disks' data cells are not read. new_data must not be the disk's own buffer.

Raises ecjit.Error: as encode, "invalid-argument" (disk out of range, a disk without data
cells, new_data the disk's buffer), "null-pointer".
)doc";

}  // namespace ecjit_py
