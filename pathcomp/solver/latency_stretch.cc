#include "pathcomp/solver/latency_stretch.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <queue>
#include <utility>
#include <vector>

namespace geodesic::pathcomp {
namespace {

constexpr double kUnreached = std::numeric_limits<double>::infinity();

// Lowest latency from `source` to every node over arcs with capacity.
void ShortestLatencies(const McfProblem& problem, const std::vector<int>& out_offsets,
                       const std::vector<int>& out_arcs, int source, std::vector<double>& distance) {
  distance.assign(problem.node_count, kUnreached);
  using Entry = std::pair<double, int>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> queue;
  distance[source] = 0;
  queue.push({0, source});
  while (!queue.empty()) {
    const auto [d, node] = queue.top();
    queue.pop();
    if (d != distance[node]) continue;
    for (int i = out_offsets[node]; i < out_offsets[node + 1]; ++i) {
      const McfArc& arc = problem.arcs[out_arcs[i]];
      if (arc.capacity_gbps <= 0) continue;
      const double next = d + arc.cost_us;
      if (next < distance[arc.dst]) {
        distance[arc.dst] = next;
        queue.push({next, arc.dst});
      }
    }
  }
}

// (stretch, Gbps) samples into a LatencyStretch.
class StretchSamples {
 public:
  void Add(double stretch, double gbps, double latency_us) {
    samples_.push_back({stretch, gbps});
    weighted_stretch_ += stretch * gbps;
    weighted_latency_ += latency_us * gbps;
    gbps_ += gbps;
  }
  LatencyStretch Summarize() {
    LatencyStretch result;
    if (gbps_ <= 0) return result;
    result.carried_gbps = gbps_;
    result.mean = weighted_stretch_ / gbps_;
    result.mean_latency_us = weighted_latency_ / gbps_;
    std::sort(samples_.begin(), samples_.end());
    double below = 0;
    for (const auto& [stretch, gbps] : samples_) {
      below += gbps;
      result.p95 = stretch;
      if (below >= 0.95 * gbps_) break;
    }
    return result;
  }

 private:
  std::vector<std::pair<double, double>> samples_;
  double weighted_stretch_ = 0, weighted_latency_ = 0, gbps_ = 0;
};

}  // namespace

StretchReport MeasureLatencyStretch(const McfProblem& problem, const McfAllocation& allocation) {
  const int n = problem.node_count;
  std::vector<int> out_offsets(n + 1, 0), out_arcs(problem.arcs.size());
  for (const McfArc& arc : problem.arcs) ++out_offsets[arc.src + 1];
  for (int v = 0; v < n; ++v) out_offsets[v + 1] += out_offsets[v];
  std::vector<int> fill(out_offsets.begin(), out_offsets.end() - 1);
  for (size_t a = 0; a < problem.arcs.size(); ++a) out_arcs[fill[problem.arcs[a].src]++] = static_cast<int>(a);

  // Commodities by source, so one search serves every commodity of a source.
  std::vector<std::vector<int>> by_source(n);
  for (size_t c = 0; c < problem.commodities.size() && c < allocation.paths.size(); ++c) {
    if (!allocation.paths[c].empty()) by_source[problem.commodities[c].src].push_back(static_cast<int>(c));
  }
  StretchSamples all;
  std::map<uint32_t, StretchSamples> by_class;
  std::vector<double> distance;
  for (int source = 0; source < n; ++source) {
    if (by_source[source].empty()) continue;
    ShortestLatencies(problem, out_offsets, out_arcs, source, distance);
    for (int c : by_source[source]) {
      const McfCommodity& commodity = problem.commodities[c];
      const double shortest = distance[commodity.dst];
      for (const McfPathFlow& path : allocation.paths[c]) {
        double latency = 0;
        for (int arc : path.arcs) latency += problem.arcs[arc].cost_us;
        const double stretch = shortest > 0 && shortest < kUnreached ? latency / shortest : 1.0;
        all.Add(stretch, path.gbps, latency);
        by_class[commodity.priority].Add(stretch, path.gbps, latency);
      }
    }
  }
  StretchReport report;
  report.all = all.Summarize();
  for (auto& [priority, samples] : by_class) report.by_class[priority] = samples.Summarize();
  return report;
}

}  // namespace geodesic::pathcomp
