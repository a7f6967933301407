package ecjit

/*
#include "ecjit/ecjit_c.h"
*/
import "C"

import (
	"fmt"
	"io"
	"unsafe"
)

// Encoder is klauspost/reedsolomon's Encoder interface, method for method.
type Encoder interface {
	Encode(shards [][]byte) error
	EncodeIdx(dataShard []byte, idx int, parity [][]byte) error
	Verify(shards [][]byte) (bool, error)
	Reconstruct(shards [][]byte) error
	ReconstructData(shards [][]byte) error
	ReconstructSome(shards [][]byte, required []bool) error
	Update(shards [][]byte, newDatashards [][]byte) error
	Split(data []byte) ([][]byte, error)
	Join(dst io.Writer, shards [][]byte, outSize int) error
}

// Option configures New.
type Option func(*options)

type options struct{ spec string }

// WithSpec codes with any ecjit spec of k = dataShards, m = parityShards instead of rs-vand
// over GF(2^8) (klauspost's New): "rs-cauchy:k=10,m=4,gf=16", "rs-fft:k=32,m=32,gf=8", ...
func WithSpec(spec string) Option { return func(o *options) { o.spec = spec } }

type encoder struct{ c *Codec }

// New returns an Encoder of dataShards + parityShards shards: klauspost's New(k, m) code
// (rs-vand over GF(2^8), up to 256 shards), byte for byte, unless WithSpec names another.
func New(dataShards, parityShards int, opts ...Option) (Encoder, error) {
	o := options{}
	for _, f := range opts {
		f(&o)
	}
	if dataShards <= 0 || parityShards <= 0 {
		return nil, newError(C.ECJIT_SHARD_COUNT, "%d data and %d parity shards: both must be at least 1", dataShards, parityShards)
	}
	spec := o.spec
	if spec == "" {
		if dataShards+parityShards > 256 {
			return nil, newError(C.ECJIT_SHARD_COUNT, "%d shards: GF(2^8) takes at most 256 (WithSpec a wider code)", dataShards+parityShards)
		}
		spec = fmt.Sprintf("rs-vand:k=%d,m=%d,gf=8", dataShards, parityShards)
	}
	c, err := NewCodec(spec)
	if err != nil {
		return nil, err
	}
	if c.k != dataShards || c.m != parityShards {
		return nil, newError(C.ECJIT_SHARD_COUNT, "%s has k = %d, m = %d; New asked for %d and %d", c.spec, c.k, c.m, dataShards, parityShards)
	}
	return &encoder{c}, nil
}

// The common length of the shards a call reads (missing ones, length 0, left out).
func (e *encoder) length(shards [][]byte, allPresent bool) (int, error) {
	n := e.c.k + e.c.m
	if len(shards) != n {
		return 0, newError(C.ECJIT_SHARD_COUNT, "%d shards given; %s has %d", len(shards), e.c.spec, n)
	}
	size := 0
	for i, s := range shards {
		if len(s) == 0 {
			if allPresent {
				return 0, newError(C.ECJIT_SHARD_SIZE, "shard %d is empty", i)
			}
			continue
		}
		if size == 0 {
			size = len(s)
		} else if len(s) != size {
			return 0, newError(C.ECJIT_SHARD_SIZE, "shard %d has %d bytes, another %d: every shard needs the same length", i, len(s), size)
		}
	}
	if size == 0 {
		return 0, newError(C.ECJIT_TOO_MANY_ERASURES, "no shard has data")
	}
	return size, nil
}

func (e *encoder) Encode(shards [][]byte) error {
	size, err := e.length(shards, true)
	if err != nil {
		return err
	}
	t := e.c.get(shards)
	defer e.c.put(t)
	return lastError(C.ecjit_encode(e.c.raw, &t.ptrs[0], &t.ptrs[e.c.k], C.size_t(size)))
}

func (e *encoder) EncodeIdx(dataShard []byte, idx int, parity [][]byte) error {
	if idx < 0 || idx >= e.c.k {
		return newError(C.ECJIT_INVALID_ARGUMENT, "data shard %d of %d", idx, e.c.k)
	}
	if len(parity) != e.c.m {
		return newError(C.ECJIT_SHARD_COUNT, "%d parity shards given; %s has %d", len(parity), e.c.spec, e.c.m)
	}
	for i, p := range parity {
		if len(p) != len(dataShard) {
			return newError(C.ECJIT_SHARD_SIZE, "parity shard %d has %d bytes, the data shard %d", i, len(p), len(dataShard))
		}
	}
	if len(dataShard) == 0 {
		return nil
	}
	t := e.c.get(parity)
	defer e.c.put(t)
	t.extra.Pin(&dataShard[0])
	return lastError(C.ecjit_encode_partial(e.c.raw, C.uint(idx), (*C.uint8_t)(unsafe.Pointer(&dataShard[0])), &t.ptrs[0],
		C.size_t(len(dataShard))))
}

func (e *encoder) Verify(shards [][]byte) (bool, error) {
	size, err := e.length(shards, true)
	if err != nil {
		return false, err
	}
	t := e.c.get(shards)
	defer e.c.put(t)
	if err := lastError(C.ecjit_verify(e.c.raw, &t.ptrs[0], C.size_t(size), &t.matches, nil)); err != nil {
		return false, err
	}
	return t.matches != 0, nil
}

// rebuild gives each missing shard that `want` selects a buffer of the shards' length (its
// own capacity where it has enough, as klauspost does), runs `call` with the present flags,
// and on a failure leaves the missing shards as they were (length 0).
func (e *encoder) rebuild(shards [][]byte, want func(i int) bool, call func(t *table, size C.size_t) C.int) error {
	size, err := e.length(shards, false)
	if err != nil {
		return err
	}
	t := e.c.tables.Get().(*table)
	missing := 0
	for i, s := range shards {
		t.present[i] = 0
		if len(s) != 0 {
			t.present[i] = 1
		} else {
			missing++
		}
	}
	if missing == 0 {
		e.c.tables.Put(t)
		return nil
	}
	for i := range shards {
		if t.present[i] == 0 && want(i) {
			if cap(shards[i]) >= size {
				shards[i] = shards[i][:size]
			} else {
				shards[i] = make([]byte, size)
			}
		}
	}
	e.c.fill(t, shards)
	defer e.c.put(t)
	code := call(t, C.size_t(size))
	if code != C.ECJIT_OK {
		for i := range shards {
			if t.present[i] == 0 {
				shards[i] = shards[i][:0]
			}
		}
	}
	return lastError(code)
}

func (e *encoder) Reconstruct(shards [][]byte) error {
	return e.rebuild(shards, func(int) bool { return true }, func(t *table, size C.size_t) C.int {
		return C.ecjit_reconstruct(e.c.raw, &t.ptrs[0], &t.present[0], size)
	})
}

func (e *encoder) ReconstructData(shards [][]byte) error {
	return e.rebuild(shards, func(i int) bool { return i < e.c.k }, func(t *table, size C.size_t) C.int {
		return C.ecjit_reconstruct_data(e.c.raw, &t.ptrs[0], &t.present[0], size)
	})
}

func (e *encoder) ReconstructSome(shards [][]byte, required []bool) error {
	if len(required) > len(shards) {
		return newError(C.ECJIT_SHARD_COUNT, "%d required flags for %d shards", len(required), len(shards))
	}
	want := func(i int) bool { return i < len(required) && required[i] }
	return e.rebuild(shards, want, func(t *table, size C.size_t) C.int {
		w := t.idx[:0]
		for i := range shards {
			if t.present[i] == 0 && want(i) {
				w = append(w, C.uint(i))
			}
		}
		if len(w) == 0 {
			return C.ECJIT_OK
		}
		return C.ecjit_reconstruct_some(e.c.raw, &w[0], C.size_t(len(w)), &t.ptrs[0], &t.present[0], size)
	})
}

func (e *encoder) Update(shards [][]byte, newDatashards [][]byte) error {
	k, m := e.c.k, e.c.m
	if len(shards) != k+m || len(newDatashards) != k {
		return newError(C.ECJIT_SHARD_COUNT, "%d shards and %d new data shards; %s has %d and %d", len(shards),
			len(newDatashards), e.c.spec, k+m, k)
	}
	size := len(shards[k])
	for i := k; i < k+m; i++ {
		if len(shards[i]) == 0 || len(shards[i]) != size {
			return newError(C.ECJIT_SHARD_SIZE, "parity shard %d: %d bytes, parity needs %d each", i, len(shards[i]), size)
		}
	}
	old := e.c.get(shards)
	defer e.c.put(old)
	fresh := e.c.get(newDatashards)
	defer e.c.put(fresh)
	changed := old.idx[:0]
	count := 0
	for i := 0; i < k; i++ {
		if newDatashards[i] == nil {
			continue
		}
		if len(newDatashards[i]) != size || len(shards[i]) != size {
			return newError(C.ECJIT_SHARD_SIZE, "data shard %d: old %d, new %d bytes, parity %d", i, len(shards[i]),
				len(newDatashards[i]), size)
		}
		changed = append(changed, C.uint(i))
		// The changed shards' pointers packed into the tables' first slots, in index order.
		old.ptrs[count], fresh.ptrs[count] = old.ptrs[i], fresh.ptrs[i]
		count++
	}
	if count == 0 {
		return nil
	}
	return lastError(C.ecjit_update(e.c.raw, &changed[0], C.size_t(count), &old.ptrs[0], &fresh.ptrs[0], &old.ptrs[k],
		C.size_t(size)))
}

// Split cuts data into k data shards of ceil(len/k) bytes (the last padded with zeros) and
// adds m empty parity shards, using data's own memory where it has room, as klauspost does.
func (e *encoder) Split(data []byte) ([][]byte, error) {
	if len(data) == 0 {
		return nil, ErrShortData
	}
	k, n := e.c.k, e.c.k+e.c.m
	per := (len(data) + k - 1) / k
	if r := per % e.c.unit; r != 0 {
		per += e.c.unit - r
	}
	shards := make([][]byte, n)
	full := 0
	if cap(data) >= n*per {
		full = n
		tail := data[len(data) : n*per]
		clear(tail)
	} else {
		full = len(data) / per
	}
	buf := data[:cap(data)]
	for i := 0; i < full; i++ {
		shards[i] = buf[i*per : (i+1)*per : (i+1)*per]
	}
	if full < n {
		rest := make([]byte, (n-full)*per)
		copy(rest, data[full*per:])
		for i := full; i < n; i++ {
			shards[i] = rest[(i-full)*per : (i-full+1)*per : (i-full+1)*per]
		}
	}
	return shards, nil
}

// Join writes the first outSize bytes of the data shards to dst.
func (e *encoder) Join(dst io.Writer, shards [][]byte, outSize int) error {
	if len(shards) < e.c.k {
		return newError(C.ECJIT_SHARD_COUNT, "%d shards; Join needs the %d data shards", len(shards), e.c.k)
	}
	have := 0
	for i := 0; i < e.c.k; i++ {
		if len(shards[i]) == 0 {
			return newError(C.ECJIT_TOO_MANY_ERASURES, "data shard %d is missing (Reconstruct first)", i)
		}
		have += len(shards[i])
	}
	if have < outSize {
		return ErrShortData
	}
	for i := 0; i < e.c.k && outSize > 0; i++ {
		s := shards[i]
		if len(s) > outSize {
			s = s[:outSize]
		}
		if _, err := dst.Write(s); err != nil {
			return err
		}
		outSize -= len(s)
	}
	return nil
}
