#include "site_plan/site_plan_writer.h"

#include <algorithm>

#include "absl/hash/hash.h"
#include "absl/types/span.h"

namespace geodesic::site_plan {
namespace {

uint64_t NodeKey(uint32_t parent, uint32_t facility) { return uint64_t{parent} << 32 | facility; }

}  // namespace

SitePlanWriter::SitePlanWriter(v1::SitePlan* plan)
    : plan_(plan),
      groups_(0, GroupIndexHash{.writer = this}, GroupIndexEq{.writer = this}) {
  for (int i = 0; i < plan_->ports_size(); ++i) ports_.try_emplace(plan_->ports(i).link_id(), i);
  for (int i = 0; i < plan_->facility_ids_size(); ++i) facilities_.try_emplace(plan_->facility_ids(i), i);
  // Repeated entries: the first stays the one found.
  for (int i = 0; i < plan_->groups_size(); ++i) groups_.insert(static_cast<uint32_t>(i));
  for (int k = 1; k <= plan_->path_node_parents_size(); ++k) {
    path_nodes_.try_emplace(NodeKey(plan_->path_node_parents(k - 1), plan_->path_node_facilities(k - 1)), k);
  }
  for (int i = 0; i < plan_->path_nodes_size(); ++i) {
    paths_.try_emplace(std::pair(plan_->path_nodes(i), plan_->path_latencies_us(i)), i);
  }
  for (int i = 0; i < plan_->failures_size(); ++i) {
    const v1::FailureScope& failure = plan_->failures(i);
    failures_.try_emplace(std::make_tuple(static_cast<int>(failure.kind()), failure.id(), failure.plane()), i);
  }
}

size_t SitePlanWriter::Hash(const GroupView& group) {
  return absl::HashOf(absl::MakeConstSpan(group.ports.data(), group.ports.size()),
                      absl::MakeConstSpan(group.weights.data(), group.weights.size()));
}

SitePlanWriter::GroupView SitePlanWriter::GroupAt(uint32_t index) const {
  const v1::NextHopGroup& group = plan_->groups(static_cast<int>(index));
  return GroupView{.ports = {group.ports().data(), static_cast<size_t>(group.ports_size())},
                   .weights = {group.weights().data(), static_cast<size_t>(group.weights_size())}};
}

bool SitePlanWriter::GroupIndexEq::operator()(const GroupView& a, uint32_t b) const {
  const GroupView other = writer->GroupAt(b);
  return std::equal(a.ports.begin(), a.ports.end(), other.ports.begin(), other.ports.end()) &&
         std::equal(a.weights.begin(), a.weights.end(), other.weights.begin(), other.weights.end());
}

uint32_t SitePlanWriter::Port(const std::string& link_id, const std::string& peer_facility_id,
                              const std::string& peer_node_id) {
  auto [it, added] = ports_.try_emplace(link_id, static_cast<uint32_t>(plan_->ports_size()));
  if (added) {
    v1::Port& port = *plan_->add_ports();
    port.set_link_id(link_id);
    port.set_peer_facility_id(peer_facility_id);
    port.set_peer_node_id(peer_node_id);
  }
  return it->second;
}

uint32_t SitePlanWriter::Facility(const std::string& facility_id) {
  auto [it, added] = facilities_.try_emplace(facility_id, static_cast<uint32_t>(plan_->facility_ids_size()));
  if (added) plan_->add_facility_ids(facility_id);
  return it->second;
}

uint32_t SitePlanWriter::Group(std::span<const uint32_t> ports, std::span<const uint32_t> weights) {
  if (auto it = groups_.find(GroupView{.ports = ports, .weights = weights}); it != groups_.end()) return *it;
  const auto index = static_cast<uint32_t>(plan_->groups_size());
  v1::NextHopGroup& group = *plan_->add_groups();
  group.mutable_ports()->Add(ports.begin(), ports.end());
  group.mutable_weights()->Add(weights.begin(), weights.end());
  groups_.insert(index);
  return index;
}

uint32_t SitePlanWriter::Path(std::span<const uint32_t> facilities, uint64_t latency_us) {
  uint32_t node = 0;
  for (const uint32_t facility : facilities) node = PathNode(node, facility);
  return PathEndingAt(node, latency_us);
}

uint32_t SitePlanWriter::PathNode(uint32_t parent, uint32_t facility) {
  auto [it, added] =
      path_nodes_.try_emplace(NodeKey(parent, facility), static_cast<uint32_t>(plan_->path_node_parents_size() + 1));
  if (added) {
    plan_->add_path_node_parents(parent);
    plan_->add_path_node_facilities(facility);
  }
  return it->second;
}

uint32_t SitePlanWriter::PathEndingAt(uint32_t node, uint64_t latency_us) {
  auto [it, added] = paths_.try_emplace(std::pair(node, latency_us), static_cast<uint32_t>(plan_->path_nodes_size()));
  if (added) {
    plan_->add_path_nodes(node);
    plan_->add_path_latencies_us(latency_us);
  }
  return it->second;
}

uint32_t SitePlanWriter::Failure(const v1::FailureScope& failure) {
  auto [it, added] = failures_.try_emplace(std::make_tuple(static_cast<int>(failure.kind()), failure.id(),
                                                           failure.plane()),
                                           static_cast<uint32_t>(plan_->failures_size()));
  if (added) *plan_->add_failures() = failure;
  return it->second;
}

v1::Route& SitePlanWriter::AddRoute(std::string prefix, uint32_t destination, uint32_t group, uint32_t path) {
  v1::Route& route = *plan_->add_routes();
  route.set_prefix(std::move(prefix));
  route.set_destination(destination);
  route.set_next_hops(group);
  route.set_path(path);
  return route;
}

void SitePlanWriter::AddBackup(v1::Route& route, uint32_t failure, uint32_t group, uint32_t path) {
  route.add_backups(failure);
  route.add_backups(group);
  route.add_backups(path);
}

uint32_t SitePlanWriter::GroupOf(const std::vector<v1::NextHop>& next_hops) {
  std::vector<uint32_t> ports, weights;
  for (const v1::NextHop& hop : next_hops) {
    ports.push_back(Port(hop.link_id(), hop.peer_facility_id(), hop.peer_node_id()));
    weights.push_back(hop.weight());
  }
  return Group(ports, weights);
}

uint32_t SitePlanWriter::PathOf(const std::vector<std::string>& path_facility_ids, uint64_t latency_us) {
  std::vector<uint32_t> facilities;
  for (const std::string& id : path_facility_ids) facilities.push_back(Facility(id));
  return Path(facilities, latency_us);
}

v1::Route& SitePlanWriter::AddRoute(std::string prefix, const std::string& destination_id,
                                    const std::vector<v1::NextHop>& next_hops,
                                    const std::vector<std::string>& path_facility_ids, uint64_t path_latency_us) {
  const uint32_t destination = Facility(destination_id);
  const uint32_t group = GroupOf(next_hops);
  const uint32_t path = PathOf(path_facility_ids, path_latency_us);
  return AddRoute(std::move(prefix), destination, group, path);
}

void SitePlanWriter::AddBackup(v1::Route& route, const v1::FailureScope& failure,
                               const std::vector<v1::NextHop>& next_hops,
                               const std::vector<std::string>& path_facility_ids, uint64_t path_latency_us) {
  const uint32_t failure_index = Failure(failure);
  const uint32_t group = GroupOf(next_hops);
  AddBackup(route, failure_index, group, PathOf(path_facility_ids, path_latency_us));
}

}  // namespace geodesic::site_plan
