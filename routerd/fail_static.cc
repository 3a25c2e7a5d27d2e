#include "routerd/fail_static.h"

#include "daemon/log.h"
#include "routerd/plan_installer.h"

namespace geodesic::routerd {

ControllerContact::ControllerContact(std::chrono::seconds stale_after, Clock::time_point start)
    : stale_after_(stale_after), alone_since_(start) {}

void ControllerContact::Connected(const std::string& replica, Clock::time_point now) {
  std::lock_guard lock(mu_);
  connected_.insert(replica);
  warned_ = false;
  expired_ = false;
}

size_t ControllerContact::connected_count() const {
  std::lock_guard lock(mu_);
  return connected_.size();
}

std::set<std::string> ControllerContact::connected() const {
  std::lock_guard lock(mu_);
  return connected_;
}

std::chrono::milliseconds ControllerContact::FailStaticRemaining(Clock::time_point now) const {
  std::lock_guard lock(mu_);
  if (!connected_.empty()) return stale_after_;
  if (expired_) return std::chrono::milliseconds(0);
  const auto alone_for = std::chrono::duration_cast<std::chrono::milliseconds>(now - alone_since_);
  return std::max(std::chrono::milliseconds(0), std::chrono::milliseconds(stale_after_) - alone_for);
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

FailStaticWatchdog::FailStaticWatchdog(ControllerContact& contact, PlanInstaller& installer,
                                       Options options)
    : contact_(contact), installer_(installer), options_(std::move(options)) {
  thread_ = std::thread([this] { Run(); });
}

FailStaticWatchdog::~FailStaticWatchdog() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

ControllerContact::Verdict FailStaticWatchdog::CheckAt(Clock::time_point now) {
  const auto verdict = contact_.Check(now);
  using Action = ControllerContact::Verdict::Action;
  if (verdict.action == Action::kWarn) {
    daemon::LogError("fail-static: no controller reachable; keeping the installed routes",
                     {{"alone_for_s", std::to_string(verdict.alone_for.count())},
                      {"routes_expire_in_s", std::to_string(verdict.expires_in.count())},
                      {"generation", std::to_string(installer_.installed().generation())}});
  } else if (verdict.action == Action::kExpire) {
    if (auto status = installer_.ExpireAll("no controller reachable for " +
                                           std::to_string(verdict.alone_for.count()) +
                                           " s (fail_static.stale_after_s)");
        !status.ok()) {
      daemon::LogError("fail-static: cannot withdraw the expired routes", {{"error", status.ToString()}});
    }
  }
  return verdict;
}

void FailStaticWatchdog::Run() {
  std::unique_lock lock(mu_);
  while (!cv_.wait_for(lock, options_.check_every, [this] { return stopping_; })) {
    lock.unlock();
    CheckAt(options_.now());
    heartbeat_.Beat();
    lock.lock();
  }
}

}  // namespace geodesic::routerd
