#pragma once
// Allocates elephant flows: a splittable multi-commodity flow solved by path
// column generation, class by class in priority order (McfProblem says what
// each class optimizes). Commodities with the same source, destination and
// priority are routed together and share their paths in proportion to demand.
//
// Quality: a class's result is optimal for its LP (paths over all simple
// paths) within McfSolverConfig::relative_gap, proven by a Lagrangian lower
// bound for kMinMaxUtilization classes.
//
// Warm re-solve: the solver keeps the paths and the LP bases of its last
// solve. Resolve() after capacities changed (a link failed, was drained or
// came back) drops the paths that cross a dead arc, restarts each LP from its
// last basis and prices only what changed, which is far cheaper than Solve().
//
// Pure: no I/O, no clock, no threads. Not thread-safe (it holds the warm
// state); use one solver per thread.
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "pathcomp/solver/mcf_problem.h"

namespace geodesic::pathcomp {
namespace internal {
struct SolverState;
}  // namespace internal

struct McfSolverConfig {
  // A kMinMaxUtilization class stops when its utilization is within this
  // fraction of the proven lower bound, or when no path can improve it.
  double relative_gap = 1e-5;
  // Bounds the work per class and phase; the result then reports a larger gap.
  int max_pricing_rounds = 1000;
  // Paths added to a master per pricing round, the most improving first.
  int max_new_paths_per_round = 100;
};

struct McfPathFlow {
  std::vector<int> arcs;  // arc indices from the commodity's src to its dst
  double gbps = 0;
};

struct McfClassResult {
  uint32_t priority = 0;
  McfObjective objective = McfObjective::kMinMaxUtilization;
  double demand_gbps = 0;   // of the routable commodities
  double carried_gbps = 0;
  // Highest arc utilization with this class and those before it on the
  // network; under kMinMaxUtilization, what the class minimized.
  double max_utilization = 0;
  // kMinMaxUtilization: a proven lower bound on the optimal max_utilization.
  double utilization_lower_bound = 0;
  // kMaxFairThroughput: the common fraction of demand every routable flow
  // of the class got at least (1 when everything fits).
  double fair_fraction = 1;
};

struct McfSolveStats {
  bool warm = false;        // Resolve() reused the previous state
  int pricing_rounds = 0;   // over every class and phase
  int lp_solves = 0;
  // Phases a re-solve finished without an LP: what the failure broke fit
  // below the utilization already proven optimal.
  int absorbed_phases = 0;
  int columns = 0;          // paths held at the end
};

struct McfAllocation {
  // Per commodity of the problem, same index.
  std::vector<std::vector<McfPathFlow>> paths;  // paths with flow > 0
  std::vector<double> carried_gbps;
  // Per arc: the load of every class.
  std::vector<double> arc_load_gbps;
  // load / capacity over the arcs with capacity > 0.
  double max_utilization = 0;
  std::vector<McfClassResult> classes;  // by priority, 0 first
  // Commodities with no path over usable arcs (carried 0).
  std::vector<int> unroutable;
  McfSolveStats stats;
};

class McfSolver {
 public:
  explicit McfSolver(McfSolverConfig config = {});
  ~McfSolver();
  McfSolver(const McfSolver&) = delete;
  McfSolver& operator=(const McfSolver&) = delete;

  // Solves from scratch and keeps the state for Resolve(). InvalidArgument
  // for an invalid problem; Internal when the LP solver fails.
  [[nodiscard]] absl::StatusOr<McfAllocation> Solve(const McfProblem& problem);

  // Solves `problem` starting from the last solve's state. Warm when only arc
  // capacities, arc costs, fabric limits or class objectives changed (same
  // nodes, arc endpoints and commodities); otherwise it is Solve().
  [[nodiscard]] absl::StatusOr<McfAllocation> Resolve(const McfProblem& problem);

 private:
  McfSolverConfig config_;
  std::unique_ptr<internal::SolverState> state_;
};

}  // namespace geodesic::pathcomp
