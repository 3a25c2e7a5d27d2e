#pragma once
// A small HTTP/1.1 listener for probes (Kubernetes, load balancers, people):
//
//   GET /healthz  200 while HealthChecks::live says the main loop is alive, else 503
//   GET /readyz   200 while HealthChecks::ready says the daemon does its job, else 503
//
// The body is one line: the verdict's reason. Other paths answer 404, other
// methods 405, malformed requests 400, requests larger than
// max_request_bytes 431, and a request that has not fully arrived within
// read_timeout is dropped. One request per connection (Connection: close); at
// most max_connections at once, more are closed on accept. Plain HTTP, no
// authentication: bind it to loopback or a pod/management address.
//
// Until SetChecks is called (the daemon is still starting), /healthz answers
// 200 "starting" and /readyz 503 "starting".
//
// Thread-safe. Owns two threads between Start() and destruction; checks run on
// them (two probes in flight do not wait for each other).
#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "daemon/health.h"

namespace geodesic::daemon {

struct HealthServerOptions {
  std::string listen;  // "IP:PORT", IPv6 as "[::1]:PORT"; port 0 picks a free one
  size_t max_request_bytes = 4096;
  std::chrono::milliseconds read_timeout{5000};
  size_t max_connections = 32;
};

class HealthServer {
 public:
  // Binds and starts serving. InvalidArgument for a malformed address,
  // Unavailable when it cannot be bound.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<HealthServer>> Start(HealthServerOptions options);
  virtual ~HealthServer() = default;  // stops serving; open connections are closed

  virtual void SetChecks(HealthChecks checks) = 0;
  // The bound "IP:PORT" (the real port when 0 was asked).
  virtual std::string address() const = 0;
};

// Starts a server on `listen` when it is not empty (a daemon's `health:`
// config key); nullptr when it is.
[[nodiscard]] absl::StatusOr<std::unique_ptr<HealthServer>> StartHealthServerIfConfigured(const std::string& listen);

// Whether `text` is an address Start can bind ("IP:PORT"); the message says
// what is wrong. `allow_port_zero`: tests pick a free port, probes need a fixed one.
[[nodiscard]] absl::Status ValidateListenAddress(const std::string& text, bool allow_port_zero);

}  // namespace geodesic::daemon
