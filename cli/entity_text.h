#pragma once
// Short human-readable descriptions of entities, shared by tectl's tables and
// describe. Pure.
#include <string>

#include "geodesic/v1/health.pb.h"
#include "geodesic/v1/model.pb.h"

namespace geodesic::cli {

// "drain", "pin", "metric-override"; "?" for an intent of no known kind.
std::string IntentAction(const v1::Intent& intent);
// What the intent applies to: "link/iad-nyc", "facility/iad plane 1",
// "workload/w1 path iad>chi", "link/iad-nyc metric 50 until 2024-05-01T12:00:00Z".
std::string IntentTarget(const v1::Intent& intent);

// "up" or "drained", as operators say it.
std::string AdminStateName(v1::AdminState state);

// "elephant", "chain"; "?" when unset.
std::string WorkloadKindName(const v1::Workload& workload);

// "healthy", "slow", "lossy", "flapping", "unknown".
std::string VerdictText(v1::LinkVerdict verdict);
// "near-end probes", "far-end probes", "paths".
std::string EvidenceSourceText(v1::VerdictEvidence::Source source);
// "drained", "undrained", "refused", "fail-open", "fail-open cleared", "held", ...
std::string AutoDrainActionText(v1::AutoDrainEvent::Action action);

}  // namespace geodesic::cli
