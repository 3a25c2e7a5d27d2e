#pragma once
// The site agent of one facility: reads its links' health and streams it to
// every pathcomp replica. Thread-safe; Run() blocks until Stop().
#include <memory>

#include "absl/status/statusor.h"
#include "site_agent/agent_config.h"

namespace geodesic::site_agent {

class SiteAgent {
 public:
  // Checks that the certificate is this facility's agent certificate.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<SiteAgent>> Create(AgentConfig config);
  virtual ~SiteAgent() = default;

  virtual void Run() = 0;
  virtual void Stop() = 0;
};

}  // namespace geodesic::site_agent
