// RedundancyHeader: serialization and checked parsing of the redundancy file header.
#include "files/redundancy_header.h"

#include <cstring>

#include "llvm/Support/xxhash.h"

namespace ecjit::files {
namespace {

constexpr char kMagic[8] = {'E', 'C', 'J', 'I', 'T', 'E', 'C', 'C'};
constexpr uint64_t kFixed = 128;  // fixed fields, then spec and name, then the table

uint64_t pad8(uint64_t n) { return (n + 7) & ~uint64_t(7); }

void put32(std::vector<uint8_t> &b, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i) b[at + i] = uint8_t(v >> (8 * i));
}
void put64(std::vector<uint8_t> &b, size_t at, uint64_t v) {
  for (int i = 0; i < 8; ++i) b[at + i] = uint8_t(v >> (8 * i));
}
uint32_t get32(const uint8_t *p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= uint32_t(p[i]) << (8 * i);
  return v;
}
uint64_t get64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= uint64_t(p[i]) << (8 * i);
  return v;
}

Status torn(const std::string &why) { return Status(StatusCode::kIoError, "torn header: " + why); }

}  // namespace

static uint64_t body_bytes(uint64_t spec_len, uint64_t name_len, uint64_t table_bytes) {
  return kFixed + pad8(spec_len) + pad8(name_len) + table_bytes + 8;  // + checksum
}

uint64_t RedundancyHeader::header_bytes() const {
  const uint64_t body = body_bytes(spec.size(), name.size(), sigs.size() * 8);
  return (body + kAlign - 1) / kAlign * kAlign;
}

std::vector<uint8_t> RedundancyHeader::serialize() const {
  const uint64_t table_bytes = sigs.size() * 8;
  const uint64_t body = body_bytes(spec.size(), name.size(), table_bytes);
  std::vector<uint8_t> b(header_bytes(), 0);
  memcpy(b.data(), kMagic, 8);
  put32(b, 8, kFormat);
  put32(b, 12, k);
  put32(b, 16, m);
  put32(b, 20, ecc_index);
  put64(b, 24, unit);
  put64(b, 32, data.size);
  put64(b, 40, uint64_t(data.mtime_ns));
  put64(b, 48, data.inode);
  put64(b, 56, data.dev);
  put64(b, 64, run_id);
  put64(b, 72, uint64_t(created_ns));
  put64(b, 80, stripes());
  put32(b, 88, uint32_t(spec.size()));
  put32(b, 92, uint32_t(name.size()));
  put64(b, 96, table_bytes);
  put64(b, 104, b.size());
  size_t at = kFixed;
  memcpy(&b[at], spec.data(), spec.size());
  at += pad8(spec.size());
  memcpy(&b[at], name.data(), name.size());
  at += pad8(name.size());
  for (uint64_t s : sigs) {
    put64(b, at, s);
    at += 8;
  }
  put64(b, body - 8, llvm::xxh3_64bits(llvm::ArrayRef<uint8_t>(b.data(), body - 8)));
  return b;
}

Result<RedundancyHeader> RedundancyHeader::parse(
    const std::vector<uint8_t> &first, const std::function<Status(uint64_t, uint64_t, uint8_t *)> &read_more) {
  if (first.size() < kFixed) return torn("shorter than " + std::to_string(kFixed) + " bytes");
  const uint8_t *p = first.data();
  if (memcmp(p, kMagic, 8) != 0) return torn("not an ecjit redundancy file (bad magic)");
  if (get32(p + 8) != kFormat)
    return torn("format " + std::to_string(get32(p + 8)) + " (this ecjit reads format " + std::to_string(kFormat) + ")");
  RedundancyHeader h;
  h.k = get32(p + 12);
  h.m = get32(p + 16);
  h.ecc_index = get32(p + 20);
  h.unit = get64(p + 24);
  h.data.size = get64(p + 32);
  h.data.mtime_ns = int64_t(get64(p + 40));
  h.data.inode = get64(p + 48);
  h.data.dev = get64(p + 56);
  h.run_id = get64(p + 64);
  h.created_ns = int64_t(get64(p + 72));
  const uint64_t stripes = get64(p + 80), spec_len = get32(p + 88), name_len = get32(p + 92),
                 table_bytes = get64(p + 96), total = get64(p + 104);
  if (h.k == 0 || h.m == 0 || h.k > 65536 || h.m > 65536 || h.ecc_index >= h.m || h.unit == 0 ||
      h.unit > (uint64_t(1) << 40) || spec_len > 4096 || name_len > 4096)
    return torn("field out of range");
  if (h.stripes() != stripes || table_bytes != stripes * (h.k + 1) * 8 || table_bytes / 8 / (h.k + 1) != stripes)
    return torn("stripe table size disagrees with the file size");
  const uint64_t body = body_bytes(spec_len, name_len, table_bytes);
  if (total > kMaxBytes || total < body || total % kAlign != 0) return torn("header size out of range");
  std::vector<uint8_t> all(first.begin(), first.begin() + std::min<uint64_t>(first.size(), body));
  if (all.size() < body) {
    const uint64_t have = all.size();
    all.resize(body);
    ECJIT_RETURN_IF_ERROR(read_more(have, body - have, all.data() + have));
  }
  p = all.data();
  if (get64(p + body - 8) != llvm::xxh3_64bits(llvm::ArrayRef<uint8_t>(p, body - 8)))
    return torn("checksum mismatch");
  size_t at = kFixed;
  h.spec.assign(reinterpret_cast<const char *>(p + at), spec_len);
  at += pad8(spec_len);
  h.name.assign(reinterpret_cast<const char *>(p + at), name_len);
  at += pad8(name_len);
  h.sigs.resize(table_bytes / 8);
  for (uint64_t &s : h.sigs) {
    s = get64(p + at);
    at += 8;
  }
  if (h.header_bytes() != total) return torn("header size disagrees with its contents");
  return h;
}

}  // namespace ecjit::files
