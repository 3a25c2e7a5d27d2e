#include "pathcomp/solver/internal/restricted_master.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"

namespace geodesic::pathcomp::internal {
namespace {

// CLP's feasibility tolerance (see the constructor).
constexpr double kPrimalTolerance = 1e-8;

// What a unit of excess over a protection row costs the utilization
// master: far more than any utilization it could buy (U is about 1 in the
// solver's units), so the master holds every row it can.
constexpr double kProtectionExcessCost = 1e4;

bool HasLimit(const std::vector<double>& limits, int node) {
  return !limits.empty() && std::isfinite(limits[node]);
}

ClpSimplex::Status ToClp(uint8_t status) { return static_cast<ClpSimplex::Status>(status); }

}  // namespace

RestrictedMaster::RestrictedMaster(const Graph& graph, const PhaseSpec& spec, std::span<FlowGroup* const> groups,
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
  // Flows are fractions of the largest capacity, so a small group's demand
  // is 1e-4 of a unit or less: CLP's default feasibility tolerance (1e-7)
  // would let a row's load be off by a thousandth of it, and the link
  // utilizations by a millionth, more than the gap the phases prove.
  model_.setPrimalTolerance(kPrimalTolerance);
  if (basis_.protection_rows.size() != 2 * protection_.rows()) {
    basis_.protection_rows.assign(2 * protection_.rows(), kNoStatus);
  }
}

absl::Status RestrictedMaster::Solve(bool first_in_run) {
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

double RestrictedMaster::objective() const {
  if (minimizing_utilization()) return model_.primalColumnSolution()[0];
  if (minimizing_latency()) return model_.objectiveValue() + key_cost_;
  return -model_.objectiveValue();
}

const std::vector<double>& RestrictedMaster::arc_weight() const {
  return protection_.empty() ? basis_.arc_weights : pricing_weights_;
}

void RestrictedMaster::DivertedWeights(int dst, std::vector<double>& out) const {
  out = pricing_weights_;
  protection_.AddDivertedPrices(dst, protection_price_, priced_failures_, out);
}

void RestrictedMaster::DivertedOnlyWeights(int dst, std::vector<double>& out) const {
  out = basis_.arc_weights;
  protection_.AddDivertedPrices(dst, protection_price_, priced_failures_, out);
}

double RestrictedMaster::Length(int g, const PathColumn& path) const {
  double length = path_lengths_.Of(path);
  if (!protection_priced_) return length;
  if (!protection_.Kept(path)) {
    return length + protection_.PricedLoad(path, groups_[g]->dst, protection_price_, priced_failures_);
  }
  for (const auto& [row, load] : protection_.Of(path, groups_[g]->dst)) length += protection_price_[row] * load;
  return length;
}

bool RestrictedMaster::protection_holds() const {
  return std::all_of(protection_excess_.begin(), protection_excess_.end(),
                     [](double excess) { return excess <= kBoundTolerance; });
}

RestrictedMaster::GroupPrice RestrictedMaster::PriceOf(int g) const {
  if (roles_[g] != Role::kFrozen) return {threshold_[g], key_length_[g]};
  // Moving flow off its dearest used path onto a cheaper one helps.
  double dearest = 0;
  for (const PathColumn& path : groups_[g]->paths) {
    if (path.flow > kBoundTolerance) dearest = std::max(dearest, Length(g, path));
  }
  return {dearest, dearest};
}

void RestrictedMaster::Build() {
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

void RestrictedMaster::AddFixedDemandGroup(ColumnWiseLp& lp, int g, const std::vector<int>& open,
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
  const double key_cost = minimizing_latency() ? graph_.LatencyUs(key.arcs) : 0;
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
    lp.AddColumn(minimizing_latency() ? graph_.LatencyUs(path.arcs) - key_cost : 0, 0, demand);
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

void RestrictedMaster::AddProtectionDifference(ColumnWiseLp& lp, const PathColumn& path, int dst,
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

void RestrictedMaster::AddRangeGroup(ColumnWiseLp& lp, int g, const std::vector<int>& open,
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

void RestrictedMaster::ReadBack() {
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

void RestrictedMaster::ReadFixedDemandGroup(int g, int single_column, const double* y, const double* dj) {
  FlowGroup& group = *groups_[g];
  const double demand = spec_.group_upper[g];
  PathColumn& key = group.paths[key_path_[g]];
  double others = 0;
  for (const PathColumn& path : group.paths) others += path.flow;
  if (others > demand * (1 + kBoundTolerance)) {
    // CLP holds the group's row to within its feasibility tolerance, which
    // is large next to a small group's demand (in solver units, a fraction
    // of the largest capacity): the other paths may add up to a little
    // more. A group carries its demand, no more (rounding aside).
    for (PathColumn& path : group.paths) path.flow *= demand / others;
    others = demand;
  }
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

}  // namespace geodesic::pathcomp::internal
