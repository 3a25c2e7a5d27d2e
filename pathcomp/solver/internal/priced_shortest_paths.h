#pragma once
// Shortest paths from one source for pricing the path master.
// Internal to pathcomp/solver. Pure; thread-compatible.
#include <algorithm>
#include <functional>
#include <queue>
#include <tuple>
#include <vector>

#include "pathcomp/solver/internal/path_master.h"

namespace geodesic::pathcomp::internal {

// Shortest paths from one source, lexicographic in (dual weight, latency):
// the weight is what the LP pays, the latency breaks the many ties left by
// links whose dual is exactly 0, so among equally good paths the short one
// is chosen. Lexicographic order keeps the first component an exact
// shortest-path distance, which the lower bound needs.
class PricedShortestPaths {
 public:
  explicit PricedShortestPaths(const Graph& graph)
      : graph_(graph),
        weight_(graph.node_count),
        latency_(graph.node_count),
        pred_(graph.node_count) {}

  void Run(int source, const std::vector<double>& arc_weight, const std::vector<char>& arc_open) {
    source_ = source;
    std::fill(weight_.begin(), weight_.end(), kInfinity);
    std::fill(latency_.begin(), latency_.end(), kInfinity);
    std::fill(pred_.begin(), pred_.end(), -1);
    using Entry = std::tuple<double, double, int>;
    std::priority_queue<Entry, std::vector<Entry>, std::greater<>> queue;
    weight_[source] = 0;
    latency_[source] = 0;
    queue.emplace(0.0, 0.0, source);
    while (!queue.empty()) {
      const auto [weight, latency, node] = queue.top();
      queue.pop();
      if (weight != weight_[node] || latency != latency_[node]) continue;  // stale
      for (int i = graph_.out_offsets[node]; i < graph_.out_offsets[node + 1]; ++i) {
        const int arc = graph_.out_arcs[i];
        if (!arc_open[arc]) continue;
        const int next = graph_.arc_dst[arc];
        const double next_weight = weight + arc_weight[arc];
        const double next_latency = latency + graph_.arc_cost_us[arc];
        if (next_weight < weight_[next] ||
            (next_weight == weight_[next] && next_latency < latency_[next])) {
          weight_[next] = next_weight;
          latency_[next] = next_latency;
          pred_[next] = arc;
          queue.emplace(next_weight, next_latency, next);
        }
      }
    }
  }

  bool Reached(int node) const { return node == source_ || pred_[node] >= 0; }
  double weight(int node) const { return weight_[node]; }

  std::vector<int> PathTo(int node) const {
    std::vector<int> arcs;
    for (int at = node; at != source_; at = graph_.arc_src[pred_[at]]) arcs.push_back(pred_[at]);
    std::reverse(arcs.begin(), arcs.end());
    return arcs;
  }

 private:
  const Graph& graph_;
  int source_ = 0;
  std::vector<double> weight_, latency_;
  std::vector<int> pred_;
};

}  // namespace geodesic::pathcomp::internal
