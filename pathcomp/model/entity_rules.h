#pragma once
// What the model accepts: the rules a workload or an intent must follow, on
// its own and against the entities it refers to. Pure functions of an
// Entities value: the model applies them under its lock to what it holds, and
// an import applies them to what it would leave, before changing anything.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "geodesic/v1/model.pb.h"
#include "pathcomp/model/entities.h"

namespace geodesic::pathcomp {

// A valid workload id, an elephant flow from a known facility to a CIDR prefix
// with a positive demand, or a chain from a known facility calling known
// services within a positive budget. Whether the id is taken is not checked.
// InvalidArgument or NotFound (an unknown facility or service).
[[nodiscard]] absl::Status CheckWorkload(const Entities& entities, const v1::Workload& workload);

// What the intent acts on exists and its parameters are in range: a drained
// link, node or facility (and plane of its fabric), a metric override's link
// and metric, a pin's chain and the facilities it names.
[[nodiscard]] absl::Status CheckIntentTarget(const Entities& entities, const v1::Intent& intent);

// Everything AddIntent requires of a new intent: a valid, unused id, its
// target (CheckIntentTarget), a reason of at most 1024 bytes, and no intent
// that already does the same (the same drain, a pin of the same workload, an
// override of the same link): AlreadyExists naming it.
[[nodiscard]] absl::Status CheckNewIntent(const Entities& entities, const v1::Intent& intent);

// The intent that pins `workload_id`, if any.
std::optional<std::string> PinningIntent(const Entities& entities, const std::string& workload_id);

// The ids of metric overrides whose expiry is at or before `now_unix_ms`.
std::vector<std::string> ExpiredIntents(const Entities& entities, int64_t now_unix_ms);

// The first workload or intent of `next` that `next`'s inventory no longer
// supports, as the FailedPrecondition an import answers; OK when none.
// `replacing_workloads` only changes the advice the message gives.
[[nodiscard]] absl::Status CheckReferencesAfterImport(const Entities& next, bool replacing_workloads);

}  // namespace geodesic::pathcomp
