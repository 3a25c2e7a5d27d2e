#include "pathcomp/solver/internal/failure_loads.h"

#include <algorithm>
#include <atomic>
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

namespace {
std::atomic<uint64_t> next_protection_index_id{1};
}  // namespace

ProtectionIndex::ProtectionIndex(const PhaseSpec& spec, int arcs)
    : id_(next_protection_index_id.fetch_add(1, std::memory_order_relaxed)),
      loads_(spec.failure_loads),
      rows_on_arc_(arcs),
      down_slots_of_arc_(arcs) {
  std::vector<int> slot_of_failure;
  for (size_t r = 0; r < spec.protection_rows.size(); ++r) {
    const ProtectionRow& row = spec.protection_rows[r];
    if (row.failure >= static_cast<int>(slot_of_failure.size())) slot_of_failure.resize(row.failure + 1, -1);
    int& slot = slot_of_failure[row.failure];
    if (slot < 0) {
      slot = static_cast<int>(failures_.size());
      failures_.push_back({row.failure, std::vector<int>(arcs, -1), {}});
      for (int down : (*loads_)[row.failure].arcs()) down_slots_of_arc_[down].push_back(slot);
    }
    failures_[slot].row_of_arc[row.arc] = static_cast<int>(r);
    failures_[slot].rows.push_back(static_cast<int>(r));
    rows_on_arc_[row.arc].push_back({slot, static_cast<int>(r)});
  }
  value_.assign(spec.protection_rows.size(), 0);
  seen_.assign(spec.protection_rows.size(), 0);
  first_down_.assign(failures_.size(), -1);
}

std::vector<char> ProtectionIndex::PricedFailures(const std::vector<double>& row_price) const {
  std::vector<char> priced(failures_.size(), 0);
  for (size_t slot = 0; slot < failures_.size(); ++slot) {
    const std::vector<int>& rows = failures_[slot].rows;
    priced[slot] = std::any_of(rows.begin(), rows.end(), [&](int row) { return row_price[row] != 0; });
  }
  return priced;
}

double ProtectionIndex::PricedLoad(const PathColumn& path, int dst, const std::vector<double>& row_price,
                                   const std::vector<char>& priced) const {
  double cost = 0;
  ForEachRowLoad(path, dst, &priced, [&](int row, double load) { cost += row_price[row] * load; });
  return cost;
}

void ProtectionIndex::AddDivertedPrices(int dst, const std::vector<double>& row_price, const std::vector<char>& priced,
                                        std::vector<double>& weight) const {
  for (size_t slot = 0; slot < failures_.size(); ++slot) {
    if (!priced[slot]) continue;
    const FailureRows& failure = failures_[slot];
    const FailureLoads& loads = (*loads_)[failure.failure];
    for (int arc : loads.arcs()) {
      double price = 0;
      for (const auto& [to, load] : loads.DivertedAt(loads.graph().arc_src[arc], dst)) {
        if (const int row = failure.row_of_arc[to]; row >= 0) price += row_price[row] * load;
      }
      weight[arc] += price;
    }
  }
}

const ProtectionIndex::Coefficients& ProtectionIndex::Of(const PathColumn& path, int dst) const {
  if (Kept(path)) return path.protection_loads.get()->loads;
  KeptProtectionLoads::Loads& kept = path.protection_loads.Reset(id_);
  Compute(path, dst, kept.loads);
  return kept.loads;
}

void ProtectionIndex::Compute(const PathColumn& path, int dst, Coefficients& out) const {
  out.clear();
  ForEachRowLoad(path, dst, nullptr, [&](int row, double load) {
    if (!seen_[row]) {
      seen_[row] = 1;
      out.push_back({row, 0});
    }
    value_[row] += load;
  });
  std::sort(out.begin(), out.end());
  for (auto& [row, value] : out) {
    value = value_[row];
    value_[row] = 0;
    seen_[row] = 0;
  }
}

}  // namespace geodesic::pathcomp::internal
