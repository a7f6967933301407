// aot_array: `ecjit aot` for an element-level array code (xcode, bpcode, ...): its encoder and failed-disk rebuilds as one AOT module and header.
#pragma once

#include <string>
#include <vector>

#include "codes/array_layout.h"
#include "jit/aot_writer.h"
#include "jit/kernel_compiler.h"

namespace ecjit::tools {

// Fills *request (target, level, the encoder, one rebuild per failed-disk set of `sets` and
// one degraded read per lost disk of each set, planned as the runtime plans them:
// jit::array_encoder_plan, array_rebuild_plan with the best schedule, array_read_sources and
// array_read_plan) and *header (aot_array_header_text) for `spec` on `target_text`. false with a
// one-line message in *error: a bad target, a disk out of range, a set the code cannot rebuild.
bool array_aot_request(const codes::ArraySpec &spec, const std::string &target_text, jit::OptLevel opt,
                       const std::vector<std::vector<unsigned>> &sets, const std::string &prefix,
                       jit::AotRequest *request, std::string *header, std::string *error);

}  // namespace ecjit::tools
