"""Tests of the ecjit Python binding, against independent oracles: GF(2^8) / GF(2^16)
arithmetic in pure Python (the parity matrix product, algebraic signatures) and, when
installed, ISA-L and Jerasure through pyeclib."""

import itertools
import os
import random
import subprocess
import sys
import threading

import pytest

import ecjit

try:
    import numpy as np
except ImportError:  # pragma: no cover - numpy is optional
    np = None

needs_numpy = pytest.mark.skipif(np is None, reason="numpy is not installed")


# ---- GF(2^l) in pure Python: the oracle ----

class GF:
    """GF(2^bits) with log / antilog tables; poly includes the x^bits term."""

    def __init__(self, bits, poly):
        self.bits = bits
        size = 1 << bits
        self.exp = [0] * (2 * size)
        self.log = [0] * size
        x = 1
        for i in range(size - 1):
            self.exp[i] = x
            self.log[x] = i
            x <<= 1
            if x & size:
                x ^= poly
        assert x == 1, "poly is not primitive"
        for i in range(size - 1, 2 * size):
            self.exp[i] = self.exp[i - (size - 1)]
        self.order = size - 1

    def mul(self, a, b):
        if a == 0 or b == 0:
            return 0
        return self.exp[self.log[a] + self.log[b]]

    def mul_slow(self, a, b, poly):
        """Shift-and-add multiplication, independent of the tables (checks them)."""
        r = 0
        while b:
            if b & 1:
                r ^= a
            b >>= 1
            a <<= 1
            if a >> self.bits:
                a ^= poly
        return r

    def power(self, a, e):
        if a == 0:
            return 0
        return self.exp[(self.log[a] * e) % self.order]


GF8 = GF(8, 0x11D)
_GF16 = None


def gf16():
    global _GF16
    if _GF16 is None:
        _GF16 = GF(16, 0x1100B)
    return _GF16


def xor_bytes(a, b):
    return (int.from_bytes(a, "little") ^ int.from_bytes(b, "little")).to_bytes(len(a), "little")


def gf8_encode(matrix, data):
    """Parity = matrix x data over GF(2^8), byte by byte (bytes.translate with product tables)."""
    parity = []
    for row in matrix:
        acc = bytes(len(data[0]))
        for a, shard in zip(row, data):
            table = bytes(GF8.mul(a, x) for x in range(256))
            acc = xor_bytes(acc, bytes(shard).translate(table))
        parity.append(acc)
    return parity


def gf16_encode(matrix, data):
    """Parity = matrix x data over GF(2^16), symbols = little-endian 16-bit words."""
    f = gf16()
    words = [[int.from_bytes(bytes(s[i:i + 2]), "little") for i in range(0, len(s), 2)] for s in data]
    parity = []
    for row in matrix:
        out = bytearray()
        for t in range(len(words[0])):
            v = 0
            for a, w in zip(row, words):
                v ^= f.mul(a, w[t])
            out += v.to_bytes(2, "little")
        parity.append(bytes(out))
    return parity


def gf8_signature(buf, components):
    sig = []
    for i in range(components):
        base = GF8.power(2, i + 1)
        s, x = 0, 1
        for p in bytes(buf):
            s ^= GF8.mul(p, x)
            x = GF8.mul(x, base)
        sig.append(s)
    return sig


def rand_shards(count, length, seed):
    rng = random.Random(seed)
    return [bytes(rng.getrandbits(8) for _ in range(length)) for _ in range(count)]


@pytest.fixture(scope="module")
def rs42():
    return ecjit.Codec("rs-vand:k=4,m=2")


@pytest.fixture(scope="module")
def cauchy16():
    return ecjit.Codec("rs-cauchy:k=6,m=3,gf=16")


# ---- the oracle itself ----

def test_gf8_tables_agree_with_shift_and_add():
    rng = random.Random(1)
    for _ in range(2000):
        a, b = rng.randrange(256), rng.randrange(256)
        assert GF8.mul(a, b) == GF8.mul_slow(a, b, 0x11D)


# ---- properties ----

def test_properties(rs42, cauchy16):
    assert (rs42.k, rs42.m, rs42.n, rs42.symbol_bytes) == (4, 2, 6, 1)
    assert rs42.spec == "rs-vand:k=4,m=2,gf=8"
    assert isinstance(rs42.strategy, str) and rs42.strategy
    assert (cauchy16.k, cauchy16.m, cauchy16.n, cauchy16.symbol_bytes) == (6, 3, 9, 2)
    assert cauchy16.spec == "rs-cauchy:k=6,m=3,gf=16"
    assert repr(rs42) == "ecjit.Codec('rs-vand:k=4,m=2,gf=8')"
    m = rs42.parity_matrix
    assert len(m) == 2 and all(len(r) == 4 for r in m)
    assert all(0 <= a < 256 for r in m for a in r)
    assert rs42.target == "host" and rs42.threads == 1


def test_cauchy_matrix_is_cauchy(cauchy16):
    # rs-cauchy: a_ij = 1 / (i + (m + j)) in GF(2^16) (+ is XOR).
    f = gf16()
    for i, row in enumerate(cauchy16.parity_matrix):
        for j, a in enumerate(row):
            assert f.mul(a, i ^ (cauchy16.m + j)) == 1


# ---- encode against the oracle ----

@pytest.mark.parametrize("length", [1, 7, 64, 1000, 4096 + 3])
def test_encode_gf8_equals_matrix_product(rs42, length):
    data = rand_shards(4, length, seed=length)
    want = gf8_encode(rs42.parity_matrix, data)
    got = rs42.encode(data)
    assert isinstance(got, list) and all(isinstance(p, bytearray) for p in got)
    assert [bytes(p) for p in got] == want


@pytest.mark.parametrize("spec", ["rs-vand:k=10,m=4", "isal-rs:k=8,m=3", "rs-cauchy:k=5,m=5"])
def test_encode_other_gf8_codes(spec):
    codec = ecjit.Codec(spec)
    data = rand_shards(codec.k, 333, seed=7)
    assert [bytes(p) for p in codec.encode(data)] == gf8_encode(codec.parity_matrix, data)


def test_lrc_local_parities_are_group_xors_and_one_loss_is_rebuilt():
    codec = ecjit.Codec("lrc:k=12,l=2,r=2")
    assert (codec.k, codec.m) == (12, 4)
    data = rand_shards(12, 1000, seed=11)
    parity = [bytes(p) for p in codec.encode(data)]
    assert parity == gf8_encode(codec.parity_matrix, data)
    for g in range(2):  # the local parities: each group's XOR, whatever the matrix says
        x = bytearray(1000)
        for d in data[6 * g:6 * g + 6]:
            x = bytearray(a ^ b for a, b in zip(x, d))
        assert parity[g] == bytes(x)
    shards = [bytearray(d) for d in data] + [bytearray(p) for p in parity]
    shards[7][:] = bytes(1000)
    codec.reconstruct(shards, [i != 7 for i in range(16)])
    assert bytes(shards[7]) == bytes(data[7])


def test_encode_gf16_equals_matrix_product(cauchy16):
    data = rand_shards(6, 2 * 300, seed=3)
    want = gf16_encode(cauchy16.parity_matrix, data)
    assert [bytes(p) for p in cauchy16.encode(data)] == want


PYECLIB_CASES = [
    # (pyeclib backend, ecjit spec): the payload of each fragment (after liberasurecode's
    # fragment header) is the shard; the parity fragments are the backend's own encoding.
    ("isa_l_rs_vand", "isal-rs:k=4,m=2"),
    ("isa_l_rs_cauchy", "isal-cauchy:k=4,m=2"),
    ("jerasure_rs_vand", "jerasure-vand:k=4,m=2,gf=16"),  # liberasurecode uses w = 16
]


@pytest.mark.parametrize("backend,spec", PYECLIB_CASES)
def test_encode_equals_pyeclib(backend, spec):
    ec_iface = pytest.importorskip("pyeclib.ec_iface")
    try:
        driver = ec_iface.ECDriver(k=4, m=2, ec_type=backend)
    except Exception as e:  # backend library not installed
        pytest.skip("pyeclib backend %s unavailable: %s" % (backend, e))
    payload = os.urandom(4 * 4096)
    fragments = driver.encode(payload)
    shards = []
    for frag in fragments:
        size = driver.get_metadata(frag, formatted=True)["size"]
        shards.append(bytes(frag[len(frag) - size:]))
    assert len(shards) == 6 and len({len(s) for s in shards}) == 1
    assert b"".join(shards[:4])[:len(payload)] == payload  # systematic: data fragments = payload
    codec = ecjit.Codec(spec)
    parity = codec.encode(shards[:4])
    assert [bytes(p) for p in parity] == shards[4:]
    # and the other way round: ecjit rebuilds what the backend wrote
    work = [bytearray(s) for s in shards]
    for lost in (0, 3):
        work[lost][:] = bytes(len(work[lost]))
    codec.reconstruct(work, [i not in (0, 3) for i in range(6)])
    assert [bytes(s) for s in work] == shards


# ---- reconstruct ----

@pytest.mark.parametrize("which", ["rs42", "cauchy16"])
def test_reconstruct_every_erasure_set(which, request):
    codec = request.getfixturevalue(which)
    length = 256 * codec.symbol_bytes
    data = rand_shards(codec.k, length, seed=11)
    original = data + [bytes(p) for p in codec.encode(data)]
    sets = 0
    for lost_count in range(0, codec.m + 1):
        for lost in itertools.combinations(range(codec.n), lost_count):
            shards = [bytearray(s) for s in original]
            for s in lost:
                shards[s][:] = b"\xee" * length
            present = [s not in lost for s in range(codec.n)]
            assert codec.reconstruct(shards, present) is None
            assert [bytes(s) for s in shards] == original, lost
            sets += 1
    assert sets == sum(len(list(itertools.combinations(range(codec.n), c))) for c in range(codec.m + 1))


def test_reconstruct_present_shards_may_be_read_only(rs42):
    data = rand_shards(4, 128, seed=5)
    parity = [bytes(p) for p in rs42.encode(data)]
    lost = bytearray(128)
    shards = [data[0], lost, data[2], data[3], parity[0], parity[1]]  # bytes except the lost one
    rs42.reconstruct(shards, [True, False, True, True, True, True])
    assert bytes(lost) == data[1]


def bitmatrix_encode(bits, k, m, block_bytes, data):
    """Jerasure's layout: a shard is blocks of w packets; packet r of parity i is the XOR of
    the packets c of data j where bits[i w + r][j w + c] is 1."""
    w = len(bits) // m
    packet = block_bytes // w
    parity = []
    for i in range(m):
        out = bytearray()
        for base in range(0, len(data[0]), block_bytes):
            for r in range(w):
                acc = bytes(packet)
                for j in range(k):
                    for c in range(w):
                        if bits[i * w + r][j * w + c]:
                            off = base + c * packet
                            acc = xor_bytes(acc, data[j][off:off + packet])
                out += acc
        parity.append(bytes(out))
    return parity


@pytest.mark.parametrize("spec", ["cauchy-good:k=4,m=2,w=8", "liberation:k=5,w=5,packet=32", "evenodd:k=4"])
def test_bit_matrix_encode_equals_xor_of_packets(spec):
    codec = ecjit.Codec(spec)
    bits = codec.parity_matrix
    assert len(bits) % codec.m == 0
    w = len(bits) // codec.m
    assert len(bits[0]) == codec.k * w and {b for row in bits for b in row} <= {0, 1}
    data = rand_shards(codec.k, 2 * codec.symbol_bytes, seed=12)
    want = bitmatrix_encode(bits, codec.k, codec.m, codec.symbol_bytes, data)
    assert [bytes(p) for p in codec.encode(data)] == want
    with pytest.raises(ecjit.Error) as e:
        codec.signature(data[0])
    assert e.value.status == "unsupported"


def test_bit_matrix_code_round_trip():
    codec = ecjit.Codec("cauchy-good:k=4,m=2,w=8")
    assert codec.symbol_bytes == 8 * 64  # w x the default packet
    length = 3 * codec.symbol_bytes
    data = rand_shards(4, length, seed=2)
    original = data + [bytes(p) for p in codec.encode(data)]
    assert codec.verify(original)
    shards = [bytearray(s) for s in original]
    shards[0][:] = bytes(length)
    shards[5][:] = bytes(length)
    codec.reconstruct(shards, [False, True, True, True, True, False])
    assert [bytes(s) for s in shards] == original


# ---- buffer types, in place and without copies ----

@needs_numpy
def test_numpy_parity_written_in_place(rs42):
    data = np.frombuffer(os.urandom(4 * 512), dtype=np.uint8).reshape(4, 512)
    parity = np.zeros((2, 512), dtype=np.uint8)
    ret = rs42.encode(data, parity)  # a 2-D array is a sequence of its rows
    assert ret is parity
    want = gf8_encode(rs42.parity_matrix, [r.tobytes() for r in data])
    assert [r.tobytes() for r in parity] == want
    # separate 1-D arrays too, of another dtype (shards are bytes whatever the dtype)
    p16 = [np.zeros(256, dtype=np.uint16), np.zeros(256, dtype=np.uint16)]
    rs42.encode([r.view(np.uint16) for r in data], p16)
    assert [p.tobytes() for p in p16] == want


@needs_numpy
def test_numpy_reconstruct_rows_in_place(cauchy16):
    length = 1024
    data = np.frombuffer(os.urandom(6 * length), dtype=np.uint8).reshape(6, length)
    stripe = np.zeros((9, length), dtype=np.uint8)
    stripe[:6] = data
    cauchy16.encode(stripe[:6], stripe[6:])  # rows of one array, parity rows written in place
    original = stripe.copy()
    assert cauchy16.verify(stripe)
    stripe[[1, 4, 7]] = 0
    present = np.ones(9, dtype=bool)
    present[[1, 4, 7]] = False
    cauchy16.reconstruct(stripe, present)
    assert np.array_equal(stripe, original)


def test_memoryview_slices_of_one_buffer(rs42):
    length = 300
    stripe = bytearray(6 * length)
    view = memoryview(stripe)
    data = rand_shards(4, length, seed=9)
    for i, d in enumerate(data):
        stripe[i * length:(i + 1) * length] = d
    shards = [view[i * length:(i + 1) * length] for i in range(6)]
    parity = rs42.encode(shards[:4], shards[4:])
    assert parity[0] is shards[4]
    want = gf8_encode(rs42.parity_matrix, data)
    assert bytes(stripe[4 * length:]) == b"".join(want)  # written into the big bytearray
    stripe[length:2 * length] = bytes(length)
    rs42.reconstruct(shards, [True, False, True, True, True, True])
    assert bytes(stripe[length:2 * length]) == data[1]
    view.release()


@needs_numpy
def test_mixed_buffer_types(rs42):
    data = rand_shards(4, 64, seed=4)
    mixed = [data[0], bytearray(data[1]), memoryview(data[2]), np.frombuffer(data[3], dtype=np.uint8)]
    parity = [bytearray(64), np.zeros(64, dtype=np.uint8)]
    rs42.encode(tuple(mixed), parity)
    assert [bytes(p) for p in parity] == gf8_encode(rs42.parity_matrix, data)


@needs_numpy
def test_numpy_non_contiguous_and_read_only(rs42):
    big = np.zeros((4, 128), dtype=np.uint8)
    with pytest.raises(ecjit.Error) as e:
        rs42.encode([row[::2] for row in big])  # strided views
    assert e.value.status == "invalid-argument" and "contiguous" in str(e.value)
    ro = np.zeros((2, 128), dtype=np.uint8)
    ro.setflags(write=False)
    with pytest.raises(ecjit.Error) as e:
        rs42.encode(big, ro)
    assert e.value.status == "invalid-argument" and "read-only" in str(e.value)
    data = np.ones((4, 128), dtype=np.uint8)
    data.setflags(write=False)  # read-only data is fine
    assert len(rs42.encode(data)) == 2


# ---- verify, update, signature ----

def test_verify(rs42):
    data = rand_shards(4, 1000, seed=21)
    shards = data + [bytes(p) for p in rs42.encode(data)]
    assert rs42.verify(shards) is True
    for s in (0, 3, 4, 5):
        bad = [bytearray(x) for x in shards]
        bad[s][999] ^= 1
        assert rs42.verify(bad) is False
    assert rs42.verify([b""] * 6) is True


def test_update_equals_reencode(cauchy16):
    rng = random.Random(5)
    length = 512
    data = rand_shards(6, length, seed=31)
    parity = cauchy16.encode(data)
    for changed in ([0], [5], [2, 4], [4, 1, 3], list(range(6))):  # any order
        new = {i: bytes(rng.getrandbits(8) for _ in range(length)) for i in changed}
        cauchy16.update(changed, [data[i] for i in changed], [new[i] for i in changed], parity)
        for i in changed:
            data[i] = new[i]
        assert [bytes(p) for p in parity] == [bytes(p) for p in cauchy16.encode(data)], changed
        assert [bytes(p) for p in parity] == gf16_encode(cauchy16.parity_matrix, data)


@needs_numpy
def test_update_numpy(rs42):
    data = np.frombuffer(os.urandom(4 * 256), dtype=np.uint8).reshape(4, 256).copy()
    parity = np.zeros((2, 256), dtype=np.uint8)
    rs42.encode(data, parity)
    new = np.frombuffer(os.urandom(256), dtype=np.uint8)
    rs42.update([2], [data[2]], [new], parity)
    data[2] = new
    want = np.zeros_like(parity)
    rs42.encode(data, want)
    assert np.array_equal(parity, want)


def test_update_errors(rs42):
    data = rand_shards(4, 64, seed=1)
    parity = rs42.encode(data)
    before = [bytes(p) for p in parity]
    cases = [
        (([1, 1], data[:2], data[:2], parity), "invalid-argument"),  # repeated index
        (([4], data[:1], data[:1], parity), "invalid-argument"),  # not a data shard
        (([-1], data[:1], data[:1], parity), "invalid-argument"),
        (([], [], [], parity), "invalid-argument"),  # empty set
        (([0, 1], data[:1], data[:2], parity), "shard-count"),
        (([0], data[:1], data[:1], parity[:1]), "shard-count"),
        (([0], data[:1], [data[1][:32]], parity), "shard-size"),
        (([0], data[:1], data[:1], [bytes(64), bytes(64)]), "invalid-argument"),  # read-only parity
    ]
    for args, status in cases:
        with pytest.raises(ecjit.Error) as e:
            rs42.update(*args)
        assert e.value.status == status, (args[0], str(e.value))
    with pytest.raises(TypeError):
        rs42.update(["0"], data[:1], data[:1], parity)
    assert [bytes(p) for p in parity] == before  # nothing written


def test_signature_matches_oracle_and_is_linear(rs42):
    a = os.urandom(200)
    b = os.urandom(200)
    sa, sb = rs42.signature(a), rs42.signature(b)
    assert len(sa) == 4 and sa == gf8_signature(a, 4)
    assert rs42.signature(xor_bytes(a, b)) == [x ^ y for x, y in zip(sa, sb)]
    assert rs42.signature(a, components=16) == gf8_signature(a, 16)
    assert rs42.signature(a, 1) == sa[:1]
    # the code commutes with signatures: sig(parity_i) = sum_j a_ij * sig(data_j)
    data = rand_shards(4, 200, seed=8)
    parity = rs42.encode(data)
    sigs = [rs42.signature(d) for d in data]
    for i, row in enumerate(rs42.parity_matrix):
        want = [0] * 4
        for a_ij, sig in zip(row, sigs):
            want = [w ^ GF8.mul(a_ij, s) for w, s in zip(want, sig)]
        assert rs42.signature(parity[i]) == want


def test_signature_errors(rs42, cauchy16):
    for bad in (0, 17, -1):
        with pytest.raises(ecjit.Error) as e:
            rs42.signature(b"abcd", bad)
        assert e.value.status == "invalid-argument"
    with pytest.raises(ecjit.Error) as e:
        cauchy16.signature(b"abc")
    assert e.value.status == "shard-size"
    with pytest.raises(TypeError):
        rs42.signature(12)


# ---- rs-fft (reed-solomon-simd's additive-FFT code, FftCodec) ----

def test_rs_fft_round_trip_and_generator():
    codec = ecjit.Codec("rs-fft:k=3,m=2")
    assert codec.spec == "rs-fft:k=3,m=2,gf=16" and codec.symbol_bytes == 2
    data = rand_shards(3, 130, seed=23)  # two 64-byte chunks and a partial one
    original = data + [bytes(p) for p in codec.encode(data)]
    for lost_count in range(1, 3):
        for lost in itertools.combinations(range(5), lost_count):
            shards = [bytearray(s) for s in original]
            for s in lost:
                shards[s][:] = b"\xee" * 130
            codec.reconstruct(shards, [s not in lost for s in range(5)])
            assert [bytes(s) for s in shards] == original, lost
    # Column j of the generator is the encode of e_j (element 1 = bytes 01 00).
    matrix = codec.parity_matrix
    assert len(matrix) == 2 and all(len(row) == 3 for row in matrix)
    for j in range(3):
        unit = [bytes([int(i == j), 0]) for i in range(3)]
        col = [int.from_bytes(bytes(p), "little") for p in codec.encode(unit)]
        assert col == [matrix[r][j] for r in range(2)]
    assert ecjit.Codec("rs-fft:k=300,m=300").parity_matrix == []  # k * m > 65536: not built


def test_rs_spec_names_the_construction_it_chose():
    # rs:k=,m= (codes/rs_auto.h): the cost model's choice; spec names it, to store with the data.
    assert ecjit.Codec("rs:k=32,m=32").spec == "rs-fft:k=32,m=32,gf=8"
    assert ecjit.Codec("rs:k=300,m=100").spec == "rs-fft:k=300,m=100,gf=16"
    assert ecjit.Codec("rs:k=10,m=4").spec == "rs-cauchy:k=10,m=4,gf=8"
    with pytest.raises(ecjit.Error) as e:
        ecjit.Codec("rs:k=10,m=4,gf=8")
    assert "rs takes k and m only" in str(e.value)


def test_rs_fft_errors():
    codec = ecjit.Codec("rs-fft:k=3,m=2")
    with pytest.raises(ecjit.Error) as e:
        codec.signature(b"abcd")
    assert e.value.status == "unsupported"
    with pytest.raises(ecjit.Error) as e:
        codec.encode(rand_shards(3, 3, seed=1))
    assert e.value.status == "shard-size"
    with pytest.raises(ecjit.Error) as e:
        ecjit.Codec("rs-fft:k=200,m=57,gf=8")
    assert e.value.status == "invalid-spec" and "Leopard-RS's GF(2^8) limit" in str(e.value)


def test_rs_fft_gf8_any_length_round_trip():
    # Leopard-RS's GF(2^8) (klauspost's leopard8): a byte an element, so odd lengths too.
    codec = ecjit.Codec("rs-fft:k=5,m=3,gf=8")
    assert codec.spec == "rs-fft:k=5,m=3,gf=8"
    data = rand_shards(5, 333, seed=4)
    parity = codec.encode(data)
    assert len(parity) == 3 and all(len(p) == 333 for p in parity)
    original = list(data) + [bytes(p) for p in parity]
    shards = [bytearray(s) for s in original]
    for s in (0, 4, 6):
        shards[s][:] = b"\xee" * 333
    assert codec.reconstruct(shards, [s not in (0, 4, 6) for s in range(8)]) is None
    assert [bytes(s) for s in shards] == original
    # GF(2^16) is another code: the same originals (even length) give other parity.
    even = rand_shards(5, 64, seed=5)
    assert [bytes(p) for p in codec.encode(even)] != [bytes(p) for p in ecjit.Codec("rs-fft:k=5,m=3").encode(even)]


# ---- errors ----

def test_error_class():
    assert issubclass(ecjit.Error, Exception)
    assert ecjit.Error.__module__ == "ecjit"


@pytest.mark.parametrize("spec", ["rs-vand:k=4", "nonsense", "rs-vand:k=4,m=2,gf=12", "rs-vand:k=0,m=2", ""])
def test_bad_spec(spec):
    with pytest.raises(ecjit.Error) as e:
        ecjit.Codec(spec)
    assert e.value.status == "invalid-spec"
    assert str(e.value).startswith("invalid-spec: ")
    assert e.value.code == 1 and e.value.message and e.value.message in str(e.value)


def test_bad_target_and_threads():
    with pytest.raises(ecjit.Error) as e:
        ecjit.Codec("rs-vand:k=4,m=2", target="no-such-cpu")
    assert e.value.status == "unsupported-target"
    for threads in (-1, 5000):
        with pytest.raises(ecjit.Error) as e:
            ecjit.Codec("rs-vand:k=4,m=2", threads=threads)
        assert e.value.status == "invalid-argument"
    with pytest.raises(TypeError):
        ecjit.Codec(42)


def test_wrong_shard_counts(rs42):
    data = rand_shards(4, 64, seed=1)
    shards = data + [bytes(p) for p in rs42.encode(data)]
    calls = [
        lambda: rs42.encode(data[:3]),
        lambda: rs42.encode(data + data[:1]),
        lambda: rs42.encode(data, [bytearray(64)]),
        lambda: rs42.encode(data, [bytearray(64) for _ in range(3)]),
        lambda: rs42.reconstruct(shards[:5], [True] * 5),
        lambda: rs42.reconstruct([bytearray(s) for s in shards], [True] * 5),
        lambda: rs42.verify(shards[:5]),
        lambda: rs42.verify([]),
    ]
    for call in calls:
        with pytest.raises(ecjit.Error) as e:
            call()
        assert e.value.status == "shard-count"


def test_shard_size_errors(rs42, cauchy16):
    with pytest.raises(ecjit.Error) as e:
        cauchy16.encode(rand_shards(6, 101, seed=1))  # not a multiple of the 2-byte symbol
    assert e.value.status == "shard-size"
    with pytest.raises(ecjit.Error) as e:
        cauchy16.reconstruct([bytearray(101) for _ in range(9)], [True] * 8 + [False])
    assert e.value.status == "shard-size"
    with pytest.raises(ecjit.Error) as e:
        rs42.encode([bytes(64)] * 3 + [bytes(63)])  # unequal lengths
    assert e.value.status == "shard-size"
    with pytest.raises(ecjit.Error) as e:
        rs42.encode([bytes(64)] * 4, [bytearray(64), bytearray(32)])
    assert e.value.status == "shard-size"
    with pytest.raises(ecjit.Error) as e:
        rs42.encode([bytes(64)] * 4, [bytearray(32), bytearray(32)])
    assert e.value.status == "shard-size"


def test_too_many_erasures(rs42):
    shards = [bytearray(64) for _ in range(6)]
    with pytest.raises(ecjit.Error) as e:
        rs42.reconstruct(shards, [False, False, False, True, True, True])
    assert e.value.status == "too-many-erasures"


def test_read_only_parity_is_an_error_not_a_crash(rs42):
    data = rand_shards(4, 64, seed=1)
    for parity in ([bytes(64), bytes(64)], [bytearray(64), memoryview(bytes(64))]):
        with pytest.raises(ecjit.Error) as e:
            rs42.encode(data, parity)
        assert e.value.status == "invalid-argument" and "read-only" in str(e.value)
    shards = [bytes(s) for s in data] + [bytes(64), bytes(64)]
    with pytest.raises(ecjit.Error) as e:
        rs42.reconstruct(shards, [False, True, True, True, True, True])  # a missing shard is bytes
    assert e.value.status == "invalid-argument"
    assert shards[0] == data[0]


def test_aliasing_parity_is_an_error(rs42):
    data = rand_shards(4, 64, seed=1)
    p = bytearray(64)
    with pytest.raises(ecjit.Error) as e:
        rs42.encode(data, [p, p])
    assert e.value.status == "invalid-argument"
    d = [bytearray(x) for x in data]
    with pytest.raises(ecjit.Error) as e:
        rs42.encode(d, [d[0], bytearray(64)])
    assert e.value.status == "invalid-argument"


def test_python_type_errors(rs42):
    with pytest.raises(TypeError):
        rs42.encode(b"abcd")  # one buffer, not a sequence of them
    with pytest.raises(TypeError):
        rs42.encode([1, 2, 3, 4])
    with pytest.raises(TypeError):
        rs42.encode(None)
    with pytest.raises(TypeError):
        rs42.encode(["abcd"] * 4)  # str has no buffer protocol
    with pytest.raises(TypeError):
        rs42.verify(42)
    with pytest.raises(TypeError):
        rs42.reconstruct([bytearray(4)] * 6, 7)


def test_misuse_of_the_class_raises_not_crashes(rs42):
    bare = ecjit.Codec.__new__(ecjit.Codec)  # __init__ never ran
    for call in (lambda: bare.k, lambda: bare.encode([b""] * 4), lambda: repr(bare)):
        with pytest.raises(TypeError):
            call()
    with pytest.raises(TypeError):
        ecjit.Codec.encode(42, [b""] * 4)  # self is not a Codec

    class Forgot(ecjit.Codec):
        def __init__(self):
            pass

    with pytest.raises(TypeError):
        Forgot()

    class Sub(ecjit.Codec):
        def __init__(self, spec):
            super().__init__(spec)
            self.note = "mine"

    assert Sub("rs-vand:k=3,m=1").k == 3


def test_errors_write_nothing(rs42):
    data = rand_shards(4, 64, seed=1)
    parity = [bytearray(b"\x55" * 64), bytearray(b"\x55" * 64)]
    with pytest.raises(ecjit.Error):
        rs42.encode(data[:3] + [bytes(63)], parity)
    assert parity == [bytearray(b"\x55" * 64)] * 2


# ---- threads ----

def test_gil_released_concurrent_encode():
    codec = ecjit.Codec("rs-vand:k=8,m=4")
    mib = 1 << 20
    data = [os.urandom(4 * mib) for _ in range(8)]
    reference = codec.encode(data)
    results = {}
    errors = []
    ticks = [0]
    done = threading.Event()

    def worker(name):
        try:
            out = []
            for _ in range(3):
                out.append(codec.encode(data))
            results[name] = out
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    def ticker():  # runs Python code while the encoders hold no GIL
        while not done.is_set():
            ticks[0] += 1
            done.wait(0.001)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(2)]
    t = threading.Thread(target=ticker)
    t.start()
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    done.set()
    t.join()
    assert not errors
    for name in range(2):
        for out in results[name]:
            assert out == reference
    assert codec.verify(data + reference)
    assert ticks[0] > 0


def test_threads_option_gives_identical_results():
    data = [os.urandom(3 << 20) for _ in range(4)]
    one = ecjit.Codec("rs-vand:k=4,m=2").encode(data)
    two = ecjit.Codec("rs-vand:k=4,m=2", threads=2)
    assert two.threads == 2
    assert two.encode(data) == one


def test_concurrent_construction():
    specs = ["rs-vand:k=%d,m=2" % k for k in range(3, 9)]
    out = [None] * len(specs)

    def make(i):
        out[i] = ecjit.Codec(specs[i]).spec

    threads = [threading.Thread(target=make, args=(i,)) for i in range(len(specs))]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert out == [s + ",gf=8" for s in specs]


def test_clean_exit_of_a_fresh_process():
    code = (
        "import ecjit\n"
        "c = ecjit.Codec('rs-cauchy:k=6,m=3,gf=16')\n"
        "s = [bytearray(4096) for _ in range(9)]\n"
        "c.reconstruct(s, [False, True, False] + [True] * 6)\n"
        "print(c.strategy)\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip()


# ---- ArrayCodec: X-Code against its chains written here (Xu, Bruck 1999) ----

def xcode_reference(p, element, disks):
    """Recomputes X-Code's parity cells in place: rows 0..p-3 data, cell (p-2, i) the XOR of
    (r, (i + r + 2) mod p) and cell (p-1, i) of (r, (i - r - 2) mod p) over r = 0..p-3."""
    stripes = len(disks[0]) // (p * element)
    for s in range(stripes):
        def cell(r, d):
            at = (s * p + r) * element
            return slice(at, at + element)
        for i in range(p):
            for row, sign in ((p - 2, 1), (p - 1, -1)):
                acc = bytearray(element)
                for r in range(p - 2):
                    src = disks[(i + sign * (r + 2)) % p][cell(r, (i + sign * (r + 2)) % p)]
                    acc = bytearray(a ^ b for a, b in zip(acc, src))
                disks[i][cell(row, i)] = acc


def test_array_codec_xcode_against_its_chains():
    p, element = 5, 8
    codec = ecjit.ArrayCodec("xcode:p=%d,element=%d" % (p, element))
    assert (codec.disks, codec.rows, codec.element_bytes, codec.stripe_bytes) == (p, p, element, p * element)
    assert codec.spec == "xcode:p=5,element=8" and repr(codec) == "ecjit.ArrayCodec('xcode:p=5,element=8')"
    assert codec.is_parity(p - 1, 0) and not codec.is_parity(0, 0)
    rnd = random.Random(3)
    length = 3 * codec.stripe_bytes
    disks = [bytearray(rnd.randrange(256) for _ in range(length)) for _ in range(p)]
    want = [bytearray(d) for d in disks]
    xcode_reference(p, element, want)
    codec.encode(disks)
    assert disks == want
    assert codec.verify(disks) and codec.mismatch(disks) is None
    # A damaged parity byte: found, offset and disk.
    at = codec.stripe_bytes + (p - 2) * element + 5
    disks[3][at] ^= 0x40
    assert not codec.verify(disks) and codec.mismatch(disks) == (at, 3)
    disks[3][at] ^= 0x40
    # Two disks lost and rebuilt.
    for a, b in itertools.combinations(range(p), 2):
        broken = [bytearray(d) for d in disks]
        broken[a][:] = bytes(length)
        broken[b][:] = bytes(length)
        # A degraded read of disk a across a stripe boundary (the lost buffers' zeros unused).
        at = codec.stripe_bytes - 13
        assert codec.read(broken, [d not in (a, b) for d in range(p)], a, at, 40) == bytes(disks[a][at:at + 40])
        assert codec.read(disks, [d != a for d in range(p)], b, 3, 5) == bytes(disks[b][3:8])
        codec.reconstruct(broken, [d not in (a, b) for d in range(p)])
        assert broken == disks
    with pytest.raises(ecjit.Error) as e:
        codec.read(disks, [False] + [True] * (p - 1), 0, length - 4, 8)
    assert e.value.status == "invalid-argument"
    # Three are too many, and nothing is written.
    broken = [bytearray(d) for d in disks]
    with pytest.raises(ecjit.Error) as e:
        codec.reconstruct(broken, [False, False, False, True, True])
    assert e.value.status == "too-many-erasures" and broken == disks
    # update: disk 2's data cells rewritten, its parity patched everywhere.
    fresh = bytes(rnd.randrange(256) for _ in range(length))
    want = [bytearray(d) for d in disks]
    for s in range(3):
        for r in range(p - 2):
            at = (s * p + r) * element
            want[2][at:at + element] = fresh[at:at + element]
    xcode_reference(p, element, want)
    codec.update(disks, 2, fresh)
    assert disks == want


def test_array_codec_errors():
    with pytest.raises(ecjit.Error) as e:
        ecjit.ArrayCodec("xcode:p=9")
    assert e.value.status == "invalid-spec" and "prime" in str(e.value)
    codec = ecjit.ArrayCodec("rdp:p=5,element=8")
    length = codec.stripe_bytes
    disks = [bytearray(length) for _ in range(codec.disks)]
    with pytest.raises(ecjit.Error) as e:
        codec.encode(disks[:-1])
    assert e.value.status == "shard-count"
    with pytest.raises(ecjit.Error) as e:
        codec.encode([bytearray(length - 8) for _ in range(codec.disks)])
    assert e.value.status == "shard-size"
    with pytest.raises(ecjit.Error) as e:
        codec.encode([bytes(length)] * codec.disks)
    assert e.value.status == "invalid-argument"
    with pytest.raises(ecjit.Error) as e:
        codec.update(disks, codec.disks - 1, bytes(length))  # RDP's diagonal disk: no data cells
    assert e.value.status == "invalid-argument"
    with pytest.raises(ecjit.Error) as e:
        codec.update(disks, codec.disks, bytes(length))
    assert e.value.status == "invalid-argument"
    with pytest.raises(ecjit.Error) as e:
        codec.update(disks, 0, bytes(length + 8))
    assert e.value.status == "shard-size"
