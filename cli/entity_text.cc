#include "cli/entity_text.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/output.h"
#include "pathcomp/health/link_judge.h"

namespace geodesic::cli {

std::string IntentAction(const v1::Intent& intent) {
  switch (intent.kind_case()) {
    case v1::Intent::kDrain: return "drain";
    case v1::Intent::kPin: return "pin";
    case v1::Intent::kMetricOverride: return "metric-override";
    case v1::Intent::kAutoDrainPause: return "auto-drain-pause";
    case v1::Intent::KIND_NOT_SET: break;
  }
  return "?";
}

namespace {
std::string TargetName(const v1::Target& target) {
  switch (target.kind_case()) {
    case v1::Target::kLinkId: return absl::StrCat("link/", target.link_id());
    case v1::Target::kNodeId: return absl::StrCat("node/", target.node_id());
    case v1::Target::kFacilityId: return absl::StrCat("facility/", target.facility_id());
    case v1::Target::KIND_NOT_SET: break;
  }
  return "?";
}
}  // namespace

std::string IntentTarget(const v1::Intent& intent) {
  switch (intent.kind_case()) {
    case v1::Intent::kDrain: {
      std::string target = TargetName(intent.drain().target());
      if (intent.drain().plane_set()) absl::StrAppend(&target, " plane ", intent.drain().plane());
      return target;
    }
    case v1::Intent::kPin: {
      const v1::Pin& pin = intent.pin();
      std::string target = absl::StrCat("workload/", pin.workload_id());
      if (!pin.path_facility_ids().empty()) {
        absl::StrAppend(&target, " path ", absl::StrJoin(pin.path_facility_ids(), ">"));
      }
      if (!pin.allowed_facility_ids().empty()) {
        absl::StrAppend(&target, " within ", absl::StrJoin(pin.allowed_facility_ids(), ","));
      }
      return target;
    }
    case v1::Intent::kMetricOverride: {
      const v1::MetricOverride& override = intent.metric_override();
      std::string target = absl::StrCat("link/", override.link_id(), " metric ", override.igp_metric());
      if (override.expires_at_unix_ms() != 0) {
        absl::StrAppend(&target, " until ", FormatUnixMs(override.expires_at_unix_ms()));
      }
      return target;
    }
    case v1::Intent::kAutoDrainPause: return "automatic drains";
    case v1::Intent::KIND_NOT_SET: break;
  }
  return "?";
}

std::string AdminStateName(v1::AdminState state) {
  return state == v1::ADMIN_STATE_DRAINED ? "drained" : "up";
}

std::string WorkloadKindName(const v1::Workload& workload) {
  switch (workload.kind_case()) {
    case v1::Workload::kElephant: return "elephant";
    case v1::Workload::kChain: return "chain";
    case v1::Workload::KIND_NOT_SET: break;
  }
  return "?";
}

std::string VerdictText(v1::LinkVerdict verdict) { return pathcomp::health::VerdictName(verdict); }

std::string EvidenceSourceText(v1::VerdictEvidence::Source source) {
  switch (source) {
    case v1::VerdictEvidence::SOURCE_NEAR_PROBES: return "near-end probes";
    case v1::VerdictEvidence::SOURCE_FAR_PROBES: return "far-end probes";
    case v1::VerdictEvidence::SOURCE_PATHS: return "paths";
    default: return "?";
  }
}

std::string AutoDrainActionText(v1::AutoDrainEvent::Action action) {
  switch (action) {
    case v1::AutoDrainEvent::ACTION_DRAINED: return "drained";
    case v1::AutoDrainEvent::ACTION_UNDRAINED: return "undrained";
    case v1::AutoDrainEvent::ACTION_REFUSED: return "refused";
    case v1::AutoDrainEvent::ACTION_FAIL_OPEN: return "fail-open";
    case v1::AutoDrainEvent::ACTION_FAIL_OPEN_CLEARED: return "fail-open cleared";
    case v1::AutoDrainEvent::ACTION_HELD: return "held";
    case v1::AutoDrainEvent::ACTION_PAUSED: return "paused";
    case v1::AutoDrainEvent::ACTION_RESUMED: return "resumed";
    default: return "?";
  }
}

}  // namespace geodesic::cli
