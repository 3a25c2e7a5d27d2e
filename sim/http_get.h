#pragma once
// One plain-HTTP GET (or POST), for the labs and tests that ask a daemon's
// admin listener (/metrics, /healthz, pathcomp's console and its JSON) or
// post to an agent's service report endpoint.
#include <chrono>
#include <string>

#include "absl/status/statusor.h"

namespace geodesic::sim {

struct HttpAnswer {
  unsigned status = 0;
  std::string content_type = {};
  std::string body = {};
};

// GET `url` ("http://IP:PORT/path?query"; no names are resolved, no TLS),
// all within `timeout`. InvalidArgument for another URL, Unavailable when the
// server cannot be reached or does not answer in time.
[[nodiscard]] absl::StatusOr<HttpAnswer> HttpGet(const std::string& url,
                                                 std::chrono::milliseconds timeout = std::chrono::seconds(5));

// POSTs `body` (as application/json) to `url`; as HttpGet otherwise.
[[nodiscard]] absl::StatusOr<HttpAnswer> HttpPost(const std::string& url, const std::string& body,
                                                  std::chrono::milliseconds timeout = std::chrono::seconds(5));

}  // namespace geodesic::sim
