// kernel_abi: the parts of a kernel's ABI that every builder emits alike (internal to ir_builders/).
#pragma once

#include <string>

#include "ir_builders/target_info.h"
#include "llvm/Support/Error.h"

namespace llvm {
class BranchInst;
class Function;
class FunctionType;
class IntegerType;
class LLVMContext;
class Module;
}  // namespace llvm

namespace ecjit::ir {

// The kernels' size_t: i32 on 16- and 32-bit triples, i64 otherwise.
llvm::IntegerType *kernel_size_type(llvm::LLVMContext &ctx, const TargetInfo &target);

// Adds the function `symbol` of type `fty` to `mod`: external, nounwind, without the memcpy /
// memmove / memset builtins (byte-copy loops must stay loops: AOT objects for freestanding
// targets have no libc to call), "target-cpu" / "target-features" from `target` when set.
llvm::Function *create_kernel_function(llvm::Module &mod, llvm::FunctionType *fty,
                                       const std::string &symbol, const TargetInfo &target);

// Symbols wider than a byte are stored little-endian: an error "<builder>: big-endian target
// ..." for `bits` > 8 on a known big-endian architecture, success otherwise.
llvm::Error check_symbol_byte_order(unsigned bits, const TargetInfo &target,
                                    const std::string &builder);

// Marks the loop whose latch branch is `br` as not to be unrolled, vectorized or interleaved
// by LLVM: kernel loops are already vector code of the shape the builder chose, or exist to
// keep the code small. no_pipelining: also no software pipelining by the code generator
// (Hexagon's MachinePipeliner spends minutes on a loop body of hundreds of XORs, for nothing:
// such a body has enough independent work per iteration).
void mark_loop_as_final(llvm::BranchInst *br, bool no_pipelining = false);

// Runs the IR verifier over `mod`: "<builder>: generated IR does not verify: <message>" on
// failure, success otherwise.
llvm::Error verify_kernel_module(const llvm::Module &mod, const std::string &builder);

}  // namespace ecjit::ir
