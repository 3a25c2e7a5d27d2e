#pragma once
// Where every workload's traffic goes in one plan, by link id, as the drill
// simulator follows it (sim/drill/simulator.cc): each chain's route and its
// precomputed backups per failure, each elephant flow's paths and rates.
// Pure: no I/O, no clock. Thread-compatible.
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "geodesic/v1/plan.pb.h"
#include "pathcomp/solver/plan_builder.h"
#include "sim/drill/drill_outcome.h"

namespace geodesic::sim {

// The drill's link ids, in its inventory's order. A chain's route and each
// of its backups keep their links as indices into them: as ids, the chains
// of a 754-facility backbone held 1.6 GB of strings in two plans' routes.
using LinkIds = std::vector<std::string>;

struct ChainRoute {
  bool placed = false;
  std::vector<uint32_t> links{};  // indices into the drill's LinkIds, ascending, each once
  uint64_t latency_us = 0;
  bool within_budget = false;
};
struct ChainBackupRoute {
  pathcomp::ChainFailure::Kind kind = pathcomp::ChainFailure::Kind::kLink;
  std::string id{};  // link id, SRLG name or facility id
  ChainRoute route{};
};
struct ElephantRoute {
  std::vector<std::pair<std::set<std::string>, double>> paths{};  // links, Gbps
  double carried_gbps = 0;
  std::string src{}, dst{};  // facilities
};

struct PlanState {
  // The plan without its sites' routes, which the simulator reads only to
  // count what changed: `routes` keeps that much of them (a whole plan of a
  // large backbone is gigabytes; two at once were the drill's peak).
  v1::Plan plan{};
  RouteSignatures routes{};
  std::map<std::string, ChainRoute> chains{};                      // by workload id
  std::map<std::string, std::vector<ChainBackupRoute>> backups{};  // by workload id
  std::map<std::string, ElephantRoute> elephants{};                // by workload id
};

// The routes of `built`, planned from `snapshot` (of the drill's inventory:
// each of its links is in `link_ids`); its plan is moved in without its
// sites, whose routes `routes` stands for (SignaturesOf the plan, taken
// before its sites were let go of).
PlanState RoutesOf(const pathcomp::Snapshot& snapshot, pathcomp::BuiltPlan built, RouteSignatures routes,
                   const LinkIds& link_ids);

}  // namespace geodesic::sim
