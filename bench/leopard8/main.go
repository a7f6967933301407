// leopard8: klauspost/reedsolomon's Leopard GF(2^8) codec (New(k, m, WithLeopardGF(true)),
// k + m <= 256) as an oracle for ecjit's rs-fft:gf=8 reference (codes/rs_fft.h).
//
// Commands (shard data raw bytes, shards concatenated in index order):
//
//	leopard8 kat                 print the golden vectors (test/data/rs_fft8_kat.txt)
//	leopard8 kat-vand            the same for klauspost's default codec New(k, m)
//	                             (test/data/rs_vand_klauspost_kat.txt: ecjit's rs-vand)
//	leopard8 encode K M BYTES    stdin: K originals; stdout: M recovery shards
//	leopard8 decode K M BYTES    stdin: K+M presence bytes (0 or 1; originals then recovery),
//	                             then the present shards; stdout: the missing originals
//	leopard8 bench K M BYTES SECONDS [LOST]
//	                             one line "encode_gbps=E decode_gbps=D": the codec's own speed
//	                             on one goroutine, LOST originals (default min(M, K)) rebuilt
//	leopard8 bench-matrix K M BYTES SECONDS [LOST]
//	                             the same for klauspost's default codec, New(K, M) (its
//	                             Vandermonde-derived GF(2^8) matrix, ecjit's rs-vand), on one
//	                             goroutine (WithMaxGoroutines(1))
//
// LEOPARD8_ISA=avx2 keeps klauspost to its AVX2 kernels (no AVX-512, no GFNI), the peer of
// ecjit under ECJIT_HOST_MASK=-gfni,-avx512f on a machine that has both; ssse3 keeps it to
// SSSE3. Unset or "host": whatever the CPU offers.
//
// Exit status: 0 ok, 1 codec error (message on stderr), 2 usage or I/O error.
package main

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/klauspost/reedsolomon"
)

// Seed of the known-answer vectors (the same generator as bench/rs_simd).
const katSeed uint64 = 0x0ec17f175eed2016

// (k, m) of the known-answer vectors: one chunk and several, k < m and k > m, the widest
// (128:128) and a partial last chunk (180:50, 100:20).
var katCounts = [][2]int{
	{1, 1}, {2, 2}, {3, 5}, {4, 2}, {5, 6}, {6, 5}, {10, 4}, {32, 32}, {100, 20},
	{20, 100}, {120, 100}, {180, 50}, {64, 64}, {1, 128}, {128, 128},
}

// Shard lengths: the codec takes multiples of 64 bytes.
var katBytes = []int{64, 128, 192}

// Shards are printed in full when k + m <= this and BYTES <= 128.
const katFullMaxShards = 11

type splitMix64 uint64

func (s *splitMix64) next() uint64 {
	*s += 0x9E3779B97F4A7C15
	z := uint64(*s)
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}

// originals: one splitmix64 stream seeded with seed ^ (k << 40) ^ (m << 20) ^ bytes, 8 bytes
// per output little-endian; shard i is bytes [i*bytes, (i+1)*bytes) of it.
func originals(seed uint64, k, m, bytes int) [][]byte {
	rng := splitMix64(seed ^ uint64(k)<<40 ^ uint64(m)<<20 ^ uint64(bytes))
	stream := make([]byte, 0, k*bytes+8)
	var b [8]byte
	for len(stream) < k*bytes {
		binary.LittleEndian.PutUint64(b[:], rng.next())
		stream = append(stream, b[:]...)
	}
	out := make([][]byte, k)
	for i := range out {
		out[i] = stream[i*bytes : (i+1)*bytes]
	}
	return out
}

func fnv1a64(data []byte) uint64 {
	h := uint64(0xcbf29ce484222325)
	for _, c := range data {
		h ^= uint64(c)
		h *= 0x100000001b3
	}
	return h
}

// isaOptions: the instruction sets LEOPARD8_ISA leaves klauspost.
func isaOptions() []reedsolomon.Option {
	switch isa := os.Getenv("LEOPARD8_ISA"); isa {
	case "", "host":
		return nil
	case "avx2":
		return []reedsolomon.Option{reedsolomon.WithAVX512(false), reedsolomon.WithGFNI(false),
			reedsolomon.WithAVXGFNI(false)}
	case "ssse3":
		return []reedsolomon.Option{reedsolomon.WithAVX512(false), reedsolomon.WithGFNI(false),
			reedsolomon.WithAVXGFNI(false), reedsolomon.WithAVX2(false)}
	default:
		fail(2, "LEOPARD8_ISA must be host, avx2 or ssse3, not "+strconv.Quote(isa))
		return nil
	}
}

func fail(code int, msg string) {
	fmt.Fprintln(os.Stderr, "leopard8: "+msg)
	os.Exit(code)
}

func codec(k, m int) reedsolomon.Encoder {
	if k+m > 256 {
		fail(1, fmt.Sprintf("k + m = %d > 256: not Leopard GF(2^8)", k+m))
	}
	enc, err := reedsolomon.New(k, m, append(isaOptions(), reedsolomon.WithLeopardGF(true))...)
	if err != nil {
		fail(1, err.Error())
	}
	return enc
}

// klauspost's default codec, New(k, m): its Vandermonde-derived matrix (ecjit's rs-vand).
func vand(k, m int) reedsolomon.Encoder {
	enc, err := reedsolomon.New(k, m, append(isaOptions(), reedsolomon.WithMaxGoroutines(1))...)
	if err != nil {
		fail(1, err.Error())
	}
	return enc
}

func encode(enc reedsolomon.Encoder, m, bytes int, orig [][]byte) [][]byte {
	k := len(orig)
	shards := make([][]byte, k+m)
	copy(shards, orig)
	for j := 0; j < m; j++ {
		shards[k+j] = make([]byte, bytes)
	}
	if err := enc.Encode(shards); err != nil {
		fail(1, err.Error())
	}
	return shards[k:]
}

// (k, m) and shard lengths of the rs-vand vectors: the shapes MinIO, SeaweedFS and
// Backblaze-style stores use, k < m, the widest square (128:128) and k + m = 256; lengths
// of one byte, an odd tail and whole vectors (New takes any length).
var katVandCounts = [][2]int{
	{1, 1}, {2, 1}, {3, 5}, {4, 2}, {6, 3}, {10, 4}, {12, 4}, {17, 3}, {20, 4}, {32, 32},
	{128, 128}, {200, 50}, {255, 1},
}
var katVandBytes = []int{1, 7, 64, 1000}

// The header of a vector file; the case lines follow it.
func katHeader(file, codec, forWhat, command string) string {
	return "# " + file + ": recovery shards of klauspost/reedsolomon v1.14.2's " + codec + "\n" +
		"# " + forWhat + "\n" +
		"# Generated by bench/leopard8; regenerate with\n" +
		"#   bench/leopard8/build.sh && bench/leopard8/leopard8 " + command + " > test/data/" + file + "\n" +
		"# originals: splitmix64 seeded with seed ^ (k << 40) ^ (m << 20) ^ bytes, 8 bytes per\n" +
		"# output little-endian, shard i = stream bytes [i*bytes, (i+1)*bytes).\n" +
		"# case K M BYTES / orig <fnv1a64 of all originals concatenated> /\n" +
		"# rec INDEX <fnv1a64 of the shard> [<shard hex> when small] / end\n"
}

// Prints the vectors of `enc` (recovery shards of the originals) for every count and length.
func kat(header string, counts [][2]int, lengths []int, enc func(k, m int) reedsolomon.Encoder) {
	var sb strings.Builder
	sb.WriteString(header)
	sb.WriteString(fmt.Sprintf("seed 0x%016x\n", katSeed))
	for _, c := range counts {
		k, m := c[0], c[1]
		e := enc(k, m)
		for _, bytes := range lengths {
			orig := originals(katSeed, k, m, bytes)
			rec := encode(e, m, bytes, orig)
			var all []byte
			for _, o := range orig {
				all = append(all, o...)
			}
			sb.WriteString(fmt.Sprintf("case %d %d %d\norig %016x\n", k, m, bytes, fnv1a64(all)))
			full := k+m <= katFullMaxShards && bytes <= 128
			for i, r := range rec {
				if full {
					sb.WriteString(fmt.Sprintf("rec %d %016x %x\n", i, fnv1a64(r), r))
				} else {
					sb.WriteString(fmt.Sprintf("rec %d %016x\n", i, fnv1a64(r)))
				}
			}
			sb.WriteString("end\n")
		}
	}
	if _, err := os.Stdout.WriteString(sb.String()); err != nil {
		fail(2, err.Error())
	}
}

func readStdin() []byte {
	b, err := io.ReadAll(os.Stdin)
	if err != nil {
		fail(2, err.Error())
	}
	return b
}

func writeStdout(shards [][]byte) {
	w := bufio.NewWriter(os.Stdout)
	for _, s := range shards {
		if _, err := w.Write(s); err != nil {
			fail(2, err.Error())
		}
	}
	if err := w.Flush(); err != nil {
		fail(2, err.Error())
	}
}

func atoi(s string) int {
	v, err := strconv.Atoi(s)
	if err != nil || v < 0 {
		fail(2, "bad number "+strconv.Quote(s))
	}
	return v
}

func main() {
	args := os.Args[1:]
	if len(args) == 0 {
		fail(2, "usage: leopard8 kat | kat-vand | encode K M BYTES | decode K M BYTES | bench K M BYTES SECONDS [LOST]")
	}
	switch {
	case args[0] == "kat" && len(args) == 1:
		kat(katHeader("rs_fft8_kat.txt", "Leopard GF(2^8) codec",
			"(New(k, m, WithLeopardGF(true))) for ecjit's rs-fft:gf=8 reference (test/rs_fft_test.cpp).", "kat"), katCounts, katBytes, codec)
	case args[0] == "kat-vand" && len(args) == 1:
		kat(katHeader("rs_vand_klauspost_kat.txt", "default codec",
			"(New(k, m)) for ecjit's rs-vand (test/peer_kat_test.cpp).", "kat-vand"), katVandCounts, katVandBytes, vand)
	case args[0] == "encode" && len(args) == 4:
		k, m, bytes := atoi(args[1]), atoi(args[2]), atoi(args[3])
		in := readStdin()
		if len(in) != k*bytes {
			fail(2, fmt.Sprintf("expected %d bytes on stdin, got %d", k*bytes, len(in)))
		}
		orig := make([][]byte, k)
		for i := range orig {
			orig[i] = in[i*bytes : (i+1)*bytes]
		}
		writeStdout(encode(codec(k, m), m, bytes, orig))
	case args[0] == "decode" && len(args) == 4:
		k, m, bytes := atoi(args[1]), atoi(args[2]), atoi(args[3])
		in := readStdin()
		if len(in) < k+m {
			fail(2, "stdin shorter than the presence bytes")
		}
		present, data := in[:k+m], in[k+m:]
		shards := make([][]byte, k+m)
		for i, p := range present {
			if p != 0 {
				if len(data) < bytes {
					fail(2, "stdin shorter than the present shards")
				}
				shards[i], data = data[:bytes], data[bytes:]
			}
		}
		if len(data) != 0 {
			fail(2, "stdin longer than the present shards")
		}
		if err := codec(k, m).ReconstructData(shards); err != nil {
			fail(1, err.Error())
		}
		var missing [][]byte
		for i := 0; i < k; i++ {
			if present[i] == 0 {
				missing = append(missing, shards[i])
			}
		}
		writeStdout(missing)
	case (args[0] == "bench" || args[0] == "bench-matrix") && (len(args) == 5 || len(args) == 6):
		k, m, bytes := atoi(args[1]), atoi(args[2]), atoi(args[3])
		seconds, err := strconv.ParseFloat(args[4], 64)
		if err != nil || seconds <= 0 {
			fail(2, "bad SECONDS "+strconv.Quote(args[4]))
		}
		lost := min(m, k)
		if len(args) == 6 {
			lost = atoi(args[5])
		}
		if lost > m || lost > k {
			fail(2, "LOST must be at most min(K, M)")
		}
		var enc reedsolomon.Encoder
		if args[0] == "bench" {
			enc = codec(k, m)
		} else {
			enc = vand(k, m)
		}
		bench(enc, k, m, bytes, seconds, lost)
	default:
		fail(2, "usage: leopard8 kat | kat-vand | encode K M BYTES | decode K M BYTES | bench[-matrix] K M BYTES SECONDS [LOST]")
	}
}

// bench: enc's encode and decode speed on one goroutine (GB = 1e9 bytes of K x BYTES original
// data per call); decode loses originals 0 .. LOST-1 and rebuilds them.
func bench(enc reedsolomon.Encoder, k, m, bytes int, seconds float64, lost int) {
	orig := originals(0xbe7c4, k, m, bytes)
	shards := make([][]byte, k+m)
	copy(shards, orig)
	for j := 0; j < m; j++ {
		shards[k+j] = make([]byte, bytes)
	}
	timeIt := func(f func()) float64 {
		f()
		start := time.Now()
		calls := 0
		for time.Since(start).Seconds() < seconds {
			f()
			calls++
		}
		return float64(k*bytes) * float64(calls) / time.Since(start).Seconds() / 1e9
	}
	e := timeIt(func() {
		if err := enc.Encode(shards); err != nil {
			fail(1, err.Error())
		}
	})
	work := make([][]byte, k+m)
	spare := make([][]byte, lost)
	for i := range spare {
		spare[i] = make([]byte, 0, bytes)
	}
	d := timeIt(func() {
		copy(work, shards)
		for i := 0; i < lost; i++ {
			work[i] = spare[i][:0]
		}
		if err := enc.ReconstructData(work); err != nil {
			fail(1, err.Error())
		}
	})
	fmt.Printf("encode_gbps=%.3f decode_gbps=%.3f\n", e, d)
}
