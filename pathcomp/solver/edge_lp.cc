#include "pathcomp/solver/edge_lp.h"

#include <ClpSimplex.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "pathcomp/solver/internal/column_wise_lp.h"

namespace geodesic::pathcomp {
namespace {

using internal::ColumnWiseLp;

constexpr double kInfinity = std::numeric_limits<double>::infinity();

bool Usable(const McfArc& arc) { return arc.capacity_gbps > 0; }

// Nodes reachable from `source` over usable arcs.
std::vector<char> Reachable(const McfProblem& problem, int source) {
  std::vector<std::vector<int>> out(problem.node_count);
  for (const McfArc& arc : problem.arcs) {
    if (Usable(arc)) out[arc.src].push_back(arc.dst);
  }
  std::vector<char> seen(problem.node_count, 0);
  std::vector<int> stack = {source};
  seen[source] = 1;
  while (!stack.empty()) {
    const int node = stack.back();
    stack.pop_back();
    for (int next : out[node]) {
      if (!seen[next]) {
        seen[next] = 1;
        stack.push_back(next);
      }
    }
  }
  return seen;
}

double Limit(const std::vector<double>& limits, int node) {
  return limits.empty() ? kInfinity : limits[node];
}

// The per-source aggregated demand and what part of it can be routed.
struct SourceDemands {
  int node_count = 0;
  std::vector<int> sources;                 // nodes with routable demand
  std::vector<std::vector<double>> demand;  // [source][node], Gbps
  std::vector<std::vector<char>> reachable; // [source][node]
  std::vector<int> unroutable;

  SourceDemands(const McfProblem& problem) : node_count(problem.node_count) {
    demand.assign(node_count, {});
    reachable.assign(node_count, {});
    for (size_t i = 0; i < problem.commodities.size(); ++i) {
      const McfCommodity& commodity = problem.commodities[i];
      if (commodity.demand_gbps <= 0) continue;
      if (reachable[commodity.src].empty()) {
        reachable[commodity.src] = Reachable(problem, commodity.src);
        demand[commodity.src].assign(node_count, 0);
        sources.push_back(commodity.src);
      }
      if (!reachable[commodity.src][commodity.dst]) {
        unroutable.push_back(static_cast<int>(i));
        continue;
      }
      demand[commodity.src][commodity.dst] += commodity.demand_gbps;
    }
    std::sort(sources.begin(), sources.end());
  }
};

// The LP: per source s, a flow f[s][arc] on every usable arc leaving a node s
// reaches; conservation at every reachable node but s; shared arc capacity.
// kMinMaxUtilization: every node v absorbs exactly demand[s][v], arc load
// <= U * capacity, minimize U. Throughput: v absorbs a variable carried[s][v]
// in [lower_fraction * demand, demand], arc load <= capacity, fabric limits on
// what each node sends and receives, maximize the total carried.
class EdgeLp {
 public:
  EdgeLp(const McfProblem& problem, const SourceDemands& demands)
      : problem_(problem), demands_(demands) {}

  absl::StatusOr<EdgeLpResult> MinMaxUtilization() {
    ColumnWiseLp lp;
    const int conservation = AddConservationRows(lp, /*absorb_exactly=*/true);
    const int first_arc_row = conservation;
    for (const McfArc& arc : problem_.arcs) lp.AddRow(-kInfinity, Usable(arc) ? 0 : kInfinity);
    // U never drops below what a fabric must send or receive over its limit:
    // routing cannot change that.
    double floor = 0;
    for (int s : demands_.sources) {
      double sent = 0;
      for (double d : demands_.demand[s]) sent += d;
      if (sent > 0) floor = std::max(floor, sent / Limit(problem_.node_send_gbps, s));
    }
    for (int v = 0; v < problem_.node_count; ++v) {
      double received = 0;
      for (int s : demands_.sources) received += demands_.demand[s][v];
      if (received > 0) floor = std::max(floor, received / Limit(problem_.node_receive_gbps, v));
    }
    const int utilization = lp.AddColumn(1, floor, kInfinity);
    for (size_t a = 0; a < problem_.arcs.size(); ++a) {
      if (Usable(problem_.arcs[a])) lp.Add(first_arc_row + static_cast<int>(a), -problem_.arcs[a].capacity_gbps);
    }
    AddFlowColumns(lp, first_arc_row);
    ClpSimplex model;
    model.setLogLevel(0);
    lp.LoadInto(model);
    if (absl::Status solved = Solve(model); !solved.ok()) return solved;
    EdgeLpResult result = Loads(model, first_arc_row);
    result.max_utilization = model.primalColumnSolution()[utilization];
    for (int s : demands_.sources) {
      for (double d : demands_.demand[s]) result.carried_gbps += d;
    }
    return result;
  }

  // Every demand routed, every usable arc's load <= cap x capacity,
  // minimize sum(arc load x arc cost): the demand-weighted path latency.
  absl::StatusOr<EdgeLpResult> MinLatency(double cap) {
    ColumnWiseLp lp;
    const int first_arc_row = AddConservationRows(lp, /*absorb_exactly=*/true);
    for (const McfArc& arc : problem_.arcs) lp.AddRow(-kInfinity, Usable(arc) ? cap * arc.capacity_gbps : 0);
    AddFlowColumns(lp, first_arc_row, /*with_cost=*/true);
    ClpSimplex model;
    model.setLogLevel(0);
    lp.LoadInto(model);
    if (absl::Status solved = Solve(model); !solved.ok()) return solved;
    EdgeLpResult result = Loads(model, first_arc_row);
    result.utilization_cap = cap;
    result.latency_gbps_us = model.objectiveValue();
    for (int s : demands_.sources) {
      for (double d : demands_.demand[s]) result.carried_gbps += d;
    }
    return result;
  }

  absl::StatusOr<EdgeLpResult> MaxThroughput(double lower_fraction) {
    ColumnWiseLp lp;
    const int first_arc_row = AddConservationRows(lp, /*absorb_exactly=*/false);
    for (const McfArc& arc : problem_.arcs) lp.AddRow(-kInfinity, std::max(0.0, arc.capacity_gbps));
    const int first_send_row = lp.AddRow(-kInfinity, kInfinity);
    for (int v = 1; v < problem_.node_count; ++v) lp.AddRow(-kInfinity, kInfinity);
    const int first_receive_row = lp.AddRow(-kInfinity, kInfinity);
    for (int v = 1; v < problem_.node_count; ++v) lp.AddRow(-kInfinity, kInfinity);
    AddFlowColumns(lp, first_arc_row);
    ClpSimplex model;
    model.setLogLevel(0);
    // carried[s][v]: leaves the flow of s at v (-1 in the conservation row).
    int row = 0;
    for (int s : demands_.sources) {
      for (int v = 0; v < problem_.node_count; ++v) {
        if (v == s || !demands_.reachable[s][v]) continue;
        const double demand = demands_.demand[s][v];
        if (demand > 0) {
          lp.AddColumn(-1, lower_fraction * demand, demand);
          lp.Add(row, -1);
          lp.Add(first_send_row + s, 1);
          lp.Add(first_receive_row + v, 1);
        }
        ++row;
      }
    }
    lp.LoadInto(model);
    for (int v = 0; v < problem_.node_count; ++v) {
      model.setRowUpper(first_send_row + v, Limit(problem_.node_send_gbps, v));
      model.setRowUpper(first_receive_row + v, Limit(problem_.node_receive_gbps, v));
    }
    if (absl::Status solved = Solve(model); !solved.ok()) return solved;
    EdgeLpResult result = Loads(model, first_arc_row);
    result.carried_gbps = -model.objectiveValue();
    return result;
  }

 private:
  // One row per (source, reachable node other than the source); returns the
  // row count. Row value = inflow - outflow (- carried).
  int AddConservationRows(ColumnWiseLp& lp, bool absorb_exactly) {
    int rows = 0;
    for (int s : demands_.sources) {
      for (int v = 0; v < problem_.node_count; ++v) {
        if (v == s || !demands_.reachable[s][v]) continue;
        const double demand = absorb_exactly ? demands_.demand[s][v] : 0.0;
        lp.AddRow(demand, demand);
        ++rows;
      }
    }
    return rows;
  }

  void AddFlowColumns(ColumnWiseLp& lp, int first_arc_row, bool with_cost = false) {
    const int n = problem_.node_count;
    int base = 0;
    for (int s : demands_.sources) {
      // Row of (s, v) within this source's block, -1 when it has none.
      std::vector<int> row_of(n, -1);
      int next = base;
      for (int v = 0; v < n; ++v) {
        if (v != s && demands_.reachable[s][v]) row_of[v] = next++;
      }
      for (size_t a = 0; a < problem_.arcs.size(); ++a) {
        const McfArc& arc = problem_.arcs[a];
        if (!Usable(arc) || !demands_.reachable[s][arc.src] || arc.dst == s) continue;
        lp.AddColumn(with_cost ? arc.cost_us : 0, 0, kInfinity);
        if (row_of[arc.src] >= 0) lp.Add(row_of[arc.src], -1);
        lp.Add(row_of[arc.dst], 1);
        lp.Add(first_arc_row + static_cast<int>(a), 1);
        flow_arc_.push_back(static_cast<int>(a));
        flow_column_.push_back(lp.column_count() - 1);
      }
      base = next;
    }
  }

  static absl::Status Solve(ClpSimplex& model) {
    // CLP's default cold solve: presolve, then the dual simplex. (The
    // barrier was not compared; a faster reference would only shrink the
    // ratios the benchmark reports.)
    model.initialSolve();
    if (!model.isProvenOptimal()) {
      return absl::InternalError(absl::StrCat("CLP status ", model.status()));
    }
    return absl::OkStatus();
  }

  EdgeLpResult Loads(const ClpSimplex& model, int first_arc_row) const {
    EdgeLpResult result;
    result.unroutable = demands_.unroutable;
    result.arc_load_gbps.assign(problem_.arcs.size(), 0);
    const double* x = model.primalColumnSolution();
    for (size_t i = 0; i < flow_arc_.size(); ++i) result.arc_load_gbps[flow_arc_[i]] += x[flow_column_[i]];
    return result;
  }

  const McfProblem& problem_;
  const SourceDemands& demands_;
  std::vector<int> flow_arc_, flow_column_;
};

}  // namespace

absl::StatusOr<EdgeLpResult> SolveEdgeLpLatencyUnderCap(const McfProblem& problem, double cap) {
  if (absl::Status valid = ValidateMcfProblem(problem); !valid.ok()) return valid;
  if (!(cap > 0) || !std::isfinite(cap)) return absl::InvalidArgumentError("the utilization cap must be positive and finite");
  const SourceDemands demands(problem);
  return EdgeLp(problem, demands).MinLatency(cap);
}

absl::StatusOr<EdgeLpResult> SolveEdgeLp(const McfProblem& problem, McfObjective objective) {
  if (absl::Status valid = ValidateMcfProblem(problem); !valid.ok()) return valid;
  const SourceDemands demands(problem);
  if (objective == McfObjective::kMinMaxUtilization) return EdgeLp(problem, demands).MinMaxUtilization();
  if (objective == McfObjective::kMinLatency) {
    absl::StatusOr<EdgeLpResult> optimum = EdgeLp(problem, demands).MinMaxUtilization();
    if (!optimum.ok()) return optimum.status();
    absl::StatusOr<EdgeLpResult> result =
        EdgeLp(problem, demands).MinLatency(LatencyUtilizationCap(problem.policies.default_policy, optimum->max_utilization));
    if (result.ok()) result->max_utilization = optimum->max_utilization;
    return result;
  }

  // Fair throughput: the largest common fraction is 1 / the optimal MLU of
  // the whole demand (scaling a routing scales every load), then the most
  // total with every flow at least that fraction.
  absl::StatusOr<EdgeLpResult> concurrent = EdgeLp(problem, demands).MinMaxUtilization();
  if (!concurrent.ok()) return concurrent.status();
  const double fraction =
      concurrent->max_utilization > 1 ? 1 / concurrent->max_utilization : 1.0;
  // A hair below the fraction, so rounding in the first LP cannot make the
  // second infeasible.
  absl::StatusOr<EdgeLpResult> result = EdgeLp(problem, demands).MaxThroughput(fraction * (1 - 1e-9));
  if (result.ok()) result->fair_fraction = fraction;
  return result;
}

}  // namespace geodesic::pathcomp
