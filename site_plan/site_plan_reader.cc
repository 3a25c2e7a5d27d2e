#include "site_plan/site_plan_reader.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"

namespace geodesic::site_plan {
namespace {

absl::Status OutOfRange(const std::string& where, const std::string& what, uint64_t index, int size) {
  return absl::InvalidArgumentError(
      absl::StrCat(where, ": ", what, " index ", index, " is out of range (the plan has ", size, ")"));
}

}  // namespace

absl::Status ValidateIndices(const v1::SitePlan& plan) {
  for (int g = 0; g < plan.groups_size(); ++g) {
    const v1::NextHopGroup& group = plan.groups(g);
    if (group.ports_size() != group.weights_size()) {
      return absl::InvalidArgumentError(absl::StrCat("next-hop group ", g, ": ", group.ports_size(), " ports but ",
                                                     group.weights_size(), " weights"));
    }
    for (int i = 0; i < group.ports_size(); ++i) {
      if (group.ports(i) >= static_cast<uint32_t>(plan.ports_size())) {
        return OutOfRange(absl::StrCat("next-hop group ", g), "port", group.ports(i), plan.ports_size());
      }
      if (group.weights(i) == 0) return absl::InvalidArgumentError(absl::StrCat("next-hop group ", g, ": weight 0"));
    }
  }
  for (int p = 0; p < plan.ports_size(); ++p) {
    if (plan.ports(p).link_id().empty()) return absl::InvalidArgumentError(absl::StrCat("port ", p, ": no link id"));
  }
  if (plan.path_node_parents_size() != plan.path_node_facilities_size()) {
    return absl::InvalidArgumentError(absl::StrCat("path tree: ", plan.path_node_parents_size(), " parents but ",
                                                   plan.path_node_facilities_size(), " facilities"));
  }
  // A path visits a facility once: no node is deeper than the facilities
  // (which bounds what resolving every route's path costs).
  std::vector<uint32_t> depth(static_cast<size_t>(plan.path_node_parents_size()) + 1, 0);
  for (int k = 1; k <= plan.path_node_parents_size(); ++k) {
    const uint32_t parent = plan.path_node_parents(k - 1);
    if (parent >= static_cast<uint32_t>(k)) {
      return absl::InvalidArgumentError(absl::StrCat("path node ", k, ": parent ", parent, " is not an earlier node"));
    }
    if (plan.path_node_facilities(k - 1) >= static_cast<uint32_t>(plan.facility_ids_size())) {
      return OutOfRange(absl::StrCat("path node ", k), "facility", plan.path_node_facilities(k - 1),
                        plan.facility_ids_size());
    }
    depth[static_cast<size_t>(k)] = depth[parent] + 1;
    if (depth[static_cast<size_t>(k)] > static_cast<uint32_t>(plan.facility_ids_size())) {
      return absl::InvalidArgumentError(absl::StrCat("path node ", k, ": ", depth[static_cast<size_t>(k)],
                                                     " facilities long, more than the plan's ",
                                                     plan.facility_ids_size()));
    }
  }
  if (plan.path_latencies_us_size() != plan.path_nodes_size()) {
    return absl::InvalidArgumentError(absl::StrCat("path table: ", plan.path_nodes_size(), " paths but ",
                                                   plan.path_latencies_us_size(), " latencies"));
  }
  for (int p = 0; p < plan.path_nodes_size(); ++p) {
    if (plan.path_nodes(p) > static_cast<uint32_t>(plan.path_node_parents_size())) {
      return OutOfRange(absl::StrCat("path ", p), "node", plan.path_nodes(p), plan.path_node_parents_size() + 1);
    }
  }
  for (const v1::Route& route : plan.routes()) {
    const std::string where = absl::StrCat("route ", route.prefix());
    if (route.destination() >= static_cast<uint32_t>(plan.facility_ids_size())) {
      return OutOfRange(where, "destination facility", route.destination(), plan.facility_ids_size());
    }
    if (route.next_hops() >= static_cast<uint32_t>(plan.groups_size())) {
      return OutOfRange(where, "next-hop group", route.next_hops(), plan.groups_size());
    }
    if (route.path() >= static_cast<uint32_t>(PathCount(plan))) {
      return OutOfRange(where, "path", route.path(), PathCount(plan));
    }
    if (route.backups_size() % 3 != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": ", route.backups_size(), " backup numbers, not (failure, group, path) triples"));
    }
    for (int b = 0; b < BackupCount(route); ++b) {
      const BackupRef backup = BackupAt(route, b);
      if (backup.failure >= static_cast<uint32_t>(plan.failures_size())) {
        return OutOfRange(absl::StrCat(where, " backup ", b), "failure", backup.failure, plan.failures_size());
      }
      if (backup.group >= static_cast<uint32_t>(plan.groups_size())) {
        return OutOfRange(absl::StrCat(where, " backup ", b), "next-hop group", backup.group, plan.groups_size());
      }
      if (backup.path >= static_cast<uint32_t>(PathCount(plan))) {
        return OutOfRange(absl::StrCat(where, " backup ", b), "path", backup.path, PathCount(plan));
      }
    }
  }
  return absl::OkStatus();
}

int BackupCount(const v1::Route& route) { return route.backups_size() / 3; }

BackupRef BackupAt(const v1::Route& route, int backup) {
  return {.failure = route.backups(3 * backup), .group = route.backups(3 * backup + 1),
          .path = route.backups(3 * backup + 2)};
}

bool DetachLegacyPaths(v1::SitePlan& plan) {
  // A plan written now has a path for every route: an empty table with routes is an old form.
  if (plan.routes_size() == 0 || plan.path_nodes_size() > 0 || plan.path_latencies_us_size() > 0 ||
      plan.path_node_parents_size() > 0 || plan.path_node_facilities_size() > 0) {
    return false;
  }
  plan.add_path_nodes(0);
  plan.add_path_latencies_us(0);
  for (v1::Route& route : *plan.mutable_routes()) {
    route.set_path(0);
    for (int i = 2; i < route.backups_size(); i += 3) route.set_backups(i, 0);
  }
  return true;
}

const std::string& DestinationId(const v1::SitePlan& plan, const v1::Route& route) {
  return plan.facility_ids(static_cast<int>(route.destination()));
}

const v1::NextHopGroup& PrimaryGroup(const v1::SitePlan& plan, const v1::Route& route) {
  return plan.groups(static_cast<int>(route.next_hops()));
}

int PathCount(const v1::SitePlan& plan) { return plan.path_nodes_size(); }

std::vector<uint32_t> PathFacilities(const v1::SitePlan& plan, uint32_t path) {
  std::vector<uint32_t> facilities;
  for (uint32_t node = plan.path_nodes(static_cast<int>(path)); node != 0;
       node = plan.path_node_parents(static_cast<int>(node) - 1)) {
    facilities.push_back(plan.path_node_facilities(static_cast<int>(node) - 1));
  }
  std::reverse(facilities.begin(), facilities.end());
  return facilities;
}

uint64_t PathLatencyUs(const v1::SitePlan& plan, uint32_t path) {
  return plan.path_latencies_us(static_cast<int>(path));
}

const v1::FailureScope& BackupFailure(const v1::SitePlan& plan, const v1::Route& route, int backup) {
  return plan.failures(static_cast<int>(BackupAt(route, backup).failure));
}

const std::string& LinkId(const v1::SitePlan& plan, const v1::NextHopGroup& group, int i) {
  return plan.ports(static_cast<int>(group.ports(i))).link_id();
}

namespace {

void ResolveNextHops(const v1::SitePlan& plan, const v1::NextHopGroup& group,
                     google::protobuf::RepeatedPtrField<v1::NextHop>& out) {
  out.Reserve(group.ports_size());
  for (int i = 0; i < group.ports_size(); ++i) {
    const v1::Port& port = plan.ports(static_cast<int>(group.ports(i)));
    v1::NextHop& hop = *out.Add();
    hop.set_link_id(port.link_id());
    hop.set_peer_facility_id(port.peer_facility_id());
    hop.set_peer_node_id(port.peer_node_id());
    hop.set_weight(group.weights(i));
  }
}

v1::ForwardingRoute Resolve(const v1::SitePlan& plan, const v1::Route& route, uint32_t group, uint32_t path) {
  v1::ForwardingRoute resolved;
  resolved.set_prefix(route.prefix());
  resolved.set_destination_facility_id(DestinationId(plan, route));
  ResolveNextHops(plan, plan.groups(static_cast<int>(group)), *resolved.mutable_next_hops());
  const std::vector<uint32_t> along = PathFacilities(plan, path);
  resolved.mutable_path_facility_ids()->Reserve(static_cast<int>(along.size()));
  for (uint32_t facility : along) resolved.add_path_facility_ids(plan.facility_ids(static_cast<int>(facility)));
  resolved.set_path_latency_us(PathLatencyUs(plan, path));
  return resolved;
}

}  // namespace

std::vector<v1::NextHop> NextHops(const v1::SitePlan& plan, const v1::NextHopGroup& group) {
  google::protobuf::RepeatedPtrField<v1::NextHop> hops;
  ResolveNextHops(plan, group, hops);
  return {hops.begin(), hops.end()};
}

std::vector<std::string> PathIds(const v1::SitePlan& plan, uint32_t path) {
  const std::vector<uint32_t> facilities = PathFacilities(plan, path);
  std::vector<std::string> ids;
  ids.reserve(facilities.size());
  for (uint32_t facility : facilities) ids.push_back(plan.facility_ids(static_cast<int>(facility)));
  return ids;
}

v1::ForwardingRoute Primary(const v1::SitePlan& plan, const v1::Route& route) {
  return Resolve(plan, route, route.next_hops(), route.path());
}

v1::ForwardingRoute WithBackup(const v1::SitePlan& plan, const v1::Route& route, int backup) {
  const BackupRef ref = BackupAt(route, backup);
  return Resolve(plan, route, ref.group, ref.path);
}

ExpandedRoute Expand(const v1::SitePlan& plan, const v1::Route& route) {
  ExpandedRoute expanded{.primary = Primary(plan, route), .backups = {}};
  for (int b = 0; b < BackupCount(route); ++b) {
    expanded.backups.push_back({.protects = BackupFailure(plan, route, b), .route = WithBackup(plan, route, b)});
  }
  return expanded;
}

int FindBackup(const v1::SitePlan& plan, const v1::Route& route, const v1::FailureScope& failure) {
  for (int b = 0; b < BackupCount(route); ++b) {
    const v1::FailureScope& scope = BackupFailure(plan, route, b);
    if (scope.kind() == failure.kind() && scope.id() == failure.id() && scope.plane() == failure.plane()) return b;
  }
  return -1;
}

const v1::Route* FindRoute(const v1::SitePlan& plan, const std::string& prefix) {
  for (const v1::Route& route : plan.routes()) {
    if (route.prefix() == prefix) return &route;
  }
  return nullptr;
}

const v1::Route* FindRouteTo(const v1::SitePlan& plan, const std::string& destination_id) {
  for (const v1::Route& route : plan.routes()) {
    if (DestinationId(plan, route) == destination_id) return &route;
  }
  return nullptr;
}

}  // namespace geodesic::site_plan
