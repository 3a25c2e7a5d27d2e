#pragma once
// The restricted master LP of one column-generation phase (path_master.h):
// the paths found so far of the free groups as CLP columns, the frozen
// groups' flows as constants, the links' (and the protection rows') prices
// read back for pricing. Rebuilt from the groups' paths before every solve
// and started from the statuses they remember, so CLP resumes from the last
// basis (new paths enter at 0, new rows with their slack basic).
//
// Internal to pathcomp/solver. Not thread-safe: one per phase run.
#include <ClpSimplex.hpp>

#include <cstdint>
#include <span>
#include <vector>

#include "absl/status/status.h"
#include "pathcomp/solver/internal/column_wise_lp.h"
#include "pathcomp/solver/internal/failure_loads.h"
#include "pathcomp/solver/internal/path_master.h"

namespace geodesic::pathcomp::internal {

// How far from a bound a flow may be and still count as at that bound.
inline constexpr double kBoundTolerance = 1e-9;
// An arc load below this (solver units) is what adding and removing the same
// flows left behind, not load.
inline constexpr double kLoadRounding = 1e-15;

// What a group is to the master of a run.
enum class Role : char {
  kLeftOut,  // no open path reaches its destination
  kFrozen,   // its flows are constants
  kFree,     // its paths are the master's columns
};

// Dual lengths of paths under link prices. Prices sit on the few bottleneck
// links, so most paths cross none of them: the bits of the priced arcs
// answer 0 for those without reading their arcs (the prices are >= 0, so a
// path missing every priced arc has length exactly 0).
class PathLengths {
 public:
  explicit PathLengths(const std::vector<double>& weight) : weight_(&weight) {
    for (size_t a = 0; a < weight.size(); ++a) {
      if (weight[a] > 0) priced_bits_ |= ArcBit(static_cast<int>(a));
    }
  }
  double Of(const PathColumn& path) const {
    if ((path.arc_bits & priced_bits_) == 0) return 0;
    double length = 0;
    for (int arc : path.arcs) length += (*weight_)[arc];
    return length;
  }

 private:
  const std::vector<double>* weight_;
  uint64_t priced_bits_ = 0;
};

class RestrictedMaster {
 public:
  // Everything given must outlive it; `basis` is read and written.
  RestrictedMaster(const Graph& graph, const PhaseSpec& spec, std::span<FlowGroup* const> groups,
                   const std::vector<Role>& roles, const std::vector<int>& free_groups,
                   const std::vector<double>& frozen_load, const ProtectionIndex& protection,
                   const std::vector<double>& frozen_protection_load, MasterBasis& basis);

  bool minimizing_utilization() const { return spec_.phase == kUtilizationPhase; }
  bool minimizing_latency() const { return spec_.phase == kLatencyPhase; }
  // Every group routes exactly its demand (utilization and latency phases).
  bool fixed_demand() const { return spec_.phase != kThroughputPhase; }

  // Builds, solves and reads back flows, statuses and duals.
  [[nodiscard]] absl::Status Solve(bool first_in_run);

  // U; the total carried; or the latency phase's sum(flow x path cost) of the free groups.
  double objective() const;
  // The link weights pricing searches with: the link prices, and with
  // protection rows each row's price on its arc (what a path that no failure
  // diverts pays; Length() is exact).
  const std::vector<double>& arc_weight() const;
  // The link weights a second search toward `dst` uses when the first found
  // a path a failure diverts at a price: arc_weight() plus, on each failed
  // arc, what a unit diverted there puts on the rows at their prices.
  void DivertedWeights(int dst, std::vector<double>& out) const;
  // The same without the rows' prices on their own arcs: what a path pays
  // when every failure diverts it before it reaches a limited link.
  void DivertedOnlyWeights(int dst, std::vector<double>& out) const;
  // A path's dual length: its links' prices and what it puts on the
  // protection rows after their failures at their prices.
  double Length(int g, const PathColumn& path) const;
  // Per protection row: the excess the last solve left (solver units).
  const std::vector<double>& protection_excess() const { return protection_excess_; }
  bool protection_holds() const;

  struct GroupPrice {
    // What a new path must cost (in dual weight) less than to improve the master.
    double threshold = kInfinity;
    // The dual length of a path the group uses (its dearest used path when
    // frozen, its key when free); 0 means no path can improve the group
    // (none costs less than 0) and its shortest path costs 0, so pricing
    // needs no tree for it. kInfinity when unknown.
    double used_path_length = kInfinity;
  };

  GroupPrice PriceOf(int g) const;

 private:
  void Build();

  // A group that routes exactly its demand (utilization phase), in key-path
  // form: the first open path (the key) carries the demand minus what the
  // other paths carry, so a two-path group needs no row of its own. The key's
  // load is a constant; each other path's column is its arcs minus the key's.
  // Three paths or more: one row keeps their sum within the demand.
  // Latency phase: the key's cost is a constant too, and each other path's
  // objective is its cost minus the key's.
  void AddFixedDemandGroup(ColumnWiseLp& lp, int g, const std::vector<int>& open,
                           std::vector<uint8_t>& row_status_of);

  // A key-path column on the protection rows: its loads after each failure
  // less the key's.
  void AddProtectionDifference(ColumnWiseLp& lp, const PathColumn& path, int dst,
                               const ProtectionIndex::Coefficients& key);

  // A group that carries within [lower, upper] (throughput phase): a column
  // per path; with two paths or more a row holds their sum in the range,
  // with one the column's bounds do.
  void AddRangeGroup(ColumnWiseLp& lp, int g, const std::vector<int>& open,
                     std::vector<uint8_t>& row_status_of);

  void ReadBack();

  // The key carries the rest of the demand. A new path improves when it is
  // cheaper than the key, less what the key's own flow is worth when it is
  // empty (the dual of the group row, or of the other path's upper bound).
  void ReadFixedDemandGroup(int g, int single_column, const double* y, const double* dj);

  struct ColumnRef {
    int group;
    int path;
  };

  const Graph& graph_;
  const PhaseSpec& spec_;
  std::span<FlowGroup* const> groups_;
  const std::vector<Role>& roles_;
  const std::vector<int>& free_groups_;
  const std::vector<double>& frozen_load_;
  const ProtectionIndex& protection_;
  std::vector<char> priced_failures_;  // ProtectionIndex::PricedFailures of protection_price_
  const std::vector<double>& frozen_protection_load_;
  MasterBasis& basis_;
  const OpenArcs open_arcs_;
  ClpSimplex model_;
  int protection_first_row_ = 0, excess_first_column_ = 0;
  std::vector<double> protection_price_, protection_excess_, pricing_weights_;
  bool protection_priced_ = false;  // some protection row has a price
  PathLengths path_lengths_{basis_.arc_weights};  // under the last solve's prices
  std::vector<ColumnRef> columns_;
  std::vector<int> group_row_, key_path_, send_row_, receive_row_;
  std::vector<double> threshold_, key_length_;  // per group, free groups only
  double key_cost_ = 0;  // latency phase: sum(demand x key path cost), a constant of the objective
};

}  // namespace geodesic::pathcomp::internal
