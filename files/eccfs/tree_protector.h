// The file protector of an ECCFS tree: its configuration's code, unit and redundancy directory, one thread.
#pragma once

#include <cstdint>
#include <memory>

#include "ecjit/ecjit.h"
#include "ecjit/file_protection.h"
#include "files/eccfs/changelog.h"

namespace ecjit::eccfs {

struct TreeProtector {
  std::shared_ptr<Jit> jit;  // outlives the protector that uses it
  std::unique_ptr<files::FileProtector> protector;
};

// Whether `path` exists (a data file or a redundancy file).
bool path_exists(const std::string &path);

// A one-thread Jit and FileProtector for `tree` (max_rate bytes per second, 0: unlimited).
Result<TreeProtector> open_tree_protector(const TreeConfig &tree, uint64_t max_rate = 0);

}  // namespace ecjit::eccfs
