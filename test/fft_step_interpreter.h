#include "fft/mul_tables.h"
#include "fft/step.h"
// fft_run_steps: a scalar interpreter of rs-fft step schedules (sched::FftStep), one element per pointer, for tests.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <vector>


namespace ecjit::test {

// c * x through the nibble tables of one multiplier (fft/mul_tables.h's layout).
inline uint16_t fft_table_mul(const uint8_t *t, uint16_t x) {
  uint16_t y = 0;
  for (unsigned q = 0; q < 4; ++q) {
    const unsigned v = (x >> (4 * q)) & 15;
    y ^= uint16_t(t[16 * q + v] | (t[64 + 16 * q + v] << 8));
  }
  return y;
}

// Runs `steps` on v (one element per pointer: the steps are element-wise, so one element
// shows every value), multipliers from `tables`.
// The folded ends' kinds (kFftStepIfft4In .. Fft8Out) find their table array's first table
// index in v[b2] (one element per pointer: the index stands for the array's address) and
// take pointer p as null where absent(p) (none: no pointer is).
inline void fft_run_steps(const std::vector<sched::FftStep> &steps, const std::vector<uint8_t> &tables,
                          std::vector<uint16_t> &v, const std::function<bool(uint32_t)> &absent = {}) {
  const auto T = [&](uint32_t i) { return tables.data() + size_t(i) * sched::kFftMulTableBytes; };
  const auto fft_bf = [&](uint32_t a, uint32_t b, uint32_t t) {
    v[a] ^= fft_table_mul(T(t), v[b]);
    v[b] ^= v[a];
  };
  const auto ifft_bf = [&](uint32_t a, uint32_t b, uint32_t t) {
    v[b] ^= v[a];
    v[a] ^= fft_table_mul(T(t), v[b]);
  };
  // Butterflies of a multi-layer step (fft_step_butterflies' order) on its slots' values x.
  const auto run_bfs = [&](uint16_t *x, const sched::FftStep &s, const sched::FftStepButterfly *bfs, unsigned n,
                           bool fwd) {
    for (unsigned i = 0; i < n; ++i) {
      uint16_t &u = x[bfs[i].u], &w = x[bfs[i].v];
      const uint8_t *t = T(sched::fft_step_multiplier(s, bfs[i].multiplier));
      if (fwd) {
        u ^= fft_table_mul(t, w);
        w ^= u;
      } else {
        w ^= u;
        u ^= fft_table_mul(t, w);
      }
    }
  };
  for (const sched::FftStep &s : steps) {
    switch (s.kind) {
      case sched::kFftStepFft: fft_bf(s.a, s.b, s.table); break;
      case sched::kFftStepIfft: ifft_bf(s.a, s.b, s.table); break;
      case sched::kFftStepXor: v[s.a] ^= v[s.b]; break;
      case sched::kFftStepXor2:
      case sched::kFftStepXor3:
      case sched::kFftStepXor4:
      case sched::kFftStepXor5:
      case sched::kFftStepXor6: {
        uint32_t src[sched::kFftMaxXorSources];
        uint16_t sum = 0;
        for (unsigned j = 0, n = sched::fft_xor_sources(s, src); j < n; ++j) sum ^= v[src[j]];
        v[s.a] ^= sum;
        break;
      }
      case sched::kFftStepCopy: v[s.a] = v[s.b]; break;
      case sched::kFftStepZero: v[s.a] = 0; break;
      case sched::kFftStepMul: v[s.a] = fft_table_mul(T(s.table), v[s.b]); break;
      case sched::kFftStepMulAdd: v[s.a] ^= fft_table_mul(T(s.table), v[s.b]); break;
      case sched::kFftStepMul3:
      case sched::kFftStepMulAdd3: {
        const uint16_t sum = uint16_t(fft_table_mul(T(s.table), v[s.b]) ^ fft_table_mul(T(s.table0), v[s.dist]) ^
                                      fft_table_mul(T(s.table1), v[s.b2]));
        v[s.a] = s.kind == sched::kFftStepMul3 ? sum : uint16_t(v[s.a] ^ sum);
        break;
      }
      case sched::kFftStepTop4D:
      case sched::kFftStepTop8D: {
        // fft_step_kernel.h's formula on the slots, then the other groups' values before the step.
        const unsigned slots = sched::fft_step_slots(s.kind);
        uint16_t x[8], y[8];
        for (unsigned j = 0; j < slots; ++j) x[j] = v[s.a + j * s.dist];
        const auto across = [&](uint16_t &u, uint16_t &w) {
          const uint16_t e = fft_table_mul(T(s.table), uint16_t(u ^ w));
          u ^= e;
          w ^= e;
        };
        if (slots == 4) {
          uint16_t q[4] = {x[0], x[1], x[2], x[3]};
          across(q[0], q[1]);
          across(q[2], q[3]);
          for (unsigned j = 0; j < 4; ++j) y[j] = uint16_t(x[j] ^ x[j ^ 1] ^ q[j ^ 2]);
        } else {
          // The lowest layer's butterflies: kFftStepFft8's last four, by table2 .. table5.
          sched::FftStepButterfly bfs[12];
          sched::fft_step_butterflies(sched::kFftStepFft8, bfs);
          uint16_t t[8], q[8], z[8];
          for (unsigned j = 0; j < 8; ++j) t[j] = x[j];
          run_bfs(t, s, bfs + 8, 4, false);
          for (unsigned j = 0; j < 8; ++j) q[j] = t[j];
          for (unsigned j : {0u, 1u, 4u, 5u}) across(q[j], q[j + 2]);
          for (unsigned j = 0; j < 8; ++j) z[j] = uint16_t(t[j ^ 2] ^ q[j ^ 4]);
          run_bfs(z, s, bfs + 8, 4, true);
          for (unsigned j = 0; j < 8; ++j) y[j] = uint16_t(x[j ^ 1] ^ z[j]);
        }
        uint32_t g[sched::kFftMaxDerivativeGroups];
        const unsigned groups = sched::fft_derivative_groups(s, g);
        for (unsigned j = 0; j < slots; ++j) {
          for (unsigned i = 0; i < groups; ++i) y[j] ^= v[g[i] + j * s.dist];
        }
        for (unsigned j = 0; j < slots; ++j)
          if (sched::fft_top_writes(s, j)) v[s.a + j * s.dist] = y[j];
        break;
      }
      case sched::kFftStepFft4:
      case sched::kFftStepIfft4:
      case sched::kFftStepFft8:
      case sched::kFftStepIfft8:
      case sched::kFftStepFft4D:
      case sched::kFftStepFft8D:
      case sched::kFftStepIfft4In:
      case sched::kFftStepIfft8In:
      case sched::kFftStepFft4Out:
      case sched::kFftStepFft8Out: {
        // X_j from ptr[b + j dist] (b != 0) or the slots; results to the slots, or XORed into
        // ptr[into - 1 + j dist] (the slots then keep their values). The ends' kinds: a
        // multiplier per slot from the table array t_end (table index: v[b2]), a shard absent
        // where `absent` says so (null there).
        sched::FftStepButterfly bfs[12];
        const unsigned n = sched::fft_step_butterflies(s.kind, bfs), slots = sched::fft_step_slots(s.kind);
        const bool fwd = !sched::fft_step_inverse(s.kind);
        const bool in = s.kind == sched::kFftStepIfft4In || s.kind == sched::kFftStepIfft8In;
        const bool out = s.kind == sched::kFftStepFft4Out || s.kind == sched::kFftStepFft8Out;
        const auto end_table = [&](unsigned j) { return T(v[s.b2] + s.a + j * s.dist); };
        uint16_t x[8];
        for (unsigned j = 0; j < slots; ++j) {
          if (in) {
            const uint32_t p = s.b + j * s.dist;
            x[j] = absent && absent(p) ? 0 : fft_table_mul(end_table(j), v[p]);
          } else {
            x[j] = v[(s.b && !out ? s.b : s.a) + j * s.dist];
          }
        }
        if (s.kind == sched::kFftStepFft4D || s.kind == sched::kFftStepFft8D) {
          // The formal derivative of slot a + j dist, by its definition: every slot index with
          // one more bit set (below the core's slots x dist points), values before the step.
          const uint32_t points = slots * s.dist;
          uint16_t d[8];
          for (unsigned j = 0; j < slots; ++j) {
            const uint32_t at = s.a + j * s.dist;
            d[j] = v[at];
            for (uint32_t bit = 1; bit < points; bit <<= 1)
              if (!(at & bit)) d[j] ^= v[at | bit];
          }
          for (unsigned j = 0; j < slots; ++j) x[j] = d[j];
        }
        run_bfs(x, s, bfs, n, fwd);
        for (unsigned j = 0; j < slots; ++j) {
          if (out) {
            const uint32_t p = s.b + j * s.dist;
            if (!absent || !absent(p)) v[p] = fft_table_mul(end_table(j), x[j]);
          } else if (s.into && !in) {  // (an In step's into asks for shards ahead)
            v[s.into - 1 + j * s.dist] ^= x[j];
          } else {
            v[s.a + j * s.dist] = x[j];
          }
        }
        break;
      }
      default: FAIL() << "step kind " << s.kind;
    }
  }
}

}  // namespace ecjit::test
