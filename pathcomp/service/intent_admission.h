#pragma once
// Whether an operator's AddIntent may go ahead: the admission chain of the
// Operator API, apart from storing, replicating, re-planning and auditing.
// In order, the first refusal wins:
//   1. the model's own check of the intent (unknown target, bad values ...);
//      `automatic` is pathcomp's own mark (InvalidArgument from an operator);
//   2. a metric override needs the admin role (PermissionDenied) and must not
//      expire in the past (InvalidArgument);
//   3. force needs the admin role (PermissionDenied) and a reason (InvalidArgument);
//   4. the utilization limit must be valid (UtilizationLimit, InvalidArgument);
//   5. a drain is pre-checked: the plan with the drain against the plan
//      without (impact.h). Refusals refuse the drain (FailedPrecondition)
//      unless it is forced or a dry run; a dry run reports them in the impact.
// Pure: no I/O, no clock (the caller gives `now_unix_ms`), no threads of its
// own; thread-safe when the two callables are.
#include <functional>
#include <optional>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "geodesic/v1/operator.pb.h"
#include "tls/identity.h"

namespace geodesic::pathcomp {

struct IntentAdmission {
  // OK: the intent may be stored (for a dry run: nothing more to do).
  absl::Status status;
  // A drain's pre-check, with its refusals; nullopt for other intents or when
  // the chain stopped before the pre-check.
  std::optional<v1::Impact> impact;
};

class IntentAdmissionPolicy {
 public:
  // What the model would refuse `intent` for (Model::CheckIntent).
  using CheckIntent = std::function<absl::Status(const v1::Intent& intent)>;
  // The impact of adding `intent` on the current plan, at `utilization_limit`
  // (a fraction of capacity, already validated).
  using DrainImpact =
      std::function<absl::StatusOr<v1::Impact>(const v1::Intent& intent, double utilization_limit)>;

  IntentAdmissionPolicy(CheckIntent check_intent, DrainImpact drain_impact);

  // Decides for `request` made by an operator with `role` at `now_unix_ms`
  // (Unix time, ms). Calls `drain_impact` only for a drain that passed 1-4.
  [[nodiscard]] IntentAdmission Admit(const v1::AddIntentRequest& request, tls::Role role,
                                      int64_t now_unix_ms) const;

 private:
  CheckIntent check_intent_;
  DrainImpact drain_impact_;
};

}  // namespace geodesic::pathcomp
