#pragma once
// site_agent's configuration (one YAML file), validated once at load.
//
//   facility: iad                    # must match the agent's certificate
//   agent_id: agent                  # optional
//   pathcomp:                        # every replica; the agent streams to each
//     - address: 127.0.0.1:7443
//   tls: {ca: ca.crt, cert: site-iad-agent.crt, key: site-iad-agent.key}
//   poll_interval_ms: 100            # optional: how often health sources are read
//   report_interval_ms: 1000         # optional: measurement updates; state changes go at once
//   outbox_limit: 10000              # optional: unacknowledged reports kept per replica
//   health_file: iad-health.yaml     # optional: overrides written by an operator or a drill
//   probe:                           # optional: active probing of the links with a peer
//     listen: 127.0.0.1:7301         #   this agent's probe socket (requests and answers)
//     interval_ms: 100               #   one probe per link per interval (drills: 10)
//     detect_multiplier: 3           #   down after this many intervals without an answer
//     window: 100                    #   probes that RTT, jitter and loss are computed over
//     loss_degraded_ratio: 0.05      #   degraded at or above this loss
//     rtt_degraded_us: 0             #   degraded at or above this RTT (0: off)
//     hold_down_ms: 1000             #   a better state must hold this long (doubles per flap)
//     hold_down_max_ms: 30000
//     realtime_priority: 0           #   1-99: the probe thread runs SCHED_FIFO at this priority
//                                    #   (needs CAP_SYS_NICE; refused: normal priority and a warning)
//     accept_from: [127.0.0.1:7302]  #   whose probes are answered (default: the links' peers)
//   interfaces_root: /sys/class/net  # optional: where interface counters are read
//   fabric_health:                   # optional: the fabric manager's plane health
//     source: http://127.0.0.1:9100/planes   # or a file
//     planes: 2
//     rails: 8
//   routerd_socket: /run/geodesic/iad-routerd.sock  # optional: local events to routerd
//   service_reports:                 # optional: services post their chain-call latencies here
//     listen: 127.0.0.1:7490         #   plain HTTP, POST /v1/service-reports (service_report_intake.h);
//                                    #   loopback only unless allow_remote: true (no authentication)
//     address_file: run/iad-reports.addr  # optional: written with the bound IP:PORT (port 0)
//     max_reports: 10000             #   optional: (workload, hop) pairs buffered for relaying
//   health: {listen: 127.0.0.1:7481} # optional: GET /healthz, /readyz (daemon/admin_server.h)
//   metrics: {listen: 127.0.0.1:9481}  # optional: the admin listener: /metrics, /healthz, /readyz
//                                    # (config/shared_keys.h: tls, address_file)
//   links:                           # the backbone links leaving this facility
//     - id: iad-nyc
//       peer: 127.0.0.1:7302         # the far end's probe socket; without it the
//       state: up                    #   configured state and rtt_us are reported
//       rtt_us: 4200
//       interface: eth1              # utilization from this interface's counters
//       capacity_gbps: 100           # default: the interface's speed
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "daemon/admin_server.h"
#include "geodesic/v1/model.pb.h"
#include "site_agent/fabric_health_source.h"
#include "tls/credentials.h"

namespace geodesic::site_agent {

struct ProbeConfig {
  std::string listen;  // host:port
  std::chrono::milliseconds interval{100};
  uint32_t detect_multiplier = 3;
  uint32_t window = 100;
  double loss_degraded_ratio = 0.05;
  uint64_t rtt_degraded_us = 0;  // 0: RTT never degrades a link
  std::chrono::milliseconds hold_down{1000};
  std::chrono::milliseconds hold_down_max{30'000};
  int realtime_priority = 0;  // 0: normal scheduling
  std::vector<std::string> accept_from;  // host:port; empty: the links' peers
};

struct LinkConfig {
  std::string id;
  v1::LinkHealth static_health;  // what is reported without a probe
  std::string peer;              // host:port of the far end's probe socket; empty: not probed
  std::string interface;         // empty: no utilization
  double capacity_gbps = 0;      // 0: the interface's speed
};

struct ServiceReportsConfig {
  std::string listen;        // IP:PORT
  std::string address_file;  // empty: none
  size_t max_reports = 10'000;
};

struct FabricHealthConfig {
  std::string source;  // a file or a local http:// URL
  FabricShape shape;
};

struct AgentConfig {
  std::string facility_id;
  std::string agent_id = "agent";
  std::vector<std::string> pathcomp_addresses;
  tls::TlsFiles tls;
  std::chrono::milliseconds poll_interval{100};
  std::chrono::milliseconds report_interval{1000};
  size_t outbox_limit = 10'000;
  std::string health_file;  // empty: none
  std::optional<ProbeConfig> probe;
  std::string interfaces_root = "/sys/class/net";
  std::optional<FabricHealthConfig> fabric_health;
  std::string routerd_socket;  // empty: no local events
  std::optional<ServiceReportsConfig> service_reports;  // nullopt: no report endpoint
  std::string health_listen;   // empty: no health endpoint
  std::optional<daemon::AdminServerOptions> metrics;  // nullopt: no admin listener
  std::vector<LinkConfig> links;

  // Each link's configured (static) health, for the health sources.
  std::vector<std::pair<std::string, v1::LinkHealth>> StaticHealth() const;
};

// Errors name the file and key; every problem is listed.
[[nodiscard]] absl::StatusOr<AgentConfig> LoadAgentConfig(const std::string& path);

// "up" | "degraded" | "down" -> state; nullopt otherwise.
std::optional<v1::OperState> ParseOperState(const std::string& text);

}  // namespace geodesic::site_agent
