// Package ecjit is erasure coding with kernels generated as LLVM IR and JIT-compiled for this
// CPU, through ecjit's C API (cgo), with klauspost/reedsolomon's Encoder interface: code written
// against reedsolomon.New(k, m) compiles against ecjit.New(k, m) and stores the same shards
// (rs-vand over GF(2^8), the Vandermonde-derived code klauspost's New builds).
//
// Build: cgo finds ecjit/ecjit_c.h and libecjit.so where the C compiler and linker look, or
// through CGO_CFLAGS="-I<ecjit>/runtime/include" CGO_LDFLAGS="-L<build>/lib -Wl,-rpath,<build>/lib".
package ecjit

/*
#cgo LDFLAGS: -lecjit
#include <stdlib.h>
#include "ecjit/ecjit_c.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"unsafe"
)

// Error is a failed ecjit call: its status code and name ("shard-size") and ecjit's message.
type Error struct {
	Code    int
	Name    string
	Message string
}

func (e *Error) Error() string { return "ecjit: " + e.Name + ": " + e.Message }

// Is matches the sentinel errors below by status code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Message == "" && t.Code == e.Code
}

func status(code int) *Error {
	return &Error{Code: code, Name: C.GoString(C.ecjit_status_name(C.int(code)))}
}

// Sentinels for errors.Is, by ecjit status (klauspost's names where they mean the same).
var (
	ErrInvalidSpec     = status(C.ECJIT_INVALID_SPEC)
	ErrInvalidArgument = status(C.ECJIT_INVALID_ARGUMENT)
	ErrInvShardNum     = status(C.ECJIT_SHARD_COUNT)       // wrong number of shards
	ErrShardSize       = status(C.ECJIT_SHARD_SIZE)        // shards of different (or bad) lengths
	ErrTooFewShards    = status(C.ECJIT_TOO_MANY_ERASURES) // too many shards missing
	ErrSingular        = status(C.ECJIT_SINGULAR)
)

// ErrShortData: Split got no data, or Join has fewer bytes than asked for.
var ErrShortData = errors.New("ecjit: not enough data")

func newError(code C.int, format string, a ...any) error {
	e := status(int(code))
	e.Message = fmt.Sprintf(format, a...)
	return e
}

func lastError(code C.int) error {
	if code == C.ECJIT_OK {
		return nil
	}
	e := status(int(code))
	e.Message = C.GoString(C.ecjit_last_error())
	return e
}

var (
	jitOnce sync.Once
	jit     *C.ecjit_jit
	jitErr  error
)

// The process's JIT: one session and kernel cache for every codec.
func theJit() (*C.ecjit_jit, error) {
	jitOnce.Do(func() {
		var j *C.ecjit_jit
		if code := C.ecjit_jit_create(nil, &j); code != C.ECJIT_OK {
			jitErr = lastError(code)
			return
		}
		jit = j
	})
	return jit, jitErr
}

// Codec is one code by its ecjit spec (docs/specs.md), e.g. "rs-cauchy:k=12,m=4,gf=16";
// immutable and safe for concurrent use.
type Codec struct {
	raw        *C.ecjit_codec
	k, m, unit int
	spec       string
	tables     sync.Pool // *table: pointer tables of the calls, reused (no allocation per call)
}

// table holds a call's shard pointers (Go memory, each pinned for the call, so C may read the
// table) and present flags. One Pinner per slot: a Pinner of one pointer keeps it in its own
// store and pins again without allocating (one Pinner of n pointers grows a slice per call).
type table struct {
	ptrs    []*C.uint8_t
	present []C.uchar
	idx     []C.uint
	matches C.int // Verify's answer (a local would escape to the heap through cgo)
	pins    []runtime.Pinner
	extra   runtime.Pinner // EncodeIdx's data shard
}

// NewCodec returns the codec of `spec`.
func NewCodec(spec string) (*Codec, error) {
	j, err := theJit()
	if err != nil {
		return nil, err
	}
	cs := C.CString(spec)
	defer C.free(unsafe.Pointer(cs))
	var raw *C.ecjit_codec
	if code := C.ecjit_codec_create(j, cs, &raw); code != C.ECJIT_OK {
		return nil, lastError(code)
	}
	c := &Codec{raw: raw, k: int(C.ecjit_codec_k(raw)), m: int(C.ecjit_codec_m(raw)),
		unit: int(C.ecjit_codec_symbol_bytes(raw)), spec: C.GoString(C.ecjit_codec_spec(raw))}
	n := c.k + c.m
	c.tables.New = func() any {
		return &table{ptrs: make([]*C.uint8_t, n), present: make([]C.uchar, n), idx: make([]C.uint, n),
			pins: make([]runtime.Pinner, n)}
	}
	runtime.SetFinalizer(c, func(c *Codec) { C.ecjit_codec_destroy(c.raw) })
	return c, nil
}

func (c *Codec) K() int           { return c.k }
func (c *Codec) M() int           { return c.m }
func (c *Codec) Spec() string     { return c.spec }
func (c *Codec) SymbolBytes() int { return c.unit }

// get fills a pooled table with the shards' pointers, pinned until put (a shard of length 0
// but some capacity is pointed at too: a buffer for the call to fill).
func (c *Codec) get(shards [][]byte) *table {
	t := c.tables.Get().(*table)
	c.fill(t, shards)
	return t
}

func (c *Codec) fill(t *table, shards [][]byte) {
	for i := range t.ptrs {
		t.ptrs[i] = nil
		if i < len(shards) && cap(shards[i]) > 0 {
			s := shards[i][:cap(shards[i])]
			t.pins[i].Pin(&s[0])
			t.ptrs[i] = (*C.uint8_t)(unsafe.Pointer(&s[0]))
		}
	}
}

func (c *Codec) put(t *table) {
	for i := range t.pins {
		if t.ptrs[i] != nil {
			t.pins[i].Unpin()
		}
	}
	t.extra.Unpin()
	c.tables.Put(t)
}
