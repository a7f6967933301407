// ArrayStore: writing a placed, encoded file over disk files; degraded reads by plan, pread and XOR program (runner, then compiled).
#include "tools/array_store.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "codes/xor_schedule.h"

namespace ecjit::tools {
namespace {

Status io_error(const std::string &what, const std::string &path) {
  return Status(StatusCode::kInvalidArgument, what + " " + path + ": " + std::strerror(errno));
}

std::string disk_path(const std::string &dir, unsigned d) { return dir + "/disk" + std::to_string(d) + "/data"; }

}  // namespace

Status ArrayStore::write(const std::string &dir, const ArrayCodec &codec, const codes::ArrayLayout &L,
                         const codes::DataPlacement &P, const std::vector<uint8_t> &data) {
  const size_t E = codec.element_bytes(), K = P.cell_of.size(), stripe = codec.stripe_bytes();
  const uint64_t stripes = (data.size() + K * E - 1) / (K * E);
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) return io_error("cannot create", dir);
  std::vector<int> fds;
  auto close_all = [&] {
    for (int fd : fds) ::close(fd);
  };
  for (unsigned d = 0; d < L.disks; ++d) {
    const std::string sub = dir + "/disk" + std::to_string(d);
    if (::mkdir(sub.c_str(), 0700) != 0 && errno != EEXIST) return close_all(), io_error("cannot create", sub);
    const int fd = ::open(disk_path(dir, d).c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0) return close_all(), io_error("cannot write", disk_path(dir, d));
    fds.push_back(fd);
  }
  constexpr uint64_t kBatch = 64;  // stripes encoded at once
  std::vector<std::vector<uint8_t>> bufs(L.disks, std::vector<uint8_t>(kBatch * stripe));
  std::vector<uint8_t *> ptrs;
  for (auto &b : bufs) ptrs.push_back(b.data());
  for (uint64_t s0 = 0; s0 < stripes; s0 += kBatch) {
    const uint64_t n = std::min(kBatch, stripes - s0);
    for (auto &b : bufs) std::fill(b.begin(), b.end(), 0);
    for (uint64_t s = 0; s < n; ++s)
      for (size_t e = 0; e < K; ++e) {
        const uint64_t at = ((s0 + s) * K + e) * E;
        if (at >= data.size()) break;
        const unsigned cell = P.cell_of[e];
        std::memcpy(bufs[L.disk_of(cell)].data() + (s * L.rows + L.row_of(cell)) * E, data.data() + at,
                    std::min<uint64_t>(E, data.size() - at));
      }
    ECJIT_RETURN_IF_ERROR(codec.encode({ptrs.data(), ptrs.size()}, n * stripe));
    for (unsigned d = 0; d < L.disks; ++d)
      if (::pwrite(fds[d], bufs[d].data(), n * stripe, off_t(s0 * stripe)) != ssize_t(n * stripe))
        return close_all(), io_error("cannot write", disk_path(dir, d));
  }
  close_all();
  return Status::Ok();
}

Result<std::unique_ptr<ArrayStore>> ArrayStore::open(const std::string &dir, const codes::ArrayLayout &L,
                                                     const codes::DataPlacement &P, size_t element, unsigned failed,
                                                     std::shared_ptr<jit::KernelService> jit) {
  std::unique_ptr<ArrayStore> s(new ArrayStore(L, P, element, failed));
  s->jit_ = std::move(jit);
  for (unsigned d = 0; d < L.disks; ++d) {
    const int fd = d == failed ? -1 : ::open(disk_path(dir, d).c_str(), O_RDONLY);
    if (d != failed && fd < 0) return io_error("cannot read", disk_path(dir, d));
    s->fds_.push_back(fd);
  }
  return s;
}

ArrayStore::~ArrayStore() {
  for (int fd : fds_)
    if (fd >= 0) ::close(fd);
}

Result<std::shared_ptr<ArrayStore::Plan>> ArrayStore::plan(unsigned first, unsigned count) {
  auto it = plans_.find({first, count});
  if (it != plans_.end()) return it->second;
  Result<codes::ReadPlan> rp = codes::plan_degraded_read(layout_, placement_, failed_, first, count);
  if (!rp.ok()) return rp.status();
  auto shared = std::make_shared<Plan>();
  Plan &p = *shared;
  p.read = std::move(*rp);
  // Each lost element: the XOR of its chain's other cells (all read), or for the whole-stripe
  // fallback the elimination over every surviving cell (solved only when a plan needs it).
  codes::BitMatrix all;
  std::vector<unsigned> lost_all, known_all;
  bool fallback = false;
  for (unsigned i = 0; i < count; ++i) {
    if (p.read.chain_used[i] != -1) p.lost.push_back(placement_.cell_of[first + i]);
    fallback |= p.read.chain_used[i] == -2;
  }
  if (fallback) {
    std::vector<bool> unknown(layout_.cells());
    for (unsigned c = 0; c < layout_.cells(); ++c) unknown[c] = layout_.disk_of(c) == failed_;
    ECJIT_RETURN_IF_ERROR(codes::solve_cells(layout_, unknown, &all, &lost_all, &known_all));
  }
  codes::BitMatrix map(unsigned(p.lost.size()), unsigned(p.read.cells.size()));
  auto col = [&](unsigned cell) {
    return unsigned(std::lower_bound(p.read.cells.begin(), p.read.cells.end(), cell) - p.read.cells.begin());
  };
  for (unsigned i = 0, l = 0; i < count; ++i) {
    const int ch = p.read.chain_used[i];
    if (ch == -1) continue;
    const unsigned target = placement_.cell_of[first + i];
    if (ch >= 0) {
      const auto &chain = layout_.chains[unsigned(ch)];
      map.set(l, col(chain.parity));
      for (unsigned m : chain.members)
        if (m != target) map.set(l, col(m), !map.get(l, col(m)));
    } else {  // fallback: the target's row of the full rebuild, over the surviving cells
      const unsigned r = unsigned(std::find(lost_all.begin(), lost_all.end(), target) - lost_all.begin());
      for (unsigned j = 0; j < known_all.size(); ++j)
        if (all.get(r, j)) map.set(l, col(known_all[j]));
    }
    ++l;
  }
  if (!p.lost.empty()) {
    ir::XorKernelDesc d;
    for (unsigned i = 0; i < p.read.cells.size(); ++i) d.inputs.push_back({i, 0});
    for (unsigned i = 0; i < p.lost.size(); ++i) d.outputs.push_back({i, 0});
    d.w = 1;
    d.packet = unsigned(element_);
    d.program = codes::make_schedule(map, codes::XorSchedule::kSmart);
    ECJIT_RETURN_IF_ERROR(codes::check_program(d.program, map));
    static std::atomic<uint64_t> serial{0};  // symbols unique in the process's JIT
    d.symbol = "ecjit_edp_read_" + std::to_string(serial.fetch_add(1));
    p.desc = d;
    p.rebuild = std::make_unique<runtime::XorRunner>(std::move(d));
  }
  return plans_.emplace(std::make_pair(first, count), std::move(shared)).first->second;
}

void ArrayStore::compile_later(const std::shared_ptr<Plan> &p) {
  if (!jit_ || p->asked.exchange(true)) return;
  std::weak_ptr<Plan> weak = p;
  jit::KernelService *service = jit_.get();  // outlives the store's tasks: they hold the plan weakly
  auto task = [weak, service] {
    std::shared_ptr<Plan> plan = weak.lock();
    if (!plan) return;
    Result<jit::Kernel> k = service->xor_kernel(plan->desc, /*shared=*/false);
    if (k.ok() && k->fn) std::atomic_store(&plan->compiled, std::make_shared<const jit::Kernel>(std::move(*k)));
  };
  if (!jit_->submit_background(std::move(task), [weak] { return !weak.expired(); }, /*optional=*/true))
    p->asked.store(false);  // the queue was full: asked again on a later read
}

Status ArrayStore::read(uint64_t offset, uint64_t size, uint8_t *out) {
  const uint64_t E = element_, K = placement_.cell_of.size();
  if (size == 0) return Status::Ok();
  const uint64_t a = offset / E, b = (offset + size - 1) / E;
  for (uint64_t e = a; e <= b;) {
    const uint64_t stripe = e / K;
    const unsigned first = unsigned(e % K), count = unsigned(std::min<uint64_t>(b - e + 1, K - first));
    Result<std::shared_ptr<Plan>> p = plan(first, count);
    if (!p.ok()) return p.status();
    const Plan &plan = **p;
    scratch_.resize((plan.read.cells.size() + plan.lost.size()) * E);
    std::vector<const uint8_t *> in;
    for (size_t i = 0; i < plan.read.cells.size(); ++i) {
      const unsigned c = plan.read.cells[i];
      uint8_t *dst = scratch_.data() + i * E;
      const off_t at = off_t((stripe * layout_.rows + layout_.row_of(c)) * E);
      if (::pread(fds_[layout_.disk_of(c)], dst, E, at) != ssize_t(E))
        return Status(StatusCode::kInvalidArgument, "reading disk " + std::to_string(layout_.disk_of(c)) +
                                                        " at " + std::to_string(at) + ": short read");
      ++cells_read_[layout_.disk_of(c)];
      in.push_back(dst);
    }
    std::vector<uint8_t *> lost_out;
    for (size_t i = 0; i < plan.lost.size(); ++i) lost_out.push_back(scratch_.data() + (plan.read.cells.size() + i) * E);
    if (plan.rebuild) {
      if (std::shared_ptr<const jit::Kernel> k = std::atomic_load(&plan.compiled)) {
        k->fn(in.data(), lost_out.data(), E);
        ++compiled_rebuilds_;
      } else {
        plan.rebuild->run(in.data(), lost_out.data(), E);
        ++runner_rebuilds_;
        compile_later(*p);
      }
    }
    for (unsigned i = 0; i < count; ++i) {
      const unsigned c = placement_.cell_of[first + i];
      const uint8_t *src;
      if (layout_.disk_of(c) == failed_)
        src = lost_out[size_t(std::find(plan.lost.begin(), plan.lost.end(), c) - plan.lost.begin())];
      else
        src = in[size_t(std::lower_bound(plan.read.cells.begin(), plan.read.cells.end(), c) - plan.read.cells.begin())];
      const uint64_t el = e + i, lo = std::max(offset, el * E), hi = std::min(offset + size, (el + 1) * E);
      std::memcpy(out + (lo - offset), src + (lo - el * E), hi - lo);
    }
    e += count;
  }
  return Status::Ok();
}

}  // namespace ecjit::tools
