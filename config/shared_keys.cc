#include "config/shared_keys.h"

#include "absl/strings/numbers.h"
#include "daemon/health_server.h"

namespace geodesic::config {

bool IsValidHostPort(const std::string& address) {
  const size_t colon = address.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 == address.size()) return false;
  uint32_t port = 0;
  return absl::SimpleAtoi(address.substr(colon + 1), &port) && port <= 65535;
}

tls::TlsFiles ReadTlsKeys(ConfigReader& reader) {
  auto tls = reader.RequiredMap("tls");
  tls::TlsFiles files;
  files.ca_path = tls.RequiredPath("ca");
  files.cert_path = tls.RequiredPath("cert");
  files.key_path = tls.RequiredPath("key");
  tls.RejectUnknownKeys();
  return files;
}

std::vector<std::string> ReadPathcompReplicas(ConfigReader& reader) {
  std::vector<std::string> addresses;
  for (auto& replica : reader.RequiredMapList("pathcomp")) {
    const std::string address = replica.RequiredString("address");
    if (!address.empty() && !IsValidHostPort(address)) {
      replica.AddError("address", "expected host:port with a port from 0 to 65535");
    }
    addresses.push_back(address);
    replica.RejectUnknownKeys();
  }
  return addresses;
}

std::string ReadHealthListen(ConfigReader& reader) {
  auto health = reader.OptionalMap("health");
  if (!health) return "";
  const std::string listen = health->RequiredString("listen");
  if (!listen.empty()) {
    if (absl::Status valid = daemon::ValidateListenAddress(listen, /*allow_port_zero=*/false); !valid.ok()) {
      health->AddError("listen", std::string(valid.message()));
    }
  }
  health->RejectUnknownKeys();
  return listen;
}

}  // namespace geodesic::config
