#pragma once
// Computes, for every facility, the routes its routers need: for each prefix of
// every other facility, the next hops on the lowest-latency path (all equal-cost
// first hops, equal weights) and precomputed backups for the failure of each
// first-hop link, each SRLG those links run through, and each transit facility.
// Pure: no I/O, no clock, no threads. Thread-compatible.
#include <cstdint>
#include <string>

#include "geodesic/v1/plan.pb.h"
#include "pathcomp/solver/snapshot.h"

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
  [[nodiscard]] v1::Plan Solve(const Snapshot& snapshot, const PlanStamp& stamp) const;
};

// Counts routes whose next hops differ between two site plans (added, removed or changed).
uint32_t CountChangedRoutes(const v1::SitePlan& before, const v1::SitePlan& after);

}  // namespace geodesic::pathcomp
