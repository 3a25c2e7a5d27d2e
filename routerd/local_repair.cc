#include "routerd/local_repair.h"

#include <algorithm>

#include "site_plan/site_plan_reader.h"

namespace geodesic::routerd {
namespace {

bool Avoids(const v1::SitePlan& plan, const v1::NextHopGroup& group, const DownLinks& down) {
  for (int i = 0; i < group.ports_size(); ++i) {
    if (down.contains(site_plan::LinkId(plan, group, i))) return false;
  }
  return true;
}

// The primary's next hops that avoid `down` (nullopt: none does), with the
// path RepairRoute names for them.
std::optional<v1::ForwardingRoute> Survivors(const v1::SitePlan& plan, const v1::Route& route,
                                             const DownLinks& down) {
  v1::ForwardingRoute repaired = site_plan::Primary(plan, route);
  auto* hops = repaired.mutable_next_hops();
  hops->erase(std::remove_if(hops->begin(), hops->end(),
                             [&](const v1::NextHop& hop) { return down.contains(hop.link_id()); }),
              hops->end());
  if (hops->empty()) return std::nullopt;
  for (const v1::NextHop& hop : *hops) {
    if (repaired.path_facility_ids_size() >= 2 && repaired.path_facility_ids(1) == hop.peer_facility_id()) {
      return repaired;  // the primary path's first hop survives
    }
  }
  const v1::NextHop& heaviest = *std::max_element(
      hops->begin(), hops->end(), [](const v1::NextHop& a, const v1::NextHop& b) { return a.weight() < b.weight(); });
  for (int b = 0; b < site_plan::BackupCount(route); ++b) {
    const uint32_t path = site_plan::BackupAt(route, b).path;
    std::vector<std::string> ids = site_plan::PathIds(plan, path);
    if (ids.size() < 2 || ids[1] != heaviest.peer_facility_id()) continue;
    repaired.mutable_path_facility_ids()->Assign(ids.begin(), ids.end());
    repaired.set_path_latency_us(site_plan::PathLatencyUs(plan, path));
    return repaired;
  }
  repaired.clear_path_facility_ids();
  repaired.add_path_facility_ids(plan.facility_id());
  repaired.add_path_facility_ids(heaviest.peer_facility_id());
  repaired.set_path_latency_us(0);
  return repaired;
}

}  // namespace

std::optional<v1::ForwardingRoute> RepairRoute(const v1::SitePlan& plan, const v1::Route& route,
                                               const DownLinks& down) {
  if (down.empty() || Avoids(plan, site_plan::PrimaryGroup(plan, route), down)) {
    return site_plan::Primary(plan, route);
  }
  if (std::optional<v1::ForwardingRoute> survivors = Survivors(plan, route, down)) return survivors;
  int chosen = -1;
  for (int b = 0; b < site_plan::BackupCount(route); ++b) {
    const site_plan::BackupRef backup = site_plan::BackupAt(route, b);
    const v1::NextHopGroup& group = plan.groups(static_cast<int>(backup.group));
    if (group.ports().empty() || !Avoids(plan, group, down)) continue;
    const v1::FailureScope& protects = plan.failures(static_cast<int>(backup.failure));
    if (protects.kind() == v1::FAILURE_KIND_LINK && down.contains(protects.id())) {
      chosen = b;
      break;
    }
    if (chosen < 0) chosen = b;
  }
  if (chosen >= 0) return site_plan::WithBackup(plan, route, chosen);
  return std::nullopt;
}

v1::ForwardingTable RepairPlan(const v1::SitePlan& plan, const DownLinks& down) {
  v1::ForwardingTable repaired;
  repaired.set_facility_id(plan.facility_id());
  repaired.set_generation(plan.generation());
  repaired.set_epoch(plan.epoch());
  repaired.mutable_routes()->Reserve(plan.routes_size());
  for (const v1::Route& route : plan.routes()) {
    if (auto effective = RepairRoute(plan, route, down)) *repaired.add_routes() = *std::move(effective);
  }
  return repaired;
}

}  // namespace geodesic::routerd
