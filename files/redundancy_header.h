// RedundancyHeader: the self-checking header of a redundancy file - code, data file identity
// and per-stripe algebraic signatures (docs/files.md has the byte layout).
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ecjit/status.h"

namespace ecjit::files {

// The identity a data file had when it was protected.
struct DataIdentity {
  uint64_t size = 0;
  int64_t mtime_ns = 0;
  uint64_t inode = 0;
  uint64_t dev = 0;
  // Size and mtime: what survives a copy with its attributes (inode and dev do not).
  bool same_contents_claim(const DataIdentity &o) const { return size == o.size && mtime_ns == o.mtime_ns; }
};

struct RedundancyHeader {
  static constexpr uint32_t kFormat = 1;
  static constexpr uint32_t kAlign = 4096;  // ECC units start at a multiple of this
  static constexpr uint64_t kMaxBytes = uint64_t(1) << 32;

  std::string spec;  // canonical code spec
  uint32_t k = 0, m = 0, ecc_index = 0;
  uint64_t unit = 0;
  DataIdentity data;
  std::string name;       // the data file's base name (a header moved to another file is foreign)
  uint64_t run_id = 0;    // shared by the m files one protect run wrote
  int64_t created_ns = 0; // wall clock of that run
  // Per stripe: k data signatures then this file's ECC signature, 8 bytes each (the
  // signature's 64 / l components of l bits, packed little-endian).
  std::vector<uint64_t> sigs;

  uint64_t stripes() const { return data.size == 0 ? 0 : (data.size + uint64_t(k) * unit - 1) / (uint64_t(k) * unit); }
  uint64_t &data_sig(uint64_t stripe, unsigned j) { return sigs[stripe * (k + 1) + j]; }
  uint64_t data_sig(uint64_t stripe, unsigned j) const { return sigs[stripe * (k + 1) + j]; }
  uint64_t &ecc_sig(uint64_t stripe) { return sigs[stripe * (k + 1) + k]; }
  uint64_t ecc_sig(uint64_t stripe) const { return sigs[stripe * (k + 1) + k]; }

  // Unit bytes of a stripe: `unit`, except the last stripe's, which is just long enough for
  // the data left (ceil(rest / k) rounded up to 64 bytes): a small file's redundancy is about
  // m / k of its size, not m whole units.
  uint64_t stripe_unit(uint64_t stripe) const {
    const uint64_t full = uint64_t(k) * unit, last = stripes() - 1;
    if (stripe < last) return unit;
    const uint64_t rest = data.size - last * full, per = (rest + k - 1) / k;
    return std::min<uint64_t>(unit, (per + 63) / 64 * 64);
  }
  // Where data unit j of a stripe starts in the data file.
  uint64_t data_offset(uint64_t stripe, unsigned j) const { return stripe * k * unit + j * stripe_unit(stripe); }
  // Bytes of data unit j inside the data file (the rest of the unit is zero padding).
  uint64_t data_bytes(uint64_t stripe, unsigned j) const {
    const uint64_t off = data_offset(stripe, j);
    return off >= data.size ? 0 : std::min<uint64_t>(stripe_unit(stripe), data.size - off);
  }
  // Bytes of the serialized header, padded to kAlign: where ECC unit 0 starts.
  uint64_t header_bytes() const;
  uint64_t unit_offset(uint64_t stripe) const { return header_bytes() + stripe * unit; }
  // Size of the whole redundancy file.
  uint64_t file_bytes() const { return stripes() ? unit_offset(stripes() - 1) + stripe_unit(stripes() - 1) : header_bytes(); }

  std::vector<uint8_t> serialize() const;
  // Parses and checks a header read from the start of a file (at least its first kAlign
  // bytes; `read_more(offset, len, out)` fetches the rest). Errors: kIoError with "torn"
  // (bad magic, format, sizes or checksum) or the read's failure.
  static Result<RedundancyHeader> parse(const std::vector<uint8_t> &first,
                                        const std::function<Status(uint64_t, uint64_t, uint8_t *)> &read_more);
};

}  // namespace ecjit::files
