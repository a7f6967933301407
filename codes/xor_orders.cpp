// encode_in_order: the four loop nests of Luo et al. 2014's Algorithms 1-4, per block of w packets.
#include "codes/xor_orders.h"

#include <cstring>
#include <vector>

namespace ecjit::codes {
namespace {

inline uint64_t load(const uint8_t *p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
inline void store(uint8_t *p, uint64_t v) { std::memcpy(p, &v, 8); }

}  // namespace

const char *xor_order_name(XorOrder order) {
  switch (order) {
    case XorOrder::kPpg: return "ppg";
    case XorOrder::kPwg: return "pwg";
    case XorOrder::kDpg: return "dpg";
    case XorOrder::kDwg: return "dwg";
  }
  return "?";
}

void encode_in_order(const BitMatrix &M, unsigned k, unsigned m, unsigned w, unsigned packet,
                     XorOrder order, const uint8_t *const *data, uint8_t *const *parity, size_t len) {
  const size_t block = size_t(w) * packet, words = packet / 8;
  // The equations: per parity row its data columns; per data column its parity rows.
  std::vector<std::vector<unsigned>> cols_of(m * w), rows_of(k * w);
  for (unsigned r = 0; r < m * w; ++r)
    for (unsigned c = 0; c < k * w; ++c)
      if (M.get(r, c)) cols_of[r].push_back(c), rows_of[c].push_back(r);
  std::vector<bool> started(m * w);
  for (size_t off = 0; off + block <= len; off += block) {
    auto din = [&](unsigned c) { return data[c / w] + off + size_t(c % w) * packet; };
    auto pout = [&](unsigned r) { return parity[r / w] + off + size_t(r % w) * packet; };
    switch (order) {
      case XorOrder::kPpg:
        for (unsigned r = 0; r < m * w; ++r) {
          uint8_t *p = pout(r);
          if (cols_of[r].empty()) std::memset(p, 0, packet);
          for (size_t i = 0; i < cols_of[r].size(); ++i) {
            const uint8_t *d = din(cols_of[r][i]);
            if (i == 0) std::memcpy(p, d, packet);
            else
              for (size_t t = 0; t < words; ++t) store(p + 8 * t, load(p + 8 * t) ^ load(d + 8 * t));
          }
        }
        break;
      case XorOrder::kPwg:
        for (unsigned r = 0; r < m * w; ++r) {
          uint8_t *p = pout(r);
          for (size_t t = 0; t < words; ++t) {
            uint64_t v = 0;
            for (unsigned c : cols_of[r]) v ^= load(din(c) + 8 * t);
            store(p + 8 * t, v);
          }
        }
        break;
      case XorOrder::kDpg:
      case XorOrder::kDwg:
        std::fill(started.begin(), started.end(), false);
        for (unsigned c = 0; c < k * w; ++c) {
          const uint8_t *d = din(c);
          if (order == XorOrder::kDpg) {
            for (unsigned r : rows_of[c]) {
              uint8_t *p = pout(r);
              if (!started[r]) std::memcpy(p, d, packet);
              else
                for (size_t t = 0; t < words; ++t) store(p + 8 * t, load(p + 8 * t) ^ load(d + 8 * t));
              started[r] = true;
            }
          } else {
            for (size_t t = 0; t < words; ++t) {
              const uint64_t v = load(d + 8 * t);
              for (unsigned r : rows_of[c]) {
                uint8_t *p = pout(r) + 8 * t;
                store(p, started[r] ? load(p) ^ v : v);
              }
            }
            for (unsigned r : rows_of[c]) started[r] = true;
          }
        }
        for (unsigned r = 0; r < m * w; ++r)
          if (!started[r]) std::memset(pout(r), 0, packet);
        break;
    }
  }
}

}  // namespace ecjit::codes
