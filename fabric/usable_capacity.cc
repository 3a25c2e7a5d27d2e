#include "fabric/usable_capacity.h"

#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "entity/oper_state_name.h"
#include "fabric/plane_capacity.h"

namespace geodesic::fabric {
namespace {

PlaneUsableCapacity Evaluate(const v1::Fabric& fabric, uint32_t plane, double capacity_gbps,
                             const v1::FabricPlaneHealth* health, bool health_reported) {
  PlaneUsableCapacity result;
  result.plane = plane;
  result.capacity_gbps = capacity_gbps;
  if (!health_reported) {
    result.state = v1::OPER_STATE_UP;
    result.usable_gbps = capacity_gbps;
    result.reason = "up (assumed: no plane health reported)";
    return result;
  }
  if (health == nullptr) {
    result.reason = "unknown (no report for this plane)";
    return result;
  }
  result.state = health->state();
  std::set<uint32_t> failed;
  for (uint32_t rail : health->failed_rails()) {
    if (rail < fabric.rails()) failed.insert(rail);
  }
  result.failed_rails = static_cast<uint32_t>(failed.size());
  result.reason = entity::OperStateName(result.state);
  if (result.failed_rails > 0) {
    absl::StrAppend(&result.reason, ", ", result.failed_rails, " of ", fabric.rails(),
                    " rails failed");
  }
  if (result.state != v1::OPER_STATE_UP && result.state != v1::OPER_STATE_DEGRADED) return result;
  const uint32_t working = fabric.rails() - result.failed_rails;
  result.usable_gbps = fabric.rails() > 0 ? capacity_gbps * working / fabric.rails() : 0;
  return result;
}

}  // namespace

UsableCapacity ComputeUsableCapacity(const v1::Fabric& fabric) {
  UsableCapacity result;
  const double plane_capacity = PlaneCapacityGbps(fabric);
  result.total_gbps = fabric.planes() * plane_capacity;
  result.health_reported = fabric.plane_health_size() > 0;

  std::vector<const v1::FabricPlaneHealth*> health_by_plane(fabric.planes(), nullptr);
  for (const v1::FabricPlaneHealth& health : fabric.plane_health()) {
    if (health.plane() < fabric.planes()) health_by_plane[health.plane()] = &health;
  }
  result.planes.reserve(fabric.planes());
  for (uint32_t plane = 0; plane < fabric.planes(); ++plane) {
    result.planes.push_back(Evaluate(fabric, plane, plane_capacity, health_by_plane[plane],
                                     result.health_reported));
    result.usable_gbps += result.planes.back().usable_gbps;
  }
  result.usable_fraction = result.total_gbps > 0 ? result.usable_gbps / result.total_gbps : 0;
  result.backbone_exchange_gbps = std::min(fabric.backbone_uplink_gbps(), result.usable_gbps);
  return result;
}

}  // namespace geodesic::fabric
