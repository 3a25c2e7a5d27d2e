#pragma once
// Assembles one routerd: checks its certificate against its facility, starts
// the BGP speaker (or the logging installer), restores the installed plan,
// watches every pathcomp replica, runs the fail-static watchdog and listens
// for the site agent's local link events.
#include <memory>

#include "absl/status/statusor.h"
#include "routerd/routerd_config.h"

namespace geodesic::routerd {

class RouterdServer {
 public:
  // Errors name what failed (certificate, stored plan, agent_socket); nothing
  // keeps running after an error.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<RouterdServer>> Start(RouterdConfig config);
  virtual ~RouterdServer() = default;

  // Stops watching the controllers and the agent; the installed routes stay
  // on the routers (fail-static across restarts).
  virtual void Shutdown() = 0;
};

}  // namespace geodesic::routerd
