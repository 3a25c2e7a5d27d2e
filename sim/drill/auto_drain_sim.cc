#include "sim/drill/auto_drain_sim.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "pathcomp/solver/impact.h"
#include "pathcomp/solver/plan_builder.h"

namespace geodesic::sim {
namespace {

using pathcomp::health::AutoDrainPolicy;
using pathcomp::health::DrainOrder;
using pathcomp::health::UndrainOrder;

constexpr int64_t kMinuteMs = 60'000;

bool Bad(v1::LinkVerdict verdict) {
  return verdict == v1::LINK_VERDICT_SLOW || verdict == v1::LINK_VERDICT_LOSSY ||
         verdict == v1::LINK_VERDICT_FLAPPING;
}

int64_t UnixMs(uint64_t drill_ms) { return kDrillEpochUnixMs + static_cast<int64_t>(drill_ms); }

// "auto-nyc-lon-1767225641000": as pathcomp names them (operator_auto_drain.cc).
std::string AutomaticIntentId(const std::string& link_id, int64_t unix_ms) {
  std::string id = absl::StrCat("auto-", link_id);
  const std::string suffix = absl::StrCat("-", unix_ms);
  id.resize(std::min(id.size(), size_t{63} - suffix.size()));
  return id + suffix;
}

}  // namespace

SimulatedAutoDrainer::SimulatedAutoDrainer(pathcomp::health::AutoDrainOptions options,
                                           const std::vector<v1::Link>& links)
    : options_(options), policy_(options) {
  judge_.SetLinks(links);
  // An hour of reports before the drill, one a minute, at the links' health
  // now: every baseline has its window full when the drill starts.
  const int64_t window_ms = int64_t{judge_.thresholds().baseline.window_minutes} * kMinuteMs;
  for (int64_t at = kDrillEpochUnixMs - window_ms; at < kDrillEpochUnixMs; at += kMinuteMs) {
    for (const v1::Link& link : links) judge_.Observe(link.id(), link.health(), at);
  }
  for (const v1::Link& link : links) judge_.Observe(link.id(), link.health(), kDrillEpochUnixMs);
}

void SimulatedAutoDrainer::Report(const std::vector<v1::Link>& links, uint64_t at_ms) {
  for (const v1::Link& link : links) judge_.Observe(link.id(), link.health(), UnixMs(at_ms));
}

pathcomp::health::AutoDrainDecision SimulatedAutoDrainer::Decide(uint64_t at_ms) {
  const std::vector<v1::LinkAssessment> assessments = judge_.Assess(UnixMs(at_ms));
  pathcomp::health::AutoDrainDecision decision = policy_.Decide(assessments, intents_, UnixMs(at_ms));
  const bool any_bad = std::any_of(assessments.begin(), assessments.end(),
                                   [](const v1::LinkAssessment& a) { return Bad(a.verdict()); });
  // A drain ordered now puts an intent in force (Drained), which keeps the
  // ticks going; so does a bad link or a storm.
  quiet_ = !any_bad && intents_.empty() && !policy_.failed_open() && decision.drain.empty();
  return decision;
}

std::vector<v1::Intent> SimulatedAutoDrainer::IntentsFor(const DrainOrder& order, uint64_t at_ms) const {
  std::vector<v1::Intent> intents;
  std::string reason = absl::StrCat("auto-drain: ", pathcomp::health::VerdictName(order.verdict), ": ", order.evidence);
  if (reason.size() > 1024) reason.resize(1024);
  for (const std::string& link_id : order.link_ids) {
    v1::Intent& intent = intents.emplace_back();
    intent.set_id(AutomaticIntentId(link_id, UnixMs(at_ms)));
    intent.mutable_drain()->mutable_target()->set_link_id(link_id);
    intent.set_reason(reason);
    intent.set_automatic(true);
    intent.set_created_at_unix_ms(UnixMs(at_ms));
  }
  return intents;
}

void SimulatedAutoDrainer::Drained(const DrainOrder& order, std::vector<v1::Intent> intents, uint64_t at_ms) {
  std::vector<std::string> ids;
  for (v1::Intent& intent : intents) {
    ids.push_back(intent.id());
    intents_.push_back(std::move(intent));
  }
  policy_.Drained(order, ids, UnixMs(at_ms));
  quiet_ = false;
}

void SimulatedAutoDrainer::Refused(const DrainOrder& order, uint64_t at_ms) { policy_.Refused(order, UnixMs(at_ms)); }

void SimulatedAutoDrainer::Undrained(const UndrainOrder& order) {
  std::erase_if(intents_, [&](const v1::Intent& intent) {
    return std::find(order.intent_ids.begin(), order.intent_ids.end(), intent.id()) != order.intent_ids.end();
  });
}

void SimulatedAutoDrainer::NewLeader() {
  policy_ = AutoDrainPolicy(options_);
  quiet_ = false;
}

std::vector<std::string> DrainPrecheck(pathcomp::ModelView view, const std::vector<v1::Intent>& drains,
                                       double chain_headroom, double utilization_limit) {
  pathcomp::PlanStamp stamp;
  stamp.reason = "what-if";
  const pathcomp::Snapshot before_snapshot = pathcomp::Snapshot::Build(view);
  pathcomp::ElephantAllocator cold_before(chain_headroom);
  const int threads = pathcomp::DefaultBuildThreads();  // the plans are the same whatever the number
  const v1::Plan before = pathcomp::BuildPlan(before_snapshot, stamp, cold_before, nullptr, nullptr, {}, threads).plan;
  view.intents.insert(view.intents.end(), drains.begin(), drains.end());
  pathcomp::ElephantAllocator cold_after(chain_headroom);
  const v1::Plan after =
      pathcomp::BuildPlan(pathcomp::Snapshot::Build(view), stamp, cold_after, nullptr, nullptr, {}, threads).plan;
  return pathcomp::DrainRefusals(pathcomp::CompareImpact(before, after, before_snapshot, utilization_limit));
}

v1::DrillAutoDrainAction& AddAutoDrainAction(const AutoDrainAction& action, v1::DrillAutoDrain& report) {
  v1::DrillAutoDrainAction& taken = *report.add_actions();
  taken.set_at_ms(action.at_ms);
  taken.set_action(action.action);
  for (const std::string& link : action.link_ids) taken.add_link_ids(link);
  taken.set_verdict(action.verdict);
  taken.set_reason(action.reason);
  taken.set_after_event_index(action.after_event_index);
  taken.set_after_event(action.after_event);
  switch (action.action) {
    case v1::AutoDrainEvent::ACTION_DRAINED: report.set_drains(report.drains() + 1); break;
    case v1::AutoDrainEvent::ACTION_UNDRAINED: report.set_undrains(report.undrains() + 1); break;
    case v1::AutoDrainEvent::ACTION_REFUSED: report.set_refusals(report.refusals() + 1); break;
    case v1::AutoDrainEvent::ACTION_HELD: report.set_held(report.held() + 1); break;
    case v1::AutoDrainEvent::ACTION_FAIL_OPEN: report.set_failed_open(true); break;
    default: break;
  }
  return taken;
}

void AddGrayLoad(const v1::Plan& plan, const std::set<std::string>& degraded, const std::vector<v1::Intent>& automatic,
                 v1::DrillAutoDrain& report) {
  const bool drained_gray = std::any_of(automatic.begin(), automatic.end(), [&](const v1::Intent& intent) {
    return intent.has_drain() && degraded.count(intent.drain().target().link_id()) > 0;
  });
  if (!drained_gray) return;
  report.set_gray_drained_plans(report.gray_drained_plans() + 1);
  for (const v1::LinkLoad& load : plan.elephants().links()) {
    if (!degraded.count(load.link_id()) || load.load_gbps() <= report.max_gray_link_load_gbps()) continue;
    report.set_max_gray_link_load_gbps(load.load_gbps());
    report.set_max_gray_link(load.link_id());
  }
}

}  // namespace geodesic::sim
