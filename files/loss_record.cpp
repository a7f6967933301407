// loss_record: `<name>.lost` - a header line, then one "offset length" line per lost range.
#include "files/loss_record.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "files/file_io.h"

namespace ecjit::files {

namespace {
constexpr const char *kMagic = "ecjit-lost 1";
}  // namespace

std::vector<ByteRange> merge_ranges(std::vector<ByteRange> ranges) {
  std::sort(ranges.begin(), ranges.end(), [](const ByteRange &a, const ByteRange &b) { return a.offset < b.offset; });
  std::vector<ByteRange> out;
  for (const ByteRange &r : ranges) {
    if (r.length == 0) continue;
    if (!out.empty() && r.offset <= out.back().offset + out.back().length) {
      const uint64_t end = std::max(out.back().offset + out.back().length, r.offset + r.length);
      out.back().length = end - out.back().offset;
    } else {
      out.push_back(r);
    }
  }
  return out;
}

uint64_t total_bytes(const std::vector<ByteRange> &ranges) {
  uint64_t n = 0;
  for (const ByteRange &r : ranges) n += r.length;
  return n;
}

std::string describe_ranges(const std::vector<ByteRange> &ranges) {
  std::string s = "bytes ";
  size_t shown = 0;
  for (const ByteRange &r : ranges) {
    if (shown == 8) {
      s += ", ... (" + std::to_string(ranges.size() - shown) + " more ranges)";
      break;
    }
    s += (shown++ ? ", " : "") + std::to_string(r.offset) + "-" + std::to_string(r.offset + r.length - 1);
  }
  return s + " (" + std::to_string(total_bytes(ranges)) + " bytes)";
}

std::string loss_record_path(const std::string &ecc_base) { return ecc_base + ".lost"; }

Status write_loss_record(const std::string &ecc_base, const std::vector<ByteRange> &lost) {
  const std::string path = loss_record_path(ecc_base), tmp = path + ".tmp";
  std::string text = std::string(kMagic) + "\n";
  for (const ByteRange &r : lost) text += std::to_string(r.offset) + " " + std::to_string(r.length) + "\n";
  auto fd = open_file(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (!fd.ok()) return fd.status();
  Status st = write_at(fd->get(), 0, text.size(), reinterpret_cast<const uint8_t *>(text.data()), tmp);
  if (st.ok()) st = sync_file(fd->get(), tmp);
  if (st.ok() && ::rename(tmp.c_str(), path.c_str()) != 0)
    st = Status(StatusCode::kIoError, path + ": rename: " + std::strerror(errno));
  if (!st.ok()) {
    ::unlink(tmp.c_str());
    return st;
  }
  return sync_dir(dir_name(path));
}

std::optional<std::vector<ByteRange>> read_loss_record(const std::string &ecc_base) {
  std::ifstream in(loss_record_path(ecc_base));
  if (!in) return std::nullopt;
  std::string line;
  std::vector<ByteRange> out;
  if (!std::getline(in, line) || line != kMagic) return std::vector<ByteRange>{{0, UINT64_MAX}};
  while (std::getline(in, line)) {
    std::istringstream is(line);
    ByteRange r;
    if (!(is >> r.offset >> r.length)) return std::vector<ByteRange>{{0, UINT64_MAX}};
    out.push_back(r);
  }
  return out;
}

void remove_loss_record(const std::string &ecc_base) { ::unlink(loss_record_path(ecc_base).c_str()); }

}  // namespace ecjit::files
