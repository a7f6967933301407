// xor_table: `ecjit stats --xor-table`, the XOR counts of bit-matrix codes next to Plank et al. 2009 and
// Zhou and Tian 2019.
#pragma once

#include <string>

namespace ecjit::tools {

// Prints the tables (Zhou and Tian 2019, Table 3 without its search columns; Plank et al. 2009's XORs per coding
// word per family) and writes them as CSV to `csv_path` (empty: no CSV). Returns the exit
// code (0, or 1 when a schedule fails its symbolic check or the CSV cannot be written).
int print_xor_table(const std::string &csv_path);

}  // namespace ecjit::tools
