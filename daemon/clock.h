#pragma once
// Wall-clock time for timestamps that leave the process (reports, plans, events).
// Durations and deadlines use std::chrono::steady_clock instead (StopAfter).
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>

namespace geodesic::daemon {

inline int64_t UnixNowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// A stop for work that asks as it goes (pathcomp::ProtectionStop): false
// until `budget` has passed since it was first asked, true from then on.
inline std::function<bool()> StopAfter(std::chrono::milliseconds budget) {
  return [budget, deadline = std::optional<std::chrono::steady_clock::time_point>()]() mutable {
    const auto now = std::chrono::steady_clock::now();
    if (!deadline) deadline = now + budget;
    return now >= *deadline;
  };
}

}  // namespace geodesic::daemon
