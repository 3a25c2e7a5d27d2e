#include "sim/drill/plan_routes.h"

#include <utility>

namespace geodesic::sim {
namespace {

ChainRoute RouteOf(const pathcomp::Snapshot& snapshot, const pathcomp::Chain& chain,
                   const pathcomp::ChainPlacement& placement) {
  ChainRoute route;
  route.placed = placement.placed;
  route.latency_us = placement.total_us;
  route.within_budget = placement.placed && placement.total_us <= chain.budget_us;
  for (int link : placement.Links()) route.links.insert(snapshot.link_id(link));
  return route;
}

}  // namespace

PlanState RoutesOf(const pathcomp::Snapshot& snapshot, pathcomp::BuiltPlan built) {
  PlanState state;
  state.plan = std::move(built.plan);
  state.routes = SignaturesOf(state.plan);
  state.plan.clear_sites();
  const auto& chains = snapshot.chains();
  for (size_t c = 0; c < chains.size(); ++c) {
    const std::string& id = snapshot.workload_id(chains[c].workload);
    state.chains[id] = RouteOf(snapshot, chains[c], built.chains.primary[c]);
    for (int i = 0; i < built.chains.backup_count(static_cast<int>(c)); ++i) {
      const pathcomp::ChainBackup backup = built.chains.backup(static_cast<int>(c), i);
      std::string scope = backup.failure.kind == pathcomp::ChainFailure::Kind::kLink
                              ? snapshot.link_id(backup.failure.index)
                              : backup.failure.kind == pathcomp::ChainFailure::Kind::kSrlg
                                    ? snapshot.srlg_name(backup.failure.index)
                                    : snapshot.facility_id(backup.failure.index);
      state.backups[id].push_back({backup.failure.kind, std::move(scope), RouteOf(snapshot, chains[c], backup.placement)});
    }
  }
  const auto& demands = snapshot.demands();
  for (size_t d = 0; d < demands.size(); ++d) {
    ElephantRoute& route = state.elephants[snapshot.workload_id(demands[d].workload)];
    route.src = snapshot.facility_id(demands[d].src);
    route.dst = snapshot.facility_id(demands[d].dst);
    if (!built.elephants) continue;
    route.carried_gbps = built.elephants->allocation.carried_gbps[d];
    for (const auto& path : built.elephants->allocation.paths[d]) {
      std::set<std::string> links;
      for (int arc : path.arcs) links.insert(snapshot.link_id(arc));
      route.paths.emplace_back(std::move(links), path.gbps);
    }
  }
  return state;
}

}  // namespace geodesic::sim
