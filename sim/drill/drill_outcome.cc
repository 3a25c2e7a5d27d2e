#include "sim/drill/drill_outcome.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include "pathcomp/solver/path_solver.h"
#include "site_plan/site_plan_reader.h"

namespace geodesic::sim {

uint64_t Percentile(std::vector<uint64_t> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t rank = static_cast<size_t>(std::ceil(p * static_cast<double>(values.size())));
  return values[std::min(values.size() - 1, rank == 0 ? 0 : rank - 1)];
}

std::set<std::string> DependencyKeys(const v1::Plan& plan) {
  std::set<std::string> keys;
  for (const auto& d : plan.single_facility_dependencies()) keys.insert(d.workload_id() + "@" + d.facility_id());
  return keys;
}

uint32_t RoutesChanged(const v1::Plan& before, const v1::Plan& after) {
  std::map<std::string, const v1::SitePlan*> sites;
  for (const auto& site : before.sites()) sites[site.facility_id()] = &site;
  uint32_t changed = 0;
  for (const auto& site : after.sites()) {
    auto it = sites.find(site.facility_id());
    changed += pathcomp::CountChangedRoutes(it == sites.end() ? v1::SitePlan() : *it->second, site);
  }
  return changed;
}

RouteSignatures SignaturesOf(const v1::Plan& plan) {
  RouteSignatures signatures;
  for (const auto& site : plan.sites()) {
    auto& routes = signatures[site.facility_id()];
    for (const auto& route : site.routes()) {
      uint64_t hash = 1469598103934665603ULL;  // FNV-1a over (link id, weight) in order
      const auto mix = [&hash](const std::string& bytes) {
        for (const unsigned char c : bytes) hash = (hash ^ c) * 1099511628211ULL;
        hash = (hash ^ 0xff) * 1099511628211ULL;  // ends the field
      };
      const v1::NextHopGroup& group = site_plan::PrimaryGroup(site, route);
      for (int i = 0; i < group.ports_size(); ++i) {
        mix(site_plan::LinkId(site, group, i));
        mix(std::to_string(group.weights(i)));
      }
      routes[route.prefix()] = hash;
    }
  }
  return signatures;
}

uint32_t RoutesChanged(const RouteSignatures& before, const RouteSignatures& after) {
  static const std::map<std::string, uint64_t> kNone;
  uint32_t changed = 0;
  for (const auto& [facility, routes] : after) {
    auto site = before.find(facility);
    const auto& old_routes = site == before.end() ? kNone : site->second;
    for (const auto& [prefix, hash] : routes) {
      auto old = old_routes.find(prefix);
      if (old == old_routes.end() || old->second != hash) ++changed;
    }
    for (const auto& [prefix, hash] : old_routes) changed += routes.count(prefix) == 0 ? 1 : 0;
  }
  return changed;
}

double PlanCarriedRatio(const v1::Plan& plan) {
  const auto& elephants = plan.elephants();
  if (elephants.demand_gbps() <= 0) return 1.0;
  return std::min(1.0, elephants.carried_gbps() / elephants.demand_gbps() / std::max(1.0, elephants.max_utilization()));
}

std::vector<std::string> CutWorkloads(const v1::Plan& plan) {
  std::vector<std::string> cut(plan.elephants().unroutable_workload_ids().begin(),
                               plan.elephants().unroutable_workload_ids().end());
  for (const auto& chain : plan.chains()) {
    if (!chain.primary().placed()) cut.push_back(chain.workload_id());
  }
  return cut;
}

SettledPlan SettledFromPlans(const v1::Plan* before, const v1::Plan& after) {
  SettledPlan settled{.before = before, .after = &after};
  for (const auto& chain : after.chains()) {
    if (!chain.primary().placed()) continue;
    settled.chain_latency_us.push_back(chain.primary().total_latency_us());
    settled.budget_violations += chain.primary().within_budget() ? 0 : 1;
  }
  settled.cut_workload_ids = CutWorkloads(after);
  settled.carried_ratio = PlanCarriedRatio(after);
  return settled;
}

DrillOutcomes::Measures DrillOutcomes::Settle(const SettledPlan& settled) {
  const v1::Plan& after = *settled.after;
  Measures measures;
  measures.routes_changed = settled.routes_changed ? *settled.routes_changed
                            : settled.before != nullptr ? RoutesChanged(*settled.before, after)
                                                        : 0;
  measures.carried_ratio = settled.carried_ratio;
  measures.mlu = after.elephants().max_utilization();
  measures.chain_latency_p50_us = Percentile(settled.chain_latency_us, 0.5);
  measures.chain_latency_p99_us = Percentile(settled.chain_latency_us, 0.99);
  measures.budget_violations = settled.budget_violations;
  measures.cut_workload_ids = settled.cut_workload_ids;
  if (!baseline_seen_) {
    baseline_seen_ = true;
    baseline_dependencies_ = DependencyKeys(after);
  }
  for (const std::string& dependency : DependencyKeys(after)) {
    if (baseline_dependencies_.count(dependency)) continue;
    measures.new_dependencies.push_back(dependency);
    all_new_dependencies_.insert(dependency);
  }
  const bool new_generation = settled.before == nullptr || settled.before->generation() != after.generation();
  if (new_generation) report_.set_plans(report_.plans() + 1);
  report_.set_routes_changed(report_.routes_changed() + measures.routes_changed);
  report_.set_max_mlu(std::max(report_.max_mlu(), measures.mlu));
  report_.set_max_budget_violations(std::max(report_.max_budget_violations(), measures.budget_violations));
  report_.set_min_settled_carried_ratio(settled.before == nullptr
                                            ? measures.carried_ratio
                                            : std::min(report_.min_settled_carried_ratio(), measures.carried_ratio));
  return measures;
}

void DrillOutcomes::FillOutcome(const Measures& measures, v1::DrillEventOutcome& outcome) {
  for (const auto& id : measures.cut_workload_ids) outcome.add_cut_workload_ids(id);
  outcome.set_carried_ratio_after(measures.carried_ratio);
  outcome.set_mlu_after(measures.mlu);
  outcome.set_chain_latency_p50_us(measures.chain_latency_p50_us);
  outcome.set_chain_latency_p99_us(measures.chain_latency_p99_us);
  outcome.set_budget_violations_after(measures.budget_violations);
  outcome.set_routes_changed(measures.routes_changed);
  for (const auto& dependency : measures.new_dependencies) outcome.add_new_dependencies(dependency);
}

void RecordRepairLoads(const pathcomp::ForwardedLoads& loads, const std::map<std::string, double>& capacity_gbps,
                       const std::string& event, v1::DrillEventOutcome& outcome, v1::DrillReport& report) {
  const pathcomp::HottestLink hottest = pathcomp::Hottest(loads, capacity_gbps);
  outcome.set_max_utilization_after_repair(hottest.utilization);
  outcome.set_max_utilization_after_repair_link(hottest.link_id);
  outcome.set_dropped_after_repair_gbps(loads.dropped_gbps);
  outcome.set_looped_after_repair_gbps(loads.looped_gbps);
  v1::DrillForwarding& forwarding = *report.mutable_forwarding();
  forwarding.set_repairs(forwarding.repairs() + 1);
  if (forwarding.repairs() == 1 || hottest.utilization > forwarding.max_utilization_after_repair()) {
    forwarding.set_max_utilization_after_repair(hottest.utilization);
    forwarding.set_max_utilization_after_repair_link(hottest.link_id);
    forwarding.set_max_utilization_after_repair_event(event);
  }
  forwarding.set_max_dropped_gbps(std::max(forwarding.max_dropped_gbps(), loads.dropped_gbps));
  forwarding.set_max_looped_gbps(std::max(forwarding.max_looped_gbps(), loads.looped_gbps));
}

}  // namespace geodesic::sim
