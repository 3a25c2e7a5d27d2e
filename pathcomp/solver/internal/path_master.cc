#include "pathcomp/solver/internal/path_master.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <thread>

#include "absl/strings/str_cat.h"
#include "pathcomp/solver/internal/failure_absorber.h"
#include "pathcomp/solver/internal/failure_loads.h"
#include "pathcomp/solver/internal/groups_by_source.h"
#include "pathcomp/solver/internal/phase_bounds.h"
#include "pathcomp/solver/internal/priced_shortest_paths.h"
#include "pathcomp/solver/internal/restricted_master.h"
#include "pathcomp/solver/internal/spread_start.h"

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
// Pricing shares a round's sources out to more threads only while each gets
// this many: a small network's round is over before a thread starts.
constexpr int kSourcesPerPricingThread = 48;

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
      for (const auto& [row, load] : protection.Of(path, group.dst)) {
        frozen_protection_load[row] += sign * path.flow * load;
      }
    }
  };
  const bool from_nothing =
      std::all_of(groups.begin(), groups.end(), [](const FlowGroup* group) { return group->paths.empty(); });
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
  // From nothing (no group had a path), the lowest-latency paths load a few
  // links far above the optimum: they are spread first (spread_start.h).
  const bool spread = from_nothing && spec.phase == kUtilizationPhase && protection.empty() &&
                      SpreadFirstPaths(graph, spec, groups, roles, by_source, paths);
  std::vector<int> free_groups;
  for (size_t g = 0; g < groups.size(); ++g) {
    if (roles[g] == Role::kFree) free_groups.push_back(static_cast<int>(g));
  }
  RestrictedMaster master(graph, spec, groups, roles, free_groups, frozen_load, protection, frozen_protection_load,
                          basis);
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
  // A partial round saves the trees of the sources without a free group,
  // but cannot free a frozen group. When a failure broke more groups than a
  // round adds paths for, from a quarter of the sources or more, partial
  // rounds save little and go on for as long as they find paths, while the
  // bottleneck it moved needs frozen groups moved: every round is then full
  // (Cogentco's busiest link down, 4,554 groups broken at 81 of 197 sources,
  // re-solved in 59 rounds, 1.4-1.8 s, with partial rounds, in 27 rounds,
  // 0.64 s, with full ones). Not measured with protection rows, whose
  // pricing is approximate: they keep partial rounds.
  std::vector<char> source_role(graph.node_count);  // 0: no group, 1: frozen ones only, 2: a free one
  auto few_free_sources = [&] {
    if (protected_phase || free_groups.size() <= static_cast<size_t>(limits.max_new_paths_per_round)) return true;
    int free_sources = 0, sources = 0;
    std::fill(source_role.begin(), source_role.end(), 0);
    for (size_t g = 0; g < groups.size(); ++g) {
      if (roles[g] == Role::kLeftOut) continue;
      char& role = source_role[groups[g]->src];
      sources += role == 0;
      free_sources += roles[g] == Role::kFree && role != 2;
      role = roles[g] == Role::kFree ? 2 : std::max<char>(role, 1);
    }
    return 4 * free_sources < sources;
  };
  bool partial = some_frozen && few_free_sources();
  bool master_changed = true;
  // Pricing: one shortest-path tree per source prices all its groups. What
  // one source finds, in the order its groups are priced:
  struct Candidate {
    double gain;  // -reduced cost x demand: how much the path could improve the master
    int group;
    std::vector<int> arcs;
  };
  // Searches again, with the failed arcs priced for their destination
  // (RestrictedMaster::DivertedWeights, then DivertedOnlyWeights), the
  // groups whose first path a failure diverts onto priced rows: the path
  // that avoids that failure is often the one the master needs, and the
  // first search cannot see why.
  struct Retry {
    int group;
    double threshold, tolerance;
  };
  struct SourcePricing {
    std::vector<double> bound_terms;  // demand x dual distance of each group priced
    std::vector<Candidate> candidates;
    std::vector<Retry> retries;  // protected phases only
    void Clear() {
      bound_terms.clear();
      candidates.clear();
      retries.clear();
    }
  };
  struct PricedGroup {
    int group;
    double threshold;
    double tolerance;
  };
  // A pricing thread's own search and lists.
  struct PricingScratch {
    explicit PricingScratch(const Graph& graph) : paths(graph) {}
    PricedShortestPaths paths;
    std::vector<PricedGroup> priced;
    std::vector<int> targets;
  };
  // With more than one thread, the sources of a round are shared out and
  // each one's findings kept apart, then taken in source order: what one
  // thread finds, in the same order. The protected phases' lengths read
  // caches (failure_loads.h) and stay on this thread.
  const int pricing_threads =
      protected_phase ? 1 : std::clamp(graph.node_count / kSourcesPerPricingThread, 1, std::max(limits.threads, 1));
  outcome.pricing_threads = pricing_threads;
  std::vector<std::unique_ptr<PricingScratch>> scratches;
  for (int t = 0; t < pricing_threads; ++t) scratches.push_back(std::make_unique<PricingScratch>(graph));
  std::vector<SourcePricing> found_at(pricing_threads > 1 ? graph.node_count : 1);
  auto add_candidate = [&](std::vector<Candidate>& to, int g, double threshold, double exact, std::vector<int> path) {
    const bool known = std::any_of(groups[g]->paths.begin(), groups[g]->paths.end(),
                                   [&](const PathColumn& column) { return column.arcs == path; });
    if (known && roles[g] == Role::kFree) return;
    if (known) path.clear();  // the group only needs to be free to use it
    to.push_back({(threshold - exact) * spec.group_upper[g], g, std::move(path)});
  };
  // Prices `source`'s groups into `found` (cleared first). Touches no group
  // of another source: threads may price different sources at once.
  auto price_source = [&](int source, const std::vector<double>& weight, PricingScratch& scratch,
                          SourcePricing& found) {
    found.Clear();
    // The groups to price: the free ones, and in a full round the frozen
    // ones too; but a group that uses a path of dual length 0 cannot
    // improve and adds 0 to the bound, so it needs no tree. Prices sit on
    // the few bottleneck links, so most sources need none.
    scratch.priced.clear();
    scratch.targets.clear();
    for (int g : by_source.of(source)) {
      if (roles[g] == Role::kLeftOut || (partial && roles[g] != Role::kFree)) continue;
      const RestrictedMaster::GroupPrice price = master.PriceOf(g);
      const double tolerance = kPricingTolerance * std::max(std::abs(price.threshold), 1e-12);
      if (roles[g] == Role::kFree) {
        DropIdlePaths(*groups[g], spec, open_arcs, [&](const PathColumn& path) { return master.Length(g, path); },
                      price.threshold + tolerance);
      }
      if (price.used_path_length <= 0) continue;
      scratch.priced.push_back({g, price.threshold, tolerance});
      scratch.targets.push_back(groups[g]->dst);
    }
    if (scratch.priced.empty()) return;
    scratch.paths.Run(source, weight, spec.arc_open, scratch.targets);
    for (const auto [g, threshold, tolerance] : scratch.priced) {
      const double length = scratch.paths.weight(groups[g]->dst);
      found.bound_terms.push_back(spec.group_upper[g] * length);
      if (!(length < threshold - tolerance)) continue;
      std::vector<int> path = scratch.paths.PathTo(groups[g]->dst);
      double exact = length;
      if (protected_phase) {
        // The search's length is exact only for paths no failure diverts.
        exact = master.Length(g, PathColumn(path));
        if (!(exact < threshold - tolerance)) {
          found.retries.push_back({g, threshold, tolerance});
          continue;
        }
      }
      add_candidate(found.candidates, g, threshold, exact, std::move(path));
    }
  };
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
    std::vector<Candidate> candidates;
    std::map<int, std::vector<double>> diverted_weight, diverted_only_weight;  // by destination, this round
    // Takes a source's findings, and tries its retries, in source order.
    auto take = [&](int source, SourcePricing& found) {
      for (const double term : found.bound_terms) bound_numerator += term;
      for (Candidate& candidate : found.candidates) candidates.push_back(std::move(candidate));
      PricedShortestPaths& paths = scratches[0]->paths;
      for (const auto [g, threshold, tolerance] : found.retries) {
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
            add_candidate(candidates, g, threshold, exact, std::move(path));
            break;
          }
        }
      }
    };
    if (pricing_threads == 1) {
      for (int source = 0; source < graph.node_count; ++source) {
        price_source(source, weight, *scratches[0], found_at[0]);
        take(source, found_at[0]);
      }
    } else {
      std::atomic<int> next_source{0};
      std::vector<std::exception_ptr> failed(pricing_threads);
      auto work = [&](int t) {
        try {
          for (int source; (source = next_source.fetch_add(1, std::memory_order_relaxed)) < graph.node_count;) {
            price_source(source, weight, *scratches[t], found_at[source]);
          }
        } catch (...) {  // std::bad_alloc: rethrown on this thread
          failed[t] = std::current_exception();
          next_source.store(graph.node_count);
        }
      };
      {
        std::vector<std::jthread> helpers;
        for (int t = 1; t < pricing_threads; ++t) helpers.emplace_back(work, t);
        work(0);
      }
      for (const std::exception_ptr& error : failed) {
        if (error) std::rethrow_exception(error);
      }
      for (int source = 0; source < graph.node_count; ++source) take(source, found_at[source]);
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
      partial = added > 0 && few_free_sources();  // nothing more among the free groups: price all
      continue;
    }
    master_changed = true;
    partial = some_frozen && std::count(roles.begin(), roles.end(), Role::kFrozen) > 0 && added > 0 &&
              few_free_sources();
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
  // The spreading moved groups the optimum did not need moved: those left
  // on one path take shorter ones where the links have room under U.
  if (spread) ShortenSinglePaths(graph, spec, groups, roles, by_source, outcome.objective, paths);
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
