// Disk cache: a later session (and a second process) links the stored object without
// compiling; truncated, tampered or foreign entries are detected and rebuilt.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <fstream>
#include <random>

#include "codes/linear_code.h"
#include "codes/reference_codec.h"
#include "jit/disk_cache.h"
#include "jit/kernel_compiler.h"
#include "jit/target_spec.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace ecjit;

namespace {

using KernelFn = void (*)(const uint8_t *const *, uint8_t *const *, size_t);

struct Fixture {
  std::string dir;
  codes::LinearCode code;
  jit::CompileRequest req;
};

ir::TargetInfo host_info() {
  auto target = jit::TargetSpec::parse("host");
  EXPECT_TRUE(bool(target));
  auto info = target->resolve();
  EXPECT_TRUE(bool(info));
  return *info;
}

Fixture make_fixture(const std::string &name) {
  llvm::SmallString<128> d;
  EXPECT_FALSE(llvm::sys::fs::createUniqueDirectory("ecjit-disk-cache-" + name, d));
  codes::LinearCode code = *codes::build_code("rs-vand:k=5,m=3,gf=8");
  jit::CompileRequest req{ir::KernelDesc{code.field, code.parity, "ecjit_encode__disk_cache_test"},
                          host_info(), ir::Strategy::kAuto, jit::OptLevel::kO3};
  return Fixture{std::string(d), code, req};
}

// Runs the kernel on random data of `len` bytes per shard and compares with the reference
// codec; outputs 64-byte aligned (a streaming-store kernel's contract), inputs too.
bool kernel_correct(const Fixture &f, void *address, size_t len = 1000) {
  struct Aligned {
    std::vector<uint8_t> mem;
    uint8_t *p;
    explicit Aligned(size_t n) : mem(n + 64) {
      p = mem.data() + (64 - reinterpret_cast<uintptr_t>(mem.data()) % 64) % 64;
    }
  };
  std::vector<Aligned> d, p;
  std::vector<std::vector<uint8_t>> want(3, std::vector<uint8_t>(len));
  std::mt19937 rng(3);
  for (int i = 0; i < 5; ++i) {
    d.emplace_back(len);
    for (size_t b = 0; b < len; ++b) d.back().p[b] = uint8_t(rng());
  }
  for (int i = 0; i < 3; ++i) p.emplace_back(len);
  std::vector<const uint8_t *> in;
  std::vector<uint8_t *> out, ref;
  for (auto &s : d) in.push_back(s.p);
  for (int i = 0; i < 3; ++i) out.push_back(p[i].p), ref.push_back(want[i].data());
  if (!codes::ref_encode(f.code, in.data(), ref.data(), len).ok()) return false;
  reinterpret_cast<KernelFn>(address)(in.data(), out.data(), len);
  for (int i = 0; i < 3; ++i)
    if (!std::equal(want[i].begin(), want[i].end(), p[i].p)) return false;
  return true;
}

// One session, one jit_kernel call through the disk cache; returns whether it came from disk.
bool compile_once(const Fixture &f, bool *correct, size_t len = 1000) {
  auto session = jit::JitSession::create();
  EXPECT_TRUE(bool(session));
  jit::DiskCache disk(f.dir);
  bool from_disk = false;
  auto k = jit::jit_kernel(**session, f.req, nullptr, &disk, &from_disk);
  EXPECT_TRUE(bool(k)) << (k ? "" : llvm::toString(k.takeError()));
  *correct = k && kernel_correct(f, (*k)->address(), len);
  return from_disk;
}

TEST(DiskCache, SecondSessionLinksTheStoredObject) {
  Fixture f = make_fixture("reuse");
  bool correct = false;
  EXPECT_FALSE(compile_once(f, &correct));
  EXPECT_TRUE(correct);
  EXPECT_TRUE(llvm::sys::fs::exists(jit::DiskCache(f.dir).path_for(jit::kernel_cache_key(f.req))));
  EXPECT_TRUE(compile_once(f, &correct));
  EXPECT_TRUE(correct);
}

// A promoted decoder's kind of kernel (no path for shards under one vector, no schedulers)
// comes back from disk too: its load-time self-test runs only lengths it takes.
TEST(DiskCache, WholeVectorKernelsComeBackFromDisk) {
  Fixture f = make_fixture("whole");
  f.req.desc.whole_vectors = true;
  f.req.codegen = jit::Codegen::kNoSchedulers;
  bool correct = false;
  EXPECT_FALSE(compile_once(f, &correct));
  EXPECT_TRUE(correct);
  EXPECT_TRUE(compile_once(f, &correct));
  EXPECT_TRUE(correct);
  llvm::sys::fs::remove_directories(f.dir);
}

// Streaming-store and unrolled kernels come back from disk: the load-time self-test runs
// each within its contract (a streaming kernel on aligned whole lines: on unaligned buffers
// its non-temporal stores fault) and through its main loop, and passes, so the stored object
// serves instead of a rebuild. Every vector tier this machine has.
TEST(DiskCache, StreamingAndUnrolledKernelsComeBackFromDisk) {
  for (const char *tier : {"host", "host-avx512f", "host-avx2"}) {
    auto spec = jit::TargetSpec::parse(tier);
    ASSERT_TRUE(bool(spec));
    auto info = spec->resolve();
    ASSERT_TRUE(bool(info));
    for (bool streaming : {false, true})
      for (unsigned unroll : {1u, 4u}) {
        Fixture f = make_fixture("variants");
        f.req.target = *info;
        f.req.desc.streaming_stores = streaming;
        f.req.unroll = unroll;
        const std::string what = std::string(tier) + (streaming ? " streaming" : "") + " unroll " +
                                 std::to_string(unroll);
        const size_t len = (size_t(64) << 10) + 3 * 64;
        bool correct = false;
        EXPECT_FALSE(compile_once(f, &correct, len)) << what;
        EXPECT_TRUE(correct) << what;
        EXPECT_TRUE(compile_once(f, &correct, len)) << what << ": the stored object was rebuilt";
        EXPECT_TRUE(correct) << what;
        llvm::sys::fs::remove_directories(f.dir);
      }
  }
}

// The contract the self-test keeps to: streaming kernels take aligned whole lines, their main
// loop a whole line per step; others any length from one symbol.
TEST(DiskCache, KernelContractNamesStreamingAlignmentAndTheMainLoop) {
  Fixture f = make_fixture("contract");
  ir::TargetInfo avx2 = f.req.target;
  avx2.vector_bits = 256;
  ir::BuildOptions options;
  ir::KernelContract c = ir::kernel_contract(f.req.desc, avx2, options);
  EXPECT_EQ(c.min_len, 1u);
  EXPECT_EQ(c.len_multiple, 1u);
  EXPECT_EQ(c.out_align, 1u);
  EXPECT_EQ(c.vector_bytes, 32u);
  EXPECT_EQ(c.step_bytes, 32u);
  options.unroll = 4;
  EXPECT_EQ(ir::kernel_contract(f.req.desc, avx2, options).step_bytes, 128u);
  ir::KernelDesc nt = f.req.desc;
  nt.streaming_stores = true;
  options.unroll = 1;
  c = ir::kernel_contract(nt, avx2, options);
  EXPECT_EQ(c.len_multiple, ir::kStreamingStoreAlign);
  EXPECT_EQ(c.out_align, ir::kStreamingStoreAlign);
  EXPECT_EQ(c.step_bytes, 64u);  // two 256-bit vectors: a whole line per step
  llvm::sys::fs::remove_directories(f.dir);
}

TEST(DiskCache, SecondProcessLinksTheStoredObject) {
  Fixture f = make_fixture("process");
  bool correct = false;
  EXPECT_FALSE(compile_once(f, &correct));
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    bool ok = false;
    const bool from_disk = compile_once(f, &ok);
    _exit(from_disk && ok ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

void damage_and_check(const std::string &name, void (*damage)(const std::string &path)) {
  Fixture f = make_fixture(name);
  bool correct = false;
  EXPECT_FALSE(compile_once(f, &correct));
  const std::string path = jit::DiskCache(f.dir).path_for(jit::kernel_cache_key(f.req));
  damage(path);
  EXPECT_EQ(jit::DiskCache(f.dir).load(jit::kernel_cache_key(f.req)), nullptr) << name;
  EXPECT_FALSE(compile_once(f, &correct)) << name << ": a damaged entry must not be linked";
  EXPECT_TRUE(correct);
  EXPECT_TRUE(compile_once(f, &correct)) << name << ": the rebuilt entry is reused";
  EXPECT_TRUE(correct);
}

TEST(DiskCache, TruncatedEntryIsRebuilt) {
  damage_and_check("truncated", [](const std::string &path) {
    uint64_t size = 0;
    llvm::sys::fs::file_size(path, size);
    ASSERT_EQ(truncate(path.c_str(), off_t(size / 2)), 0);
  });
}

TEST(DiskCache, TamperedEntryIsRebuilt) {
  damage_and_check("tampered", [](const std::string &path) {
    std::fstream fs(path, std::ios::in | std::ios::out | std::ios::binary);
    fs.seekg(-40, std::ios::end);
    char c = 0;
    fs.read(&c, 1);
    fs.seekp(-40, std::ios::end);
    c = char(c ^ 0x5A);
    fs.write(&c, 1);
  });
}

TEST(DiskCache, ForeignEntryIsIgnored) {
  // An entry written under another key (another LLVM, CPU or ecjit build) sits at the path
  // of this key: the stored key differs, so it is never linked.
  Fixture f = make_fixture("foreign");
  jit::DiskCache disk(f.dir);
  const std::string key = jit::kernel_cache_key(f.req);
  auto obj = jit::kernel_code(f.req, jit::EmitKind::kObject);
  ASSERT_TRUE(bool(obj));
  auto buf = llvm::MemoryBuffer::getMemBufferCopy(*obj);
  disk.store(key + "|another-cpu", *buf);
  ASSERT_TRUE(llvm::sys::fs::rename(disk.path_for(key + "|another-cpu"), disk.path_for(key)) ==
              std::error_code());
  EXPECT_EQ(disk.load(key), nullptr);
  std::ofstream(disk.path_for(key), std::ios::binary | std::ios::trunc) << "not an object";
  EXPECT_EQ(disk.load(key), nullptr);
}

TEST(DiskCache, KeyCoversWhatTheCodeDependsOn) {
  Fixture f = make_fixture("key");
  const std::string base = jit::kernel_cache_key(f.req);
  jit::CompileRequest other = f.req;
  other.opt = jit::OptLevel::kO0;
  EXPECT_NE(jit::kernel_cache_key(other), base);
  other = f.req;
  other.desc.coeffs.a[0] ^= 1;
  EXPECT_NE(jit::kernel_cache_key(other), base);
  other = f.req;
  other.target.features += ",-avx2";
  EXPECT_NE(jit::kernel_cache_key(other), base);
  other = f.req;
  other.desc.output = ir::OutputMode::kAccumulate;
  EXPECT_NE(jit::kernel_cache_key(other), base);
  // No path for short shards (a promoted decoder), code generation without schedulers.
  other = f.req;
  other.desc.whole_vectors = true;
  EXPECT_NE(jit::kernel_cache_key(other), base);
  other = f.req;
  other.codegen = jit::Codegen::kNoSchedulers;
  EXPECT_NE(jit::kernel_cache_key(other), base);
  // Streaming stores and the main loop's unroll: other code for the same map.
  other = f.req;
  other.desc.streaming_stores = true;
  EXPECT_NE(jit::kernel_cache_key(other), base);
  other = f.req;
  other.unroll = 2;
  EXPECT_NE(jit::kernel_cache_key(other), base);
  // A first stage: same coeffs applied to other values (3 x 4 coeffs over 2 inputs + 2
  // intermediates, or over 3 inputs + 1 intermediate).
  jit::CompileRequest staged = f.req;
  staged.desc.coeffs = codes::Matrix(3, 4);
  staged.desc.pre = codes::Matrix(2, 2);
  staged.desc.pre.a = {1, 2, 3, 1};
  const std::string staged_key = jit::kernel_cache_key(staged);
  EXPECT_NE(staged_key, base);
  other = staged;
  other.desc.pre.a[1] ^= 1;
  EXPECT_NE(jit::kernel_cache_key(other), staged_key);
  other = staged;
  other.desc.pre = codes::Matrix(1, 3);
  EXPECT_NE(jit::kernel_cache_key(other), staged_key);
  other.desc.pre = codes::Matrix();
  EXPECT_NE(jit::kernel_cache_key(other), staged_key);
  EXPECT_NE(base.find(jit::DiskCache::build_identity()), std::string::npos);
}

}  // namespace

namespace {

// What load() of f.req's entry returns after `plant` replaced the entry file, and how long
// it took (a FIFO or /dev/zero must neither hang nor exhaust memory).
bool loads_after(const Fixture &f, const std::function<void(const std::string &)> &plant,
                 double *seconds) {
  jit::DiskCache disk(f.dir);
  EXPECT_EQ(disk.problem(), "");
  const std::string key = jit::kernel_cache_key(f.req);
  const std::string path = disk.path_for(key);
  std::remove(path.c_str());
  plant(path);
  const auto t0 = std::chrono::steady_clock::now();
  const bool loaded = disk.load(key) != nullptr;
  *seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::remove(path.c_str());
  return loaded;
}

}  // namespace

// Entries that are not regular files of this user are misses, at once.
TEST(DiskCacheTrust, FifoAndLinksAreMissesWithoutBlocking) {
  Fixture f = make_fixture("special");
  double secs = 0;
  EXPECT_FALSE(loads_after(f, [](const std::string &p) { ASSERT_EQ(mkfifo(p.c_str(), 0600), 0); }, &secs));
  EXPECT_LT(secs, 1.0);
  EXPECT_FALSE(loads_after(f, [](const std::string &p) { ASSERT_EQ(symlink("/dev/zero", p.c_str()), 0); }, &secs));
  EXPECT_LT(secs, 1.0);
  // A link to a valid entry is refused too (O_NOFOLLOW): only the entry file itself counts.
  {
    bool correct = false;
    compile_once(f, &correct);
    jit::DiskCache disk(f.dir);
    const std::string path = disk.path_for(jit::kernel_cache_key(f.req));
    const std::string moved = path + ".real";
    ASSERT_EQ(std::rename(path.c_str(), moved.c_str()), 0);
    ASSERT_EQ(symlink(moved.c_str(), path.c_str()), 0);
    EXPECT_EQ(disk.load(jit::kernel_cache_key(f.req)), nullptr);
    std::remove(path.c_str());
    ASSERT_EQ(std::rename(moved.c_str(), path.c_str()), 0);
    EXPECT_NE(disk.load(jit::kernel_cache_key(f.req)), nullptr);
  }
  // Larger than any kernel object: not read (a sparse file, no disk used).
  EXPECT_FALSE(loads_after(f, [](const std::string &p) {
    const int fd = open(p.c_str(), O_CREAT | O_WRONLY, 0600);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(ftruncate(fd, off_t(jit::DiskCache::kMaxEntryBytes) + 1), 0);
    close(fd);
  }, &secs));
}

// A directory that others can write to is not used, and says why.
TEST(DiskCacheTrust, GroupOrWorldWritableDirectoryIsRefused) {
  Fixture f = make_fixture("perm");
  ASSERT_EQ(chmod(f.dir.c_str(), 0775), 0);
  {
    jit::DiskCache disk(f.dir);
    EXPECT_NE(disk.problem().find("writable by its group"), std::string::npos) << disk.problem();
    bool from_disk = true;
    auto session = jit::JitSession::create();
    ASSERT_TRUE(bool(session));
    auto k = jit::jit_kernel(**session, f.req, nullptr, &disk, &from_disk);
    ASSERT_TRUE(bool(k));
    EXPECT_FALSE(from_disk);
    EXPECT_FALSE(llvm::sys::fs::exists(disk.path_for(jit::kernel_cache_key(f.req))))
        << "wrote into a directory it does not trust";
  }
  ASSERT_EQ(chmod(f.dir.c_str(), 0700), 0);
  EXPECT_EQ(jit::DiskCache(f.dir).problem(), "");
  // A new directory is created private.
  const std::string fresh = f.dir + "/sub/ecjit";
  EXPECT_EQ(jit::DiskCache(fresh).problem(), "");
  struct stat st;
  ASSERT_EQ(stat(fresh.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
}

// A forged entry - the right key, size and checksum, but another kernel's object with the
// same symbol - is detected by the self-test before it runs, rebuilt and overwritten.
TEST(DiskCacheTrust, ForgedEntryIsNeverExecuted) {
  Fixture f = make_fixture("forged");
  jit::CompileRequest forged = f.req;
  for (uint64_t &a : forged.desc.coeffs.a) a ^= 0x1d;  // another map, same name
  auto object = jit::kernel_code(forged, jit::EmitKind::kObject);
  ASSERT_TRUE(bool(object)) << llvm::toString(object.takeError());
  {
    jit::DiskCache disk(f.dir);
    disk.store(jit::kernel_cache_key(f.req), *llvm::MemoryBuffer::getMemBuffer(*object, "", false));
    ASSERT_NE(disk.load(jit::kernel_cache_key(f.req)), nullptr) << "the forged entry validates";
  }
  bool correct = false;
  EXPECT_FALSE(compile_once(f, &correct)) << "the forged object was linked as the kernel";
  EXPECT_TRUE(correct);
  EXPECT_TRUE(compile_once(f, &correct)) << "the rebuilt entry was not stored";
  EXPECT_TRUE(correct);
}

// Pruning scans the whole directory: with a background runner (a Jit's thread) store() hands
// it over instead of scanning on the caller's thread.
TEST(DiskCacheTrust, PruneRunsOnTheBackgroundRunner) {
  Fixture f = make_fixture("prune");
  jit::DiskCache disk(f.dir);
  ASSERT_EQ(disk.problem(), "");
  std::vector<std::function<void()>> queued;
  disk.set_background([&](std::function<void()> task) {
    queued.push_back(std::move(task));
    return true;
  });
  const std::string bytes(64, 'x');
  for (int i = 0; i < 64; ++i)
    disk.store("prune-test-" + std::to_string(i), *llvm::MemoryBuffer::getMemBuffer(bytes, "", false));
  ASSERT_GE(queued.size(), 1u) << "64 stores never asked for a prune";
  for (auto &task : queued) task();  // the runner's thread, here: a prune that keeps them all
  size_t entries = 0;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(f.dir, ec), end; it != end && !ec; it.increment(ec)) ++entries;
  EXPECT_EQ(entries, 64u);
}

// One prune run is bounded in time: out of budget it stops, never trims the
// directory below kMaxEntries on a partial scan, and a full run removes exactly the oldest.
TEST(DiskCacheTrust, PruneIsBoundedInTimeAndKeepsTheNewest) {
  Fixture f = make_fixture("prune-bounded");
  jit::DiskCache disk(f.dir);
  ASSERT_EQ(disk.problem(), "");
  disk.set_background([](std::function<void()>) { return false; });  // no prune while filling
  const size_t extra = 40, total = jit::DiskCache::kMaxEntries + extra;
  const std::string bytes(64, 'x');
  std::vector<std::string> paths;
  for (size_t i = 0; i < total; ++i) {
    const std::string key = "prune-bounded-" + std::to_string(i);
    disk.store(key, *llvm::MemoryBuffer::getMemBuffer(bytes, "", false));
    paths.push_back(disk.path_for(key));
    // Entry i is i seconds old-er than the newest: the first `extra` are the oldest.
    struct timespec times[2] = {{time_t(1000000 + i), 0}, {time_t(1000000 + i), 0}};
    ASSERT_EQ(utimensat(AT_FDCWD, paths.back().c_str(), times, 0), 0);
  }
  auto count = [&] {
    size_t n = 0;
    std::error_code ec;
    for (llvm::sys::fs::directory_iterator it(f.dir, ec), end; it != end && !ec; it.increment(ec))
      if (llvm::StringRef(it->path()).ends_with(".ecjit-obj")) ++n;
    return n;
  };
  const size_t before = count();
  ASSERT_EQ(before, total);

  jit::DiskCache::PruneRun none = disk.prune(std::chrono::nanoseconds(0));
  EXPECT_FALSE(none.complete);
  EXPECT_EQ(none.removed, 0u);
  EXPECT_EQ(count(), before) << "a run with no time left deleted entries";

  jit::DiskCache::PruneRun full = disk.prune(std::chrono::seconds(60));
  EXPECT_TRUE(full.complete);
  EXPECT_EQ(count(), jit::DiskCache::kMaxEntries);
  for (size_t i = 0; i < total; ++i)
    EXPECT_EQ(llvm::sys::fs::exists(paths[i]), i >= extra) << "entry " << i << " of " << total;
}
