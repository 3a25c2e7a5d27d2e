#pragma once
// Assembles one pathcomp replica (standalone): the store, the model, the
// planner and the three gRPC services behind one mTLS listener, and its
// metrics (pathcomp_metrics.h) in a registry the caller serves.
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "daemon/health.h"
#include "metrics/metrics_registry.h"
#include "pathcomp/service/pathcomp_config.h"

namespace geodesic::pathcomp {

class EventBus;
class Model;
class Planner;

class PathcompServer {
 public:
  // Opens the store, loads and reconciles the inventory, checks the replica's
  // own certificate, binds the listener and publishes a first plan.
  // Errors name what failed (config key, file, store directory).
  // Declares every pathcomp family in `registry` (one server per registry;
  // it must outlive the server) and binds the scraped ones to this server's
  // state until Shutdown.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<PathcompServer>> Start(const PathcompConfig& config,
                                                                              metrics::Registry& registry);
  virtual ~PathcompServer() = default;

  // "host:port" actually bound.
  virtual std::string address() const = 0;
  // Stops accepting calls, ends open streams and stops the planner; the
  // scraped metrics have no samples from here on.
  virtual void Shutdown() = 0;

  // For the health endpoint; the checks refer to this server and must not be
  // called after it is destroyed. Live: the intent-expiry loop, which takes
  // the model's lock every second, has run within 30 s. Ready: the model is
  // loaded (always, once Start returned) and the replica is standalone, leads,
  // or follows a leader etcd names (asks etcd: up to its call timeout).
  virtual daemon::HealthChecks health_checks() = 0;

  // What in-process readers of this replica (the web console) read. Refers
  // to this server: valid until it is destroyed.
  struct State {
    Model& model;
    const Planner& planner;
    EventBus& events;
  };
  virtual State state() = 0;
};

}  // namespace geodesic::pathcomp
