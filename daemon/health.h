#pragma once
// What a daemon answers when asked whether it is alive and whether it is
// ready (daemon/health_server.h serves both over HTTP).
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace geodesic::daemon {

struct HealthVerdict {
  bool ok = false;
  std::string reason;  // one short line, for people: "leader, epoch 7", "no plan installed yet"
};

// Both must be thread-safe and return within about a second (probes time out).
struct HealthChecks {
  std::function<HealthVerdict()> live;   // the main loop is alive
  std::function<HealthVerdict()> ready;  // the daemon does its job
};

// When a loop last went round, for liveness: the loop calls Beat() every turn;
// Check() says whether the last turn is recent enough. Thread-safe, lock-free.
class Heartbeat {
 public:
  using Clock = std::chrono::steady_clock;
  explicit Heartbeat(Clock::time_point now = Clock::now()) { Beat(now); }

  void Beat(Clock::time_point now = Clock::now()) {
    last_ns_.store(now.time_since_epoch().count(), std::memory_order_relaxed);
  }
  // ok while the last beat is at most `max_age` old; the reason names `loop`
  // and the age ("planner loop ran 0.4 s ago").
  HealthVerdict Check(std::string_view loop, std::chrono::milliseconds max_age,
                      Clock::time_point now = Clock::now()) const;

 private:
  std::atomic<Clock::rep> last_ns_{0};
};

}  // namespace geodesic::daemon
