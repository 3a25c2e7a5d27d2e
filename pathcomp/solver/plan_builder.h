#pragma once
// A whole plan from one snapshot, as pathcomp publishes it: agent chains
// placed first (latency-critical), the elephant flows allocated in what is
// left, routes following that allocation as weighted next hops once the
// weights are shown to forward it loop-free, backups, the single-facility
// audit, and the workloads that moved since `previous`. Shared by the
// planner, what-if and the drill simulator, so all three plan alike.
// Pure: no I/O, no clock, no threads.
#include <optional>
#include <string>
#include <vector>

#include "geodesic/v1/plan.pb.h"
#include "pathcomp/solver/chain_placer.h"
#include "pathcomp/solver/elephant_allocator.h"
#include "pathcomp/solver/path_solver.h"

namespace geodesic::pathcomp {

struct BuiltPlan {
  v1::Plan plan;
  ChainPlan chains;
  std::optional<ElephantPlan> elephants;  // nullopt when the allocation failed
  // What went wrong on the way (the plan is still usable: routes then fall
  // back to lowest-latency next hops), one line each, for the caller to log.
  std::vector<std::string> problems;
};

// `allocator` keeps its warm state between calls; `previous` may be null.
BuiltPlan BuildPlan(const Snapshot& snapshot, const PlanStamp& stamp, ElephantAllocator& allocator,
                    const v1::Plan* previous);

}  // namespace geodesic::pathcomp
