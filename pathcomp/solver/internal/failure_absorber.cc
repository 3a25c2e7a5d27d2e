#include "pathcomp/solver/internal/failure_absorber.h"

#include <algorithm>
#include <cmath>

#include "pathcomp/solver/internal/priced_shortest_paths.h"

namespace geodesic::pathcomp::internal {
namespace {

// What a group may miss, relative to its demand, and still count as routed
// (the LP's own feasibility tolerance is of this order).
constexpr double kMissingTolerance = 1e-9;
// Room below this (solver units: fractions of the largest capacity) is no
// room: paths through it would only split flows into slivers.
constexpr double kNoRoom = 1e-9;
// Paths one group may need before the attempt is given up (the LP is then
// the better tool).
constexpr int kMaxPathsPerGroup = 16;

struct Placement {
  int group;  // position in the run's groups
  std::vector<int> arcs;
  double flow;
};

}  // namespace

std::optional<std::vector<double>> AbsorbAtUtilization(const Graph& graph, const PhaseSpec& spec,
                                                       std::span<FlowGroup* const> groups,
                                                       const std::vector<double>& arc_weight,
                                                       double utilization) {
  const int arcs = static_cast<int>(graph.arc_src.size());
  const OpenArcs open_arcs(spec.arc_open);
  std::vector<double> load(arcs, 0);
  std::vector<double> missing(groups.size(), 0);
  for (size_t g = 0; g < groups.size(); ++g) {
    double routed = 0;
    for (const PathColumn& path : groups[g]->paths) {
      if (path.flow <= 0) continue;
      if (!open_arcs.Allow(path)) return std::nullopt;  // flow on a closed arc: not a failure's leftover
      routed += path.flow;
      for (int arc : path.arcs) load[arc] += path.flow;
    }
    const double short_by = spec.group_upper[g] - routed;
    if (short_by > kMissingTolerance * spec.group_upper[g]) missing[g] = short_by;
  }

  // Room per arc below the utilization; what is already there must fit.
  std::vector<double> room(arcs, 0);
  std::vector<char> has_room(arcs, 0);
  for (int a = 0; a < arcs; ++a) {
    if (!spec.arc_open[a]) continue;
    const double limit = spec.arc_upper[a] + spec.arc_scale[a] * utilization;
    room[a] = limit - load[a];
    if (room[a] < -kMissingTolerance * std::max(1.0, limit)) return std::nullopt;
    has_room[a] = room[a] > kNoRoom;
  }

  PricedShortestPaths paths(graph);
  std::vector<Placement> placements;
  for (size_t g = 0; g < groups.size(); ++g) {
    const FlowGroup& group = *groups[g];
    double left = missing[g];
    for (int tries = 0; left > 0; ++tries) {
      if (tries == kMaxPathsPerGroup) return std::nullopt;
      const int target[] = {group.dst};
      paths.Run(group.src, arc_weight, has_room, target);
      if (!paths.Reached(group.dst)) return std::nullopt;
      std::vector<int> path = paths.PathTo(group.dst);
      double flow = left;
      for (int arc : path) flow = std::min(flow, room[arc]);
      for (int arc : path) {
        room[arc] -= flow;
        load[arc] += flow;
        has_room[arc] = room[arc] > kNoRoom;
      }
      left = left - flow <= kMissingTolerance * spec.group_upper[g] ? 0 : left - flow;
      placements.push_back({static_cast<int>(g), std::move(path), flow});
    }
  }

  for (Placement& placement : placements) {
    FlowGroup& group = *groups[placement.group];
    auto known = std::find_if(group.paths.begin(), group.paths.end(),
                              [&](const PathColumn& column) { return column.arcs == placement.arcs; });
    if (known == group.paths.end()) {
      group.paths.emplace_back(std::move(placement.arcs));
      known = group.paths.end() - 1;
    }
    known->flow += placement.flow;
    // The last basis does not know these flows: the next LP starts them afresh.
    for (PathColumn& path : group.paths) path.status[spec.phase] = kNoStatus;
    group.row_status[spec.phase] = kNoStatus;
  }
  return load;
}

}  // namespace geodesic::pathcomp::internal
