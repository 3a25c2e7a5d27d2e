#pragma once
// Fail-static bookkeeping: which controllers routerd currently hears from, and,
// while it hears from none, when to say so loudly and when the installed routes
// have been kept long enough (stale_after) to be withdrawn.
// The caller supplies the clock, so tests drive it. Thread-safe.
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "daemon/health.h"

namespace geodesic::routerd {

class ControllerContact {
 public:
  using Clock = std::chrono::steady_clock;
  // `start` counts as the last contact: a routerd that starts without any
  // controller keeps its restored routes for stale_after from then.
  ControllerContact(std::chrono::seconds stale_after, Clock::time_point start);

  void Connected(const std::string& replica, Clock::time_point now);
  // How many controllers are connected now, and which.
  size_t connected_count() const;
  std::set<std::string> connected() const;
  void Disconnected(const std::string& replica, Clock::time_point now);

  struct Verdict {
    enum class Action { kNone, kWarn, kExpire };
    Action action = Action::kNone;
    std::chrono::seconds alone_for{0};     // since the last controller went away
    std::chrono::seconds expires_in{0};    // until the routes expire
  };
  // kWarn once the controllers have been gone for warn_after, then every
  // warn_every; kExpire once per outage when stale_after has passed.
  Verdict Check(Clock::time_point now);

  // How much longer the installed routes would be kept without a controller:
  // all of stale_after while one is connected, counting down while none is,
  // zero once this outage expired them.
  std::chrono::milliseconds FailStaticRemaining(Clock::time_point now) const;

  static constexpr std::chrono::seconds kWarnAfter{10};
  static constexpr std::chrono::seconds kWarnEvery{60};

 private:
  const std::chrono::seconds stale_after_;
  mutable std::mutex mu_;
  std::set<std::string> connected_;
  Clock::time_point alone_since_;
  Clock::time_point last_warning_{};
  bool warned_ = false;
  bool expired_ = false;
};

class PlanInstaller;

// Acts on ControllerContact's verdicts: logs an error while routes are kept
// without a controller (kWarn) and withdraws them once stale (kExpire,
// PlanInstaller::ExpireAll). Owns one thread that checks every `check_every`
// from construction until destruction. `contact` and `installer` must outlive
// it. Thread-safe.
class FailStaticWatchdog {
 public:
  using Clock = ControllerContact::Clock;
  struct Options {
    std::chrono::milliseconds check_every{1000};
    // Read at every check; tests give a fake clock.
    std::function<Clock::time_point()> now = [] { return Clock::now(); };
  };

  FailStaticWatchdog(ControllerContact& contact, PlanInstaller& installer, Options options);
  FailStaticWatchdog(ControllerContact& contact, PlanInstaller& installer)
      : FailStaticWatchdog(contact, installer, Options{}) {}
  ~FailStaticWatchdog();
  FailStaticWatchdog(const FailStaticWatchdog&) = delete;
  FailStaticWatchdog& operator=(const FailStaticWatchdog&) = delete;

  // One check at `now`, as the thread makes them; returns what it decided.
  // A failed withdrawal is logged, not returned: the routes stay.
  ControllerContact::Verdict CheckAt(Clock::time_point now);
  // Beaten by the thread at every check (liveness).
  const daemon::Heartbeat& heartbeat() const { return heartbeat_; }

 private:
  void Run();

  ControllerContact& contact_;
  PlanInstaller& installer_;
  const Options options_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  daemon::Heartbeat heartbeat_;
  std::thread thread_;  // last: starts after everything above exists
};

}  // namespace geodesic::routerd
