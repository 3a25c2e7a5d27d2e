#pragma once
// One McfFailure's repair model over the solver's graph: where a unit of flow
// on a path goes once the failure is in force. The flow keeps its path up to
// its first down arc; from the arc's tail it loads what that node's
// McfReroute toward the destination says, or, without one, takes the
// lowest-cost path around the failure (dropped where none exists).
// ProtectionIndex: a phase's protection rows by failure, and what a path puts
// on them (the path master's coefficients).
// Internal to pathcomp/solver. Pure; not thread-safe (the paths around the
// failure are found on first use and kept; Of() uses scratch space).
#include <cstdint>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

#include "pathcomp/solver/internal/path_master.h"
#include "pathcomp/solver/mcf_problem.h"

namespace geodesic::pathcomp::internal {

class FailureLoads {
 public:
  using ArcLoads = std::vector<std::pair<int, double>>;

  // `failure` must outlive this and have passed ValidateMcfProblem.
  FailureLoads(const Graph& graph, const McfFailure& failure);

  // Calls add(arc, load) for every arc one unit of flow on `path` (arcs from
  // its source) toward `dst` loads after the failure (an arc may come twice).
  template <typename Add>
  void ForEach(std::span<const int> path, int dst, Add&& add) const {
    for (int arc : path) {
      if (down_[arc]) {
        for (const auto& [to, load] : DivertedAt(graph_->arc_src[arc], dst)) add(to, load);
        return;
      }
      add(arc, 1.0);
    }
  }

  const Graph& graph() const { return *graph_; }
  // The arcs out of service.
  const std::vector<int>& arcs() const { return failure_->arcs; }
  // What one unit meeting a down arc at `node` toward `dst` loads from
  // there: the node's reroute, or the lowest-cost path around the failure.
  const ArcLoads& DivertedAt(int node, int dst) const {
    const ArcLoads* reroute = RerouteAt(node, dst);
    return reroute != nullptr ? *reroute : Around(node, dst);
  }

 private:
  static int64_t Key(int node, int dst) { return (int64_t{node} << 32) | static_cast<uint32_t>(dst); }
  const ArcLoads* RerouteAt(int node, int dst) const {
    if (reroute_at_.empty()) return nullptr;
    const auto it = reroute_at_.find(Key(node, dst));
    return it == reroute_at_.end() ? nullptr : &failure_->reroutes[it->second].arc_load;
  }
  // The lowest-cost path from `node` to `dst` over arcs up and not failed.
  const ArcLoads& Around(int node, int dst) const;

  const Graph* graph_;
  const McfFailure* failure_;
  std::vector<char> down_;                          // per arc
  std::unordered_map<int64_t, int> reroute_at_;     // (node, dst) -> reroute
  mutable std::unordered_map<int64_t, ArcLoads> around_;
};

// The protection rows of a phase, by failure: which row (if any) each arc's
// load after that failure is held by.
class ProtectionIndex {
 public:
  using Coefficients = std::vector<std::pair<int, double>>;  // (row, load per unit of flow), rows ascending

  ProtectionIndex(const PhaseSpec& spec, int arcs);

  bool empty() const { return failures_.empty(); }
  size_t rows() const { return value_.size(); }

  // What one unit of flow on `path` toward `dst` puts on each row's arc
  // after the row's failure. Computed once per path and index: kept in the
  // path (PathColumn::protection_loads), which must not change group.
  const Coefficients& Of(const PathColumn& path, int dst) const;
  // Whether Of() has `path`'s coefficients already.
  bool Kept(const PathColumn& path) const {
    const KeptProtectionLoads::Loads* kept = path.protection_loads.get();
    return kept != nullptr && kept->index == id_;
  }

  // Per failure (in the index's order): whether any of its rows has a
  // price in `row_price`. What a path costs at those prices involves only
  // them, and few rows bind.
  std::vector<char> PricedFailures(const std::vector<double>& row_price) const;

  // What one unit on `path` toward `dst` costs on the rows at `row_price`:
  // Of()'s loads times the prices, visiting only the `priced` failures and
  // keeping nothing (for the paths pricing finds, most never used).
  double PricedLoad(const PathColumn& path, int dst, const std::vector<double>& row_price,
                    const std::vector<char>& priced) const;

  // Adds to `weight`, on each down arc of a failure with rows, what a unit
  // toward `dst` diverted there puts on the rows at `row_price`: arc weights
  // under which a search toward dst sees what crossing a failed arc costs
  // after the failure (a row's price on its own arc alone shows only what a
  // path that no failure diverts pays).
  // Only the `priced` failures (PricedFailures) add anything.
  void AddDivertedPrices(int dst, const std::vector<double>& row_price, const std::vector<char>& priced,
                         std::vector<double>& weight) const;

 private:
  struct FailureRows {
    int failure;
    std::vector<int> row_of_arc;
    std::vector<int> rows;
  };
  void Compute(const PathColumn& path, int dst, Coefficients& out) const;

  // FailureLoads::ForEach for every failure with rows at once (only the
  // `priced` ones when not null): calls add(row, load) for what a unit on
  // `path` puts on each row after its failure — the path's own arcs up to
  // the failure's first down arc on it, then that failure's diversion (a
  // row may come more than once).
  template <typename Add>
  void ForEachRowLoad(const PathColumn& path, int dst, const std::vector<char>* priced, Add&& add) const {
    auto counts = [&](int slot) { return priced == nullptr || (*priced)[slot]; };
    crossed_.clear();
    const int length = static_cast<int>(path.arcs.size());
    for (int i = 0; i < length; ++i) {
      for (int slot : down_slots_of_arc_[path.arcs[i]]) {
        if (!counts(slot) || first_down_[slot] >= 0) continue;
        first_down_[slot] = i;
        crossed_.push_back(slot);
      }
    }
    for (int i = 0; i < length; ++i) {
      for (const RowOnArc& on : rows_on_arc_[path.arcs[i]]) {
        if (!counts(on.slot)) continue;
        if (const int down = first_down_[on.slot]; down < 0 || i < down) add(on.row, 1.0);
      }
    }
    for (int slot : crossed_) {
      const FailureRows& failure = failures_[slot];
      const FailureLoads& loads = (*loads_)[failure.failure];
      const int tail = loads.graph().arc_src[path.arcs[first_down_[slot]]];
      for (const auto& [to, load] : loads.DivertedAt(tail, dst)) {
        if (const int row = failure.row_of_arc[to]; row >= 0) add(row, load);
      }
      first_down_[slot] = -1;
    }
  }

  struct RowOnArc {
    int slot;  // index into failures_
    int row;
  };
  uint64_t id_;  // tells the paths' kept coefficients of this index from another's
  const std::vector<FailureLoads>* loads_;
  std::vector<FailureRows> failures_;
  // By arc: the rows on it, and the failures (slots) that take it down. A
  // path loads a failure's rows on its own arcs unless the failure diverts
  // it first, so Of() visits only the rows on the path and the failures it
  // crosses, not every failure.
  std::vector<std::vector<RowOnArc>> rows_on_arc_;
  std::vector<std::vector<int>> down_slots_of_arc_;
  mutable std::vector<double> value_;  // scratch of Of(), all 0 between calls
  mutable std::vector<char> seen_;
  mutable std::vector<int> first_down_;  // by slot: the path position of its first down arc, -1 between calls
  mutable std::vector<int> crossed_;     // the slots the current path crosses
};

}  // namespace geodesic::pathcomp::internal
