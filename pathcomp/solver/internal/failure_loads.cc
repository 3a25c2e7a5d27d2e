#include "pathcomp/solver/internal/failure_loads.h"

#include <functional>
#include <queue>

namespace geodesic::pathcomp::internal {

FailureLoads::FailureLoads(const Graph& graph, const McfFailure& failure)
    : graph_(&graph), failure_(&failure), down_(graph.arc_src.size(), 0) {
  for (int arc : failure.arcs) down_[arc] = 1;
  for (size_t r = 0; r < failure.reroutes.size(); ++r) {
    reroute_at_.emplace(Key(failure.reroutes[r].node, failure.reroutes[r].dst), static_cast<int>(r));
  }
}

const FailureLoads::ArcLoads& FailureLoads::Around(int node, int dst) const {
  const auto [it, inserted] = around_.try_emplace(Key(node, dst));
  if (!inserted) return it->second;
  const Graph& graph = *graph_;
  std::vector<double> cost(graph.node_count, kInfinity);
  std::vector<int> via(graph.node_count, -1);
  using Entry = std::pair<double, int>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> queue;
  cost[node] = 0;
  queue.push({0, node});
  while (!queue.empty()) {
    const auto [at_cost, at] = queue.top();
    queue.pop();
    if (at_cost > cost[at]) continue;
    if (at == dst) break;
    for (int i = graph.out_offsets[at]; i < graph.out_offsets[at + 1]; ++i) {
      const int arc = graph.out_arcs[i];
      if (down_[arc] || graph.arc_capacity[arc] <= 0) continue;
      const int next = graph.arc_dst[arc];
      // A hop costs a little beside its latency, so zero-cost links still
      // give the path of fewest hops.
      const double next_cost = at_cost + graph.arc_cost_us[arc] + 1e-3;
      if (next_cost < cost[next]) {
        cost[next] = next_cost;
        via[next] = arc;
        queue.push({next_cost, next});
      }
    }
  }
  if (via[dst] >= 0) {
    for (int at = dst; at != node; at = graph.arc_src[via[at]]) it->second.push_back({via[at], 1.0});
  }
  return it->second;
}

}  // namespace geodesic::pathcomp::internal
