#include "pathcomp/service/solve_debounce.h"

#include <algorithm>

namespace geodesic::pathcomp {

void SolveDebounce::Request(std::string reason, Clock::time_point now) {
  if (reasons_.empty()) first_request_ = now;
  reasons_.push_back(std::move(reason));
}

std::optional<SolveDebounce::Clock::time_point> SolveDebounce::due() const {
  if (reasons_.empty()) return std::nullopt;
  return std::max(first_request_, last_solve_end_) + window_;
}

std::optional<std::vector<std::string>> SolveDebounce::TakeDue(Clock::time_point now) {
  const std::optional<Clock::time_point> when = due();
  if (!when || now < *when) return std::nullopt;
  std::vector<std::string> reasons;
  reasons.swap(reasons_);
  return reasons;
}

}  // namespace geodesic::pathcomp
