#include "daemon/health.h"

#include <cstdio>

namespace geodesic::daemon {

HealthVerdict Heartbeat::Check(std::string_view loop, std::chrono::milliseconds max_age,
                               Clock::time_point now) const {
  const Clock::time_point last{Clock::duration(last_ns_.load(std::memory_order_relaxed))};
  const auto age = std::chrono::duration_cast<std::chrono::milliseconds>(now - last);
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%.1f", static_cast<double>(age.count()) / 1000.0);
  HealthVerdict verdict;
  verdict.ok = age <= max_age;
  verdict.reason = std::string(loop) + (verdict.ok ? " ran " : " stuck: last ran ") + seconds + " s ago";
  return verdict;
}

}  // namespace geodesic::daemon
