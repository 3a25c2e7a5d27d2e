#pragma once
// Absorbs a failure without an LP. Less capacity never lowers the optimal
// utilization, so after a failure the bound the last run proved still holds;
// if what the failure broke can be routed over the capacity left below that
// bound (within the gap), the result is optimal and no LP has to run. Most
// single-link failures in a well-provisioned backbone are of that kind: only
// a failure on or next to the bottleneck needs the column generation.
//
// When it does not fit, the failure moved the optimum; the last LP's link
// prices, with the failed arcs closed, often prove the new one outright
// (PriceBound): a failed link of the bottleneck cut leaves its price to the
// cut's survivors, and the absorber then routes at that bound.
//
// Internal to pathcomp/solver. Pure; thread-compatible.
#include <optional>
#include <span>
#include <vector>

#include "pathcomp/solver/internal/path_master.h"

namespace geodesic::pathcomp::internal {

// For a utilization phase (`spec`): routes the flow every group is missing
// (its demand less what its open paths carry) so that no open arc carries
// more than arc_upper + arc_scale * `utilization`, one path at a time along
// the cheapest path with room under `arc_weight` (the last link prices, so
// the bottlenecks are avoided; latency breaks the ties). On success the
// groups hold the new flows (a changed group's basis statuses for this
// phase are forgotten) and the result is the per-arc load of all groups;
// otherwise nothing changed and the result is empty.
[[nodiscard]] std::optional<std::vector<double>> AbsorbAtUtilization(const Graph& graph, const PhaseSpec& spec,
                                                                     std::span<FlowGroup* const> groups,
                                                                     const std::vector<double>& arc_weight,
                                                                     double utilization);

// The Lagrangian lower bound on a utilization phase's optimum under link
// prices w >= 0 (arc_weight; closed arcs are left out):
//   U* >= (sum_g demand_g * dist_w(g) - sum_a w_a * arc_upper_a) / sum_a w_a * arc_scale_a
// and never below spec.utilization_floor. 0 when no open arc is priced.
[[nodiscard]] double PriceBound(const Graph& graph, const PhaseSpec& spec, std::span<FlowGroup* const> groups,
                                const std::vector<double>& arc_weight);

}  // namespace geodesic::pathcomp::internal
