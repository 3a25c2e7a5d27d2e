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
//  - a new plan is installed debounce_ms + solve_ms after detection (or when
//    a new leader is up, failover_ms after a leader loss), computed from what
//    the controller knew: every workload it places is back.
// Outage is measured per workload from losing connectivity to getting it
// back. Workloads whose own facility failed are reported apart (they are
// lost with it) and leave the carried ratio's demand.
// Deterministic: same spec, same report. No I/O, no clock, no threads.
#include "geodesic/v1/drill.pb.h"
#include "sim/drill/drill_spec.h"

namespace geodesic::sim {

v1::DrillReport RunDrill(const DrillSpec& spec);

// Adds every expectation's verdict to `report` (from what it measured) and
// sets `passed`. The simulator and the live runner judge alike.
void JudgeDrill(const Expectations& expect, v1::DrillReport& report);

}  // namespace geodesic::sim
