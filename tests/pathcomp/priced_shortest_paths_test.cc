// The pricing search (pathcomp/solver/internal/priced_shortest_paths.h)
// against the search it replaced: a binary heap of labels with stale
// entries skipped. Both settle nodes in (weight, latency, node) order, so
// their labels and their paths, ties included, must be the same; random
// graphs with many zero and equal weights make the ties.
#include "pathcomp/solver/internal/priced_shortest_paths.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

namespace geodesic::pathcomp::internal {
namespace {

// The lazy-deletion search PricedShortestPaths used before its indexed heap.
struct LazySearch {
  std::vector<double> weight, latency;
  std::vector<int> pred;

  void Run(const Graph& graph, int source, const std::vector<double>& arc_weight, const std::vector<char>& arc_open,
           const std::vector<int>& targets) {
    struct Label {
      double weight, latency;
      int node;
    };
    auto later = [](const Label& a, const Label& b) {
      if (a.weight != b.weight) return a.weight > b.weight;
      if (a.latency != b.latency) return a.latency > b.latency;
      return a.node > b.node;
    };
    weight.assign(graph.node_count, kInfinity);
    latency.assign(graph.node_count, kInfinity);
    pred.assign(graph.node_count, -1);
    std::vector<char> target(graph.node_count, 0);
    int unsettled = 0;
    for (int t : targets) {
      if (!target[t]) ++unsettled;
      target[t] = 1;
    }
    weight[source] = latency[source] = 0;
    std::vector<Label> queue{{0, 0, source}};
    while (!queue.empty()) {
      std::pop_heap(queue.begin(), queue.end(), later);
      const Label label = queue.back();
      queue.pop_back();
      const int node = label.node;
      if (label.weight != weight[node] || label.latency != latency[node]) continue;
      if (target[node] && --unsettled == 0) break;
      for (int i = graph.out_offsets[node]; i < graph.out_offsets[node + 1]; ++i) {
        const int arc = graph.out_arcs[i];
        if (!arc_open[arc]) continue;
        const int next = graph.arc_dst[arc];
        const double w = label.weight + arc_weight[arc], l = label.latency + graph.arc_cost_us[arc];
        if (w < weight[next] || (w == weight[next] && l < latency[next])) {
          weight[next] = w;
          latency[next] = l;
          pred[next] = arc;
          queue.push_back({w, l, next});
          std::push_heap(queue.begin(), queue.end(), later);
        }
      }
    }
  }
};

TEST(PricedShortestPathsTest, SettlesAndChoosesPathsAsTheLazySearchDid) {
  std::mt19937 random(20261206);
  int compared = 0, tied = 0;
  for (int instance = 0; instance < 200; ++instance) {
    Graph graph;
    graph.node_count = 2 + static_cast<int>(random() % 60);
    const int arcs = graph.node_count * (1 + static_cast<int>(random() % 5));
    for (int a = 0; a < arcs; ++a) {
      graph.arc_src.push_back(static_cast<int>(random() % graph.node_count));
      graph.arc_dst.push_back(static_cast<int>(random() % graph.node_count));
      graph.arc_capacity.push_back(10);
      graph.arc_cost_us.push_back(100.0 * (random() % 3));  // zero and equal latencies: ties
    }
    graph.Index();
    PricedShortestPaths search(graph);
    LazySearch lazy;
    for (int run = 0; run < 8; ++run) {  // one search reused, as pricing does
      std::vector<double> arc_weight(arcs);
      std::vector<char> arc_open(arcs);
      for (int a = 0; a < arcs; ++a) {
        arc_weight[a] = random() % 4 == 0 ? 0.5 * (random() % 3) : 0.0;  // most arcs unpriced
        arc_open[a] = random() % 8 != 0;
      }
      const int source = static_cast<int>(random() % graph.node_count);
      std::vector<int> targets;
      if (run % 2 == 1) {
        for (int t = 0; t < 3; ++t) targets.push_back(static_cast<int>(random() % graph.node_count));
      }
      search.Run(source, arc_weight, arc_open, targets);
      lazy.Run(graph, source, arc_weight, arc_open, targets);
      for (int node = 0; node < graph.node_count; ++node) {
        // Past the targets, labels are not final: only the targets' paths count then.
        if (!targets.empty() && std::find(targets.begin(), targets.end(), node) == targets.end()) continue;
        ASSERT_EQ(search.Reached(node), node == source || lazy.pred[node] >= 0)
            << "instance " << instance << " run " << run << " node " << node;
        if (!search.Reached(node)) continue;
        ASSERT_EQ(search.weight(node), lazy.weight[node]) << "instance " << instance << " node " << node;
        std::vector<int> path;
        for (int at = node; at != source; at = graph.arc_src[lazy.pred[at]]) path.push_back(lazy.pred[at]);
        std::reverse(path.begin(), path.end());
        ASSERT_EQ(search.PathTo(node), path) << "instance " << instance << " run " << run << " node " << node;
        ++compared;
        // A tie: another arc into the node would give the same label.
        for (int a = 0; a < arcs && node != source; ++a) {
          const int from = graph.arc_src[a];
          if (graph.arc_dst[a] != node || a == lazy.pred[node] || !arc_open[a] || lazy.weight[from] == kInfinity) continue;
          tied += lazy.weight[from] + arc_weight[a] == lazy.weight[node] &&
                  lazy.latency[from] + graph.arc_cost_us[a] == lazy.latency[node];
        }
      }
    }
  }
  EXPECT_GT(compared, 15000);
  EXPECT_GT(tied, 1000);  // the instances are full of ties the tie-break must settle alike
}

}  // namespace
}  // namespace geodesic::pathcomp::internal
