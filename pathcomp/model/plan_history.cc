#include "pathcomp/model/plan_history.h"

#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "pathcomp/model/entity_key.h"
#include "site_plan/site_plan_reader.h"
#include "state/change_set.h"
#include "state/typed_access.h"

namespace geodesic::pathcomp {
namespace {

using state::Kind;

// The current plan is its history entry: plan/current-generation names it
// (decimal). Stored whole beside it as well (plan/current, the form before),
// every commit wrote a large backbone's plan twice, and the journal with it.
constexpr char kCurrentGenerationId[] = "current-generation";
constexpr char kLegacyCurrentPlanId[] = "current";

// A plan stored before SitePlan's paths were a tree: its routes stand,
// without their paths (site_plan::DetachLegacyPaths), so that what reads it
// resolves it safely until the next plan.
void DetachLegacyPaths(v1::Plan& plan) {
  for (v1::SitePlan& site : *plan.mutable_sites()) site_plan::DetachLegacyPaths(site);
}

v1::PlanSummary SummaryOf(const v1::Plan& plan) {
  v1::PlanSummary summary;
  summary.set_generation(plan.generation());
  summary.set_epoch(plan.epoch());
  summary.set_replica_id(plan.replica_id());
  summary.set_computed_at_unix_ms(plan.computed_at_unix_ms());
  summary.set_reason(plan.reason());
  *summary.mutable_moved_workload_ids() = plan.moved_workload_ids();
  summary.set_max_utilization(plan.elephants().max_utilization());
  summary.set_carried_gbps(plan.elephants().carried_gbps());
  summary.set_demand_gbps(plan.elephants().demand_gbps());
  summary.set_mean_stretch(plan.elephants().mean_stretch());
  summary.set_p95_stretch(plan.elephants().p95_stretch());
  for (const v1::ElephantClass& cls : plan.elephants().classes()) {
    if (cls.protection().empty() || cls.protection() == "none") continue;
    summary.set_protected_classes(summary.protected_classes() + 1);
    if (cls.failure_safe()) summary.set_failure_safe_classes(summary.failure_safe_classes() + 1);
  }
  uint32_t routes = 0;
  for (const auto& site : plan.sites()) routes += static_cast<uint32_t>(site.routes_size());
  summary.set_routes(routes);
  uint32_t over_budget = 0;
  for (const auto& chain : plan.chains()) over_budget += chain.primary().within_budget() ? 0 : 1;
  summary.set_chains_over_budget(over_budget);
  summary.set_single_facility_dependencies(static_cast<uint32_t>(plan.single_facility_dependencies_size()));
  summary.set_unreachable_pairs(static_cast<uint32_t>(plan.unreachable_size()));
  return summary;
}

}  // namespace

absl::Status PlanHistory::Load() {
  std::lock_guard lock(mu_);
  absl::StatusOr<v1::Plan> plan = absl::NotFoundError("no current plan");
  auto current_generation = store_.GetRaw(Kind::kPlan, kCurrentGenerationId);
  if (current_generation.ok()) {
    uint64_t generation = 0;
    if (!absl::SimpleAtoi(*current_generation, &generation)) {
      return absl::DataLossError(absl::StrCat("plan/", kCurrentGenerationId, ": \"", *current_generation,
                                              "\" is not a generation"));
    }
    plan = state::Get<v1::Plan>(store_, Kind::kPlanHistory, PaddedId(generation));
    if (absl::IsNotFound(plan.status())) {
      return absl::DataLossError(absl::StrCat("plan/", kCurrentGenerationId, " names generation ", generation,
                                              ", which plan_history does not have"));
    }
  } else if (absl::IsNotFound(current_generation.status())) {
    plan = state::Get<v1::Plan>(store_, Kind::kPlan, kLegacyCurrentPlanId);
    legacy_current_ = plan.ok();
  } else {
    return current_generation.status();
  }
  if (plan.ok()) {
    DetachLegacyPaths(*plan);
    current_ = std::make_shared<const v1::Plan>(*std::move(plan));
  } else if (!absl::IsNotFound(plan.status())) {
    return plan.status();
  }
  auto history = store_.ListRaw(Kind::kPlanHistory);
  if (!history.ok()) return history.status();
  const std::string current_id = current_ ? PaddedId(current_->generation()) : "";
  for (auto& [id, bytes] : *history) {
    if (id == current_id) {  // parsed above
      kept_[current_->generation()] = {SummaryOf(*current_), bytes.size()};
      kept_bytes_ += bytes.size();
      std::string().swap(bytes);
      continue;
    }
    v1::Plan old;
    if (!old.ParseFromString(bytes)) return absl::DataLossError(absl::StrCat("plan_history/", id, ": not a plan"));
    kept_[old.generation()] = {SummaryOf(old), bytes.size()};
    kept_bytes_ += bytes.size();
    std::string().swap(bytes);  // one parsed plan at a time
  }
  return absl::OkStatus();
}

std::shared_ptr<const v1::Plan> PlanHistory::Current() const {
  std::lock_guard lock(mu_);
  return current_;
}

absl::Status PlanHistory::Commit(std::shared_ptr<const v1::Plan> committed_plan) {
  const v1::Plan& plan = *committed_plan;
  // Serialized once and before the lock: a large network's plan is megabytes.
  std::string bytes;
  if (!plan.SerializeToString(&bytes)) return absl::InternalError("cannot serialize the plan");
  const size_t size = bytes.size();
  v1::PlanSummary summary = SummaryOf(plan);
  std::lock_guard lock(mu_);
  state::ChangeSet changes(absl::StrCat("plan generation ", plan.generation(), ": ", plan.reason()));
  changes.PutRaw(Kind::kPlan, kCurrentGenerationId, absl::StrCat(plan.generation()));
  if (legacy_current_) changes.Delete(Kind::kPlan, kLegacyCurrentPlanId);
  changes.PutRaw(Kind::kPlanHistory, PaddedId(plan.generation()), std::move(bytes));
  // The oldest go while more than kDepth, or more than max_bytes_, would be kept.
  size_t count = kept_.size() + 1, total = kept_bytes_ + size;
  if (auto same = kept_.find(plan.generation()); same != kept_.end()) {
    --count;
    total -= same->second.bytes;
  }
  std::vector<uint64_t> dropped;
  for (auto it = kept_.begin(); (count > kDepth || total > max_bytes_) && it != kept_.end(); ++it) {
    if (it->first == plan.generation()) continue;
    changes.Delete(Kind::kPlanHistory, PaddedId(it->first));
    dropped.push_back(it->first);
    --count;
    total -= it->second.bytes;
  }
  if (auto committed = store_.Commit(changes); !committed.ok()) return committed.status();
  legacy_current_ = false;
  current_ = std::move(committed_plan);
  for (uint64_t generation : dropped) {
    kept_bytes_ -= kept_[generation].bytes;
    kept_.erase(generation);
  }
  if (auto same = kept_.find(plan.generation()); same != kept_.end()) kept_bytes_ -= same->second.bytes;
  kept_[plan.generation()] = {std::move(summary), size};
  kept_bytes_ += size;
  return absl::OkStatus();
}

std::vector<v1::PlanSummary> PlanHistory::Summaries(size_t limit) const {
  std::lock_guard lock(mu_);
  std::vector<v1::PlanSummary> plans;
  for (auto it = kept_.rbegin(); it != kept_.rend(); ++it) {
    if (limit != 0 && plans.size() >= limit) break;
    plans.push_back(it->second.summary);
  }
  return plans;
}

absl::StatusOr<v1::Plan> PlanHistory::At(uint64_t generation) const {
  {
    std::lock_guard lock(mu_);
    if (!kept_.count(generation)) {
      return absl::NotFoundError(absl::StrCat(
          "plan generation ", generation, " is not in the history (it keeps the newest ", kDepth, " within ",
          max_bytes_ >> 20, " MB",
          kept_.empty() ? ")" : absl::StrCat(": ", kept_.begin()->first, "..", kept_.rbegin()->first, ")")));
    }
  }
  auto plan = state::Get<v1::Plan>(store_, Kind::kPlanHistory, PaddedId(generation));
  if (plan.ok()) DetachLegacyPaths(*plan);
  return plan;
}

}  // namespace geodesic::pathcomp
