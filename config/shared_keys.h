#pragma once
// Config keys that several daemons share, read the same way everywhere:
//   tls: {ca: FILE, cert: FILE, key: FILE}
//   pathcomp: [{address: HOST:PORT}, ...]
//   health: {listen: IP:PORT}          (optional)
//   metrics: {listen: IP:PORT, ...}    (optional)
#include <optional>
#include <string>
#include <vector>

#include "config/config_reader.h"
#include "daemon/admin_server.h"
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
// The optional `metrics` map: the daemon's admin listener, which serves
// /metrics, /healthz and /readyz (and pathcomp's console):
//   metrics:
//     listen: 127.0.0.1:9480        # IP:PORT; port 0 picks a free one
//     address_file: run/pc1.metrics # optional: written with IP:PORT once listening
//     tls: false                    # optional: HTTPS with the daemon's `tls` certificate
//     require_client_cert: true     # optional, with tls: clients show a certificate of the CA
//     allow_remote_plain_http: false  # optional: plain HTTP on a non-loopback address
// Plain HTTP has no authentication, so a non-loopback `listen` needs tls or
// allow_remote_plain_http. `tls_files` is the daemon's `tls` map.
// nullopt when the map is absent: no admin listener.
std::optional<daemon::AdminServerOptions> ReadMetricsListen(ConfigReader& reader, const tls::TlsFiles& tls_files);

}  // namespace geodesic::config
