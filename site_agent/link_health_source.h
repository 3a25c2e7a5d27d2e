#pragma once
// The agent's view of its links' health: the configured static health,
// overridden by an optional health file that a fabric manager or a drill
// writes. (Active probing replaces the static part in a later step.)
//
// Health file format:
//   links:
//     iad-chi: {state: down}
//     iad-nyc: {state: degraded, rtt_us: 9000, loss_ratio: 0.2}
// A file that does not parse, or names a link this agent does not own, is
// ignored as a whole (and logged): bad input changes nothing.
// Thread-compatible.
#include <ctime>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "geodesic/v1/telemetry.pb.h"

namespace geodesic::site_agent {

class LinkHealthSource {
 public:
  LinkHealthSource(std::vector<std::pair<std::string, v1::LinkHealth>> static_health,
                   std::string health_file);

  // Re-reads the health file when it changed; returns the links whose health
  // differs from the last call (all links on the first call), stamped `now_unix_ms`.
  std::vector<v1::LinkReport> Poll(int64_t now_unix_ms);
  // Every link's current health.
  std::vector<v1::LinkReport> Current() const;
  // The last problem with the health file, if any (for logs and tests).
  const absl::Status& file_status() const { return file_status_; }

 private:
  absl::Status ReadHealthFile(std::map<std::string, v1::LinkHealth>& overrides) const;

  std::map<std::string, v1::LinkHealth> static_health_;
  std::string health_file_;
  std::map<std::string, v1::LinkHealth> overrides_;
  std::map<std::string, v1::LinkHealth> current_;
  std::string last_file_content_;
  bool file_present_ = false;
  bool first_poll_ = true;
  absl::Status file_status_;
};

}  // namespace geodesic::site_agent
