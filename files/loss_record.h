// loss_record: the byte ranges of a data file that a check found beyond repair, kept in
// `<name>.lost` beside its redundancy until a check finds the file whole or protect is told
// to accept the loss.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ecjit/file_protection.h"

namespace ecjit::files {

using ByteRange = FileReport::ByteRange;

// Sorted, with touching or overlapping ranges merged.
std::vector<ByteRange> merge_ranges(std::vector<ByteRange> ranges);
uint64_t total_bytes(const std::vector<ByteRange> &ranges);
// "bytes 0-4095, 8192-12287 (8192 bytes)": each range first-last inclusive.
std::string describe_ranges(const std::vector<ByteRange> &ranges);

// The record of `ecc_base` (the redundancy's shadow name without ".ecc<r>").
std::string loss_record_path(const std::string &ecc_base);
// Written to a temporary file, fsynced and renamed. Errors: kIoError.
Status write_loss_record(const std::string &ecc_base, const std::vector<ByteRange> &lost);
// The recorded ranges; nullopt when there is no record (an unreadable or foreign record
// reads as one range over everything: the loss stays recorded).
std::optional<std::vector<ByteRange>> read_loss_record(const std::string &ecc_base);
// Removes the record (no error when there is none).
void remove_loss_record(const std::string &ecc_base);

}  // namespace ecjit::files
