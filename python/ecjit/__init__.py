"""ecjit: erasure codes JIT-compiled with LLVM (Reed-Solomon, Cauchy, ISA-L and Jerasure
compatible matrices, bit-matrix and array codes).

A Codec encodes k data shards into m parity shards and rebuilds up to m lost shards. Shards
are any objects supporting the buffer protocol (bytes, bytearray, memoryview, numpy arrays),
C-contiguous and all of the same length; they are used in place, never copied, and the GIL is
released while a kernel runs.

Example::

    import ecjit

    codec = ecjit.Codec("rs-vand:k=4,m=2")          # RS(4,2) over GF(2^8)
    data = [bytes([i]) * 4096 for i in range(4)]    # k data shards
    parity = codec.encode(data)                     # m new bytearrays
    shards = [bytearray(s) for s in data] + parity  # all n = k + m shards
    shards[1][:] = bytes(4096)                      # lose shards 1 and 4
    shards[4][:] = bytes(4096)
    codec.reconstruct(shards, [True, False, True, True, False, True])
    assert shards[1] == data[1] and codec.verify(shards)

    try:
        ecjit.Codec("rs-vand:k=4")
    except ecjit.Error as e:
        print(e.status, e)                          # invalid-spec invalid-spec: ...

Errors: every failure reported by ecjit raises ecjit.Error, whose str() is the C++
Status::to_string() ("<status>: <message>") and whose attribute ``status`` is the status name
("invalid-spec", "invalid-argument", "shard-count", "shard-size", "too-many-erasures",
"singular", "unsupported-target", ...). Argument mistakes that break the C++ contract (wrong
number of shards, unequal lengths, a read-only or non-contiguous buffer where one is written)
raise ecjit.Error with the status the C++ API uses; TypeError is raised only for wrong Python
types (not a sequence, an item without the buffer protocol).
"""

import atexit as _atexit

from ._ecjit import ArrayCodec, Codec, Error, wait_for_tuning

__all__ = ["ArrayCodec", "Codec", "Error", "wait_for_tuning"]
__version__ = "0.1.0"

# ecjit tunes kernels on a background thread; let it finish before the interpreter (and
# LLVM's own static objects) are torn down.
_atexit.register(wait_for_tuning)
