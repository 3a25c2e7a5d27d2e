#include "pathcomp/solver/internal/failure_absorber.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <utility>

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
  size_t first_arc, arc_count;  // its path, in the placed arcs
  double flow;
};

}  // namespace

FailureAbsorber::FailureAbsorber(const Graph& graph, const PhaseSpec& spec, std::span<FlowGroup* const> groups,
                                 const std::vector<double>& arc_weight)
    : graph_(graph), spec_(spec), groups_(groups), arc_weight_(arc_weight) {
  const int arcs = static_cast<int>(graph.arc_src.size());
  for (int a = 0; a < arcs; ++a) {
    if (spec.arc_open[a] && arc_weight[a] > 0) priced_bits_ |= ArcBit(a);
  }
  auto price_of = [&](const PathColumn& path) {
    if ((path.arc_bits & priced_bits_) == 0) return 0.0;
    double sum = 0;
    for (int arc : path.arcs) sum += arc_weight[arc];
    return sum;
  };
  const OpenArcs open_arcs(spec.arc_open);
  load_.assign(arcs, 0);
  missing_.assign(groups.size(), 0);
  free_path_.assign(groups.size(), 0);
  for (size_t g = 0; g < groups.size(); ++g) {
    double routed = 0;
    for (const PathColumn& path : groups[g]->paths) {
      const bool open = open_arcs.Allow(path);
      if (open && !free_path_[g] && price_of(path) == 0) free_path_[g] = 1;
      if (path.flow <= 0) continue;
      if (!open) {
        flow_on_closed_arc_ = true;
        continue;
      }
      routed += path.flow;
      for (int arc : path.arcs) load_[arc] += path.flow;
    }
    const double short_by = spec.group_upper[g] - routed;
    if (short_by > kMissingTolerance * spec.group_upper[g]) missing_[g] = short_by;
  }
}

double FailureAbsorber::PriceBound() const {
  double scale = 0, numerator = 0;
  for (size_t a = 0; a < arc_weight_.size(); ++a) {
    if (!spec_.arc_open[a] || arc_weight_[a] <= 0) continue;
    scale += arc_weight_[a] * spec_.arc_scale[a];
    numerator -= arc_weight_[a] * spec_.arc_upper[a];
  }
  if (scale <= 0) return spec_.utilization_floor;
  // Only groups without an open path of price 0 add to the sum; prices sit
  // on a few bottleneck links, so most groups need no search.
  std::vector<std::pair<int, int>> searched;  // (src, position)
  searched.reserve(groups_.size());
  for (size_t g = 0; g < groups_.size(); ++g) {
    if (!free_path_[g] && spec_.group_upper[g] > 0) searched.emplace_back(groups_[g]->src, static_cast<int>(g));
  }
  std::sort(searched.begin(), searched.end());
  // Plain Dijkstra on the prices alone (no paths, no latency ties): the
  // bound needs distances only.
  std::vector<double> distance(graph_.node_count);
  std::vector<std::pair<double, int>> heap;  // (distance, node), a min-heap by std::greater
  for (size_t begin = 0; begin < searched.size();) {
    const int source = searched[begin].first;
    std::fill(distance.begin(), distance.end(), kInfinity);
    distance[source] = 0;
    heap.assign(1, {0.0, source});
    while (!heap.empty()) {
      std::pop_heap(heap.begin(), heap.end(), std::greater<>());
      const auto [at, node] = heap.back();
      heap.pop_back();
      if (at != distance[node]) continue;  // stale
      for (int i = graph_.out_offsets[node]; i < graph_.out_offsets[node + 1]; ++i) {
        const int arc = graph_.out_arcs[i];
        if (!spec_.arc_open[arc]) continue;
        const double next = at + arc_weight_[arc];
        if (next < distance[graph_.arc_dst[arc]]) {
          distance[graph_.arc_dst[arc]] = next;
          heap.emplace_back(next, graph_.arc_dst[arc]);
          std::push_heap(heap.begin(), heap.end(), std::greater<>());
        }
      }
    }
    for (; begin < searched.size() && searched[begin].first == source; ++begin) {
      const int g = searched[begin].second;
      // Unreachable: the group has no open path and is left out of the phase.
      if (std::isfinite(distance[groups_[g]->dst])) numerator += spec_.group_upper[g] * distance[groups_[g]->dst];
    }
  }
  return std::max(spec_.utilization_floor, numerator / scale);
}

std::optional<std::vector<double>> FailureAbsorber::AbsorbAt(double utilization) {
  if (flow_on_closed_arc_) return std::nullopt;
  const Graph& graph = graph_;
  const PhaseSpec& spec = spec_;
  const int arcs = static_cast<int>(graph.arc_src.size());
  std::vector<double> load = load_;

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

  // The groups missing flow, by source: one search serves a source's groups
  // for as long as the path it found for the next one still has room (room
  // only shrinks, so such a path is still a cheapest one with room).
  std::vector<std::pair<int, int>> short_groups;  // (src, position)
  short_groups.reserve(groups_.size());
  for (size_t g = 0; g < groups_.size(); ++g) {
    if (missing_[g] > 0) short_groups.emplace_back(groups_[g]->src, static_cast<int>(g));
  }
  std::sort(short_groups.begin(), short_groups.end());
  if (short_groups.empty()) return load;  // nothing was broken
  PricedShortestPaths paths(graph);
  std::vector<int> targets;
  targets.reserve(short_groups.size());
  std::vector<Placement> placements;
  placements.reserve(short_groups.size());
  std::vector<int> placed_arcs;  // the placements' paths, one after another
  std::vector<int> path;
  for (size_t begin = 0; begin < short_groups.size();) {
    const int source = short_groups[begin].first;
    size_t end = begin;
    while (end < short_groups.size() && short_groups[end].first == source) ++end;
    bool searched = false;  // the last search still holds
    for (size_t i = begin; i < end; ++i) {
      const int g = short_groups[i].second;
      const int dst = groups_[g]->dst;
      double left = missing_[g];
      for (int placed = 0; left > 0;) {
        if (placed == kMaxPathsPerGroup) return std::nullopt;
        if (!searched) {
          targets.clear();
          for (size_t j = i; j < end; ++j) targets.push_back(groups_[short_groups[j].second]->dst);
          paths.Run(source, arc_weight_, has_room, targets);
          searched = true;
        }
        if (!paths.Reached(dst)) return std::nullopt;
        paths.PathTo(dst, path);
        // Filled arcs only remove paths, so the search's path is still a
        // cheapest one with room as long as all of its arcs have room.
        if (!std::all_of(path.begin(), path.end(), [&](int arc) { return has_room[arc] != 0; })) {
          searched = false;  // an earlier placement filled part of it
          continue;
        }
        double flow = left;
        for (int arc : path) flow = std::min(flow, room[arc]);
        for (int arc : path) {
          room[arc] -= flow;
          load[arc] += flow;
          has_room[arc] = room[arc] > kNoRoom;
        }
        left = left - flow <= kMissingTolerance * spec.group_upper[g] ? 0 : left - flow;
        placements.push_back({g, placed_arcs.size(), path.size(), flow});
        placed_arcs.insert(placed_arcs.end(), path.begin(), path.end());
        ++placed;
      }
    }
    begin = end;
  }

  for (const Placement& placement : placements) {
    FlowGroup& group = *groups_[placement.group];
    const std::span<const int> arcs(placed_arcs.data() + placement.first_arc, placement.arc_count);
    auto known = std::find_if(group.paths.begin(), group.paths.end(), [&](const PathColumn& column) {
      return std::equal(column.arcs.begin(), column.arcs.end(), arcs.begin(), arcs.end());
    });
    if (known == group.paths.end()) {
      group.paths.emplace_back(std::vector<int>(arcs.begin(), arcs.end()));
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
