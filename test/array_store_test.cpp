// ArrayStore (`ecjit edp --store`): degraded reads of a placed file, each read plan's XOR program on the runner first and compiled after, the file's bytes every time.
#include <gtest/gtest.h>

#include <stdlib.h>

#include <random>
#include <string>
#include <vector>

#include "codes/array_layout.h"
#include "codes/edp.h"
#include "ecjit/ecjit.h"
#include "jit/kernel_service.h"
#include "tools/array_store.h"

namespace ecjit {
namespace {

struct TempDir {
  std::string path;
  TempDir() {
    char tmpl[] = "/tmp/ecjit_array_store_XXXXXX";
    path = ::mkdtemp(tmpl) ? tmpl : "";
  }
  ~TempDir() {
    if (!path.empty()) (void)std::system(("rm -rf '" + path + "'").c_str());
  }
};

// No disk cache, no tuning: for the Jit and for the read plans' own kernel service.
template <typename Options> Options quiet() {
  Options o;
  o.disk_cache = false;
  o.tune = false;
  return o;
}

// X-Code p=5 in EDP placement, every disk failed in turn: a whole-file read and a read of a few
// elements across a stripe boundary equal the file; with a kernel service the plans' rebuilds
// start on the runner and, once the background compiles are done, run compiled; without one
// they stay on the runner.
TEST(ArrayStore, RebuildsMoveFromTheRunnerToCompiledKernelsSameBytes) {
  const size_t element = 4096;
  auto jit = Jit::create(quiet<JitOptions>());
  ASSERT_TRUE(jit.ok()) << jit.status().to_string();
  auto codec = (*jit)->array_codec("xcode:p=5,element=4096");
  ASSERT_TRUE(codec.ok()) << codec.status().to_string();
  const codes::ArrayLayout L = *codes::array_layout("xcode", 5);
  const codes::DataPlacement P = codes::place(L, codes::Placement::kEdp);
  std::vector<uint8_t> file(3 * P.cell_of.size() * element + 1000);  // a partial last stripe too
  std::mt19937_64 rng(19);
  for (auto &b : file) b = uint8_t(rng());
  TempDir dir;
  ASSERT_FALSE(dir.path.empty());
  ASSERT_TRUE(tools::ArrayStore::write(dir.path, **codec, L, P, file).ok());
  auto service = jit::KernelService::make(quiet<jit::ServiceOptions>());
  ASSERT_TRUE(service.ok()) << service.status().to_string();
  std::shared_ptr<jit::KernelService> programs = std::move(*service);
  const uint64_t off = P.cell_of.size() * element - 5000, size = 3 * element;  // across stripes 0 and 1
  for (unsigned failed = 0; failed < L.disks; ++failed) {
    for (bool compiled : {false, true}) {
      auto store = tools::ArrayStore::open(dir.path, L, P, element, failed, compiled ? programs : nullptr);
      ASSERT_TRUE(store.ok()) << store.status().to_string();
      std::vector<uint8_t> got(file.size());
      for (int round = 0; round < 2; ++round) {
        ASSERT_TRUE((*store)->read(0, file.size(), got.data()).ok());
        EXPECT_EQ(got, file) << "disk " << failed << " failed, round " << round;
        std::vector<uint8_t> part(size);
        ASSERT_TRUE((*store)->read(off, size, part.data()).ok());
        EXPECT_TRUE(std::equal(part.begin(), part.end(), file.begin() + long(off))) << "disk " << failed;
        if (compiled && round == 0) programs->wait_for_tuning();  // the plans' compiles done
      }
      EXPECT_GT((*store)->runner_rebuilds(), 0u) << "disk " << failed;
      if (compiled)
        EXPECT_GT((*store)->compiled_rebuilds(), 0u) << "disk " << failed;
      else
        EXPECT_EQ((*store)->compiled_rebuilds(), 0u) << "disk " << failed;
    }
  }
}

}  // namespace
}  // namespace ecjit
