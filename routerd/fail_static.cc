#include "routerd/fail_static.h"

namespace geodesic::routerd {

ControllerContact::ControllerContact(std::chrono::seconds stale_after, Clock::time_point start)
    : stale_after_(stale_after), alone_since_(start) {}

void ControllerContact::Connected(const std::string& replica, Clock::time_point now) {
  std::lock_guard lock(mu_);
  connected_.insert(replica);
  warned_ = false;
  expired_ = false;
}

void ControllerContact::Disconnected(const std::string& replica, Clock::time_point now) {
  std::lock_guard lock(mu_);
  if (connected_.erase(replica) == 1 && connected_.empty()) alone_since_ = now;
}

ControllerContact::Verdict ControllerContact::Check(Clock::time_point now) {
  std::lock_guard lock(mu_);
  Verdict verdict;
  if (!connected_.empty() || expired_) return verdict;
  verdict.alone_for = std::chrono::duration_cast<std::chrono::seconds>(now - alone_since_);
  verdict.expires_in = std::max(std::chrono::seconds(0), stale_after_ - verdict.alone_for);
  if (verdict.alone_for >= stale_after_) {
    expired_ = true;
    verdict.action = Verdict::Action::kExpire;
  } else if (verdict.alone_for >= kWarnAfter && (!warned_ || now - last_warning_ >= kWarnEvery)) {
    warned_ = true;
    last_warning_ = now;
    verdict.action = Verdict::Action::kWarn;
  }
  return verdict;
}

}  // namespace geodesic::routerd
