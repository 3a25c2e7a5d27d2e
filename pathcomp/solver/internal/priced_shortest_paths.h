#pragma once
// Shortest paths from one source for pricing the path master.
// Internal to pathcomp/solver. Pure; thread-compatible.
#include <algorithm>
#include <span>
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
        target_run_(graph.node_count, 0),
        weight_(graph.node_count),
        latency_(graph.node_count),
        pred_(graph.node_count) {}

  // Labels every node reachable from `source` over open arcs; with
  // `targets`, only those are sure to be final (the search stops once they
  // all are), which is all pricing a few groups of a source needs.
  void Run(int source, const std::vector<double>& arc_weight, const std::vector<char>& arc_open,
           std::span<const int> targets = {}) {
    source_ = source;
    ++run_;
    int unsettled = 0;
    for (int target : targets) {
      if (target_run_[target] != run_) ++unsettled;
      target_run_[target] = run_;
    }
    std::fill(weight_.begin(), weight_.end(), kInfinity);
    std::fill(latency_.begin(), latency_.end(), kInfinity);
    std::fill(pred_.begin(), pred_.end(), -1);
    weight_[source] = 0;
    latency_[source] = 0;
    queue_.clear();
    Push({0.0, 0.0, source});
    while (!queue_.empty()) {
      std::pop_heap(queue_.begin(), queue_.end(), Later);
      const Label label = queue_.back();
      queue_.pop_back();
      const int node = label.node;
      if (label.weight != weight_[node] || label.latency != latency_[node]) continue;  // stale
      if (target_run_[node] == run_ && --unsettled == 0) break;
      for (int i = graph_.out_offsets[node]; i < graph_.out_offsets[node + 1]; ++i) {
        const int arc = graph_.out_arcs[i];
        if (!arc_open[arc]) continue;
        const int next = graph_.arc_dst[arc];
        const double next_weight = label.weight + arc_weight[arc];
        const double next_latency = label.latency + graph_.arc_cost_us[arc];
        if (next_weight < weight_[next] ||
            (next_weight == weight_[next] && next_latency < latency_[next])) {
          weight_[next] = next_weight;
          latency_[next] = next_latency;
          pred_[next] = arc;
          Push({next_weight, next_latency, next});
        }
      }
    }
  }

  bool Reached(int node) const { return node == source_ || pred_[node] >= 0; }
  double weight(int node) const { return weight_[node]; }

  std::vector<int> PathTo(int node) const {
    std::vector<int> arcs;
    PathTo(node, arcs);
    return arcs;
  }
  // The same into `arcs` (cleared first), reusing its memory.
  void PathTo(int node, std::vector<int>& arcs) const {
    arcs.clear();
    for (int at = node; at != source_; at = graph_.arc_src[pred_[at]]) arcs.push_back(pred_[at]);
    std::reverse(arcs.begin(), arcs.end());
  }

 private:
  struct Label {
    double weight;
    double latency;
    int node;
  };
  // Heap order: the lexicographically smallest (weight, latency, node) on
  // top; the node makes ties, and so the paths chosen, deterministic.
  static bool Later(const Label& a, const Label& b) {
    if (a.weight != b.weight) return a.weight > b.weight;
    if (a.latency != b.latency) return a.latency > b.latency;
    return a.node > b.node;
  }
  void Push(const Label& label) {
    queue_.push_back(label);
    std::push_heap(queue_.begin(), queue_.end(), Later);
  }

  const Graph& graph_;
  int source_ = 0;
  std::vector<Label> queue_;  // kept between runs to reuse its memory
  std::vector<int> target_run_;  // == run_: a target of the current run
  int run_ = 0;
  std::vector<double> weight_, latency_;
  std::vector<int> pred_;
};

}  // namespace geodesic::pathcomp::internal
