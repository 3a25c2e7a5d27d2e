#pragma once
// The site agent of one facility: reads its links' health and streams it to
// every pathcomp replica. Thread-safe; Run() blocks until Stop().
#include <memory>

#include "absl/status/statusor.h"
#include "daemon/health.h"
#include "metrics/metrics_registry.h"
#include "site_agent/agent_config.h"

namespace geodesic::site_agent {

class SiteAgent {
 public:
  // Checks that the certificate is this facility's agent certificate.
  // Declares the agent's metric families on `registry` (agent_metrics.h; one
  // agent per registry), which must outlive the agent.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<SiteAgent>> Create(AgentConfig config,
                                                                         metrics::Registry& registry);
  virtual ~SiteAgent() = default;

  virtual void Run() = 0;
  virtual void Stop() = 0;

  // For the health endpoint; the checks refer to this agent and must not be
  // called after it is destroyed. Live: Run's loop has gone round within
  // max(10 poll intervals, 10 s) (before Run, since Create). Ready: a report
  // session to at least one pathcomp replica is open.
  virtual daemon::HealthChecks health_checks() = 0;
};

}  // namespace geodesic::site_agent
