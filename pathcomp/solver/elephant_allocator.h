#pragma once
// Allocates the snapshot's elephant flows with the MCF solver (mcf_solver.h),
// after the agent chains were placed: links on a chain's primary path keep
// `chain_headroom` of their capacity free of elephant traffic, so
// latency-critical calls never queue behind bulk transfers. Fabric limits come
// from the snapshot. Keeps the solver's warm state between calls, so a plan
// after a health change re-solves incrementally, and remembers each
// workload's paths to name the flows that moved.
// Pure: no I/O, no clock, no threads. Not thread-safe.
#include <map>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "geodesic/v1/plan.pb.h"
#include "pathcomp/solver/chain_placer.h"
#include "pathcomp/solver/mcf_solver.h"
#include "pathcomp/solver/snapshot.h"

namespace geodesic::pathcomp {

struct ElephantPlan {
  McfProblem problem;        // as solved (capacities after headroom)
  McfAllocation allocation;  // per commodity = per Snapshot::demands()
  v1::ElephantAllocation summary;
  std::vector<std::string> moved_workload_ids;  // paths differ from the last call's
};

class ElephantAllocator {
 public:
  // `chain_headroom` in [0, 1): the share of a chain link's capacity kept
  // from elephant flows.
  // `policies`: what each priority class optimizes (by default the MLU).
  explicit ElephantAllocator(double chain_headroom, McfClassPolicies policies = {})
      : chain_headroom_(chain_headroom), policies_(std::move(policies)) {}

  // `chain_primaries`: the chains' primary placements (ChainPlan::primary,
  // or ChainPlacer::PlacePrimaries), whose links keep the headroom.
  // `protection`, when given, holds the protected classes to those limits
  // (a protection round of the planner, protection.h): the workloads that
  // moved are then those that moved since the last call without it.
  // `threads`: the solver's pricing may use that many (McfSolverConfig::
  // threads); the plan is the same whatever the number.
  [[nodiscard]] absl::StatusOr<ElephantPlan> Allocate(const Snapshot& snapshot,
                                                      std::span<const ChainPlacement> chain_primaries,
                                                      const McfProtection* protection = nullptr, int threads = 1);

  const McfClassPolicies& policies() const { return policies_; }

 private:
  const double chain_headroom_;
  const McfClassPolicies policies_;
  McfSolver solver_;
  bool solved_once_ = false;
  std::map<std::string, std::string> paths_of_;  // workload id -> path signature
  std::map<std::string, std::string> paths_before_;  // paths_of_ before the last call without protection
};

}  // namespace geodesic::pathcomp
