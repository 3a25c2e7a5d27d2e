#pragma once
// What the elephant-flow allocation tests share: the REPETITA datasets of
// ../shared/data as McfProblems, built the way the service builds them (model
// -> Snapshot -> problem) with every link measured up, and a check that an
// allocation is a real flow. Test-only.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "pathcomp/solver/mcf_problem.h"
#include "pathcomp/solver/mcf_solver.h"
#include "pathcomp/solver/snapshot.h"
#include "topology/repetita.h"
#include "topology/synthetic_wan.h"

namespace geodesic::pathcomp::testing {

inline std::string RepetitaDir() {
  const char* dir = std::getenv("GEODESIC_SOURCE_DIR");
  return std::string(dir ? dir : ".") + "/../shared/data/repetita";
}

// The eight networks of ../shared/data/repetita, smallest first.
inline const std::vector<std::string>& RepetitaNetworks() {
  static const std::vector<std::string> networks = {"Abilene",  "Geant2009", "AttMpls",   "Esnet",
                                                    "Deltacom", "GtsCe",     "UsCarrier", "Cogentco"};
  return networks;
}

// The snapshot of `topology` as the service builds it, every link measured up.
inline Snapshot SnapshotAllUp(const topology::Topology& topology) {
  ModelView model;
  model.facilities = topology.facilities;
  model.nodes = topology.nodes;
  model.links = topology.links;
  model.workloads = topology.workloads;
  for (v1::Link& link : model.links) link.mutable_health()->set_state(v1::OPER_STATE_UP);
  return Snapshot::Build(model);
}

// The snapshot of `network` with its .0000.demands, every link up.
inline absl::StatusOr<Snapshot> LoadRepetitaSnapshot(const std::string& network) {
  const std::string base = RepetitaDir() + "/" + network;
  absl::StatusOr<topology::Topology> topology =
      topology::LoadRepetita(base + ".graph", base + ".0000.demands");
  if (!topology.ok()) return topology.status();
  return SnapshotAllUp(*topology);
}

// A generated backbone (topology::GenerateSyntheticWan) as a problem, every
// link up.
inline absl::StatusOr<McfProblem> GeneratedProblem(uint32_t facilities, uint32_t flows, uint64_t seed) {
  topology::SyntheticWanOptions options;
  options.seed = seed;
  options.facilities = facilities;
  options.elephant_flows = flows;
  absl::StatusOr<topology::Topology> topology = topology::GenerateSyntheticWan(options);
  if (!topology.ok()) return topology.status();
  return McfProblemFromSnapshot(SnapshotAllUp(*topology));
}

inline absl::StatusOr<McfProblem> LoadRepetitaProblem(const std::string& network) {
  absl::StatusOr<Snapshot> snapshot = LoadRepetitaSnapshot(network);
  if (!snapshot.ok()) return snapshot.status();
  return McfProblemFromSnapshot(*snapshot);
}

// sum(arc load x arc cost) of `allocation`: the demand-weighted latency
// the kMinLatency objective minimizes, Gbps x microseconds.
inline double LatencyOf(const McfProblem& problem, const McfAllocation& allocation) {
  double total = 0;
  for (size_t a = 0; a < problem.arcs.size(); ++a) total += allocation.arc_load_gbps[a] * problem.arcs[a].cost_us;
  return total;
}

// Empty when `allocation` is a flow of `problem`: every path runs over
// usable arcs from its commodity's src to its dst; a commodity's paths add up
// to what it carried, which never exceeds its demand; the arc loads are the
// sum of the paths over them; max_utilization is the highest load/capacity.
// Otherwise the first problem found. `tolerance` is relative to the largest
// demand.
inline std::string FlowProblem(const McfProblem& problem, const McfAllocation& allocation,
                               double tolerance = 1e-6) {
  double largest = 1e-9;
  for (const McfCommodity& commodity : problem.commodities) largest = std::max(largest, commodity.demand_gbps);
  const double slack = tolerance * largest;
  if (allocation.paths.size() != problem.commodities.size() ||
      allocation.carried_gbps.size() != problem.commodities.size() ||
      allocation.arc_load_gbps.size() != problem.arcs.size()) {
    return "sizes do not match the problem";
  }
  std::vector<double> load(problem.arcs.size(), 0);
  for (size_t c = 0; c < problem.commodities.size(); ++c) {
    const McfCommodity& commodity = problem.commodities[c];
    double carried = 0;
    for (const McfPathFlow& path : allocation.paths[c]) {
      int at = commodity.src;
      for (int arc : path.arcs) {
        if (arc < 0 || arc >= static_cast<int>(problem.arcs.size()) || problem.arcs[arc].src != at ||
            problem.arcs[arc].capacity_gbps <= 0) {
          return absl::StrCat("commodity ", c, ": path is not a walk over usable arcs");
        }
        at = problem.arcs[arc].dst;
        load[arc] += path.gbps;
      }
      if (at != commodity.dst) return absl::StrCat("commodity ", c, ": path ends at ", at);
      if (path.gbps < 0) return absl::StrCat("commodity ", c, ": negative flow");
      carried += path.gbps;
    }
    if (std::abs(carried - allocation.carried_gbps[c]) > slack) {
      return absl::StrCat("commodity ", c, ": paths carry ", carried, ", reported ", allocation.carried_gbps[c]);
    }
    if (carried > commodity.demand_gbps + slack) {
      return absl::StrCat("commodity ", c, ": carries ", carried, " > demand ", commodity.demand_gbps);
    }
  }
  double highest = 0;
  for (size_t a = 0; a < problem.arcs.size(); ++a) {
    if (std::abs(load[a] - allocation.arc_load_gbps[a]) > slack) {
      return absl::StrCat("arc ", a, ": paths load ", load[a], ", reported ", allocation.arc_load_gbps[a]);
    }
    if (problem.arcs[a].capacity_gbps > 0) highest = std::max(highest, load[a] / problem.arcs[a].capacity_gbps);
  }
  if (std::abs(highest - allocation.max_utilization) > tolerance * std::max(1.0, highest)) {
    return absl::StrCat("max utilization ", highest, ", reported ", allocation.max_utilization);
  }
  return "";
}

// Empty when every routable commodity of a kMinMaxUtilization problem is
// fully carried.
inline std::string UnroutedDemand(const McfProblem& problem, const McfAllocation& allocation,
                                  double tolerance = 1e-6) {
  std::vector<char> unroutable(problem.commodities.size(), 0);
  for (int c : allocation.unroutable) unroutable[c] = 1;
  for (size_t c = 0; c < problem.commodities.size(); ++c) {
    const double demand = problem.commodities[c].demand_gbps;
    if (!unroutable[c] && std::abs(allocation.carried_gbps[c] - demand) > tolerance * std::max(1.0, demand)) {
      return absl::StrCat("commodity ", c, ": carried ", allocation.carried_gbps[c], " of ", demand);
    }
  }
  return "";
}

}  // namespace geodesic::pathcomp::testing
