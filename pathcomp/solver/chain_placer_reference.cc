// The straightforward chain plan, kept as the oracle PlanAll() is tested and
// benchmarked against: a placement per chain and failure with the shortest
// paths of every failure computed from scratch (PlaceReference), and the
// elephant audit by removing each transit facility of each flow's path. This
// is the code PlanAll() ran before it shared work between chains; keep it
// simple rather than fast.
#include <algorithm>
#include <map>
#include <set>

#include "pathcomp/solver/chain_placer.h"

namespace geodesic::pathcomp {
ChainPlacement ChainPlacer::PlaceReference(const Chain& chain, const Exclusion& failure_only) {
  // A pinned chain keeps to its facility set, also when it fails over.
  Exclusion failure = failure_only;
  if (!chain.allowed.empty()) failure.allowed = &chain.allowed;
  SetFailure(failure);
  ChainPlacement result;
  if (failure.facility == chain.origin) {
    result.failed_call = 0;
    result.why = ChainUnplacedWhy::kOriginDown;
    result.failed_facility = chain.origin;
    return result;
  }
  auto rtt = [this](int a, int b) -> uint64_t {
    if (a == b) return 0;
    const uint64_t there = From(a).distance_us[b];
    const uint64_t back = From(b).distance_us[a];
    return there == kUnreachable || back == kUnreachable ? kUnreachable : there + back;
  };

  // layers[i]: the replicas call i can run at, with the least latency sum up
  // to and including it and the entry of layer i-1 it is called from.
  struct Entry {
    int facility;
    uint64_t total_us;
    int from;
  };
  std::vector<std::vector<Entry>> layers;
  layers.push_back({Entry{chain.origin, 0, -1}});
  for (size_t call = 0; call < chain.services.size(); ++call) {
    const int service = chain.services[call];
    const ServiceReplicas& replicas = snapshot_.service(service);
    const std::vector<Entry>& previous = layers.back();
    std::vector<Entry> layer;
    for (int replica : replicas.facilities) {
      if (replica == failure.facility) continue;
      if (!chain.pinned_replicas.empty() && replica != chain.pinned_replicas[call]) continue;
      if (!chain.allowed.empty() && !chain.allowed[replica]) continue;
      Entry best{replica, kUnreachable, -1};
      for (int j = 0; j < static_cast<int>(previous.size()); ++j) {
        const uint64_t network = rtt(previous[j].facility, replica);
        if (network == kUnreachable) continue;
        const uint64_t total = previous[j].total_us + network;
        if (total < best.total_us) best = Entry{replica, total, j};  // ties: lowest index
      }
      if (best.from < 0) continue;
      best.total_us += replicas.service_time_us;
      layer.push_back(best);
    }
    if (layer.empty()) {
      result.failed_call = static_cast<int>(call);
      if (failure.facility >= 0 && !chain.pinned_replicas.empty() && chain.pinned_replicas[call] == failure.facility) {
        result.why = ChainUnplacedWhy::kPinnedToFailed;
        result.failed_facility = failure.facility;
      } else if (!chain.pinned_replicas.empty() || !chain.allowed.empty()) {
        result.why = ChainUnplacedWhy::kPinBlocks;
      } else if (replicas.facilities.empty()) {
        result.why = ChainUnplacedWhy::kNoKnownReplica;
      } else if (failure.facility >= 0 &&
                 std::all_of(replicas.facilities.begin(), replicas.facilities.end(),
                             [&](int f) { return f == failure.facility; })) {
        result.why = ChainUnplacedWhy::kOneReplica;
        result.failed_facility = failure.facility;
      } else {
        result.why = ChainUnplacedWhy::kUnreachable;
        for (const Entry& entry : previous) result.unreached_from.push_back(entry.facility);
      }
      return result;
    }
    layers.push_back(std::move(layer));
  }

  // The best last entry, then back through the layers.
  const std::vector<Entry>& last = layers.back();
  int at = 0;
  for (int j = 1; j < static_cast<int>(last.size()); ++j) {
    if (last[j].total_us < last[at].total_us) at = j;
  }
  result.placed = true;
  result.total_us = last[at].total_us;
  result.within_budget = result.total_us <= chain.budget_us;
  result.hops.resize(chain.services.size());
  for (size_t call = chain.services.size(); call-- > 0;) {
    const Entry& entry = layers[call + 1][at];
    const int from = layers[call][entry.from].facility;
    ChainHop& hop = result.hops[call];
    hop.service = chain.services[call];
    hop.replica = entry.facility;
    hop.service_time_us = snapshot_.service(hop.service).service_time_us;
    if (from != entry.facility) {
      hop.links_there = From(from).LinksTo(entry.facility);
      hop.links_back = From(entry.facility).LinksTo(from);
      hop.network_rtt_us = rtt(from, entry.facility);
    }
    at = entry.from;
  }
  return result;
}

ChainPlan ChainPlacer::PlanAllReference() {
  const auto& chains = snapshot_.chains();
  ChainPlan plan;

  // Primaries, and which chains each failure would touch.
  std::map<ChainFailure, std::vector<int>> touched;
  for (int c = 0; c < static_cast<int>(chains.size()); ++c) {
    plan.AddPrimary(chains[c], PlaceReference(chains[c]));
    const ChainPlacement& primary = plan.primary[c];
    if (!primary.placed) continue;
    for (int facility : primary.Facilities(snapshot_, chains[c])) {
      if (facility != chains[c].origin) touched[{ChainFailure::Kind::kFacility, facility}].push_back(c);
    }
    std::set<int> srlgs;
    for (int link : primary.Links()) {
      touched[{ChainFailure::Kind::kLink, link}].push_back(c);
      for (int srlg : snapshot_.link_srlgs(link)) srlgs.insert(srlg);
    }
    for (int srlg : srlgs) touched[{ChainFailure::Kind::kSrlg, srlg}].push_back(c);
  }

  // Elephant flows: the transit facilities of their primary path.
  std::map<int, std::vector<int>> demands_through;  // facility -> demand indices
  const auto& demands = snapshot_.demands();
  SetFailure({});
  for (int d = 0; d < static_cast<int>(demands.size()); ++d) {
    const ShortestPaths& paths = From(demands[d].src);
    if (paths.distance_us[demands[d].dst] == kUnreachable) continue;
    const std::vector<int> path = paths.PathTo(demands[d].dst);
    for (size_t i = 1; i + 1 < path.size(); ++i) demands_through[path[i]].push_back(d);
  }

  // One failure at a time: its shortest paths are computed once for all the
  // workloads it touches, then dropped.
  for (const auto& [failure, chain_indices] : touched) {
    for (int c : chain_indices) {
      ChainBackup backup{failure, PlaceReference(chains[c], failure.AsExclusion())};
      if (failure.kind == ChainFailure::Kind::kFacility) {
        const ChainPlacement& primary = plan.primary[c];
        if (!backup.placement.placed) {
          const int call = backup.placement.failed_call;
          FacilityDependency dependency{.workload = chains[c].workload, .facility = failure.index,
                                        .why = FacilityDependency::Why::kOnlyTransitToService,
                                        .service = chains[c].services[call]};
          if (backup.placement.why == ChainUnplacedWhy::kOneReplica) {
            dependency.why = FacilityDependency::Why::kOneReplica;
          } else if (backup.placement.why == ChainUnplacedWhy::kPinnedToFailed) {
            dependency.why = FacilityDependency::Why::kPinnedTo;
          } else {
            dependency.from = call == 0 ? chains[c].origin : primary.hops[call - 1].replica;
          }
          plan.dependencies.push_back(dependency);
        } else if (primary.within_budget && !backup.placement.within_budget) {
          plan.dependencies.push_back({.workload = chains[c].workload, .facility = failure.index,
                                       .why = FacilityDependency::Why::kOverBudget,
                                       .total_us = backup.placement.total_us, .budget_us = chains[c].budget_us});
        }
      }
      plan.AddBackup(c, failure, backup.placement);
    }
    if (failure.kind != ChainFailure::Kind::kFacility) continue;
    auto it = demands_through.find(failure.index);
    if (it == demands_through.end()) continue;
    SetFailure(failure.AsExclusion());
    for (int d : it->second) {
      if (From(demands[d].src).distance_us[demands[d].dst] != kUnreachable) continue;
      plan.dependencies.push_back({.workload = demands[d].workload, .facility = failure.index,
                                   .why = FacilityDependency::Why::kOnlyTransit, .from = demands[d].src,
                                   .to = demands[d].dst});
    }
    demands_through.erase(it);
  }
  // Transit facilities no chain touches.
  for (const auto& [facility, demand_indices] : demands_through) {
    SetFailure(Exclusion{.facility = facility});
    for (int d : demand_indices) {
      if (From(demands[d].src).distance_us[demands[d].dst] != kUnreachable) continue;
      plan.dependencies.push_back({.workload = demands[d].workload, .facility = facility,
                                   .why = FacilityDependency::Why::kOnlyTransit, .from = demands[d].src,
                                   .to = demands[d].dst});
    }
  }
  SetFailure({});
  std::sort(plan.dependencies.begin(), plan.dependencies.end(), DependencyBefore);
  plan.Finish();
  return plan;
}

}  // namespace geodesic::pathcomp
