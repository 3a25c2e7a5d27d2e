#include "pathcomp/solver/internal/path_master.h"

#include <ClpSimplex.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <span>

#include "absl/strings/str_cat.h"
#include "pathcomp/solver/internal/column_wise_lp.h"
#include "pathcomp/solver/internal/failure_absorber.h"
#include "pathcomp/solver/internal/failure_loads.h"
#include "pathcomp/solver/internal/phase_bounds.h"
#include "pathcomp/solver/internal/priced_shortest_paths.h"

namespace geodesic::pathcomp::internal {

void Graph::Index() {
  const int arcs = static_cast<int>(arc_src.size());
  out_offsets.assign(node_count + 1, 0);
  for (int a = 0; a < arcs; ++a) ++out_offsets[arc_src[a] + 1];
  for (int v = 0; v < node_count; ++v) out_offsets[v + 1] += out_offsets[v];
  out_arcs.resize(arcs);
  std::vector<int> fill(out_offsets.begin(), out_offsets.end() - 1);
  for (int a = 0; a < arcs; ++a) out_arcs[fill[arc_src[a]]++] = a;
}

namespace {

// A path improves the master when its dual length is below the group's
// threshold by more than this (relative to the threshold, floored at 1e-12):
// CLP's own optimality tolerance is 1e-7, so anything finer only adds paths
// the LP cannot tell apart.
constexpr double kPricingTolerance = 1e-7;
// Rounds a path must sit unused and overpriced before the master drops it.
constexpr int kIdleRoundsBeforeDrop = 3;
// How far from a bound a flow may be and still count as at that bound.
constexpr double kBoundTolerance = 1e-9;
// An arc load below this (solver units) is what adding and removing the same
// flows left behind, not load.
constexpr double kLoadRounding = 1e-15;

bool HasLimit(const std::vector<double>& limits, int node) {
  return !limits.empty() && std::isfinite(limits[node]);
}

ClpSimplex::Status ToClp(uint8_t status) { return static_cast<ClpSimplex::Status>(status); }

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

// What a unit of excess over a protection row costs the utilization
// master: far more than any utilization it could buy (U is about 1 in the
// solver's units), so the master holds every row it can.
constexpr double kProtectionExcessCost = 1e4;

// What a group is to the master of a run.
enum class Role : char {
  kLeftOut,  // no open path reaches its destination
  kFrozen,   // its flows are constants
  kFree,     // its paths are the master's columns
};

// The restricted master of one phase, rebuilt from the groups' paths before
// every solve and started from the statuses they remember, so CLP resumes
// from the last basis (new paths enter at 0, new rows with their slack basic).
class Master {
 public:
  Master(const Graph& graph, const PhaseSpec& spec, std::span<FlowGroup* const> groups,
         const std::vector<Role>& roles, const std::vector<int>& free_groups,
         const std::vector<double>& frozen_load, const ProtectionIndex& protection,
         const std::vector<double>& frozen_protection_load, MasterBasis& basis)
      : graph_(graph),
        spec_(spec),
        groups_(groups),
        roles_(roles),
        free_groups_(free_groups),
        frozen_load_(frozen_load),
        protection_(protection),
        frozen_protection_load_(frozen_protection_load),
        basis_(basis),
        open_arcs_(spec.arc_open) {
    model_.setLogLevel(0);
    if (basis_.protection_rows.size() != 2 * protection_.rows()) basis_.protection_rows.assign(2 * protection_.rows(), kNoStatus);
  }

  bool minimizing_utilization() const { return spec_.phase == kUtilizationPhase; }
  bool minimizing_latency() const { return spec_.phase == kLatencyPhase; }
  // Every group routes exactly its demand (utilization and latency phases).
  bool fixed_demand() const { return spec_.phase != kThroughputPhase; }

  // Builds, solves and reads back flows, statuses and duals.
  absl::Status Solve(bool first_in_run) {
    Build();
    // A cold start and a start after paths were removed are not primal
    // feasible: the dual simplex repairs them. Adding improving paths keeps
    // the basis primal feasible: the primal simplex continues from it.
    if (first_in_run) {
      model_.dual();
    } else {
      model_.primal();
    }
    if (!model_.isProvenOptimal()) {
      // Rare numerical trouble with a reused basis: start over from slacks.
      model_.allSlackBasis(true);
      model_.dual();
      if (!model_.isProvenOptimal()) {
        constexpr const char* kPhaseNames[] = {"utilization", "throughput", "latency"};
        return absl::InternalError(absl::StrCat("CLP status ", model_.status(), " on the path master of the ",
                                                kPhaseNames[spec_.phase], " phase"));
      }
    }
    ReadBack();
    return absl::OkStatus();
  }

  // U; the total carried; or the latency phase's sum(flow x path cost) of the free groups.
  double objective() const {
    if (minimizing_utilization()) return model_.primalColumnSolution()[0];
    if (minimizing_latency()) return model_.objectiveValue() + key_cost_;
    return -model_.objectiveValue();
  }
  // The link weights pricing searches with: the link prices, and with
  // protection rows each row's price on its arc (what a path that no failure
  // diverts pays; Length() is exact).
  const std::vector<double>& arc_weight() const {
    return protection_.empty() ? basis_.arc_weights : pricing_weights_;
  }
  // The link weights a second search toward `dst` uses when the first found
  // a path a failure diverts at a price: arc_weight() plus, on each failed
  // arc, what a unit diverted there puts on the rows at their prices.
  void DivertedWeights(int dst, std::vector<double>& out) const {
    out = pricing_weights_;
    protection_.AddDivertedPrices(dst, protection_price_, priced_failures_, out);
  }
  // The same without the rows' prices on their own arcs: what a path pays
  // when every failure diverts it before it reaches a limited link.
  void DivertedOnlyWeights(int dst, std::vector<double>& out) const {
    out = basis_.arc_weights;
    protection_.AddDivertedPrices(dst, protection_price_, priced_failures_, out);
  }
  // A path's dual length: its links' prices and what it puts on the
  // protection rows after their failures at their prices.
  double Length(int g, const PathColumn& path) const {
    double length = path_lengths_.Of(path);
    if (!protection_priced_) return length;
    if (!protection_.Kept(path)) {
      return length + protection_.PricedLoad(path, groups_[g]->dst, protection_price_, priced_failures_);
    }
    for (const auto& [row, load] : protection_.Of(path, groups_[g]->dst)) length += protection_price_[row] * load;
    return length;
  }
  // Per protection row: the excess the last solve left (solver units).
  const std::vector<double>& protection_excess() const { return protection_excess_; }
  bool protection_holds() const {
    return std::all_of(protection_excess_.begin(), protection_excess_.end(),
                       [](double excess) { return excess <= kBoundTolerance; });
  }

  struct GroupPrice {
    // What a new path must cost (in dual weight) less than to improve the master.
    double threshold = kInfinity;
    // The dual length of a path the group uses (its dearest used path when
    // frozen, its key when free); 0 means no path can improve the group
    // (none costs less than 0) and its shortest path costs 0, so pricing
    // needs no tree for it. kInfinity when unknown.
    double used_path_length = kInfinity;
  };

  GroupPrice PriceOf(int g) const {
    if (roles_[g] != Role::kFrozen) return {threshold_[g], key_length_[g]};
    // Moving flow off its dearest used path onto a cheaper one helps.
    double dearest = 0;
    for (const PathColumn& path : groups_[g]->paths) {
      if (path.flow > kBoundTolerance) dearest = std::max(dearest, Length(g, path));
    }
    return {dearest, dearest};
  }

 private:
  void Build() {
    ColumnWiseLp lp;
    const int arcs = static_cast<int>(graph_.arc_src.size());
    const bool mlu = minimizing_utilization();
    for (int a = 0; a < arcs; ++a) {
      const bool row_used = spec_.arc_open[a];
      lp.AddRow(-kInfinity, row_used ? spec_.arc_upper[a] - frozen_load_[a] : kInfinity);
    }
    send_row_.assign(graph_.node_count, -1);
    receive_row_.assign(graph_.node_count, -1);
    if (!fixed_demand()) {
      for (int v = 0; v < graph_.node_count; ++v) {
        if (HasLimit(spec_.send_limit, v)) send_row_[v] = lp.AddRow(-kInfinity, spec_.send_limit[v]);
        if (HasLimit(spec_.receive_limit, v)) receive_row_[v] = lp.AddRow(-kInfinity, spec_.receive_limit[v]);
      }
    }
    protection_first_row_ = lp.row_count();
    for (size_t r = 0; r < protection_.rows(); ++r) {
      lp.AddRow(-kInfinity, spec_.protection_rows[r].upper - frozen_protection_load_[r]);
    }
    if (mlu) {
      lp.AddColumn(1, spec_.utilization_floor, kInfinity);
      for (int a = 0; a < arcs; ++a) {
        if (spec_.arc_open[a] && spec_.arc_scale[a] > 0) lp.Add(a, -spec_.arc_scale[a]);
      }
    }
    // Paths: constants (a fixed group with one path), or columns.
    group_row_.assign(groups_.size(), -1);
    key_path_.assign(groups_.size(), -1);
    key_cost_ = 0;
    columns_.clear();
    const int first_group_row = lp.row_count();
    std::vector<uint8_t> row_status_of;  // per group row
    for (int g : free_groups_) {
      FlowGroup& group = *groups_[g];
      std::vector<int> open;
      for (size_t p = 0; p < group.paths.size(); ++p) {
        if (open_arcs_.Allow(group.paths[p])) open.push_back(static_cast<int>(p));
      }
      if (fixed_demand()) {
        AddFixedDemandGroup(lp, static_cast<int>(g), open, row_status_of);
      } else {
        AddRangeGroup(lp, static_cast<int>(g), open, row_status_of);
      }
    }
    // The utilization master holds the protection rows softly (an excess
    // column per row); the latency master starts from flows that hold them
    // (its rows' uppers allow what the utilization phase left).
    excess_first_column_ = lp.column_count();
    if (mlu) {
      for (size_t r = 0; r < protection_.rows(); ++r) {
        lp.AddColumn(kProtectionExcessCost, 0, kInfinity);
        lp.Add(protection_first_row_ + static_cast<int>(r), -1);
      }
    }
    lp.LoadInto(model_);

    // The remembered basis; what is new enters nonbasic at the bound its
    // flow sits on (rows: slack basic).
    model_.createStatus();
    auto row_status = [&](int row, uint8_t status) {
      model_.setRowStatus(row, status == kNoStatus ? ClpSimplex::basic : ToClp(status));
    };
    basis_.arc_rows.resize(arcs, kNoStatus);
    for (int a = 0; a < arcs; ++a) row_status(a, basis_.arc_rows[a]);
    basis_.send_rows.resize(graph_.node_count, kNoStatus);
    basis_.receive_rows.resize(graph_.node_count, kNoStatus);
    for (int v = 0; v < graph_.node_count; ++v) {
      if (send_row_[v] >= 0) row_status(send_row_[v], basis_.send_rows[v]);
      if (receive_row_[v] >= 0) row_status(receive_row_[v], basis_.receive_rows[v]);
    }
    for (size_t r = 0; r < row_status_of.size(); ++r) row_status(first_group_row + static_cast<int>(r), row_status_of[r]);
    for (size_t r = 0; r < protection_.rows(); ++r) {
      row_status(protection_first_row_ + static_cast<int>(r), basis_.protection_rows[r]);
      if (!mlu) continue;
      const uint8_t status = basis_.protection_rows[protection_.rows() + r];
      model_.setColumnStatus(excess_first_column_ + static_cast<int>(r),
                             status == kNoStatus ? ClpSimplex::atLowerBound : ToClp(status));
    }
    const int first_path_column = mlu ? 1 : 0;
    if (mlu) {
      // A cold start: U nonbasic at its floor beside an all-slack basis,
      // which the dual simplex starts from.
      model_.setColumnStatus(0, basis_.utilization == kNoStatus ? ClpSimplex::atLowerBound
                                                                 : ToClp(basis_.utilization));
    }
    for (size_t c = 0; c < columns_.size(); ++c) {
      const PathColumn& path = groups_[columns_[c].group]->paths[columns_[c].path];
      const int column = first_path_column + static_cast<int>(c);
      uint8_t status = path.status[spec_.phase];
      const double lower = model_.columnLower()[column], upper = model_.columnUpper()[column];
      if (status == kNoStatus) {
        // New to this master: start where its flow is (a group unfrozen
        // mid-split keeps its split, superbasic, for the primal simplex).
        status = path.flow <= lower + kBoundTolerance   ? ClpSimplex::atLowerBound
                 : path.flow >= upper - kBoundTolerance ? ClpSimplex::atUpperBound
                                                        : ClpSimplex::superBasic;
      }
      model_.setColumnStatus(column, ToClp(status));
      model_.primalColumnSolution()[column] =
          ToClp(status) == ClpSimplex::atUpperBound   ? upper
          : ToClp(status) == ClpSimplex::atLowerBound ? lower
                                                      : std::clamp(path.flow, lower, upper);
    }
  }

  // A group that routes exactly its demand (utilization phase), in key-path
  // form: the first open path (the key) carries the demand minus what the
  // other paths carry, so a two-path group needs no row of its own. The key's
  // load is a constant; each other path's column is its arcs minus the key's.
  // Three paths or more: one row keeps their sum within the demand.
  // Latency phase: the key's cost is a constant too, and each other path's
  // objective is its cost minus the key's.
  void AddFixedDemandGroup(ColumnWiseLp& lp, int g, const std::vector<int>& open,
                           std::vector<uint8_t>& row_status_of) {
    FlowGroup& group = *groups_[g];
    const double demand = spec_.group_upper[g];
    const PathColumn& key = group.paths[open[0]];
    key_path_[g] = open[0];
    for (int arc : key.arcs) lp.SetRowUpper(arc, lp.row_upper(arc) - demand);
    static const ProtectionIndex::Coefficients kNone;
    const ProtectionIndex::Coefficients& key_protection = protection_.empty() ? kNone : protection_.Of(key, group.dst);
    if (!protection_.empty()) {
      for (const auto& [row, load] : key_protection) {
        const int lp_row = protection_first_row_ + row;
        lp.SetRowUpper(lp_row, lp.row_upper(lp_row) - demand * load);
      }
    }
    const double key_cost = minimizing_latency() ? PathCost(key) : 0;
    key_cost_ += demand * key_cost;
    if (open.size() == 1) return;
    if (open.size() >= 3) {
      group_row_[g] = lp.AddRow(-kInfinity, demand);
      row_status_of.push_back(group.row_status[spec_.phase]);
    }
    auto contains = [](const std::vector<int>& arcs, int arc) {
      return std::find(arcs.begin(), arcs.end(), arc) != arcs.end();
    };
    for (size_t i = 1; i < open.size(); ++i) {
      const PathColumn& path = group.paths[open[i]];
      lp.AddColumn(minimizing_latency() ? PathCost(path) - key_cost : 0, 0, demand);
      for (int arc : path.arcs) {
        if (!contains(key.arcs, arc)) lp.Add(arc, 1);
      }
      for (int arc : key.arcs) {
        if (!contains(path.arcs, arc)) lp.Add(arc, -1);
      }
      if (!protection_.empty()) AddProtectionDifference(lp, path, group.dst, key_protection);
      if (group_row_[g] >= 0) lp.Add(group_row_[g], 1);
      columns_.push_back({g, open[i]});
    }
  }

  // A key-path column on the protection rows: its loads after each failure
  // less the key's.
  void AddProtectionDifference(ColumnWiseLp& lp, const PathColumn& path, int dst,
                               const ProtectionIndex::Coefficients& key) {
    const ProtectionIndex::Coefficients& loads = protection_.Of(path, dst);
    size_t k = 0;
    auto add = [&](int row, double value) {
      if (std::abs(value) > kLoadRounding) lp.Add(protection_first_row_ + row, value);
    };
    for (const auto& [row, load] : loads) {
      for (; k < key.size() && key[k].first < row; ++k) add(key[k].first, -key[k].second);
      if (k < key.size() && key[k].first == row) {
        add(row, load - key[k++].second);
      } else {
        add(row, load);
      }
    }
    for (; k < key.size(); ++k) add(key[k].first, -key[k].second);
  }

  double PathCost(const PathColumn& path) const {
    double cost = 0;
    for (int arc : path.arcs) cost += graph_.arc_cost_us[arc];
    return cost;
  }

  // A group that carries within [lower, upper] (throughput phase): a column
  // per path; with two paths or more a row holds their sum in the range,
  // with one the column's bounds do.
  void AddRangeGroup(ColumnWiseLp& lp, int g, const std::vector<int>& open,
                     std::vector<uint8_t>& row_status_of) {
    FlowGroup& group = *groups_[g];
    const double lower = spec_.group_lower[g], upper = spec_.group_upper[g];
    if (open.size() >= 2) {
      group_row_[g] = lp.AddRow(lower, upper);
      row_status_of.push_back(group.row_status[spec_.phase]);
    }
    for (int p : open) {
      const PathColumn& path = group.paths[p];
      lp.AddColumn(-1, group_row_[g] >= 0 ? 0 : lower, upper);
      for (int arc : path.arcs) lp.Add(arc, 1);
      if (group_row_[g] >= 0) lp.Add(group_row_[g], 1);
      if (send_row_[group.src] >= 0) lp.Add(send_row_[group.src], 1);
      if (receive_row_[group.dst] >= 0) lp.Add(receive_row_[group.dst], 1);
      columns_.push_back({g, p});
    }
  }

  void ReadBack() {
    const int arcs = static_cast<int>(graph_.arc_src.size());
    const bool mlu = minimizing_utilization();
    const double* x = model_.primalColumnSolution();
    const double* dj = model_.dualColumnSolution();
    const double* y = model_.dualRowSolution();
    for (int a = 0; a < arcs; ++a) basis_.arc_rows[a] = model_.getRowStatus(a);
    for (int v = 0; v < graph_.node_count; ++v) {
      if (send_row_[v] >= 0) basis_.send_rows[v] = model_.getRowStatus(send_row_[v]);
      if (receive_row_[v] >= 0) basis_.receive_rows[v] = model_.getRowStatus(receive_row_[v]);
    }
    if (mlu) basis_.utilization = model_.getColumnStatus(0);
    // Link prices: -dual of the (<=) arc row, >= 0 for a minimization; the
    // latency phase adds each link's cost, which its objective pays per unit.
    basis_.arc_weights.assign(arcs, 0);
    for (int a = 0; a < arcs; ++a) {
      if (!spec_.arc_open[a]) continue;
      basis_.arc_weights[a] = std::max(0.0, -y[a]) + (minimizing_latency() ? graph_.arc_cost_us[a] : 0);
    }
    path_lengths_ = PathLengths(basis_.arc_weights);
    // Protection rows: their prices, what pricing adds for them on their
    // arcs, and what the excess columns had to carry.
    protection_price_.assign(protection_.rows(), 0);
    protection_excess_.assign(protection_.rows(), 0);
    protection_priced_ = false;
    if (!protection_.empty()) {
      pricing_weights_ = basis_.arc_weights;
      for (size_t r = 0; r < protection_.rows(); ++r) {
        const int lp_row = protection_first_row_ + static_cast<int>(r);
        basis_.protection_rows[r] = model_.getRowStatus(lp_row);
        protection_price_[r] = std::max(0.0, -y[lp_row]);
        protection_priced_ |= protection_price_[r] > 0;
        pricing_weights_[spec_.protection_rows[r].arc] += protection_price_[r];
        if (!mlu) continue;
        const int column = excess_first_column_ + static_cast<int>(r);
        basis_.protection_rows[protection_.rows() + r] = model_.getColumnStatus(column);
        protection_excess_[r] = x[column] > kBoundTolerance ? x[column] : 0;
      }
      priced_failures_ = protection_.PricedFailures(protection_price_);
    }

    threshold_.assign(groups_.size(), kInfinity);
    key_length_.assign(groups_.size(), kInfinity);
    const int first_path_column = mlu ? 1 : 0;
    std::vector<int> single_column(groups_.size(), -1);
    for (int g : free_groups_) {
      for (PathColumn& path : groups_[g]->paths) {
        path.flow = 0;
        path.status[spec_.phase] = kNoStatus;
      }
    }
    for (size_t c = 0; c < columns_.size(); ++c) {
      const int column = first_path_column + static_cast<int>(c);
      FlowGroup& group = *groups_[columns_[c].group];
      PathColumn& path = group.paths[columns_[c].path];
      path.flow = std::max(0.0, x[column]);
      path.status[spec_.phase] = model_.getColumnStatus(column);
      if (group_row_[columns_[c].group] < 0) single_column[columns_[c].group] = column;
    }
    for (int g : free_groups_) {
      FlowGroup& group = *groups_[g];
      if (fixed_demand()) {
        ReadFixedDemandGroup(static_cast<int>(g), single_column[g], y, dj);
        continue;
      }
      const double node_duals = (send_row_[group.src] >= 0 ? y[send_row_[group.src]] : 0) +
                                (receive_row_[group.dst] >= 0 ? y[receive_row_[group.dst]] : 0);
      // Each unit carried earns 1 (the objective is -carried).
      if (group_row_[g] >= 0) {
        group.row_status[spec_.phase] = model_.getRowStatus(group_row_[g]);
        threshold_[g] = y[group_row_[g]] + node_duals + 1;
        continue;
      }
      group.row_status[spec_.phase] = kNoStatus;
      // One path, a variable without a group row: its bounds are the group's.
      // At a bound the group's demand limits it, so a new path competes with
      // it (the group's implicit dual is its reduced cost); elsewhere only
      // the links and fabrics price a new path.
      const int column = single_column[g];
      const double value = x[column], reduced_cost = dj[column];
      double group_dual = 0;
      if (value >= spec_.group_upper[g] - kBoundTolerance && reduced_cost < 0) group_dual = reduced_cost;
      if (spec_.group_lower[g] > 0 && value <= spec_.group_lower[g] + kBoundTolerance && reduced_cost > 0) {
        group_dual = reduced_cost;
      }
      threshold_[g] = group_dual + node_duals + 1;
    }
  }

  // The key carries the rest of the demand. A new path improves when it is
  // cheaper than the key, less what the key's own flow is worth when it is
  // empty (the dual of the group row, or of the other path's upper bound).
  void ReadFixedDemandGroup(int g, int single_column, const double* y, const double* dj) {
    FlowGroup& group = *groups_[g];
    const double demand = spec_.group_upper[g];
    PathColumn& key = group.paths[key_path_[g]];
    double others = 0;
    for (const PathColumn& path : group.paths) others += path.flow;
    key.flow = std::max(0.0, demand - others);
    double key_worth = 0;
    if (group_row_[g] >= 0) {
      group.row_status[spec_.phase] = model_.getRowStatus(group_row_[g]);
      key_worth = std::max(0.0, -y[group_row_[g]]);
    } else {
      group.row_status[spec_.phase] = kNoStatus;
      if (single_column >= 0 && model_.primalColumnSolution()[single_column] >= demand - kBoundTolerance) {
        key_worth = std::max(0.0, -dj[single_column]);
      }
    }
    const double key_length = Length(g, key);
    threshold_[g] = key_length - key_worth;
    key_length_[g] = key_length;
  }

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

// Drops the paths of `group` the master has not used for a while and would
// not use at these prices (no flow, nonbasic, reduced cost > 0 for
// kIdleRoundsBeforeDrop rounds in a row): removing nonbasic columns keeps the
// basis and the optimum, and keeps the master about as small as the set of
// split groups. Waiting a few rounds keeps a path the prices keep coming back
// to from being dropped and priced in again. A group left with one path
// forgets its statuses, so the path re-enters nonbasic at its flow if the
// group splits again.
template <typename LengthOf>
void DropIdlePaths(FlowGroup& group, const PhaseSpec& spec, const OpenArcs& open_arcs, const LengthOf& length_of,
                   double price_floor) {
  if (group.paths.size() < 2) return;
  size_t idle_count = 0;
  for (PathColumn& path : group.paths) {
    bool idle = path.flow <= kBoundTolerance && path.status[spec.phase] != ClpSimplex::basic &&
                open_arcs.Allow(path);
    if (idle) idle = length_of(path) > price_floor;
    path.idle_rounds = idle ? path.idle_rounds + 1 : 0;
    idle_count += path.idle_rounds >= kIdleRoundsBeforeDrop;
  }
  if (idle_count == 0 || idle_count == group.paths.size()) return;
  // The first path is the key of the utilization master's key-path form:
  // a new key changes every column of the group, so its statuses go.
  const bool key_dropped = group.paths[0].idle_rounds >= kIdleRoundsBeforeDrop;
  std::erase_if(group.paths, [](const PathColumn& path) { return path.idle_rounds >= kIdleRoundsBeforeDrop; });
  if (group.paths.size() == 1 || key_dropped) {
    for (PathColumn& path : group.paths) path.status[spec.phase] = kNoStatus;
    group.row_status[spec.phase] = kNoStatus;
  }
}

// The positions of the groups of a run by source (compressed rows).
class GroupsBySource {
 public:
  GroupsBySource(std::span<FlowGroup* const> groups, int node_count) : offsets_(node_count + 1, 0) {
    for (const FlowGroup* group : groups) ++offsets_[group->src + 1];
    for (int v = 0; v < node_count; ++v) offsets_[v + 1] += offsets_[v];
    positions_.resize(groups.size());
    std::vector<int> fill(offsets_.begin(), offsets_.end() - 1);
    for (size_t g = 0; g < groups.size(); ++g) positions_[fill[groups[g]->src]++] = static_cast<int>(g);
  }
  std::span<const int> of(int source) const {
    return std::span<const int>(positions_).subspan(offsets_[source], offsets_[source + 1] - offsets_[source]);
  }

 private:
  std::vector<int> offsets_, positions_;
};

}  // namespace

absl::StatusOr<PhaseOutcome> RunColumnGeneration(const Graph& graph, const PhaseSpec& spec,
                                                 std::span<FlowGroup* const> groups,
                                                 MasterBasis& basis,
                                                 const ColumnGenerationLimits& limits) {
  PhaseOutcome outcome;
  const int arcs = static_cast<int>(graph.arc_src.size());
  if (basis.arc_weights.size() != static_cast<size_t>(arcs)) {
    // No prices yet: 0, or the latency phase's costs (its weights are cost + price).
    basis.arc_weights.assign(arcs, 0);
    if (spec.phase == kLatencyPhase) basis.arc_weights = graph.arc_cost_us;
  }

  // After a failure: route what it broke at the bound still proven, or else
  // at the bound the last prices prove without the failed arcs, if it fits.
  if (const double inherited = InheritedLowerBound(spec, basis);
      spec.freeze_routed_groups && inherited > 0 && spec.protection_rows.empty()) {
    // A priced arc that closed was a bottleneck: the optimum most likely
    // rose, so the old one is not worth a try. Each proof is tried in order
    // of cost while it proves more than the attempts that failed.
    bool bottleneck_closed = false;
    for (int a = 0; a < arcs; ++a) bottleneck_closed |= !spec.arc_open[a] && basis.arc_weights[a] > 0;
    double bound = std::max(spec.utilization_floor, inherited);
    FailureAbsorber absorber(graph, spec, groups, basis.arc_weights);
    std::optional<std::vector<double>> load;
    bool attempted = false;
    auto absorb_at = [&](double proven) {
      if (attempted && proven <= bound * (1 + limits.relative_gap)) return;
      bound = std::max(bound, proven);
      load = absorber.AbsorbAt(bound * (1 + limits.relative_gap));
      attempted = true;
    };
    if (!bottleneck_closed) absorb_at(bound);
    if (!load.has_value()) absorb_at(RememberedPriceBound(spec, basis));
    if (!load.has_value()) absorb_at(absorber.PriceBound());
    if (load.has_value()) {
      outcome.absorbed = true;
      outcome.lower_bound = bound;
      outcome.objective = outcome.lower_bound;
      for (int a = 0; a < arcs; ++a) {
        if (!spec.arc_open[a] || spec.arc_scale[a] <= 0) continue;
        outcome.objective = std::max(outcome.objective, ((*load)[a] - spec.arc_upper[a]) / spec.arc_scale[a]);
      }
      RememberLowerBound(spec, outcome.lower_bound, {}, basis);
      outcome.arc_load = *std::move(load);
      for (int a = 0; a < arcs; ++a) {
        if (!spec.arc_open[a] || outcome.arc_load[a] < kLoadRounding) outcome.arc_load[a] = 0;
      }
      return outcome;
    }
  }

  // Groups by source, so one shortest-path tree prices all of a source's groups.
  const GroupsBySource by_source(groups, graph.node_count);
  const OpenArcs open_arcs(spec.arc_open);

  // One pass over every path: a group routed in full over open paths is
  // frozen (its load a constant of every master of this run); a group
  // without an open path gets the cheapest one under the last duals (0 on a
  // cold start: the lowest latency), or is left out when none reaches.
  std::vector<Role> roles(groups.size(), Role::kFree);
  std::vector<double> frozen_load(arcs, 0);
  const ProtectionIndex protection(spec, arcs);
  std::vector<double> frozen_protection_load(protection.rows(), 0);
  // What a group's flows put on the protection rows, times `sign`.
  auto add_protection_load = [&](const FlowGroup& group, double sign) {
    if (protection.empty()) return;
    for (const PathColumn& path : group.paths) {
      if (path.flow <= 0) continue;
      for (const auto& [row, load] : protection.Of(path, group.dst)) frozen_protection_load[row] += sign * path.flow * load;
    }
  };
  std::vector<char> without_open_path(groups.size(), 0);
  std::vector<char> source_needs_tree(graph.node_count, 0);
  for (size_t g = 0; g < groups.size(); ++g) {
    const FlowGroup& group = *groups[g];
    double routed = 0;
    bool all_open = true, any_open = false;
    for (const PathColumn& path : group.paths) {
      const bool open = open_arcs.Allow(path);
      routed += path.flow;
      all_open &= open;
      any_open |= open;
    }
    if (!any_open) {
      without_open_path[g] = 1;
      source_needs_tree[group.src] = 1;
    } else if (spec.freeze_routed_groups && all_open &&
               std::abs(routed - spec.group_upper[g]) <= kBoundTolerance * std::max(1.0, routed)) {
      roles[g] = Role::kFrozen;
      for (const PathColumn& path : group.paths) {
        for (int arc : path.arcs) frozen_load[arc] += path.flow;
      }
      add_protection_load(group, 1);
    }
  }
  PricedShortestPaths paths(graph);
  std::vector<int> targets;  // destinations of one source's groups to price or route
  for (int source = 0; source < graph.node_count; ++source) {
    if (!source_needs_tree[source]) continue;
    // A failure breaks a few groups per source: the search stops once it
    // reached their destinations.
    targets.clear();
    for (int g : by_source.of(source)) {
      if (without_open_path[g]) targets.push_back(groups[g]->dst);
    }
    paths.Run(source, basis.arc_weights, spec.arc_open, targets);
    for (int g : by_source.of(source)) {
      if (!without_open_path[g]) continue;
      FlowGroup& group = *groups[g];
      if (!paths.Reached(group.dst)) {
        roles[g] = Role::kLeftOut;
        for (PathColumn& path : group.paths) path.flow = 0;
        outcome.unroutable.push_back(g);
        continue;
      }
      group.paths.emplace_back(paths.PathTo(group.dst));
    }
  }
  std::vector<int> free_groups;
  for (size_t g = 0; g < groups.size(); ++g) {
    if (roles[g] == Role::kFree) free_groups.push_back(static_cast<int>(g));
  }
  Master master(graph, spec, groups, roles, free_groups, frozen_load, protection, frozen_protection_load, basis);
  const bool protected_phase = !protection.empty();
  const bool mlu = master.minimizing_utilization();
  // A group the failure cut off is left out, which can lower the optimum:
  // the old bound holds only for the same groups.
  outcome.lower_bound = spec.utilization_floor;
  if (outcome.unroutable == basis.bound_left_out) {
    outcome.lower_bound = std::max(outcome.lower_bound, InheritedLowerBound(spec, basis));
  }
  // This run's prices replace the remembered ones once it proves a bound.
  basis.price_weights.clear();
  double best_price_bound = 0;
  // While some groups are frozen, a round prices only the free groups'
  // sources (what a change touched); all groups are priced, and the bound
  // computed, once that finds nothing, so the result is still optimal over
  // every group and path.
  const bool some_frozen = std::count(roles.begin(), roles.end(), Role::kFrozen) > 0;
  bool partial = some_frozen;
  bool master_changed = true;
  struct PricedGroup {
    int group;
    double threshold;
    double tolerance;
  };
  std::vector<PricedGroup> priced;  // of one source
  while (true) {
    if (master_changed) {
      if (absl::Status solved = master.Solve(outcome.lp_solves == 0); !solved.ok()) return solved;
      ++outcome.lp_solves;
      outcome.objective = master.objective();
      if (mlu &&
          (outcome.objective - outcome.lower_bound <= limits.relative_gap * outcome.objective ||
           outcome.objective <= spec.utilization_enough) &&
          master.protection_holds()) {
        break;
      }
    }
    if (outcome.pricing_rounds >= limits.max_pricing_rounds) break;
    if (protected_phase && limits.stop != nullptr && (*limits.stop)()) {
      outcome.stopped = true;
      break;
    }
    ++outcome.pricing_rounds;

    // Price: the cheapest path of every group under the link duals.
    const std::vector<double>& weight = master.arc_weight();
    double bound_numerator = 0;
    struct Candidate {
      double gain;  // -reduced cost x demand: how much the path could improve the master
      int group;
      std::vector<int> arcs;
    };
    std::vector<Candidate> candidates;
    // Searches again, with the failed arcs priced for their destination
    // (Master::DivertedWeights, then DivertedOnlyWeights), the groups whose
    // first path a failure diverts onto priced rows: the path that avoids
    // that failure is often the one the master needs, and the first search
    // cannot see why.
    struct Retry {
      int group;
      double threshold, tolerance;
    };
    std::vector<Retry> retries;
    std::map<int, std::vector<double>> diverted_weight, diverted_only_weight;  // by destination, this round
    auto add_candidate = [&](int g, double threshold, double exact, std::vector<int> path) {
      const bool known = std::any_of(groups[g]->paths.begin(), groups[g]->paths.end(),
                                     [&](const PathColumn& column) { return column.arcs == path; });
      if (known && roles[g] == Role::kFree) return;
      if (known) path.clear();  // the group only needs to be free to use it
      candidates.push_back({(threshold - exact) * spec.group_upper[g], g, std::move(path)});
    };
    for (int source = 0; source < graph.node_count; ++source) {
      // The groups to price: the free ones, and in a full round the frozen
      // ones too; but a group that uses a path of dual length 0 cannot
      // improve and adds 0 to the bound, so it needs no tree. Prices sit on
      // the few bottleneck links, so most sources need none.
      priced.clear();
      targets.clear();
      for (int g : by_source.of(source)) {
        if (roles[g] == Role::kLeftOut || (partial && roles[g] != Role::kFree)) continue;
        const Master::GroupPrice price = master.PriceOf(g);
        const double tolerance = kPricingTolerance * std::max(std::abs(price.threshold), 1e-12);
        if (roles[g] == Role::kFree) {
          DropIdlePaths(*groups[g], spec, open_arcs, [&](const PathColumn& path) { return master.Length(g, path); },
                        price.threshold + tolerance);
        }
        if (price.used_path_length <= 0) continue;
        priced.push_back({g, price.threshold, tolerance});
        targets.push_back(groups[g]->dst);
      }
      if (priced.empty()) continue;
      paths.Run(source, weight, spec.arc_open, targets);
      retries.clear();
      for (const auto [g, threshold, tolerance] : priced) {
        FlowGroup& group = *groups[g];
        const double length = paths.weight(group.dst);
        bound_numerator += spec.group_upper[g] * length;
        if (!(length < threshold - tolerance)) continue;
        std::vector<int> path = paths.PathTo(group.dst);
        double exact = length;
        if (protected_phase) {
          // The search's length is exact only for paths no failure diverts.
          exact = master.Length(g, PathColumn(path));
          if (!(exact < threshold - tolerance)) {
            retries.push_back({g, threshold, tolerance});
            continue;
          }
        }
        add_candidate(g, threshold, exact, std::move(path));
      }
      for (const auto [g, threshold, tolerance] : retries) {
        const int dst = groups[g]->dst;
        for (auto* cache : {&diverted_weight, &diverted_only_weight}) {
          auto [it, added] = cache->try_emplace(dst);
          if (added && cache == &diverted_weight) master.DivertedWeights(dst, it->second);
          if (added && cache == &diverted_only_weight) master.DivertedOnlyWeights(dst, it->second);
          paths.Run(source, it->second, spec.arc_open, std::span<const int>(&dst, 1));
          if (!paths.Reached(dst)) continue;
          std::vector<int> path = paths.PathTo(dst);
          const double exact = master.Length(g, PathColumn(path));
          if (exact < threshold - tolerance) {
            add_candidate(g, threshold, exact, std::move(path));
            break;
          }
        }
      }
    }
    // The most promising paths only: a link is relieved by moving a few
    // groups, and every path in the master costs every later LP solve.
    const size_t keep = std::min(candidates.size(), static_cast<size_t>(limits.max_new_paths_per_round));
    std::partial_sort(candidates.begin(), candidates.begin() + keep, candidates.end(),
                      [](const Candidate& a, const Candidate& b) { return a.gain > b.gain; });
    for (size_t i = 0; i < keep; ++i) {
      const int g = candidates[i].group;
      if (roles[g] == Role::kFrozen) {
        // Its statuses are from an older master: start from its flows.
        roles[g] = Role::kFree;
        free_groups.push_back(g);
        for (const PathColumn& path : groups[g]->paths) {
          for (int arc : path.arcs) frozen_load[arc] -= path.flow;
        }
        add_protection_load(*groups[g], -1);
        for (PathColumn& path : groups[g]->paths) path.status[spec.phase] = kNoStatus;
        groups[g]->row_status[spec.phase] = kNoStatus;
      }
      if (!candidates[i].arcs.empty()) groups[g]->paths.emplace_back(std::move(candidates[i].arcs));
    }
    const size_t added = keep;
    if (partial) {
      master_changed = added > 0;
      partial = added > 0;  // nothing more among the free groups: price all
      continue;
    }
    master_changed = true;
    partial = some_frozen && std::count(roles.begin(), roles.end(), Role::kFrozen) > 0 && added > 0;
    if (mlu && !protected_phase) {
      // Lagrangian bound: for link prices w >= 0 scaled to sum(w * scale) = 1,
      // U* >= sum(demand * w-distance) - sum(w * arc_upper).
      double scale = 0;
      for (int a = 0; a < arcs; ++a) {
        if (!spec.arc_open[a]) continue;
        scale += weight[a] * spec.arc_scale[a];
        bound_numerator -= weight[a] * spec.arc_upper[a];
      }
      const double bound = scale > 0 ? bound_numerator / scale : 0;
      if (bound > best_price_bound) {
        best_price_bound = bound;
        basis.price_weights.assign(arcs, 0);
        for (int a = 0; a < arcs; ++a) {
          if (spec.arc_open[a]) basis.price_weights[a] = weight[a];
        }
        basis.price_arc_upper = spec.arc_upper;
        basis.price_numerator = bound_numerator;
      }
      outcome.lower_bound = std::max({outcome.lower_bound, bound, spec.utilization_floor});
      if (outcome.objective - outcome.lower_bound <= limits.relative_gap * outcome.objective) break;
    }
    if (added == 0) {
      // Nothing prices out: the master is optimal over all paths (with
      // protection rows, over the paths pricing could find).
      if (mlu && !protected_phase) outcome.lower_bound = outcome.objective;
      break;
    }
  }
  if (mlu) RememberLowerBound(spec, outcome.lower_bound, outcome.unroutable, basis);
  outcome.protection_excess = master.protection_excess();
  // The frozen groups' load is already summed: add the free groups' flows.
  // (Unfreezing subtracted from it, so clear the rounding left behind.)
  outcome.arc_load = std::move(frozen_load);
  for (int g : free_groups) {
    for (const PathColumn& path : groups[g]->paths) {
      for (int arc : path.arcs) outcome.arc_load[arc] += path.flow;
    }
  }
  for (int a = 0; a < arcs; ++a) {
    if (!spec.arc_open[a] || outcome.arc_load[a] < kLoadRounding) outcome.arc_load[a] = 0;
  }
  return outcome;
}

}  // namespace geodesic::pathcomp::internal
