// aot_array: plans an array code's kernels through jit/array_planner and describes them in a header.
#include "tools/aot_array.h"

#include "jit/array_planner.h"
#include "tools/aot_header.h"
#include "tools/args.h"
#include "tools/kernel_request.h"

namespace ecjit::tools {

bool array_aot_request(const codes::ArraySpec &spec, const std::string &target_text, jit::OptLevel opt,
                       const std::vector<std::vector<unsigned>> &sets, const std::string &prefix,
                       jit::AotRequest *request, std::string *header, std::string *error) {
  Result<codes::ArrayLayout> layout = codes::array_layout(spec.family, spec.p);
  if (!layout.ok()) {
    *error = layout.status().to_string();
    return false;
  }
  std::optional<KernelTarget> target = resolve_target(target_text, error);
  if (!target) return false;
  const std::string target_name = target->spec.to_string();
  Result<jit::XorPlan> enc = jit::array_encoder_plan(spec, *layout, target_name);
  if (!enc.ok()) {
    *error = enc.status().to_string();
    return false;
  }
  request->target = target->info;
  request->opt = opt;
  request->module_name = prefix;
  request->kernels.clear();
  request->kernels.push_back(jit::xor_compile_request(enc->desc, target->info, opt));
  ArrayAotContents contents;
  contents.spec = spec;
  contents.layout = *layout;
  contents.prefix = prefix;
  contents.target_text = target_name;
  contents.target_details = target->info.triple + ", cpu " + target->info.cpu +
                            (target->info.features.empty() ? "" : ", " + target->info.features) + ", " +
                            std::to_string(target->info.vector_bits) + "-bit vectors";
  contents.opt = opt_level_name(opt);
  contents.encode_symbol = enc->desc.symbol;
  contents.encode_schedule = std::string(codes::schedule_name(enc->schedule)) + ", " +
                             std::to_string(enc->desc.program.xors()) + " XORs per stripe";
  for (const std::vector<unsigned> &failed : sets) {
    uint64_t mask = 0;
    for (unsigned d : failed) {
      if (d >= layout->disks) {
        *error = "--decoders: disk " + std::to_string(d) + " does not exist (" + spec.to_string() + " has disks 0.." +
                 std::to_string(layout->disks - 1) + ")";
        return false;
      }
      mask |= uint64_t(1) << d;
    }
    // As the runtime promotes a failed-disk set: the best schedule of its cell map.
    Result<jit::XorPlan> plan = jit::array_rebuild_plan(spec, *layout, mask, target_name, /*best=*/true);
    if (!plan.ok()) {
      *error = "--decoders: failed disks {" + join_indices(failed) + "}: " + plan.status().to_string();
      return false;
    }
    contents.rebuilds.push_back({failed, plan->sources, plan->desc.symbol});
    request->kernels.push_back(jit::xor_compile_request(plan->desc, target->info, opt));
    // A degraded read of each lost disk, as the runtime reads whole stripes (ArrayCodec::read).
    for (unsigned disk : failed) {
      AotArrayRead read{failed, disk, {}, 0, ""};
      Result<jit::CellSources> sources =
          jit::array_read_sources(*layout, mask, disk, 0, layout->rows - 1, plan->desc, plan->map, &read.cells);
      Result<jit::XorPlan> rp = sources.ok() ? jit::array_read_plan(spec, *layout, mask, disk, *sources, target_name)
                                             : Result<jit::XorPlan>(sources.status());
      if (!rp.ok()) {
        *error = "--decoders: read of disk " + std::to_string(disk) + " with disks {" + join_indices(failed) +
                 "} failed: " + rp.status().to_string();
        return false;
      }
      read.inputs = rp->sources;
      read.symbol = rp->desc.symbol;
      contents.reads.push_back(std::move(read));
      request->kernels.push_back(jit::xor_compile_request(rp->desc, target->info, opt));
    }
  }
  *header = aot_array_header_text(contents);
  return true;
}

}  // namespace ecjit::tools
