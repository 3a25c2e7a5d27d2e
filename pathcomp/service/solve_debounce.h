#pragma once
// The planner's debounce: solve requests that come close together become one
// solve, so one failure seen by several agents makes one plan.
// A burst's window opens at the later of its first request and the end of the
// previous solve (a request made during a solve waits a whole window after
// it, so the rest of its burst can join), and the burst is due when the window
// has passed. The caller supplies the time, so tests drive it.
// Thread-compatible: the planner calls it under its own lock.
#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace geodesic::pathcomp {

class SolveDebounce {
 public:
  using Clock = std::chrono::steady_clock;

  explicit SolveDebounce(std::chrono::milliseconds window) : window_(window) {}

  // Records a request for a solve, with why, at `now`.
  void Request(std::string reason, Clock::time_point now);
  bool pending() const { return !reasons_.empty(); }
  // When the pending burst is due; nullopt when nothing is pending.
  std::optional<Clock::time_point> due() const;
  // The reasons of the pending burst, oldest first, if it is due at `now`
  // (and then nothing is pending); nullopt otherwise.
  std::optional<std::vector<std::string>> TakeDue(Clock::time_point now);
  // A solve ended at `now`: a burst pending now waits a window from here.
  void SolveFinished(Clock::time_point now) { last_solve_end_ = now; }

 private:
  const std::chrono::milliseconds window_;
  std::vector<std::string> reasons_;
  Clock::time_point first_request_{};
  Clock::time_point last_solve_end_{};
};

}  // namespace geodesic::pathcomp
