// XorRunner: multi-source statements from the program, then chunked region XORs.
#include "runtime/xor_runner.h"

#include <algorithm>
#include <cstring>

#include "runtime/region_xor.h"

namespace ecjit::runtime {

XorRunner::XorRunner(ir::XorKernelDesc desc) : desc_(std::move(desc)) {
  const codes::XorProgram &p = desc_.program;
  const size_t values = p.values();
  std::vector<unsigned> uses(values, 0);
  for (const auto &op : p.ops) {
    ++uses[op.a];
    ++uses[op.b];
  }
  // The output each value is stored to first (overwrite mode writes it there directly).
  std::vector<int64_t> home(values, -1);
  for (size_t r = 0; r < p.outputs.size(); ++r)
    if (p.outputs[r] != codes::XorProgram::kZero && home[p.outputs[r]] < 0) home[p.outputs[r]] = int64_t(r);
  // A value is a statement of its own when it is an output or read more than once; inputs
  // are leaves. The others fold into their one reader.
  auto materialized = [&](uint32_t v) { return v >= p.inputs && (home[v] >= 0 || uses[v] != 1); };
  // Leaves of each materialized op value, by folding (XOR cancels repeated leaves).
  std::vector<std::vector<uint32_t>> leaves(values);
  std::vector<int64_t> last_read(values, -1);  // statement index reading a value last
  std::vector<Loc> loc(values);
  for (uint32_t v = 0; v < p.inputs; ++v) loc[v] = {Loc::kInput, v};
  std::vector<uint32_t> order;  // materialized values in program order
  for (size_t i = 0; i < p.ops.size(); ++i) {
    const uint32_t v = uint32_t(p.inputs + i);
    // A folded operand has this op as its only reader: take its leaves over (no copy; a
    // chain of n ops costs O(n)), then cancel repeated leaves once the value is a statement.
    std::vector<uint32_t> l;
    for (uint32_t x : {p.ops[i].a, p.ops[i].b}) {
      if (x < p.inputs || materialized(x)) {
        l.push_back(x);
      } else if (l.empty()) {
        l = std::move(leaves[x]);
      } else {
        l.insert(l.end(), leaves[x].begin(), leaves[x].end());
        std::vector<uint32_t>().swap(leaves[x]);
      }
    }
    if (materialized(v)) {
      std::sort(l.begin(), l.end());
      size_t kept = 0;  // pairs cancel
      for (size_t j = 0; j < l.size(); ++j) {
        if (j + 1 < l.size() && l[j] == l[j + 1]) {
          ++j;
          continue;
        }
        l[kept++] = l[j];
      }
      l.resize(kept);
      order.push_back(v);
    }
    leaves[v] = std::move(l);
  }
  for (size_t s = 0; s < order.size(); ++s)
    for (uint32_t x : leaves[order[s]]) last_read[x] = int64_t(s);
  // Final copies read values after every statement.
  for (uint32_t v : p.outputs)
    if (v != codes::XorProgram::kZero) last_read[v] = int64_t(order.size());
  std::vector<uint32_t> free_slots;
  for (size_t s = 0; s < order.size(); ++s) {
    const uint32_t v = order[s];
    Statement st;
    st.first = uint32_t(srcs_.size());
    for (uint32_t x : leaves[v]) srcs_.push_back(loc[x]);
    st.count = uint32_t(leaves[v].size());
    // Sources read for the last time give their slots back first (a statement reads all
    // its sources at a position before it writes it).
    for (uint32_t x : leaves[v])
      if (loc[x].kind == Loc::kScratch && last_read[x] == int64_t(s)) free_slots.push_back(loc[x].index);
    if (!desc_.accumulate && home[v] >= 0) {
      loc[v] = {Loc::kOutput, uint32_t(home[v])};
    } else if (!free_slots.empty()) {
      loc[v] = {Loc::kScratch, free_slots.back()};
      free_slots.pop_back();
    } else {
      loc[v] = {Loc::kScratch, slots_++};
    }
    st.dst = loc[v];
    stmts_.push_back(st);
    if (last_read[v] < 0 && loc[v].kind == Loc::kScratch) free_slots.push_back(loc[v].index);
  }
  // Outputs: a copy (or, accumulate, an XOR into it) unless the value was written there.
  for (size_t r = 0; r < p.outputs.size(); ++r) {
    const uint32_t v = p.outputs[r];
    Statement st;
    st.dst = {Loc::kOutput, uint32_t(r)};
    st.first = uint32_t(srcs_.size());
    st.accumulate = desc_.accumulate;
    if (v == codes::XorProgram::kZero) {
      if (desc_.accumulate) continue;  // ^= 0
      st.count = 0;                    // = 0
    } else {
      if (loc[v].kind == Loc::kOutput && loc[v].index == r) continue;
      srcs_.push_back(loc[v]);
      st.count = 1;
    }
    stmts_.push_back(st);
  }
}

void XorRunner::run(const uint8_t *const *in, uint8_t *const *out, size_t len) const {
  const size_t packet = desc_.packet, block = size_t(desc_.w) * packet;
  // A statement covers `rows` blocks at once (strided), each `n` bytes of its packet: whole
  // packets of several blocks when packets are small (a call per 64-byte packet would cost
  // more than its XORs), chunks of one packet when they are large. A scratch slot holds
  // rows x n bytes.
  const size_t n_max = std::min<size_t>(kChunk, packet);
  const size_t group = packet >= kChunk ? 1 : kChunk / packet;
  thread_local std::vector<uint8_t> scratch;
  if (scratch.size() < size_t(slots_) * kChunk) scratch.resize(size_t(slots_) * kChunk);
  std::vector<const uint8_t *> src_ptr(srcs_.size());
  std::vector<size_t> src_stride(srcs_.size());
  const size_t blocks = len / block;
  for (size_t b0 = 0; b0 < blocks; b0 += group) {
    const size_t rows = std::min(group, blocks - b0), b = b0 * block;
    for (size_t off = 0; off < packet; off += n_max) {
      const size_t n = std::min(n_max, packet - off);
      auto at = [&](const Loc &l, size_t *stride) -> uint8_t * {
        *stride = block;
        switch (l.kind) {
          case Loc::kInput: {
            const codes::PacketRef &r = desc_.inputs[l.index];
            return const_cast<uint8_t *>(in[r.shard]) + b + size_t(r.index) * packet + off;
          }
          case Loc::kOutput: {
            const codes::PacketRef &r = desc_.outputs[l.index];
            return out[r.shard] + b + size_t(r.index) * packet + off;
          }
          case Loc::kScratch:
            *stride = n_max;
            return scratch.data() + size_t(l.index) * kChunk;
          case Loc::kZero: break;
        }
        return nullptr;
      };
      for (size_t i = 0; i < srcs_.size(); ++i) src_ptr[i] = at(srcs_[i], &src_stride[i]);
      for (const Statement &st : stmts_) {
        size_t dst_stride = 0;
        uint8_t *dst = at(st.dst, &dst_stride);
        xor_regions(dst, dst_stride, src_ptr.data() + st.first, src_stride.data() + st.first, st.count, rows, n,
                    st.accumulate);
      }
    }
  }
}

}  // namespace ecjit::runtime
