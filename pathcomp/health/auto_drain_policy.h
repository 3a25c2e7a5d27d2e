#pragma once
// When pathcomp drains a gray link by itself, and when it gives the link
// back: the decisions, apart from carrying them out (the shell's
// AutoDrainer pre-checks, stores, audits and re-plans each one like an
// operator's drain).
//
// The unit is a fiber: a link and its reverse (an echo probe cannot tell the
// two directions apart), drained and undrained together by one intent each.
//   drain     a link of the fiber stays confirmed slow, lossy or flapping
//             (link_judge.h) for hold_ms; at most max_active fibers drained
//             automatically at once and max_per_hour drains within any hour;
//             a drain the pre-check refused is retried after retry_refused_ms;
//   undrain   every link of an automatically drained fiber stays healthy for
//             undrain_hold_ms;
//   fail open more than fail_open_links links turned bad (confirmed or not)
//             within fail_open_window_ms, or are bad now: the measurement
//             itself is suspect, so nothing is drained or undrained until it
//             clears ("Evolve or Die": automation must not act on a large
//             event), and the shell alerts;
//   pause     an operator's auto_drain_pause intent: nothing is drained or
//             undrained; a drain held back by a pause or a limit is reported
//             once per fiber and episode;
//   released  an automatic drain an operator removed is not taken again
//             until the fiber was healthy in between.
//
// Pure (time comes in as arguments, Unix ms); thread-compatible.
#include <cstdint>
#include <deque>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "geodesic/v1/health.pb.h"
#include "geodesic/v1/model.pb.h"

namespace geodesic::pathcomp::health {

// pathcomp's config `auto_drain:` (pathcomp_config.h), with its defaults.
struct AutoDrainOptions {
  bool enabled = true;
  int64_t hold_ms = 30'000;
  int64_t undrain_hold_ms = 300'000;
  uint32_t max_active = 2;
  uint32_t max_per_hour = 4;
  uint32_t fail_open_links = 4;
  int64_t fail_open_window_ms = 60'000;
  int64_t retry_refused_ms = 300'000;
  double utilization_limit = 1.0;  // the drain pre-check's (operator.proto AddIntentRequest)
};

// InvalidArgument naming the first bad option.
[[nodiscard]] absl::Status ValidateAutoDrainOptions(const AutoDrainOptions& options);

struct DrainOrder {
  std::string fiber;                  // "a|b": the fiber's link ids, sorted
  std::vector<std::string> link_ids{};  // the links to drain (the fiber's)
  v1::LinkVerdict verdict = v1::LINK_VERDICT_UNKNOWN;
  std::string evidence{};             // why, for the intent's reason and the audit
};

struct UndrainOrder {
  std::string fiber;
  std::vector<std::string> intent_ids;
  std::string reason;
};

struct AutoDrainDecision {
  std::vector<DrainOrder> drain;
  std::vector<UndrainOrder> undrain;
  // Fail open and its end, drains held back by a limit or a pause.
  std::vector<v1::AutoDrainEvent> events;
};

class AutoDrainPolicy {
 public:
  explicit AutoDrainPolicy(AutoDrainOptions options);

  // What to do at `now_unix_ms`, given every link's assessment and the
  // model's intents (automatic drains and pauses among them). The shell
  // reports back what became of each drain order (Drained / Refused).
  AutoDrainDecision Decide(const std::vector<v1::LinkAssessment>& assessments,
                           const std::vector<v1::Intent>& intents, int64_t now_unix_ms);
  // The drain was taken as `intent_ids` (they count against the hourly limit once).
  void Drained(const DrainOrder& order, const std::vector<std::string>& intent_ids, int64_t now_unix_ms);
  // The pre-check refused the drain (or storing it failed).
  void Refused(const DrainOrder& order, int64_t now_unix_ms);

  bool failed_open() const { return failed_open_; }
  const std::string& fail_open_reason() const { return fail_open_reason_; }
  uint32_t DrainsWithinHour(int64_t now_unix_ms) const;
  const AutoDrainOptions& options() const { return options_; }

 private:
  struct FiberRecord {
    int64_t confirmed_since_ms = -1;  // -1: not confirmed bad now
    int64_t healthy_since_ms = -1;    // -1: not all healthy now
    int64_t refused_at_ms = -1;
    bool drained = false;             // an automatic intent of ours is in force
    bool released = false;            // an operator removed it; wait for health
    bool held_reported = false;
  };
  // Fail open: updates failed_open_ from the links bad now; an event when it changes.
  void JudgeStorm(const std::vector<v1::LinkAssessment>& assessments, int64_t now_unix_ms,
                  AutoDrainDecision& decision);

  AutoDrainOptions options_;
  std::map<std::string, FiberRecord> fibers_;
  std::set<std::string> bad_links_;     // bad at the last decision
  std::deque<int64_t> trips_ms_;        // links turning bad, within the window
  std::deque<int64_t> drains_ms_;       // drains taken, within the hour
  std::set<std::string> counted_intents_;  // automatic intents already in drains_ms_
  bool failed_open_ = false;
  std::string fail_open_reason_;
};

// "a|b": the fiber of `link_id` and its reverse ("" when none), sorted.
std::string FiberKey(const std::string& link_id, const std::string& reverse_link_id);

}  // namespace geodesic::pathcomp::health
