// ArrayLayout: an array code at element level - a stripe of rows x disks cells, which cells hold parity, and the parity chains.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "codes/bitmatrix.h"
#include "ecjit/status.h"

namespace ecjit::codes {

// One stripe of an XOR array code as Shen et al. 2016 draw it: cell (row, disk) holds one element
// (a data element or a parity element); a parity chain is a parity cell and the cells XORed
// into it (data cells, or for RDP's diagonals also a row-parity cell). Parity cells stay
// where the code puts them; which logical data element a data cell holds is a placement
// (codes/edp.h). Cells are numbered row-major: cell = row * disks + disk.
struct ArrayLayout {
  struct Chain {
    unsigned parity = 0;             // the parity cell
    std::vector<unsigned> members;   // the cells XORed into it, ascending
  };
  std::string family;  // rdp, evenodd, star, xcode, bpcode
  unsigned p = 0;
  unsigned rows = 0;
  unsigned disks = 0;
  std::vector<Chain> chains;      // in the code's numbering (Shen et al. 2016's R_1, R_2, ...)
  std::vector<int> chain_of_cell; // per cell: the chain whose parity it is, or -1 (data)

  unsigned cells() const { return rows * disks; }
  unsigned cell(unsigned row, unsigned disk) const { return row * disks + disk; }
  unsigned row_of(unsigned c) const { return c / disks; }
  unsigned disk_of(unsigned c) const { return c % disks; }
  bool is_parity(unsigned c) const { return chain_of_cell[c] >= 0; }
  // The data cells, row-major.
  std::vector<unsigned> data_cells() const;
  // Chains in an order in which every member parity is computed before it is read.
  std::vector<unsigned> encode_order() const;
};

// The layout of `family` with prime p. Errors: kInvalidSpec naming the rule (p prime >= 5
// for xcode and bpcode, >= 3 for rdp and evenodd; an unknown family with the known ones).
//   rdp      p + 1 disks, p - 1 rows: data disks 0..p-2, row parity disk p-1, diagonal
//            parity disk p (diagonal d: cells (<d - j>, j), j = 0..p-1, through the P disk).
//   evenodd  p + 2 disks, p - 1 rows: row parity disk p, disk p + 1 the diagonals, each
//            with the adjuster diagonal's cells (Blaum et al.).
//   star     p + 3 disks, p - 1 rows: EVENODD's P and Q on disks p and p + 1, and disk p + 2
//            the anti-diagonals (<i + j>, j), each with its adjuster (Huang, Xu 2005).
//   xcode    p disks, p rows: rows 0..p-3 data; row p-2 the diagonals, cell (p-2, i) =
//            XOR_{r=0}^{p-3} (r, <i + r + 2>); row p-1 the anti-diagonals, (p-1, i) =
//            XOR_r (r, <i - r - 2>) (Xu, Bruck 1999). Chains 0..p-1 diagonal, p..2p-1 anti.
//   bpcode   p - 1 disks (P-Code's columns 1..p-1), (p - 1) / 2 rows: row 0 parity P_c of
//            column c, the data element {x, y} (x != y, x + y != 0 mod p) in column
//            <x + y> and in the chains of P_x and P_y (P-Code, Jin et al. 2009). Balanced
//            as BP-Code asks: rows are assigned so that every chain has its p - 3 data
//            elements two to a row (a deterministic search of ecjit's own; not the row order
//            of the BP-Code paper, which the references do not include).
Result<ArrayLayout> array_layout(const std::string &family, unsigned p);
// The same with p up to max_p instead of 61 (the bound that keeps a stripe's disks within
// the 64-bit masks of ArrayCodec and the EDP planner): the bit-matrix builders of rdp,
// evenodd and star (codes/array_codes.h) take any p their spec admits.
Result<ArrayLayout> array_layout(const std::string &family, unsigned p, unsigned max_p);
// The layout families, for messages and help.
const char *array_layout_families();

// Whether the erasure of every set of up to `failures` disks leaves the lost cells
// determined by the chains (GF(2) elimination over the cells). Returns the first set that
// does not decode in `bad` when false.
bool tolerates(const ArrayLayout &layout, unsigned failures, std::vector<unsigned> *bad = nullptr);

// Whether `target` is determined by the cells in `known` (a mask over cells) and the chains:
// some XOR of chain equations involves only known cells and target.
bool recoverable(const ArrayLayout &layout, const std::vector<bool> &known, unsigned target);

// Each cell in `unknown` (a mask over cells) as the XOR of cells outside it: row i of *map is
// unknown cell (*lost)[i] over the columns (*known) (both ascending), by GF(2) elimination of
// the chain equations. Parity cells unknown: the encoder (known = data cells); every cell of
// failed disks unknown: their rebuild. Errors: kTooManyErasures when the chains do not
// determine them all.
Status solve_cells(const ArrayLayout &layout, const std::vector<bool> &unknown, BitMatrix *map,
                   std::vector<unsigned> *lost, std::vector<unsigned> *known);

// An array code for a codec: "xcode:p=7[,element=64]" (also rdp, evenodd, bpcode); element:
// bytes per cell, a multiple of 8 (default 64). Errors: kInvalidSpec naming the part.
struct ArraySpec {
  std::string family;
  unsigned p = 0;
  unsigned element = 64;
  std::string to_string() const;
};
Result<ArraySpec> parse_array_spec(const std::string &text);

// The reference encoder: every parity cell of one stripe from its data cells, in
// encode_order(). cells[c] points at cell c's `bytes` bytes.
void encode_layout(const ArrayLayout &layout, uint8_t *const *cells, size_t bytes);
// The same over whole disk buffers (ArrayCodec's layout: cell (row, disk) of stripe s at
// (s * rows + row) * element of disk's buffer), stripe by stripe; len a multiple of
// rows * element.
void encode_disks(const ArrayLayout &layout, uint8_t *const *disks, size_t len, size_t element);

// Whether `family` keeps its parity on the data disks (xcode, bpcode): an array code only
// (Jit::array_codec), never a k + m codec spec.
bool parity_on_data_disks(const std::string &family);

}  // namespace ecjit::codes
