// File protection: redundancy files checked against the scalar reference codec and
// a scalar signature, and every injected corruption given the right verdict and repair.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "codes/linear_code.h"
#include "codes/reference_codec.h"
#include "ecjit/file_protection.h"
#include "ecjit/jit.h"
#include "files/redundancy_header.h"

namespace {

using ecjit::files::FileProtector;
using ecjit::files::FileReport;
using ecjit::files::ProtectOptions;
using ecjit::files::Verdict;

// One Jit for the binary, released when the tests end: a Jit must be gone before the process
// exits, or its background thread may be compiling while exit() destroys LLVM's statics.
std::shared_ptr<ecjit::Jit> &shared_jit() {
  static std::shared_ptr<ecjit::Jit> jit;
  return jit;
}
std::shared_ptr<ecjit::Jit> test_jit() {
  if (!shared_jit()) {
    ecjit::JitOptions o;
    o.disk_cache = false;
    shared_jit() = *ecjit::Jit::create(o);
  }
  return shared_jit();
}
class ReleaseJit : public ::testing::Environment {
 public:
  void TearDown() override { shared_jit().reset(); }
};
::testing::Environment *const release_jit = ::testing::AddGlobalTestEnvironment(new ReleaseJit);

std::string read_file(const std::string &path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}
void write_file(const std::string &path, const std::string &bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), std::streamsize(bytes.size()));
}
std::string random_bytes(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string s(n, '\0');
  for (char &c : s) c = char(rng());
  return s;
}
int64_t mtime_ns(const std::string &path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return -1;
  return int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
}
void patch(const std::string &path, uint64_t off, const std::string &bytes, bool keep_mtime = true) {
  struct stat st;
  ASSERT_EQ(stat(path.c_str(), &st), 0) << path;
  int fd = open(path.c_str(), O_WRONLY);
  ASSERT_GE(fd, 0) << path;
  ASSERT_EQ(pwrite(fd, bytes.data(), bytes.size(), off_t(off)), ssize_t(bytes.size()));
  if (keep_mtime) {  // silent corruption (bit rot) does not move the mtime
    struct timespec t[2] = {st.st_atim, st.st_mtim};
    futimens(fd, t);
  }
  close(fd);
}
void flip_bit(const std::string &path, uint64_t off) {
  std::string all = read_file(path);
  ASSERT_LT(off, all.size());
  patch(path, off, std::string(1, char(all[off] ^ 0x10)));
}

struct Scratch {
  std::string dir;
  explicit Scratch(const std::string &name, const std::string &root = ::testing::TempDir()) {
    dir = root + "ecjit-files-" + name + "-" + std::to_string(getpid());
    std::string cmd = "rm -rf '" + dir + "' && mkdir -p '" + dir + "'";
    EXPECT_EQ(system(cmd.c_str()), 0);
  }
  ~Scratch() {
    std::string cmd = "rm -rf '" + dir + "'";
    (void)system(cmd.c_str());
  }
  std::string path(const std::string &name) const { return dir + "/" + name; }
};

// Scalar algebraic signature (eq. 2.33): sig_i = sum_j p_j alpha^((i+1) j), packed as the
// library stores it (64 / l components of l bits).
uint64_t scalar_signature(const ecjit::codes::Field &f, const uint8_t *p, size_t len) {
  const unsigned l = f.bits(), sb = l / 8, comps = 64 / l;
  uint64_t out = 0;
  for (unsigned i = 0; i < comps; ++i) {
    const uint64_t a = f.pow(2, i + 1);
    uint64_t s = 0;
    for (size_t j = len / sb; j-- > 0;) s = f.mul(s, a) ^ ecjit::codes::load_symbol(p + j * sb, sb);
    out |= l == 64 ? s : s << (i * l);
  }
  return out;
}

uint64_t le64(const std::string &b, size_t at) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= uint64_t(uint8_t(b[at + i])) << (8 * i);
  return v;
}

struct Fixture {
  Scratch scratch;
  ProtectOptions opt;
  std::unique_ptr<FileProtector> fp;
  // domains: names of failure-domain directories in the scratch directory (none: .ecjit).
  Fixture(const std::string &name, const std::string &spec, uint64_t unit, const std::vector<std::string> &domains = {})
      : scratch(name) {
    opt.spec = spec;
    opt.unit = unit;
    opt.threads = 2;
    for (const std::string &d : domains) opt.ecc_domains.push_back(scratch.path(d));
    auto p = FileProtector::create(*test_jit(), opt);
    EXPECT_TRUE(p.ok()) << p.status().to_string();
    fp = std::move(*p);
  }
  FileReport protect(const std::string &path) {
    auto r = fp->protect(path);
    EXPECT_TRUE(r.ok()) << r.status().to_string();
    return r.ok() ? *r : FileReport{};
  }
  FileReport scrub(const std::string &path, bool repair) {
    auto r = fp->scrub(path, repair);
    EXPECT_TRUE(r.ok()) << r.status().to_string();
    return r.ok() ? *r : FileReport{};
  }
};

// The ECC units on disk equal the reference codec's parity of each stripe, and the stored
// signatures equal the scalar signatures of every data and ECC unit.
void expect_matches_reference(const Fixture &fx, const std::string &path, const std::string &spec, uint64_t unit) {
  auto code = ecjit::codes::build_code(spec);
  ASSERT_TRUE(code.ok());
  const unsigned k = code->k, m = code->m;
  const std::string data = read_file(path);
  const uint64_t stripes = (data.size() + k * unit - 1) / (k * unit);
  std::vector<std::string> ecc(m);
  for (unsigned r = 0; r < m; ++r) ecc[r] = read_file(fx.fp->redundancy_path(path, r));
  for (uint64_t s = 0; s < stripes; ++s) {
    // Every stripe has units of `unit` bytes but the last, whose units are just long enough:
    // ceil(rest / k) rounded up to 64 bytes.
    const uint64_t rest = data.size() - s * k * unit;
    const uint64_t su = s + 1 < stripes ? unit : std::min<uint64_t>(unit, ((rest + k - 1) / k + 63) / 64 * 64);
    std::vector<std::string> d(k, std::string(su, '\0')), p(m, std::string(su, '\0'));
    std::vector<const uint8_t *> dp(k);
    std::vector<uint8_t *> pp(m);
    for (unsigned j = 0; j < k; ++j) {
      const uint64_t off = s * k * unit + j * su;
      if (off < data.size()) d[j].replace(0, std::min<uint64_t>(su, data.size() - off), data, off, su);
      dp[j] = reinterpret_cast<const uint8_t *>(d[j].data());
    }
    for (unsigned r = 0; r < m; ++r) pp[r] = reinterpret_cast<uint8_t *>(p[r].data());
    ASSERT_TRUE(ecjit::codes::ref_encode(*code, dp.data(), pp.data(), su).ok());
    for (unsigned r = 0; r < m; ++r) {
      const uint64_t header = le64(ecc[r], 104);
      ASSERT_GE(ecc[r].size(), header + s * unit + su) << "redundancy file size, stripe " << s;
      if (s + 1 == stripes) EXPECT_EQ(ecc[r].size(), header + s * unit + su) << "redundancy file size";
      EXPECT_EQ(ecc[r].compare(header + s * unit, su, p[r]), 0) << "stripe " << s << " ecc " << r;
    }
    // Signatures: the table follows the fixed fields, the spec and the name, 8-aligned.
    for (unsigned r = 0; r < m; ++r) {
      const uint64_t spec_len = le64(ecc[r], 88) & 0xffffffff, name_len = le64(ecc[r], 88) >> 32;
      const uint64_t table = 128 + ((spec_len + 7) & ~uint64_t(7)) + ((name_len + 7) & ~uint64_t(7));
      for (unsigned j = 0; j < k; ++j)
        EXPECT_EQ(le64(ecc[r], table + (s * (k + 1) + j) * 8),
                  scalar_signature(code->field, dp[j], su))
            << "stripe " << s << " data " << j;
      EXPECT_EQ(le64(ecc[r], table + (s * (k + 1) + k) * 8), scalar_signature(code->field, pp[r], su))
          << "stripe " << s << " ecc " << r;
    }
  }
}

TEST(FileProtection, RedundancyEqualsTheReferenceCodecAndScalarSignatures) {
  for (const std::string spec : {"rs-vand:k=4,m=2", "rs-cauchy:k=5,m=3,gf=16", "rs-vand:k=3,m=2,gf=32"}) {
    SCOPED_TRACE(spec);
    const uint64_t unit = 4096;
    Fixture fx("ref", spec, unit);
    const std::string path = fx.scratch.path("data.bin");
    write_file(path, random_bytes(7 * 4096 * 3 + 1234, 7));  // several stripes, a short last one
    FileReport r = fx.protect(path);
    EXPECT_EQ(r.verdict, Verdict::kProtected);
    expect_matches_reference(fx, path, spec, unit);
    EXPECT_EQ(fx.scrub(path, false).verdict, Verdict::kClean);
    EXPECT_EQ(fx.protect(path).verdict, Verdict::kUnchanged);
  }
}

TEST(FileProtection, RejectsBitMatrixCodesAndBadUnits) {
  ProtectOptions o;
  o.spec = "cauchy-good:k=4,m=2,w=8";
  auto p = FileProtector::create(*test_jit(), o);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), ecjit::StatusCode::kUnsupported);
  o.spec = "rs-fft:k=4,m=2";  // reed-solomon-simd's code: no algebraic signatures either
  p = FileProtector::create(*test_jit(), o);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), ecjit::StatusCode::kUnsupported);
  o.spec = "";
  o.unit = 100;
  p = FileProtector::create(*test_jit(), o);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), ecjit::StatusCode::kInvalidArgument);
  o.unit = 0;
  o.spec = "rs-vand:k=0,m=2";
  EXPECT_EQ(FileProtector::create(*test_jit(), o).status().code(), ecjit::StatusCode::kInvalidSpec);
}

// Every kind of damage below: verdict, repair, byte-identical result.
struct Damage {
  const char *name;
  std::function<void(Fixture &, const std::string &)> inflict;
  Verdict found;  // scrub without repair
};

TEST(FileProtection, EveryInjectedDamageIsFoundAndRepaired) {
  const uint64_t unit = 8192;
  const std::string spec = "rs-vand:k=4,m=2";
  const size_t size = 4 * 8192 * 5 + 5000;  // 6 stripes
  std::vector<Damage> cases = {
      {"bit flip in a data unit", [](Fixture &, const std::string &p) { flip_bit(p, 3 * 8192 + 17); },
       Verdict::kDamaged},
      {"bit flips in two data units of one stripe",
       [](Fixture &, const std::string &p) {
         flip_bit(p, 4 * 8192 * 2 + 5);
         flip_bit(p, 4 * 8192 * 2 + 3 * 8192 + 100);
       },
       Verdict::kDamaged},
      {"bit flip in an ECC unit",
       [](Fixture &fx, const std::string &p) { flip_bit(fx.fp->redundancy_path(p, 1), 4096 * 2 + 8192 * 3 + 9); },
       Verdict::kDamaged},
      {"zeroed data unit",
       [](Fixture &, const std::string &p) { patch(p, 8192 * 6, std::string(8192, '\0')); }, Verdict::kDamaged},
      // The short last stripe (units of 1280 bytes): the cut hits its last unit only.
      {"truncated data file", [](Fixture &, const std::string &p) { ASSERT_EQ(truncate(p.c_str(), size - 1000), 0); },
       Verdict::kDamaged},
      {"deleted redundancy file",
       [](Fixture &fx, const std::string &p) { ASSERT_EQ(unlink(fx.fp->redundancy_path(p, 0).c_str()), 0); },
       Verdict::kDamaged},
      {"truncated redundancy file",
       [](Fixture &fx, const std::string &p) { ASSERT_EQ(truncate(fx.fp->redundancy_path(p, 1).c_str(), 4096 + 8192 * 2), 0); },
       Verdict::kDamaged},
      {"torn header",
       [](Fixture &fx, const std::string &p) { flip_bit(fx.fp->redundancy_path(p, 0), 200); }, Verdict::kDamaged},
      {"header from another file",
       [](Fixture &fx, const std::string &p) {
         const std::string other = fx.scratch.path("other.bin");
         write_file(other, random_bytes(size, 99));
         ASSERT_EQ(fx.fp->protect(other).ok(), true);
         write_file(fx.fp->redundancy_path(p, 1), read_file(fx.fp->redundancy_path(other, 1)));
       },
       Verdict::kDamaged},
      {"write hole: an ECC unit and its stored signature disagree with the data's (eq. 2.37)",
       [](Fixture &fx, const std::string &p) {
         // As if a writer crashed between updating an ECC unit (and its header) and the data:
         // the unit matches its own stored signature, but not the code applied to the data's.
         const std::string e = fx.fp->redundancy_path(p, 0);
         const std::string bytes = read_file(e);
         std::vector<uint8_t> first(bytes.begin(), bytes.begin() + 4096);
         auto h = ecjit::files::RedundancyHeader::parse(first, [](uint64_t, uint64_t, uint8_t *) {
           return ecjit::Status(ecjit::StatusCode::kIoError, "short");
         });
         ASSERT_TRUE(h.ok()) << h.status().to_string();
         std::string unit = bytes.substr(h->unit_offset(3), 8192);
         unit[77] ^= 0x5a;
         auto code = ecjit::codes::build_code(h->spec);
         ASSERT_TRUE(code.ok());
         h->ecc_sig(3) = scalar_signature(code->field, reinterpret_cast<const uint8_t *>(unit.data()), 8192);
         const std::vector<uint8_t> head = h->serialize();
         patch(e, 0, std::string(head.begin(), head.end()));
         patch(e, h->unit_offset(3), unit);
       },
       Verdict::kDamaged},
  };
  for (Damage &c : cases) {
    SCOPED_TRACE(c.name);
    Fixture fx("damage", spec, unit);
    const std::string path = fx.scratch.path("data.bin");
    const std::string original = random_bytes(size, 3);
    write_file(path, original);
    ASSERT_EQ(fx.protect(path).verdict, Verdict::kProtected);
    const int64_t protected_mtime = mtime_ns(path);
    c.inflict(fx, path);
    FileReport found = fx.scrub(path, false);
    EXPECT_EQ(found.verdict, c.found) << ecjit::files::verdict_name(found.verdict);
    EXPECT_FALSE(found.damage.empty() && found.notes.empty());
    if (access(path.c_str(), F_OK) == 0) {
      // scrub without --repair wrote nothing
      EXPECT_EQ(mtime_ns(path) == protected_mtime || c.name == std::string("truncated data file"), true);
    }
    FileReport fixed = fx.scrub(path, true);
    EXPECT_EQ(fixed.verdict, Verdict::kRepaired) << ecjit::files::verdict_name(fixed.verdict);
    for (const auto &d : fixed.damage) EXPECT_TRUE(d.repaired) << "stripe " << d.stripe << " unit " << d.unit;
    EXPECT_TRUE(read_file(path) == original) << "repaired file differs";
    EXPECT_EQ(mtime_ns(path), protected_mtime);
    EXPECT_EQ(fx.scrub(path, false).verdict, Verdict::kClean);
    expect_matches_reference(fx, path, spec, unit);
  }
}

TEST(FileProtection, TooMuchDamageIsDataLostAndNoWrongByteIsWritten) {
  const uint64_t unit = 4096;
  Fixture fx("lost", "rs-vand:k=4,m=2", unit);
  const std::string path = fx.scratch.path("data.bin");
  const std::string original = random_bytes(4 * 4096 * 3, 5);
  write_file(path, original);
  ASSERT_EQ(fx.protect(path).verdict, Verdict::kProtected);
  // Stripe 1 loses three units (m = 2); stripe 2 one (repairable).
  std::string damaged = original;
  for (uint64_t off : {uint64_t(4 * 4096 + 1), uint64_t(5 * 4096 + 2), uint64_t(6 * 4096 + 3), uint64_t(9 * 4096)}) {
    flip_bit(path, off);
    damaged[off] ^= 0x10;
  }
  EXPECT_EQ(fx.scrub(path, false).verdict, Verdict::kDataLost);
  FileReport r = fx.scrub(path, true);
  EXPECT_EQ(r.verdict, Verdict::kDataLost);
  std::string now = read_file(path);
  // Stripe 2 repaired, stripe 1 left exactly as it was (never overwritten with a guess).
  EXPECT_EQ(now.compare(8 * 4096, 4 * 4096, original, 8 * 4096, 4 * 4096), 0);
  EXPECT_EQ(now.compare(4 * 4096, 4 * 4096, damaged, 4 * 4096, 4 * 4096), 0);
  size_t lost = 0, repaired = 0;
  for (const auto &d : r.damage) (d.repaired ? repaired : lost)++;
  EXPECT_EQ(lost, 3u);
  EXPECT_EQ(repaired, 1u);
  // restore --to refuses to write a file with holes.
  auto out = fx.fp->restore(path, fx.scratch.path("out.bin"));
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->verdict, Verdict::kDataLost);
  EXPECT_NE(access(fx.scratch.path("out.bin").c_str(), F_OK), 0);
}

TEST(FileProtection, ModifiedFileIsReportedNotRolledBackUntilRestore) {
  Fixture fx("modified", "rs-vand:k=4,m=2", 4096);
  const std::string path = fx.scratch.path("data.bin");
  const std::string original = random_bytes(4 * 4096 * 2, 11);
  write_file(path, original);
  ASSERT_EQ(fx.protect(path).verdict, Verdict::kProtected);
  sleep(0);
  std::string edited = original;
  edited.replace(100, 5, "hello");
  patch(path, 100, "hello", /*keep_mtime=*/false);
  struct timespec later[2] = {{0, UTIME_OMIT}, {time(nullptr) + 5, 0}};
  utimensat(AT_FDCWD, path.c_str(), later, 0);  // a legitimate write moves the mtime
  EXPECT_EQ(fx.scrub(path, false).verdict, Verdict::kModified);
  EXPECT_EQ(fx.scrub(path, true).verdict, Verdict::kModified);
  EXPECT_TRUE(read_file(path) == edited) << "scrub --repair rolled back a modification";
  // restore --to gives the protected version without touching the file.
  auto to = fx.fp->restore(path, fx.scratch.path("old.bin"));
  ASSERT_TRUE(to.ok()) << to.status().to_string();
  EXPECT_EQ(to->verdict, Verdict::kRepaired);
  EXPECT_TRUE(read_file(fx.scratch.path("old.bin")) == original);
  EXPECT_TRUE(read_file(path) == edited);
  // protect updates only the changed stripe.
  FileReport up = fx.protect(path);
  EXPECT_EQ(up.verdict, Verdict::kUpdated);
  EXPECT_EQ(up.stripes_encoded, 1u);
  EXPECT_EQ(up.stripes, 2u);
  EXPECT_EQ(fx.scrub(path, false).verdict, Verdict::kClean);
  expect_matches_reference(fx, path, "rs-vand:k=4,m=2", 4096);
  // A grown file: the new stripes are encoded, the old ones kept.
  const std::string grown = edited + random_bytes(4 * 4096 + 7, 12);
  write_file(path, grown);
  up = fx.protect(path);
  EXPECT_EQ(up.stripes, 4u);
  EXPECT_EQ(up.stripes_encoded, 2u);  // the short old last stripe changed, and the new one
  expect_matches_reference(fx, path, "rs-vand:k=4,m=2", 4096);
}

TEST(FileProtection, RestoreInPlaceRebuildsAMissingFile) {
  Fixture fx("restore", "rs-cauchy:k=3,m=2,gf=16", 1024);
  const std::string path = fx.scratch.path("gone.bin");
  const std::string original = random_bytes(3 * 1024 * 4 + 77, 21);
  write_file(path, original);
  ASSERT_EQ(fx.protect(path).verdict, Verdict::kProtected);
  const int64_t mt = mtime_ns(path);
  // Missing data file: at most m = 2 units per stripe can be rebuilt, so the whole file is
  // lost unless... it is: k = 3 > m. restore says so and creates nothing.
  ASSERT_EQ(unlink(path.c_str()), 0);
  auto r = fx.fp->restore(path);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->verdict, Verdict::kDataLost);
  EXPECT_NE(access(path.c_str(), F_OK), 0) << "a file of holes was created";
  // A truncated one within reach: the tail of the last stripe.
  write_file(path, original.substr(0, 3 * 1024 * 4 + 10));
  r = fx.fp->restore(path);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->verdict, Verdict::kRepaired);
  EXPECT_TRUE(read_file(path) == original);
  EXPECT_EQ(mtime_ns(path), mt);
}

TEST(FileProtection, EccDirMirrorsAbsolutePathsAndDirectoriesAreWalked) {
  Scratch s("eccdir");
  ASSERT_EQ(system(("mkdir -p '" + s.path("tree/sub") + "' '" + s.path("ecc") + "'").c_str()), 0);
  write_file(s.path("tree/a"), random_bytes(5000, 1));
  write_file(s.path("tree/sub/b"), random_bytes(70000, 2));
  ProtectOptions o;
  o.spec = "rs-vand:k=2,m=1";
  o.unit = 4096;
  o.ecc_dir = s.path("ecc");
  auto fp = FileProtector::create(*test_jit(), o);
  ASSERT_TRUE(fp.ok());
  auto files = (*fp)->expand({s.path("tree")});
  ASSERT_TRUE(files.ok());
  ASSERT_EQ(files->size(), 2u);
  for (const std::string &f : *files) {
    auto r = (*fp)->protect(f);
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    EXPECT_EQ((*fp)->redundancy_path(f, 0), s.path("ecc") + f + ".ecc0");
    EXPECT_EQ(access((*fp)->redundancy_path(f, 0).c_str(), F_OK), 0);
  }
  EXPECT_NE(access(s.path("tree/.ecjit").c_str(), F_OK), 0) << "redundancy went beside the data";
  flip_bit(s.path("tree/sub/b"), 12345);
  auto r = (*fp)->scrub(s.path("tree/sub/b"), true);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->verdict, Verdict::kRepaired);
  EXPECT_TRUE(read_file(s.path("tree/sub/b")) == random_bytes(70000, 2));
}

TEST(FileProtection, ASecondRunOnTheSameFileIsRefused) {
  Fixture fx("lock", "rs-vand:k=2,m=1", 4096);
  const std::string path = fx.scratch.path("data.bin");
  write_file(path, random_bytes(10000, 4));
  ASSERT_EQ(fx.protect(path).verdict, Verdict::kProtected);
  // Another process (here: another open file description) holds the run lock.
  const std::string lock = fx.fp->redundancy_path(path, 0);
  const std::string lock_path = lock.substr(0, lock.size() - 5) + ".lock";
  int fd = open(lock_path.c_str(), O_RDWR);
  ASSERT_GE(fd, 0) << lock_path;
  ASSERT_EQ(flock(fd, LOCK_EX | LOCK_NB), 0);
  auto r = fx.fp->protect(path);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ecjit::StatusCode::kIoError);
  EXPECT_NE(r.status().message().find("busy"), std::string::npos) << r.status().message();
  auto s = fx.fp->scrub(path, true);
  EXPECT_FALSE(s.ok());
  close(fd);
  EXPECT_EQ(fx.scrub(path, false).verdict, Verdict::kClean);
}

// Many files: small ones side by side, a large one with all workers; every report once.
TEST(FileProtection, RunWorksManyFilesAndReportsEachOnce) {
  Fixture fx("many", "rs-vand:k=4,m=2", 4096);
  std::vector<std::string> files;
  std::vector<std::string> contents;
  for (int i = 0; i < 24; ++i) {
    files.push_back(fx.scratch.path("f" + std::to_string(i)));
    contents.push_back(random_bytes(size_t(100 + 3000 * i), uint32_t(40 + i)));
  }
  files.push_back(fx.scratch.path("large"));
  contents.push_back(random_bytes(4 * 4096 * 9 + 3, 77));  // 10 stripes: shared out
  for (size_t i = 0; i < files.size(); ++i) write_file(files[i], contents[i]);
  auto run = [&](FileProtector::Command cmd, Verdict want) {
    std::vector<int> seen(files.size(), 0);
    fx.fp->run(files, cmd, [&](size_t i, const ecjit::Result<FileReport> &r) {
      ASSERT_LT(i, files.size());
      ++seen[i];
      ASSERT_TRUE(r.ok()) << r.status().to_string();
      EXPECT_EQ(r->path, files[i]);
      EXPECT_EQ(r->verdict, want) << files[i] << ": " << ecjit::files::verdict_name(r->verdict);
    });
    for (size_t i = 0; i < files.size(); ++i) EXPECT_EQ(seen[i], 1) << files[i];
  };
  run(FileProtector::Command::kProtect, Verdict::kProtected);
  for (size_t i = 0; i < files.size(); ++i) flip_bit(files[i], contents[i].size() / 2);
  run(FileProtector::Command::kScrub, Verdict::kDamaged);
  run(FileProtector::Command::kRepair, Verdict::kRepaired);
  for (size_t i = 0; i < files.size(); ++i) EXPECT_TRUE(read_file(files[i]) == contents[i]) << files[i];
  run(FileProtector::Command::kScrub, Verdict::kClean);
  expect_matches_reference(fx, files.back(), "rs-vand:k=4,m=2", 4096);
}

// Small files commit in batches with one syncfs when their redundancy shares a file system,
// each temporary reopened and fsynced when it does not: a run over two file systems (the
// scratch directory and /dev/shm, a tmpfs) protects every file either way, and each file's
// redundancy is the reference codec's.
TEST(FileProtection, BatchedCommitsAcrossFileSystems) {
  struct stat shm, scratch_st;
  Fixture fx("batch2fs", "rs-vand:k=4,m=2", 4096);
  if (::stat("/dev/shm", &shm) != 0 || ::access("/dev/shm", W_OK) != 0 ||
      ::stat(fx.scratch.dir.c_str(), &scratch_st) != 0 || shm.st_dev == scratch_st.st_dev)
    GTEST_SKIP() << "no writable /dev/shm on a file system of its own";
  Scratch other("batch2fs", "/dev/shm/");
  std::vector<std::string> files;
  std::vector<std::string> contents;
  for (int i = 0; i < 40; ++i) {
    files.push_back((i % 2 ? other : fx.scratch).path("f" + std::to_string(i)));
    contents.push_back(random_bytes(size_t(500 + 1000 * i), uint32_t(90 + i)));
    write_file(files.back(), contents.back());
  }
  std::vector<int> seen(files.size(), 0);
  fx.fp->run(files, FileProtector::Command::kProtect, [&](size_t i, const ecjit::Result<FileReport> &r) {
    ASSERT_LT(i, files.size());
    ++seen[i];
    ASSERT_TRUE(r.ok()) << files[i] << ": " << r.status().to_string();
    EXPECT_EQ(r->verdict, Verdict::kProtected) << files[i];
  });
  for (size_t i = 0; i < files.size(); ++i) {
    EXPECT_EQ(seen[i], 1) << files[i];
    expect_matches_reference(fx, files[i], "rs-vand:k=4,m=2", 4096);
    EXPECT_EQ(fx.scrub(files[i], false).verdict, Verdict::kClean) << files[i];
  }
}

}  // namespace

// Failure domains: redundancy file r of every file in domain r, the file's own bytes the
// reference codec's; a whole domain lost is one redundancy file of each file, rebuilt by a
// repair, and domain 0 lost (with the lock) leaves the others to restore from.
TEST(FileProtection, FailureDomainsHoldOneRedundancyFileEach) {
  const std::string spec = "rs-vand:k=3,m=3";
  Fixture fx("domains", spec, 4096, {"d0", "d1", "d2"});
  ASSERT_TRUE(fx.fp);
  ASSERT_EQ(system(("mkdir -p '" + fx.scratch.path("tree") + "'").c_str()), 0);
  const std::string path = fx.scratch.path("tree/data.bin"), original = random_bytes(3 * 4096 * 5 + 77, 31);
  write_file(path, original);
  ASSERT_EQ(fx.protect(path).verdict, Verdict::kProtected);
  expect_matches_reference(fx, path, spec, 4096);
  for (unsigned r = 0; r < 3; ++r) {
    const std::string domain = fx.scratch.path("d" + std::to_string(r));
    EXPECT_EQ(fx.fp->redundancy_path(path, r), domain + path + ".ecc" + std::to_string(r));
    EXPECT_EQ(access(fx.fp->redundancy_path(path, r).c_str(), F_OK), 0);
    for (unsigned q = 0; q < 3; ++q)
      if (q != r) EXPECT_NE(access((domain + path + ".ecc" + std::to_string(q)).c_str(), F_OK), 0) << "domain " << r;
  }
  EXPECT_NE(access(fx.scratch.path("tree/.ecjit").c_str(), F_OK), 0) << "redundancy went beside the data";

  // Domain 1 lost: the data is whole, its redundancy file is rebuilt into a new shadow tree.
  ASSERT_EQ(system(("rm -rf '" + fx.scratch.path("d1") + "'").c_str()), 0);
  FileReport r = fx.scrub(path, false);
  EXPECT_EQ(r.verdict, Verdict::kDamaged);
  r = fx.scrub(path, true);
  EXPECT_EQ(r.verdict, Verdict::kRepaired);
  expect_matches_reference(fx, path, spec, 4096);
  EXPECT_EQ(fx.scrub(path, false).verdict, Verdict::kClean);

  // Domain 0 lost (its redundancy file and the lock) and two data units corrupt: restored
  // from domains 1 and 2, and domain 0's file rebuilt.
  ASSERT_EQ(system(("rm -rf '" + fx.scratch.path("d0") + "'").c_str()), 0);
  flip_bit(path, 10);
  flip_bit(path, 4096 * 4 + 3);
  r = fx.scrub(path, true);
  EXPECT_EQ(r.verdict, Verdict::kRepaired) << (r.notes.empty() ? "" : r.notes[0]);
  EXPECT_TRUE(read_file(path) == original);
  expect_matches_reference(fx, path, spec, 4096);

  // A tree walk over the domains' parent leaves the domains out; prune removes every domain's
  // files of a deleted data file.
  auto files = fx.fp->expand({fx.scratch.dir});
  ASSERT_TRUE(files.ok()) << files.status().to_string();
  EXPECT_EQ(*files, std::vector<std::string>{path});
  ASSERT_EQ(unlink(path.c_str()), 0);
  auto pruned = fx.fp->prune({fx.scratch.path("tree")}, true);
  ASSERT_TRUE(pruned.ok()) << pruned.status().to_string();
  for (unsigned q = 0; q < 3; ++q) EXPECT_NE(access(fx.fp->redundancy_path(path, q).c_str(), F_OK), 0) << q;
}

TEST(FileProtection, FailureDomainsFewerThanMOrOverlappingAreRefused) {
  Scratch s("domains-bad");
  ProtectOptions o;
  o.spec = "rs-vand:k=4,m=3";
  o.ecc_domains = {s.path("a"), s.path("b")};
  auto fp = FileProtector::create(*test_jit(), o);
  ASSERT_FALSE(fp.ok());
  EXPECT_EQ(fp.status().code(), ecjit::StatusCode::kInvalidArgument);
  EXPECT_NE(fp.status().message().find("2 failure domains cannot hold one to a domain; give at least 3"),
            std::string::npos)
      << fp.status().message();
  o.ecc_domains = {s.path("a"), s.path("b"), s.path("a/c")};
  fp = FileProtector::create(*test_jit(), o);
  ASSERT_FALSE(fp.ok());
  EXPECT_NE(fp.status().message().find("overlap"), std::string::npos) << fp.status().message();
  // A protected file keeps its own code: one with more redundancy files than the domains is
  // refused when it is protected again, and nothing is written.
  o.ecc_domains = {s.path("a"), s.path("b"), s.path("c")};
  fp = FileProtector::create(*test_jit(), o);
  ASSERT_TRUE(fp.ok()) << fp.status().to_string();
  const std::string path = s.path("data.bin");
  write_file(path, random_bytes(40000, 5));
  ASSERT_TRUE((*fp)->protect(path).ok());
  o.spec = "";
  o.ecc_domains = {s.path("a"), s.path("b")};
  fp = FileProtector::create(*test_jit(), o);
  ASSERT_TRUE(fp.ok()) << fp.status().to_string();
  write_file(path, random_bytes(40000, 6));
  auto r = (*fp)->protect(path);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ecjit::StatusCode::kInvalidArgument) << r.status().to_string();
  EXPECT_NE(access((s.path("b") + path + ".ecc2").c_str(), F_OK), 0) << "two redundancy files in one domain";
  ecjit::files::ProtectOptions list;
  ecjit::files::set_redundancy_dirs(list, "x,y,z");
  EXPECT_EQ(list.ecc_domains, (std::vector<std::string>{"x", "y", "z"}));
  EXPECT_TRUE(list.ecc_dir.empty());
  ecjit::files::set_redundancy_dirs(list, "only");
  EXPECT_EQ(list.ecc_dir, "only");
  EXPECT_TRUE(list.ecc_domains.empty());
}
