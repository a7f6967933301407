// array_planner: the XOR kernels of an element-level array code (encoder, rebuilds of failed disks, one disk's update), planned alike for the runtime and the tools.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "codes/array_layout.h"
#include "ecjit/status.h"
#include "jit/xor_planner.h"

namespace ecjit::jit {

// Every kernel of an array code takes the disks' buffers as both its input and its output
// pointer array (one pointer per disk, len a multiple of rows x element bytes); a packet
// (shard, x) of its desc is cell (row x, disk shard). plan.map is the cell map the program
// computes: rows = the cells written, columns = the cells read, in desc order; plan.sources
// the disks read, ascending.

// The cells `unknown` marks, from all the others (codes::solve_cells); `op` names the symbol
// ("encode", "rebuild_d0_3", ...); best: codes::best_schedule (for a compiled kernel), else
// the smart schedule (microseconds: a first call's runner). Errors: solve_cells's
// (kTooManyErasures when the others do not determine them).
Result<XorPlan> array_cells_plan(const codes::ArraySpec &spec, const codes::ArrayLayout &layout,
                                 const std::vector<bool> &unknown, const std::string &op,
                                 const std::string &target_name, bool best);
// The encoder: every parity cell from the data cells; best schedule.
Result<XorPlan> array_encoder_plan(const codes::ArraySpec &spec, const codes::ArrayLayout &layout,
                                   const std::string &target_name);
// Every cell of the disks in `failed` (a bit per disk) from the other disks' cells. Errors:
// kTooManyErasures naming the disks when the code cannot rebuild them; kInvalidArgument for
// no disk or a disk out of range.
Result<XorPlan> array_rebuild_plan(const codes::ArraySpec &spec, const codes::ArrayLayout &layout,
                                   uint64_t failed, const std::string &target_name, bool best);
// Adds (XOR) the parity change of a change to `disk`'s data cells into every parity cell it
// reaches: inputs are that disk's data cells (holding old ^ new), accumulate; from the
// encoder's kernel and cell map. Errors: kInvalidArgument when the disk holds no data cells.
Result<XorPlan> array_update_plan(const codes::ArraySpec &spec, const codes::ArrayLayout &layout,
                                  const ir::XorKernelDesc &encoder, const codes::BitMatrix &encoder_map,
                                  unsigned disk, const std::string &target_name);


// The cells that rows r0..r1 of lost disk `disk` are read from, per row ((disk, row) pairs):
// each from one parity chain whose other cells are all on live disks (codes::plan_cell_read:
// the chains of the rows chosen together for the fewest cells), else from its row of the
// failed set's rebuild (`rebuild` / `rebuild_map`: array_rebuild_plan's desc and map).
// *cells (optional) gets the number of distinct cells read. Used alike by the runtime's
// ranged reads and by `ecjit aot`'s read kernels. Errors: plan_cell_read's, kInvalidArgument
// (rows out of range, a lost cell the rebuild does not write).
using CellSources = std::vector<std::vector<std::pair<unsigned, unsigned>>>;
Result<CellSources> array_read_sources(const codes::ArrayLayout &layout, uint64_t failed, unsigned disk, unsigned r0,
                                       unsigned r1, const ir::XorKernelDesc &rebuild,
                                       const codes::BitMatrix &rebuild_map, size_t *cells = nullptr);

// A degraded read's program: every row of lost disk `disk` from the cells `sources[r]`
// names for row r ((disk, row) pairs, chains chosen by codes::plan_cell_read), written to
// out pointer 0 laid out as that disk (rows x element bytes per stripe); inputs are the disk
// array as for the other kernels. `failed` names the failed set in the symbol. Smart
// schedule. Errors: kInvalidArgument (sources not one list per row, a cell out of range).
Result<XorPlan> array_read_plan(const codes::ArraySpec &spec, const codes::ArrayLayout &layout, uint64_t failed,
                                unsigned disk, const CellSources &sources,
                                const std::string &target_name);

}  // namespace ecjit::jit
