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

}  // namespace

std::optional<v1::ForwardingRoute> RepairRoute(const v1::SitePlan& plan, const v1::Route& route,
                                               const DownLinks& down) {
  if (down.empty() || Avoids(plan, site_plan::PrimaryGroup(plan, route), down)) {
    return site_plan::Primary(plan, route);
  }
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
  v1::ForwardingRoute repaired = site_plan::Primary(plan, route);
  auto* hops = repaired.mutable_next_hops();
  hops->erase(std::remove_if(hops->begin(), hops->end(),
                             [&](const v1::NextHop& hop) { return down.contains(hop.link_id()); }),
              hops->end());
  if (hops->empty()) return std::nullopt;
  return repaired;
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
