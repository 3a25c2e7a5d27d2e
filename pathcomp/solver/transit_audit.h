#pragma once
// The single-facility audit of elephant flows: every facility that each path
// of a flow, from its source facility to its destination's, has to cross.
// Those are the destination's dominators in the graph of usable links seen
// from the source, so one dominator tree per source facility answers every
// flow leaving it (instead of a shortest-path run per facility and flow).
// Pure: no I/O, no clock, no threads.
#include <vector>

#include "pathcomp/solver/chain_placer.h"
#include "pathcomp/solver/snapshot.h"

namespace geodesic::pathcomp {

// One dependency per (elephant flow, transit facility it cannot do without),
// the reason "facility X is the only transit between S and D"; in no
// particular order. Flows whose destination cannot be reached have none.
std::vector<FacilityDependency> ElephantTransitDependencies(const Snapshot& snapshot);

}  // namespace geodesic::pathcomp
