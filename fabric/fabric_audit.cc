#include "fabric/fabric_audit.h"

#include <cstdint>
#include <cstdio>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "fabric/plane_capacity.h"

namespace geodesic::fabric {
namespace {

constexpr double kTolerance = 1e-9;

double Ratio(double demand, double capacity) {
  return capacity > 0 ? demand / capacity : std::numeric_limits<double>::infinity();
}

bool Exceeds(double demand, double capacity) { return demand > capacity * (1 + kTolerance); }

std::string FormatRatio(double ratio) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.2f:1", ratio);
  return text;
}

std::string LayerLabel(int index, const v1::FabricLayer& layer) {
  return absl::StrCat("layers[", index, "] ", layer.name());
}

OversubscriptionFinding LayerFinding(FindingKind kind, int index, const v1::FabricLayer& layer,
                                     double demand, double capacity) {
  OversubscriptionFinding finding;
  finding.kind = kind;
  finding.layer_index = index;
  finding.layer_name = layer.name();
  finding.demand = demand;
  finding.capacity = capacity;
  finding.ratio = Ratio(demand, capacity);
  return finding;
}

void AuditLayer(const v1::Fabric& fabric, int index, std::vector<OversubscriptionFinding>& out) {
  const v1::FabricLayer& layer = fabric.layers(index);
  const bool leaf = index == 0;
  const v1::FabricLayer* below = leaf ? nullptr : &fabric.layers(index - 1);

  // Ports: what must attach to this layer's downlinks, per plane.
  const uint64_t ports_needed = leaf ? uint64_t{fabric.gpus()}
                                     : uint64_t{below->switch_count()} * below->uplink_ports();
  const uint64_t ports_available = uint64_t{layer.switch_count()} * layer.downlink_ports();
  if (ports_needed > ports_available) {
    OversubscriptionFinding finding =
        LayerFinding(FindingKind::kPortShortfall, index, layer, static_cast<double>(ports_needed),
                     static_cast<double>(ports_available));
    finding.message =
        leaf ? absl::StrCat(LayerLabel(index, layer), ": ", ports_needed,
                            " NICs per plane but only ", ports_available, " downlink ports")
             : absl::StrCat(LayerLabel(index, layer), ": ", below->name(), " has ", ports_needed,
                            " uplink ports per plane but ", layer.name(), " only ", ports_available,
                            " downlink ports");
    out.push_back(std::move(finding));
  }

  // Capacity: the top layer has no uplinks to oversubscribe.
  if (index + 1 == fabric.layers_size()) return;
  const double offered = leaf ? NicCapacityPerPlaneGbps(fabric) : UplinkCapacityGbps(*below);
  const double uplinks = UplinkCapacityGbps(layer);
  if (Exceeds(offered, uplinks)) {
    OversubscriptionFinding finding =
        LayerFinding(FindingKind::kOversubscribed, index, layer, offered, uplinks);
    finding.message = absl::StrCat(LayerLabel(index, layer), ": ", FormatRatio(finding.ratio),
                                   " oversubscribed per plane (uplinks ", FormatBandwidth(uplinks),
                                   " for ", FormatBandwidth(offered), " from ",
                                   leaf ? std::string("NICs") : below->name(), ")");
    out.push_back(std::move(finding));
  }
}

}  // namespace

std::vector<OversubscriptionFinding> AuditOversubscription(const v1::Fabric& fabric) {
  std::vector<OversubscriptionFinding> findings;
  for (int i = 0; i < fabric.layers_size(); ++i) AuditLayer(fabric, i, findings);

  const double backbone = fabric.backbone_uplink_gbps();
  const double capacity = FabricCapacityGbps(fabric);
  OversubscriptionFinding finding;
  finding.demand = backbone;
  finding.capacity = capacity;
  finding.ratio = Ratio(backbone, capacity);
  if (backbone == 0) {
    finding.kind = FindingKind::kNoBackboneUplink;
    finding.message = "backbone_uplink_gbps is 0: the facility exchanges nothing with the backbone";
    findings.push_back(std::move(finding));
  } else if (Exceeds(backbone, capacity)) {
    finding.kind = FindingKind::kBackboneExceedsFabric;
    finding.message = absl::StrCat("backbone uplink ", FormatBandwidth(backbone), " exceeds the fabric's ",
                                   FormatBandwidth(capacity), " (", fabric.planes(), " planes x ",
                                   FormatBandwidth(PlaneCapacityGbps(fabric)), "): ",
                                   FormatBandwidth(backbone - capacity), " can never be used");
    findings.push_back(std::move(finding));
  }
  return findings;
}

}  // namespace geodesic::fabric
