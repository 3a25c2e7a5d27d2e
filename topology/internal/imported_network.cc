#include "topology/internal/imported_network.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"

namespace geodesic::topology::internal {
namespace {

// A facility id leaves room for the router suffix "-r" within an id's 63 characters.
constexpr size_t kMaxFacilityIdSize = kMaxIdSize - 2;

}  // namespace

std::string SynthesizedPrefix(size_t index) {
  return absl::StrCat("10.", index / 256 % 256, ".", index % 256, ".0/24");
}

bool IsPlaced(const v1::GeoPosition& position) {
  return position.latitude_deg() != 0 || position.longitude_deg() != 0;
}

size_t ImportedNetwork::AddSite(std::string_view label, const v1::GeoPosition& position) {
  const size_t index = topology_.facilities.size();
  std::string base = SanitizeId(label, kMaxFacilityIdSize);
  if (base.empty()) base = absl::StrCat("site-", index);
  v1::Facility facility;
  facility.set_id(facility_ids_.ClaimUnique(base, kMaxFacilityIdSize));
  facility.set_display_name(std::string(label));
  *facility.mutable_position() = position;
  facility.add_prefixes(SynthesizedPrefix(index));
  v1::Node router;
  router.set_id(absl::StrCat(facility.id(), "-r"));
  router.set_facility_id(facility.id());
  router.set_role(v1::NODE_ROLE_BACKBONE_ROUTER);
  topology_.facilities.push_back(std::move(facility));
  topology_.nodes.push_back(std::move(router));
  return index;
}

std::optional<uint64_t> ImportedNetwork::PlacedLatencyUs(size_t a, size_t b) const {
  const auto& from = site(a).position();
  const auto& to = site(b).position();
  if (!IsPlaced(from) || !IsPlaced(to)) return std::nullopt;
  return FiberLatencyUs(GreatCircleKm(from, to));
}

void ImportedNetwork::AddLink(const std::string& id, size_t src, size_t dst, double capacity_gbps,
                              uint32_t metric, std::optional<uint64_t> latency_us) {
  v1::Link link;
  link.set_id(id);
  link.set_src_node_id(topology_.nodes[src].id());
  link.set_dst_node_id(topology_.nodes[dst].id());
  link.set_src_facility_id(site(src).id());
  link.set_dst_facility_id(site(dst).id());
  link.set_capacity_gbps(capacity_gbps);
  link.set_igp_metric(metric);
  if (latency_us) {
    link.set_latency_us(*latency_us);
  } else {
    unknown_latency_links_.push_back(topology_.links.size());
  }
  link.set_admin_state(v1::ADMIN_STATE_UP);
  topology_.links.push_back(std::move(link));
}

void ImportedNetwork::AddElephant(const std::string& id, size_t src, size_t dst,
                                  double demand_gbps) {
  v1::Workload workload;
  workload.set_id(id);
  auto& flow = *workload.mutable_elephant();
  flow.set_src_facility_id(site(src).id());
  flow.set_dst_prefix(site(dst).prefixes(0));
  flow.set_demand_gbps(demand_gbps);
  flow.set_priority(0);
  topology_.workloads.push_back(std::move(workload));
}

Topology ImportedNetwork::Finish() && {
  const size_t known = topology_.links.size() - unknown_latency_links_.size();
  uint64_t fill = kUnknownLatencyFallbackUs;
  if (known > 0) {
    // The links of unknown length are still at 0: the sum is the known links'.
    double sum = 0;
    for (const auto& link : topology_.links) sum += static_cast<double>(link.latency_us());
    fill = std::max<uint64_t>(kMinLinkLatencyUs, std::llround(sum / static_cast<double>(known)));
  }
  for (size_t i : unknown_latency_links_) topology_.links[i].set_latency_us(fill);
  return std::move(topology_);
}

}  // namespace geodesic::topology::internal
