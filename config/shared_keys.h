#pragma once
// Config keys that several daemons share, read the same way everywhere:
//   tls: {ca: FILE, cert: FILE, key: FILE}
//   pathcomp: [{address: HOST:PORT}, ...]
//   health: {listen: IP:PORT}          (optional)
#include <string>
#include <vector>

#include "config/config_reader.h"
#include "tls/credentials.h"

namespace geodesic::config {

// "host:port" with a non-empty host and a numeric port 0..65535.
bool IsValidHostPort(const std::string& address);

// The `tls` map; paths relative to the config file.
tls::TlsFiles ReadTlsKeys(ConfigReader& reader);
// The `pathcomp` list of replicas (at least one), each a valid host:port.
std::vector<std::string> ReadPathcompReplicas(ConfigReader& reader);
// The optional `health` map: where the HTTP probe endpoint listens
// (daemon/health_server.h: GET /healthz, /readyz). An IP address (IPv6 in
// brackets) and a fixed port. Empty when the map is absent: no endpoint.
std::string ReadHealthListen(ConfigReader& reader);

}  // namespace geodesic::config
