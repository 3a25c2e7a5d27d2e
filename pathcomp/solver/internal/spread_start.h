#pragma once
// Where a utilization phase solved from nothing starts, and what its groups'
// latency is after it.
//
// From nothing every group starts on its lowest-latency path, and the master
// relieves the hottest links a round of paths at a time: on a 754-facility
// backbone with 56,736 groups (U 4.6 on the lowest-latency paths, 1.17 at the
// optimum) that took 101 rounds and 12 s. SpreadFirstPaths moves the groups
// that cross the hottest links onto paths around them before the first
// master (passes of best responses to link prices exponential in the links'
// utilization, as multiplicative-weights flow algorithms route, plus a
// latency price that keeps them off long detours): the master starts within
// a few tens of per cent of the optimum and proves it in a few rounds.
// The spreading also moves groups the optimum did not need moved;
// ShortenSinglePaths, once the phase is over, moves each group left on one
// path to a lower-latency one wherever its links have room under the
// phase's U, which does not change U.
//
// Internal to pathcomp/solver. Pure; thread-compatible.
#include <span>
#include <vector>

#include "pathcomp/solver/internal/groups_by_source.h"
#include "pathcomp/solver/internal/path_master.h"
#include "pathcomp/solver/internal/priced_shortest_paths.h"
#include "pathcomp/solver/internal/restricted_master.h"

namespace geodesic::pathcomp::internal {

// Every group of `groups` not kLeftOut holds one path (its first, the
// lowest-latency one) routing its spec.group_upper; `spec` is a utilization
// phase's. Replaces some of those paths with paths that lower the highest
// utilization, when it is above spec.utilization_enough (below it the phase
// has nothing to do). Returns whether it replaced any.
bool SpreadFirstPaths(const Graph& graph, const PhaseSpec& spec, std::span<FlowGroup* const> groups,
                      const std::vector<Role>& roles, const GroupsBySource& by_source, PricedShortestPaths& paths);

// After a utilization phase that ended at `utilization` (its paths' flows
// final): gives each free group with one path the lowest-latency path that
// fits, for as long as one does, keeping every open arc's utilization (load
// less spec.arc_upper, over spec.arc_scale) at or below `utilization`. The
// group's flow moves whole; the new path starts with no basis status.
// Returns how many groups moved.
int ShortenSinglePaths(const Graph& graph, const PhaseSpec& spec, std::span<FlowGroup* const> groups,
                       const std::vector<Role>& roles, const GroupsBySource& by_source, double utilization,
                       PricedShortestPaths& paths);

}  // namespace geodesic::pathcomp::internal
