#pragma once
// Column generation for one phase of one priority class: a restricted master
// LP over the paths found so far (CLP), priced by shortest paths under the
// master's link duals. Runs until no path can improve the master (then the
// path LP's optimum is the arc-flow LP's optimum) or, when minimizing
// utilization, until the master is within the gap of the Lagrangian bound.
//
// The master keeps only what can move: a flow group with one path and a fixed
// amount is a constant load, not a variable; a group gets a row only when it
// has two paths or more. So the LP is about as large as the set of links and
// split flows, not the set of flows.
//
// Internal to pathcomp/solver. Pure; thread-compatible.
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace geodesic::pathcomp::internal {

inline constexpr double kInfinity = std::numeric_limits<double>::infinity();
// A basis status not yet known (a path or row the LP has not seen).
inline constexpr uint8_t kNoStatus = 0xff;

// The phases of a class: the utilization LP (kMinMaxUtilization, the
// fair-fraction step of kMaxFairThroughput and the first step of
// kMinLatency), the throughput LP and the latency LP.
enum Phase { kUtilizationPhase = 0, kThroughputPhase = 1, kLatencyPhase = 2, kPhaseCount = 3 };

// The network in the solver's units (capacities divided by the largest).
struct Graph {
  int node_count = 0;
  std::vector<int> arc_src, arc_dst;
  std::vector<double> arc_capacity;  // 0 = unusable
  std::vector<double> arc_cost_us;
  std::vector<int> out_offsets, out_arcs;  // CSR adjacency

  // Builds the adjacency from arc_src.
  void Index();
  // The latency of a path of these arcs, summed in their order.
  double LatencyUs(std::span<const int> arcs) const {
    double latency_us = 0;
    for (const int arc : arcs) latency_us += arc_cost_us[arc];
    return latency_us;
  }
};

// A set of arcs folded into 64 bits (arc a -> bit a % 64): a path whose
// bits miss those of the closed arcs avoids them without reading its arcs,
// which keeps the scans over every path of a re-solve cheap.
inline uint64_t ArcBit(int arc) { return uint64_t{1} << (arc & 63); }

// A path's loads on the protection rows of one ProtectionIndex
// (failure_loads.h), kept with the path by the index that computed them.
// A cache: a copy starts empty, and an unprotected path pays 8 bytes for it.
class KeptProtectionLoads {
 public:
  struct Loads {
    uint64_t index = 0;  // the ProtectionIndex's id
    std::vector<std::pair<int, double>> loads;
  };
  KeptProtectionLoads() = default;
  KeptProtectionLoads(const KeptProtectionLoads&) {}
  KeptProtectionLoads& operator=(const KeptProtectionLoads&) {
    kept_.reset();
    return *this;
  }
  KeptProtectionLoads(KeptProtectionLoads&&) = default;
  KeptProtectionLoads& operator=(KeptProtectionLoads&&) = default;

  const Loads* get() const { return kept_.get(); }
  Loads& Reset(uint64_t index) const {
    if (!kept_) kept_ = std::make_unique<Loads>();
    kept_->index = index;
    kept_->loads.clear();
    return *kept_;
  }

 private:
  mutable std::unique_ptr<Loads> kept_;
};

struct PathColumn {
  explicit PathColumn(std::vector<int> path_arcs) : arcs(std::move(path_arcs)) {
    for (int arc : arcs) arc_bits |= ArcBit(arc);
  }
  std::vector<int> arcs;   // never changed after construction
  uint64_t arc_bits = 0;   // ArcBit of every arc
  double flow = 0;                                   // after the last phase that ran
  int idle_rounds = 0;                               // rounds unused and overpriced
  uint8_t status[kPhaseCount] = {kNoStatus, kNoStatus, kNoStatus};  // last basis status per phase
  // What a unit on it puts on a ProtectionIndex's rows: kept, as the master
  // is rebuilt and the path priced many times in one run.
  KeptProtectionLoads protection_loads;
};

// Which arcs paths may use (a PhaseSpec's arc_open, or the usable arcs).
class OpenArcs {
 public:
  explicit OpenArcs(const std::vector<char>& arc_open) : arc_open_(arc_open) {
    for (size_t a = 0; a < arc_open.size(); ++a) {
      if (!arc_open[a]) closed_bits_ |= ArcBit(static_cast<int>(a));
    }
  }
  bool Allow(const PathColumn& path) const {
    if ((path.arc_bits & closed_bits_) == 0) return true;
    for (int arc : path.arcs) {
      if (!arc_open_[arc]) return false;
    }
    return true;
  }

 private:
  const std::vector<char>& arc_open_;
  uint64_t closed_bits_ = 0;
};

// Commodities with the same src, dst and priority: routed as one.
struct FlowGroup {
  uint32_t priority = 0;
  int src = 0;
  int dst = 0;
  double demand = 0;  // solver units
  std::vector<int> commodities;
  std::vector<PathColumn> paths;
  uint8_t row_status[kPhaseCount] = {kNoStatus, kNoStatus, kNoStatus};
};

class FailureLoads;

// A protection row: after failure `failure` (an index into
// PhaseSpec::failure_loads), what the phase's groups put on `arc` stays at
// or below `upper` (solver units). The master holds it softly: an excess
// costs kProtectionExcessCost per unit in the objective, so the master is
// never infeasible and PhaseOutcome says by how much a row could not hold.
struct ProtectionRow {
  int failure = 0;
  int arc = 0;
  double upper = 0;
};

// What one phase optimizes over the groups it is given.
struct PhaseSpec {
  Phase phase = kUtilizationPhase;
  // Utilization phase: row per arc   sum(path flows) - arc_scale * U <= arc_upper,
  //                    minimize U >= utilization_floor; every group routes
  //                    exactly group_lower = group_upper.
  // Throughput phase:  row per arc   sum(path flows) <= arc_upper, maximize the
  //                    total; each group carries within [group_lower, group_upper];
  //                    fabric rows: what a node sends / receives <= its limit.
  // Latency phase:     row per arc   sum(path flows) <= arc_upper; every group
  //                    routes exactly group_lower = group_upper; minimize
  //                    sum(path flow x path cost), the cost of a path being
  //                    the sum of its arcs' arc_cost_us. Its link weights for
  //                    pricing are cost + price, so a path's dual length is
  //                    its latency plus what its congested links charge.
  std::vector<double> arc_scale;
  std::vector<double> arc_upper;
  // Arcs paths may use (unusable arcs, and in the utilization phase arcs with
  // arc_scale 0, are closed).
  std::vector<char> arc_open;
  double utilization_floor = 0;
  // Utilization phase: stop as soon as the master's U is at or below this
  // (and its protection rows hold), optimal or not. A latency class needs U*
  // only for its cap, max(target, (1 + slack) x U*): once a feasible U is
  // below target / (1 + slack), the cap is the target whatever U* is.
  double utilization_enough = 0;
  std::vector<double> group_lower, group_upper;  // per group given to Run
  std::vector<double> send_limit, receive_limit;  // per node; empty or kInfinity = no row
  // Utilization phase only: keep the flows of every group already routed
  // over open paths (flows adding up to its demand) as constants until
  // pricing shows that moving them helps. After a change only the groups it
  // broke start free, so a re-solve's LPs start as small as the change.
  bool freeze_routed_groups = false;
  // Utilization and latency phases: loads to keep after failures (see
  // ProtectionRow). With rows, pricing is approximate (a path's load after a
  // failure is not a sum over its arcs): a path enters only when its exact
  // reduced cost improves the master, no Lagrangian bound is claimed beyond
  // the one inherited, and no failure is absorbed without an LP.
  std::vector<ProtectionRow> protection_rows;
  const std::vector<FailureLoads>* failure_loads = nullptr;  // every failure the rows name
};

// The warm-start memory of one (class, phase) master besides what the
// groups hold: the basis status of its arc rows, fabric rows and U, and the
// last link prices (which pick the first path of a group that has none).
struct MasterBasis {
  std::vector<double> arc_weights;  // link prices (latency phase: cost + price)
  std::vector<uint8_t> arc_rows;
  std::vector<uint8_t> send_rows, receive_rows;
  uint8_t utilization = kNoStatus;
  // Utilization phase: the lower bound the last run proved and what it held
  // for. Still a bound when no capacity grew, the demands are the same and
  // the same groups are routed (less capacity never lowers the optimum, but
  // a group cut off and left out can), so a re-solve after a failure stops
  // as soon as it routes around it at the old utilization.
  double proven_lower_bound = 0;
  std::vector<double> bound_arc_capacity;  // arc_scale, 0 where closed
  std::vector<double> bound_arc_upper;
  std::vector<double> bound_group_demand;
  double bound_floor = 0;
  std::vector<int> bound_left_out;  // positions of the groups the bound left out
  // The link prices of the last run's best Lagrangian bound (0 on arcs closed
  // then), with its numerator sum(demand * distance) - sum(price * arc_upper)
  // and the arc_upper it subtracted. After a failure the numerator still
  // bounds the new one (distances only grow), so over the prices of the arcs
  // still open it bounds the new optimum without a search. Empty when the
  // last run proved no bound of its own.
  std::vector<double> price_weights;
  std::vector<double> price_arc_upper;
  double price_numerator = 0;
  // Protection rows' basis statuses (in PhaseSpec order; reset when their
  // number changes).
  std::vector<uint8_t> protection_rows;

  // Forgets the bounds proven for the last run's demands (its groups, by
  // position), keeping the statuses and prices: for a run on other groups.
  void ForgetProofs() {
    proven_lower_bound = 0;
    bound_arc_capacity.clear();
    bound_arc_upper.clear();
    bound_group_demand.clear();
    bound_floor = 0;
    bound_left_out.clear();
    price_weights.clear();
    price_arc_upper.clear();
    price_numerator = 0;
  }
};

struct PhaseOutcome {
  double objective = 0;    // U, or the total carried (solver units)
  double lower_bound = 0;  // utilization phase: proven bound on the optimal U
  int pricing_rounds = 0;
  int pricing_threads = 1;  // ColumnGenerationLimits::threads as this phase could use them
  int lp_solves = 0;
  bool absorbed = false;  // routed around a failure at a proven bound, no LP
  // ColumnGenerationLimits::stop ended it: its flows hold the arc rows, the
  // protection rows perhaps not, and protection_excess proves nothing.
  bool stopped = false;
  std::vector<int> unroutable;  // positions in `groups` with no open path (left out)
  // Per arc: what the groups' flows put on it at the end (solver units).
  std::vector<double> arc_load;
  // Per protection row: how far the load after its failure is above its
  // upper (solver units; 0 where it holds).
  std::vector<double> protection_excess;
};

struct ColumnGenerationLimits {
  double relative_gap = 0;
  int max_pricing_rounds = 0;
  int max_new_paths_per_round = 0;
  // Asked before every pricing round of a phase with protection rows; true
  // ends the phase where it is (PhaseOutcome::stopped). May be null.
  const std::function<bool()>* stop = nullptr;
  // Threads a pricing round may share its sources out to (this one among
  // them; the phases with protection rows price on this one alone). The
  // outcome is the same whatever the number.
  int threads = 1;
};

// Runs column generation over `groups` (paths, flows and statuses are
// updated in place; a group without a path gets the cheapest one first).
// Internal when CLP fails.
[[nodiscard]] absl::StatusOr<PhaseOutcome> RunColumnGeneration(const Graph& graph,
                                                               const PhaseSpec& spec,
                                                               std::span<FlowGroup* const> groups,
                                                               MasterBasis& basis,
                                                               const ColumnGenerationLimits& limits);

}  // namespace geodesic::pathcomp::internal
