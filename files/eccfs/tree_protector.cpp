// open_tree_protector: what a worker and a scan share to read and write a tree's redundancy.
#include "files/eccfs/tree_protector.h"

#include <unistd.h>

namespace ecjit::eccfs {

bool path_exists(const std::string &path) { return ::access(path.c_str(), F_OK) == 0; }

Result<TreeProtector> open_tree_protector(const TreeConfig &tree, uint64_t max_rate) {
  JitOptions jo;
  jo.threads = 1;
  auto jit = Jit::create(jo);
  if (!jit.ok()) return jit.status();
  files::ProtectOptions po;
  po.spec = tree.spec;
  po.unit = tree.unit;
  files::set_redundancy_dirs(po, tree.ecc_dir);
  po.threads = 1;
  po.max_rate = max_rate;
  auto protector = files::FileProtector::create(**jit, po);
  if (!protector.ok()) return protector.status();
  return TreeProtector{std::move(*jit), std::move(*protector)};
}

}  // namespace ecjit::eccfs
