#include "pathcomp/health/link_judge.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace geodesic::pathcomp::health {
namespace {

std::string Ms(uint64_t us) { return absl::StrFormat("%.1f ms", us / 1000.0); }

}  // namespace

bool IsGray(v1::LinkVerdict verdict) {
  return verdict == v1::LINK_VERDICT_SLOW || verdict == v1::LINK_VERDICT_LOSSY ||
         verdict == v1::LINK_VERDICT_FLAPPING;
}

std::string VerdictName(v1::LinkVerdict verdict) {
  switch (verdict) {
    case v1::LINK_VERDICT_HEALTHY: return "healthy";
    case v1::LINK_VERDICT_SLOW: return "slow";
    case v1::LINK_VERDICT_LOSSY: return "lossy";
    case v1::LINK_VERDICT_FLAPPING: return "flapping";
    default: return "unknown";
  }
}

absl::Status ValidateThresholds(const VerdictThresholds& t) {
  auto bad = [](const char* key, const char* rule) {
    return absl::InvalidArgumentError(absl::StrCat(key, " must be ", rule));
  };
  if (!std::isfinite(t.slow_factor) || t.slow_factor < 1 || t.slow_factor > 100) return bad("slow_factor", "within [1, 100]");
  if (t.slow_floor_us > 10'000'000) return bad("slow_floor_ms", "at most 10000");
  if (!std::isfinite(t.slow_mad_multiplier) || t.slow_mad_multiplier < 0 || t.slow_mad_multiplier > 100) {
    return bad("slow_mad_multiplier", "within [0, 100]");
  }
  if (!std::isfinite(t.lossy_ratio) || t.lossy_ratio <= 0 || t.lossy_ratio > 1) return bad("lossy_ratio", "within (0, 1]");
  if (t.flap_changes < 2 || t.flap_changes > 1000) return bad("flap_changes", "within [2, 1000]");
  if (t.flap_window_ms < 1'000 || t.flap_window_ms > 86'400'000) return bad("flap_window_s", "within [1, 86400]");
  if (t.min_bad_paths < 2 || t.min_bad_paths > 1000) return bad("min_bad_paths", "within [2, 1000]");
  if (t.path_max_age_ms < 1'000 || t.path_max_age_ms > 3'600'000) return bad("path_max_age_s", "within [1, 3600]");
  if (t.baseline.window_minutes < 2 || t.baseline.window_minutes > 1440) return bad("baseline_minutes", "within [2, 1440]");
  if (t.baseline.min_minutes < 1 || t.baseline.min_minutes > t.baseline.window_minutes) {
    return bad("baseline_min_minutes", "within [1, baseline_minutes]");
  }
  return absl::OkStatus();
}

LinkJudge::LinkJudge(VerdictThresholds thresholds) : thresholds_(std::move(thresholds)) {}

void LinkJudge::SetLinks(const std::vector<v1::Link>& links) {
  std::map<std::pair<std::string, std::string>, std::string> by_nodes;
  for (const v1::Link& link : links) by_nodes[{link.src_node_id(), link.dst_node_id()}] = link.id();
  absl::flat_hash_map<std::string, LinkRecord> next;
  next.reserve(links.size());
  link_facility_.clear();
  for (const v1::Link& link : links) {
    auto kept = links_.find(link.id());
    LinkRecord record = kept != links_.end() ? std::move(kept->second) : LinkRecord{.baseline = RttBaseline(thresholds_.baseline)};
    auto reverse = by_nodes.find({link.dst_node_id(), link.src_node_id()});
    record.reverse_link_id = reverse != by_nodes.end() ? reverse->second : "";
    next.emplace(link.id(), std::move(record));
    link_facility_[link.id()] = link.src_facility_id();
  }
  links_ = std::move(next);
}

v1::LinkVerdict LinkJudge::NearVerdict(const LinkRecord& record, const std::optional<BaselineStats>& stats,
                                       int64_t now_unix_ms, std::string* detail) const {
  // Only literals and numbers: what is formatted is written where `detail` is checked.
  auto say = [detail](const auto&... parts) {
    if (detail != nullptr) *detail = absl::StrCat(parts...);
  };
  if (!record.reported || record.last.state() == v1::OPER_STATE_UNKNOWN) {
    say(record.reported ? "state unknown" : "not reported yet");
    return v1::LINK_VERDICT_UNKNOWN;
  }
  const auto changes = std::count_if(record.state_changes_ms.begin(), record.state_changes_ms.end(),
                                     [&](int64_t at) { return now_unix_ms - at <= thresholds_.flap_window_ms; });
  if (changes >= thresholds_.flap_changes) {
    say(changes, " state changes in ", thresholds_.flap_window_ms / 1000, " s");
    return v1::LINK_VERDICT_FLAPPING;
  }
  const v1::LinkHealth& health = record.last;
  if (health.state() == v1::OPER_STATE_DOWN) {
    // Down is not gray: the plan already avoids it, and its loss says nothing more.
    say("down");
    return v1::LINK_VERDICT_HEALTHY;
  }
  if (health.loss_ratio() >= thresholds_.lossy_ratio) {
    if (detail != nullptr) {
      *detail = absl::StrFormat("loss %.1f%% (threshold %.1f%%)", health.loss_ratio() * 100,
                                thresholds_.lossy_ratio * 100);
    }
    return v1::LINK_VERDICT_LOSSY;
  }
  if (stats && health.rtt_us() > 0) {
    const double limit = std::max({stats->median_rtt_us * thresholds_.slow_factor,
                                   static_cast<double>(stats->median_rtt_us + thresholds_.slow_floor_us),
                                   stats->median_rtt_us + thresholds_.slow_mad_multiplier * stats->mad_us});
    const bool slow = static_cast<double>(health.rtt_us()) > limit;
    if (detail != nullptr) {
      const std::string against = absl::StrCat("baseline ", Ms(stats->median_rtt_us), " (MAD ", Ms(stats->mad_us),
                                               ", ", stats->minutes, " min)");
      *detail = slow ? absl::StrCat("rtt ", Ms(health.rtt_us()), " over ", Ms(static_cast<uint64_t>(limit)), ", ", against)
                     : absl::StrCat("rtt ", Ms(health.rtt_us()), ", ", against);
    }
    if (slow) return v1::LINK_VERDICT_SLOW;
  } else if (detail != nullptr) {
    *detail = absl::StrCat("rtt ", Ms(health.rtt_us()), ", no baseline yet");
  }
  if (detail != nullptr && health.loss_ratio() > 0) {
    absl::StrAppend(detail, absl::StrFormat(", loss %.2f%%", health.loss_ratio() * 100));
  }
  return v1::LINK_VERDICT_HEALTHY;
}

void LinkJudge::Observe(const std::string& link_id, const v1::LinkHealth& health, int64_t now_unix_ms) {
  auto it = links_.find(link_id);
  if (it == links_.end()) return;
  LinkRecord& record = it->second;
  if (record.reported && record.last.state() != health.state() && record.last.state() != v1::OPER_STATE_UNKNOWN &&
      health.state() != v1::OPER_STATE_UNKNOWN) {
    record.state_changes_ms.push_back(now_unix_ms);
  }
  while (!record.state_changes_ms.empty() && now_unix_ms - record.state_changes_ms.front() > thresholds_.flap_window_ms) {
    record.state_changes_ms.pop_front();
  }
  record.reported = true;
  record.last = health;
  record.last_at_ms = now_unix_ms;
  const v1::LinkVerdict verdict =
      NearVerdict(record, record.baseline.CurrentStats(now_unix_ms), now_unix_ms, /*detail=*/nullptr);
  if (verdict != record.near) {
    record.near = verdict;
    record.near_since_ms = now_unix_ms;
  }
  // The baseline learns what is normal: up, measured, and not judged slow.
  if (health.state() == v1::OPER_STATE_UP && health.rtt_us() > 0 && verdict != v1::LINK_VERDICT_SLOW) {
    record.baseline.Add(now_unix_ms, health.rtt_us());
  }
}

v1::LinkVerdict LinkJudge::PlaneVerdict(const PlaneRecord& record, int64_t now_unix_ms, uint32_t* changes) const {
  *changes = static_cast<uint32_t>(std::count_if(record.state_changes_ms.begin(), record.state_changes_ms.end(),
                                                 [&](int64_t at) { return now_unix_ms - at <= thresholds_.flap_window_ms; }));
  if (record.last == v1::OPER_STATE_UNKNOWN) return v1::LINK_VERDICT_UNKNOWN;
  return *changes >= thresholds_.flap_changes ? v1::LINK_VERDICT_FLAPPING : v1::LINK_VERDICT_HEALTHY;
}

void LinkJudge::ObservePlane(const std::string& facility_id, const v1::FabricPlaneHealth& health,
                             int64_t now_unix_ms) {
  PlaneRecord& record = planes_[{facility_id, health.plane()}];
  if (record.last != v1::OPER_STATE_UNKNOWN && health.state() != v1::OPER_STATE_UNKNOWN &&
      record.last != health.state()) {
    record.state_changes_ms.push_back(now_unix_ms);
  }
  while (!record.state_changes_ms.empty() && now_unix_ms - record.state_changes_ms.front() > thresholds_.flap_window_ms) {
    record.state_changes_ms.pop_front();
  }
  record.last = health.state();
  uint32_t changes = 0;
  const v1::LinkVerdict verdict = PlaneVerdict(record, now_unix_ms, &changes);
  if (verdict != record.verdict) {
    record.verdict = verdict;
    record.since_ms = now_unix_ms;
  }
}

std::vector<v1::PlaneAssessment> LinkJudge::AssessPlanes(int64_t now_unix_ms) const {
  std::vector<v1::PlaneAssessment> assessments;
  for (const auto& [key, record] : planes_) {
    v1::PlaneAssessment& assessment = assessments.emplace_back();
    assessment.set_facility_id(key.first);
    assessment.set_plane(key.second);
    uint32_t changes = 0;
    const v1::LinkVerdict verdict = PlaneVerdict(record, now_unix_ms, &changes);
    assessment.set_verdict(verdict);
    assessment.set_since_unix_ms(verdict == record.verdict ? record.since_ms : now_unix_ms);
    assessment.set_state_changes(changes);
    assessment.set_detail(absl::StrCat("fabric manager of ", key.first, ": ", changes, " state changes of plane ",
                                       key.second, " in ", thresholds_.flap_window_ms / 1000, " s"));
  }
  return assessments;
}

void LinkJudge::ObservePath(PathObservation path) {
  if (path.id.empty()) return;
  paths_[path.id] = std::move(path);
}

std::map<std::string, std::vector<std::string>> LinkJudge::BlamedByPaths(int64_t now_unix_ms) const {
  std::map<std::string, double> votes;
  std::map<std::string, std::vector<std::string>> paths_through;
  for (const auto& [id, path] : paths_) {
    if (!path.bad || path.link_ids.empty() || now_unix_ms - path.at_unix_ms > thresholds_.path_max_age_ms) continue;
    for (const std::string& link : path.link_ids) {
      votes[link] += 1.0 / path.link_ids.size();
      paths_through[link].push_back(id);
    }
  }
  std::map<std::string, std::vector<std::string>> blamed;
  for (const auto& [link, through] : paths_through) {
    if (through.size() < thresholds_.min_bad_paths) continue;
    // No link of the same paths may collect more votes: the one they share
    // most is the culprit (007), not every link on them.
    bool top = true;
    for (const std::string& path_id : through) {
      for (const std::string& other : paths_.at(path_id).link_ids) {
        if (votes[other] > votes[link] + 1e-9) top = false;
      }
    }
    if (top) blamed[link] = through;
  }
  return blamed;
}

v1::LinkAssessment LinkJudge::AssessRecord(const std::string& link_id, const LinkRecord& record,
                                           const std::map<std::string, std::vector<std::string>>& blamed,
                                           int64_t now_unix_ms) const {
  v1::LinkAssessment assessment;
  assessment.set_link_id(link_id);
  assessment.set_reverse_link_id(record.reverse_link_id);
  assessment.set_rtt_us(record.last.rtt_us());
  assessment.set_loss_ratio(record.last.loss_ratio());
  if (auto stats = record.baseline.Stats(now_unix_ms)) {
    assessment.set_baseline_rtt_us(stats->median_rtt_us);
    assessment.set_baseline_mad_us(stats->mad_us);
    assessment.set_baseline_minutes(stats->minutes);
  }
  assessment.set_state_changes(static_cast<uint32_t>(
      std::count_if(record.state_changes_ms.begin(), record.state_changes_ms.end(),
                    [&](int64_t at) { return now_unix_ms - at <= thresholds_.flap_window_ms; })));

  std::string detail;
  const v1::LinkVerdict near = NearVerdict(record, now_unix_ms, &detail);
  auto add_evidence = [&](v1::VerdictEvidence::Source source, std::string observer, v1::LinkVerdict verdict,
                          std::string text) {
    v1::VerdictEvidence& evidence = *assessment.add_evidence();
    evidence.set_source(source);
    evidence.set_observer(std::move(observer));
    evidence.set_verdict(verdict);
    evidence.set_detail(std::move(text));
  };
  auto facility = [&](const std::string& id) {
    auto it = link_facility_.find(id);
    return it != link_facility_.end() ? it->second : std::string();
  };
  add_evidence(v1::VerdictEvidence::SOURCE_NEAR_PROBES, facility(link_id), near, detail);

  v1::LinkVerdict far = v1::LINK_VERDICT_UNKNOWN;
  if (auto reverse = links_.find(record.reverse_link_id); reverse != links_.end()) {
    std::string far_detail;
    far = NearVerdict(reverse->second, now_unix_ms, &far_detail);
    add_evidence(v1::VerdictEvidence::SOURCE_FAR_PROBES, facility(record.reverse_link_id), far,
                 absl::StrCat("reverse link ", record.reverse_link_id, ": ", far_detail));
  }
  const auto by_paths = blamed.find(link_id);
  if (by_paths != blamed.end()) {
    add_evidence(v1::VerdictEvidence::SOURCE_PATHS, absl::StrJoin(by_paths->second, ", "), v1::LINK_VERDICT_SLOW,
                 absl::StrCat(by_paths->second.size(), " bad paths share this link and no other link of theirs more"));
  }

  // The verdict can change with time alone (a report ages out): then it
  // began with the last report.
  const int64_t near_since = near == record.near ? record.near_since_ms : record.last_at_ms;
  if (IsGray(near)) {
    assessment.set_verdict(near);
    assessment.set_since_unix_ms(near_since);
    assessment.set_confirmed(IsGray(far) || by_paths != blamed.end());
  } else if (by_paths != blamed.end()) {
    // The probes see nothing, the paths do: blamed on their evidence alone.
    assessment.set_verdict(v1::LINK_VERDICT_SLOW);
    int64_t since = now_unix_ms;
    for (const std::string& path_id : by_paths->second) since = std::min(since, paths_.at(path_id).at_unix_ms);
    assessment.set_since_unix_ms(since);
    assessment.set_confirmed(true);
  } else {
    assessment.set_verdict(near);
    assessment.set_since_unix_ms(near_since);
  }
  return assessment;
}

std::vector<v1::LinkAssessment> LinkJudge::Assess(int64_t now_unix_ms) const {
  const auto blamed = BlamedByPaths(now_unix_ms);
  std::vector<const std::pair<const std::string, LinkRecord>*> by_id;
  by_id.reserve(links_.size());
  for (const auto& entry : links_) by_id.push_back(&entry);
  std::sort(by_id.begin(), by_id.end(), [](const auto* a, const auto* b) { return a->first < b->first; });
  std::vector<v1::LinkAssessment> assessments;
  assessments.reserve(by_id.size());
  for (const auto* entry : by_id) assessments.push_back(AssessRecord(entry->first, entry->second, blamed, now_unix_ms));
  return assessments;
}

std::optional<v1::LinkAssessment> LinkJudge::AssessLink(const std::string& link_id, int64_t now_unix_ms) const {
  auto it = links_.find(link_id);
  if (it == links_.end()) return std::nullopt;
  return AssessRecord(link_id, it->second, BlamedByPaths(now_unix_ms), now_unix_ms);
}

std::vector<v1::RttBaseline> LinkJudge::TakeChangedBaselines() {
  std::vector<v1::RttBaseline> changed;
  for (auto& [id, record] : links_) {
    if (record.baseline.TakeChanged()) changed.push_back(record.baseline.ToProto(id));
  }
  std::sort(changed.begin(), changed.end(),
            [](const v1::RttBaseline& a, const v1::RttBaseline& b) { return a.link_id() < b.link_id(); });
  return changed;
}

void LinkJudge::RestoreBaseline(const v1::RttBaseline& stored) {
  auto it = links_.find(stored.link_id());
  if (it != links_.end()) it->second.baseline.Restore(stored);
}

}  // namespace geodesic::pathcomp::health
