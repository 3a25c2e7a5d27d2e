#pragma once
// The site agent's local endpoint for service latency reports: services (or
// their sidecars) in this facility POST what they measured per agent chain
// call they served, and the agent relays it to every pathcomp replica inside
// its telemetry stream (telemetry.proto, Update.service_reports).
//
//   POST /v1/service-reports  (Content-Type is not checked; the body is JSON)
//   one report:   {"workload_id": "rag", "hop": 1, "service_id": "retriever",
//                  "service_latency_us": 4200, "network_rtt_us": 0, "calls": 25, "window_ms": 10000}
//   many:         [{...}, {...}]   or   {"reports": [{...}, {...}]}
// Field names also in lowerCamelCase (protobuf JSON). Every report is
// checked (entity/service_report_rules.h); one bad report refuses the whole
// request with 400 and a line saying which and why, queuing nothing. 202
// with {"queued": N} when queued. docs/stragglers.md has the details.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "daemon/admin_server.h"
#include "geodesic/v1/telemetry.pb.h"

namespace geodesic::site_agent {

inline constexpr char kServiceReportsPath[] = "/v1/service-reports";
inline constexpr size_t kMaxReportsPerRequest = 10'000;
inline constexpr size_t kMaxServiceReportRequestBytes = 1 << 20;

// The reports of a POST body, each stamped received at `now_unix_ms`;
// InvalidArgument naming the report (0-based) and the field otherwise.
[[nodiscard]] absl::StatusOr<std::vector<v1::ServiceLatencyReport>> ParseServiceReports(std::string_view body,
                                                                                       int64_t now_unix_ms);

// The reports waiting to be relayed, coalesced per (workload, hop): the latest
// wins. Bounded: past `max_reports` (workload, hop) pairs the one received
// longest ago is forgotten. Thread-safe.
class ServiceReportBuffer {
 public:
  // Reports older than this are no longer put into snapshots.
  static constexpr int64_t kKeepMs = 3'600'000;

  explicit ServiceReportBuffer(size_t max_reports) : max_reports_(max_reports) {}

  void Add(const std::vector<v1::ServiceLatencyReport>& reports);
  // The reports added since the last call, one per (workload, hop).
  std::vector<v1::ServiceLatencyReport> TakePending();
  // The latest report of every (workload, hop) received within kKeepMs of
  // `now_unix_ms`: what a snapshot carries.
  std::vector<v1::ServiceLatencyReport> Latest(int64_t now_unix_ms) const;
  size_t size() const;

 private:
  using Key = std::pair<std::string, uint32_t>;
  const size_t max_reports_;
  mutable std::mutex mu_;
  std::map<Key, v1::ServiceLatencyReport> latest_;  // guarded by mu_
  std::set<Key> pending_;                            // guarded by mu_; keys of latest_
};

// The POST handler: parses `request.body` at `now_unix_ms`, adds the reports
// to `buffer` and calls `queued` (which must not block); 400 or 202.
daemon::HttpResponse AcceptServiceReports(const daemon::HttpRequest& request, int64_t now_unix_ms,
                                          ServiceReportBuffer& buffer, const std::function<void()>& queued);

}  // namespace geodesic::site_agent
