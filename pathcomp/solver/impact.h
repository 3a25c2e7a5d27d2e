#pragma once
// What a change would do to the plan, before anyone makes it: `tectl whatif`
// and the drain pre-check. The change is applied to a copy of the model's
// view, both views are planned the same way (Planner::Hypothetical), and the
// two plans are compared workload by workload and link by link.
// Pure: no I/O, no clock, no threads.
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "geodesic/v1/operator.pb.h"
#include "geodesic/v1/plan.pb.h"
#include "pathcomp/solver/snapshot.h"

namespace geodesic::pathcomp {

// The failures a what-if may ask for at once.
inline constexpr int kMaxWhatIfFailures = 64;

// Marks what `failures` take out as failed in `view`: a link and its reverse
// (one fiber), every link of an SRLG or a node, a whole facility (its links,
// and its service replicas), one plane of a facility's fabric. NotFound for an
// id the view does not have, InvalidArgument for a scope without kind or id,
// or a plane the fabric does not have; `view` is then unchanged.
[[nodiscard]] absl::Status ApplyFailures(const std::vector<v1::FailureScope>& failures, ModelView& view);

// The ids of the links `scope` takes down: a link and its reverse (one
// fiber), every link of an SRLG, of a node or touching a facility; none for a
// plane, or for an id no link has.
std::set<std::string> LinksTakenDown(const std::vector<v1::Link>& links, const v1::FailureScope& scope);

// "link iad-ord-1", "plane iad:2", ...: how a failure scope reads in messages.
std::string DescribeFailure(const v1::FailureScope& failure);

// The limit a request gives, defaulted (0 -> 1.0) and checked: (0, 10].
[[nodiscard]] absl::StatusOr<double> UtilizationLimit(double requested);

// `before` and `after` planned from views that differ only by the change;
// `snapshot` is `before`'s (for the elephant flows' ends). Fills everything
// but plan_generation and refusals.
v1::Impact CompareImpact(const v1::Plan& before, const v1::Plan& after, const Snapshot& snapshot,
                         double utilization_limit);

// Why a drain with this impact must not go ahead without --force: workloads
// cut, links over the limit (and worse than before). Empty when acceptable.
std::vector<std::string> DrainRefusals(const v1::Impact& impact);

}  // namespace geodesic::pathcomp
