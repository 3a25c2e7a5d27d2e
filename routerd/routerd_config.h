#pragma once
// routerd's configuration (one YAML file), validated once at load.
//
//   facility: iad                   # must match the routerd certificate
//   pathcomp:                       # every replica; plans of the highest epoch win
//     - address: 127.0.0.1:7443
//   tls: {ca: ca.crt, cert: site-iad-routerd.crt, key: site-iad-routerd.key}
//   state_dir: /var/lib/geodesic/routerd-iad   # the installed plan survives restarts
//   agent_socket: /run/geodesic/iad-routerd.sock  # optional: the site agent's link events
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tls/credentials.h"

namespace geodesic::routerd {

struct RouterdConfig {
  std::string facility_id;
  std::vector<std::string> pathcomp_addresses;
  tls::TlsFiles tls;
  std::string state_dir;
  std::string agent_socket;  // empty: no local events
};

[[nodiscard]] absl::StatusOr<RouterdConfig> LoadRouterdConfig(const std::string& path);

}  // namespace geodesic::routerd
