#pragma once
// The chain placer's answer (chain_placer.h) as the plan's wire form.
// Pure: no I/O, no clock, no threads.
#include <string>
#include <vector>

#include "geodesic/v1/plan.pb.h"
#include "pathcomp/solver/chain_placer.h"
#include "pathcomp/solver/snapshot.h"

namespace geodesic::pathcomp {

// Appends to `plan` every chain (primary and backups; failures with the same
// backup share one entry; the paths its hops take in its own path table,
// site_plan/chain_paths.h) in workload id order, and the single-facility
// dependencies of chains and elephant flows.
void AddChainPlan(const Snapshot& snapshot, const ChainPlan& chains, v1::Plan& plan);

// Where a chain runs and the paths it takes, without the measured latencies:
// equal shapes are the same assignment. `assignment` is one of `chain`'s,
// which passed site_plan::ValidateChainPaths.
std::string ChainShape(const v1::ChainPlan& chain, const v1::ChainAssignment& assignment);

// The chains whose primary assignment differs in shape between two plans,
// including chains only one of them has; ascending.
std::vector<std::string> MovedChains(const v1::Plan& before, const v1::Plan& after);

}  // namespace geodesic::pathcomp
