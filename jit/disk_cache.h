// DiskCache: compiled kernel objects on disk, keyed by everything the machine code depends on.
#pragma once

#include <memory>
#include <optional>
#include <cstddef>
#include <string>

namespace llvm {
class MemoryBuffer;
}  // namespace llvm

namespace ecjit::jit {

// One file per kernel under `dir`: <hex xxh3(key)>.ecjit-obj holding a header (magic,
// format version, the full key, object size, xxh3 of the object) and the object bytes.
// load() returns the object only when the magic, the full key, the size and the checksum
// all match and the bytes parse as an object file for this host; anything else (truncated,
// tampered, written by another LLVM / CPU / ecjit build: those are part of the key) is
// treated as a miss and later overwritten. store() writes a temporary file and renames it,
// so readers never see half a file. Thread- and process-safe; failures to write are
// silent (the cache is an optimisation).
// Not a security boundary: a writer with access to the directory can forge entries.
class DiskCache {
 public:
  explicit DiskCache(std::string dir) : dir_(std::move(dir)) {}

  // The default directory: $ECJIT_CACHE_DIR, else $XDG_CACHE_HOME/ecjit, else
  // $HOME/.cache/ecjit; empty when none can be formed.
  static std::string default_dir();
  // Identity of the code that generated the objects: LLVM version plus the path, size and
  // modification time of the binary ecjit is linked into, so a rebuilt ecjit never reuses
  // objects of an older builder.
  static const std::string &build_identity();

  const std::string &dir() const { return dir_; }
  std::unique_ptr<llvm::MemoryBuffer> load(const std::string &key) const;
  void store(const std::string &key, const llvm::MemoryBuffer &object) const;
  // Path of the file for `key` (tests corrupt it on purpose).
  std::string path_for(const std::string &key) const;
  // Small text records (tuning decisions), validated like objects but not parsed.
  std::optional<std::string> load_text(const std::string &key) const;
  void store_text(const std::string &key, const std::string &text) const;
  // Deletes all but the newest kMaxEntries entries (also run every 64th store()).
  void prune() const;
  static constexpr size_t kMaxEntries = 4096;

 private:
  std::string dir_;
};

}  // namespace ecjit::jit
