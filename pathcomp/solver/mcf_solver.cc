#include "pathcomp/solver/mcf_solver.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <tuple>

#include "pathcomp/solver/internal/failure_loads.h"
#include "pathcomp/solver/internal/path_master.h"

namespace geodesic::pathcomp {

using internal::FlowGroup;
using internal::kInfinity;
using internal::MasterBasis;
using internal::PhaseOutcome;
using internal::PhaseSpec;

namespace {

// Flows below this (solver units, i.e. fractions of the largest capacity)
// are rounding noise from the LP, not traffic.
constexpr double kNegligibleFlow = 1e-12;
// What the latency phase's protection rows allow beyond the loads the
// utilization phase left (solver units): CLP's own tolerance, so that the
// flows it starts from are feasible to it (without it GEANT's latency master
// was proven infeasible at its own start).
constexpr double kProtectionRowSlack = 1e-6;

// The same nodes and arcs (their ends; capacities and costs may differ).
bool SameNetwork(const McfProblem& a, const McfProblem& b) {
  if (a.node_count != b.node_count || a.arcs.size() != b.arcs.size()) return false;
  for (size_t i = 0; i < a.arcs.size(); ++i) {
    if (a.arcs[i].src != b.arcs[i].src || a.arcs[i].dst != b.arcs[i].dst) return false;
  }
  return true;
}

// The same commodities, demands included (of problems on the same network).
bool SameCommodities(const McfProblem& a, const McfProblem& b) {
  if (a.commodities.size() != b.commodities.size()) return false;
  for (size_t i = 0; i < a.commodities.size(); ++i) {
    const McfCommodity& x = a.commodities[i];
    const McfCommodity& y = b.commodities[i];
    if (x.src != y.src || x.dst != y.dst || x.demand_gbps != y.demand_gbps || x.priority != y.priority) {
      return false;
    }
  }
  return true;
}

}  // namespace

// Everything a warm re-solve reuses: the groups with their paths and basis
// statuses, and per class and phase the rest of the last basis.
struct internal::SolverState {
  McfProblem problem;
  double gbps_per_unit = 1;  // the LPs see capacities as fractions of the largest
  internal::Graph graph;
  std::vector<FlowGroup> groups;  // sorted by (priority, src, dst)
  std::vector<int> group_of;      // per commodity: its group
  size_t filled_paths = 0, filled_arcs = 0;  // in the last allocation
  struct Class {
    uint32_t priority = 0;
    std::vector<int> groups;  // indices into groups, demand > 0
    std::array<MasterBasis, internal::kPhaseCount> bases;
  };
  std::vector<Class> classes;  // by priority, 0 first

  void LoadGraph(const McfProblem& updated) {
    problem = updated;
    graph.node_count = updated.node_count;
    graph.arc_src.clear();
    graph.arc_dst.clear();
    for (const McfArc& arc : updated.arcs) {
      graph.arc_src.push_back(arc.src);
      graph.arc_dst.push_back(arc.dst);
    }
    graph.Index();
    LoadArcValues(problem);
  }

  // Same nodes and arc endpoints as the loaded problem: only capacities,
  // costs and the rest of the problem change.
  void LoadArcValues(const McfProblem& updated) {
    if (&updated != &problem) problem = updated;
    graph.arc_capacity.resize(updated.arcs.size());
    graph.arc_cost_us.resize(updated.arcs.size());
    for (size_t a = 0; a < updated.arcs.size(); ++a) {
      graph.arc_capacity[a] = std::max(0.0, updated.arcs[a].capacity_gbps) / gbps_per_unit;
      graph.arc_cost_us[a] = updated.arcs[a].cost_us;
    }
  }
};

namespace {

using internal::SolverState;

// A state for `problem` with nothing solved yet: its groups, by (priority,
// src, dst), and its classes; capacities in units of `gbps_per_unit`.
std::unique_ptr<SolverState> NewState(const McfProblem& problem, double gbps_per_unit) {
  auto state = std::make_unique<SolverState>();
  state->gbps_per_unit = gbps_per_unit;
  state->LoadGraph(problem);
  // One group per (priority, src, dst) with demand.
  state->group_of.resize(problem.commodities.size());
  std::map<std::tuple<uint32_t, int, int>, std::vector<int>> members;
  for (size_t i = 0; i < problem.commodities.size(); ++i) {
    const McfCommodity& commodity = problem.commodities[i];
    members[{commodity.priority, commodity.src, commodity.dst}].push_back(static_cast<int>(i));
  }
  for (const auto& [key, commodities] : members) {
    const auto [priority, src, dst] = key;
    FlowGroup group;
    group.priority = priority;
    group.src = src;
    group.dst = dst;
    group.commodities = commodities;
    for (int commodity : commodities) state->group_of[commodity] = static_cast<int>(state->groups.size());
    for (int commodity : commodities) group.demand += problem.commodities[commodity].demand_gbps;
    group.demand /= state->gbps_per_unit;
    if (state->classes.empty() || state->classes.back().priority != priority) {
      state->classes.emplace_back();
      state->classes.back().priority = priority;
    }
    if (group.demand > 0) state->classes.back().groups.push_back(static_cast<int>(state->groups.size()));
    state->groups.push_back(std::move(group));
  }
  return state;
}

// A state for `problem` (on `old`'s network, other commodities or demands)
// that starts where `old` ended, which it takes apart.
std::unique_ptr<SolverState> CarriedOver(SolverState& old, const McfProblem& problem) {
  // In the old solver units: the flows and bases carried are in them.
  std::unique_ptr<SolverState> state = NewState(problem, old.gbps_per_unit);
  // Both lists of groups are in (priority, src, dst) order: a group that
  // was there before takes its paths, their statuses and its row's, with
  // its flows scaled to its new demand (a group whose demand is the same is
  // still routed in full, and a later phase keeps it as it is).
  auto key = [](const FlowGroup& group) { return std::tuple(group.priority, group.src, group.dst); };
  size_t k = 0;
  for (FlowGroup& group : state->groups) {
    while (k < old.groups.size() && key(old.groups[k]) < key(group)) ++k;
    if (k == old.groups.size() || key(old.groups[k]) != key(group)) continue;
    FlowGroup& was = old.groups[k];
    const double scale = was.demand > 0 ? group.demand / was.demand : 0;
    group.paths = std::move(was.paths);
    for (internal::PathColumn& path : group.paths) path.flow *= scale;
    std::copy(std::begin(was.row_status), std::end(was.row_status), std::begin(group.row_status));
  }
  // A class keeps the rest of its bases (the link prices, the arc rows'
  // statuses); the lower bounds they remember were proven for other demands.
  for (SolverState::Class& cls : state->classes) {
    auto was = std::find_if(old.classes.begin(), old.classes.end(),
                            [&](const SolverState::Class& c) { return c.priority == cls.priority; });
    if (was == old.classes.end()) continue;
    cls.bases = std::move(was->bases);
    for (MasterBasis& basis : cls.bases) basis.ForgetProofs();
  }
  state->filled_paths = old.filled_paths;
  state->filled_arcs = old.filled_arcs;
  return state;
}

// Solves every class in priority order over `state`, whose groups may hold
// paths (and bases) from an earlier solve.
class ClassSequence {
 public:
  ClassSequence(const McfSolverConfig& config, SolverState& state, McfSolveStats& stats)
      : config_(config), state_(state), stats_(stats) {}

  absl::StatusOr<McfAllocation> Run() {
    const internal::Graph& graph = state_.graph;
    const int arcs = static_cast<int>(graph.arc_src.size());
    load_.assign(arcs, 0);
    sent_.assign(graph.node_count, 0);
    received_.assign(graph.node_count, 0);
    McfAllocation allocation;
    failure_loads_.clear();
    for (const McfFailure& failure : state_.problem.protection.failures) failure_loads_.emplace_back(graph, failure);
    std::vector<const FlowGroup*> solved;  // the groups of the classes before
    for (SolverState::Class& cls : state_.classes) {
      std::vector<FlowGroup*> groups;
      groups.reserve(cls.groups.size());
      for (int g : cls.groups) groups.push_back(&state_.groups[g]);
      protection_rows_ = ProtectionRowsOf(cls.priority, solved);
      solved.insert(solved.end(), groups.begin(), groups.end());
      const McfObjective objective = state_.problem.ObjectiveOf(cls.priority);
      McfClassResult result{.priority = cls.priority, .objective = objective};
      absl::StatusOr<PhaseOutcome> last_phase =
          objective == McfObjective::kMinMaxUtilization ? MinMaxUtilization(cls, groups, result)
          : objective == McfObjective::kMinLatency      ? MinLatency(cls, groups, result)
                                                        : MaxFairThroughput(cls, groups, result);
      if (!last_phase.ok()) return last_phase.status();
      for (size_t a = 0; a < load_.size(); ++a) load_[a] += last_phase->arc_load[a];
      std::vector<char> routable(groups.size(), 1);
      for (int position : last_phase->unroutable) routable[position] = 0;
      for (size_t i = 0; i < groups.size(); ++i) {
        const FlowGroup& group = *groups[i];
        if (!routable[i]) {
          for (int commodity : group.commodities) allocation.unroutable.push_back(commodity);
          continue;
        }
        result.demand_gbps += group.demand * state_.gbps_per_unit;
        for (const internal::PathColumn& path : group.paths) {
          if (path.flow <= kNegligibleFlow) continue;
          sent_[group.src] += path.flow;
          received_[group.dst] += path.flow;
          result.carried_gbps += path.flow * state_.gbps_per_unit;
        }
      }
      result.max_utilization = MaxUtilization();
      result.failure_limits = static_cast<int>(protection_rows_.size());
      allocation.classes.push_back(result);
    }
    Fill(allocation);
    return allocation;
  }

 private:
  // Both return the outcome of the class's last phase, whose flows are final.
  // `enough`: a U at which to stop unproven (PhaseSpec::utilization_enough).
  absl::StatusOr<PhaseOutcome> MinMaxUtilization(SolverState::Class& cls,
                                                     const std::vector<FlowGroup*>& groups,
                                                     McfClassResult& result, double enough = 0) {
    const internal::Graph& graph = state_.graph;
    PhaseSpec spec;
    spec.phase = internal::kUtilizationPhase;
    spec.freeze_routed_groups = true;
    spec.arc_scale = graph.arc_capacity;
    spec.arc_upper.resize(load_.size());
    spec.arc_open.resize(load_.size());
    for (size_t a = 0; a < load_.size(); ++a) {
      spec.arc_upper[a] = -load_[a];
      spec.arc_open[a] = graph.arc_capacity[a] > 0;
    }
    spec.group_upper.resize(groups.size());
    for (size_t i = 0; i < groups.size(); ++i) spec.group_upper[i] = groups[i]->demand;
    spec.group_lower = spec.group_upper;
    spec.utilization_enough = enough;
    spec.protection_rows = protection_rows_;
    spec.failure_loads = &failure_loads_;
    absl::StatusOr<PhaseOutcome> outcome = Run(spec, groups, cls.bases[internal::kUtilizationPhase]);
    if (!outcome.ok()) return outcome.status();
    result.utilization_lower_bound = outcome->lower_bound;
    // The latency phase holds its rows hard: from what this phase left.
    for (size_t r = 0; r < protection_rows_.size(); ++r) {
      const double excess = outcome->protection_excess[r];
      protection_rows_[r].upper += excess + kProtectionRowSlack;
      if (excess * state_.gbps_per_unit > result.failure_limit_excess_gbps) {
        result.failure_limit_excess_gbps = excess * state_.gbps_per_unit;
        result.failure_limit_excess_failure = protection_rows_[r].failure;
        result.failure_limit_excess_arc = protection_rows_[r].arc;
      }
    }
    return outcome;
  }

  // First the least MLU U*, then the least latency with every link at or
  // below the cap (LatencyUtilizationCap of U*). The MLU phase's flows meet
  // the cap, so the latency phase starts from them, every group frozen, and
  // frees only the groups that a shorter path can improve. The MLU phase
  // stops once its U shows the cap is the target: U* itself is not needed.
  absl::StatusOr<PhaseOutcome> MinLatency(SolverState::Class& cls, const std::vector<FlowGroup*>& groups,
                                          McfClassResult& result) {
    const McfClassPolicy& policy = state_.problem.PolicyOf(cls.priority);
    absl::StatusOr<PhaseOutcome> optimum =
        MinMaxUtilization(cls, groups, result, policy.utilization_target / (1 + policy.mlu_slack));
    if (!optimum.ok()) return optimum.status();
    const internal::Graph& graph = state_.graph;
    result.utilization_cap = LatencyUtilizationCap(policy, optimum->objective);
    PhaseSpec spec;
    spec.phase = internal::kLatencyPhase;
    spec.freeze_routed_groups = true;
    spec.arc_upper.resize(load_.size());
    spec.arc_open.resize(load_.size());
    for (size_t a = 0; a < load_.size(); ++a) {
      spec.arc_open[a] = graph.arc_capacity[a] > 0;
      // U* bounds every open arc's load, prior classes included, so the cap
      // leaves each at least as much room as the MLU phase's flows use.
      spec.arc_upper[a] = std::max(0.0, result.utilization_cap * graph.arc_capacity[a] - load_[a]);
    }
    spec.group_upper.resize(groups.size());
    for (size_t i = 0; i < groups.size(); ++i) spec.group_upper[i] = groups[i]->demand;
    spec.group_lower = spec.group_upper;
    spec.protection_rows = protection_rows_;
    spec.failure_loads = &failure_loads_;
    // The latency flows load links above U*, up to the cap: a warm re-solve
    // must not absorb a failure at the old bound on top of them (the
    // absorber routes only what broke), so the MLU phase forgets its bound
    // and proves the new optimum with its LP, from these flows.
    internal::MasterBasis& mlu_basis = cls.bases[internal::kUtilizationPhase];
    mlu_basis.proven_lower_bound = 0;
    mlu_basis.price_weights.clear();
    return Run(spec, groups, cls.bases[internal::kLatencyPhase]);
  }

  // First the largest common fraction (the max-concurrent flow in what the
  // classes before left), then the most total with nobody below it.
  absl::StatusOr<PhaseOutcome> MaxFairThroughput(SolverState::Class& cls,
                                                     const std::vector<FlowGroup*>& groups,
                                                     McfClassResult& result) {
    const internal::Graph& graph = state_.graph;
    const int arcs = static_cast<int>(graph.arc_src.size());
    std::vector<double> residual(arcs);
    for (int a = 0; a < arcs; ++a) residual[a] = std::max(0.0, graph.arc_capacity[a] - load_[a]);
    std::vector<double> send = FabricResidual(state_.problem.node_send_gbps, sent_);
    std::vector<double> receive = FabricResidual(state_.problem.node_receive_gbps, received_);

    PhaseSpec concurrent;
    concurrent.phase = internal::kUtilizationPhase;
    concurrent.freeze_routed_groups = true;
    concurrent.arc_scale = residual;
    concurrent.arc_upper.assign(arcs, 0);
    for (int a = 0; a < arcs; ++a) concurrent.arc_open.push_back(residual[a] > kNegligibleFlow);
    for (const FlowGroup* group : groups) {
      concurrent.group_lower.push_back(group->demand);
      concurrent.group_upper.push_back(group->demand);
    }
    absl::StatusOr<PhaseOutcome> first = Run(concurrent, groups, cls.bases[internal::kUtilizationPhase]);
    if (!first.ok()) return first.status();
    // Loads scale with the fraction, so it is what the busiest link and the
    // busiest fabric allow, capped at 1.
    std::vector<char> served(groups.size(), 1);
    for (int position : first->unroutable) served[position] = 0;
    double fraction = first->objective > 1 ? 1 / first->objective : 1.0;
    std::vector<double> class_send(graph.node_count, 0), class_receive(graph.node_count, 0);
    for (size_t i = 0; i < groups.size(); ++i) {
      if (!served[i]) continue;
      class_send[groups[i]->src] += groups[i]->demand;
      class_receive[groups[i]->dst] += groups[i]->demand;
    }
    for (int v = 0; v < graph.node_count; ++v) {
      if (class_send[v] > 0) fraction = std::min(fraction, send[v] / class_send[v]);
      if (class_receive[v] > 0) fraction = std::min(fraction, receive[v] / class_receive[v]);
    }
    result.fair_fraction = fraction;

    PhaseSpec throughput;
    throughput.phase = internal::kThroughputPhase;
    throughput.arc_upper = residual;
    for (int a = 0; a < arcs; ++a) throughput.arc_open.push_back(graph.arc_capacity[a] > 0);
    for (size_t i = 0; i < groups.size(); ++i) {
      // A hair below the fraction, so rounding in the first LP cannot make
      // the second infeasible.
      throughput.group_lower.push_back(served[i] ? fraction * (1 - 1e-9) * groups[i]->demand : 0);
      throughput.group_upper.push_back(groups[i]->demand);
    }
    throughput.send_limit = std::move(send);
    throughput.receive_limit = std::move(receive);
    absl::StatusOr<PhaseOutcome> second = Run(throughput, groups, cls.bases[internal::kThroughputPhase]);
    return second;
  }

  // The protection rows of class `priority`: its failure limits less what
  // the classes before it (`solved`) put on each limit's arc after its failure.
  std::vector<internal::ProtectionRow> ProtectionRowsOf(uint32_t priority,
                                                        const std::vector<const FlowGroup*>& solved) const {
    std::vector<internal::ProtectionRow> rows;
    const auto limits = state_.problem.protection.limits.find(priority);
    if (limits == state_.problem.protection.limits.end()) return rows;
    std::map<int, std::vector<double>> after;  // failure -> per arc, what the classes before load
    for (const McfFailureLimit& limit : limits->second) {
      auto [it, inserted] = after.try_emplace(limit.failure);
      if (inserted) {
        it->second.assign(state_.graph.arc_src.size(), 0);
        for (const FlowGroup* group : solved) {
          for (const internal::PathColumn& path : group->paths) {
            if (path.flow <= kNegligibleFlow) continue;
            failure_loads_[limit.failure].ForEach(path.arcs, group->dst, [&](int arc, double load) {
              it->second[arc] += path.flow * load;
            });
          }
        }
      }
      rows.push_back({.failure = limit.failure,
                      .arc = limit.arc,
                      .upper = limit.limit_gbps / state_.gbps_per_unit - it->second[limit.arc]});
    }
    return rows;
  }

  std::vector<double> FabricResidual(const std::vector<double>& limits_gbps,
                                     const std::vector<double>& used) const {
    std::vector<double> residual(state_.graph.node_count, kInfinity);
    if (limits_gbps.empty()) return residual;
    for (int v = 0; v < state_.graph.node_count; ++v) {
      residual[v] = std::max(0.0, limits_gbps[v] / state_.gbps_per_unit - used[v]);
    }
    return residual;
  }

  absl::StatusOr<PhaseOutcome> Run(const PhaseSpec& spec, const std::vector<FlowGroup*>& groups,
                                   MasterBasis& basis) {
    absl::StatusOr<PhaseOutcome> outcome = internal::RunColumnGeneration(
        state_.graph, spec, groups, basis,
        {.relative_gap = config_.relative_gap,
         .max_pricing_rounds = config_.max_pricing_rounds,
         .max_new_paths_per_round = spec.phase == internal::kLatencyPhase ? config_.max_new_paths_per_latency_round
                                                                       : config_.max_new_paths_per_round,
         .stop = state_.problem.protection.stop ? &state_.problem.protection.stop : nullptr,
         .threads = config_.threads});
    if (outcome.ok()) {
      stats_.pricing_rounds += outcome->pricing_rounds;
      stats_.pricing_threads = std::max(stats_.pricing_threads, outcome->pricing_threads);
      stats_.lp_solves += outcome->lp_solves;
      stats_.absorbed_phases += outcome->absorbed;
      stats_.stopped |= outcome->stopped;
    }
    return outcome;
  }

  double MaxUtilization() const {
    double highest = 0;
    for (size_t a = 0; a < load_.size(); ++a) {
      if (state_.graph.arc_capacity[a] > 0) highest = std::max(highest, load_[a] / state_.graph.arc_capacity[a]);
    }
    return highest;
  }

  void Fill(McfAllocation& allocation) const {
    const McfProblem& problem = state_.problem;
    const double unit = state_.gbps_per_unit;
    allocation.paths = McfPaths(problem.commodities.size());
    allocation.carried_gbps.assign(problem.commodities.size(), 0);
    std::sort(allocation.unroutable.begin(), allocation.unroutable.end());
    for (const FlowGroup& group : state_.groups) stats_.columns += static_cast<int>(group.paths.size());
    // A re-solve moves a few paths: sized as the last allocation, a little more.
    allocation.paths.Reserve(state_.filled_paths + state_.filled_paths / 8, state_.filled_arcs + state_.filled_arcs / 8);
    for (size_t commodity = 0; commodity < problem.commodities.size(); ++commodity) {
      const FlowGroup& group = state_.groups[state_.group_of[commodity]];
      if (group.demand <= 0) continue;
      // Gbps per solver unit of the group's flow.
      const double gbps = problem.commodities[commodity].demand_gbps / group.demand;
      for (const internal::PathColumn& path : group.paths) {
        if (path.flow <= kNegligibleFlow) continue;
        allocation.paths.Add(commodity, path.arcs, path.flow * gbps);
        allocation.carried_gbps[commodity] += path.flow * gbps;
      }
    }
    state_.filled_paths = allocation.paths.path_count();
    state_.filled_arcs = allocation.paths.arc_count();
    allocation.arc_load_gbps.resize(load_.size());
    for (size_t a = 0; a < load_.size(); ++a) allocation.arc_load_gbps[a] = load_[a] * unit;
    allocation.max_utilization = MaxUtilization();
    allocation.stats = stats_;
  }

  const McfSolverConfig& config_;
  SolverState& state_;
  McfSolveStats& stats_;
  std::vector<double> load_;             // per arc, solver units, classes so far
  std::vector<double> sent_, received_;  // per node, solver units, classes so far
  std::vector<internal::FailureLoads> failure_loads_;  // per McfProblem::protection failure
  std::vector<internal::ProtectionRow> protection_rows_;  // of the class being solved
};

}  // namespace

McfPaths::Range McfPaths::operator[](size_t commodity) const {
  if (commodity > last_ || entries_.empty()) return {this, entries_.size(), entries_.size()};
  return {this, first_[commodity], commodity == last_ ? entries_.size() : first_[commodity + 1]};
}

void McfPaths::Add(size_t commodity, std::span<const int> arcs, double gbps) {
  if (commodity >= size() || (!entries_.empty() && commodity < last_)) {
    // A caller's bug, and the ranges would silently be wrong: stop here.
    std::fprintf(stderr, "McfPaths::Add: commodity %zu out of order (last %zu, size %zu)\n", commodity, last_, size());
    std::abort();
  }
  // Commodities between the last one with a path and this one have none.
  if (entries_.empty()) {
    for (size_t c = 0; c <= commodity; ++c) first_[c] = 0;
  } else {
    for (size_t c = last_ + 1; c <= commodity; ++c) first_[c] = entries_.size();
  }
  last_ = commodity;
  entries_.push_back({arcs_.size(), arcs.size(), gbps});
  arcs_.insert(arcs_.end(), arcs.begin(), arcs.end());
}

void McfPaths::Reserve(size_t paths, size_t arcs) {
  entries_.reserve(paths);
  arcs_.reserve(arcs);
}

McfSolver::McfSolver(McfSolverConfig config) : config_(config) {}

void McfSolver::set_threads(int threads) { config_.threads = std::max(threads, 1); }
McfSolver::~McfSolver() = default;

absl::StatusOr<McfAllocation> McfSolver::Solve(const McfProblem& problem) {
  state_.reset();
  if (absl::Status valid = ValidateMcfProblem(problem); !valid.ok()) return valid;
  double largest = 0;
  for (const McfArc& arc : problem.arcs) largest = std::max(largest, arc.capacity_gbps);
  std::unique_ptr<SolverState> state = NewState(problem, largest > 0 ? largest : 1);
  McfSolveStats stats;
  absl::StatusOr<McfAllocation> allocation = ClassSequence(config_, *state, stats).Run();
  if (allocation.ok()) state_ = std::move(state);
  return allocation;
}

absl::StatusOr<McfAllocation> McfSolver::Resolve(const McfProblem& problem) {
  if (state_ == nullptr || !SameNetwork(state_->problem, problem)) return Solve(problem);
  if (absl::Status valid = ValidateMcfProblem(problem); !valid.ok()) return valid;
  if (SameCommodities(state_->problem, problem)) {
    state_->LoadArcValues(problem);
  } else {
    state_ = CarriedOver(*state_, problem);
  }
  SolverState& state = *state_;
  // Paths over a dead arc are gone for good; the rest keep their statuses.
  // The bases stay as they are: CLP repairs a basis that lost columns.
  std::vector<char> usable(state.graph.arc_capacity.size());
  for (size_t a = 0; a < usable.size(); ++a) usable[a] = state.graph.arc_capacity[a] > 0;
  const internal::OpenArcs usable_arcs(usable);
  for (FlowGroup& group : state.groups) {
    std::erase_if(group.paths, [&](const internal::PathColumn& path) { return !usable_arcs.Allow(path); });
  }
  McfSolveStats stats{.warm = true};
  absl::StatusOr<McfAllocation> allocation = ClassSequence(config_, state, stats).Run();
  if (!allocation.ok()) state_.reset();
  return allocation;
}

}  // namespace geodesic::pathcomp
