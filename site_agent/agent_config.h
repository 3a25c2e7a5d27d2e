#pragma once
// site_agent's configuration (one YAML file), validated once at load.
//
//   facility: iad                    # must match the agent's certificate
//   agent_id: agent                  # optional
//   pathcomp:                        # every replica; the agent streams to each
//     - address: 127.0.0.1:7443
//   tls: {ca: ca.crt, cert: site-iad-agent.crt, key: site-iad-agent.key}
//   poll_interval_ms: 100            # optional: how often health sources are read
//   outbox_limit: 10000              # optional: unacknowledged reports kept per replica
//   health_file: iad-health.yaml     # optional: overrides written by a fabric manager or a drill
//   links:                           # the backbone links leaving this facility
//     - {id: iad-nyc, state: up, rtt_us: 4200}
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "geodesic/v1/model.pb.h"
#include "tls/credentials.h"

namespace geodesic::site_agent {

struct AgentConfig {
  std::string facility_id;
  std::string agent_id = "agent";
  std::vector<std::string> pathcomp_addresses;
  tls::TlsFiles tls;
  std::chrono::milliseconds poll_interval{100};
  size_t outbox_limit = 10'000;
  std::string health_file;  // empty: none
  // Static health per link, as configured.
  std::vector<std::pair<std::string, v1::LinkHealth>> links;
};

// Errors name the file and key; every problem is listed.
[[nodiscard]] absl::StatusOr<AgentConfig> LoadAgentConfig(const std::string& path);

// "up" | "degraded" | "down" -> state; nullopt otherwise.
std::optional<v1::OperState> ParseOperState(const std::string& text);

}  // namespace geodesic::site_agent
