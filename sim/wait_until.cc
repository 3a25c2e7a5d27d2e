#include "sim/wait_until.h"

#include <algorithm>
#include <thread>

#include "absl/strings/str_cat.h"

namespace geodesic::sim {

absl::Status WaitUntil(const std::string& what, std::chrono::milliseconds timeout,
                       const std::function<bool()>& condition, std::chrono::milliseconds poll_interval) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!condition()) {
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) {
      return absl::DeadlineExceededError(
          absl::StrCat("waited ", static_cast<double>(timeout.count()) / 1000, " s for ", what));
    }
    // The poll interval of a bounded wait; the last one ends at the deadline.
    std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(poll_interval, deadline - now));
  }
  return absl::OkStatus();
}

}  // namespace geodesic::sim
