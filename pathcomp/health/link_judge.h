#pragma once
// Finds gray failures: judges every link against its own baseline and names
// the links to blame, each with the evidence its verdict rests on.
//
// Per link, from its agent's reports (the near end):
//   slow      the reported RTT is over the baseline by slow_factor AND by
//             slow_floor_us AND by slow_mad_multiplier MADs (a noisy link
//             needs a bigger excursion than a quiet one);
//   lossy     the reported loss ratio is at or over lossy_ratio;
//   flapping  its oper state changed flap_changes times or more within
//             flap_window_ms;
//   healthy   none of these; unknown before the first report, or while the
//             agent reports the state unknown. Agents report changes only
//             (a delta stream): a link's last report stands until the next.
// Flapping wins over lossy over slow when several hold.
//
// Localization (the idea of NetBouncer and 007): a link is *confirmed* only
// with evidence from both ends (its reverse link, the same fiber probed from
// the other facility, is not healthy either; an echo probe cannot tell the
// direction of a loss or a delay, so both ends see a real one), or from
// paths: at least min_bad_paths end-to-end paths measured bad share it, and
// no link of those paths collects more of their votes (each bad path gives
// 1/length to each of its links). Evidence from one end alone leaves the
// link suspected, shown but not confirmed: a broken prober is not a broken
// fiber.
//
// Pure (time comes in as arguments, Unix ms); thread-compatible.
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "geodesic/v1/health.pb.h"
#include "geodesic/v1/model.pb.h"
#include "pathcomp/health/rtt_baseline.h"

namespace geodesic::pathcomp::health {

// pathcomp's config `gray_failures:` (pathcomp_config.h), with its defaults.
struct VerdictThresholds {
  double slow_factor = 1.5;
  uint64_t slow_floor_us = 2'000;
  double slow_mad_multiplier = 5;
  double lossy_ratio = 0.02;
  uint32_t flap_changes = 4;
  int64_t flap_window_ms = 600'000;
  uint32_t min_bad_paths = 2;
  int64_t path_max_age_ms = 60'000;
  BaselineOptions baseline{};
};

// InvalidArgument naming the first bad threshold.
[[nodiscard]] absl::Status ValidateThresholds(const VerdictThresholds& thresholds);

// An end-to-end measurement of one path (e.g. a chain's call, measured by the
// caller): the links it crossed and whether it was bad (over its plan).
struct PathObservation {
  std::string id;  // "chain c1 hop 2": named in the evidence
  std::vector<std::string> link_ids;
  bool bad = false;
  int64_t at_unix_ms = 0;
};

// "healthy", "slow", "lossy", "flapping", "unknown".
std::string VerdictName(v1::LinkVerdict verdict);
// Slow, lossy or flapping: a gray failure (unknown and healthy are not).
bool IsGray(v1::LinkVerdict verdict);

class LinkJudge {
 public:
  explicit LinkJudge(VerdictThresholds thresholds = {});

  // The inventory's links (for reverse links and capacity of the tables).
  // Links no longer listed are forgotten; their baselines too.
  void SetLinks(const std::vector<v1::Link>& links);
  // One report of `link_id` (an unknown link is ignored), received at
  // `now_unix_ms`: feeds the baseline unless the report is judged slow.
  void Observe(const std::string& link_id, const v1::LinkHealth& health, int64_t now_unix_ms);
  // One end-to-end measurement; the newest per id counts, until it is older
  // than path_max_age_ms.
  void ObservePath(PathObservation path);

  // One report of a fabric plane of `facility_id` (its fabric manager's,
  // relayed by the agent). Planes are judged flapping or healthy.
  void ObservePlane(const std::string& facility_id, const v1::FabricPlaneHealth& health, int64_t now_unix_ms);
  // Every reported plane's assessment, by facility and plane.
  std::vector<v1::PlaneAssessment> AssessPlanes(int64_t now_unix_ms) const;

  // Every known link's assessment at `now_unix_ms`, by link id.
  std::vector<v1::LinkAssessment> Assess(int64_t now_unix_ms) const;
  // One link's; nullopt for an unknown link.
  std::optional<v1::LinkAssessment> AssessLink(const std::string& link_id, int64_t now_unix_ms) const;

  // Baselines to store: those with a minute closed since the last call.
  std::vector<v1::RttBaseline> TakeChangedBaselines();
  // A baseline read back from the store (unknown links are ignored).
  void RestoreBaseline(const v1::RttBaseline& stored);

  const VerdictThresholds& thresholds() const { return thresholds_; }

 private:
  struct LinkRecord {
    std::string reverse_link_id{};
    RttBaseline baseline{};
    bool reported = false;
    v1::LinkHealth last{};
    int64_t last_at_ms = 0;
    std::deque<int64_t> state_changes_ms{};  // within the flap window
    v1::LinkVerdict near = v1::LINK_VERDICT_UNKNOWN;
    int64_t near_since_ms = 0;
  };
  // The near end's verdict of `record` from its last report and its
  // baseline's `stats` at `now_unix_ms`, with its detail when `detail` is not
  // null (Observe, on every report, needs none).
  v1::LinkVerdict NearVerdict(const LinkRecord& record, const std::optional<BaselineStats>& stats,
                              int64_t now_unix_ms, std::string* detail) const;
  v1::LinkVerdict NearVerdict(const LinkRecord& record, int64_t now_unix_ms, std::string* detail) const {
    return NearVerdict(record, record.baseline.Stats(now_unix_ms), now_unix_ms, detail);
  }
  // Links blamed by paths, with the paths that blame each.
  std::map<std::string, std::vector<std::string>> BlamedByPaths(int64_t now_unix_ms) const;
  v1::LinkAssessment AssessRecord(const std::string& link_id, const LinkRecord& record,
                                  const std::map<std::string, std::vector<std::string>>& blamed,
                                  int64_t now_unix_ms) const;

  struct PlaneRecord {
    v1::OperState last = v1::OPER_STATE_UNKNOWN;
    std::deque<int64_t> state_changes_ms{};
    v1::LinkVerdict verdict = v1::LINK_VERDICT_UNKNOWN;
    int64_t since_ms = 0;
  };
  // The plane's verdict at `now_unix_ms`, with the changes counted.
  v1::LinkVerdict PlaneVerdict(const PlaneRecord& record, int64_t now_unix_ms, uint32_t* changes) const;

  VerdictThresholds thresholds_;
  // Hashed: every link of every report is looked up here (sorted where listed).
  absl::flat_hash_map<std::string, LinkRecord> links_;
  std::map<std::pair<std::string, uint32_t>, PlaneRecord> planes_;
  std::map<std::string, std::string> link_facility_;  // link -> its source facility (the observer)
  std::map<std::string, PathObservation> paths_;
};

}  // namespace geodesic::pathcomp::health
