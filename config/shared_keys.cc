#include "config/shared_keys.h"

#include "absl/strings/numbers.h"
#include "daemon/admin_server.h"

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

std::optional<daemon::AdminServerOptions> ReadMetricsListen(ConfigReader& reader, const tls::TlsFiles& tls_files) {
  auto metrics = reader.OptionalMap("metrics");
  if (!metrics) return std::nullopt;
  daemon::AdminServerOptions options;
  options.listen = metrics->RequiredString("listen");
  options.address_file = metrics->OptionalPath("address_file", "");
  const bool use_tls = metrics->OptionalBool("tls", false);
  const bool require_client_cert = metrics->OptionalBool("require_client_cert", true);
  const bool allow_remote_plain = metrics->OptionalBool("allow_remote_plain_http", false);
  if (!options.listen.empty()) {
    if (absl::Status valid = daemon::ValidateListenAddress(options.listen, /*allow_port_zero=*/true); !valid.ok()) {
      metrics->AddError("listen", std::string(valid.message()));
    } else if (!use_tls && !allow_remote_plain && !daemon::IsLoopbackListenAddress(options.listen)) {
      metrics->AddError("listen", "plain HTTP has no authentication: use a loopback address, set tls: true, "
                                  "or allow_remote_plain_http: true");
    }
  }
  if (!use_tls && metrics->Has("require_client_cert")) {
    metrics->AddError("require_client_cert", "only means something with tls: true");
  }
  if (use_tls) {
    options.tls = daemon::AdminTls{.ca_path = tls_files.ca_path,
                                   .cert_path = tls_files.cert_path,
                                   .key_path = tls_files.key_path,
                                   .require_client_cert = require_client_cert};
  }
  metrics->RejectUnknownKeys();
  return options;
}

}  // namespace geodesic::config
