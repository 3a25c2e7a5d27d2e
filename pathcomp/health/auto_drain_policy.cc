#include "pathcomp/health/auto_drain_policy.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "pathcomp/health/link_judge.h"

namespace geodesic::pathcomp::health {
namespace {

constexpr int64_t kHourMs = 3'600'000;

// Worse first: what a fiber's drain is named by when its links disagree.
int Severity(v1::LinkVerdict verdict) {
  switch (verdict) {
    case v1::LINK_VERDICT_FLAPPING: return 3;
    case v1::LINK_VERDICT_LOSSY: return 2;
    case v1::LINK_VERDICT_SLOW: return 1;
    default: return 0;
  }
}

std::string Evidence(const v1::LinkAssessment& assessment) {
  std::vector<std::string> parts;
  for (const v1::VerdictEvidence& evidence : assessment.evidence()) {
    if (!IsGray(evidence.verdict())) continue;
    parts.push_back(absl::StrCat(evidence.observer().empty() ? "?" : evidence.observer(), ": ", evidence.detail()));
  }
  return absl::StrCat(assessment.link_id(), " ", VerdictName(assessment.verdict()), " (", absl::StrJoin(parts, "; "),
                      ")");
}

}  // namespace

std::string PlaneKey(const std::string& facility_id, uint32_t plane) {
  return absl::StrCat("plane:", facility_id, ":", plane);
}

std::string FiberKey(const std::string& link_id, const std::string& reverse_link_id) {
  if (reverse_link_id.empty() || reverse_link_id == link_id) return link_id;
  return link_id < reverse_link_id ? absl::StrCat(link_id, "|", reverse_link_id)
                                   : absl::StrCat(reverse_link_id, "|", link_id);
}

absl::Status ValidateAutoDrainOptions(const AutoDrainOptions& o) {
  auto bad = [](const char* key, const char* rule) {
    return absl::InvalidArgumentError(absl::StrCat("auto_drain.", key, " must be ", rule));
  };
  if (o.hold_ms < 0 || o.hold_ms > 86'400'000) return bad("hold_s", "within [0, 86400]");
  if (o.undrain_hold_ms < 0 || o.undrain_hold_ms > 7 * 86'400'000LL) return bad("undrain_hold_s", "within [0, 604800]");
  if (o.max_active > 1000) return bad("max_active", "at most 1000");
  if (o.max_per_hour > 10'000) return bad("max_per_hour", "at most 10000");
  if (o.fail_open_links > 100'000) return bad("fail_open_links", "at most 100000");
  if (o.fail_open_window_ms < 1'000 || o.fail_open_window_ms > 86'400'000) return bad("fail_open_window_s", "within [1, 86400]");
  if (o.retry_refused_ms < 1'000 || o.retry_refused_ms > 86'400'000) return bad("retry_refused_s", "within [1, 86400]");
  if (!std::isfinite(o.utilization_limit) || o.utilization_limit <= 0 || o.utilization_limit > 10) {
    return bad("utilization_limit", "within (0, 10]");
  }
  return absl::OkStatus();
}

AutoDrainPolicy::AutoDrainPolicy(AutoDrainOptions options) : options_(options) {}

uint32_t AutoDrainPolicy::DrainsWithinHour(int64_t now_unix_ms) const {
  return static_cast<uint32_t>(
      std::count_if(drains_ms_.begin(), drains_ms_.end(), [&](int64_t at) { return now_unix_ms - at < kHourMs; }));
}

void AutoDrainPolicy::JudgeStorm(const std::map<std::string, Subject>& subjects, int64_t now_unix_ms,
                                 AutoDrainDecision& decision) {
  // Counted by subject: the two directions of one bad fiber are one event.
  std::set<std::string> bad_now;
  std::vector<std::string> bad_names;
  for (const auto& [key, subject] : subjects) {
    if (!subject.bad) continue;
    bad_now.insert(key);
    bad_names.insert(bad_names.end(), subject.bad_names.begin(), subject.bad_names.end());
  }
  for (const std::string& key : bad_now) {
    if (!bad_links_.count(key)) trips_ms_.push_back(now_unix_ms);
  }
  while (!trips_ms_.empty() && now_unix_ms - trips_ms_.front() > options_.fail_open_window_ms) trips_ms_.pop_front();
  bad_links_ = bad_now;

  const bool storm = trips_ms_.size() > options_.fail_open_links || bad_now.size() > options_.fail_open_links;
  if (storm && !failed_open_) {
    failed_open_ = true;
    fail_open_reason_ = absl::StrCat(trips_ms_.size(), " links turned bad within ", options_.fail_open_window_ms / 1000,
                                     " s and ", bad_now.size(), " are bad now (limit ", options_.fail_open_links,
                                     "): the measurement is suspected; nothing is drained or undrained until it clears");
    v1::AutoDrainEvent& event = decision.events.emplace_back();
    event.set_action(v1::AutoDrainEvent::ACTION_FAIL_OPEN);
    for (const std::string& name : bad_names) event.add_link_ids(name);
    event.set_reason(fail_open_reason_);
  } else if (!storm && failed_open_) {
    failed_open_ = false;
    v1::AutoDrainEvent& event = decision.events.emplace_back();
    event.set_action(v1::AutoDrainEvent::ACTION_FAIL_OPEN_CLEARED);
    event.set_reason(absl::StrCat("cleared: ", bad_now.size(), " links bad now, ", trips_ms_.size(), " turned bad within ",
                                  options_.fail_open_window_ms / 1000, " s (", fail_open_reason_, ")"));
    fail_open_reason_.clear();
  }
}

AutoDrainDecision AutoDrainPolicy::Decide(const std::vector<v1::LinkAssessment>& assessments,
                                          const std::vector<v1::Intent>& intents, int64_t now_unix_ms) {
  return Decide(assessments, {}, intents, now_unix_ms);
}

AutoDrainDecision AutoDrainPolicy::Decide(const std::vector<v1::LinkAssessment>& assessments,
                                          const std::vector<v1::PlaneAssessment>& planes,
                                          const std::vector<v1::Intent>& intents, int64_t now_unix_ms) {
  AutoDrainDecision decision;
  // Fibers from their links; planes on their own.
  std::map<std::string, Subject> subjects;
  std::map<std::string, std::string> fiber_of;
  for (const v1::LinkAssessment& assessment : assessments) {
    const std::string fiber = FiberKey(assessment.link_id(), assessment.reverse_link_id());
    fiber_of[assessment.link_id()] = fiber;
    Subject& subject = subjects[fiber];
    subject.order.fiber = fiber;
    subject.order.link_ids.push_back(assessment.link_id());
    subject.healthy = subject.healthy && assessment.verdict() == v1::LINK_VERDICT_HEALTHY;
    if (!IsGray(assessment.verdict())) continue;
    subject.bad = true;
    subject.bad_names.push_back(assessment.link_id());
    subject.confirmed_bad = subject.confirmed_bad || assessment.confirmed();
    if (Severity(assessment.verdict()) > Severity(subject.order.verdict)) subject.order.verdict = assessment.verdict();
    subject.evidence.push_back(Evidence(assessment));
  }
  for (const v1::PlaneAssessment& plane : planes) {
    const std::string key = PlaneKey(plane.facility_id(), plane.plane());
    Subject& subject = subjects[key];
    subject.order.fiber = key;
    subject.order.facility_id = plane.facility_id();
    subject.order.plane = plane.plane();
    subject.order.plane_set = true;
    subject.healthy = plane.verdict() == v1::LINK_VERDICT_HEALTHY;
    if (plane.verdict() != v1::LINK_VERDICT_FLAPPING) continue;
    // The fabric manager reports the plane's state itself: no inference to confirm.
    subject.bad = subject.confirmed_bad = true;
    subject.bad_names.push_back(absl::StrCat("plane ", plane.facility_id(), ":", plane.plane()));
    subject.order.verdict = v1::LINK_VERDICT_FLAPPING;
    subject.evidence.push_back(absl::StrCat("plane ", plane.facility_id(), ":", plane.plane(), " flapping (",
                                            plane.detail(), ")"));
  }

  // What the model holds: automatic drains by subject, and a pause.
  std::map<std::string, std::vector<std::string>> automatic;
  const v1::Intent* pause = nullptr;
  std::map<std::string, int64_t> uncounted;  // subject -> creation of its intents not yet counted
  for (const v1::Intent& intent : intents) {
    if (intent.has_auto_drain_pause()) pause = &intent;
    if (!intent.automatic() || !intent.has_drain()) continue;
    const v1::Drain& drain = intent.drain();
    std::string key;
    if (drain.plane_set()) {
      key = PlaneKey(drain.target().facility_id(), drain.plane());
    } else if (auto fiber = fiber_of.find(drain.target().link_id()); fiber != fiber_of.end()) {
      key = fiber->second;
    } else {
      continue;
    }
    automatic[key].push_back(intent.id());
    if (counted_intents_.insert(intent.id()).second) {
      auto [it, first] = uncounted.emplace(key, intent.created_at_unix_ms());
      if (!first) it->second = std::min(it->second, intent.created_at_unix_ms());
    }
  }
  // Drains taken before a restart, or by the replica that led before, count
  // against the hourly limit too: once per subject.
  for (const auto& [key, created_at] : uncounted) {
    if (now_unix_ms - created_at < kHourMs) drains_ms_.push_back(created_at);
  }
  while (!drains_ms_.empty() && now_unix_ms - *std::min_element(drains_ms_.begin(), drains_ms_.end()) >= kHourMs) {
    drains_ms_.erase(std::min_element(drains_ms_.begin(), drains_ms_.end()));
  }

  JudgeStorm(subjects, now_unix_ms, decision);
  const std::string held_by = pause != nullptr
                                  ? absl::StrCat("paused by ", pause->created_by(), pause->reason().empty() ? "" : ": ",
                                                 pause->reason())
                                  : "";

  struct Candidate {
    int64_t since_ms;
    std::string key;
  };
  std::vector<Candidate> candidates;
  size_t active = 0;
  for (auto& [key, subject] : subjects) {
    FiberRecord& record = fibers_[key];
    const bool confirmed_bad = subject.bad && subject.confirmed_bad;
    record.confirmed_since_ms = confirmed_bad ? (record.confirmed_since_ms < 0 ? now_unix_ms : record.confirmed_since_ms) : -1;
    record.healthy_since_ms =
        subject.healthy ? (record.healthy_since_ms < 0 ? now_unix_ms : record.healthy_since_ms) : -1;
    if (!confirmed_bad) record.held_reported = false;

    auto drained = automatic.find(key);
    if (drained == automatic.end()) {
      // Ours, and gone without our undrain: an operator took it back.
      if (record.drained) record.released = true;
      record.drained = false;
    } else {
      record.drained = true;
      record.released = false;
    }
    if (record.released && subject.healthy) record.released = false;

    if (record.drained) {
      if (subject.healthy && now_unix_ms - record.healthy_since_ms >= options_.undrain_hold_ms && pause == nullptr &&
          !failed_open_) {
        decision.undrain.push_back(
            {.fiber = key,
             .intent_ids = drained->second,
             .reason = absl::StrCat("auto-drain: ", key, " healthy for ", (now_unix_ms - record.healthy_since_ms) / 1000,
                                    " s")});
        record.drained = false;  // undone by us, not released by an operator
      } else {
        ++active;
      }
      continue;
    }
    if (!confirmed_bad || record.released) continue;
    if (now_unix_ms - record.confirmed_since_ms < options_.hold_ms) continue;
    if (record.refused_at_ms >= 0 && now_unix_ms - record.refused_at_ms < options_.retry_refused_ms) continue;
    candidates.push_back({record.confirmed_since_ms, key});
  }

  std::sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
    return a.since_ms != b.since_ms ? a.since_ms < b.since_ms : a.key < b.key;
  });
  uint32_t taken_this_hour = DrainsWithinHour(now_unix_ms);
  for (const Candidate& candidate : candidates) {
    if (failed_open_) break;  // the fail-open event says it for all of them
    FiberRecord& record = fibers_[candidate.key];
    Subject& subject = subjects[candidate.key];
    std::string held;
    if (!held_by.empty()) {
      held = held_by;
    } else if (active >= options_.max_active) {
      held = absl::StrCat(active, " fibers already drained automatically (max_active ", options_.max_active, ")");
    } else if (taken_this_hour >= options_.max_per_hour) {
      held = absl::StrCat(taken_this_hour, " automatic drains within the last hour (max_per_hour ",
                          options_.max_per_hour, ")");
    }
    DrainOrder order = subject.order;
    std::sort(order.link_ids.begin(), order.link_ids.end());
    order.evidence = absl::StrJoin(subject.evidence, "; ");
    if (!held.empty()) {
      if (!record.held_reported) {
        v1::AutoDrainEvent& event = decision.events.emplace_back();
        event.set_action(v1::AutoDrainEvent::ACTION_HELD);
        for (const std::string& link : order.link_ids) event.add_link_ids(link);
        if (order.plane_set) {
          event.set_facility_id(order.facility_id);
          event.set_plane(order.plane);
          event.set_plane_set(true);
        }
        event.set_verdict(order.verdict);
        event.set_reason(absl::StrCat(held, "; ", order.evidence));
        record.held_reported = true;
      }
      continue;
    }
    ++active;
    ++taken_this_hour;
    decision.drain.push_back(std::move(order));
  }
  return decision;
}

void AutoDrainPolicy::Drained(const DrainOrder& order, const std::vector<std::string>& intent_ids,
                              int64_t now_unix_ms) {
  FiberRecord& record = fibers_[order.fiber];
  record.drained = true;
  record.refused_at_ms = -1;
  drains_ms_.push_back(now_unix_ms);
  counted_intents_.insert(intent_ids.begin(), intent_ids.end());
}

void AutoDrainPolicy::Refused(const DrainOrder& order, int64_t now_unix_ms) {
  fibers_[order.fiber].refused_at_ms = now_unix_ms;
}

}  // namespace geodesic::pathcomp::health
