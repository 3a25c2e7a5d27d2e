#include "pathcomp/solver/elephant_allocator.h"

#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "pathcomp/solver/latency_stretch.h"

namespace geodesic::pathcomp {
namespace {

// A facility without a fabric in the model sends and receives without limit.
constexpr double kNoFabricLimitGbps = 1e12;

// The links of a commodity's paths with their shares, rounded so that
// re-solves that only move flow by a hair do not count as moves.
std::string PathSignature(McfPaths::Range paths, double demand_gbps) {
  std::vector<std::string> parts;
  for (const auto& path : paths) {
    const double share = demand_gbps > 0 ? path.gbps / demand_gbps : 0;
    if (share < 0.005) continue;
    std::string part = absl::StrCat(static_cast<int>(share * 100 + 0.5), "%:");
    for (int arc : path.arcs) absl::StrAppend(&part, arc, ",");
    parts.push_back(std::move(part));
  }
  std::sort(parts.begin(), parts.end());
  std::string signature;
  for (const auto& part : parts) absl::StrAppend(&signature, part, ";");
  return signature;
}

}  // namespace

absl::StatusOr<ElephantPlan> ElephantAllocator::Allocate(const Snapshot& snapshot,
                                                         std::span<const ChainPlacement> chain_primaries,
                                                         const McfProtection* protection, int threads) {
  ElephantPlan plan;
  plan.problem = McfProblemFromSnapshot(snapshot);
  plan.problem.policies = policies_;
  if (protection != nullptr) plan.problem.protection = *protection;
  std::set<int> chain_links;
  for (const ChainPlacement& placement : chain_primaries) {
    for (int link : placement.Links()) chain_links.insert(link);
  }
  for (int link : chain_links) plan.problem.arcs[link].capacity_gbps *= 1 - chain_headroom_;
  bool any_fabric = false;
  for (int f = 0; f < snapshot.facility_count(); ++f) any_fabric |= snapshot.facility_exchange_gbps(f) >= 0;
  if (any_fabric) {
    plan.problem.node_send_gbps.resize(snapshot.facility_count());
    for (int f = 0; f < snapshot.facility_count(); ++f) {
      const double limit = snapshot.facility_exchange_gbps(f);
      plan.problem.node_send_gbps[f] = limit >= 0 ? limit : kNoFabricLimitGbps;
    }
    plan.problem.node_receive_gbps = plan.problem.node_send_gbps;
  }

  solver_.set_threads(threads);
  auto allocation = solved_once_ ? solver_.Resolve(plan.problem) : solver_.Solve(plan.problem);
  if (!allocation.ok()) return allocation.status();
  solved_once_ = true;
  plan.allocation = *std::move(allocation);

  v1::ElephantAllocation& summary = plan.summary;
  summary.set_max_utilization(plan.allocation.max_utilization);
  double lower_bound = 0;
  for (const auto& result : plan.allocation.classes) {
    lower_bound = std::max(lower_bound, result.utilization_lower_bound);
  }
  summary.set_max_utilization_lower_bound(lower_bound);
  summary.set_warm(plan.allocation.stats.warm);
  double demand = 0, carried = 0;
  for (size_t c = 0; c < plan.problem.commodities.size(); ++c) {
    demand += plan.problem.commodities[c].demand_gbps;
    carried += plan.allocation.carried_gbps[c];
  }
  summary.set_demand_gbps(demand);
  summary.set_carried_gbps(carried);
  for (int link = 0; link < snapshot.link_count(); ++link) {
    if (plan.allocation.arc_load_gbps[link] <= 0) continue;
    v1::LinkLoad& load = *summary.add_links();
    load.set_link_id(snapshot.link_id(link));
    load.set_load_gbps(plan.allocation.arc_load_gbps[link]);
    load.set_capacity_gbps(plan.problem.arcs[link].capacity_gbps);
  }
  for (int c : plan.allocation.unroutable) {
    summary.add_unroutable_workload_ids(snapshot.workload_id(snapshot.demands()[c].workload));
  }
  const StretchReport stretch = MeasureLatencyStretch(plan.problem, plan.allocation);
  summary.set_mean_stretch(stretch.all.mean);
  summary.set_p95_stretch(stretch.all.p95);
  summary.set_mean_latency_ms(stretch.all.mean_latency_us / 1000);
  for (const McfClassResult& result : plan.allocation.classes) {
    v1::ElephantClass& out = *summary.add_classes();
    out.set_priority(result.priority);
    out.set_objective(ObjectiveName(result.objective));
    out.set_demand_gbps(result.demand_gbps);
    out.set_carried_gbps(result.carried_gbps);
    out.set_max_utilization(result.max_utilization);
    out.set_max_utilization_lower_bound(result.utilization_lower_bound);
    out.set_utilization_cap(result.utilization_cap);
    out.set_fair_fraction(result.fair_fraction);
    const auto it = stretch.by_class.find(result.priority);
    const LatencyStretch of_class = it == stretch.by_class.end() ? LatencyStretch{} : it->second;
    out.set_mean_stretch(of_class.mean);
    out.set_p95_stretch(of_class.p95);
    const McfClassPolicy& policy = policies_.Of(result.priority);
    out.set_protection(ProtectionKindName(policy.protection));
    if (policy.protection != ProtectionKind::kNone) out.set_protection_limit(policy.protection_limit);
    out.set_failure_limits(static_cast<uint32_t>(result.failure_limits));
  }

  std::map<std::string, std::string> paths_of;
  for (size_t c = 0; c < snapshot.demands().size(); ++c) {
    const std::string& id = snapshot.workload_id(snapshot.demands()[c].workload);
    paths_of[id] = PathSignature(plan.allocation.paths[c], plan.problem.commodities[c].demand_gbps);
  }
  if (protection == nullptr) paths_before_ = std::move(paths_of_);
  for (const auto& [id, signature] : paths_of) {
    auto it = paths_before_.find(id);
    if (it == paths_before_.end() || it->second != signature) plan.moved_workload_ids.push_back(id);
  }
  for (const auto& [id, signature] : paths_before_) {
    if (!paths_of.count(id)) plan.moved_workload_ids.push_back(id);
  }
  std::sort(plan.moved_workload_ids.begin(), plan.moved_workload_ids.end());
  paths_of_ = std::move(paths_of);
  return plan;
}

}  // namespace geodesic::pathcomp
