// AotProduct: a matrix cut into the widths and row counts of the ahead-of-time kernels.
#include "runtime/aot_shapes/aot_product.h"

#include <algorithm>

namespace ecjit::aot {

std::optional<AotProduct> AotProduct::make(const AotShapeSet &set, unsigned rows, unsigned cols,
                                           bool accumulate, const uint8_t *prepared,
                                           size_t coeff_bytes) {
  if (rows == 0 || cols == 0 || set.rows == 0) return std::nullopt;
  AotProduct p;
  for (unsigned r0 = 0; r0 < rows; r0 += set.rows) {
    const unsigned nr = std::min<unsigned>(set.rows, rows - r0);
    for (unsigned c0 = 0; c0 < cols;) {
      // The widest kernel the set has that fits the columns left.
      const int mode = (accumulate || c0 > 0) ? 1 : 0;
      int w = 0;
      while (w < kAotWidthCount && (unsigned(kAotWidths[w]) > cols - c0 || !set.fn[w][nr - 1][mode])) ++w;
      if (w == kAotWidthCount) return std::nullopt;
      const unsigned width = unsigned(kAotWidths[w]);
      const AotShapeFn fn = set.fn[w][nr - 1][mode];
      p.steps_.push_back({fn, r0, c0, p.tables_.size()});
      for (unsigned r = 0; r < nr; ++r) {
        const uint8_t *t = prepared + (size_t(r0 + r) * cols + c0) * coeff_bytes;
        p.tables_.insert(p.tables_.end(), t, t + width * coeff_bytes);
      }
      c0 += width;
    }
  }
  return p;
}

}  // namespace ecjit::aot
