#include "routerd/local_repair.h"

#include <algorithm>

namespace geodesic::routerd {
namespace {

template <typename Hops>
bool Avoids(const Hops& hops, const DownLinks& down) {
  return std::none_of(hops.begin(), hops.end(), [&](const v1::NextHop& hop) { return down.contains(hop.link_id()); });
}

v1::Route Lean(const v1::Route& route) {
  v1::Route lean;
  lean.set_prefix(route.prefix());
  lean.set_destination_facility_id(route.destination_facility_id());
  *lean.mutable_next_hops() = route.next_hops();
  *lean.mutable_path_facility_ids() = route.path_facility_ids();
  lean.set_path_latency_us(route.path_latency_us());
  return lean;
}

}  // namespace

std::optional<v1::Route> RepairRoute(const v1::Route& route, const DownLinks& down) {
  if (down.empty() || Avoids(route.next_hops(), down)) return Lean(route);
  const v1::Backup* chosen = nullptr;
  for (const v1::Backup& backup : route.backups()) {
    if (backup.next_hops().empty() || !Avoids(backup.next_hops(), down)) continue;
    const bool protects_failed_link =
        backup.protects().kind() == v1::FAILURE_KIND_LINK && down.contains(backup.protects().id());
    if (protects_failed_link) {
      chosen = &backup;
      break;
    }
    if (chosen == nullptr) chosen = &backup;
  }
  v1::Route repaired = Lean(route);
  if (chosen != nullptr) {
    *repaired.mutable_next_hops() = chosen->next_hops();
    *repaired.mutable_path_facility_ids() = chosen->path_facility_ids();
    repaired.set_path_latency_us(chosen->path_latency_us());
    return repaired;
  }
  auto* hops = repaired.mutable_next_hops();
  hops->erase(std::remove_if(hops->begin(), hops->end(),
                             [&](const v1::NextHop& hop) { return down.contains(hop.link_id()); }),
              hops->end());
  if (hops->empty()) return std::nullopt;
  return repaired;
}

v1::SitePlan RepairPlan(const v1::SitePlan& plan, const DownLinks& down) {
  v1::SitePlan repaired;
  repaired.set_facility_id(plan.facility_id());
  repaired.set_generation(plan.generation());
  repaired.set_epoch(plan.epoch());
  repaired.set_replica_id(plan.replica_id());
  repaired.set_computed_at_unix_ms(plan.computed_at_unix_ms());
  repaired.set_reason(plan.reason());
  for (const v1::Route& route : plan.routes()) {
    if (auto effective = RepairRoute(route, down)) *repaired.add_routes() = *std::move(effective);
  }
  return repaired;
}

}  // namespace geodesic::routerd
