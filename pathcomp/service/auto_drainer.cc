#include "pathcomp/service/auto_drainer.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "daemon/clock.h"
#include "daemon/log.h"

namespace geodesic::pathcomp {
namespace {

std::string_view ActionMetricName(v1::AutoDrainEvent::Action action) {
  switch (action) {
    case v1::AutoDrainEvent::ACTION_DRAINED: return "drained";
    case v1::AutoDrainEvent::ACTION_UNDRAINED: return "undrained";
    case v1::AutoDrainEvent::ACTION_REFUSED: return "refused";
    case v1::AutoDrainEvent::ACTION_FAIL_OPEN: return "fail_open";
    case v1::AutoDrainEvent::ACTION_HELD: return "held";
    default: return "";
  }
}

const v1::Intent* FindPause(const std::vector<v1::Intent>& intents) {
  for (const v1::Intent& intent : intents) {
    if (intent.has_auto_drain_pause()) return &intent;
  }
  return nullptr;
}

}  // namespace

AutoDrainer::AutoDrainer(Model& model, EventBus& events, health::VerdictThresholds thresholds,
                         health::AutoDrainOptions options, Actions actions, AutoDrainMetrics& metrics)
    : model_(model),
      events_(events),
      actions_(std::move(actions)),
      metrics_(metrics),
      judge_(std::move(thresholds)),
      policy_(options) {}

absl::Status AutoDrainer::Load() {
  auto stored = model_.StoredBaselines();
  if (!stored.ok()) return stored.status();
  std::lock_guard lock(mu_);
  SyncLinksLocked();
  for (const v1::RttBaseline& baseline : *stored) judge_.RestoreBaseline(baseline);
  // What the model holds stands until the agents report a change (a resumed
  // stream does not repeat what was acknowledged before the restart).
  const int64_t now = daemon::UnixNowMs();
  for (const v1::Link& link : model_.Links()) {
    if (link.health().state() != v1::OPER_STATE_UNKNOWN) judge_.Observe(link.id(), link.health(), now);
  }
  return absl::OkStatus();
}

void AutoDrainer::SyncLinksLocked() {
  std::vector<v1::Link> links = model_.Links();
  std::string signature;
  for (const v1::Link& link : links) absl::StrAppend(&signature, link.id(), " ", link.src_node_id(), " ", link.dst_node_id(), "\n");
  if (signature == links_signature_) return;
  links_signature_ = std::move(signature);
  judge_.SetLinks(links);
}

void AutoDrainer::Observe(const std::string& facility_id, const v1::AgentMessage& message, int64_t now_unix_ms) {
  const v1::Update* update = message.has_snapshot() ? &message.snapshot() : message.has_delta() ? &message.delta() : nullptr;
  if (update == nullptr || (update->links().empty() && update->planes().empty())) return;
  std::lock_guard lock(mu_);
  for (const v1::LinkReport& report : update->links()) judge_.Observe(report.link_id(), report.health(), now_unix_ms);
  if (update->planes().empty()) return;
  for (const v1::FabricPlaneHealth& plane : update->planes()) judge_.ObservePlane(facility_id, plane, now_unix_ms);
}

void AutoDrainer::ObservePath(health::PathObservation path) {
  std::lock_guard lock(mu_);
  judge_.ObservePath(std::move(path));
}

void AutoDrainer::RecordEvent(const v1::AutoDrainEvent& event) {
  if (std::string_view name = ActionMetricName(event.action()); !name.empty()) metrics_.RecordAction(name);
  const std::string links = absl::StrJoin(event.link_ids(), ",");
  const std::string action = v1::AutoDrainEvent::Action_Name(event.action());
  if (event.action() == v1::AutoDrainEvent::ACTION_REFUSED || event.action() == v1::AutoDrainEvent::ACTION_FAIL_OPEN) {
    daemon::LogWarn("automatic drain", {{"action", action}, {"links", links}, {"reason", event.reason()}});
  } else {
    daemon::LogInfo("automatic drain", {{"action", action}, {"links", links}, {"reason", event.reason()}});
  }
}

void AutoDrainer::Publish(v1::AutoDrainEvent event, int64_t now_unix_ms) {
  RecordEvent(event);
  v1::Event wrapped;
  wrapped.set_at_unix_ms(now_unix_ms);
  *wrapped.mutable_auto_drain() = std::move(event);
  events_.Publish(wrapped);
}

void AutoDrainer::Tick(int64_t now_unix_ms) {
  const std::vector<v1::Intent> intents = model_.Intents();
  const bool acting = policy_.options().enabled && actions_.may_act().ok();
  std::vector<health::PathObservation> paths;
  if (actions_.paths) paths = actions_.paths();
  health::AutoDrainDecision decision;
  std::vector<v1::RttBaseline> baselines;
  std::map<std::string, size_t> verdicts;
  size_t confirmed_bad = 0;
  {
    std::lock_guard lock(mu_);
    SyncLinksLocked();
    for (health::PathObservation& path : paths) judge_.ObservePath(std::move(path));
    const std::vector<v1::LinkAssessment> assessments = judge_.Assess(now_unix_ms);
    for (v1::LinkVerdict verdict : {v1::LINK_VERDICT_UNKNOWN, v1::LINK_VERDICT_HEALTHY, v1::LINK_VERDICT_SLOW,
                                    v1::LINK_VERDICT_LOSSY, v1::LINK_VERDICT_FLAPPING}) {
      verdicts[health::VerdictName(verdict)] = 0;
    }
    for (const v1::LinkAssessment& assessment : assessments) {
      ++verdicts[health::VerdictName(assessment.verdict())];
      if (assessment.confirmed() && health::IsGray(assessment.verdict())) ++confirmed_bad;
    }
    baselines = judge_.TakeChangedBaselines();
    if (acting) decision = policy_.Decide(assessments, judge_.AssessPlanes(now_unix_ms), intents, now_unix_ms);
  }
  if (absl::Status stored = model_.StoreBaselines(baselines); !stored.ok()) {
    daemon::LogWarn("rtt baselines not stored", {{"error", stored.ToString()}});
  }

  for (v1::AutoDrainEvent& event : decision.events) Publish(std::move(event), now_unix_ms);
  for (const health::UndrainOrder& order : decision.undrain) {
    v1::AutoDrainEvent event;
    for (const std::string& id : order.intent_ids) event.add_intent_ids(id);
    event.set_reason(order.reason);
    if (absl::Status undone = actions_.undrain(order); undone.ok()) {
      event.set_action(v1::AutoDrainEvent::ACTION_UNDRAINED);
      Publish(std::move(event), now_unix_ms);
    } else {
      daemon::LogWarn("automatic undrain failed", {{"fiber", order.fiber}, {"error", undone.ToString()}});
    }
  }
  for (const health::DrainOrder& order : decision.drain) {
    v1::AutoDrainEvent event;
    for (const std::string& link : order.link_ids) event.add_link_ids(link);
    if (order.plane_set) {
      event.set_facility_id(order.facility_id);
      event.set_plane(order.plane);
      event.set_plane_set(true);
    }
    event.set_verdict(order.verdict);
    auto taken = actions_.drain(order, policy_.options().utilization_limit);
    {
      std::lock_guard lock(mu_);
      if (taken.ok()) {
        policy_.Drained(order, *taken, now_unix_ms);
      } else {
        policy_.Refused(order, now_unix_ms);
      }
    }
    if (taken.ok()) {
      event.set_action(v1::AutoDrainEvent::ACTION_DRAINED);
      for (const std::string& id : *taken) event.add_intent_ids(id);
      event.set_reason(order.evidence);
    } else {
      event.set_action(v1::AutoDrainEvent::ACTION_REFUSED);
      event.set_reason(absl::StrCat(taken.status().message(), "; evidence: ", order.evidence));
    }
    Publish(std::move(event), now_unix_ms);
  }

  size_t active = 0;
  for (const v1::Intent& intent : model_.Intents()) {
    if (intent.automatic() && intent.has_drain()) ++active;
  }
  bool failed_open;
  {
    std::lock_guard lock(mu_);
    failed_open = policy_.failed_open();
  }
  metrics_.RecordState(verdicts, confirmed_bad, active, failed_open, FindPause(intents) != nullptr);
}

absl::StatusOr<std::vector<v1::LinkAssessment>> AutoDrainer::Assess(const std::string& link_id,
                                                                    int64_t now_unix_ms) const {
  std::lock_guard lock(mu_);
  if (link_id.empty()) return judge_.Assess(now_unix_ms);
  auto assessment = judge_.AssessLink(link_id, now_unix_ms);
  if (!assessment) return absl::NotFoundError(absl::StrCat("unknown link ", link_id));
  return std::vector<v1::LinkAssessment>{*std::move(assessment)};
}

v1::AutoDrainStatus AutoDrainer::Status(int64_t now_unix_ms) const {
  v1::AutoDrainStatus status;
  const health::AutoDrainOptions& options = policy_.options();
  status.set_enabled(options.enabled);
  status.set_acting(options.enabled && actions_.may_act().ok());
  status.set_max_active(options.max_active);
  status.set_max_per_hour(options.max_per_hour);
  const std::vector<v1::Intent> intents = model_.Intents();
  if (const v1::Intent* pause = FindPause(intents)) {
    status.set_paused(true);
    status.set_paused_by(pause->created_by());
    status.set_pause_reason(pause->reason());
  }
  for (const v1::Intent& intent : intents) {
    if (intent.automatic()) status.add_active_intent_ids(intent.id());
  }
  std::lock_guard lock(mu_);
  status.set_failed_open(policy_.failed_open());
  status.set_fail_open_reason(policy_.fail_open_reason());
  status.set_drains_last_hour(policy_.DrainsWithinHour(now_unix_ms));
  for (v1::LinkAssessment& assessment : judge_.Assess(now_unix_ms)) {
    if (health::IsGray(assessment.verdict())) *status.add_tripped() = std::move(assessment);
  }
  for (v1::PlaneAssessment& plane : judge_.AssessPlanes(now_unix_ms)) {
    if (health::IsGray(plane.verdict())) *status.add_tripped_planes() = std::move(plane);
  }
  return status;
}

}  // namespace geodesic::pathcomp
