// RedundancySet: the redundancy files of one data file as found on disk - parsed headers,
// why a file cannot be used, and which file of which run serves which stripe.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ecjit/status.h"
#include "files/file_io.h"
#include "files/redundancy_header.h"

namespace ecjit::files {

struct EccFile {
  std::string path;
  std::optional<RedundancyHeader> header;  // set when it parsed and belongs to the data file
  std::string problem;                     // why not usable ("" when usable)
  Fd fd;
};

struct RedundancySet {
  std::function<std::string(unsigned)> path_of;  // where redundancy file r of the data file lives
  std::vector<EccFile> files;                     // files[r] at path_of(r)

  // Opens and parses redundancy files 0 .. at least m_hint of them (more when a header says m
  // is larger). Missing, torn, or written for another data file (name or index): no header
  // and a problem. Errors: none today (every failure is a file's problem).
  static RedundancySet load(std::function<std::string(unsigned)> path_of, const std::string &data_name,
                            unsigned m_hint, bool writable);

  // The header of the newest protect run (the authority on the data's signatures); null when
  // no file is usable.
  const RedundancyHeader *newest() const;
  // Drops headers whose code, unit or data size differ from `auth`'s (they belong to another
  // version), and keeps exactly m files.
  void align_to(const RedundancyHeader &auth);
  // Whether file r can serve stripe s: its header is of the newest run, or of an older one
  // whose data signatures for s are the newest run's.
  bool serves(unsigned r, uint64_t s, const RedundancyHeader &auth) const;
};

}  // namespace ecjit::files
