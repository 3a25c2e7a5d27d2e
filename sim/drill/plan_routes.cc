#include "sim/drill/plan_routes.h"

#include <algorithm>
#include <string_view>
#include <utility>

#include "absl/container/flat_hash_map.h"

namespace geodesic::sim {
namespace {

// `drill_link`: each snapshot link's index in the drill's LinkIds.
ChainRoute RouteOf(const std::vector<uint32_t>& drill_link, const pathcomp::Chain& chain,
                   const pathcomp::ChainPlacement& placement) {
  ChainRoute route;
  route.placed = placement.placed;
  route.latency_us = placement.total_us;
  route.within_budget = placement.placed && placement.total_us <= chain.budget_us;
  for (int link : placement.Links()) route.links.push_back(drill_link[static_cast<size_t>(link)]);
  std::sort(route.links.begin(), route.links.end());
  route.links.erase(std::unique(route.links.begin(), route.links.end()), route.links.end());
  return route;
}

}  // namespace

PlanState RoutesOf(const pathcomp::Snapshot& snapshot, pathcomp::BuiltPlan built, RouteSignatures routes,
                   const LinkIds& link_ids) {
  absl::flat_hash_map<std::string_view, uint32_t> index_of;
  for (size_t i = 0; i < link_ids.size(); ++i) index_of.try_emplace(link_ids[i], static_cast<uint32_t>(i));
  std::vector<uint32_t> drill_link(static_cast<size_t>(snapshot.link_count()));
  for (int link = 0; link < snapshot.link_count(); ++link) {
    drill_link[static_cast<size_t>(link)] = index_of.at(snapshot.link_id(link));  // the drill's inventory
  }
  PlanState state;
  state.plan = std::move(built.plan);
  state.routes = std::move(routes);
  // Let go of the sites: clear_sites() would keep every SitePlan allocated
  // (cleared, for reuse), and with it the routes' memory, until the next plan.
  google::protobuf::RepeatedPtrField<v1::SitePlan>().Swap(state.plan.mutable_sites());
  const auto& chains = snapshot.chains();
  for (size_t c = 0; c < chains.size(); ++c) {
    const std::string& id = snapshot.workload_id(chains[c].workload);
    state.chains[id] = RouteOf(drill_link, chains[c], built.chains.primary[c]);
    for (int i = 0; i < built.chains.backup_count(static_cast<int>(c)); ++i) {
      const pathcomp::ChainBackup backup = built.chains.backup(static_cast<int>(c), i);
      std::string scope = backup.failure.kind == pathcomp::ChainFailure::Kind::kLink
                              ? snapshot.link_id(backup.failure.index)
                              : backup.failure.kind == pathcomp::ChainFailure::Kind::kSrlg
                                    ? snapshot.srlg_name(backup.failure.index)
                                    : snapshot.facility_id(backup.failure.index);
      state.backups[id].push_back({backup.failure.kind, std::move(scope), RouteOf(drill_link, chains[c], backup.placement)});
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
