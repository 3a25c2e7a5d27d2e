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
        pred_(graph.node_count),
        heap_position_(graph.node_count, -1) {}

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
    Lower(source);
    while (!heap_.empty()) {
      const int node = PopFirst();
      if (target_run_[node] == run_ && --unsettled == 0) break;
      const double weight = weight_[node], latency = latency_[node];
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
          Lower(next);
        }
      }
    }
    for (const int node : heap_) heap_position_[node] = -1;  // left when the targets were settled
    heap_.clear();
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
  // The queue: a 4-ary heap of the nodes labelled but not settled, the
  // lexicographically smallest (weight, latency, node) first; a node's
  // label only decreases while it waits, so it moves up in place (each node
  // is in the heap once: no stale entries to skip). The node breaks ties, so
  // nodes settle, and paths are chosen, in one order whatever the heap.
  static constexpr int kArity = 4;
  bool Before(int a, int b) const {
    if (weight_[a] != weight_[b]) return weight_[a] < weight_[b];
    if (latency_[a] != latency_[b]) return latency_[a] < latency_[b];
    return a < b;
  }
  void Place(int at, int node) {
    heap_[at] = node;
    heap_position_[node] = at;
  }
  // `node` was labelled lower (or for the first time): moves it up.
  void Lower(int node) {
    int at = heap_position_[node];
    if (at < 0) {
      at = static_cast<int>(heap_.size());
      heap_.push_back(node);
    }
    while (at > 0) {
      const int parent = (at - 1) / kArity;
      if (!Before(node, heap_[parent])) break;
      Place(at, heap_[parent]);
      at = parent;
    }
    Place(at, node);
  }
  int PopFirst() {
    const int first = heap_.front();
    heap_position_[first] = -1;
    const int last = heap_.back();
    heap_.pop_back();
    if (heap_.empty()) return first;
    const int size = static_cast<int>(heap_.size());
    int at = 0;
    while (true) {
      const int child = kArity * at + 1;
      if (child >= size) break;
      int best = child;
      for (int c = child + 1; c < std::min(child + kArity, size); ++c) {
        if (Before(heap_[c], heap_[best])) best = c;
      }
      if (!Before(heap_[best], last)) break;
      Place(at, heap_[best]);
      at = best;
    }
    Place(at, last);
    return first;
  }

  const Graph& graph_;
  int source_ = 0;
  std::vector<int> heap_;           // kept between runs to reuse its memory
  std::vector<int> target_run_;  // == run_: a target of the current run
  int run_ = 0;
  std::vector<double> weight_, latency_;
  std::vector<int> pred_;
  std::vector<int> heap_position_;  // per node: its place in heap_, -1 when not there
};

}  // namespace geodesic::pathcomp::internal
