package ecjit

// Against klauspost/reedsolomon v1.14.2's New(k, m): the same parity, each rebuilding the
// other's shards after random losses, Update / EncodeIdx / Split / Join as klauspost's, bad
// arguments with ecjit's errors, no allocation per call.
import (
	"bytes"
	"errors"
	"math/rand"
	"testing"

	"github.com/klauspost/reedsolomon"
)

var shapes = [][2]int{{4, 2}, {10, 4}, {17, 3}, {32, 32}, {200, 50}}

func shards(rng *rand.Rand, k, m, size int) [][]byte {
	s := make([][]byte, k+m)
	for i := range s {
		s[i] = make([]byte, size)
		if i < k {
			rng.Read(s[i])
		}
	}
	return s
}

func clone(s [][]byte) [][]byte {
	c := make([][]byte, len(s))
	for i := range s {
		c[i] = append([]byte(nil), s[i]...)
	}
	return c
}

func TestSameParityAsKlauspost(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for _, sh := range shapes {
		k, m := sh[0], sh[1]
		ours, err := New(k, m)
		if err != nil {
			t.Fatal(err)
		}
		theirs, err := reedsolomon.New(k, m)
		if err != nil {
			t.Fatal(err)
		}
		for _, size := range []int{64, 1000, 65536} {
			a := shards(rng, k, m, size)
			b := clone(a)
			if err := ours.Encode(a); err != nil {
				t.Fatal(err)
			}
			if err := theirs.Encode(b); err != nil {
				t.Fatal(err)
			}
			for i := k; i < k+m; i++ {
				if !bytes.Equal(a[i], b[i]) {
					t.Fatalf("(%d,%d) %d B: parity shard %d differs from klauspost's", k, m, size, i)
				}
			}
			if ok, err := ours.Verify(b); err != nil || !ok {
				t.Fatalf("(%d,%d): klauspost's shards do not verify: %v", k, m, err)
			}
		}
	}
}

func TestEachRebuildsTheOthersShards(t *testing.T) {
	rng := rand.New(rand.NewSource(2))
	for _, sh := range shapes {
		k, m := sh[0], sh[1]
		ours, _ := New(k, m)
		theirs, _ := reedsolomon.New(k, m)
		full := shards(rng, k, m, 4096)
		if err := ours.Encode(full); err != nil {
			t.Fatal(err)
		}
		for round := 0; round < 6; round++ {
			lost := rng.Perm(k + m)[:1+rng.Intn(m)]
			a, b := clone(full), clone(full)
			for _, i := range lost {
				a[i], b[i] = nil, b[i][:0]
			}
			if err := theirs.Reconstruct(a); err != nil { // klauspost rebuilds ecjit's shards
				t.Fatal(err)
			}
			if err := ours.Reconstruct(b); err != nil {
				t.Fatal(err)
			}
			for i := range full {
				if !bytes.Equal(a[i], full[i]) || !bytes.Equal(b[i], full[i]) {
					t.Fatalf("(%d,%d) lost %v: shard %d rebuilt wrong", k, m, lost, i)
				}
			}
		}
		// ecjit rebuilds klauspost's data shards (ReconstructData leaves missing parity alone).
		kp := shards(rng, k, m, 4096)
		theirs.Encode(kp)
		work := clone(kp)
		work[0], work[k] = nil, nil
		if err := ours.ReconstructData(work); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(work[0], kp[0]) || work[k] != nil {
			t.Fatalf("(%d,%d): ReconstructData", k, m)
		}
		if err := ours.ReconstructSome(work, []bool{false, false, false, false}[:0]); err != nil {
			t.Fatal(err)
		}
	}
}

func TestUpdateEncodeIdxSplitJoinAsKlauspost(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	ours, _ := New(6, 3)
	theirs, _ := reedsolomon.New(6, 3)
	a := shards(rng, 6, 3, 8192)
	ours.Encode(a)
	b := clone(a)
	fresh := make([][]byte, 6)
	fresh[2] = make([]byte, 8192)
	fresh[5] = make([]byte, 8192)
	rng.Read(fresh[2])
	rng.Read(fresh[5])
	if err := ours.Update(a, fresh); err != nil {
		t.Fatal(err)
	}
	if err := theirs.Update(b, fresh); err != nil {
		t.Fatal(err)
	}
	for i := 6; i < 9; i++ {
		if !bytes.Equal(a[i], b[i]) {
			t.Fatalf("Update: parity %d differs from klauspost's", i)
		}
	}
	// EncodeIdx: parity accumulated shard by shard equals Encode's.
	acc := [][]byte{make([]byte, 8192), make([]byte, 8192), make([]byte, 8192)}
	for i := 0; i < 6; i++ {
		if err := ours.EncodeIdx(b[i], i, acc); err != nil {
			t.Fatal(err)
		}
	}
	ours.Encode(b)
	for i := range acc {
		if !bytes.Equal(acc[i], b[6+i]) {
			t.Fatalf("EncodeIdx: parity %d", i)
		}
	}
	data := make([]byte, 100003)
	rng.Read(data)
	s1, err := ours.Split(append([]byte(nil), data...))
	if err != nil {
		t.Fatal(err)
	}
	s2, _ := theirs.Split(append([]byte(nil), data...))
	for i := range s2 {
		if !bytes.Equal(s1[i], s2[i]) {
			t.Fatalf("Split: shard %d differs from klauspost's", i)
		}
	}
	var out bytes.Buffer
	if err := ours.Join(&out, s1, len(data)); err != nil || !bytes.Equal(out.Bytes(), data) {
		t.Fatalf("Join: %v", err)
	}
	if _, err := ours.Split(nil); !errors.Is(err, ErrShortData) {
		t.Fatalf("Split(nil): %v", err)
	}
	if err := ours.Join(&out, s1, 10*len(data)); !errors.Is(err, ErrShortData) {
		t.Fatalf("Join past the data: %v", err)
	}
}

func TestBadArgumentsGiveEcjitsErrors(t *testing.T) {
	enc, _ := New(4, 2)
	s := shards(rand.New(rand.NewSource(4)), 4, 2, 64)
	if err := enc.Encode(s[:5]); !errors.Is(err, ErrInvShardNum) {
		t.Fatalf("5 shards: %v", err)
	}
	s[2] = s[2][:63]
	if err := enc.Encode(s); !errors.Is(err, ErrShardSize) {
		t.Fatalf("a short shard: %v", err)
	}
	s = shards(rand.New(rand.NewSource(4)), 4, 2, 64)
	enc.Encode(s)
	s[0], s[1], s[2] = nil, nil, nil
	err := enc.Reconstruct(s)
	var e *Error
	if !errors.As(err, &e) || !errors.Is(err, ErrTooFewShards) || e.Name != "too-many-erasures" {
		t.Fatalf("three lost of RS(4,2): %v", err)
	}
	if s[0] != nil && len(s[0]) != 0 {
		t.Fatalf("a failed Reconstruct kept the buffer it gave a missing shard")
	}
	// Two parity shards in one buffer: the C API refuses the aliasing.
	s = shards(rand.New(rand.NewSource(4)), 4, 2, 64)
	s[5] = s[4]
	if err := enc.Encode(s); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("two parity shards in one buffer: %v", err)
	}
	// A locally repairable code is not MDS: data shards 0 and 1 and their group's local parity
	// (shard 4) lost leave only the global parity for two unknowns.
	lrc, err := NewCodec("lrc:k=4,l=2,r=1")
	if err != nil {
		t.Fatal(err)
	}
	lenc, err := New(4, 3, WithSpec(lrc.Spec()))
	if err != nil {
		t.Fatal(err)
	}
	s = shards(rand.New(rand.NewSource(5)), 4, 3, 64)
	if err := lenc.Encode(s); err != nil {
		t.Fatal(err)
	}
	want := clone(s)
	s[0], s[1], s[4] = nil, nil, nil
	if err := lenc.Reconstruct(s); !errors.Is(err, ErrSingular) {
		t.Fatalf("lrc losing a whole group: %v", err)
	}
	s = clone(want)
	s[0], s[1], s[5] = nil, nil, nil
	if err := lenc.Reconstruct(s); err != nil {
		t.Fatalf("lrc losing two of a group and the other's local parity: %v", err)
	}
	for i := range s {
		if !bytes.Equal(s[i], want[i]) {
			t.Fatalf("lrc shard %d rebuilt wrong", i)
		}
	}
	if _, err := New(0, 2); !errors.Is(err, ErrInvShardNum) {
		t.Fatalf("New(0, 2): %v", err)
	}
	if _, err := New(200, 57); !errors.Is(err, ErrInvShardNum) {
		t.Fatalf("New(200, 57): %v", err)
	}
	if _, err := NewCodec("rs-vand:k=0,m=1"); !errors.Is(err, ErrInvalidSpec) {
		t.Fatalf("a bad spec: %v", err)
	}
	if _, err := New(4, 2, WithSpec("rs-cauchy:k=4,m=3")); !errors.Is(err, ErrInvShardNum) {
		t.Fatalf("a spec of another shape: %v", err)
	}
	if _, err := New(4, 2, WithSpec("rs-cauchy:k=4,m=2,gf=16")); err != nil {
		t.Fatal(err)
	}
}

func TestCallsAllocateNothing(t *testing.T) {
	enc, _ := New(10, 4)
	s := shards(rand.New(rand.NewSource(5)), 10, 4, 65536)
	enc.Encode(s)
	allocs := testing.AllocsPerRun(50, func() {
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
		s[3] = s[3][:0] // lost; its capacity is the buffer Reconstruct fills
		if err := enc.Reconstruct(s); err != nil {
			t.Fatal(err)
		}
		if ok, _ := enc.Verify(s); !ok {
			t.Fatal("verify")
		}
	})
	if allocs != 0 {
		t.Fatalf("Encode + Reconstruct + Verify: %.1f allocations per call", allocs)
	}
}

func benchEncode(b *testing.B, enc interface{ Encode([][]byte) error }, size int) {
	s := shards(rand.New(rand.NewSource(6)), 10, 4, size)
	b.SetBytes(int64(10 * size))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		enc.Encode(s)
	}
}

func BenchmarkEncodeEcjit64K(b *testing.B) { e, _ := New(10, 4); benchEncode(b, e, 65536) }
func BenchmarkEncodeKlauspost64K(b *testing.B) {
	e, _ := reedsolomon.New(10, 4, reedsolomon.WithMaxGoroutines(1))
	benchEncode(b, e, 65536)
}
func BenchmarkEncodeEcjit1M(b *testing.B) { e, _ := New(10, 4); benchEncode(b, e, 1<<20) }
func BenchmarkEncodeKlauspost1M(b *testing.B) {
	e, _ := reedsolomon.New(10, 4, reedsolomon.WithMaxGoroutines(1))
	benchEncode(b, e, 1<<20)
}
