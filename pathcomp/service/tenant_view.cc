#include "pathcomp/service/tenant_view.h"

#include <algorithm>
#include <optional>
#include <tuple>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "entity/entity_id.h"
#include "site_plan/chain_paths.h"
#include "site_plan/site_plan_reader.h"

namespace geodesic::pathcomp {
namespace {

// Bounds what an error echoes back from the request.
std::string Quoted(const std::string& text) {
  constexpr size_t kMax = 80;
  const std::string shown = absl::CHexEscape(text.substr(0, kMax));
  return absl::StrCat("\"", shown, text.size() > kMax ? "...\"" : "\"");
}

bool Usable(const v1::Link& link) {
  return link.admin_state() != v1::ADMIN_STATE_DRAINED &&
         (link.health().state() == v1::OPER_STATE_UP || link.health().state() == v1::OPER_STATE_DEGRADED);
}

uint64_t OneWayLatencyUs(const v1::Link& link) {
  return link.health().rtt_us() > 0 ? link.health().rtt_us() / 2 : link.latency_us();
}

// The links of one view's computation, by id and by facility pair.
class LinkIndex {
 public:
  explicit LinkIndex(const std::vector<v1::Link>& links) {
    for (const v1::Link& link : links) {
      by_id_[link.id()] = &link;
      by_pair_[{link.src_facility_id(), link.dst_facility_id()}].push_back(&link);
    }
  }

  const v1::Link* Find(const std::string& id) const {
    auto it = by_id_.find(id);
    return it == by_id_.end() ? nullptr : it->second;
  }

  // The usable link from `from` to `to` with the least latency (ties by id);
  // when none is usable, the least-latency one of the others; null when the
  // two facilities have no link.
  const v1::Link* Best(const std::string& from, const std::string& to) const {
    auto it = by_pair_.find({from, to});
    if (it == by_pair_.end()) return nullptr;
    const v1::Link* best = nullptr;
    auto key = [](const v1::Link* link) {
      return std::make_tuple(!Usable(*link), OneWayLatencyUs(*link), link->id());
    };
    for (const v1::Link* link : it->second) {
      if (best == nullptr || key(link) < key(best)) best = link;
    }
    return best;
  }

 private:
  std::map<std::string, const v1::Link*> by_id_;
  std::map<std::pair<std::string, std::string>, std::vector<const v1::Link*>> by_pair_;
};

// One hop over `link`; a link the model no longer has shows as unknown.
v1::RelayHop Hop(const LinkIndex& links, const std::string& link_id, const std::string& from,
                 const std::string& to) {
  v1::RelayHop hop;
  hop.set_from_facility_id(from);
  hop.set_to_facility_id(to);
  hop.set_link_id(link_id);
  const v1::Link* link = links.Find(link_id);
  if (link == nullptr) return hop;
  hop.set_latency_us(OneWayLatencyUs(*link));
  hop.set_latency_measured(link->health().rtt_us() > 0);
  hop.set_loss_ratio(link->health().loss_ratio());
  hop.set_state(link->health().state());
  hop.set_admin_state(link->admin_state());
  return hop;
}

void AddHop(v1::RelayPath& path, v1::RelayHop hop) {
  if (path.facility_ids().empty()) path.add_facility_ids(hop.from_facility_id());
  path.add_facility_ids(hop.to_facility_id());
  *path.add_hops() = std::move(hop);
}

void Total(v1::RelayPath& path) {
  uint64_t latency_us = 0;
  double delivered = 1;
  for (const v1::RelayHop& hop : path.hops()) {
    latency_us += hop.latency_us();
    delivered *= 1 - std::clamp(hop.loss_ratio(), 0.0, 1.0);
  }
  path.set_total_latency_us(latency_us);
  path.set_loss_ratio(1 - delivered);
}

// A path through `facilities` (as a chain's plan gives it), link by link.
v1::RelayPath PathThrough(const LinkIndex& links, const std::vector<std::string>& facilities) {
  v1::RelayPath path;
  path.set_weight(1);
  if (facilities.size() == 1) path.add_facility_ids(facilities[0]);
  for (size_t i = 0; i + 1 < facilities.size(); ++i) {
    const v1::Link* link = links.Best(facilities[i], facilities[i + 1]);
    AddHop(path, Hop(links, link ? link->id() : "", facilities[i], facilities[i + 1]));
  }
  Total(path);
  return path;
}

// The route of `site` for `prefix` as its routers get it, or nullopt.
std::optional<v1::ForwardingRoute> FindRoute(const std::map<std::string, const v1::SitePlan*>& sites,
                                             const std::string& site, const std::string& prefix) {
  auto it = sites.find(site);
  if (it == sites.end()) return std::nullopt;
  const v1::Route* route = site_plan::FindRoute(*it->second, prefix);
  if (route == nullptr) return std::nullopt;
  return site_plan::Primary(*it->second, *route);
}

// The next hop a downstream site sends the prefix to: its primary path's, else
// its heaviest (ties by link id).
const v1::NextHop* PrimaryNextHop(const v1::ForwardingRoute& route) {
  const v1::NextHop* best = nullptr;
  for (const v1::NextHop& next : route.next_hops()) {
    if (route.path_facility_ids_size() >= 2 && next.peer_facility_id() == route.path_facility_ids(1)) return &next;
    if (best == nullptr || next.weight() > best->weight() ||
        (next.weight() == best->weight() && next.link_id() < best->link_id())) {
      best = &next;
    }
  }
  return best;
}

void FillElephant(const v1::ElephantFlow& flow, const std::map<std::string, const v1::SitePlan*>& sites,
                  const LinkIndex& links, v1::RelayWorkload& out) {
  const std::optional<v1::ForwardingRoute> route = FindRoute(sites, flow.src_facility_id(), flow.dst_prefix());
  if (!route || route->next_hops().empty()) {
    out.set_unrouted_reason(absl::StrCat("the plan has no route from ", flow.src_facility_id(), " to ",
                                         flow.dst_prefix()));
    return;
  }
  out.set_routed(true);
  out.set_planned_latency_us(route->path_latency_us());
  uint64_t slowest_us = 0;
  for (const v1::NextHop& first : route->next_hops()) {
    v1::RelayPath& path = *out.add_paths();
    path.set_weight(first.weight());
    AddHop(path, Hop(links, first.link_id(), flow.src_facility_id(), first.peer_facility_id()));
    std::set<std::string> visited = {flow.src_facility_id(), first.peer_facility_id()};
    std::string at = first.peer_facility_id();
    while (at != route->destination_facility_id()) {
      const std::optional<v1::ForwardingRoute> onward = FindRoute(sites, at, flow.dst_prefix());
      const v1::NextHop* next = onward ? PrimaryNextHop(*onward) : nullptr;
      if (next == nullptr || !visited.insert(next->peer_facility_id()).second) break;
      AddHop(path, Hop(links, next->link_id(), at, next->peer_facility_id()));
      at = next->peer_facility_id();
    }
    Total(path);
    slowest_us = std::max(slowest_us, path.total_latency_us());
  }
  out.set_measured_latency_us(slowest_us);
}

void FillChain(const v1::AgentChain& chain, const v1::ChainPlan* plan, const LinkIndex& links,
               v1::RelayWorkload& out) {
  out.set_latency_budget_us(chain.latency_budget_us());
  if (plan == nullptr) {
    out.set_unrouted_reason("the plan has no assignment for the chain");
    return;
  }
  const v1::ChainAssignment& primary = plan->primary();
  if (!primary.placed()) {
    out.set_unrouted_reason(primary.reason().empty() ? "the chain cannot be placed" : primary.reason());
    return;
  }
  out.set_routed(true);
  out.set_planned_latency_us(primary.total_latency_us());
  uint64_t measured_us = 0;
  for (const v1::ChainHop& hop : primary.hops()) {
    v1::RelayCall& call = *out.add_calls();
    call.set_service_id(hop.service_id());
    call.set_replica_facility_id(hop.replica_facility_id());
    *call.mutable_there() = PathThrough(links, site_plan::ChainPathIds(*plan, hop.path_there()));
    *call.mutable_back() = PathThrough(links, site_plan::ChainPathIds(*plan, hop.path_back()));
    call.set_service_time_us(hop.service_time_us());
    measured_us += call.there().total_latency_us() + call.back().total_latency_us() + hop.service_time_us();
  }
  out.set_measured_latency_us(measured_us);
  out.set_over_budget(primary.total_latency_us() > chain.latency_budget_us() ||
                      measured_us > chain.latency_budget_us());
}

bool SamePath(const v1::RelayPath& a, const v1::RelayPath& b) {
  if (a.weight() != b.weight() || a.hops_size() != b.hops_size() ||
      a.facility_ids_size() != b.facility_ids_size()) {
    return false;
  }
  for (int i = 0; i < a.facility_ids_size(); ++i) {
    if (a.facility_ids(i) != b.facility_ids(i)) return false;
  }
  for (int i = 0; i < a.hops_size(); ++i) {
    if (a.hops(i).link_id() != b.hops(i).link_id()) return false;
  }
  return true;
}

void AddLinks(const v1::RelayPath& path, std::set<std::string>& links) {
  for (const v1::RelayHop& hop : path.hops()) {
    if (!hop.link_id().empty()) links.insert(hop.link_id());
  }
}

}  // namespace

bool RelayScope::Covers(const v1::Workload& workload) const {
  if (!all_tenants && workload.tenant() != tenant) return false;
  return workload_ids.empty() || workload_ids.count(workload.id()) > 0;
}

absl::StatusOr<RelayScope> ScopeFor(const tls::Identity& caller, const v1::RelayWatchRequest& request) {
  RelayScope scope;
  switch (caller.kind) {
    case tls::Identity::Kind::kTenant:
      if (!request.tenant().empty() && request.tenant() != caller.name) {
        return absl::PermissionDeniedError(
            absl::StrCat("tenant ", caller.name, " may watch only its own workloads"));
      }
      scope.tenant = caller.name;
      break;
    case tls::Identity::Kind::kOperator:
      scope.operator_view = true;
      scope.all_tenants = request.tenant().empty();
      scope.tenant = request.tenant();
      break;
    default:
      return absl::PermissionDeniedError(absl::StrCat(
          caller.spiffe_id, " may not watch the relay: it serves tenants and operators"));
  }
  if (!request.tenant().empty() && !entity::IsValidEntityId(request.tenant())) {
    return absl::InvalidArgumentError(absl::StrCat("tenant ", Quoted(request.tenant()),
                                                   " is not a valid id (", entity::kEntityIdRule, ")"));
  }
  if (request.workload_ids_size() > kMaxRelayWorkloadIds) {
    return absl::InvalidArgumentError(absl::StrCat("at most ", kMaxRelayWorkloadIds, " workload ids, not ",
                                                   request.workload_ids_size()));
  }
  for (const std::string& id : request.workload_ids()) {
    if (!entity::IsValidEntityId(id)) {
      return absl::InvalidArgumentError(
          absl::StrCat("workload id ", Quoted(id), " is not a valid id (", entity::kEntityIdRule, ")"));
    }
    if (!scope.workload_ids.insert(id).second) {
      return absl::InvalidArgumentError(absl::StrCat("workload id ", id, " is listed twice"));
    }
  }
  return scope;
}

absl::Status CheckRequestedWorkloads(const RelayScope& scope, const std::vector<v1::Workload>& workloads) {
  std::set<std::string> visible;
  for (const v1::Workload& workload : workloads) {
    if (scope.Covers(workload)) visible.insert(workload.id());
  }
  for (const std::string& id : scope.workload_ids) {
    if (!visible.count(id)) return absl::NotFoundError(absl::StrCat("unknown workload ", id));
  }
  return absl::OkStatus();
}

std::map<std::string, v1::RelayWorkload> BuildTenantView(const RelayScope& scope, const v1::Plan* plan,
                                                         const std::vector<v1::Link>& links,
                                                         const std::vector<v1::Workload>& workloads) {
  const LinkIndex index(links);
  std::map<std::string, const v1::SitePlan*> sites;
  std::map<std::string, const v1::ChainPlan*> chains;
  std::map<std::string, std::vector<const v1::FacilityDependency*>> dependencies;
  if (plan != nullptr) {
    for (const v1::SitePlan& site : plan->sites()) sites[site.facility_id()] = &site;
    for (const v1::ChainPlan& chain : plan->chains()) chains[chain.workload_id()] = &chain;
    for (const v1::FacilityDependency& dependency : plan->single_facility_dependencies()) {
      dependencies[dependency.workload_id()].push_back(&dependency);
    }
  }
  std::map<std::string, v1::RelayWorkload> view;
  for (const v1::Workload& workload : workloads) {
    if (!scope.Covers(workload)) continue;
    v1::RelayWorkload& out = view[workload.id()];
    out.set_workload_id(workload.id());
    out.set_tenant(workload.tenant());
    out.set_plan_generation(plan ? plan->generation() : 0);
    if (workload.has_elephant()) {
      out.set_kind("elephant");
    } else if (workload.has_chain()) {
      out.set_kind("chain");
    }
    if (plan == nullptr) {
      out.set_unrouted_reason("no plan has been computed yet");
      if (workload.has_chain()) out.set_latency_budget_us(workload.chain().latency_budget_us());
      continue;
    }
    if (workload.has_elephant()) {
      FillElephant(workload.elephant(), sites, index, out);
    } else if (workload.has_chain()) {
      auto chain = chains.find(workload.id());
      FillChain(workload.chain(), chain == chains.end() ? nullptr : chain->second, index, out);
    }
    for (const v1::FacilityDependency* dependency : dependencies[workload.id()]) {
      *out.add_single_facility_dependencies() = *dependency;
    }
  }
  return view;
}

std::set<std::string> LinksOf(const v1::RelayWorkload& workload) {
  std::set<std::string> links;
  for (const v1::RelayPath& path : workload.paths()) AddLinks(path, links);
  for (const v1::RelayCall& call : workload.calls()) {
    AddLinks(call.there(), links);
    AddLinks(call.back(), links);
  }
  return links;
}

bool SameRoute(const v1::RelayWorkload& a, const v1::RelayWorkload& b) {
  if (a.routed() != b.routed() || a.unrouted_reason() != b.unrouted_reason() ||
      a.paths_size() != b.paths_size() || a.calls_size() != b.calls_size()) {
    return false;
  }
  for (int i = 0; i < a.paths_size(); ++i) {
    if (!SamePath(a.paths(i), b.paths(i))) return false;
  }
  for (int i = 0; i < a.calls_size(); ++i) {
    const v1::RelayCall& x = a.calls(i);
    const v1::RelayCall& y = b.calls(i);
    if (x.service_id() != y.service_id() || x.replica_facility_id() != y.replica_facility_id() ||
        !SamePath(x.there(), y.there()) || !SamePath(x.back(), y.back())) {
      return false;
    }
  }
  return true;
}

}  // namespace geodesic::pathcomp
