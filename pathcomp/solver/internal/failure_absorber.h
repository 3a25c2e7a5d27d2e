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
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "pathcomp/solver/internal/path_master.h"

namespace geodesic::pathcomp::internal {

// One utilization phase (`spec`) after a failure: the groups' flows over
// open paths as they are, and what each group misses of its demand. Reads
// the groups once; both questions below reuse that.
class FailureAbsorber {
 public:
  // `arc_weight`: the last LP's link prices (>= 0); all must outlive this.
  FailureAbsorber(const Graph& graph, const PhaseSpec& spec, std::span<FlowGroup* const> groups,
                  const std::vector<double>& arc_weight);

  // The Lagrangian lower bound on the phase's optimum under the prices
  // (closed arcs are left out):
  //   U* >= (sum_g demand_g * dist_w(g) - sum_a w_a * arc_upper_a) / sum_a w_a * arc_scale_a
  // and never below spec.utilization_floor.
  [[nodiscard]] double PriceBound() const;

  // Routes the flow every group misses so that no open arc carries more
  // than arc_upper + arc_scale * `utilization`, one path at a time along the
  // cheapest path with room under the prices (the last LP's, so the
  // bottlenecks are avoided; latency breaks the ties). On success the groups
  // hold the new flows (a changed group's basis statuses for this phase are
  // forgotten) and the result is the per-arc load of all groups; otherwise
  // nothing changed and the result is empty. Call at most once with success.
  [[nodiscard]] std::optional<std::vector<double>> AbsorbAt(double utilization);

 private:
  const Graph& graph_;
  const PhaseSpec& spec_;
  std::span<FlowGroup* const> groups_;
  const std::vector<double>& arc_weight_;
  // Flow sits on a closed arc: not a failure's leftover, nothing to absorb.
  bool flow_on_closed_arc_ = false;
  std::vector<double> load_;     // per arc, of the flows over open paths
  std::vector<double> missing_;  // per group
  // Per group: it has an open path of price 0 (its distance is 0).
  std::vector<char> free_path_;
  uint64_t priced_bits_ = 0;  // ArcBit of the open arcs with a price
};

}  // namespace geodesic::pathcomp::internal
