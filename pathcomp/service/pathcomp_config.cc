#include "pathcomp/service/pathcomp_config.h"

#include "absl/strings/numbers.h"
#include "config/config_reader.h"

namespace geodesic::pathcomp {

bool IsValidListenAddress(const std::string& address) {
  const size_t colon = address.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == address.size()) return false;
  uint32_t port = 0;
  if (!absl::SimpleAtoi(address.substr(colon + 1), &port) || port > 65535) return false;
  return true;
}

absl::StatusOr<PathcompConfig> LoadPathcompConfig(const std::string& path) {
  auto reader = config::ConfigReader::OpenFile(path);
  if (!reader.ok()) return reader.status();
  PathcompConfig config;
  config.replica_id = reader->RequiredId("replica_id");
  config.listen_address = reader->RequiredString("listen");
  if (!config.listen_address.empty() && !IsValidListenAddress(config.listen_address)) {
    reader->AddError("listen", "expected host:port with a port from 0 to 65535");
  }
  config.listen_address_file = reader->OptionalPath("listen_address_file", "");
  config.state_dir = reader->RequiredPath("state_dir");
  config.topology_path = reader->RequiredPath("topology");
  config.solve_debounce =
      std::chrono::milliseconds(reader->OptionalUint("solve_debounce_ms", 50, 0, 10'000));
  auto tls = reader->RequiredMap("tls");
  config.tls.ca_path = tls.RequiredPath("ca");
  config.tls.cert_path = tls.RequiredPath("cert");
  config.tls.key_path = tls.RequiredPath("key");
  tls.RejectUnknownKeys();
  reader->RejectUnknownKeys();
  if (auto status = reader->status(); !status.ok()) return status;
  return config;
}

}  // namespace geodesic::pathcomp
