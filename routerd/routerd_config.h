#pragma once
// routerd's configuration (one YAML file), validated once at load.
//
//   facility: iad                   # must match the routerd certificate
//   pathcomp:                       # every replica; plans of the highest epoch win
//     - address: 127.0.0.1:7443
//   tls: {ca: ca.crt, cert: site-iad-routerd.crt, key: site-iad-routerd.key}
//   state_dir: /var/lib/geodesic/routerd-iad   # the installed plan survives restarts
//   agent_socket: /run/geodesic/iad-routerd.sock  # optional: the site agent's link events
//   health: {listen: 127.0.0.1:7482}  # optional: GET /healthz, /readyz (daemon/admin_server.h)
//   metrics: {listen: 127.0.0.1:9482}  # optional: the admin listener: /metrics, /healthz, /readyz
//                                    # (config/shared_keys.h: tls, address_file)
//   fail_static:
//     stale_after_s: 86400          # without any controller, keep routes this long (default 1 day)
//   local_repair:                   # links that go down together are a suspect measurement (a starved
//     suspect_share: 1.0            #   agent), not fiber cuts: routes are kept (fail static). Suspect:
//     suspect_window_ms: 1000       #   2+ links down within the window, at least this share (0.01..1)
//                                   #   of the facility's links; or every link down. Defaults shown.
//   bgp:                            # optional; without it routes are only logged
//     local_as: 65001               # 1..4294967295
//     router_id: 10.0.0.1
//     hold_time_s: 90               # default for peers: 0 or 3..65535
//     graceful_restart_s: 120       # how long routers keep our routes while routerd restarts
//     bandwidth_per_weight_mbps: 1000   # link bandwidth per unit of plan weight
//     communities: ["65001:100"]        # added to every route
//     large_communities: ["65001:1:2"]
//     peers:                        # the site's routers; routerd connects to them
//       - address: 10.0.0.2
//         remote_as: 65001          # equal to local_as: iBGP
//         port: 179
//         local_address: 10.0.0.1   # optional source address
//         password: secret          # optional TCP-MD5
//         max_prefixes: 1000        # routes the router may send us
//         hold_time_s: 90
//         ttl_security: false       # GTSM, for directly connected eBGP routers
//     next_hops:                    # the far end of each backbone link, per family
//       - link: iad-nyc
//         ipv4: 192.0.2.1
//         ipv6: 2001:db8::1
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "daemon/admin_server.h"
#include "routerd/bgp/speaker.h"
#include "routerd/suspect_down.h"
#include "tls/credentials.h"

namespace geodesic::routerd {

struct RouterdConfig {
  std::string facility_id;
  std::vector<std::string> pathcomp_addresses;
  tls::TlsFiles tls;
  std::string state_dir;
  std::string agent_socket;  // empty: no local events
  std::string health_listen;  // empty: no health endpoint
  std::optional<daemon::AdminServerOptions> metrics;  // nullopt: no admin listener
  std::chrono::seconds stale_after{86400};
  SuspectDownPolicy suspect_down;
  bool local_repair = true;  // false: agent link events change no route
  std::optional<bgp::SpeakerConfig> bgp;  // nullopt: log routes only
};

[[nodiscard]] absl::StatusOr<RouterdConfig> LoadRouterdConfig(const std::string& path);
// The same from text, for tests; `origin` names it in errors.
[[nodiscard]] absl::StatusOr<RouterdConfig> ParseRouterdConfig(const std::string& text, const std::string& origin);

}  // namespace geodesic::routerd
