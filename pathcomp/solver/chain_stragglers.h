#pragma once
// Planned vs measured latency per hop of an agent chain, and its straggler:
// the hop whose measured network round trip or service latency exceeds its
// plan the most. `tectl explain chain` and `tectl get stragglers` show this.
//
// Per hop (a call made from the previous replica, or the origin, to this one):
//  - planned: the plan's ChainHop network_rtt_us and service_time_us (the
//    planner's path costs: a link degraded or metric-overridden at plan time
//    counts what the planner charged for it);
//  - measured network: the caller-measured round trip of a fresh service
//    report when it has one (network_rtt_us > 0); else the links' probed
//    RTTs along the planned paths there and back, each link's one way taken
//    as rtt/2. Between two facilities the plan names no link, so of the
//    parallel links the one the planner prefers is taken: the usable link
//    with the lowest measured RTT (its path cost is rtt/2). When some pair of
//    the paths has no usable measured link the network is not measured;
//  - measured service: the service latency of a fresh service report.
// A report is fresh when no older than StragglerRules::report_max_age_ms at
// `now` (a report from the future counts as age 0); only reports from the
// hop's planned replica facility are used.
//
// A hop's component deviates when measured - planned exceeds the noise
// floor max(min_deviation_us, min_deviation_ratio * planned); the straggler
// is the deviating component with the largest measured - planned in µs (a
// chain's latency is the sum of its hops, so the absolute excess is what it
// costs the chain); ties go to the lower hop, then network before service.
// Faster than planned never makes a straggler.
//
// Pure: no I/O, no clock, no threads. Thread-compatible.
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "geodesic/v1/operator.pb.h"
#include "geodesic/v1/plan.pb.h"
#include "geodesic/v1/telemetry.pb.h"

namespace geodesic::pathcomp {

// The defaults are pathcomp's (`straggler:` in its config, docs/stragglers.md).
struct StragglerRules {
  int64_t report_max_age_ms = 60'000;
  uint64_t min_deviation_us = 1'000;  // 1 ms
  double min_deviation_ratio = 0.1;   // of the planned value
};

// A link as measured now.
struct MeasuredLink {
  std::string id;
  std::string src_facility_id;
  std::string dst_facility_id;
  uint64_t rtt_us = 0;  // the probed round trip; 0: not measured
  bool usable = false;  // not drained, and up or degraded
};

// A service report as pathcomp keeps it: with the facility whose agent relayed it.
struct HopReport {
  std::string replica_facility_id;
  v1::ServiceLatencyReport report;
};

class ChainLatencyExplainer {
 public:
  ChainLatencyExplainer(const std::vector<MeasuredLink>& links, StragglerRules rules);

  // `chain`'s primary assignment hop by hop; `reports` may hold reports of
  // any chain (only `chain`'s are used). The response's plan_generation is
  // left for the caller.
  v1::ChainExplanation Explain(const v1::ChainPlan& chain, const std::vector<HopReport>& reports,
                               int64_t now_unix_ms) const;

  const StragglerRules& rules() const { return rules_; }

 private:
  // The link the network measurement takes from `from` to `to`; null when
  // none is usable and measured.
  const MeasuredLink* BestLink(const std::string& from, const std::string& to) const;
  // Sums the one-way latencies along `path`; false when a pair is unmeasured.
  bool MeasurePath(const std::vector<std::string>& path, uint64_t& one_way_us, v1::HopLatency& hop) const;

  StragglerRules rules_;
  std::map<std::pair<std::string, std::string>, MeasuredLink> best_;  // by (src, dst) facility
};

// Every deviating hop component of `chains` (see above), worst first: by
// deviation_us, then workload id, hop, network before service; at most
// `limit`. chain_straggler marks each chain's own straggler.
std::vector<v1::Straggler> WorstHops(const std::vector<v1::ChainExplanation>& chains, size_t limit);

}  // namespace geodesic::pathcomp
