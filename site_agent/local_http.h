#pragma once
// A minimal HTTP/1.1 GET for endpoints on this machine (a fabric manager's
// status page): loopback hosts only, a bounded response, a deadline.
#include <chrono>
#include <string>

#include "absl/status/statusor.h"

namespace geodesic::site_agent {

struct LocalUrl {
  std::string host;  // 127.0.0.1, ::1 or localhost
  std::string port;
  std::string target;  // "/path?query"
};

// Accepts http://HOST:PORT/PATH with a loopback HOST; InvalidArgument otherwise.
[[nodiscard]] absl::StatusOr<LocalUrl> ParseLocalUrl(const std::string& url);

// GETs `url`; the body of a 200 answer of at most `max_body_bytes`.
// Unavailable when the endpoint does not answer in time, FailedPrecondition
// for another status or an oversized body.
[[nodiscard]] absl::StatusOr<std::string> HttpGetLocal(const LocalUrl& url, std::chrono::milliseconds timeout,
                                                       size_t max_body_bytes = 1 << 20);

}  // namespace geodesic::site_agent
