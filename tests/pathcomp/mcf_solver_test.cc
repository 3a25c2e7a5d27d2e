#include "pathcomp/solver/mcf_solver.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "pathcomp/solver/edge_lp.h"
#include "tests/pathcomp/mcf_testing.h"

namespace geodesic::pathcomp {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using testing::FlowProblem;
using testing::UnroutedDemand;

constexpr double kTolerance = 1e-6;

McfArc Arc(int src, int dst, double capacity_gbps, double cost_us = 100) {
  return McfArc{.src = src, .dst = dst, .capacity_gbps = capacity_gbps, .cost_us = cost_us};
}

McfCommodity Flow(int src, int dst, double demand_gbps, uint32_t priority = 0) {
  return McfCommodity{.src = src, .dst = dst, .demand_gbps = demand_gbps, .priority = priority};
}

// 0 -> 1 direct (arc 0), or 0 -> 2 -> 1 (arcs 1, 2); every arc 10 Gbps.
McfProblem Diamond() {
  McfProblem problem;
  problem.node_count = 3;
  problem.arcs = {Arc(0, 1, 10), Arc(0, 2, 10), Arc(2, 1, 10)};
  return problem;
}

// A deterministic, irregular network: a ring of `nodes` (both ways) plus
// chords, capacities 10..40 Gbps, and a demand between many node pairs.
McfProblem Mesh(int nodes, double demand_scale) {
  McfProblem problem;
  problem.node_count = nodes;
  uint32_t seed = 12345;
  auto next = [&seed] {
    seed = seed * 1103515245u + 12345u;
    return (seed >> 8) % 1000;
  };
  auto both_ways = [&](int a, int b) {
    const double capacity = 10 + 10 * static_cast<double>(next() % 4);
    const double cost = 100 + static_cast<double>(next() % 900);
    problem.arcs.push_back(Arc(a, b, capacity, cost));
    problem.arcs.push_back(Arc(b, a, capacity, cost));
  };
  for (int v = 0; v < nodes; ++v) both_ways(v, (v + 1) % nodes);
  for (int v = 0; v < nodes; v += 2) both_ways(v, (v + nodes / 3) % nodes);
  for (int s = 0; s < nodes; ++s) {
    for (int t = 0; t < nodes; ++t) {
      if (s != t && next() % 3 != 0) problem.commodities.push_back(Flow(s, t, demand_scale * (1 + next() % 10)));
    }
  }
  return problem;
}

TEST(McfSolverTest, SplitsOneDemandToHalveTheUtilization) {
  McfProblem problem = Diamond();
  problem.commodities = {Flow(0, 1, 10)};
  McfSolver solver;
  absl::StatusOr<McfAllocation> allocation = solver.Solve(problem);
  ASSERT_TRUE(allocation.ok()) << allocation.status();
  EXPECT_EQ(FlowProblem(problem, *allocation), "");
  EXPECT_NEAR(allocation->max_utilization, 0.5, kTolerance);
  EXPECT_NEAR(allocation->classes[0].utilization_lower_bound, 0.5, kTolerance);
  EXPECT_NEAR(allocation->arc_load_gbps[0], 5, kTolerance);
  EXPECT_NEAR(allocation->arc_load_gbps[1], 5, kTolerance);
  EXPECT_NEAR(allocation->carried_gbps[0], 10, kTolerance);
  EXPECT_THAT(allocation->unroutable, IsEmpty());
}

TEST(McfSolverTest, RoutesEveryDemandEvenAboveCapacity) {
  McfProblem problem = Diamond();
  problem.commodities = {Flow(0, 1, 30)};
  McfSolver solver;
  absl::StatusOr<McfAllocation> allocation = solver.Solve(problem);
  ASSERT_TRUE(allocation.ok()) << allocation.status();
  EXPECT_EQ(UnroutedDemand(problem, *allocation), "");
  EXPECT_NEAR(allocation->max_utilization, 1.5, kTolerance);
}

TEST(McfSolverTest, PrefersTheLowLatencyPathOffTheBottleneck) {
  McfProblem problem = Diamond();
  problem.arcs[0].cost_us = 1000;  // direct, but slow
  problem.arcs[1].cost_us = 10;
  problem.arcs[2].cost_us = 10;
  problem.arcs[0].capacity_gbps = 100;
  problem.arcs[1].capacity_gbps = 100;
  problem.arcs[2].capacity_gbps = 100;
  // Elsewhere a 1 Gbps link runs full whatever happens, so splitting 0 -> 1
  // would not lower the max utilization: the fast path alone carries it.
  problem.node_count = 5;
  problem.arcs.push_back(Arc(3, 4, 1));
  problem.commodities = {Flow(0, 1, 1), Flow(3, 4, 1)};
  absl::StatusOr<McfAllocation> allocation = McfSolver().Solve(problem);
  ASSERT_TRUE(allocation.ok()) << allocation.status();
  EXPECT_NEAR(allocation->max_utilization, 1, kTolerance);
  ASSERT_EQ(allocation->paths[0].size(), 1u);
  const std::span<const int> arcs = allocation->paths[0][0].arcs;
  EXPECT_THAT(std::vector<int>(arcs.begin(), arcs.end()), ElementsAre(1, 2));
}

TEST(McfSolverTest, CommoditiesOfOnePairShareTheirPathsByDemand) {
  McfProblem problem = Diamond();
  problem.commodities = {Flow(0, 1, 3), Flow(0, 1, 1)};
  absl::StatusOr<McfAllocation> allocation = McfSolver().Solve(problem);
  ASSERT_TRUE(allocation.ok()) << allocation.status();
  EXPECT_EQ(FlowProblem(problem, *allocation), "");
  EXPECT_NEAR(allocation->carried_gbps[0], 3, kTolerance);
  EXPECT_NEAR(allocation->carried_gbps[1], 1, kTolerance);
  EXPECT_NEAR(allocation->max_utilization, 0.2, kTolerance);
}

TEST(McfSolverTest, ReportsUnroutableCommoditiesAndRoutesTheRest) {
  McfProblem problem = Diamond();
  problem.node_count = 4;  // node 3 has no link
  problem.commodities = {Flow(0, 3, 5), Flow(0, 1, 10)};
  absl::StatusOr<McfAllocation> allocation = McfSolver().Solve(problem);
  ASSERT_TRUE(allocation.ok()) << allocation.status();
  EXPECT_THAT(allocation->unroutable, ElementsAre(0));
  EXPECT_EQ(allocation->carried_gbps[0], 0);
  EXPECT_NEAR(allocation->carried_gbps[1], 10, kTolerance);
  EXPECT_NEAR(allocation->max_utilization, 0.5, kTolerance);
}

TEST(McfSolverTest, RejectsAnInvalidProblem) {
  McfProblem problem = Diamond();
  problem.commodities = {Flow(0, 7, 1)};
  EXPECT_EQ(McfSolver().Solve(problem).status().code(), absl::StatusCode::kInvalidArgument);
  problem.commodities = {Flow(0, 1, -1)};
  EXPECT_EQ(McfSolver().Solve(problem).status().code(), absl::StatusCode::kInvalidArgument);
}

// Two flows into one 10 Gbps link: both get the same fraction, and together
// they fill it.
TEST(McfSolverTest, FairThroughputGivesEveryFlowTheSameFraction) {
  McfProblem problem;
  problem.node_count = 4;
  // 0 -> 2 -> 3 and 1 -> 2 -> 3 share 2 -> 3; 0 -> 3 is a 4 Gbps bypass.
  problem.arcs = {Arc(0, 2, 10), Arc(1, 2, 10), Arc(2, 3, 10), Arc(0, 3, 4)};
  problem.commodities = {Flow(0, 3, 8), Flow(1, 3, 8)};
  problem.policies.default_policy.objective = McfObjective::kMaxFairThroughput;
  absl::StatusOr<McfAllocation> allocation = McfSolver().Solve(problem);
  ASSERT_TRUE(allocation.ok()) << allocation.status();
  EXPECT_EQ(FlowProblem(problem, *allocation), "");
  // 14 Gbps fit (4 on the bypass, 10 through node 2): 7 each, 7/8 of demand.
  EXPECT_NEAR(allocation->classes[0].fair_fraction, 0.875, kTolerance);
  EXPECT_NEAR(allocation->carried_gbps[0], 7, kTolerance);
  EXPECT_NEAR(allocation->carried_gbps[1], 7, kTolerance);
  EXPECT_NEAR(allocation->classes[0].carried_gbps, 14, kTolerance);
}

TEST(McfSolverTest, FairThroughputThenFillsWhatTheFairShareLeaves) {
  McfProblem problem;
  problem.node_count = 4;
  // Flow 0 -> 3 can only use the 2 Gbps link; 1 -> 3 has 10 Gbps.
  problem.arcs = {Arc(0, 3, 2), Arc(1, 3, 10)};
  problem.commodities = {Flow(0, 3, 8), Flow(1, 3, 8)};
  problem.policies.default_policy.objective = McfObjective::kMaxFairThroughput;
  absl::StatusOr<McfAllocation> allocation = McfSolver().Solve(problem);
  ASSERT_TRUE(allocation.ok()) << allocation.status();
  EXPECT_NEAR(allocation->classes[0].fair_fraction, 0.25, kTolerance);
  EXPECT_NEAR(allocation->carried_gbps[0], 2, kTolerance);
  EXPECT_NEAR(allocation->carried_gbps[1], 8, kTolerance);
}

TEST(McfSolverTest, FabricLimitsWhatAFacilitySends) {
  McfProblem problem = Diamond();
  problem.commodities = {Flow(0, 1, 15)};
  problem.node_send_gbps = {6, 100, 100};
  problem.policies.default_policy.objective = McfObjective::kMaxFairThroughput;
  absl::StatusOr<McfAllocation> allocation = McfSolver().Solve(problem);
  ASSERT_TRUE(allocation.ok()) << allocation.status();
  EXPECT_EQ(FlowProblem(problem, *allocation), "");
  EXPECT_NEAR(allocation->carried_gbps[0], 6, kTolerance);
  EXPECT_NEAR(allocation->classes[0].fair_fraction, 0.4, kTolerance);
}

TEST(McfSolverTest, HigherPriorityClassIsPlacedFirstAndKeepsItsRoutes) {
  McfProblem problem = Diamond();
  problem.commodities = {Flow(0, 1, 20, /*priority=*/1), Flow(0, 1, 10, /*priority=*/0)};
  problem.policies.by_priority[1].objective = McfObjective::kMaxFairThroughput;
  absl::StatusOr<McfAllocation> allocation = McfSolver().Solve(problem);
  ASSERT_TRUE(allocation.ok()) << allocation.status();
  EXPECT_EQ(FlowProblem(problem, *allocation), "");
  ASSERT_EQ(allocation->classes.size(), 2u);
  EXPECT_EQ(allocation->classes[0].priority, 0u);
  // Class 0 alone: split 5/5, utilization 0.5.
  EXPECT_NEAR(allocation->classes[0].max_utilization, 0.5, kTolerance);
  EXPECT_NEAR(allocation->carried_gbps[1], 10, kTolerance);
  // Class 1 gets the 5 + 5 Gbps left: half its demand; the links are full.
  EXPECT_NEAR(allocation->carried_gbps[0], 10, kTolerance);
  EXPECT_NEAR(allocation->classes[1].fair_fraction, 0.5, kTolerance);
  EXPECT_NEAR(allocation->max_utilization, 1.0, kTolerance);
}

TEST(McfSolverTest, LowerPriorityMinUtilizationCountsTheLoadAbove) {
  McfProblem problem = Diamond();
  problem.arcs[0].capacity_gbps = 20;
  problem.commodities = {Flow(0, 1, 10, 0), Flow(0, 1, 20, 1)};
  absl::StatusOr<McfAllocation> allocation = McfSolver().Solve(problem);
  ASSERT_TRUE(allocation.ok()) << allocation.status();
  EXPECT_EQ(FlowProblem(problem, *allocation), "");
  EXPECT_EQ(UnroutedDemand(problem, *allocation), "");
  // Class 0 alone: 20/3 Gbps direct, 10/3 via node 2, all links at 1/3.
  // Then everything (30 Gbps) over the 30 Gbps cut: 1.
  EXPECT_NEAR(allocation->classes[0].max_utilization, 1.0 / 3.0, kTolerance);
  EXPECT_NEAR(allocation->classes[1].max_utilization, 1.0, kTolerance);
}

TEST(McfSolverTest, MinUtilizationMatchesTheEdgeLp) {
  const McfProblem problem = Mesh(14, 1.0);
  absl::StatusOr<McfAllocation> allocation = McfSolver({.relative_gap = 1e-8}).Solve(problem);
  ASSERT_TRUE(allocation.ok()) << allocation.status();
  absl::StatusOr<EdgeLpResult> exact = SolveEdgeLp(problem, McfObjective::kMinMaxUtilization);
  ASSERT_TRUE(exact.ok()) << exact.status();
  EXPECT_EQ(FlowProblem(problem, *allocation), "");
  EXPECT_EQ(UnroutedDemand(problem, *allocation), "");
  EXPECT_NEAR(allocation->max_utilization, exact->max_utilization, 1e-6 * exact->max_utilization);
  EXPECT_LE(allocation->classes[0].utilization_lower_bound, exact->max_utilization * (1 + 1e-6));
}

TEST(McfSolverTest, FairThroughputMatchesTheEdgeLp) {
  McfProblem problem = Mesh(12, 3.0);
  problem.policies.default_policy.objective = McfObjective::kMaxFairThroughput;
  problem.node_send_gbps.assign(problem.node_count, 60);
  problem.node_receive_gbps.assign(problem.node_count, 80);
  absl::StatusOr<McfAllocation> allocation = McfSolver().Solve(problem);
  ASSERT_TRUE(allocation.ok()) << allocation.status();
  absl::StatusOr<EdgeLpResult> exact = SolveEdgeLp(problem, McfObjective::kMaxFairThroughput);
  ASSERT_TRUE(exact.ok()) << exact.status();
  ASSERT_LT(exact->fair_fraction, 1);  // the test needs a congested network
  EXPECT_EQ(FlowProblem(problem, *allocation), "");
  EXPECT_NEAR(allocation->classes[0].fair_fraction, exact->fair_fraction, 1e-6);
  EXPECT_NEAR(allocation->classes[0].carried_gbps, exact->carried_gbps, 1e-6 * exact->carried_gbps);
  for (size_t c = 0; c < problem.commodities.size(); ++c) {
    EXPECT_GE(allocation->carried_gbps[c],
              exact->fair_fraction * problem.commodities[c].demand_gbps * (1 - 1e-6));
  }
}

// Where two allocations differ, or "" when they are the same bit for bit.
std::string Difference(const McfAllocation& a, const McfAllocation& b) {
  if (a.arc_load_gbps != b.arc_load_gbps) return "arc loads";
  if (a.carried_gbps != b.carried_gbps) return "carried";
  if (a.max_utilization != b.max_utilization) return "max utilization";
  if (a.stats.pricing_rounds != b.stats.pricing_rounds) return "pricing rounds";
  if (a.paths.size() != b.paths.size()) return "commodities";
  for (size_t c = 0; c < a.paths.size(); ++c) {
    if (a.paths[c].size() != b.paths[c].size()) return "paths of commodity " + std::to_string(c);
    for (size_t p = 0; p < a.paths[c].size(); ++p) {
      const McfPathFlow x = a.paths[c][p], y = b.paths[c][p];
      if (x.gbps != y.gbps || !std::equal(x.arcs.begin(), x.arcs.end(), y.arcs.begin(), y.arcs.end())) {
        return "path " + std::to_string(p) + " of commodity " + std::to_string(c);
      }
    }
  }
  return "";
}

// Pricing shares each round's sources out to threads; the allocation is the
// one a single thread finds, cold and warm, in every class's phases.
TEST(McfSolverTest, PricingOnMoreThreadsFindsTheSameAllocation) {
  absl::StatusOr<McfProblem> generated = testing::GeneratedProblem(150, 4'000, 11);
  ASSERT_TRUE(generated.ok()) << generated.status();
  McfProblem problem = *std::move(generated);
  for (size_t c = 0; c < problem.commodities.size(); ++c) problem.commodities[c].priority = c % 3;
  problem.policies.by_priority[1].objective = McfObjective::kMinLatency;
  problem.policies.by_priority[2].objective = McfObjective::kMaxFairThroughput;
  McfSolver one({.threads = 1});
  absl::StatusOr<McfAllocation> reference = one.Solve(problem);
  ASSERT_TRUE(reference.ok()) << reference.status();
  ASSERT_GT(reference->stats.pricing_rounds, 3);
  EXPECT_EQ(reference->stats.pricing_threads, 1);
  // The arcs the reference loads most, failed one after the other: warm re-solves.
  std::vector<int> busiest(problem.arcs.size());
  std::iota(busiest.begin(), busiest.end(), 0);
  std::partial_sort(busiest.begin(), busiest.begin() + 3, busiest.end(),
                    [&](int x, int y) { return reference->arc_load_gbps[x] > reference->arc_load_gbps[y]; });
  std::vector<McfAllocation> warm_references;
  McfProblem failed = problem;
  for (int i = 0; i < 3; ++i) {
    failed.arcs[busiest[i]].capacity_gbps = 0;
    absl::StatusOr<McfAllocation> warm = one.Resolve(failed);
    ASSERT_TRUE(warm.ok()) << warm.status();
    warm_references.push_back(*std::move(warm));
  }
  for (int threads : {2, 3}) {
    SCOPED_TRACE(threads);
    McfSolver many({.threads = threads});
    absl::StatusOr<McfAllocation> allocation = many.Solve(problem);
    ASSERT_TRUE(allocation.ok()) << allocation.status();
    EXPECT_EQ(allocation->stats.pricing_threads, threads) << "150 facilities are enough sources to share";
    EXPECT_EQ(Difference(*allocation, *reference), "");
    McfProblem again = problem;
    for (int i = 0; i < 3; ++i) {
      again.arcs[busiest[i]].capacity_gbps = 0;
      absl::StatusOr<McfAllocation> warm = many.Resolve(again);
      ASSERT_TRUE(warm.ok()) << warm.status();
      EXPECT_TRUE(warm->stats.warm);
      EXPECT_EQ(Difference(*warm, warm_references[i]), "") << "after failing arc " << busiest[i];
    }
  }
}

TEST(McfSolverTest, WarmResolveAfterFailuresMatchesAColdSolve) {
  const McfProblem problem = Mesh(14, 1.0);
  const McfSolverConfig config{.relative_gap = 1e-8};
  McfSolver warm(config);
  absl::StatusOr<McfAllocation> intact = warm.Solve(problem);
  ASSERT_TRUE(intact.ok()) << intact.status();
  for (int arc : {0, 5, 17, 30}) {
    McfProblem failed = problem;
    failed.arcs[arc].capacity_gbps = 0;
    absl::StatusOr<McfAllocation> resolved = warm.Resolve(failed);
    ASSERT_TRUE(resolved.ok()) << resolved.status();
    EXPECT_TRUE(resolved->stats.warm);
    absl::StatusOr<McfAllocation> cold = McfSolver(config).Solve(failed);
    ASSERT_TRUE(cold.ok()) << cold.status();
    EXPECT_EQ(FlowProblem(failed, *resolved), "") << "arc " << arc;
    EXPECT_EQ(UnroutedDemand(failed, *resolved), "") << "arc " << arc;
    EXPECT_EQ(resolved->arc_load_gbps[arc], 0);
    EXPECT_NEAR(resolved->max_utilization, cold->max_utilization, 1e-6 * cold->max_utilization)
        << "arc " << arc;
    // The link comes back: warm again, back to the intact optimum.
    absl::StatusOr<McfAllocation> restored = warm.Resolve(problem);
    ASSERT_TRUE(restored.ok()) << restored.status();
    EXPECT_NEAR(restored->max_utilization, intact->max_utilization, 1e-6 * intact->max_utilization);
  }
}

// A failure whose flow fits below the proven optimum is routed around it
// without an LP; one that raises the optimum goes back to the LP.
TEST(McfSolverTest, ResolveAbsorbsAFailureThatFitsBelowTheOptimum) {
  McfProblem problem;
  problem.node_count = 6;
  // 0 -> 1 direct (arc 0, the lowest latency) or over 2 or 3; 4 -> 5 has
  // one arc and sets the optimum at 0.9.
  problem.arcs = {Arc(0, 1, 10), Arc(0, 2, 10), Arc(2, 1, 10), Arc(0, 3, 10), Arc(3, 1, 10), Arc(4, 5, 10)};
  problem.commodities = {Flow(0, 1, 6), Flow(4, 5, 9)};
  McfSolver solver;
  absl::StatusOr<McfAllocation> intact = solver.Solve(problem);
  ASSERT_TRUE(intact.ok()) << intact.status();
  ASSERT_NEAR(intact->max_utilization, 0.9, kTolerance);
  ASSERT_GT(intact->arc_load_gbps[0], 0);

  McfProblem failed = problem;
  failed.arcs[0].capacity_gbps = 0;
  absl::StatusOr<McfAllocation> absorbed = solver.Resolve(failed);
  ASSERT_TRUE(absorbed.ok()) << absorbed.status();
  EXPECT_EQ(absorbed->stats.absorbed_phases, 1);
  EXPECT_EQ(absorbed->stats.lp_solves, 0);
  EXPECT_EQ(FlowProblem(failed, *absorbed), "");
  EXPECT_EQ(UnroutedDemand(failed, *absorbed), "");
  EXPECT_EQ(absorbed->arc_load_gbps[0], 0);
  EXPECT_NEAR(absorbed->max_utilization, 0.9, kTolerance);
  EXPECT_NEAR(absorbed->classes[0].utilization_lower_bound, 0.9, kTolerance);

  // Now 0 -> 1 has 8 Gbps over two 5 Gbps routes: 0.8 fits, so still 0.9.
  // Then the route over 2 fails too: 8 Gbps on one 10 Gbps route is 0.8 <
  // 0.9 but not on 5 Gbps links, so the LP must find the new optimum.
  failed.arcs[1].capacity_gbps = 5;
  failed.arcs[2].capacity_gbps = 5;
  failed.arcs[3].capacity_gbps = 5;
  failed.arcs[4].capacity_gbps = 5;
  failed.commodities[0].demand_gbps = 8;
  ASSERT_TRUE(solver.Solve(failed).ok());
  failed.arcs[1].capacity_gbps = 0;
  absl::StatusOr<McfAllocation> raised = solver.Resolve(failed);
  ASSERT_TRUE(raised.ok()) << raised.status();
  EXPECT_EQ(raised->stats.absorbed_phases, 0);
  EXPECT_GT(raised->stats.lp_solves, 0);
  EXPECT_EQ(FlowProblem(failed, *raised), "");
  EXPECT_NEAR(raised->max_utilization, 8.0 / 5.0, kTolerance);
}

// A failure on the bottleneck raises the optimum: the last LP's link prices,
// with the failed arc gone, prove the new one, and the failure is absorbed
// at it without an LP.
TEST(McfSolverTest, ResolveAbsorbsABottleneckFailureAtThePriceBound) {
  // 0 -> 1 direct (arc 0) or over 2 (arcs 1, 2), 18 Gbps: 0.9 on both
  // routes; with arc 0 gone, everything crosses arcs 1 and 2 at 1.8.
  McfProblem problem = Diamond();
  problem.commodities = {Flow(0, 1, 18)};
  McfSolver solver;
  absl::StatusOr<McfAllocation> intact = solver.Solve(problem);
  ASSERT_TRUE(intact.ok()) << intact.status();
  ASSERT_NEAR(intact->max_utilization, 0.9, kTolerance);

  McfProblem failed = problem;
  failed.arcs[0].capacity_gbps = 0;
  absl::StatusOr<McfAllocation> absorbed = solver.Resolve(failed);
  ASSERT_TRUE(absorbed.ok()) << absorbed.status();
  EXPECT_EQ(absorbed->stats.absorbed_phases, 1);
  EXPECT_EQ(absorbed->stats.lp_solves, 0);
  EXPECT_EQ(FlowProblem(failed, *absorbed), "");
  EXPECT_EQ(UnroutedDemand(failed, *absorbed), "");
  EXPECT_NEAR(absorbed->max_utilization, 1.8, kTolerance);
  EXPECT_NEAR(absorbed->classes[0].utilization_lower_bound, 1.8, kTolerance);
  absl::StatusOr<EdgeLpResult> exact = SolveEdgeLp(failed, McfObjective::kMinMaxUtilization);
  ASSERT_TRUE(exact.ok()) << exact.status();
  EXPECT_NEAR(absorbed->max_utilization, exact->max_utilization, kTolerance);
}

// A failure that cuts off the flow that set the optimum lowers it: the old
// bound no longer holds, and the re-solve finds the new optimum.
TEST(McfSolverTest, ResolveAfterAFailureCutsOffTheBottleneckFlow) {
  McfProblem problem;
  problem.node_count = 5;
  // 0 -> 1 has one arc (0.9 with 9 Gbps); 2 -> 3 direct or over 4 (12 Gbps: 0.6 split).
  problem.arcs = {Arc(0, 1, 10), Arc(2, 3, 10), Arc(2, 4, 10), Arc(4, 3, 10)};
  problem.commodities = {Flow(0, 1, 9), Flow(2, 3, 12)};
  McfSolver solver;
  absl::StatusOr<McfAllocation> intact = solver.Solve(problem);
  ASSERT_TRUE(intact.ok()) << intact.status();
  ASSERT_NEAR(intact->max_utilization, 0.9, kTolerance);

  McfProblem failed = problem;
  failed.arcs[0].capacity_gbps = 0;
  absl::StatusOr<McfAllocation> resolved = solver.Resolve(failed);
  ASSERT_TRUE(resolved.ok()) << resolved.status();
  EXPECT_THAT(resolved->unroutable, ElementsAre(0));
  EXPECT_NEAR(resolved->max_utilization, 0.6, kTolerance);
  EXPECT_LE(resolved->classes[0].utilization_lower_bound, resolved->max_utilization * (1 + 1e-9));
  EXPECT_EQ(FlowProblem(failed, *resolved), "");
}

TEST(McfSolverTest, ResolveOfAnotherNetworkSolvesCold) {
  McfProblem problem = Diamond();
  problem.commodities = {Flow(0, 1, 10)};
  McfSolver solver;
  ASSERT_TRUE(solver.Solve(problem).ok());
  problem.arcs.push_back(Arc(1, 0, 10));  // another arc
  problem.commodities[0].demand_gbps = 20;
  absl::StatusOr<McfAllocation> allocation = solver.Resolve(problem);
  ASSERT_TRUE(allocation.ok()) << allocation.status();
  EXPECT_FALSE(allocation->stats.warm);
  EXPECT_NEAR(allocation->max_utilization, 1.0, kTolerance);
  problem.node_count = 4;  // another node
  allocation = solver.Resolve(problem);
  ASSERT_TRUE(allocation.ok()) << allocation.status();
  EXPECT_FALSE(allocation->stats.warm);
}

// Demands that grow, shrink, end and start on the same network: warm, each
// flow from where its (priority, src, dst) was, and the cold optimum.
TEST(McfSolverTest, ResolveAfterDemandsChangedIsWarmAndOptimal) {
  McfProblem problem = Mesh(14, 1.0);
  const McfSolverConfig config{.relative_gap = 1e-8};
  McfSolver warm(config);
  ASSERT_TRUE(warm.Solve(problem).ok());
  for (int step = 0; step < 4; ++step) {
    SCOPED_TRACE(step);
    std::vector<McfCommodity> next;
    for (size_t c = 0; c < problem.commodities.size(); ++c) {
      McfCommodity commodity = problem.commodities[c];
      if ((c + step) % 7 == 0) continue;  // ends
      commodity.demand_gbps *= (c + step) % 3 == 0 ? 1.6 : 0.7;
      next.push_back(commodity);
    }
    next.push_back(Flow(step, 13 - step, 5));  // starts (some pairs already have flows)
    next.push_back(Flow(13 - step, step, 5, /*priority=*/1));  // in a class new to the solver
    problem.commodities = next;
    absl::StatusOr<McfAllocation> resolved = warm.Resolve(problem);
    ASSERT_TRUE(resolved.ok()) << resolved.status();
    EXPECT_TRUE(resolved->stats.warm);
    absl::StatusOr<McfAllocation> cold = McfSolver(config).Solve(problem);
    ASSERT_TRUE(cold.ok()) << cold.status();
    EXPECT_EQ(FlowProblem(problem, *resolved), "");
    EXPECT_EQ(UnroutedDemand(problem, *resolved), "");
    ASSERT_EQ(resolved->classes.size(), cold->classes.size());
    for (size_t k = 0; k < cold->classes.size(); ++k) {
      EXPECT_NEAR(resolved->classes[k].max_utilization, cold->classes[k].max_utilization,
                  1e-6 * cold->classes[k].max_utilization)
          << "class " << k;
    }
    EXPECT_LE(resolved->classes[0].utilization_lower_bound, cold->classes[0].max_utilization * (1 + 1e-6));
  }
}

}  // namespace
}  // namespace geodesic::pathcomp
