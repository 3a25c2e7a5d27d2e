#pragma once
// Runs a drill on a simulated clock with pathcomp's own planning code
// (pathcomp/solver/plan_builder.h): the real chain placer, elephant
// allocator, weighted routes and backups, re-planned the way pathcomp does.
//
// The clock moves from moment to moment:
//  - an event happens (links go down, a link degrades, a drain is asked, the
//    leader dies): workloads whose current path uses a link that is now down
//    lose connectivity;
//  - the failure is detected (probe_interval x multiplier for hard failures,
//    gray_detect_ms for degradations, at once for drains), then routers
//    switch to the backups the current plan precomputed (local_repair_ms
//    later): a chain comes back if its backup for this failure survives
//    everything down now; an elephant flow if its ends are still connected;
//    and the link loads as forwarded are computed (pathcomp/solver/forwarded_loads.h:
//    every counted elephant flow's demand through the sites' routes, each
//    site repaired by routerd's rule for its own down links): the event's
//    max_utilization_after_repair, its link, what was dropped or looped;
//  - a new plan is installed debounce_ms + solve_ms after detection (or when
//    a new leader is up, failover_ms after a leader loss), computed from what
//    the controller knew: every workload it places is back (its routes are
//    forwarded through too: DrillEventOutcome.forwarded_utilization_after).
//  - the controller's automatic drainer (sim/drill/auto_drain_sim.h) judges
//    the links and decides once a simulated second while anything is bad or
//    drained (a quiet network skips to the next change: the same decisions);
//    a drain passes the pre-check or is refused, becomes automatic drain
//    intents at once and a plan debounce_ms + solve_ms later; an undrain
//    likewise. Its actions go into the report (DrillReport.auto_drain).
// Outage is measured per workload from losing connectivity to getting it
// back. Workloads whose own facility failed are reported apart (they are
// lost with it) and leave the carried ratio's demand.
// Deterministic: same spec, same report. No I/O, no clock. Plans are built
// on the machine's cores (pathcomp::DefaultBuildThreads, as pathcomp builds
// them), which changes nothing in them: BuildPlan's plan is the same
// whatever the number of threads.
#include "geodesic/v1/drill.pb.h"
#include "sim/drill/drill_judge.h"
#include "sim/drill/drill_spec.h"

namespace geodesic::sim {

v1::DrillReport RunDrill(const DrillSpec& spec);

}  // namespace geodesic::sim
