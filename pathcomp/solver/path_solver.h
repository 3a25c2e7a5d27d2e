#pragma once
// Computes, for every facility, the routes its routers need: for each prefix of
// every other facility, the primary next hops and precomputed backups for the
// failure of each primary next-hop link, each SRLG those links run through,
// and each transit facility of the primary path. Primary next hops are the
// lowest-latency ones (all equal-cost first hops, equal weights), or, given
// the WCMP of an elephant allocation, that allocation's weighted next hops
// where it sends traffic toward the destination. A backup is the neighbour
// that loses the least of the traffic (until the next plan the other routers
// forward as before): what its own installed next hops, followed onwards,
// lead back to this facility or into the failure (none: a loop-free
// alternate), and, given an allocation, what the failure moves off the
// primary beyond the room left on its links (the link and the heaviest next
// hops onwards; only when the failure takes every primary next hop: routerd
// keeps the survivors otherwise); the lowest-latency among equals, its path the one that
// forwarding takes; where every neighbour sends it all back, the
// lowest-latency path that avoids the failure.
// Pure: no I/O, no clock. Solve with `threads` > 1 shares the sites out to
// that many threads (it joins them before returning); the plan is the same
// whatever the count. Thread-compatible.
#include <cstdint>
#include <string>

#include "geodesic/v1/plan.pb.h"
#include "pathcomp/solver/snapshot.h"
#include "pathcomp/solver/wcmp.h"

namespace geodesic::pathcomp {

// Stamped onto the plan; the solver does not invent these.
struct PlanStamp {
  uint64_t generation = 0;
  uint64_t epoch = 0;
  std::string replica_id;
  int64_t computed_at_unix_ms = 0;
  std::string reason;
};

class PathSolver {
 public:
  // A plan with one SitePlan per facility (in facility id order), routes in
  // prefix order, and the facility pairs that have no usable path in `unreachable`
  // as "src->dst".
  //
  // `weights`, when given, must be BuildWcmp() of this snapshot (it is
  // ignored when its sizes do not match). A route whose WcmpRoute follows
  // the allocation then gets its weighted next hops, and its primary path
  // is the one along the heaviest next hop at every facility (ties: lowest
  // link index), with that path's latency. Other routes are as without it.
  //
  // `threads`: how many threads make the sites' plans (at least 1; the
  // calling thread is one of them).
  [[nodiscard]] v1::Plan Solve(const Snapshot& snapshot, const PlanStamp& stamp, const Wcmp* weights = nullptr,
                               int threads = 1) const;
};

// Counts routes whose next hops differ between two site plans (added, removed or changed).
uint32_t CountChangedRoutes(const v1::SitePlan& before, const v1::SitePlan& after);

}  // namespace geodesic::pathcomp
