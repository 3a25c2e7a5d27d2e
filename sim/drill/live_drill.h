#pragma once
// A live drill: the same drill file drives the real daemons on loopback (a
// LocalLab: pathcomp, one site agent and one routerd per facility, real FRR
// bgpd behind the routerds of `frr_facilities`) and the same expectations are
// checked against what actually happened. The agents' link health comes from
// the drill (their health files), not from probes.
//
// Events are injected one after the other; the timeline is compressed (the
// runner goes on once the system settled, not at the file's times). Per event:
//  - fail link/srlg/node/partition/facility: the links go down through their
//    agents' health files (a facility loss is driven as its partition: its
//    daemons keep running); degrade: the links report loss and latency;
//    drain: an operator's intent (forced, as the drill asks for it);
//    a plane fails in its facility's fabric health file (the agent's fabric
//    source); restore: the reverse; leader loss: pathcomp is SIGKILLed and
//    restarted after failover_ms (routers keep forwarding meanwhile).
//  - measured: when pathcomp saw it (its model: links, fabric planes), when the routerd of a
//    facility at the failed links' ends logged its local repair, when a plan
//    avoiding the failed links was installed by every routerd. A chain whose
//    path used a failed link is cut off until the routerd where its path
//    crosses the failure repaired locally, or else the new plan is installed.
//  - carried demand, MLU, chain latencies, budget violations, cut workloads,
//    new single-facility dependencies and routes changed from the plans
//    pathcomp published.
#include <chrono>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "geodesic/v1/drill.pb.h"
#include "sim/drill/drill_spec.h"
#include "sim/local_lab.h"

namespace geodesic::sim {

// What a live drill's link events act on, and what else it measures. The
// loopback lab's links only exist in its agents' health files
// (HealthFileTarget); the netns lab's are veths (sim/drill/netns_drill.h).
// Drains, planes and leader loss act on the lab alike for every target.
class LiveDrillTarget {
 public:
  virtual ~LiveDrillTarget() = default;
  // `links` (directed link ids, both directions of a cut) go down, degrade
  // as `event` says (loss, added latency), or come back as they were.
  [[nodiscard]] virtual absl::Status SetLinksDown(const std::set<std::string>& links) = 0;
  [[nodiscard]] virtual absl::Status DegradeLinks(const std::set<std::string>& links, const TimelineEvent& event) = 0;
  [[nodiscard]] virtual absl::Status RestoreLinks(const std::set<std::string>& links) = 0;
  // A facility lost (its links are also set down) or back (before its links
  // come back). The loopback lab keeps its daemons running: a facility loss
  // is its partition there.
  [[nodiscard]] virtual absl::Status SetFacilityUp(const std::string& facility_id, bool up) {
    (void)facility_id;
    (void)up;
    return absl::OkStatus();
  }
  // The baseline plan is at every site's routers and the drill's clock
  // starts at `start_unix_ms`: start measuring.
  [[nodiscard]] virtual absl::Status Begin(int64_t start_unix_ms) {
    (void)start_unix_ms;
    return absl::OkStatus();
  }
  // An event settled: `plan` is at every site's routers. Measure the
  // settled state into `outcome` if the target can.
  [[nodiscard]] virtual absl::Status Settled(const v1::Plan& plan, v1::DrillEventOutcome& outcome) {
    (void)plan;
    (void)outcome;
    return absl::OkStatus();
  }
  // After the last event settled, before the expectations are judged: add
  // what was measured to `report`.
  [[nodiscard]] virtual absl::Status End(v1::DrillReport& report) {
    (void)report;
    return absl::OkStatus();
  }
};

// Links through their agents' health files (down, degraded with loss and RTT).
class HealthFileTarget : public LiveDrillTarget {
 public:
  HealthFileTarget(LocalLab& lab, const topology::Topology& topology) : lab_(lab), topology_(topology) {}
  absl::Status SetLinksDown(const std::set<std::string>& links) override;
  absl::Status DegradeLinks(const std::set<std::string>& links, const TimelineEvent& event) override;
  absl::Status RestoreLinks(const std::set<std::string>& links) override;

 private:
  LocalLab& lab_;
  const topology::Topology& topology_;
};

// Drives `spec`'s timeline on a running lab through `target` and judges the
// expectations (RunLiveDrill without making the lab).
[[nodiscard]] absl::StatusOr<v1::DrillReport> RunLiveDrillOn(const DrillSpec& spec, LocalLab& lab,
                                                             LiveDrillTarget& target,
                                                             std::chrono::milliseconds settle_timeout);

// Writes the drill's topology (its generated workloads included) to
// `work_dir`/topology.yaml, creating the directory; the file's path.
[[nodiscard]] absl::StatusOr<std::string> WriteDrillTopology(const DrillSpec& spec, const std::string& work_dir);

struct LiveDrillOptions {
  std::string source_dir;  // the checkout (PKI script)
  std::string binary_dir;  // the build tree (the daemons)
  std::string work_dir;    // created; the lab's configs, state and logs
  // Facilities whose routerd speaks BGP to a real FRR bgpd. Empty: the ends of
  // the first failed link.
  std::vector<std::string> frr_facilities = {};
  int settle_timeout_ms = 20'000;  // per event
};

[[nodiscard]] absl::StatusOr<v1::DrillReport> RunLiveDrill(const DrillSpec& spec, const LiveDrillOptions& options);

}  // namespace geodesic::sim
