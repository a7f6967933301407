// Jit: the entry point; compiles and caches codecs for one target.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "ecjit/array_codec.h"
#include "ecjit/code_spec.h"
#include "ecjit/codec.h"
#include "ecjit/jit_stats.h"
#include "ecjit/status.h"

namespace ecjit {

struct JitOptions {
  // Target string: "host" (this CPU), or host with features masked to force a lower tier
  // ("host-avx2" -> SSE, "host-avx2,-sse2" -> scalar), see docs/targets.md. Only targets
  // this process can run are accepted (kUnsupportedTarget otherwise).
  std::string target = "host";
  // Lowering strategy: "auto" (picked per field and target, tuned unless tune = false),
  // "clmul-shift", "split-table", "gfni", "clmul-insn", "clmul-mixed". A forced strategy
  // runs every kernel of a matrix code over GF(2^l) - encoder, decoders, the built-in
  // kernels - or codec() fails with kUnsupportedTarget naming what the target lacks; it is
  // never replaced by another. rs-fft codecs refuse it alike; their transforms multiply with
  // GFNI where the target has it, else split tables. Bit-matrix codes have one lowering (xor).
  std::string strategy = "auto";
  // LLVM optimization level 0..3 (0 keeps the redundant shift form of Nešković 2018).
  unsigned opt_level = 3;
  // Per codec, the most specialised kernels kept (decoders per erasure set, update kernels
  // per changed set, encode_partial kernels): a least-recently-used cache, so that a storm
  // of failures with many distinct erasure sets stays bounded in memory. >= 1
  // (kInvalidArgument otherwise). See docs/operations.md for the memory per kernel.
  size_t max_cached_kernels = 256;
  // Degraded reads (reconstruct, reconstruct_data, reconstruct_some). true: the first call
  // of any erasure set inverts and prepares its coefficients (tens of microseconds) and
  // runs on a shape kernel compiled with the codec (specialised on field, target, strategy
  // and the numbers of inputs and outputs; coefficients as data), so no call compiles on
  // the caller's thread. An erasure set that has rebuilt promote_after_bytes of input
  // (k x len summed over its calls) is promoted: its constant-specialised decoder is
  // compiled (and tuned, under "auto") on the Jit's background thread and swapped in
  // atomically; at most max_cached_kernels promoted sets per codec, the least recently used
  // falling back to the shape kernel. Output is byte-identical either way. Where no shape
  // kernel exists (no byte shuffle, GFNI or carry-less multiply on the target, or more than
  // kMaxShapeInputs data shards) decoders are compiled on first use as with false.
  // false: every erasure set compiles its specialised decoder on first use, on the
  // calling thread (reproducible kernels for tests and comparisons).
  bool shape_kernels = true;
  // Kernels built ahead of time (x86-64 builds; codes on target "host" when the Jit's shape
  // strategy for the field is one built in for this CPU: GF(2^8/16) gfni, or split-table on
  // SSSE3 / AVX2; GF(2^32) gfni; GF(2^32/64) clmul-insn with PCLMULQDQ / VPCLMULQDQ). true: codec() compiles nothing - shape kernels built into libecjit serve encode,
  // degraded reads, update and encode_partial from the first call, while the codec's own
  // encoder and shape kernels are compiled on the Jit's background thread and swapped in
  // atomically as each is ready (encoder_info() / decoder_info() say what runs now;
  // wait_for_tuning() waits for them). Output is byte-identical either way. false (or the
  // environment variable ECJIT_AOT=0): codec() compiles them before it returns, as it
  // always does for other fields and targets, and with tune but not tune_in_background.
  bool aot_kernels = true;
  // Input bytes an erasure set rebuilds on its shape kernel before it is promoted (see
  // shape_kernels; prepare_reconstruct() promotes at once). 0 = on first use.
  size_t promote_after_bytes = size_t(256) << 20;
  // Persistent kernel cache: compiled objects are kept on disk and reused by later
  // processes without building IR or compiling (entries are validated, and keyed by the
  // ecjit binary, LLVM version, CPU, target, strategy, opt level and matrix). Off with
  // disk_cache = false or the environment variable ECJIT_DISK_CACHE=0.
  bool disk_cache = true;
  // With strategy "auto": time every candidate strategy for each encode/decode kernel on
  // first use and keep the fastest (the decision is kept in the disk cache too, so a later
  // process loads the winner directly). false = a fixed choice per field and target, for
  // reproducible runs.
  bool tune = true;
  // With tune: tiered compilation. codec() (and a decoder's first use) compiles the fixed
  // choice and returns; a background thread owned by the Jit compiles the other candidates,
  // times them against it and swaps the fastest in (calls in flight finish on the kernel
  // they started with; output is identical either way). encoder_info()/decoder_info() say
  // which kernel runs now; Jit::wait_for_tuning() waits for the swap. Decoders beyond a
  // backlog of 8 waiting tunings keep the fixed choice. false = codec() returns only after
  // tuning (about 3-5 compiles plus ~25 ms of timing per kernel), and decoders keep the
  // fixed choice (a failure storm must not wait for every candidate of every erasure set).
  bool tune_in_background = true;
  // With tune_in_background: the encoder (and every kernel codec() compiles before any
  // call) is tuned only once calls have passed it this many bytes of input, so a kernel is
  // tuned because it is used, and the tuner's compiles and timing runs (~0.3 s of a core)
  // do not compete with a program's first calls; a codec used only for degraded reads never
  // tunes its encoder. wait_for_tuning() starts deferred tunings at once. 0 = tune as soon
  // as compiled. Decoders promoted for a hot erasure set are tuned at once (they are hot).
  uint64_t tune_after_bytes = uint64_t(256) << 20;
  // encode() of shards at least this many bytes long writes the parity with non-temporal
  // (streaming) stores when every parity pointer is 64-byte aligned and len is a multiple
  // of 64 (x86 only; a second encoder, compiled on first such call). DRAM-sized shards then
  // skip the read-for-ownership of every parity line. 0 = never. Output is identical.
  size_t streaming_min_len = size_t(4) << 20;
  // Its directory; empty = $ECJIT_CACHE_DIR, else $XDG_CACHE_HOME/ecjit, else ~/.cache/ecjit.
  std::string cache_dir;
  // Threads per call for large buffers: encode, reconstruct, reconstruct_data,
  // reconstruct_some, update, encode_partial and verify split the shard range [0, len) into
  // pieces (boundaries multiples of 4096 bytes, the last piece takes the remainder) that run
  // at once on a pool of threads - 1 workers owned by this Jit plus the calling thread.
  // 1 (the default) = the calling thread only, no pool; 0 = one per hardware thread;
  // N = at most N threads, the caller included. 0..1024 (kInvalidArgument otherwise).
  // The workers are started on the first call that splits and joined when the Jit is
  // destroyed. Codecs stay thread-safe: many threads may call one codec at once and share
  // the pool (each caller always works on its own call, so calls never wait for each
  // other's pieces). Output is byte-identical to the single-threaded result, and so is
  // verify()'s mismatch offset; split calls do not allocate either.
  unsigned threads = 1;
  // Least input per thread: a call reading s shards of len bytes uses at most
  // s x len / parallel_min_bytes threads (so calls below 2 x parallel_min_bytes never
  // split), and each piece is at least 4096 bytes of every shard. 0 = no minimum beyond that.
  size_t parallel_min_bytes = size_t(1) << 20;
};

// Shape kernels serve codes of at most this many data shards (JitOptions::shape_kernels).
constexpr unsigned kMaxShapeInputs = 64;

// Upper bound of JitOptions::threads.
constexpr unsigned kMaxThreads = 1024;

// Owns an LLVM JIT session and a kernel cache. Thread-safe: codecs may be requested and
// used from many threads; concurrent first requests for one kernel compile it once.
// Codecs keep their Jit alive; the JIT memory is released when the Jit and every codec
// obtained from it are gone. A Jit still alive when the process exits (in a static, or
// compiling a codec's own kernels behind the built-in ones) is safe: an exit handler stops
// every Jit's background thread, waiting for a compile in flight, before LLVM's statics are
// destroyed (the first Jit of a process compiles one tiny kernel in create() so that the
// handler is registered after them). Releasing it before exit is still cheaper.
class Jit {
 public:
  // Errors: kUnsupportedTarget (unknown target string or one this CPU cannot run),
  // kInvalidArgument (unknown strategy, opt_level > 3, max_cached_kernels == 0,
  // threads > kMaxThreads), kJitFailure (LLVM set-up failed).
  static Result<std::shared_ptr<Jit>> create(const JitOptions &options = JitOptions());
  virtual ~Jit() = default;

  // A codec for the spec, compiled for this Jit's target. The encoder and the shape kernels
  // of first calls are compiled here, or, where kernels built ahead of time serve meanwhile
  // (JitOptions::aot_kernels), on the background thread; decoders of hot erasure sets in
  // the background too. Errors: kInvalidSpec, kJitFailure.
  virtual Result<std::shared_ptr<const Codec>> codec(const CodeSpec &spec) = 0;
  Result<std::shared_ptr<const Codec>> codec(const std::string &spec_text);
  // An array code at element level, "xcode:p=7[,element=64]" (ecjit/array_codec.h): parity
  // cells on the data disks. The encoder's kernel is loaded here when it is in memory or on
  // disk; else its schedule runner serves while it compiles in the background. Errors:
  // kInvalidSpec, kJitFailure.
  virtual Result<std::shared_ptr<const ArrayCodec>> array_codec(const std::string &spec_text) = 0;

  virtual const JitOptions &options() const = 0;
  virtual JitStats stats() const = 0;
  // Blocks until the background thread has nothing left: codecs' own kernels compiled and
  // swapped in (JitOptions::aot_kernels), every tuning finished and its winner swapped in
  // (JitOptions::tune_in_background), the deferred ones (JitOptions::tune_after_bytes)
  // started first; returns at once when none is pending. For benchmarks and tools that
  // want the compiled and tuned kernels before they measure.
  virtual void wait_for_tuning() = 0;
};

}  // namespace ecjit
