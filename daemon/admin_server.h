#pragma once
// A daemon's admin listener: one small HTTP/1.1 (or HTTPS) port for probes,
// Prometheus and people.
//
//   GET /healthz  200 while HealthChecks::live says the main loop is alive, else 503
//   GET /readyz   200 while HealthChecks::ready says the daemon does its job, else 503
//   GET <route>   what the daemon added with AddRoute (/metrics, pathcomp's console)
//   POST <route>  what the daemon added with AddPostRoute (the agent's service reports)
//
// Health bodies are one line: the verdict's reason. Unknown paths answer 404,
// a method the path does not serve 405, malformed requests 400, requests larger than
// max_request_bytes 431, and a request that has not fully arrived within
// read_timeout is dropped. One request per connection (Connection: close); at
// most max_connections at once, more are closed on accept.
//
// With `tls`, the listener speaks HTTPS with the daemon's certificate from the
// project's PKI and (by default) asks every client for a certificate that
// chains to the project's CA; the files are read again when they change
// (rotation needs no restart). Without TLS it is plain HTTP with no
// authentication: the config refuses a non-loopback address unless told
// otherwise (config/shared_keys.h, `metrics:`).
//
// Until SetChecks is called (the daemon is still starting), /healthz answers
// 200 "starting" and /readyz 503 "starting".
//
// Thread-safe. Owns two threads between Start() and destruction; checks and
// handlers run on them (two requests in flight do not wait for each other).
#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "daemon/health.h"

namespace geodesic::daemon {

struct HttpRequest {
  std::string path;                          // "/api/v1/route", without the query
  std::map<std::string, std::string> query = {};  // decoded ?a=b&c=d (a repeated key keeps the last)
  std::string body = {};                     // POST only (at most max_request_bytes in all)
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
};

// Runs on the listener's threads; must be thread-safe and return within about
// a second.
using HttpHandler = std::function<HttpResponse(const HttpRequest&)>;

// With require_client_cert, a client certificate whose URI SAN starts with
// kRefusedClientUriPrefix (a tenant's) is refused like one from another CA:
// the listener shows the whole backbone, and tenants see their own paths
// through pathcomp's relay only.
inline constexpr char kRefusedClientUriPrefix[] = "spiffe://geodesic/tenant/";

struct AdminTls {
  std::string ca_path;    // PEM: the CA client certificates must chain to
  std::string cert_path;  // PEM: the daemon's certificate (chain)
  std::string key_path;   // PEM: its key
  bool require_client_cert = true;
};

struct AdminServerOptions {
  std::string listen;  // "IP:PORT", IPv6 as "[::1]:PORT"; port 0 picks a free one
  std::string address_file = {};  // optional: written (crash-safely) with the bound IP:PORT
  std::optional<AdminTls> tls = {};  // nullopt: plain HTTP
  size_t max_request_bytes = 8192;
  std::chrono::milliseconds read_timeout{5000};
  size_t max_connections = 32;
};

class AdminServer {
 public:
  // Binds and starts serving. InvalidArgument for a malformed address or
  // unreadable TLS files, Unavailable when it cannot be bound.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<AdminServer>> Start(AdminServerOptions options);
  virtual ~AdminServer() = default;  // stops serving; open connections are closed

  virtual void SetChecks(HealthChecks checks) = 0;
  // Serves GET `path` (exact match; "/" is the root only) with `handler`.
  // A later route for the same path replaces the earlier one.
  virtual void AddRoute(const std::string& path, HttpHandler handler) = 0;
  // Serves POST `path` (exact match) with `handler`, which gets the body.
  virtual void AddPostRoute(const std::string& path, HttpHandler handler) = 0;
  // The bound "IP:PORT" (the real port when 0 was asked).
  virtual std::string address() const = 0;
  // "http://IP:PORT" or "https://IP:PORT".
  virtual std::string url() const = 0;
};

// A daemon's listeners, as its config asks: `health:` (only /healthz and
// /readyz) and `metrics:` (the admin listener), either, both or none.
class DaemonListeners {
 public:
  // Starts what is configured; an error names the key.
  [[nodiscard]] static absl::StatusOr<DaemonListeners> Start(const std::string& health_listen,
                                                            const std::optional<AdminServerOptions>& metrics);
  void SetChecks(const HealthChecks& checks);
  // On the admin listener (nothing without one).
  void AddRoute(const std::string& path, HttpHandler handler);
  // Stops both; call before what their checks and routes refer to goes away.
  void Stop();
  // The admin listener's URL; empty without one.
  std::string admin_url() const;

 private:
  std::unique_ptr<AdminServer> health_;
  std::unique_ptr<AdminServer> admin_;
};

// Whether `text` is an address Start can bind ("IP:PORT"); the message says
// what is wrong. `allow_port_zero`: tests pick a free port, probes need a fixed one.
[[nodiscard]] absl::Status ValidateListenAddress(const std::string& text, bool allow_port_zero);
// Whether the address of "IP:PORT" is a loopback address (127.0.0.0/8, ::1).
[[nodiscard]] bool IsLoopbackListenAddress(const std::string& text);

}  // namespace geodesic::daemon
