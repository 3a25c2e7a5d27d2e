#pragma once
// The agent's view of its links' health, in layers:
//   1. the configured static health (links nobody measures);
//   2. what is measured: the probe's state, RTT, jitter and loss replace the
//      static values of a probed link; utilization comes from its interface;
//   3. the health file, written by an operator or a drill, overrides any
//      field it names (e.g. forces a link down).
//
// Health file format:
//   links:
//     iad-chi: {state: down}
//     iad-nyc: {state: degraded, rtt_us: 9000, loss_ratio: 0.2}
// A file that does not parse, or names a link this agent does not own, is
// ignored as a whole (and logged): bad input changes nothing.
//
// Poll() reports what changed: a state change always, other measurements
// only when `measurements_due` (so RTT noise travels at the report interval
// while a link going down travels at once). Thread-compatible.
#include <ctime>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "geodesic/v1/telemetry.pb.h"

namespace geodesic::site_agent {

class LinkHealthSource {
 public:
  LinkHealthSource(std::vector<std::pair<std::string, v1::LinkHealth>> static_health,
                   std::string health_file);

  // A probe's latest verdict for a link of this agent (state, rtt, jitter, loss).
  void SetMeasured(const std::string& link_id, const v1::LinkHealth& measured);
  // The link's utilization from its interface counters.
  void SetUtilization(const std::string& link_id, double utilization_ratio);

  // Re-reads the health file when it changed; returns the links whose health
  // changed since the last call (all links on the first call), stamped
  // `now_unix_ms`: state changes always, other changes when `measurements_due`.
  std::vector<v1::LinkReport> Poll(int64_t now_unix_ms, bool measurements_due = true);
  // Every link's health as last reported by Poll().
  std::vector<v1::LinkReport> Current() const;
  // The last problem with the health file, if any (for logs and tests).
  const absl::Status& file_status() const { return file_status_; }

 private:
  struct Override {
    std::optional<v1::OperState> state;
    std::optional<uint64_t> rtt_us;
    std::optional<double> loss_ratio;
    std::optional<double> utilization_ratio;
  };
  absl::Status ReadHealthFile(std::map<std::string, Override>& overrides) const;
  void ReloadHealthFile();
  v1::LinkHealth Effective(const std::string& link_id) const;

  std::map<std::string, v1::LinkHealth> base_;  // static, then measured
  std::string health_file_;
  std::map<std::string, Override> overrides_;
  std::map<std::string, v1::LinkHealth> current_;  // as last reported
  std::string last_file_content_;
  bool file_present_ = false;
  bool first_poll_ = true;
  absl::Status file_status_;
};

}  // namespace geodesic::site_agent
