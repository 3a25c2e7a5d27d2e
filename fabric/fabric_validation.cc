#include "fabric/fabric_validation.h"

#include <cmath>
#include <set>
#include <string>
#include <unordered_map>

#include "absl/strings/str_cat.h"

namespace geodesic::fabric {
namespace {

absl::Status Invalid(const std::string& field, const std::string& problem) {
  return absl::InvalidArgumentError(absl::StrCat(field, ": ", problem));
}

bool PositiveFinite(double value) { return value > 0 && std::isfinite(value); }

absl::Status ValidateLayers(const v1::Fabric& fabric) {
  if (fabric.layers_size() == 0) return Invalid("layers", "at least one layer (the leaf) is required");
  std::unordered_map<std::string, int> first_index_by_name;
  for (int i = 0; i < fabric.layers_size(); ++i) {
    const v1::FabricLayer& layer = fabric.layers(i);
    const std::string field = absl::StrCat("layers[", i, "]");
    const bool top = i + 1 == fabric.layers_size();
    if (layer.name().empty()) return Invalid(field + ".name", "must not be empty");
    auto [it, inserted] = first_index_by_name.emplace(layer.name(), i);
    if (!inserted) {
      return Invalid(field + ".name",
                     absl::StrCat("duplicate name \"", layer.name(), "\" (also layers[", it->second, "])"));
    }
    if (layer.switch_count() == 0) return Invalid(field + ".switch_count", "must be positive");
    if (layer.downlink_ports() == 0) return Invalid(field + ".downlink_ports", "must be positive");
    if (top && layer.uplink_ports() != 0) {
      return Invalid(field + ".uplink_ports",
                     absl::StrCat("must be 0 at the top layer, got ", layer.uplink_ports()));
    }
    if (!top && layer.uplink_ports() == 0) {
      return Invalid(field + ".uplink_ports", "must be positive below the top layer");
    }
    if (!PositiveFinite(layer.port_speed_gbps())) {
      return Invalid(field + ".port_speed_gbps", "must be positive");
    }
  }
  return absl::OkStatus();
}

absl::Status ValidatePlaneHealth(const v1::Fabric& fabric) {
  std::unordered_map<uint32_t, int> index_by_plane;
  for (int i = 0; i < fabric.plane_health_size(); ++i) {
    const v1::FabricPlaneHealth& health = fabric.plane_health(i);
    const std::string field = absl::StrCat("plane_health[", i, "]");
    if (!v1::OperState_IsValid(health.state())) {
      return Invalid(field + ".state", absl::StrCat("unknown value ", health.state()));
    }
    if (health.plane() >= fabric.planes()) {
      return Invalid(field + ".plane",
                     absl::StrCat(health.plane(), " is out of range (planes: ", fabric.planes(), ")"));
    }
    auto [it, inserted] = index_by_plane.emplace(health.plane(), i);
    if (!inserted) {
      return Invalid(field + ".plane", absl::StrCat("duplicate plane ", health.plane(),
                                                    " (also plane_health[", it->second, "])"));
    }
    std::set<uint32_t> rails;
    for (int j = 0; j < health.failed_rails_size(); ++j) {
      const uint32_t rail = health.failed_rails(j);
      const std::string rail_field = absl::StrCat(field, ".failed_rails[", j, "]");
      if (rail >= fabric.rails()) {
        return Invalid(rail_field,
                       absl::StrCat(rail, " is out of range (rails: ", fabric.rails(), ")"));
      }
      if (!rails.insert(rail).second) return Invalid(rail_field, absl::StrCat("duplicate rail ", rail));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateFabric(const v1::Fabric& fabric) {
  if (fabric.facility_id().empty()) return Invalid("facility_id", "must not be empty");
  if (fabric.planes() == 0) return Invalid("planes", "must be positive");
  if (fabric.planes() > kMaxPlanes) {
    return Invalid("planes", absl::StrCat(fabric.planes(), " exceeds the maximum of ", kMaxPlanes));
  }
  if (fabric.rails() == 0) return Invalid("rails", "must be positive");
  if (fabric.gpus() == 0) return Invalid("gpus", "must be positive");
  if (fabric.gpus() % fabric.rails() != 0) {
    return Invalid("gpus", absl::StrCat(fabric.gpus(), " is not a whole number of servers of ",
                                        fabric.rails(), " GPUs (rails)"));
  }
  if (!PositiveFinite(fabric.nic_speed_gbps())) return Invalid("nic_speed_gbps", "must be positive");
  if (absl::Status status = ValidateLayers(fabric); !status.ok()) return status;
  if (!(fabric.backbone_uplink_gbps() >= 0) || !std::isfinite(fabric.backbone_uplink_gbps())) {
    return Invalid("backbone_uplink_gbps", "must be finite and not negative");
  }
  return ValidatePlaneHealth(fabric);
}

}  // namespace geodesic::fabric
