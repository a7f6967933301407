// Data placement on an array code's stripe (horizontal, vertical, the EDP of Shen et al. 2016) and the
// degraded-read planner.
#pragma once

#include <string>
#include <vector>

#include "codes/array_layout.h"
#include "ecjit/status.h"

namespace ecjit::codes {

enum class Placement {
  kHorizontal,  // logical data elements row by row across the disks
  kVertical,    // disk by disk, down the rows
  kEdp,         // Shen et al. 2016: Algorithm 1 (greedy chain order by overlap) + Algorithm 2 (refinement)
};
const char *placement_name(Placement p);

// Which logical data element each data cell holds: a bijection of 0..K-1 (K data cells)
// onto the data cells; parity cells are the layout's and never move.
struct DataPlacement {
  std::vector<unsigned> cell_of;     // logical element -> cell
  std::vector<int> logical_of_cell;  // cell -> logical element, -1 for parity cells
  std::vector<unsigned> order;       // EDP: the chains in generation order (O); else empty
};

DataPlacement place(const ArrayLayout &layout, Placement placement);
// EDP's two steps, exposed for tests: Algorithm 1 alone, then Algorithm 2 on its result.
// Algorithm 1: starting from chain 0, repeatedly take the unfinished chain (one with a blank
// data cell) that shares the most data cells with the chain taken last (ties: the lower
// chain number) and fill its blank data cells with the next logical elements, in cell order.
DataPlacement edp_greedy(const ArrayLayout &layout);
// Algorithm 2: for consecutive chains (cur, next) of O, every movable element of cur that is
// also in next trades cells with the last (highest) movable element of cur; both become
// unmovable - so the elements two chains share end cur's run and start next's.
void edp_refine(const ArrayLayout &layout, DataPlacement *placement);

// The cells one stripe's degraded read touches: the requested logical elements
// [first, first + count) with disk `failed` lost. Requested cells on other disks are read;
// each lost one is rebuilt from one of its chains whose other cells are all off the failed
// disk, the chains chosen together (exhaustively, up to 2^16 combinations, else greedily)
// for the fewest cells read in all. A lost element no single chain rebuilds falls back to
// reading every surviving cell of the stripe.
struct ReadPlan {
  std::vector<unsigned> cells;   // every cell read, ascending
  std::vector<int> chain_used;   // per requested element: the chain rebuilding it, -1 if read
                                 // directly, -2 if rebuilt by the whole-stripe fallback
  size_t extra() const;          // cells read beyond the requested ones
  size_t requested = 0;
};
Result<ReadPlan> plan_degraded_read(const ArrayLayout &layout, const DataPlacement &placement,
                                    unsigned failed, unsigned first, unsigned count);

// The same choice for any cells of one stripe (data or parity) with any disks failed
// (`failed`: a mask over the disks): a requested cell on a live disk is read (chain_used
// -1); a lost one is rebuilt from one of the chains it is in (as the chain's parity: from
// its members; as a member: from the parity and the other members) whose other cells are
// all on live disks, chosen together for the fewest cells read, else -2: no single chain
// serves it, and `cells` has every cell of the live disks (the caller rebuilds it from
// them, e.g. by codes::solve_cells). Errors: kInvalidArgument (a cell out of range, no cell).
Result<ReadPlan> plan_cell_read(const ArrayLayout &layout, const std::vector<bool> &failed,
                                const std::vector<unsigned> &cells);

}  // namespace ecjit::codes
