#include "pathcomp/solver/internal/on_threads.h"

#include <algorithm>
#include <exception>
#include <thread>
#include <vector>

namespace geodesic::pathcomp::internal {

void OnThreads(int threads, const std::function<void(int)>& work) {
  threads = std::max(threads, 1);
  std::vector<std::exception_ptr> errors(static_cast<size_t>(threads));
  auto guarded = [&](int t) {
    try {
      work(t);
    } catch (...) {
      errors[static_cast<size_t>(t)] = std::current_exception();
    }
  };
  {
    std::vector<std::jthread> pool;  // joined when it goes out of scope
    pool.reserve(static_cast<size_t>(threads) - 1);
    for (int t = 1; t < threads; ++t) pool.emplace_back(guarded, t);
    guarded(0);
  }
  for (const std::exception_ptr& error : errors) {
    if (error) std::rethrow_exception(error);
  }
}

}  // namespace geodesic::pathcomp::internal
