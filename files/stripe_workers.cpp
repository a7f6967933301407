// StripeWorkers: a worker pool per file over stripe indices, unit buffers, rate and progress.
#include "files/stripe_workers.h"

#include <algorithm>
#include <cstdlib>
#include <thread>

namespace ecjit::files {

void UnitBuffers::Free::operator()(uint8_t *p) const { std::free(p); }

void StripeWorkers::begin(const std::string &path, uint64_t units_total) {
  path_ = path;
  total_ = units_total;
  units_ = 0;
  bytes_ = 0;
  last_ = std::chrono::steady_clock::now();
}

void StripeWorkers::moved(std::atomic<uint64_t> *counter, uint64_t bytes, uint64_t units) {
  counter->fetch_add(bytes);
  rate_.take(bytes);
  tick(units, bytes, false);
}

void StripeWorkers::tick(uint64_t units, uint64_t bytes, bool final) {
  units_ += units;
  bytes_ += bytes;
  if (!progress_) return;
  std::unique_lock<std::mutex> lock(mu_, std::try_to_lock);
  if (!lock.owns_lock()) {
    if (!final) return;  // another worker is reporting
    lock.lock();
  }
  const auto now = std::chrono::steady_clock::now();
  if (!final && now - last_ < std::chrono::milliseconds(50)) return;
  last_ = now;
  Progress p;
  p.path = path_;
  p.units_done = units_.load();
  p.units_total = total_;
  p.bytes_done = bytes_.load();
  progress_(p);
}

Status StripeWorkers::run(uint64_t count, unsigned units, uint64_t unit,
                          const std::function<Status(uint64_t, UnitBuffers &)> &fn) {
  if (count == 0) return Status::Ok();
  const uint64_t per_worker = uint64_t(units) * unit;
  uint64_t workers = threads_ ? threads_ : std::max(1u, std::thread::hardware_concurrency());
  workers = std::min<uint64_t>({workers, std::max<uint64_t>(1, kMemory / per_worker), count});
  std::atomic<uint64_t> next{0};
  std::atomic<bool> failed{false};
  std::mutex err_mu;
  Status first_error;
  auto work = [&] {
    UnitBuffers b;
    Status st;
    b.mem.reset(static_cast<uint8_t *>(std::aligned_alloc(64, per_worker)));
    if (!b.mem)
      st = Status(StatusCode::kInvalidArgument, "cannot allocate " + std::to_string(per_worker) +
                                                    " bytes of unit buffers; choose a smaller unit");
    for (unsigned i = 0; st.ok() && i < units; ++i) b.unit.push_back(b.mem.get() + uint64_t(i) * unit);
    while (st.ok() && !failed.load()) {
      const uint64_t i = next.fetch_add(1);
      if (i >= count) break;
      st = fn(i, b);
    }
    if (!st.ok()) {
      std::lock_guard<std::mutex> lock(err_mu);
      if (!failed.exchange(true)) first_error = st;
    }
  };
  std::vector<std::thread> pool;
  for (uint64_t w = 1; w < workers; ++w) pool.emplace_back(work);
  work();
  for (auto &t : pool) t.join();
  return first_error;
}

}  // namespace ecjit::files
