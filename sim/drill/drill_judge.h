#pragma once
// Judges a drill report against the drill file's expectations: the
// simulator, the live runner and the netns runner judge alike. Expectations
// a runner cannot measure pass and say so ("not judged: ..."): packets are
// sent by --netns only, automatic drains are simulated only.
// Pure; thread-compatible.
#include "geodesic/v1/drill.pb.h"
#include "sim/drill/drill_spec.h"

namespace geodesic::sim {

// Adds every expectation's verdict to `report` (from what it measured) and
// sets `passed`.
void JudgeDrill(const Expectations& expect, v1::DrillReport& report);

}  // namespace geodesic::sim
