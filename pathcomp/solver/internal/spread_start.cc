#include "pathcomp/solver/internal/spread_start.h"

#include <algorithm>
#include <cmath>

namespace geodesic::pathcomp::internal {
namespace {

// Measured with bench_plan's Cogentco (37,805 groups) and wan754 (56,736),
// and bench_solver's REPETITA networks. Highest utilization per pass:
// wan754 4.61 -> 3.06 -> 2.26 -> 1.78 -> 1.52 -> 1.35 (optimum 1.17: 6
// master rounds, 1.0 s, against 101 rounds, 12 s, from the lowest-latency
// paths); Cogentco 1.71 -> 1.02 -> 1.02, then stopped (optimum 0.998: 4
// rounds, 0.1 s, against 29, 0.7 s). Without the latency price groups
// took long detours where short ones had room: the MLU optimum's mean
// latency stretch on Abilene, GEANT, AttMpls, Deltacom and Esnet went from
// 1.05-1.14 (the lowest-latency start) to 1.11-1.29, its p95 from 1.27-1.97
// to up to 3. With it and the shortening after: mean 1.03-1.13, p95
// 1.20-1.74, the mean below the lowest-latency start's on every one of
// them, the p95 on all but AttMpls (1.30 against 1.27).
constexpr int kSpreadPasses = 5;
// A pass that lowers the highest utilization by less than this ends them.
constexpr double kLeastPassGain = 0.01;
// A group moves when its path crosses a link above this share of the
// highest utilization U (the others keep their lowest-latency paths)...
constexpr double kHotShare = 0.8;
// ...onto the path of least price: a link above kPricedShare of U costs
// exp(kSteepness (u - U) / U) per unit of its scale (one at U e^10 times one
// near 0), and every link kLatencyPrice per link of mean latency, so that a
// detour costs what it adds in latency too.
constexpr double kPricedShare = 0.5;
constexpr double kSteepness = 10;
constexpr double kLatencyPrice = 0.1;
// How much a link's load (solver units) may differ by for being summed in
// another order: a path fits where the link is full to within it.
constexpr double kSumRounding = 1e-12;

// Per arc: what the groups put on it, as the utilization the phase sees.
class ArcLoads {
 public:
  ArcLoads(const Graph& graph, const PhaseSpec& spec) : spec_(spec), load_(graph.arc_src.size(), 0) {}

  void Add(const std::vector<int>& arcs, double flow) {
    for (const int arc : arcs) load_[arc] += flow;
  }
  double Utilization(int arc) const {
    if (!spec_.arc_open[arc] || spec_.arc_scale[arc] <= 0) return 0;
    return (load_[arc] - spec_.arc_upper[arc]) / spec_.arc_scale[arc];
  }
  double Highest() const {
    double highest = 0;
    for (size_t a = 0; a < load_.size(); ++a) highest = std::max(highest, Utilization(static_cast<int>(a)));
    return highest;
  }
  // Whether `flow` more on `arc` keeps it at or below `utilization`.
  bool Fits(int arc, double flow, double utilization) const {
    return load_[arc] + flow - spec_.arc_upper[arc] <= utilization * std::max(spec_.arc_scale[arc], 0.0) + kSumRounding;
  }
  bool Fits(const std::vector<int>& arcs, double flow, double utilization) const {
    return std::all_of(arcs.begin(), arcs.end(), [&](int arc) { return Fits(arc, flow, utilization); });
  }

 private:
  const PhaseSpec& spec_;
  std::vector<double> load_;
};

}  // namespace

bool SpreadFirstPaths(const Graph& graph, const PhaseSpec& spec, std::span<FlowGroup* const> groups,
                      const std::vector<Role>& roles, const GroupsBySource& by_source, PricedShortestPaths& paths) {
  const int arcs = static_cast<int>(graph.arc_src.size());
  ArcLoads loads(graph, spec);
  for (size_t g = 0; g < groups.size(); ++g) {
    if (roles[g] != Role::kLeftOut) loads.Add(groups[g]->paths.front().arcs, spec.group_upper[g]);
  }
  double highest = loads.Highest();
  if (highest <= spec.utilization_enough) return false;
  double mean_cost_us = 0;
  for (int a = 0; a < arcs; ++a) mean_cost_us += graph.arc_cost_us[a] / arcs;
  mean_cost_us = std::max(mean_cost_us, 1e-9);
  bool spread = false;
  std::vector<double> prices(arcs, 0);
  std::vector<int> movers, targets;
  for (int pass = 0; pass < kSpreadPasses; ++pass) {
    const double before = highest;
    for (int source = 0; source < graph.node_count; ++source) {
      movers.clear();
      targets.clear();
      highest = loads.Highest();
      for (const int g : by_source.of(source)) {
        if (roles[g] == Role::kLeftOut) continue;
        const std::vector<int>& arcs_now = groups[g]->paths.front().arcs;
        if (std::none_of(arcs_now.begin(), arcs_now.end(),
                         [&](int arc) { return loads.Utilization(arc) > kHotShare * highest; })) {
          continue;
        }
        movers.push_back(g);
        targets.push_back(groups[g]->dst);
        loads.Add(arcs_now, -spec.group_upper[g]);
      }
      if (movers.empty()) continue;
      highest = loads.Highest();
      for (int a = 0; a < arcs; ++a) {
        const double utilization = loads.Utilization(a);
        prices[a] = kLatencyPrice * graph.arc_cost_us[a] / mean_cost_us;
        if (highest > 0 && utilization > kPricedShare * highest) {
          prices[a] += std::exp(kSteepness * (utilization - highest) / highest) / spec.arc_scale[a];
        }
      }
      paths.Run(source, prices, spec.arc_open, targets);
      for (const int g : movers) {
        PathColumn& path = groups[g]->paths.front();
        std::vector<int> arcs_next = paths.PathTo(groups[g]->dst);  // reached: its old path is open
        if (arcs_next != path.arcs) {
          path = PathColumn(std::move(arcs_next));
          spread = true;
        }
        loads.Add(path.arcs, spec.group_upper[g]);
      }
    }
    highest = loads.Highest();
    if (highest > before * (1 - kLeastPassGain)) break;
  }
  return spread;
}

int ShortenSinglePaths(const Graph& graph, const PhaseSpec& spec, std::span<FlowGroup* const> groups,
                       const std::vector<Role>& roles, const GroupsBySource& by_source, double utilization,
                       PricedShortestPaths& paths) {
  const int arcs = static_cast<int>(graph.arc_src.size());
  ArcLoads loads(graph, spec);
  for (size_t g = 0; g < groups.size(); ++g) {
    if (roles[g] == Role::kLeftOut) continue;
    for (const PathColumn& path : groups[g]->paths) loads.Add(path.arcs, path.flow);
  }
  const std::vector<double> no_prices(arcs, 0);  // the search then goes by latency alone
  std::vector<char> open;
  std::vector<int> movable, targets, arcs_next;
  int moved = 0;
  // First over every open arc: most groups' lowest-latency path fits. Then,
  // for the rest, over the arcs with room for the source's largest group:
  // a path a little longer than the lowest-latency one often does.
  for (const bool room_for_largest : {false, true}) {
    for (int source = 0; source < graph.node_count; ++source) {
      movable.clear();
      targets.clear();
      double largest = 0;
      for (const int g : by_source.of(source)) {
        if (roles[g] != Role::kFree || groups[g]->paths.size() != 1 || groups[g]->paths.front().flow <= 0) continue;
        movable.push_back(g);
        targets.push_back(groups[g]->dst);
        largest = std::max(largest, groups[g]->paths.front().flow);
      }
      if (movable.empty()) continue;
      open = spec.arc_open;
      if (room_for_largest) {
        for (int a = 0; a < arcs; ++a) {
          if (open[a] && !loads.Fits(a, largest, utilization)) open[a] = 0;
        }
      }
      paths.Run(source, no_prices, open, targets);
      for (const int g : movable) {
        PathColumn& path = groups[g]->paths.front();
        if (!paths.Reached(groups[g]->dst)) continue;
        paths.PathTo(groups[g]->dst, arcs_next);
        if (graph.LatencyUs(arcs_next) >= graph.LatencyUs(path.arcs)) continue;
        const double flow = path.flow;
        loads.Add(path.arcs, -flow);
        if (!loads.Fits(arcs_next, flow, utilization)) {
          loads.Add(path.arcs, flow);
          continue;
        }
        loads.Add(arcs_next, flow);
        path = PathColumn(arcs_next);
        path.flow = flow;
        ++moved;
      }
    }
  }
  return moved;
}

}  // namespace geodesic::pathcomp::internal
