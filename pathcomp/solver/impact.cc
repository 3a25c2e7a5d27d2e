#include "pathcomp/solver/impact.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "pathcomp/solver/chain_plan_proto.h"
#include "pathcomp/solver/path_solver.h"
#include "site_plan/site_plan_reader.h"

namespace geodesic::pathcomp {
namespace {

void MarkDown(v1::Link& link) { link.mutable_health()->set_state(v1::OPER_STATE_DOWN); }

const v1::ChainPlan* FindChain(const v1::Plan& plan, const std::string& workload_id) {
  for (const auto& chain : plan.chains()) {
    if (chain.workload_id() == workload_id) return &chain;
  }
  return nullptr;
}

// The route of `site` towards `destination` as its routers get it, or nullopt.
std::optional<v1::ForwardingRoute> RouteTo(const v1::Plan& plan, const std::string& site,
                                           const std::string& destination) {
  for (const auto& site_plan : plan.sites()) {
    if (site_plan.facility_id() != site) continue;
    if (const v1::Route* route = site_plan::FindRouteTo(site_plan, destination)) {
      return site_plan::Primary(site_plan, *route);
    }
  }
  return std::nullopt;
}

// Same next hops (link and weight) and the same path.
bool SameForwarding(const std::optional<v1::ForwardingRoute>& a, const std::optional<v1::ForwardingRoute>& b) {
  if (!a || !b) return a.has_value() == b.has_value();
  if (a->next_hops_size() != b->next_hops_size() || a->path_facility_ids_size() != b->path_facility_ids_size()) {
    return false;
  }
  for (int i = 0; i < a->next_hops_size(); ++i) {
    if (a->next_hops(i).link_id() != b->next_hops(i).link_id() ||
        a->next_hops(i).weight() != b->next_hops(i).weight()) {
      return false;
    }
  }
  for (int i = 0; i < a->path_facility_ids_size(); ++i) {
    if (a->path_facility_ids(i) != b->path_facility_ids(i)) return false;
  }
  return true;
}

std::map<std::string, double> Utilizations(const v1::Plan& plan) {
  std::map<std::string, double> utilization;
  for (const auto& link : plan.elephants().links()) {
    if (link.capacity_gbps() > 0) utilization[link.link_id()] = link.load_gbps() / link.capacity_gbps();
  }
  return utilization;
}

}  // namespace

std::set<std::string> LinksTakenDown(const std::vector<v1::Link>& links, const v1::FailureScope& scope) {
  std::set<std::string> down;
  const std::string& id = scope.id();
  const v1::Link* named = nullptr;
  if (scope.kind() == v1::FAILURE_KIND_LINK) {
    for (const auto& link : links) {
      if (link.id() == id) named = &link;
    }
    if (named == nullptr) return down;
  }
  for (const auto& link : links) {
    bool hit = false;
    switch (scope.kind()) {
      case v1::FAILURE_KIND_LINK:  // the link and its reverse: one fiber
        hit = link.id() == id ||
              (link.src_node_id() == named->dst_node_id() && link.dst_node_id() == named->src_node_id());
        break;
      case v1::FAILURE_KIND_SRLG:
        hit = std::find(link.srlgs().begin(), link.srlgs().end(), id) != link.srlgs().end();
        break;
      case v1::FAILURE_KIND_NODE: hit = link.src_node_id() == id || link.dst_node_id() == id; break;
      case v1::FAILURE_KIND_FACILITY: hit = link.src_facility_id() == id || link.dst_facility_id() == id; break;
      default: break;
    }
    if (hit) down.insert(link.id());
  }
  return down;
}

std::string DescribeFailure(const v1::FailureScope& failure) {
  switch (failure.kind()) {
    case v1::FAILURE_KIND_LINK: return absl::StrCat("link ", failure.id());
    case v1::FAILURE_KIND_SRLG: return absl::StrCat("srlg ", failure.id());
    case v1::FAILURE_KIND_FACILITY: return absl::StrCat("facility ", failure.id());
    case v1::FAILURE_KIND_NODE: return absl::StrCat("node ", failure.id());
    case v1::FAILURE_KIND_PLANE: return absl::StrCat("plane ", failure.id(), ":", failure.plane());
    default: return absl::StrCat("failure of unknown kind ", static_cast<int>(failure.kind()));
  }
}

absl::Status ApplyFailures(const std::vector<v1::FailureScope>& failures, ModelView& view) {
  if (failures.empty()) return absl::InvalidArgumentError("name at least one failure");
  if (failures.size() > static_cast<size_t>(kMaxWhatIfFailures)) {
    return absl::InvalidArgumentError(absl::StrCat("at most ", kMaxWhatIfFailures, " failures at once"));
  }
  ModelView changed = view;
  for (const v1::FailureScope& failure : failures) {
    const std::string& id = failure.id();
    if (id.empty()) return absl::InvalidArgumentError(absl::StrCat(DescribeFailure(failure), ": no id"));
    bool found = false;
    switch (failure.kind()) {
      case v1::FAILURE_KIND_LINK:
      case v1::FAILURE_KIND_SRLG:
      case v1::FAILURE_KIND_NODE:
      case v1::FAILURE_KIND_FACILITY: {
        const std::set<std::string> down = LinksTakenDown(changed.links, failure);
        for (auto& link : changed.links) {
          if (down.count(link.id())) MarkDown(link);
        }
        found = !down.empty();
        if (failure.kind() == v1::FAILURE_KIND_NODE) {
          for (const auto& node : changed.nodes) found = found || node.id() == id;
        }
        if (failure.kind() == v1::FAILURE_KIND_FACILITY) {
          for (const auto& facility : changed.facilities) found = found || facility.id() == id;
          for (auto& service : changed.services) {
            auto* replicas = service.mutable_replica_facility_ids();
            replicas->erase(std::remove(replicas->begin(), replicas->end(), id), replicas->end());
          }
        }
        break;
      }
      case v1::FAILURE_KIND_PLANE:
        for (const auto& fabric : changed.fabrics) {
          if (fabric.facility_id() != id) continue;
          if (failure.plane() >= fabric.planes()) {
            return absl::InvalidArgumentError(absl::StrCat("the fabric of ", id, " has planes 0..",
                                                           fabric.planes() == 0 ? 0 : fabric.planes() - 1,
                                                           ", not ", failure.plane()));
          }
          found = true;
        }
        if (found) {  // the snapshot counts a drained plane as down
          v1::Intent down;
          down.set_id(absl::StrCat("what-if-plane-", id, "-", failure.plane()));
          down.mutable_drain()->mutable_target()->set_facility_id(id);
          down.mutable_drain()->set_plane(failure.plane());
          down.mutable_drain()->set_plane_set(true);
          changed.intents.push_back(std::move(down));
        }
        break;
      default:
        return absl::InvalidArgumentError(absl::StrCat("unknown failure kind ", static_cast<int>(failure.kind())));
    }
    if (!found) {
      return absl::NotFoundError(
          absl::StrCat(failure.kind() == v1::FAILURE_KIND_PLANE ? "no fabric for facility " : "unknown ",
                       failure.kind() == v1::FAILURE_KIND_PLANE ? id : DescribeFailure(failure)));
    }
  }
  view = std::move(changed);
  return absl::OkStatus();
}

absl::StatusOr<double> UtilizationLimit(double requested) {
  if (requested == 0) return 1.0;
  if (!std::isfinite(requested) || requested <= 0 || requested > 10) {
    return absl::InvalidArgumentError(
        absl::StrCat("utilization_limit must be in (0, 10] (1 = a link at capacity), not ", requested));
  }
  return requested;
}

v1::Impact CompareImpact(const v1::Plan& before, const v1::Plan& after, const Snapshot& snapshot,
                         double utilization_limit) {
  v1::Impact impact;
  impact.set_utilization_limit(utilization_limit);
  std::set<std::string> moved;
  std::set<std::string> cut;

  // Chains: placement, reachability and budget.
  for (const std::string& id : MovedChains(before, after)) moved.insert(id);
  for (const auto& chain : before.chains()) {
    const v1::ChainPlan* now = FindChain(after, chain.workload_id());
    const bool placed_after = now != nullptr && now->primary().placed();
    if (chain.primary().placed() && !placed_after) {
      cut.insert(chain.workload_id());
    } else if (chain.primary().within_budget() && placed_after && !now->primary().within_budget()) {
      auto* over = impact.add_chains_over_budget();
      over->set_workload_id(chain.workload_id());
      over->set_before_us(chain.primary().total_latency_us());
      over->set_after_us(now->primary().total_latency_us());
      over->set_budget_us(chain.latency_budget_us());
    }
  }

  // Elephant flows: cut when newly unroutable, moved when routed differently
  // from their source.
  const std::set<std::string> unroutable_before(before.elephants().unroutable_workload_ids().begin(),
                                                before.elephants().unroutable_workload_ids().end());
  for (const std::string& id : after.elephants().unroutable_workload_ids()) {
    if (!unroutable_before.count(id)) cut.insert(id);
  }
  for (const Demand& demand : snapshot.demands()) {
    const std::string& id = snapshot.workload_id(demand.workload);
    if (cut.count(id)) continue;
    const std::string& src = snapshot.facility_id(demand.src);
    const std::string& dst = snapshot.facility_id(demand.dst);
    if (!SameForwarding(RouteTo(before, src, dst), RouteTo(after, src, dst))) moved.insert(id);
  }
  for (const std::string& id : cut) moved.erase(id);
  for (const std::string& id : moved) impact.add_moved_workload_ids(id);
  for (const std::string& id : cut) impact.add_cut_workload_ids(id);

  // Links.
  const std::map<std::string, double> was = Utilizations(before);
  for (const auto& [link, utilization] : Utilizations(after)) {
    auto previous = was.find(link);
    const double before_value = previous == was.end() ? 0 : previous->second;
    if (utilization > utilization_limit + 1e-9 && utilization > before_value + 1e-6) {
      auto* over = impact.add_links_over_limit();
      over->set_link_id(link);
      over->set_before(before_value);
      over->set_after(utilization);
    }
  }
  impact.set_mlu_before(before.elephants().max_utilization());
  impact.set_mlu_after(after.elephants().max_utilization());
  impact.set_demand_gbps(before.elephants().demand_gbps());
  impact.set_carried_before_gbps(before.elephants().carried_gbps());
  impact.set_carried_after_gbps(after.elephants().carried_gbps());

  // The audit and reachability.
  std::set<std::pair<std::string, std::string>> dependent;
  for (const auto& dependency : before.single_facility_dependencies()) {
    dependent.emplace(dependency.workload_id(), dependency.facility_id());
  }
  for (const auto& dependency : after.single_facility_dependencies()) {
    if (!dependent.count({dependency.workload_id(), dependency.facility_id()})) {
      *impact.add_new_dependencies() = dependency;
    }
  }
  const std::set<std::string> unreachable(before.unreachable().begin(), before.unreachable().end());
  for (const std::string& pair : after.unreachable()) {
    if (!unreachable.count(pair)) impact.add_unreachable_added(pair);
  }
  uint32_t routes_changed = 0;
  std::map<std::string, const v1::SitePlan*> sites_before;
  for (const auto& site : before.sites()) sites_before[site.facility_id()] = &site;
  for (const auto& site : after.sites()) {
    auto it = sites_before.find(site.facility_id());
    routes_changed += CountChangedRoutes(it == sites_before.end() ? v1::SitePlan() : *it->second, site);
  }
  impact.set_routes_changed(routes_changed);
  return impact;
}

std::vector<std::string> DrainRefusals(const v1::Impact& impact) {
  std::vector<std::string> refusals;
  for (const std::string& id : impact.cut_workload_ids()) {
    refusals.push_back(absl::StrCat("workload ", id, " would lose its last path"));
  }
  for (const auto& link : impact.links_over_limit()) {
    refusals.push_back(absl::StrFormat("link %s would run at %.0f%% (limit %.0f%%, now %.0f%%)", link.link_id(),
                                       link.after() * 100, impact.utilization_limit() * 100, link.before() * 100));
  }
  return refusals;
}

}  // namespace geodesic::pathcomp
