#include "pathcomp/service/relay_diff.h"

#include <cmath>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "entity/oper_state_name.h"
#include "pathcomp/service/tenant_view.h"

namespace geodesic::pathcomp {
namespace {

v1::RelayEvent Stamped(int64_t at_unix_ms) {
  v1::RelayEvent event;
  event.set_at_unix_ms(at_unix_ms);
  return event;
}

// Every hop of a workload's paths, in a fixed order (same route: same order).
std::vector<const v1::RelayHop*> Hops(const v1::RelayWorkload& workload) {
  std::vector<const v1::RelayHop*> hops;
  auto add = [&](const v1::RelayPath& path) {
    for (const v1::RelayHop& hop : path.hops()) hops.push_back(&hop);
  };
  for (const v1::RelayPath& path : workload.paths()) add(path);
  for (const v1::RelayCall& call : workload.calls()) {
    add(call.there());
    add(call.back());
  }
  return hops;
}

std::map<std::string, const v1::FacilityDependency*> Dependencies(const v1::RelayWorkload& workload) {
  std::map<std::string, const v1::FacilityDependency*> by_facility;
  for (const v1::FacilityDependency& dependency : workload.single_facility_dependencies()) {
    by_facility[dependency.facility_id()] = &dependency;
  }
  return by_facility;
}

}  // namespace

RelayDiff::RelayDiff(bool operator_view, RelayDiffOptions options)
    : operator_view_(operator_view), options_(options) {}

std::vector<v1::RelayEvent> RelayDiff::Snapshot(const View& view, uint64_t plan_generation, bool resync,
                                                int64_t at_unix_ms, Clock::time_point now) {
  std::vector<v1::RelayEvent> events;
  last_measurement_.clear();
  for (const auto& [id, workload] : view) {
    v1::RelayEvent& event = events.emplace_back(Stamped(at_unix_ms));
    *event.mutable_workload() = workload;
    last_measurement_[id] = now;
  }
  v1::RelayEvent& done = events.emplace_back(Stamped(at_unix_ms));
  done.mutable_snapshot_done()->set_plan_generation(plan_generation);
  done.mutable_snapshot_done()->set_workloads(static_cast<uint32_t>(view.size()));
  done.mutable_snapshot_done()->set_resync(resync);
  told_ = view;
  return events;
}

std::string RelayDiff::TenantCause(const v1::RelayWorkload& previous, const std::vector<v1::Link>& links) {
  std::map<std::string, const v1::Link*> by_id;
  for (const v1::Link& link : links) by_id[link.id()] = &link;
  std::vector<std::string> parts;
  for (const std::string& id : LinksOf(previous)) {
    auto it = by_id.find(id);
    if (it == by_id.end()) {
      parts.push_back(absl::StrCat("link ", id, " removed"));
    } else if (it->second->admin_state() == v1::ADMIN_STATE_DRAINED) {
      parts.push_back(absl::StrCat("link ", id, " drained"));
    } else if (it->second->health().state() != v1::OPER_STATE_UP) {
      parts.push_back(absl::StrCat("link ", id, " ", entity::OperStateName(it->second->health().state())));
    }
  }
  return parts.empty() ? "replanned" : absl::StrJoin(parts, ", ");
}

std::vector<v1::RelayHop> RelayDiff::ChangedHops(const v1::RelayWorkload& told, const v1::RelayWorkload& current,
                                                 bool* state_changed) const {
  *state_changed = false;
  const std::vector<const v1::RelayHop*> before = Hops(told);
  const std::vector<const v1::RelayHop*> after = Hops(current);
  std::vector<v1::RelayHop> changed;
  std::set<std::string> seen;
  for (size_t i = 0; i < before.size() && i < after.size(); ++i) {
    const v1::RelayHop& a = *before[i];
    const v1::RelayHop& b = *after[i];
    const bool state = a.state() != b.state() || a.admin_state() != b.admin_state();
    const uint64_t delta_us = a.latency_us() > b.latency_us() ? a.latency_us() - b.latency_us()
                                                              : b.latency_us() - a.latency_us();
    const bool latency = delta_us >= options_.min_latency_change_us &&
                         static_cast<double>(delta_us) >=
                             options_.min_latency_change_ratio * static_cast<double>(a.latency_us());
    const bool loss = std::fabs(a.loss_ratio() - b.loss_ratio()) >= options_.min_loss_change;
    if (!state && !latency && !loss) continue;
    *state_changed = *state_changed || state;
    if (seen.insert(b.link_id()).second) changed.push_back(b);
  }
  return changed;
}

std::vector<v1::RelayEvent> RelayDiff::Update(const View& view, const RelayPlanInfo& plan,
                                              const std::vector<v1::Link>& links, int64_t at_unix_ms,
                                              Clock::time_point now) {
  std::vector<v1::RelayEvent> events;
  for (auto it = told_.begin(); it != told_.end();) {
    if (view.count(it->first)) {
      ++it;
      continue;
    }
    events.emplace_back(Stamped(at_unix_ms)).mutable_removed()->set_workload_id(it->first);
    last_measurement_.erase(it->first);
    it = told_.erase(it);
  }
  for (const auto& [id, current] : view) {
    auto told = told_.find(id);
    if (told == told_.end()) {
      *events.emplace_back(Stamped(at_unix_ms)).mutable_workload() = current;
      told_[id] = current;
      last_measurement_[id] = now;
      continue;
    }
    v1::RelayWorkload& before = told->second;
    // Dependencies that appeared or went away.
    const auto old_dependencies = Dependencies(before);
    const auto new_dependencies = Dependencies(current);
    for (const auto& [facility, dependency] : old_dependencies) {
      if (new_dependencies.count(facility)) continue;
      v1::RelayDependency& out = *events.emplace_back(Stamped(at_unix_ms)).mutable_dependency();
      *out.mutable_dependency() = *dependency;
      out.set_appeared(false);
    }
    for (const auto& [facility, dependency] : new_dependencies) {
      if (old_dependencies.count(facility)) continue;
      v1::RelayDependency& out = *events.emplace_back(Stamped(at_unix_ms)).mutable_dependency();
      *out.mutable_dependency() = *dependency;
      out.set_appeared(true);
    }
    *before.mutable_single_facility_dependencies() = current.single_facility_dependencies();
    // Over the budget, or back within.
    if (before.over_budget() != current.over_budget()) {
      v1::RelayBudget& budget = *events.emplace_back(Stamped(at_unix_ms)).mutable_budget();
      budget.set_workload_id(id);
      budget.set_over_budget(current.over_budget());
      budget.set_planned_latency_us(current.planned_latency_us());
      budget.set_measured_latency_us(current.measured_latency_us());
      budget.set_latency_budget_us(current.latency_budget_us());
      before.set_over_budget(current.over_budget());
    }
    if (!SameRoute(before, current)) {
      v1::RelayReroute& reroute = *events.emplace_back(Stamped(at_unix_ms)).mutable_reroute();
      reroute.set_workload_id(id);
      *reroute.mutable_previous() = before;
      *reroute.mutable_current() = current;
      reroute.set_cause(operator_view_ ? plan.reason : TenantCause(before, links));
      reroute.set_generation(plan.generation);
      before = current;
      last_measurement_[id] = now;
      continue;
    }
    before.set_plan_generation(current.plan_generation());
    bool state_changed = false;
    std::vector<v1::RelayHop> changed = ChangedHops(before, current, &state_changed);
    if (changed.empty()) continue;
    if (!state_changed && now - last_measurement_[id] < options_.measurement_interval) continue;
    v1::RelayMeasurement& measurement = *events.emplace_back(Stamped(at_unix_ms)).mutable_measurement();
    measurement.set_workload_id(id);
    for (v1::RelayHop& hop : changed) *measurement.add_changed_hops() = std::move(hop);
    *measurement.mutable_current() = current;
    before = current;
    last_measurement_[id] = now;
  }
  return events;
}

}  // namespace geodesic::pathcomp
