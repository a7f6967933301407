// ShapeSlots: a map of atomically published shape kernels, filled by background compiles.
#include "isal_compat/shape_slots.h"

#include <array>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>

#include "codes/gf.h"

namespace ecjit::isal {
namespace {

struct Slot {
  std::atomic<jit::ShapeFn> fn{nullptr};
  jit::Kernel kernel;  // keeps the code alive; written once, before fn is published
};

struct Slots {
  std::mutex mutex;
  // (strategy, cols, accumulate) -> rows 1..kShapeRows, and whether compiles were queued.
  std::map<std::tuple<int, int, bool>, std::pair<std::array<Slot, kShapeRows>, bool>> map;
  std::atomic<uint64_t> compiled{0};
};

Slots &slots() {
  static Slots *s = new Slots();  // leaked on purpose: callable from atexit handlers
  return *s;
}

void compile_into(jit::KernelService &jit, ir::Strategy strategy, int cols, int rows,
                  bool accumulate, Slot &slot) {
  if (slot.fn.load(std::memory_order_acquire)) return;
  auto k = jit.shape_kernel(*codes::Field::make(8), unsigned(cols), unsigned(rows), strategy,
                            accumulate);
  if (!k.ok() || !k->shape_fn) return;  // the caller's fallback keeps serving
  std::lock_guard<std::mutex> lock(slots().mutex);
  if (slot.fn.load(std::memory_order_relaxed)) return;
  slot.kernel = std::move(*k);
  slot.fn.store(slot.kernel.shape_fn, std::memory_order_release);
  slots().compiled.fetch_add(1);
}

}  // namespace

jit::ShapeFn shape_kernel(jit::KernelService &jit, ir::Strategy strategy, int cols, int rows,
                              bool accumulate, bool wait) {
  Slots &s = slots();
  std::array<Slot, kShapeRows> *row_slots = nullptr;
  bool queue = false;
  {
    std::lock_guard<std::mutex> lock(s.mutex);
    auto &entry = s.map[{int(strategy), cols, accumulate}];
    row_slots = &entry.first;  // std::map nodes never move
    if (!entry.second && !wait) queue = entry.second = true;
  }
  Slot &slot = (*row_slots)[rows - 1];
  if (jit::ShapeFn fn = slot.fn.load(std::memory_order_acquire)) return fn;
  if (wait) {
    compile_into(jit, strategy, cols, rows, accumulate, slot);
    return slot.fn.load(std::memory_order_acquire);
  }
  if (queue) {
    jit::KernelService *j = &jit;  // the drop-in's service lives as long as the process
    for (int r = 1; r <= kShapeRows; ++r)
      j->submit_background([j, strategy, cols, r, accumulate, row_slots] {
        compile_into(*j, strategy, cols, r, accumulate, (*row_slots)[r - 1]);
      }, nullptr, /*optional=*/false);
  }
  return nullptr;
}

uint64_t shape_kernels_compiled() { return slots().compiled.load(); }

}  // namespace ecjit::isal
