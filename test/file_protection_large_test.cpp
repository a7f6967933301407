// File protection of a sparse file larger than 4 GiB: offsets past 2^32 are
// protected, damage there is found and repaired, and memory stays bounded (unit buffers
// only, not the file). Labelled slow: it reads ~9 GiB of holes.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <random>
#include <string>

#include "ecjit/file_protection.h"
#include "ecjit/jit.h"

namespace {

using ecjit::files::Verdict;

std::string pread_string(const std::string &path, uint64_t off, size_t len) {
  std::string s(len, '\0');
  int fd = open(path.c_str(), O_RDONLY);
  EXPECT_GE(fd, 0);
  EXPECT_EQ(pread(fd, s.data(), len, off_t(off)), ssize_t(len));
  close(fd);
  return s;
}
void pwrite_string(const std::string &path, uint64_t off, const std::string &s, bool keep_mtime) {
  struct stat st;
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  int fd = open(path.c_str(), O_WRONLY | O_CREAT, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(pwrite(fd, s.data(), s.size(), off_t(off)), ssize_t(s.size()));
  if (keep_mtime) {
    struct timespec t[2] = {st.st_atim, st.st_mtim};
    futimens(fd, t);
  }
  close(fd);
}

TEST(FileProtectionLarge, SparseFilePast4GiB) {
  const std::string dir = ::testing::TempDir() + "ecjit-files-large-" + std::to_string(getpid());
  ASSERT_EQ(system(("rm -rf '" + dir + "' && mkdir -p '" + dir + "'").c_str()), 0);
  const std::string path = dir + "/sparse.img";
  const uint64_t size = (uint64_t(1) << 32) + (uint64_t(300) << 20);
  {
    int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(ftruncate(fd, off_t(size)), 0);
    close(fd);
  }
  std::mt19937 rng(1);
  std::string block(1 << 20, '\0');
  for (char &c : block) c = char(rng());
  const uint64_t offsets[] = {0, (uint64_t(1) << 32) - 4096, size - block.size()};
  for (uint64_t off : offsets) {
    struct stat st;
    ASSERT_EQ(stat(path.c_str(), &st), 0);
    pwrite_string(path, off, block, false);
  }
  ecjit::JitOptions jo;
  jo.disk_cache = false;
  auto jit = ecjit::Jit::create(jo);
  ASSERT_TRUE(jit.ok());
  ecjit::files::ProtectOptions o;
  o.spec = "rs-vand:k=8,m=2";
  o.unit = 16 << 20;
  o.threads = 2;
  auto fp = ecjit::files::FileProtector::create(**jit, o);
  ASSERT_TRUE(fp.ok());
  auto r = (*fp)->protect(path);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->verdict, Verdict::kProtected);
  EXPECT_EQ(r->file_size, size);
  EXPECT_EQ(r->stripes, (size + 8 * o.unit - 1) / (8 * o.unit));

  // Silent corruption past 2^32 (inside the block that straddles it) and near the end.
  const uint64_t bad[] = {(uint64_t(1) << 32) + 5, size - 100};
  for (uint64_t off : bad) {
    std::string b = pread_string(path, off, 1);
    b[0] ^= 1;
    pwrite_string(path, off, b, true);
  }
  auto s = (*fp)->scrub(path, false);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  EXPECT_EQ(s->verdict, Verdict::kDamaged);
  ASSERT_EQ(s->damage.size(), 2u);
  EXPECT_EQ(s->damage[0].stripe, ((uint64_t(1) << 32) + 5) / (8 * o.unit));
  auto fixed = (*fp)->scrub(path, true);
  ASSERT_TRUE(fixed.ok()) << fixed.status().to_string();
  EXPECT_EQ(fixed->verdict, Verdict::kRepaired);
  for (uint64_t off : offsets) EXPECT_TRUE(pread_string(path, off, block.size()) == block) << off;
  EXPECT_EQ((*fp)->scrub(path, false)->verdict, Verdict::kClean);

  // Bounded buffers: two workers x (k + m) units, not the file.
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  EXPECT_LT(uint64_t(ru.ru_maxrss) * 1024, uint64_t(1) << 30) << "peak RSS " << ru.ru_maxrss << " KiB";
  ASSERT_EQ(system(("rm -rf '" + dir + "'").c_str()), 0);
}

}  // namespace
