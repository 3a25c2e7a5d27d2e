#pragma once
// The controller's automatic drainer on a drill's simulated clock (DESIGN §8,
// issue 22): pathcomp's own judge (pathcomp/health/link_judge.h) and policy
// (pathcomp/health/auto_drain_policy.h), fed with what the agents would
// report and asked when pathcomp's AutoDrainer would ask them (once a
// second). The simulator carries the orders out as pathcomp does
// (pathcomp/service/operator_auto_drain.cc): the drain pre-check
// (DrainPrecheck below), automatic drain intents, a re-plan.
//
// What the agents report: every link's health in the controller's view of
// the drill (state, RTT, loss); a degrade takes a link and its reverse, so
// both ends see it and the judge can confirm it. The judge's thresholds are
// pathcomp's defaults. Baselines are pre-warmed with the hour before the
// drill at the inventory's RTT (2 x latency_us), so added latency is judged
// slow from the start, as a controller that ran for an hour would.
//
// Drill time (ms from the drill's start) is Unix time kDrillEpochUnixMs + ms.
// Pure (no I/O, no clock) and deterministic; thread-compatible.
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "geodesic/v1/drill.pb.h"
#include "geodesic/v1/health.pb.h"
#include "geodesic/v1/model.pb.h"
#include "geodesic/v1/plan.pb.h"
#include "pathcomp/health/auto_drain_policy.h"
#include "pathcomp/health/link_judge.h"
#include "pathcomp/solver/snapshot.h"

namespace geodesic::sim {

inline constexpr int64_t kDrillEpochUnixMs = 1'767'225'600'000;  // 2026-01-01T00:00:00Z

class SimulatedAutoDrainer {
 public:
  // `links`: the inventory, with the health the agents report before the
  // drill (their baselines' RTT).
  SimulatedAutoDrainer(pathcomp::health::AutoDrainOptions options, const std::vector<v1::Link>& links);

  const pathcomp::health::AutoDrainOptions& options() const { return options_; }

  // The agents report every link of `links` (its health field) at `at_ms`.
  void Report(const std::vector<v1::Link>& links, uint64_t at_ms);
  // What the policy orders at `at_ms` from the judge's assessments and the
  // automatic drains in force. Not called while no leader acts.
  pathcomp::health::AutoDrainDecision Decide(uint64_t at_ms);

  // The intents `order` becomes (automatic drains of its links, ids and
  // reason as pathcomp makes them), created at `at_ms`.
  std::vector<v1::Intent> IntentsFor(const pathcomp::health::DrainOrder& order, uint64_t at_ms) const;
  // The pre-check passed: `intents` (IntentsFor's) are in force from now.
  void Drained(const pathcomp::health::DrainOrder& order, std::vector<v1::Intent> intents, uint64_t at_ms);
  // The pre-check refused `order`: retried after retry_refused_s.
  void Refused(const pathcomp::health::DrainOrder& order, uint64_t at_ms);
  // The order's intents are removed.
  void Undrained(const pathcomp::health::UndrainOrder& order);

  // The leader died: the next one's policy starts afresh (its judge was hot,
  // as every replica judges); the automatic intents stay in the model.
  void NewLeader();

  // The automatic drain intents in force.
  const std::vector<v1::Intent>& intents() const { return intents_; }
  // True when deciding again before the next change of health cannot order
  // anything: the last decision saw no link bad, no automatic drain is in
  // force and the policy has not failed open. Ticks may stop until then.
  bool quiet() const { return quiet_; }

 private:
  pathcomp::health::AutoDrainOptions options_;
  pathcomp::health::LinkJudge judge_;
  pathcomp::health::AutoDrainPolicy policy_;
  std::vector<v1::Intent> intents_;
  bool quiet_ = true;
};

// The drain pre-check as pathcomp makes it (OperatorService::Impact, then
// DrainRefusals): `view` as it is and with `drains` added, each planned
// cold (Planner::Hypothetical's way, with `chain_headroom`), compared with
// `utilization_limit`. The refusals; empty when the drain may go ahead.
std::vector<std::string> DrainPrecheck(pathcomp::ModelView view, const std::vector<v1::Intent>& drains,
                                       double chain_headroom, double utilization_limit);

// One automatic action for the report (DrillReport.auto_drain).
struct AutoDrainAction {
  uint64_t at_ms = 0;
  v1::AutoDrainEvent::Action action = v1::AutoDrainEvent::ACTION_UNSPECIFIED;
  std::vector<std::string> link_ids{};
  v1::LinkVerdict verdict = v1::LINK_VERDICT_UNKNOWN;
  std::string reason{};
  int after_event_index = -1;  // the timeline event it followed (-1: none)
  std::string after_event{};   // its description
};

// Appends `action` to `report` and counts it (drains, undrains, refusals,
// held, failed_open); the caller fills in refusals and replanned_at_ms.
v1::DrillAutoDrainAction& AddAutoDrainAction(const AutoDrainAction& action, v1::DrillAutoDrain& report);

// Counts `plan` in the gray-load measure when one of the `automatic` drain
// intents in force (and planned) targets a link of `degraded` (the links
// degraded now), raising max_gray_link_load_gbps to the highest elephant
// load the plan puts on a link of `degraded`. Other plans are not counted.
void AddGrayLoad(const v1::Plan& plan, const std::set<std::string>& degraded, const std::vector<v1::Intent>& automatic,
                 v1::DrillAutoDrain& report);

}  // namespace geodesic::sim
