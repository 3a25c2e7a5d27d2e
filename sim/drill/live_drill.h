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
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "geodesic/v1/drill.pb.h"
#include "sim/drill/drill_spec.h"

namespace geodesic::sim {

struct LiveDrillOptions {
  std::string source_dir;  // the checkout (PKI script)
  std::string binary_dir;  // the build tree (the daemons)
  std::string work_dir;    // created; the lab's configs, state and logs
  // Facilities whose routerd speaks BGP to a real FRR bgpd. Empty: the ends of
  // the first failed link.
  std::vector<std::string> frr_facilities;
  int settle_timeout_ms = 20'000;  // per event
};

[[nodiscard]] absl::StatusOr<v1::DrillReport> RunLiveDrill(const DrillSpec& spec, const LiveDrillOptions& options);

}  // namespace geodesic::sim
