// `ecjit demo`: JIT-compile a codec for this CPU, check encode and reconstruct against the reference codec, time both.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include "codes/array_layout.h"
#include "codes/bitmatrix_code.h"
#include "codes/families.h"
#include "codes/linear_code.h"
#include "codes/locality.h"
#include "codes/reference_codec.h"
#include "codes/rs_fft.h"
#include "codes/xor_families.h"
#include "ecjit/ecjit.h"
#include "tools/args.h"
#include "tools/commands.h"
#include "tools/kernel_request.h"

namespace ecjit::tools {
namespace {

// Whether a matrix code has parity rows over fewer than k shards (an lrc code's local groups).
bool has_local_checks(const CodeSpec &spec) {
  if (codes::codec_kind(spec) != codes::CodecKind::kMatrix) return false;
  Result<codes::LinearCode> code = codes::build_code(spec);
  return code.ok() && !codes::local_checks(*code).empty();
}

const char kCmd[] = "demo";

CommandDef demo_def() {
  CommandDef d;
  d.name = kCmd;
  d.synopsis = "[--spec S] [--target T] [--size BYTES] [--lose LIST] [--seconds S] [--strategy X] [--opt O] [--seed N] [--threads N]";
  d.summary = "JIT-compile a codec for this CPU, check it against the reference codec, time it";
  d.details =
      "Fills k data shards with seeded random bytes, encodes them with the JIT-compiled kernel,\n"
      "compares the parity with the scalar reference codec (codes::ref_encode), erases the --lose\n"
      "shards, reconstructs them and compares them with the originals. Then times encode and\n"
      "reconstruct, each for about --seconds. Throughput is k x shard bytes per call divided by\n"
      "the time per call, in GB/s (10^9 bytes/s), on --threads threads (default 1: the calling\n"
      "thread alone). A --size that is not a whole number of the code's blocks is rounded up (a note\n"
      "says so). Array codes with parity on the data disks (xcode, bpcode) run through\n"
      "Jit::array_codec, checked against the element-level reference encoder; --lose names disks\n"
      "(default 0,1).";
  d.exit_status = "0 every check passed, 1 a mismatch or a failed compile, 2 bad arguments";
  d.options = {
      {"spec", "S", "code (default rs-vand:k=10,m=4,gf=8)"},
      {"target", "T", "this CPU, optionally with features masked: host, host-avx2, host-sse2 (default host)"},
      {"size", "BYTES", "bytes per shard, e.g. 4096, 64K, 1M (default 1M)"},
      {"lose", "LIST", "shards to erase and rebuild, e.g. 0,3,11 or 0-31 (default: the first m shards; shard 0 for a locally repairable code)"},
      {"seconds", "S", "time spent timing each of encode and reconstruct (default 1)"},
      {"strategy", "X", "lowering: " + strategy_list() + " (default auto: the tuner times every candidate)"},
      {"opt", "O", "optimization level O0..O3 (default O3)"},
      {"seed", "N", "seed of the random data (default 1)"},
      {"threads", "N", "threads per call, at most one per MiB of input: 1 = the calling thread alone, "
                       "0 = one per hardware thread (default 1)"},
  };
  return d;
}

// A 64-byte aligned buffer of `len` bytes (at least 64, so even len 0 has a valid pointer).
struct Buffer {
  std::unique_ptr<uint8_t, void (*)(void *)> p{nullptr, std::free};
  explicit Buffer(size_t len)
      : p(static_cast<uint8_t *>(std::aligned_alloc(64, (len + 63) / 64 * 64 + 64)), std::free) {}
  uint8_t *get() const { return p.get(); }
};

// Index of the first differing byte, or len when equal.
size_t first_difference(const uint8_t *a, const uint8_t *b, size_t len) {
  if (std::memcmp(a, b, len) == 0) return len;
  size_t i = 0;
  while (a[i] == b[i]) ++i;
  return i;
}

// Calls fn() repeatedly for about `seconds` (at least 3 times); returns seconds per call.
template <typename Fn>
double time_per_call(double seconds, Fn fn, uint64_t *calls) {
  using clock = std::chrono::steady_clock;
  fn();  // warm up (page faults, caches)
  const auto t0 = clock::now();
  uint64_t n = 0;
  double elapsed = 0;
  do {
    fn();
    ++n;
    elapsed = std::chrono::duration<double>(clock::now() - t0).count();
  } while (elapsed < seconds || n < 3);
  *calls = n;
  return elapsed / double(n);
}

std::string gbps(double bytes_per_call, double seconds_per_call) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f GB/s", bytes_per_call / seconds_per_call / 1e9);
  return buf;
}

void print_kernel(const char *label, const KernelInfo &info) {
  const std::string unroll =
      info.unroll > 1 ? ", main loop unrolled " + std::to_string(info.unroll) + "x" : "";
  std::printf("%-13s %s (strategy %s%s)\n", label, info.symbol.c_str(), info.strategy.c_str(),
              unroll.c_str());
  if (!info.why.empty()) std::printf("%-13s %s\n", "", info.why.c_str());
}

// A shard (or disk) is a whole number of the code's blocks of `block` bytes: `len` rounded up
// to one, with a note when --size asked for another length.
uint64_t whole_blocks(uint64_t len, size_t block, const Args &args, const std::string &shape) {
  if (len % block == 0) return len;
  const uint64_t rounded = (len / block + 1) * block;
  if (args.has("size"))
    std::fprintf(stderr, "ecjit demo: note: --size %llu rounded up to %llu, a multiple of %zu bytes (%s)\n",
                 static_cast<unsigned long long>(len), static_cast<unsigned long long>(rounded), block, shape.c_str());
  return rounded;
}

// Array codes whose parity shares the disks with the data (xcode, bpcode): through
// Jit::array_codec, against the element-level reference encoder (codes::encode_layout).
int demo_array(Jit &jit, const std::string &spec_text, uint64_t len, double seconds, uint64_t seed,
               const Args &args) {
  Result<std::shared_ptr<const ArrayCodec>> made = jit.array_codec(spec_text);
  if (!made.ok())
    return made.status().code() == StatusCode::kInvalidSpec ? usage_error(kCmd, "spec '" + spec_text + "': " +
                                                                                    made.status().message())
                                                            : runtime_error(kCmd, made.status().to_string());
  const ArrayCodec &codec = **made;
  Result<codes::ArraySpec> aspec = codes::parse_array_spec(codec.spec());
  if (!aspec.ok()) return runtime_error(kCmd, aspec.status().to_string());
  Result<codes::ArrayLayout> layout = codes::array_layout(aspec->family, aspec->p);
  if (!layout.ok()) return runtime_error(kCmd, layout.status().to_string());
  const unsigned disks = codec.disks(), rows = codec.rows();
  const size_t element = codec.element_bytes(), sb = codec.stripe_bytes();
  len = whole_blocks(len, sb, args, std::to_string(rows) + " rows of " + std::to_string(element) + "-byte elements");
  std::vector<unsigned> lose = {0, 1};
  if (args.has("lose")) {
    std::string error;
    if (!parse_index_list(args.get("lose"), &lose, &error)) return usage_error(kCmd, "--lose: " + error);
  }
  for (unsigned d : lose)
    if (d >= disks)
      return usage_error(kCmd, "--lose: disk " + std::to_string(d) + " does not exist (" + std::to_string(disks) +
                                   " disks, 0.." + std::to_string(disks - 1) + ")");
  if (lose.size() > 2)
    return usage_error(kCmd, "--lose: " + std::to_string(lose.size()) + " disks; " + aspec->family +
                                 " rebuilds at most 2 failed disks");
  const size_t stripes = len / sb;
  std::vector<Buffer> buf;
  std::vector<std::vector<uint8_t>> want(disks, std::vector<uint8_t>(len));
  std::vector<uint8_t *> ptr(disks);
  std::mt19937_64 rng(seed);
  size_t data_cells = 0;
  for (unsigned d = 0; d < disks; ++d) {
    buf.emplace_back(len);
    ptr[d] = buf.back().get();
    for (size_t s = 0; s < stripes; ++s)
      for (unsigned r = 0; r < rows; ++r) {
        uint8_t *cell = ptr[d] + (s * rows + r) * element;
        const bool parity = codec.is_parity(r, d);
        data_cells += parity ? 0 : 1;
        for (size_t b = 0; b < element; ++b) cell[b] = parity ? 0 : uint8_t(rng());
      }
    std::memcpy(want[d].data(), ptr[d], len);
  }
  std::vector<uint8_t *> want_ptr;
  for (std::vector<uint8_t> &w : want) want_ptr.push_back(w.data());
  codes::encode_disks(*layout, want_ptr.data(), len, element);
  auto mismatch = [&](const char *what) {
    for (unsigned d = 0; d < disks; ++d)
      if (size_t at = first_difference(ptr[d], want[d].data(), len); at < len) {
        std::fprintf(stderr, "ecjit demo: MISMATCH: %s: disk %u differs from the reference at byte %zu\n", what, d, at);
        return true;
      }
    return false;
  };
  Status st = codec.encode(ptr, len);
  if (!st.ok()) return runtime_error(kCmd, "encode: " + st.to_string());
  if (mismatch("encode")) return 1;
  std::vector<bool> present(disks, true);
  for (unsigned d : lose) present[d] = false, std::memset(ptr[d], 0, len);
  st = codec.reconstruct(ptr, present, len);
  if (!st.ok()) return runtime_error(kCmd, "reconstruct: " + st.to_string());
  if (mismatch("reconstruct")) return 1;
  std::printf("%-13s %s (%u disks, stripes of %u rows of %zu-byte elements, parity on the data disks)\n", "spec:",
              codec.spec().c_str(), disks, rows, element);
  print_kernel("encoder:", codec.encoder_info());
  print_kernel("decoder:", codec.decoder_info(present));
  std::string lost;
  for (unsigned d : lose) lost += (lost.empty() ? "" : ",") + std::to_string(d);
  std::printf("%-13s %llu B per disk, lost disks %s\n", "disks:", static_cast<unsigned long long>(len),
              lost.empty() ? "none" : lost.c_str());
  std::printf("%-13s parity == reference encoder (element level), rebuilt disks == originals\n", "check:");
  const double data_bytes = double(data_cells) * double(element);
  uint64_t calls = 0;
  const double enc = time_per_call(seconds, [&] { (void)codec.encode(ptr, len); }, &calls);
  std::printf("%-13s %s (%.1f us per call, %llu calls)\n", "encode:", gbps(data_bytes, enc).c_str(), enc * 1e6,
              static_cast<unsigned long long>(calls));
  const double rec = time_per_call(seconds, [&] { (void)codec.reconstruct(ptr, present, len); }, &calls);
  std::printf("%-13s %s (%.1f us per call, %llu calls, %zu disks rebuilt)\n", "reconstruct:",
              gbps(data_bytes, rec).c_str(), rec * 1e6, static_cast<unsigned long long>(calls), lose.size());
  if (mismatch("reconstruct (timed)")) return 1;
  std::printf("%-13s data bytes per call (%zu cells of %zu bytes), single thread, GB = 10^9 bytes\nOK\n",
              "counting:", data_cells, element);
  return 0;
}

// The code as the reference codec sees it: symbol codes (codes::ref_encode) and bit-matrix
// codes (codes::ref_bitmatrix_encode) alike.
struct ReferenceCode {
  CodeSpec spec;
  unsigned k = 0, m = 0;
  size_t unit = 1;    // shard lengths are multiples of this: the symbol, or the block
  std::string shape;  // "GF(2^8), 1-byte symbols" or the block layout
  std::function<Status(const uint8_t *const *, uint8_t *const *, size_t)> encode;
  unsigned n() const { return k + m; }
};

Result<ReferenceCode> reference_code(const std::string &text) {
  Result<CodeSpec> spec = CodeSpec::parse(text);
  if (!spec.ok()) return spec.status();
  ReferenceCode r;
  if (codes::codec_kind(*spec) == codes::CodecKind::kFft) {  // not a matrix code: codes/rs_fft.h is its reference
    const codes::fft::Gf gf = codes::fft::gf_of_bits(spec->gf);
    Result<codes::fft::Geometry> g = codes::fft::geometry(spec->k, spec->m, gf);
    if (!g.ok()) return g.status();
    const unsigned k = spec->k, m = spec->m;
    r.spec = *spec;
    r.k = k;
    r.m = m;
    r.unit = gf == codes::fft::Gf::k8 ? 1 : 2;
    r.shape = gf == codes::fft::Gf::k8 ? std::string("Leopard-RS's GF(2^8) (klauspost's leopard8), high rate; a byte an element")
                                       : std::string("reed-solomon-simd's GF(2^16), ") +
                                             (g->rate == codes::fft::Rate::kHigh ? "high" : "low") +
                                             " rate; 64-byte chunks of 32 low then 32 high bytes";
    r.encode = [k, m, gf](const uint8_t *const *d, uint8_t *const *p, size_t len) {
      return codes::fft::encode_bytes(k, m, len, d, p, gf);
    };
  } else if (codes::codec_kind(*spec) == codes::CodecKind::kBitmatrix) {
    Result<codes::BitMatrixCode> code = codes::build_bitmatrix_code(*spec);
    if (!code.ok()) return code.status();
    auto shared = std::make_shared<codes::BitMatrixCode>(std::move(*code));
    r.spec = shared->spec;
    r.k = shared->k;
    r.m = shared->m;
    r.unit = shared->block_bytes();
    r.shape = "XOR bit-matrix, blocks of w = " + std::to_string(shared->w) + " packets of " +
              std::to_string(shared->packet) + " bytes";
    r.encode = [shared](const uint8_t *const *d, uint8_t *const *p, size_t len) {
      return codes::ref_bitmatrix_encode(*shared, d, p, len);
    };
  } else {
    Result<codes::LinearCode> code = codes::build_code(*spec);
    if (!code.ok()) return code.status();
    auto shared = std::make_shared<codes::LinearCode>(std::move(*code));
    r.spec = shared->spec;
    r.k = shared->k;
    r.m = shared->m;
    r.unit = shared->field.bytes();
    r.shape = "GF(2^" + std::to_string(shared->field.bits()) + "), " + std::to_string(r.unit) + "-byte symbols";
    r.encode = [shared](const uint8_t *const *d, uint8_t *const *p, size_t len) {
      return codes::ref_encode(*shared, d, p, len);
    };
  }
  return r;
}

}  // namespace

int cmd_demo(int argc, char **argv) {
  const CommandDef def = demo_def();
  Args args;
  if (std::optional<int> done = parse_command(def, argc, argv, &args)) return *done;
  const std::string spec_text = args.get("spec", "rs-vand:k=10,m=4,gf=8");
  Result<CodeSpec> parsed = CodeSpec::parse(spec_text);
  // Array codes whose parity shares the disks with the data are not codec() specs.
  const bool array_code = codes::parity_on_data_disks(spec_text.substr(0, spec_text.find(':')));
  if (!parsed.ok() && !array_code)
    return usage_error(kCmd, "spec '" + spec_text + "': " + parsed.status().message());
  uint64_t len = 0, seed = 1, threads = 1;
  double seconds = 1;
  jit::OptLevel opt = jit::OptLevel::kO3;
  if (!parse_size(args.get("size", "1M"), &len) || len == 0 || len > (1ull << 32))
    return usage_error(kCmd, "--size '" + args.get("size") + "' is not a byte count in 1..4GiB");
  if (!parse_seconds(args.get("seconds", "1"), &seconds))
    return usage_error(kCmd, "--seconds '" + args.get("seconds") + "' is not a positive number");
  if (!parse_opt_level(args.get("opt", "O3"), &opt))
    return usage_error(kCmd, "--opt '" + args.get("opt") + "' is not one of O0, O1, O2, O3");
  if (!parse_u64(args.get("seed", "1"), &seed))
    return usage_error(kCmd, "--seed '" + args.get("seed") + "' is not a number");
  if (!parse_u64(args.get("threads", "1"), &threads) || threads > kMaxThreads)
    return usage_error(kCmd, "--threads '" + args.get("threads") + "' is not a number in 0.." +
                                 std::to_string(kMaxThreads));

  JitOptions options;
  options.target = args.get("target", "host");
  options.opt_level = unsigned(opt);
  options.strategy = args.get("strategy", "auto");
  options.threads = unsigned(threads);
  Result<std::shared_ptr<Jit>> jit = Jit::create(options);
  if (!jit.ok())
    return jit.status().code() == StatusCode::kUnsupportedTarget ||
                   jit.status().code() == StatusCode::kInvalidArgument  // e.g. --strategy foo
               ? usage_error(kCmd, jit.status().to_string())
               : runtime_error(kCmd, jit.status().to_string());
  if (array_code) return demo_array(**jit, spec_text, len, seconds, seed, args);
  // packet=auto: the codec times the packets first; the reference code and the sizes follow
  // its choice. Every other spec: the codec is made (and timed) once the arguments are checked.
  // A forced --strategy the target cannot run is the caller's choice (status 2), a failed
  // compile the tool's (status 1).
  auto codec_error = [](const Status &st) {
    return st.code() == StatusCode::kUnsupportedTarget ? usage_error(kCmd, st.to_string())
                                                       : runtime_error(kCmd, "encoder: " + st.to_string());
  };
  Result<std::shared_ptr<const Codec>> codec = Status(StatusCode::kInvalidArgument, "no codec yet");
  double codec_seconds = 0;
  auto make_codec = [&](const CodeSpec &spec) {
    const auto codec_start = std::chrono::steady_clock::now();
    codec = (*jit)->codec(spec);
    codec_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - codec_start).count();
  };
  if (parsed->packet_auto) {
    make_codec(*parsed);
    if (!codec.ok()) return codec_error(codec.status());
  }
  Result<ReferenceCode> code = reference_code(codec.ok() ? (*codec)->spec().to_string() : spec_text);
  if (!code.ok()) return usage_error(kCmd, "spec '" + spec_text + "': " + code.status().message());
  const unsigned k = code->k, m = code->m, n = code->n();
  const size_t sb = code->unit;
  len = whole_blocks(len, sb, args, code->shape);
  std::vector<unsigned> lose;
  if (args.has("lose")) {
    std::string error;
    if (!parse_index_list(args.get("lose"), &lose, &error)) return usage_error(kCmd, "--lose: " + error);
  } else if (has_local_checks(code->spec)) {
    lose.push_back(0);  // a locally repairable code: the common repair, one lost data shard
  } else {
    for (unsigned s = 0; s < m; ++s) lose.push_back(s);
  }
  for (unsigned s : lose)
    if (s >= n)
      return usage_error(kCmd, "--lose: shard " + std::to_string(s) + " does not exist (" +
                                   code->spec.to_string() + " has shards 0.." + std::to_string(n - 1) + ")");
  if (lose.size() > m)
    return usage_error(kCmd, "--lose: " + std::to_string(lose.size()) + " shards lost; " +
                                 code->spec.to_string() + " rebuilds at most m = " + std::to_string(m));

  {  // n shards, m reference parity, the originals of the lost shards and those of a first-call
     // test: refuse what the machine cannot hold instead of failing halfway
    const uint64_t buffers = uint64_t(n) + 2ull * m + 2ull * lose.size();
    const uint64_t need = buffers * (uint64_t(len) + 128);
    const uint64_t phys = uint64_t(sysconf(_SC_PHYS_PAGES)) * uint64_t(sysconf(_SC_PAGESIZE));
    auto gib = [](uint64_t b) {
      char text[32];
      std::snprintf(text, sizeof text, "%.1f GiB", double(b) / double(1ull << 30));
      return std::string(text);
    };
    if (phys && need > phys / 2)
      return usage_error(kCmd, "--size " + format_bytes(len) + " needs " + gib(need) + " for " +
                                   std::to_string(buffers) + " buffers; this machine has " +
                                   gib(phys) + " of memory (the demo uses at most half)");
  }
  if (!codec.ok()) make_codec(code->spec);
  if (!codec.ok()) return codec_error(codec.status());
  const JitStats at_codec = (*jit)->stats();
  const KernelInfo enc_at_codec = (*codec)->encoder_info();  // ahead-of-time kernels, or compiled
  const bool aot = enc_at_codec.decision.tier == KernelTier::kBuiltIn;
  std::vector<bool> present(n, true);
  for (unsigned s : lose) present[s] = false;
  // With shape kernels the set's own decoder is compiled in the background; without (no
  // byte shuffle, GFNI or carry-less multiply on the target) here, on this thread.
  const KernelDecision first = (*codec)->decoder_info(present).decision;
  // Bit-matrix codes serve first calls with the schedule runner (no kernel to compile);
  // rs-fft with one decode core for every erasure set (a set costs its locator, no compile).
  const bool fft = codes::codec_kind(code->spec) == codes::CodecKind::kFft;
  const bool runner = first.tier == KernelTier::kScheduleRunner;
  const bool shapes = runner || first.run_time_coefficients();
  if (Status st = (*codec)->prepare_reconstruct(present); !st.ok())
    return runtime_error(kCmd, "decoder for lost shards " + join_indices(lose) + ": " + st.to_string());
  // The kernels above serve calls at once (the static choice under "auto"); the tuner times
  // the other candidates in the background. Measure the winners.
  const auto tune_start = std::chrono::steady_clock::now();
  (*jit)->wait_for_tuning();
  const double tune_wait =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - tune_start).count();
  const JitStats stats = (*jit)->stats();

  // Shards, a copy of the original data/parity of the lost ones, and reference parity.
  std::vector<Buffer> shards, reference;
  for (unsigned s = 0; s < n; ++s) shards.emplace_back(len);
  for (unsigned i = 0; i < m; ++i) reference.emplace_back(len);
  for (const std::vector<Buffer> *group : {&shards, &reference})
    for (const Buffer &b : *group)
      if (!b.get())
        return runtime_error(kCmd, "out of memory: cannot allocate " + std::to_string(n + m) + " buffers of " +
                                       format_bytes(len) + " (try a smaller --size)");
  std::mt19937_64 rng(seed);
  for (unsigned s = 0; s < k; ++s)
    for (uint64_t i = 0; i < len; i += 8) {
      const uint64_t v = rng();
      std::memcpy(shards[s].get() + i, &v, std::min<uint64_t>(8, len - i));
    }
  std::vector<const uint8_t *> data(k);
  std::vector<uint8_t *> parity(m), ref_parity(m), all(n);
  for (unsigned s = 0; s < k; ++s) data[s] = shards[s].get();
  for (unsigned i = 0; i < m; ++i) parity[i] = shards[k + i].get(), ref_parity[i] = reference[i].get();
  for (unsigned s = 0; s < n; ++s) all[s] = shards[s].get();

  const KernelInfo enc = (*codec)->encoder_info();
  const KernelInfo dec = (*codec)->decoder_info(present);
  std::printf("%-13s %s (n = %u: %u data + %u parity shards, %s)\n", "spec:",
              code->spec.to_string().c_str(), n, k, m, code->shape.c_str());
  if (parsed->packet_auto)
    std::printf("%-13s %s (packet=auto chose %u bytes on this machine: store this form with the data)\n",
                "resolved:", code->spec.to_string().c_str(), code->spec.packet);
  if (!parsed->chosen_by.empty())  // rs:k=,m=: the construction the cost model chose
    std::printf("%-13s %s (%s)\n", "resolved:", code->spec.to_string().c_str(), parsed->chosen_by.c_str());
  if (const CodeSpec resolved = codes::resolved_spec(code->spec); !(resolved == code->spec))
    std::printf("%-13s %s (the search's result: store this form with the data)\n", "resolved:",
                resolved.to_string().c_str());
  if (fft && enc.vector_bits <= 64)  // the scalar reference runs: no vectors, whatever the CPU has
    std::printf("%-13s %s (cpu %s; the scalar reference runs, no vector code), %s\n", "target:",
                enc.target.c_str(), enc.cpu.c_str(), opt_level_name(opt));
  else
    std::printf("%-13s %s (cpu %s, %u-bit vectors%s), %s\n", "target:", enc.target.c_str(),
                enc.cpu.c_str(), enc.vector_bits, enc.vector_bits <= 64 ? ": no vector unit" : "",
                opt_level_name(opt));
  print_kernel("encoder:", enc);
  print_kernel("decoder:", dec);
  if (fft)
    std::printf("%-13s codec() ready in %.1f ms (%llu kernel%s compiled, %llu from the disk cache); "
                "rs-fft decodes every erasure set with one decode core: a new set costs its "
                "erasure-locator logs, never a compile\n", "JIT compile:", codec_seconds * 1e3,
                (unsigned long long)at_codec.kernels_compiled, at_codec.kernels_compiled == 1 ? "" : "s",
                (unsigned long long)at_codec.kernels_from_disk);
  else if (runner)  // bit-matrix codes: the encoder too starts on its runner when cold
    std::printf("%-13s codec() ready in %.1f ms (%llu kernel%s compiled, %llu from the disk cache); "
                "encodes and each new erasure set start on the schedule runner while their unrolled "
                "kernels compile in the background (%.1f ms of compiling)\n", "JIT compile:",
                codec_seconds * 1e3, (unsigned long long)at_codec.kernels_compiled,
                at_codec.kernels_compiled == 1 ? "" : "s", (unsigned long long)at_codec.kernels_from_disk,
                (stats.compile_seconds - at_codec.compile_seconds) * 1e3);
  else if (aot)  // nothing compiled by codec(): the library's own kernels serve meanwhile
    std::printf("%-13s codec() ready in %.1f ms, no compile: %s (%s) served from the first call while "
                "the codec's own encoder, shape kernels and the lost shards' decoder were compiled in the "
                "background (%.1f ms of compiling, %llu from the disk cache)\n", "JIT compile:",
                codec_seconds * 1e3, enc_at_codec.symbol.c_str(), enc_at_codec.strategy.c_str(),
                (stats.compile_seconds - at_codec.compile_seconds) * 1e3,
                (unsigned long long)(stats.kernels_from_disk - at_codec.kernels_from_disk));
  else
    std::printf("%-13s codec() ready in %.1f ms (%llu kernel%s: the encoder%s; %llu from the disk "
                "cache); the lost shards' own decoder %.1f ms more (%s)\n", "JIT compile:",
                codec_seconds * 1e3, (unsigned long long)at_codec.kernels_compiled,
                at_codec.kernels_compiled == 1 ? "" : "s",
                shapes ? " and the shape kernels for first calls" : "",
                (unsigned long long)at_codec.kernels_from_disk,
                (stats.compile_seconds - at_codec.compile_seconds) * 1e3,
                shapes ? "in the background" : "no shape kernel on this target: on this thread");
  if (stats.kernels_tuned)
    std::printf("%-13s %llu kernels tuned in the background in %.1f ms (waited %.1f ms for them)\n",
                "tuning:", (unsigned long long)stats.kernels_tuned, stats.tuning_seconds * 1e3,
                tune_wait * 1e3);
  std::printf("%-13s %s per shard, lost shards %s\n", "shards:", format_bytes(len).c_str(),
              join_indices(lose).c_str());

  // Check: parity against the reference codec, then reconstruct against the originals.
  if (Status st = (*codec)->encode(data, parity, len); !st.ok()) return runtime_error(kCmd, "encode: " + st.to_string());
  if (Status st = code->encode(data.data(), ref_parity.data(), len); !st.ok())
    return runtime_error(kCmd, "reference encode: " + st.to_string());
  bool ok = true;
  for (unsigned i = 0; i < m; ++i) {
    const size_t at = first_difference(parity[i], ref_parity[i], len);
    if (at == len) continue;
    std::printf("MISMATCH: parity shard %u differs from the reference codec at byte %zu (got 0x%02x, want 0x%02x)\n",
                k + i, at, parity[i][at], ref_parity[i][at]);
    ok = false;
  }
  std::vector<Buffer> originals;
  for (unsigned s : lose) {
    originals.emplace_back(len);
    if (!originals.back().get()) return runtime_error(kCmd, "out of memory (try a smaller --size)");
    std::memcpy(originals.back().get(), all[s], len);
    std::memset(all[s], 0xA5, len);  // garbage, so a rebuild that writes nothing fails
  }
  if (Status st = (*codec)->reconstruct(all, present, len); !st.ok())
    return runtime_error(kCmd, "reconstruct: " + st.to_string());
  for (size_t i = 0; i < lose.size(); ++i) {
    const size_t at = first_difference(all[lose[i]], originals[i].get(), len);
    if (at == len) continue;
    std::printf("MISMATCH: rebuilt shard %u differs from the original at byte %zu (got 0x%02x, want 0x%02x)\n",
                lose[i], at, all[lose[i]][at], originals[i].get()[at]);
    ok = false;
  }
  if (!ok) {
    if (fft)
      std::printf("FAILED: %s on target %s (encoder %s)\n", code->spec.to_string().c_str(), enc.target.c_str(),
                  enc.symbol.c_str());
    else
      std::printf("FAILED: %s on target %s; inspect with: ecjit asm --spec %s --target %s\n",
                  code->spec.to_string().c_str(), enc.target.c_str(), code->spec.to_string().c_str(),
                  enc.target.c_str());
    return 1;
  }
  std::printf("%-13s parity == reference codec, %zu rebuilt shards == originals\n", "check:", lose.size());

  const double bytes = double(k) * double(len);
  uint64_t enc_calls = 0, rec_calls = 0;
  Status st;
  const double enc_s = time_per_call(seconds, [&] { st = (*codec)->encode(data, parity, len); }, &enc_calls);
  if (!st.ok()) return runtime_error(kCmd, "encode: " + st.to_string());
  const double rec_s = time_per_call(seconds, [&] { st = (*codec)->reconstruct(all, present, len); }, &rec_calls);
  if (!st.ok()) return runtime_error(kCmd, "reconstruct: " + st.to_string());
  std::printf("%-13s %s (%.1f us per call, %llu calls)\n", "encode:", gbps(bytes, enc_s).c_str(),
              enc_s * 1e6, (unsigned long long)enc_calls);
  std::printf("%-13s %s (%.1f us per call, %llu calls, %zu shards rebuilt)\n", "reconstruct:",
              gbps(bytes, rec_s).c_str(), rec_s * 1e6, (unsigned long long)rec_calls, lose.size());
  if (dec.decision.tier == KernelTier::kLocalXor)
    std::printf("%-13s %u of the %u shards (the local group%s, XOR; an MDS code reads k = %u)\n", "repair reads:",
                dec.decision.local_reads, n, lose.size() == 1 ? "" : "s", k);
  // Degraded reads as after a failure: erasure sets the codec has not seen, each timed on its
  // first call (a shape kernel, no compile), and checked.
  {
    std::vector<double> us;
    std::string kernel;
    bool local = false;
    for (unsigned first = 1; first < n && us.size() < 8; ++first) {
      std::vector<unsigned> other;
      for (unsigned i = 0; i < lose.size(); ++i) other.push_back((lose[i] + first) % n);
      std::sort(other.begin(), other.end());
      if (std::adjacent_find(other.begin(), other.end()) != other.end()) continue;
      std::vector<bool> fresh(n, true);
      std::vector<Buffer> kept;
      for (unsigned s : other) {
        fresh[s] = false;
        kept.emplace_back(len);
        if (!kept.back().get()) return runtime_error(kCmd, "out of memory (try a smaller --size)");
        std::memcpy(kept.back().get(), all[s], len);
        std::memset(all[s], 0xA5, len);
      }
      const auto t0 = std::chrono::steady_clock::now();
      st = (*codec)->reconstruct(all, fresh, len);
      us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
      if (!st.ok()) return runtime_error(kCmd, "reconstruct: " + st.to_string());
      for (size_t i = 0; i < other.size(); ++i)
        if (first_difference(all[other[i]], kept[i].get(), len) != len) {
          std::printf("MISMATCH: first reconstruct of lost shards %s: shard %u differs\n",
                      join_indices(other).c_str(), other[i]);
          return 1;
        }
      if (kernel.empty()) {
        const KernelInfo fresh_info = (*codec)->decoder_info(fresh);
        kernel = fresh_info.strategy;
        local = fresh_info.decision.tier == KernelTier::kLocalXor;
      }
    }
    if (!us.empty()) {
      std::sort(us.begin(), us.end());
      std::printf("%-13s %zu new erasure sets of %zu shards, first call each: median %.1f us, max %.1f us "
                  "(%s%s), checked\n", "first calls:", us.size(), lose.size(), us[us.size() / 2],
                  us.back(), kernel.c_str(),
                  local ? " local repair, no kernel"
                  : fft ? " decode core, locator planned per set, no compile"
                  : runner ? " schedule runner, no compile"
                  : (*codec)->kernel_cache_stats().shape_calls ? " shape kernel, no compile" : " compiled per set");
    }
  }
  std::printf("%-13s k x shard size = %s per call, %s, GB = 10^9 bytes\n", "counting:",
              format_bytes(uint64_t(k) * len).c_str(),
              threads == 1 ? "single thread"
                           : ("up to " + std::to_string(threads ? threads : std::thread::hardware_concurrency()) +
                              " threads").c_str());
  std::printf("OK\n");
  return 0;
}

}  // namespace ecjit::tools
