// DecoderUse: how a planned decoder is built - once ahead of time, per erasure set, or promoted behind shape kernels.
#pragma once

namespace ecjit::jit {

// How a planned decoder is built; the request says it (desc.whole_vectors, codegen).
enum class DecoderUse {
  kAheadOfTime,  // compiled once, for every caller (ecjit aot): every length, full code generation
  kPerSet,       // compiled per erasure set on first use: every length, no instruction schedulers
  kPromoted,     // per set, after shape kernels served it: whole vectors only (the shape kernels
                 // take shorter calls), no instruction schedulers
};

}  // namespace ecjit::jit
