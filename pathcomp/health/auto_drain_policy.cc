#include "pathcomp/health/auto_drain_policy.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "pathcomp/health/link_judge.h"

namespace geodesic::pathcomp::health {
namespace {

constexpr int64_t kHourMs = 3'600'000;

bool Bad(v1::LinkVerdict verdict) {
  return verdict == v1::LINK_VERDICT_SLOW || verdict == v1::LINK_VERDICT_LOSSY ||
         verdict == v1::LINK_VERDICT_FLAPPING;
}

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
    if (!Bad(evidence.verdict())) continue;
    parts.push_back(absl::StrCat(evidence.observer().empty() ? "?" : evidence.observer(), ": ", evidence.detail()));
  }
  return absl::StrCat(assessment.link_id(), " ", VerdictName(assessment.verdict()), " (", absl::StrJoin(parts, "; "),
                      ")");
}

}  // namespace

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

void AutoDrainPolicy::JudgeStorm(const std::vector<v1::LinkAssessment>& assessments, int64_t now_unix_ms,
                                 AutoDrainDecision& decision) {
  // Counted by fiber: the two directions of one bad fiber are one event.
  std::set<std::string> bad_now;
  std::vector<std::string> bad_links;
  for (const v1::LinkAssessment& assessment : assessments) {
    if (!Bad(assessment.verdict())) continue;
    bad_now.insert(FiberKey(assessment.link_id(), assessment.reverse_link_id()));
    bad_links.push_back(assessment.link_id());
  }
  for (const std::string& fiber : bad_now) {
    if (!bad_links_.count(fiber)) trips_ms_.push_back(now_unix_ms);
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
    for (const std::string& link : bad_links) event.add_link_ids(link);
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
  AutoDrainDecision decision;
  std::map<std::string, std::vector<const v1::LinkAssessment*>> members;
  std::map<std::string, std::string> fiber_of;
  for (const v1::LinkAssessment& assessment : assessments) {
    const std::string fiber = FiberKey(assessment.link_id(), assessment.reverse_link_id());
    members[fiber].push_back(&assessment);
    fiber_of[assessment.link_id()] = fiber;
  }

  // What the model holds: automatic drains by fiber, and a pause.
  std::map<std::string, std::vector<std::string>> automatic;
  const v1::Intent* pause = nullptr;
  std::map<std::string, int64_t> uncounted;  // fiber -> creation of its intents not yet counted
  for (const v1::Intent& intent : intents) {
    if (intent.has_auto_drain_pause()) pause = &intent;
    if (!intent.automatic() || !intent.has_drain() || !intent.drain().target().has_link_id()) continue;
    auto fiber = fiber_of.find(intent.drain().target().link_id());
    if (fiber == fiber_of.end()) continue;
    automatic[fiber->second].push_back(intent.id());
    if (counted_intents_.insert(intent.id()).second) {
      auto [it, first] = uncounted.emplace(fiber->second, intent.created_at_unix_ms());
      if (!first) it->second = std::min(it->second, intent.created_at_unix_ms());
    }
  }
  // Drains taken before a restart, or by the replica that led before, count
  // against the hourly limit too: once per fiber.
  for (const auto& [fiber, created_at] : uncounted) {
    if (now_unix_ms - created_at < kHourMs) drains_ms_.push_back(created_at);
  }
  while (!drains_ms_.empty() && now_unix_ms - *std::min_element(drains_ms_.begin(), drains_ms_.end()) >= kHourMs) {
    drains_ms_.erase(std::min_element(drains_ms_.begin(), drains_ms_.end()));
  }

  JudgeStorm(assessments, now_unix_ms, decision);
  const std::string held_by = pause != nullptr
                                  ? absl::StrCat("paused by ", pause->created_by(), pause->reason().empty() ? "" : ": ",
                                                 pause->reason())
                                  : "";

  struct Candidate {
    int64_t since_ms;
    std::string fiber;
  };
  std::vector<Candidate> candidates;
  size_t active = 0;
  for (auto& [fiber, links] : members) {
    FiberRecord& record = fibers_[fiber];
    const bool confirmed_bad = std::any_of(links.begin(), links.end(), [](const v1::LinkAssessment* a) {
      return a->confirmed() && Bad(a->verdict());
    });
    const bool healthy = std::all_of(links.begin(), links.end(), [](const v1::LinkAssessment* a) {
      return a->verdict() == v1::LINK_VERDICT_HEALTHY;
    });
    record.confirmed_since_ms = confirmed_bad ? (record.confirmed_since_ms < 0 ? now_unix_ms : record.confirmed_since_ms) : -1;
    record.healthy_since_ms = healthy ? (record.healthy_since_ms < 0 ? now_unix_ms : record.healthy_since_ms) : -1;
    if (!confirmed_bad) record.held_reported = false;

    auto drained = automatic.find(fiber);
    if (drained == automatic.end()) {
      // Ours, and gone without our undrain: an operator took it back.
      if (record.drained) record.released = true;
      record.drained = false;
    } else {
      record.drained = true;
      record.released = false;
    }
    if (record.released && healthy) record.released = false;

    if (record.drained) {
      if (healthy && now_unix_ms - record.healthy_since_ms >= options_.undrain_hold_ms && pause == nullptr &&
          !failed_open_) {
        decision.undrain.push_back(
            {.fiber = fiber,
             .intent_ids = drained->second,
             .reason = absl::StrCat("auto-drain: ", fiber, " healthy for ", (now_unix_ms - record.healthy_since_ms) / 1000,
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
    candidates.push_back({record.confirmed_since_ms, fiber});
  }

  std::sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
    return a.since_ms != b.since_ms ? a.since_ms < b.since_ms : a.fiber < b.fiber;
  });
  uint32_t taken_this_hour = DrainsWithinHour(now_unix_ms);
  for (const Candidate& candidate : candidates) {
    FiberRecord& record = fibers_[candidate.fiber];
    const auto& links = members[candidate.fiber];
    std::string held;
    if (failed_open_) continue;  // the fail-open event says it for all of them
    if (!held_by.empty()) {
      held = held_by;
    } else if (active >= options_.max_active) {
      held = absl::StrCat(active, " fibers already drained automatically (max_active ", options_.max_active, ")");
    } else if (taken_this_hour >= options_.max_per_hour) {
      held = absl::StrCat(taken_this_hour, " automatic drains within the last hour (max_per_hour ",
                          options_.max_per_hour, ")");
    }
    DrainOrder order{.fiber = candidate.fiber};
    std::vector<std::string> evidence;
    for (const v1::LinkAssessment* link : links) {
      order.link_ids.push_back(link->link_id());
      if (!Bad(link->verdict())) continue;
      if (Severity(link->verdict()) > Severity(order.verdict)) order.verdict = link->verdict();
      evidence.push_back(Evidence(*link));
    }
    std::sort(order.link_ids.begin(), order.link_ids.end());
    order.evidence = absl::StrJoin(evidence, "; ");
    if (!held.empty()) {
      if (!record.held_reported) {
        v1::AutoDrainEvent& event = decision.events.emplace_back();
        event.set_action(v1::AutoDrainEvent::ACTION_HELD);
        for (const std::string& link : order.link_ids) event.add_link_ids(link);
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
