#pragma once
// Gray failures inside pathcomp (DESIGN §8): the judge of every link
// (pathcomp/health/link_judge.h) fed by the agents' reports, and the
// automatic drainer (pathcomp/health/auto_drain_policy.h) that acts on its
// confirmed verdicts once a second.
//
// Every replica judges (agents report to all of them, so a follower's
// verdicts are hot); only the one that may change the model acts (standalone,
// or the leader). Its actions go through the same path as an operator's
// (`Actions`, the Operator API's own code): pre-checked, stored as intents
// marked automatic with the evidence as their reason, replicated, audited
// as the replica's identity, re-planned. Each decision is an event on the
// bus (`tectl events watch`) and counted in the metrics.
//
// Baselines are stored once a minute closes and read back at start, so a
// restart judges against the last hour at once.
//
// Thread-safe.
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "geodesic/v1/health.pb.h"
#include "geodesic/v1/telemetry.pb.h"
#include "pathcomp/health/auto_drain_policy.h"
#include "pathcomp/health/link_judge.h"
#include "pathcomp/model/model.h"
#include "pathcomp/service/event_bus.h"
#include "pathcomp/service/pathcomp_metrics.h"

namespace geodesic::pathcomp {

class AutoDrainer {
 public:
  struct Actions {
    // Takes `order` (pre-check, store, replicate, audit, re-plan): the ids
    // of the intents stored, or FailedPrecondition with the pre-check's
    // refusals, or another error (nothing stored either way).
    std::function<absl::StatusOr<std::vector<std::string>>(const health::DrainOrder& order,
                                                           double utilization_limit)>
        drain;
    // Removes the order's intents (store, replicate, audit, re-plan).
    std::function<absl::Status(const health::UndrainOrder& order)> undrain;
    // OK when this replica may change the model now.
    std::function<absl::Status()> may_act;
  };

  AutoDrainer(Model& model, EventBus& events, health::VerdictThresholds thresholds,
              health::AutoDrainOptions options, Actions actions, AutoDrainMetrics& metrics);

  // The inventory's links and the stored baselines (at start).
  [[nodiscard]] absl::Status Load();
  // One agent message the model applied (not a duplicate), at `now_unix_ms`.
  void Observe(const v1::AgentMessage& message, int64_t now_unix_ms);
  // An end-to-end measurement of a path (a chain's call).
  void ObservePath(health::PathObservation path);

  // Judges, decides and acts; stores the baselines a closed minute changed.
  // Called once a second by the server.
  void Tick(int64_t now_unix_ms);

  // Assessments at `now_unix_ms`: of `link_id` only, or of every link ("").
  // NotFound for an unknown link.
  [[nodiscard]] absl::StatusOr<std::vector<v1::LinkAssessment>> Assess(const std::string& link_id,
                                                                       int64_t now_unix_ms) const;
  v1::AutoDrainStatus Status(int64_t now_unix_ms) const;

 private:
  // Brings the judge's links in line with the model's inventory. Caller holds mu_.
  void SyncLinksLocked();
  void Publish(v1::AutoDrainEvent event, int64_t now_unix_ms);
  void RecordEvent(const v1::AutoDrainEvent& event);

  Model& model_;
  EventBus& events_;
  const Actions actions_;
  AutoDrainMetrics& metrics_;
  mutable std::mutex mu_;  // guards the judge and the policy
  health::LinkJudge judge_;
  health::AutoDrainPolicy policy_;
  std::string links_signature_;  // of the inventory the judge knows
};

}  // namespace geodesic::pathcomp
