// array_planner: cell maps of an array code's operations (codes::solve_cells), their schedules and cell packets.
#include "jit/array_planner.h"

#include <algorithm>
#include <cstdio>

#include "codes/edp.h"
#include "ir_builders/kernel_builder.h"

namespace ecjit::jit {
namespace {

std::string join(const std::vector<unsigned> &v, const char *sep) {
  std::string s;
  for (unsigned x : v) s += (s.empty() ? "" : sep) + std::to_string(x);
  return s;
}

}  // namespace

Result<XorPlan> array_cells_plan(const codes::ArraySpec &spec, const codes::ArrayLayout &layout,
                                 const std::vector<bool> &unknown, const std::string &op,
                                 const std::string &target_name, bool best) {
  XorPlan p;
  std::vector<unsigned> lost, known;
  ECJIT_RETURN_IF_ERROR(codes::solve_cells(layout, unknown, &p.map, &lost, &known));
  for (unsigned c : known) p.desc.inputs.push_back({layout.disk_of(c), layout.row_of(c)});
  for (unsigned c : lost) p.desc.outputs.push_back({layout.disk_of(c), layout.row_of(c)});
  std::vector<bool> read(layout.disks, false);
  for (unsigned c : known) read[layout.disk_of(c)] = true;
  for (unsigned d = 0; d < layout.disks; ++d)
    if (read[d]) p.sources.push_back(d);
  p.desc.w = layout.rows;
  p.desc.packet = spec.element;
  p.op = op;
  p.desc.symbol = ir::kernel_symbol(op, spec.to_string(), target_name);
  if (best) return with_best_schedule(std::move(p));  // checked by best_schedule
  ECJIT_RETURN_IF_ERROR(apply_schedule(&p, codes::XorSchedule::kSmart));
  return p;
}

Result<XorPlan> array_encoder_plan(const codes::ArraySpec &spec, const codes::ArrayLayout &layout,
                                   const std::string &target_name) {
  std::vector<bool> parity(layout.cells());
  for (unsigned cell = 0; cell < layout.cells(); ++cell) parity[cell] = layout.is_parity(cell);
  return array_cells_plan(spec, layout, parity, "encode", target_name, /*best=*/true);
}

Result<XorPlan> array_rebuild_plan(const codes::ArraySpec &spec, const codes::ArrayLayout &layout,
                                   uint64_t failed, const std::string &target_name, bool best) {
  if (failed == 0) return Status(StatusCode::kInvalidArgument, "rebuild of " + spec.to_string() + ": no disk failed");
  if (layout.disks < 64 && (failed >> layout.disks) != 0)
    return Status(StatusCode::kInvalidArgument, "rebuild of " + spec.to_string() + ": a failed disk past disk " +
                                                    std::to_string(layout.disks - 1));
  std::vector<unsigned> lost_disks;
  for (unsigned d = 0; d < layout.disks; ++d)
    if ((failed >> d) & 1) lost_disks.push_back(d);
  std::vector<bool> unknown(layout.cells());
  for (unsigned c = 0; c < layout.cells(); ++c) unknown[c] = (failed >> layout.disk_of(c)) & 1;
  Result<XorPlan> p = array_cells_plan(spec, layout, unknown, "rebuild_d" + join(lost_disks, "_"), target_name, best);
  if (!p.ok() && p.status().code() == StatusCode::kTooManyErasures)
    return Status(StatusCode::kTooManyErasures, spec.to_string() + " cannot rebuild disks " + join(lost_disks, ",") +
                                                    ": " + p.status().message());
  return p;
}

Result<XorPlan> array_update_plan(const codes::ArraySpec &spec, const codes::ArrayLayout &layout,
                                  const ir::XorKernelDesc &encoder, const codes::BitMatrix &encoder_map,
                                  unsigned disk, const std::string &target_name) {
  // The encoder's map restricted to the disk's data cells, without the parity cells they
  // do not reach.
  std::vector<unsigned> cols;
  for (unsigned j = 0; j < encoder.inputs.size(); ++j)
    if (encoder.inputs[j].shard == disk) cols.push_back(j);
  if (cols.empty())
    return Status(StatusCode::kInvalidArgument, "update: disk " + std::to_string(disk) + " of " + spec.to_string() +
                                                    " holds no data cells");
  std::vector<unsigned> rows;
  for (unsigned r = 0; r < encoder_map.rows; ++r)
    for (unsigned j : cols)
      if (encoder_map.get(r, j)) {
        rows.push_back(r);
        break;
      }
  XorPlan p;
  p.map = codes::BitMatrix(unsigned(rows.size()), unsigned(cols.size()));
  for (unsigned j : cols) p.desc.inputs.push_back(encoder.inputs[j]);
  for (unsigned i = 0; i < rows.size(); ++i) {
    p.desc.outputs.push_back(encoder.outputs[rows[i]]);
    for (unsigned c = 0; c < cols.size(); ++c) p.map.set(i, c, encoder_map.get(rows[i], cols[c]));
  }
  p.sources = {disk};
  p.desc.w = layout.rows;
  p.desc.packet = spec.element;
  p.desc.accumulate = true;
  p.op = "update_d" + std::to_string(disk);
  p.desc.symbol = ir::kernel_symbol(p.op, spec.to_string(), target_name);
  ECJIT_RETURN_IF_ERROR(apply_schedule(&p, codes::XorSchedule::kSmart));
  return p;
}

Result<CellSources> array_read_sources(const codes::ArrayLayout &layout, uint64_t failed, unsigned disk, unsigned r0,
                                       unsigned r1, const ir::XorKernelDesc &rebuild,
                                       const codes::BitMatrix &rebuild_map, size_t *cells) {
  if (disk >= layout.disks || r0 > r1 || r1 >= layout.rows)
    return Status(StatusCode::kInvalidArgument, "read of disk " + std::to_string(disk) + " rows " +
                                                    std::to_string(r0) + ".." + std::to_string(r1) + ": the array has " +
                                                    std::to_string(layout.disks) + " disks of " +
                                                    std::to_string(layout.rows) + " rows");
  std::vector<bool> dead(layout.disks);
  for (unsigned d = 0; d < layout.disks; ++d) dead[d] = (failed >> d) & 1;
  std::vector<unsigned> wanted;
  for (unsigned r = r0; r <= r1; ++r) wanted.push_back(layout.cell(r, disk));
  Result<codes::ReadPlan> plan = codes::plan_cell_read(layout, dead, wanted);
  if (!plan.ok()) return plan.status();
  CellSources out;
  std::vector<bool> touched(layout.cells(), false);
  for (unsigned r = r0; r <= r1; ++r) {
    const unsigned target = layout.cell(r, disk);
    std::vector<std::pair<unsigned, unsigned>> &src = out.emplace_back();
    auto add = [&](unsigned c) {
      touched[c] = true;
      src.emplace_back(layout.disk_of(c), layout.row_of(c));
    };
    const int chain = plan->chain_used[r - r0];
    if (chain >= 0) {
      const codes::ArrayLayout::Chain &ch = layout.chains[unsigned(chain)];
      if (ch.parity != target) add(ch.parity);
      for (unsigned m : ch.members)
        if (m != target) add(m);
      continue;
    }
    // No single chain: the rebuild map's row of the cell, the known cells its bits name.
    const auto at = std::find_if(rebuild.outputs.begin(), rebuild.outputs.end(),
                                 [&](const codes::PacketRef &p) { return p.shard == disk && p.index == r; });
    if (at == rebuild.outputs.end())
      return Status(StatusCode::kInvalidArgument, "read of disk " + std::to_string(disk) + ": row " +
                                                      std::to_string(r) + " is not written by the rebuild given");
    const unsigned row = unsigned(at - rebuild.outputs.begin());
    for (unsigned i = 0; i < rebuild.inputs.size(); ++i)
      if (rebuild_map.get(row, i)) add(layout.cell(rebuild.inputs[i].index, rebuild.inputs[i].shard));
  }
  if (cells) *cells = size_t(std::count(touched.begin(), touched.end(), true));
  return out;
}

Result<XorPlan> array_read_plan(const codes::ArraySpec &spec, const codes::ArrayLayout &layout, uint64_t failed,
                                unsigned disk, const CellSources &sources,
                                const std::string &target_name) {
  if (sources.size() != layout.rows || disk >= layout.disks)
    return Status(StatusCode::kInvalidArgument, "read plan of " + spec.to_string() + ": " +
                                                    std::to_string(sources.size()) + " rows of sources for disk " +
                                                    std::to_string(disk));
  XorPlan p;
  std::vector<std::pair<unsigned, unsigned>> cells;  // (disk, row), distinct, in desc order
  for (const auto &row : sources)
    for (const auto &c : row) {
      if (c.first >= layout.disks || c.second >= layout.rows)
        return Status(StatusCode::kInvalidArgument, "read plan of " + spec.to_string() + ": cell (" +
                                                        std::to_string(c.first) + ", " + std::to_string(c.second) +
                                                        ") out of range");
      if (std::find(cells.begin(), cells.end(), c) == cells.end()) cells.push_back(c);
    }
  std::sort(cells.begin(), cells.end());
  p.map = codes::BitMatrix(layout.rows, unsigned(cells.size()));
  for (const auto &[d, r] : cells) p.desc.inputs.push_back({d, r});
  for (unsigned r = 0; r < layout.rows; ++r) {
    p.desc.outputs.push_back({0, r});
    for (const auto &c : sources[r]) {
      const unsigned j = unsigned(std::lower_bound(cells.begin(), cells.end(), c) - cells.begin());
      p.map.set(r, j, !p.map.get(r, j));
    }
  }
  for (const auto &[d, r] : cells)
    if (p.sources.empty() || p.sources.back() != d) p.sources.push_back(d);
  p.desc.w = layout.rows;
  p.desc.packet = spec.element;
  char mask[24];
  std::snprintf(mask, sizeof mask, "%llx", (unsigned long long)failed);
  p.op = "read_d" + std::to_string(disk) + "_f" + mask;
  p.desc.symbol = ir::kernel_symbol(p.op, spec.to_string(), target_name);
  ECJIT_RETURN_IF_ERROR(apply_schedule(&p, codes::XorSchedule::kSmart));
  return p;
}

}  // namespace ecjit::jit
