// compile_with_shapes: a codec's encoder and shape kernels, one work queue over two threads.
#include "runtime/shape_kernels.h"

#include <pthread.h>

#include <atomic>
#include <thread>

namespace ecjit::runtime {

Status compile_with_shapes(JitImpl &jit, const codes::Field &field,
                           const std::vector<ShapeRequest> &requests,
                           const std::function<Status()> &first, std::vector<Kernel> *shapes) {
  Status first_status;
  std::vector<Result<Kernel>> made(requests.size(), Status(StatusCode::kJitFailure, "not compiled"));
  std::atomic<size_t> next{0};
  auto serve = [&] {  // job 0 is `first`, job i + 1 is shape i
    for (size_t job; (job = next.fetch_add(1)) <= requests.size();) {
      if (job == 0) {
        first_status = first();
        continue;
      }
      const ShapeRequest &r = requests[job - 1];
      made[job - 1] = jit.shape_kernel(field, r.inputs, r.outputs, std::nullopt, r.accumulate);
    }
  };
  if (!requests.empty() && std::thread::hardware_concurrency() > 1) {
    std::thread helper([&] { pthread_setname_np(pthread_self(), "ecjit-compile"); serve(); });
    serve();
    helper.join();
  } else {
    serve();
  }
  ECJIT_RETURN_IF_ERROR(first_status);
  shapes->clear();
  shapes->reserve(made.size());
  for (Result<Kernel> &k : made) {
    if (!k.ok()) return k.status();
    shapes->push_back(std::move(*k));
  }
  return Status::Ok();
}

}  // namespace ecjit::runtime
