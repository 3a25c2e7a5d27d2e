#include "pathcomp/solver/snapshot.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "absl/strings/str_cat.h"
#include "fabric/usable_capacity.h"

namespace geodesic::pathcomp {
namespace {

struct Drains {
  std::set<std::string> links, nodes, facilities;

  explicit Drains(const std::vector<v1::Intent>& intents) {
    for (const auto& intent : intents) {
      if (!intent.has_drain() || intent.drain().plane_set()) continue;  // plane drains: fabric
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

}  // namespace

LinkState Snapshot::StateFor(uint64_t latency_us, double cost_scale, bool drained, const v1::LinkHealth& health) {
  LinkState state;
  state.oper = health.state();
  state.drained = drained;
  state.usable = !drained && (health.state() == v1::OPER_STATE_UP ||
                              health.state() == v1::OPER_STATE_DEGRADED);
  const uint64_t base = health.rtt_us() > 0 ? health.rtt_us() / 2 : latency_us;
  state.cost_us = std::max<uint64_t>(1, static_cast<uint64_t>(std::llround(static_cast<double>(base) * cost_scale)));
  if (health.state() == v1::OPER_STATE_DEGRADED) state.cost_us += kDegradedPenaltyUs;
  return state;
}

Snapshot Snapshot::Build(const ModelView& model) {
  auto shared = std::make_shared<Shared>();
  std::vector<const v1::Facility*> facilities;
  for (const auto& facility : model.facilities) facilities.push_back(&facility);
  std::sort(facilities.begin(), facilities.end(),
            [](const auto* a, const auto* b) { return a->id() < b->id(); });
  std::unordered_map<std::string, int> prefix_owner;
  for (const auto* facility : facilities) {
    const int index = static_cast<int>(shared->facility_ids.size());
    shared->facility_index[facility->id()] = index;
    shared->facility_ids.push_back(facility->id());
    shared->facility_prefixes.emplace_back(facility->prefixes().begin(), facility->prefixes().end());
    for (const auto& prefix : facility->prefixes()) prefix_owner[prefix] = index;
  }

  // Fabric limits: plane drains (facility drains with a plane) count as down planes.
  shared->facility_exchange_gbps.assign(shared->facility_ids.size(), -1);
  for (v1::Fabric fabric : model.fabrics) {
    const auto facility = shared->facility_index.find(fabric.facility_id());
    if (facility == shared->facility_index.end()) continue;
    for (const auto& intent : model.intents) {
      if (!intent.has_drain() || !intent.drain().plane_set() ||
          intent.drain().target().facility_id() != fabric.facility_id()) {
        continue;
      }
      if (fabric.plane_health().empty()) {  // none reported: the others stay assumed up
        for (uint32_t plane = 0; plane < fabric.planes(); ++plane) {
          auto* health = fabric.add_plane_health();
          health->set_plane(plane);
          health->set_state(v1::OPER_STATE_UP);
        }
      }
      for (auto& health : *fabric.mutable_plane_health()) {
        if (health.plane() == intent.drain().plane()) health.set_state(v1::OPER_STATE_DOWN);
      }
    }
    shared->facility_exchange_gbps[facility->second] =
        fabric::ComputeUsableCapacity(fabric).backbone_exchange_gbps;
  }

  // Links with both ends known, sorted by id.
  std::vector<const v1::Link*> links;
  for (const auto& link : model.links) {
    const auto src = shared->facility_index.find(link.src_facility_id());
    const auto dst = shared->facility_index.find(link.dst_facility_id());
    if (src == shared->facility_index.end() || dst == shared->facility_index.end() ||
        src->second == dst->second) {
      continue;
    }
    links.push_back(&link);
  }
  std::sort(links.begin(), links.end(), [](const auto* a, const auto* b) { return a->id() < b->id(); });

  const Drains drains(model.intents);
  std::unordered_map<std::string, uint32_t> metric_overrides;
  std::unordered_map<std::string, const v1::Pin*> pins;  // by workload id
  for (const auto& intent : model.intents) {
    if (intent.has_metric_override()) {
      metric_overrides[intent.metric_override().link_id()] = intent.metric_override().igp_metric();
    }
    if (intent.has_pin()) pins[intent.pin().workload_id()] = &intent.pin();
  }
  auto states = std::make_shared<std::vector<LinkState>>();
  states->reserve(links.size());
  const int n = static_cast<int>(shared->facility_ids.size());
  std::vector<int> out_count(n, 0);
  Snapshot snapshot;
  for (const auto* link : links) {
    const int index = static_cast<int>(shared->link_ids.size());
    shared->link_index[link->id()] = index;
    shared->link_ids.push_back(link->id());
    const int src = shared->facility_index.at(link->src_facility_id());
    shared->link_src.push_back(src);
    shared->link_dst.push_back(shared->facility_index.at(link->dst_facility_id()));
    shared->link_dst_node.push_back(link->dst_node_id());
    shared->link_capacity_gbps.push_back(link->capacity_gbps());
    shared->link_metric.push_back(link->igp_metric());
    const auto override = metric_overrides.find(link->id());
    shared->link_cost_scale.push_back(override == metric_overrides.end()
                                          ? 1.0
                                          : static_cast<double>(override->second) /
                                                std::max<uint32_t>(1, link->igp_metric()));
    shared->link_latency_us.push_back(link->latency_us());
    std::vector<int> srlgs;
    for (const auto& name : link->srlgs()) {
      auto [it, inserted] = shared->srlg_index.emplace(name, static_cast<int>(shared->srlg_names.size()));
      if (inserted) shared->srlg_names.push_back(name);
      srlgs.push_back(it->second);
    }
    shared->link_srlgs.push_back(std::move(srlgs));
    ++out_count[src];
    const bool drained = link->admin_state() == v1::ADMIN_STATE_DRAINED || drains.Drained(*link);
    states->push_back(StateFor(link->latency_us(), shared->link_cost_scale.back(), drained, link->health()));
    snapshot.usable_links_ += states->back().usable;
  }
  // Adjacency as one flat array (CSR), links of a facility in id order.
  shared->out_offsets.assign(n + 1, 0);
  for (int f = 0; f < n; ++f) shared->out_offsets[f + 1] = shared->out_offsets[f] + out_count[f];
  shared->out_links.resize(shared->link_ids.size());
  std::vector<int> fill(shared->out_offsets.begin(), shared->out_offsets.end() - 1);
  for (int link = 0; link < static_cast<int>(shared->link_ids.size()); ++link) {
    shared->out_links[fill[shared->link_src[link]]++] = link;
  }

  std::vector<const v1::Service*> services;
  for (const auto& service : model.services) services.push_back(&service);
  std::sort(services.begin(), services.end(),
            [](const auto* a, const auto* b) { return a->id() < b->id(); });
  std::unordered_map<std::string, int> service_index;
  for (const auto* service : services) {
    ServiceReplicas replicas;
    replicas.service_time_us = service->service_time_us();
    for (const auto& facility : service->replica_facility_ids()) {
      const auto it = shared->facility_index.find(facility);
      if (it != shared->facility_index.end()) replicas.facilities.push_back(it->second);
    }
    std::sort(replicas.facilities.begin(), replicas.facilities.end());
    replicas.facilities.erase(std::unique(replicas.facilities.begin(), replicas.facilities.end()),
                              replicas.facilities.end());
    service_index[service->id()] = static_cast<int>(shared->service_ids.size());
    shared->service_ids.push_back(service->id());
    shared->services.push_back(std::move(replicas));
  }

  for (const auto& workload : model.workloads) {
    const int workload_index = static_cast<int>(shared->workload_ids.size());
    if (workload.has_elephant()) {
      const auto& flow = workload.elephant();
      const auto src = shared->facility_index.find(flow.src_facility_id());
      const auto dst = prefix_owner.find(flow.dst_prefix());
      if (src == shared->facility_index.end() || dst == prefix_owner.end()) continue;
      shared->demands.push_back(
          Demand{src->second, dst->second, flow.demand_gbps(), flow.priority(), workload_index});
    } else if (workload.has_chain()) {
      const auto& spec = workload.chain();
      const auto origin = shared->facility_index.find(spec.origin_facility_id());
      if (origin == shared->facility_index.end()) continue;
      Chain chain{origin->second, {}, spec.latency_budget_us(), workload_index};
      for (const auto& id : spec.service_ids()) {
        const auto it = service_index.find(id);
        if (it == service_index.end()) break;
        chain.services.push_back(it->second);
      }
      if (chain.services.size() != static_cast<size_t>(spec.service_ids_size())) continue;
      if (auto pin = pins.find(workload.id()); pin != pins.end()) {
        // Facilities the model does not know (checked when pinned) are dropped: the
        // chain then finds no replica there and says so.
        const auto index_of = [&](const std::string& id) {
          const auto it = shared->facility_index.find(id);
          return it == shared->facility_index.end() ? -1 : it->second;
        };
        if (!pin->second->path_facility_ids().empty() &&
            pin->second->path_facility_ids_size() == static_cast<int>(chain.services.size())) {
          for (const auto& id : pin->second->path_facility_ids()) chain.pinned_replicas.push_back(index_of(id));
        }
        if (!pin->second->allowed_facility_ids().empty()) {
          chain.allowed.assign(shared->facility_ids.size(), 0);
          for (const auto& id : pin->second->allowed_facility_ids()) {
            if (const int f = index_of(id); f >= 0) chain.allowed[f] = 1;
          }
          chain.allowed[chain.origin] = 1;
        }
      }
      shared->chains.push_back(std::move(chain));
    } else {
      continue;
    }
    shared->workload_ids.push_back(workload.id());
  }

  snapshot.shared_ = std::move(shared);
  snapshot.states_ = std::move(states);
  return snapshot;
}

absl::StatusOr<Snapshot> Snapshot::WithLinkHealth(
    const std::vector<std::pair<std::string, v1::LinkHealth>>& health) const {
  auto states = std::make_shared<std::vector<LinkState>>(*states_);
  Snapshot next = *this;
  for (const auto& [id, link_health] : health) {
    const int link = LinkIndex(id);
    if (link < 0) return absl::NotFoundError(absl::StrCat("unknown link ", id));
    LinkState& state = (*states)[link];
    next.usable_links_ -= state.usable;
    state = StateFor(shared_->link_latency_us[link], shared_->link_cost_scale[link], state.drained, link_health);
    next.usable_links_ += state.usable;
  }
  next.states_ = std::move(states);
  return next;
}

int Snapshot::FacilityIndex(const std::string& id) const {
  auto it = shared_->facility_index.find(id);
  return it == shared_->facility_index.end() ? -1 : it->second;
}

int Snapshot::LinkIndex(const std::string& id) const {
  auto it = shared_->link_index.find(id);
  return it == shared_->link_index.end() ? -1 : it->second;
}

int Snapshot::SrlgIndex(const std::string& name) const {
  auto it = shared_->srlg_index.find(name);
  return it == shared_->srlg_index.end() ? -1 : it->second;
}

}  // namespace geodesic::pathcomp
