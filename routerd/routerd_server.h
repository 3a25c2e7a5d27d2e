#pragma once
// Assembles one routerd: checks its certificate against its facility, starts
// the BGP speaker (or the logging installer), restores the installed plan,
// watches every pathcomp replica, runs the fail-static watchdog and listens
// for the site agent's local link events.
#include <memory>

#include "absl/status/statusor.h"
#include "daemon/health.h"
#include "metrics/metrics_registry.h"
#include "routerd/routerd_config.h"

namespace geodesic::routerd {

class RouterdServer {
 public:
  // Errors name what failed (certificate, stored plan, agent_socket); nothing
  // keeps running after an error. Declares routerd's metric families on
  // `registry` (routerd_metrics.h; one routerd per registry), which must
  // outlive the server.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<RouterdServer>> Start(RouterdConfig config,
                                                                            metrics::Registry& registry);
  virtual ~RouterdServer() = default;

  // Stops watching the controllers and the agent; the installed routes stay
  // on the routers (fail-static across restarts).
  virtual void Shutdown() = 0;

  // For the health endpoint; the checks refer to this server and must not be
  // called after it is destroyed. Live: the fail-static watchdog's loop (every
  // second) has run within 10 s. Ready: a plan is installed (from a
  // controller, or restored and kept fail-static while no controller answers).
  virtual daemon::HealthChecks health_checks() = 0;
};

}  // namespace geodesic::routerd
