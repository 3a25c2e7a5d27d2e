#pragma once
// How much longer the allocation's paths are than they need to be: a path's
// stretch is its latency (the sum of its arcs' cost_us) over the latency of
// the lowest-latency path between the same facilities over usable arcs. The
// figure operators compare objectives by (tectl solve, plans, bench_solver):
// minimizing the MLU spreads traffic over long paths even on an empty
// network; the latency objective keeps stretch near 1 while there is room.
// Pure: no I/O, no clock, no threads. Thread-compatible.
#include <cstdint>
#include <map>

#include "pathcomp/solver/mcf_problem.h"
#include "pathcomp/solver/mcf_solver.h"

namespace geodesic::pathcomp {

struct LatencyStretch {
  // Weighted by the Gbps on each path: the mean stretch and the stretch at
  // or below which 95% of the carried traffic runs. 1 when nothing is carried.
  double mean = 1;
  double p95 = 1;
  double carried_gbps = 0;
  // Demand-weighted mean path latency, microseconds.
  double mean_latency_us = 0;
};

struct StretchReport {
  LatencyStretch all;
  std::map<uint32_t, LatencyStretch> by_class;  // by priority
};

// `allocation` is a solve of `problem` (same commodities, same arcs). A
// commodity whose shortest latency is 0 (zero-cost arcs) counts as stretch 1.
StretchReport MeasureLatencyStretch(const McfProblem& problem, const McfAllocation& allocation);

}  // namespace geodesic::pathcomp
