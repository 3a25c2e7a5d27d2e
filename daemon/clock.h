#pragma once
// Wall-clock time for timestamps that leave the process (reports, plans, events).
// Durations and deadlines use std::chrono::steady_clock instead.
#include <chrono>
#include <cstdint>

namespace geodesic::daemon {

inline int64_t UnixNowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace geodesic::daemon
