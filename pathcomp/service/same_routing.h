#pragma once
// Whether a newly computed plan changes anything routerd or an operator would
// see, so that the planner publishes a new generation only when it does.
// Pure: no I/O, no clock, no threads. Thread-safe.
#include "geodesic/v1/plan.pb.h"

namespace geodesic::pathcomp {

// True when `computed` routes every site's prefixes the same way as
// `published` (same sites in the same order, same routes with the same next
// hops, backups and path latencies), names the same unreachable pairs and
// single-facility dependencies, and moved no workload. Stamps (generation,
// epoch, reason, times) and the chains' placements and measured latencies
// are ignored: a moved chain shows in moved_workload_ids.
bool SameRouting(const v1::Plan& published, const v1::Plan& computed);

}  // namespace geodesic::pathcomp
