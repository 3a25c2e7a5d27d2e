#pragma once
// The exact reference for the elephant-flow allocation: the edge-based
// (arc-flow) linear program, built directly for COIN-OR CLP and solved from
// scratch. Commodities are aggregated per source (one flow per source and
// arc), which keeps the LP exact for both objectives and as small as an exact
// formulation gets: sources x arcs columns, sources x nodes + arcs rows.
// Used by tests and benchmarks to measure McfSolver against the optimum; too
// slow for the control loop on large networks, which is the point.
// Pure: no I/O, no clock, no threads. Thread-compatible (each call owns its LP).
#include <vector>

#include "absl/status/statusor.h"
#include "pathcomp/solver/mcf_problem.h"

namespace geodesic::pathcomp {

struct EdgeLpResult {
  // kMinMaxUtilization: the optimal highest link utilization.
  double max_utilization = 0;
  // kMaxFairThroughput: the largest common fraction of every demand (<= 1).
  double fair_fraction = 0;
  // kMinLatency: the cap every link's utilization stays within, and the
  // least sum(load x cost) under it (Gbps x microseconds; divided by the
  // carried Gbps, the demand-weighted mean path latency).
  double utilization_cap = 0;
  double latency_gbps_us = 0;
  // Demand carried, Gbps (every routable demand under kMinMaxUtilization).
  double carried_gbps = 0;
  std::vector<double> arc_load_gbps;  // per arc of the problem
  // Commodities with no path over usable arcs; left out of the LP.
  std::vector<int> unroutable;
};

// Solves every commodity as one class with `objective` (priorities and
// class policies are ignored; fabric limits apply as in McfProblem).
// InvalidArgument for an invalid problem; Internal when CLP does not reach
// an optimum.
// kMinLatency uses problem.policies.default_policy's cap over the MLU optimum that
// this LP finds first (max_utilization reports that optimum).
[[nodiscard]] absl::StatusOr<EdgeLpResult> SolveEdgeLp(const McfProblem& problem,
                                                       McfObjective objective);

// The latency LP alone under a given utilization cap (> 0): for comparing
// with a solver that found its own MLU within a gap. InvalidArgument for an
// invalid problem or cap; Internal when CLP finds no optimum (also when the
// cap leaves the demand no room).
[[nodiscard]] absl::StatusOr<EdgeLpResult> SolveEdgeLpLatencyUnderCap(const McfProblem& problem, double cap);

}  // namespace geodesic::pathcomp
