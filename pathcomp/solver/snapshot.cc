#include "pathcomp/solver/snapshot.h"

#include <algorithm>
#include <set>

namespace geodesic::pathcomp {
namespace {

struct Drains {
  std::set<std::string> links, nodes, facilities;

  explicit Drains(const std::vector<v1::Intent>& intents) {
    for (const auto& intent : intents) {
      if (!intent.has_drain()) continue;
      const auto& target = intent.drain().target();
      switch (target.kind_case()) {
        case v1::Target::kLinkId: links.insert(target.link_id()); break;
        case v1::Target::kNodeId: nodes.insert(target.node_id()); break;
        case v1::Target::kFacilityId: facilities.insert(target.facility_id()); break;
        case v1::Target::KIND_NOT_SET: break;
      }
    }
  }

  bool Drained(const v1::Link& link) const {
    return links.count(link.id()) || nodes.count(link.src_node_id()) ||
           nodes.count(link.dst_node_id()) || facilities.count(link.src_facility_id()) ||
           facilities.count(link.dst_facility_id());
  }
};

bool OperUsable(const v1::LinkHealth& health) {
  return health.state() == v1::OPER_STATE_UP || health.state() == v1::OPER_STATE_DEGRADED;
}

}  // namespace

Snapshot Snapshot::Build(const ModelView& model) {
  Snapshot snapshot;
  snapshot.facilities_ = model.facilities;
  std::sort(snapshot.facilities_.begin(), snapshot.facilities_.end(),
            [](const auto& a, const auto& b) { return a.id() < b.id(); });
  for (size_t i = 0; i < snapshot.facilities_.size(); ++i) {
    snapshot.facility_index_[snapshot.facilities_[i].id()] = static_cast<int>(i);
  }
  snapshot.out_arcs_.resize(snapshot.facilities_.size());
  snapshot.links_ = model.links;
  std::sort(snapshot.links_.begin(), snapshot.links_.end(),
            [](const auto& a, const auto& b) { return a.id() < b.id(); });

  const Drains drains(model.intents);
  for (size_t i = 0; i < snapshot.links_.size(); ++i) {
    v1::Link& link = snapshot.links_[i];
    if (drains.Drained(link)) link.set_admin_state(v1::ADMIN_STATE_DRAINED);
    if (link.admin_state() != v1::ADMIN_STATE_UP || !OperUsable(link.health())) continue;
    const int src = snapshot.FacilityIndex(link.src_facility_id());
    const int dst = snapshot.FacilityIndex(link.dst_facility_id());
    if (src < 0 || dst < 0 || src == dst) continue;
    uint64_t cost_us = link.health().rtt_us() > 0 ? link.health().rtt_us() / 2 : link.latency_us();
    cost_us = std::max<uint64_t>(cost_us, 1);
    if (link.health().state() == v1::OPER_STATE_DEGRADED) cost_us += kDegradedPenaltyUs;
    snapshot.out_arcs_[src].push_back(Arc{static_cast<int>(i), src, dst, cost_us});
    ++snapshot.usable_links_;
  }
  return snapshot;
}

int Snapshot::FacilityIndex(const std::string& id) const {
  auto it = facility_index_.find(id);
  return it == facility_index_.end() ? -1 : it->second;
}

}  // namespace geodesic::pathcomp
