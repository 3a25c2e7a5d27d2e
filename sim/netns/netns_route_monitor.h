#pragma once
// When each facility's kernel routing table changed, as the kernel told it:
// one `ip -ts -o monitor route` per facility, run in its namespace with
// TZ=UTC (so its timestamps are UTC whatever the host's zone), its output in
// a file. For the drills (issue 21): "the kernel FIB changed at" after a
// failure, compared with when the failure was made.
//
// `ip -ts -o` (iproute2 6.1) prints one line per change,
//   [2026-12-05T04:38:07.452440] 10.2.0.0/16 proto bgp metric 20 nexthop via ...
//   [2026-12-05T04:38:07.454392] Deleted 10.2.0.0/16 proto bgp metric 20 ...
//   [2026-12-05T04:38:07.460000] local 10.1.0.1 dev lo table local ...
// (a route's type, when not unicast, before its prefix; a host route without
// a length; "default" for 0/0). ParseRouteMonitorLine reads one such line.
//
// Thread-compatible; Changes may be called concurrently with itself.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "sim/netns/netns_backbone.h"
#include "sim/process.h"

namespace geodesic::sim {

struct RouteChange {
  int64_t unix_us = 0;  // the kernel's message, as `ip` stamped it on arrival
  // As printed, with a length added to a host route (10.1.0.1 -> 10.1.0.1/32,
  // 2001:db8::1 -> 2001:db8::1/128); "default" stays "default".
  std::string prefix;
  bool deleted = false;  // a route removed (else added or replaced)
  std::string line;      // the line as `ip` printed it
};

// One line of `ip -ts -o monitor route` whose timestamp is UTC.
// InvalidArgument naming the line when it has no "[YYYY-MM-DDTHH:MM:SS.ffffff]"
// stamp or no prefix after it.
[[nodiscard]] absl::StatusOr<RouteChange> ParseRouteMonitorLine(absl::string_view line);

// The changes in `output` (whole lines; a last line without its newline is
// still being written and ignored) stamped at or after `since_unix_us`, in
// order. InvalidArgument for a line ParseRouteMonitorLine refuses.
[[nodiscard]] absl::StatusOr<std::vector<RouteChange>> ParseRouteMonitorOutput(absl::string_view output,
                                                                               int64_t since_unix_us);

class NetnsRouteMonitor {
 public:
  // Starts a monitor in every facility of `backbone`, writing to
  // `output_dir`/routes-<facility>.log (the directory is created), and waits
  // (up to 10 s) until each one reports a marker route it adds and removes
  // in a table of its own, so no change after Start returns is missed. The
  // errors of the spawn, of `ip`, or DeadlineExceeded naming the facility
  // whose monitor stayed silent. Stop the monitor before the backbone goes.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<NetnsRouteMonitor>> Start(const NetnsBackbone& backbone,
                                                                               const std::string& output_dir);
  ~NetnsRouteMonitor();  // stops the monitors
  NetnsRouteMonitor(const NetnsRouteMonitor&) = delete;
  NetnsRouteMonitor& operator=(const NetnsRouteMonitor&) = delete;

  // The facility's route changes stamped at or after `since_unix_ms`, the
  // marker's excluded. NotFound for a facility it does not monitor;
  // Unavailable when its output cannot be read; InvalidArgument as
  // ParseRouteMonitorOutput.
  [[nodiscard]] absl::StatusOr<std::vector<RouteChange>> Changes(const std::string& facility_id,
                                                                 int64_t since_unix_ms) const;

  // The marker route Start adds and removes (a blackhole from TEST-NET-1 in
  // routing table kMarkerTable, which nothing else uses).
  static constexpr char kMarkerPrefix[] = "192.0.2.255/32";
  static constexpr int kMarkerTable = 4242;

 private:
  explicit NetnsRouteMonitor(std::string output_dir) : output_dir_(std::move(output_dir)) {}
  static bool IsMarker(const RouteChange& change);
  std::string OutputPath(const std::string& facility_id) const;
  absl::Status AwaitMarker(const NetnsBackbone& backbone, const std::string& facility_id);

  const std::string output_dir_;
  std::map<std::string, ChildProcessPtr> monitors_;  // per facility
};
using NetnsRouteMonitorPtr = std::unique_ptr<NetnsRouteMonitor>;

}  // namespace geodesic::sim
