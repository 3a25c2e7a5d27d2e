#include "sim/traffic/pacing_schedule.h"

namespace geodesic::traffic {

PacingSchedule::PacingSchedule(int64_t start_ns, int64_t interval_ns, int64_t max_lag_ns)
    : start_ns_(start_ns), interval_ns_(interval_ns > 0 ? interval_ns : 1), max_lag_ns_(max_lag_ns) {}

void PacingSchedule::Take(int64_t now_ns) {
  const int64_t lag_ns = now_ns - next_due_ns();
  if (lag_ns > max_lag_ns_) {
    // Skip to the last slot due by now: it is this packet's.
    const auto skip = static_cast<uint64_t>(lag_ns / interval_ns_);
    slot_ += skip;
    skipped_ += skip;
  }
  ++slot_;
  ++taken_;
}

}  // namespace geodesic::traffic
