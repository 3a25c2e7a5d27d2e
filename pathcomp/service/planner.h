#pragma once
// Keeps the published plan in step with the model: re-solves (debounced) when
// health or intents change, publishes a new generation only when routes
// actually changed (same_routing.h), and hands each site's part to its watchers.
// Every solve is recorded in `metrics` (SolveMetrics) with the causes it served.
// Thread-safe. Owns one solver thread between Start() and Stop().
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "geodesic/v1/operator.pb.h"
#include "geodesic/v1/plan.pb.h"
#include "pathcomp/model/model.h"
#include "pathcomp/service/event_bus.h"
#include "pathcomp/service/pathcomp_metrics.h"
#include "pathcomp/service/solve_cause.h"
#include "pathcomp/service/solve_debounce.h"
#include "pathcomp/solver/elephant_allocator.h"
#include "pathcomp/solver/plan_builder.h"

namespace geodesic::pathcomp {

struct PlannerConfig {
  std::string replica_id;
  uint64_t epoch = 1;  // standalone: this start's epoch
  // Replicated: the epoch while this replica leads, else nullopt. Plans are
  // computed either way (a new leader publishes at once) but handed to
  // routerd only while leading, stamped with the leading epoch; a follower's
  // plans carry epoch 0. Must not call back into the planner.
  std::function<std::optional<uint64_t>()> leading_epoch;
  std::chrono::milliseconds debounce{50};
  // Share of the capacity of links on agent chains' paths kept free of elephant flows.
  double chain_headroom = 0.1;
  McfClassPolicies elephant_policies;  // what each priority class optimizes
  // How long one plan's protection rounds may take (BuildPlan's ProtectionStop).
  std::chrono::milliseconds protection_budget = kDefaultProtectionBudget;
  int threads = 1;  // BuildPlan's: the plan is the same whatever the number
};

class Planner {
 public:
  // `metrics` must outlive the planner.
  Planner(Model& model, EventBus& events, PlannerConfig config, SolveMetrics& metrics);
  ~Planner();

  void Start();
  void Stop();

  // Asks for a re-solve; requests within the debounce window are coalesced,
  // their reasons joined (solve_debounce.h) and their causes counted once each.
  void RequestSolve(SolveCause cause, std::string reason);
  // Solves at once; returns the generation current afterwards.
  [[nodiscard]] absl::StatusOr<uint64_t> SolveNow(SolveCause cause, std::string reason);

  // Waits until the current plan for `facility_id` has a generation other than
  // `known_generation` (or the deadline, or Stop()); returns that site's plan.
  std::optional<v1::SitePlan> WaitForSitePlan(const std::string& facility_id,
                                              uint64_t known_generation,
                                              std::chrono::steady_clock::time_point deadline);
  // Shared and never changed: the next solve replaces it (a plan of a large
  // network is megabytes; nothing copies it to read it).
  std::shared_ptr<const v1::Plan> CurrentPlan() const;
  bool stopping() const;

  // The plan `view` would get, solved cold apart from the published one:
  // nothing is stored, published or remembered (what-if, pre-checks).
  // Thread-safe; runs beside the planner's own solves.
  v1::Plan Hypothetical(const ModelView& view) const;

  void RecordAck(const v1::PlanAck& ack, int64_t now_unix_ms);
  // Each site's last acknowledgement, installed or not.
  std::vector<v1::SiteInstallStatus> InstallStatus() const;
  // By facility: the last generation its routerd acknowledged as installed
  // (an ack that could not install leaves it). Sites that never installed one
  // are missing.
  std::map<std::string, uint64_t> InstalledGenerations() const;
  // When the oldest plan newer than `generation` was computed, among the
  // newest kPlansTimed this planner published (or found at start); nullopt
  // when none of them is newer. How long a site at `generation` has been behind.
  std::optional<int64_t> FirstComputedAfter(uint64_t generation) const;
  static constexpr size_t kPlansTimed = 100;

  // Whether the published plan is what the model gives now (GetPlanResponse).
  // `plan` and `plan_model_revision` are read together: the revision is the
  // one that plan reflects, never one of a plan published after it (a caller
  // that read the plan apart would see an older plan claim a newer revision).
  struct Convergence {
    std::shared_ptr<const v1::Plan> plan;  // the published plan (CurrentPlan()); may be null
    // A re-plan is queued (debounce), running, or owed: the model changed
    // since the last solve saw it.
    bool replan_pending = false;
    uint64_t model_revision = 0;       // Model::Revision() now
    uint64_t plan_model_revision = 0;  // the revision the last finished solve saw
  };
  Convergence ConvergenceState() const;

 private:
  void Run();
  // Both require solve_mu_. SolveRecorded times SolveLocked and records it.
  absl::StatusOr<uint64_t> SolveRecorded(const SolveCauses& causes, const std::string& reason);
  absl::StatusOr<uint64_t> SolveLocked(const std::string& reason);
  uint64_t CurrentEpoch() const;
  // Whether `plan` may go to routerd now (standalone: always).
  bool Deliverable(const v1::Plan& plan) const;

  Model& model_;
  EventBus& events_;
  const PlannerConfig config_;
  SolveMetrics& metrics_;

  std::mutex solve_mu_;  // one solve at a time
  ElephantAllocator elephants_;  // guarded by solve_mu_; warm between solves
  ChainPlanCache chains_;        // guarded by solve_mu_; the last solve's chain plan

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::shared_ptr<const v1::Plan> plan_;
  SolveDebounce debounce_;  // the requests not yet taken by a solve
  SolveCauses pending_causes_;  // of the requests in debounce_
  int solves_running_ = 0;         // taken from debounce_ (or SolveNow), not finished
  uint64_t solved_revision_ = 0;   // the model revision the last finished solve saw
  bool stopping_ = false;
  std::map<std::string, v1::SiteInstallStatus> installed_;  // the last ack, by facility
  std::map<std::string, uint64_t> installed_generations_;   // by facility
  std::map<uint64_t, int64_t> computed_at_ms_;  // by generation: the newest kPlansTimed plans
  std::thread thread_;
};

}  // namespace geodesic::pathcomp
