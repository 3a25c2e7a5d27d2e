#include "pathcomp/service/intent_admission.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "pathcomp/solver/impact.h"

namespace geodesic::pathcomp {

IntentAdmissionPolicy::IntentAdmissionPolicy(CheckIntent check_intent, DrainImpact drain_impact)
    : check_intent_(std::move(check_intent)), drain_impact_(std::move(drain_impact)) {}

IntentAdmission IntentAdmissionPolicy::Admit(const v1::AddIntentRequest& request, tls::Role role,
                                             int64_t now_unix_ms) const {
  const v1::Intent& intent = request.intent();
  IntentAdmission admission;
  absl::Status& result = admission.status;
  result = check_intent_(intent);
  if (result.ok() && intent.automatic()) {
    result = absl::InvalidArgumentError("automatic is set by pathcomp's automatic drainer only");
  }
  if (result.ok() && intent.has_metric_override()) {
    const int64_t expires = intent.metric_override().expires_at_unix_ms();
    if (role < tls::Role::kAdmin) {
      result = absl::PermissionDeniedError("metric overrides need the admin role");
    } else if (expires != 0 && expires <= now_unix_ms) {
      result = absl::InvalidArgumentError("the metric override expires in the past");
    }
  }
  if (result.ok() && request.force()) {
    if (role < tls::Role::kAdmin) {
      result = absl::PermissionDeniedError("force needs the admin role");
    } else if (intent.reason().empty()) {
      result = absl::InvalidArgumentError("a forced change needs a reason");
    }
  }
  if (!result.ok()) return admission;
  const absl::StatusOr<double> limit = UtilizationLimit(request.utilization_limit());
  result = limit.status();
  if (!result.ok() || !intent.has_drain()) return admission;
  absl::StatusOr<v1::Impact> impact = drain_impact_(intent, *limit);
  if (!impact.ok()) {
    result = impact.status();
    return admission;
  }
  const std::vector<std::string> refusals = DrainRefusals(*impact);
  for (const std::string& refusal : refusals) impact->add_refusals(refusal);
  // A dry run reports refusals in the impact (an error status would carry no
  // response); the drain itself is refused.
  if (!refusals.empty() && !request.force() && !request.dry_run()) {
    result = absl::FailedPreconditionError(absl::StrCat("drain refused by the pre-check: ",
                                                        absl::StrJoin(refusals, "; "),
                                                        " (an admin may force it, with a reason)"));
  }
  admission.impact = *std::move(impact);
  return admission;
}

}  // namespace geodesic::pathcomp
