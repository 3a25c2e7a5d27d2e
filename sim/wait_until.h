#pragma once
// The one bounded poll of the labs, the demo and the tests: ask the system a
// question until it says yes, with a deadline and a message that names what
// was awaited. Nothing here sleeps hoping that something happened.
#include <chrono>
#include <functional>
#include <string>

#include "absl/status/status.h"

namespace geodesic::sim {

// Asks `condition` at once, then every `poll_interval`, until it holds; OK
// then. DeadlineExceeded ("waited <timeout> for <what>") when it still does
// not hold once `timeout` has passed (it is asked once more at the deadline).
[[nodiscard]] absl::Status WaitUntil(const std::string& what, std::chrono::milliseconds timeout,
                                     const std::function<bool()>& condition,
                                     std::chrono::milliseconds poll_interval = std::chrono::milliseconds(20));

}  // namespace geodesic::sim
