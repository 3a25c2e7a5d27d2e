#include "pathcomp/service/planner.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "daemon/clock.h"
#include "daemon/log.h"
#include "pathcomp/service/same_routing.h"
#include "pathcomp/solver/plan_builder.h"

namespace geodesic::pathcomp {
namespace {

// BuildPlan on the configured threads, its protection rounds held to the
// configured budget (from the first round on), its problems logged.
v1::Plan ComputePlan(const Snapshot& snapshot, const PlanStamp& stamp, ElephantAllocator& allocator,
                     const PlannerConfig& config, const v1::Plan* previous, ChainPlanCache* chain_cache = nullptr) {
  BuiltPlan built = BuildPlan(snapshot, stamp, allocator, previous, chain_cache, {}, config.threads,
                              daemon::StopAfter(config.protection_budget));
  for (const std::string& problem : built.problems) daemon::LogError("plan degraded", {{"problem", problem}});
  return std::move(built.plan);
}

}  // namespace

Planner::Planner(Model& model, EventBus& events, PlannerConfig config, SolveMetrics& metrics)
    : model_(model),
      events_(events),
      config_(std::move(config)),
      metrics_(metrics),
      elephants_(config_.chain_headroom, config_.elephant_policies),
      plan_(model.CurrentPlan()),
      debounce_(config_.debounce) {
  if (plan_) computed_at_ms_[plan_->generation()] = plan_->computed_at_unix_ms();
}

Planner::~Planner() { Stop(); }

void Planner::Start() { thread_ = std::thread([this] { Run(); }); }

void Planner::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Planner::RequestSolve(SolveCause cause, std::string reason) {
  {
    std::lock_guard lock(mu_);
    debounce_.Request(std::move(reason), SolveDebounce::Clock::now());
    pending_causes_.Add(cause);
  }
  cv_.notify_all();
}

void Planner::Run() {
  std::unique_lock lock(mu_);
  while (true) {
    cv_.wait(lock, [this] { return stopping_ || debounce_.pending(); });
    if (stopping_) return;
    // Let the burst settle so one failure seen by several agents is one plan.
    cv_.wait_until(lock, *debounce_.due(), [this] { return stopping_; });
    if (stopping_) return;
    std::optional<std::vector<std::string>> reasons = debounce_.TakeDue(SolveDebounce::Clock::now());
    if (!reasons) continue;  // woken before the window passed
    const SolveCauses causes = std::exchange(pending_causes_, {});
    ++solves_running_;
    lock.unlock();
    {
      std::lock_guard solve_lock(solve_mu_);
      if (auto solved = SolveRecorded(causes, absl::StrJoin(*reasons, "; ")); !solved.ok()) {
        daemon::LogError("solve failed", {{"error", std::string(solved.status().message())}});
      }
    }
    lock.lock();
    --solves_running_;
    debounce_.SolveFinished(SolveDebounce::Clock::now());
  }
}

uint64_t Planner::CurrentEpoch() const {
  if (!config_.leading_epoch) return config_.epoch;
  return config_.leading_epoch().value_or(0);
}

bool Planner::Deliverable(const v1::Plan& plan) const {
  if (!config_.leading_epoch) return true;
  const std::optional<uint64_t> leading = config_.leading_epoch();
  return leading && *leading == plan.epoch();
}

v1::Plan Planner::Hypothetical(const ModelView& view) const {
  const Snapshot snapshot = Snapshot::Build(view);
  ElephantAllocator cold(config_.chain_headroom, config_.elephant_policies);
  PlanStamp stamp;
  stamp.replica_id = config_.replica_id;
  stamp.reason = "what-if";
  return ComputePlan(snapshot, stamp, cold, config_, nullptr);
}

absl::StatusOr<uint64_t> Planner::SolveNow(SolveCause cause, std::string reason) {
  {
    std::lock_guard lock(mu_);
    ++solves_running_;
  }
  absl::StatusOr<uint64_t> solved;
  {
    std::lock_guard solve_lock(solve_mu_);
    solved = SolveRecorded(SolveCauses(cause), reason);
  }
  std::lock_guard lock(mu_);
  --solves_running_;
  return solved;
}

Planner::Convergence Planner::ConvergenceState() const {
  // The model's revision first: a change made after it was read is owed by
  // a later call, never hidden by this one.
  Convergence state;
  state.model_revision = model_.Revision();
  std::lock_guard lock(mu_);
  state.plan = plan_;  // published together with solved_revision_ (SolveLocked)
  state.plan_model_revision = solved_revision_;
  state.replan_pending = debounce_.pending() || solves_running_ > 0 ||
                         solved_revision_ < state.model_revision;
  return state;
}

absl::StatusOr<uint64_t> Planner::SolveRecorded(const SolveCauses& causes, const std::string& reason) {
  const auto started = std::chrono::steady_clock::now();
  absl::StatusOr<uint64_t> solved = SolveLocked(reason);
  metrics_.RecordSolve(causes, std::chrono::steady_clock::now() - started, solved.ok());
  return solved;
}

absl::StatusOr<uint64_t> Planner::SolveLocked(const std::string& reason) {
  uint64_t revision = 0;
  const std::shared_ptr<const Snapshot> current = model_.CurrentSnapshot(&revision);
  const Snapshot& snapshot = *current;
  const auto solved = [&] {
    std::lock_guard lock(mu_);
    solved_revision_ = std::max(solved_revision_, revision);
  };
  const std::shared_ptr<const v1::Plan> previous = CurrentPlan();
  PlanStamp stamp;
  stamp.generation = previous ? previous->generation() + 1 : 1;
  stamp.epoch = CurrentEpoch();
  stamp.replica_id = config_.replica_id;
  stamp.computed_at_unix_ms = daemon::UnixNowMs();
  stamp.reason = reason;
  auto built = std::make_shared<v1::Plan>(
      ComputePlan(snapshot, stamp, elephants_, config_, previous.get(), &chains_));
  built->set_model_revision(revision);
  std::shared_ptr<const v1::Plan> computed = std::move(built);
  const v1::Plan& plan = *computed;
  if (previous && previous->epoch() == stamp.epoch && SameRouting(*previous, plan)) {
    solved();  // the published plan is what this revision gives
    return previous->generation();  // nothing moved: no new generation
  }
  if (auto status = model_.CommitPlan(computed); !status.ok()) return status;

  uint32_t routes_changed = 0;
  for (int i = 0; i < plan.sites_size(); ++i) {
    v1::SitePlan empty;
    const v1::SitePlan* before = &empty;
    if (previous) {
      for (const auto& site : previous->sites()) {
        if (site.facility_id() == plan.sites(i).facility_id()) before = &site;
      }
    }
    routes_changed += CountChangedRoutes(*before, plan.sites(i));
  }
  daemon::LogInfo(config_.leading_epoch && stamp.epoch == 0 ? "plan computed (follower: kept for when it leads)"
                                                            : "plan published",
                  {{"generation", std::to_string(plan.generation())},
                   {"epoch", std::to_string(plan.epoch())},
                   {"routes_changed", std::to_string(routes_changed)},
                   {"unreachable_pairs", std::to_string(plan.unreachable_size())},
                   {"usable_links", std::to_string(snapshot.usable_link_count())},
                   {"chains", std::to_string(plan.chains_size())},
                   {"elephant_mlu", std::to_string(plan.elephants().max_utilization())},
                   {"moved_workloads", std::to_string(plan.moved_workload_ids_size())},
                   {"single_facility_dependencies",
                    std::to_string(plan.single_facility_dependencies_size())},
                   {"reason", reason}});
  {
    std::lock_guard lock(mu_);
    plan_ = computed;
    solved_revision_ = std::max(solved_revision_, revision);
    computed_at_ms_[plan.generation()] = plan.computed_at_unix_ms();
    if (computed_at_ms_.size() > kPlansTimed) computed_at_ms_.erase(computed_at_ms_.begin());
  }
  cv_.notify_all();
  v1::Event event;
  event.set_at_unix_ms(stamp.computed_at_unix_ms);
  event.mutable_plan()->set_generation(plan.generation());
  event.mutable_plan()->set_reason(reason);
  event.mutable_plan()->set_routes_changed(routes_changed);
  events_.Publish(event);
  return plan.generation();
}

std::optional<v1::SitePlan> Planner::WaitForSitePlan(
    const std::string& facility_id, uint64_t known_generation,
    std::chrono::steady_clock::time_point deadline) {
  std::unique_lock lock(mu_);
  const auto ready = [&] {
    return plan_ && plan_->generation() != known_generation && Deliverable(*plan_);
  };
  cv_.wait_until(lock, deadline, [&] { return stopping_ || ready(); });
  if (stopping_ || !ready()) return std::nullopt;
  for (const auto& site : plan_->sites()) {
    if (site.facility_id() == facility_id) return site;
  }
  // The facility has no part in the plan (e.g. it was removed): an empty site plan.
  v1::SitePlan site;
  site.set_facility_id(facility_id);
  site.set_generation(plan_->generation());
  site.set_epoch(plan_->epoch());
  site.set_replica_id(plan_->replica_id());
  site.set_computed_at_unix_ms(plan_->computed_at_unix_ms());
  site.set_reason(plan_->reason());
  return site;
}

std::shared_ptr<const v1::Plan> Planner::CurrentPlan() const {
  std::lock_guard lock(mu_);
  return plan_;
}

bool Planner::stopping() const {
  std::lock_guard lock(mu_);
  return stopping_;
}

void Planner::RecordAck(const v1::PlanAck& ack, int64_t now_unix_ms) {
  v1::SiteInstallStatus status;
  status.set_facility_id(ack.facility_id());
  status.set_generation(ack.generation());
  status.set_epoch(ack.epoch());
  status.set_installed(ack.installed());
  status.set_error(ack.error());
  status.set_at_unix_ms(now_unix_ms);
  status.set_sent_to_routers(ack.sent_to_routers());
  std::lock_guard lock(mu_);
  installed_[ack.facility_id()] = status;
  if (ack.installed()) installed_generations_[ack.facility_id()] = ack.generation();
}

std::map<std::string, uint64_t> Planner::InstalledGenerations() const {
  std::lock_guard lock(mu_);
  return installed_generations_;
}

std::optional<int64_t> Planner::FirstComputedAfter(uint64_t generation) const {
  std::lock_guard lock(mu_);
  auto newer = computed_at_ms_.upper_bound(generation);
  if (newer == computed_at_ms_.end()) return std::nullopt;
  return newer->second;
}

std::vector<v1::SiteInstallStatus> Planner::InstallStatus() const {
  std::lock_guard lock(mu_);
  std::vector<v1::SiteInstallStatus> statuses;
  for (const auto& [id, status] : installed_) statuses.push_back(status);
  return statuses;
}

}  // namespace geodesic::pathcomp
