// The latency objective (McfObjective::kMinLatency): the demand-weighted path
// latency is the edge LP's least under the same utilization cap, no link
// exceeds the cap, traffic stays on the shortest paths while they have room,
// and a warm re-solve after a failure keeps all of that.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "pathcomp/solver/edge_lp.h"
#include "pathcomp/solver/latency_stretch.h"
#include "pathcomp/solver/mcf_solver.h"
#include "tests/pathcomp/mcf_testing.h"

namespace geodesic::pathcomp {
namespace {

using testing::FlowProblem;
using testing::LatencyOf;
using testing::LoadRepetitaProblem;
using testing::UnroutedDemand;

// Empty when no usable arc is loaded over `cap` (a hair of LP tolerance).
std::string OverCap(const McfProblem& problem, const McfAllocation& allocation, double cap) {
  for (size_t a = 0; a < problem.arcs.size(); ++a) {
    const double capacity = problem.arcs[a].capacity_gbps;
    if (capacity > 0 && allocation.arc_load_gbps[a] > cap * capacity * (1 + 1e-6) + 1e-9) {
      return absl::StrCat("arc ", a, " at ", allocation.arc_load_gbps[a] / capacity, " over the cap ", cap);
    }
  }
  return "";
}

McfArc Arc(int src, int dst, double capacity, double cost) {
  return {.src = src, .dst = dst, .capacity_gbps = capacity, .cost_us = cost};
}

// The demo's case: a 200 Gbps flow from a to c, a direct 800 Gbps link
// (12 ms) and a long way round (a-b-c, 400 Gbps links, 21 ms).
McfProblem DirectAndDetour(double demand_gbps) {
  McfProblem problem;
  problem.node_count = 3;
  problem.arcs = {Arc(0, 2, 800, 12'000), Arc(0, 1, 400, 10'000), Arc(1, 2, 400, 11'000)};
  problem.commodities = {{.src = 0, .dst = 2, .demand_gbps = demand_gbps}};
  return problem;
}

TEST(McfLatencyTest, MluSpreadsButLatencyKeepsTheDirectLinkWhileItHasRoom) {
  McfProblem problem = DirectAndDetour(200);
  absl::StatusOr<McfAllocation> mlu = McfSolver().Solve(problem);
  ASSERT_TRUE(mlu.ok()) << mlu.status();
  // Minimizing the MLU sends a third over the detour (all links at 1/6).
  EXPECT_NEAR(mlu->max_utilization, 200.0 / 1200, 1e-6);
  EXPECT_GT(mlu->arc_load_gbps[1], 1);

  problem.policies.default_policy.objective = McfObjective::kMinLatency;
  absl::StatusOr<McfAllocation> latency = McfSolver().Solve(problem);
  ASSERT_TRUE(latency.ok()) << latency.status();
  EXPECT_EQ(FlowProblem(problem, *latency), "");
  EXPECT_NEAR(latency->arc_load_gbps[0], 200, 1e-6);
  EXPECT_NEAR(latency->arc_load_gbps[1], 0, 1e-6);
  EXPECT_NEAR(latency->max_utilization, 0.25, 1e-6);
  EXPECT_NEAR(latency->classes[0].utilization_cap, 0.8, 1e-12);
  // The MLU phase stops once a U proves the cap is the target: its bound
  // is what it proved by then, still a bound.
  EXPECT_LE(latency->classes[0].utilization_lower_bound, 200.0 / 1200 + 1e-6);
  const StretchReport stretch = MeasureLatencyStretch(problem, *latency);
  EXPECT_NEAR(stretch.all.mean, 1, 1e-9);
  EXPECT_NEAR(stretch.all.p95, 1, 1e-9);
  EXPECT_GT(MeasureLatencyStretch(problem, *mlu).all.mean, 1.1);
}

TEST(McfLatencyTest, SpreadsOnlyWhatTheCapForces) {
  // 900 Gbps (optimal MLU 0.75): the direct link takes the target
  // (0.8 x 800 = 640), the rest goes round.
  McfProblem problem = DirectAndDetour(900);
  problem.policies.default_policy.objective = McfObjective::kMinLatency;
  absl::StatusOr<McfAllocation> latency = McfSolver().Solve(problem);
  ASSERT_TRUE(latency.ok()) << latency.status();
  EXPECT_NEAR(latency->arc_load_gbps[0], 640, 1e-6);
  EXPECT_NEAR(latency->arc_load_gbps[1], 260, 1e-6);
  // Over the target: the cap is the optimal MLU (1000 / 1200) plus the slack.
  problem.commodities[0].demand_gbps = 1100;
  problem.policies.default_policy.mlu_slack = 0.02;
  latency = McfSolver().Solve(problem);
  ASSERT_TRUE(latency.ok()) << latency.status();
  const double cap = 1.02 * 1100 / 1200;
  EXPECT_NEAR(latency->classes[0].utilization_cap, cap, 1e-6);
  EXPECT_NEAR(latency->arc_load_gbps[0], cap * 800, 1e-3);
  EXPECT_EQ(OverCap(problem, *latency, latency->classes[0].utilization_cap), "");
}

// The latency objective of one class beside the MLU of another: the cap
// counts the load the first class left, and the second class still gets its
// own optimum.
TEST(McfLatencyTest, ClassesCombine) {
  McfProblem problem = DirectAndDetour(200);
  problem.commodities.push_back({.src = 0, .dst = 2, .demand_gbps = 300, .priority = 1});
  problem.policies.by_priority[0].objective = McfObjective::kMinLatency;
  absl::StatusOr<McfAllocation> allocation = McfSolver().Solve(problem);
  ASSERT_TRUE(allocation.ok()) << allocation.status();
  EXPECT_EQ(FlowProblem(problem, *allocation), "");
  ASSERT_EQ(allocation->classes.size(), 2u);
  EXPECT_EQ(allocation->classes[0].objective, McfObjective::kMinLatency);
  EXPECT_EQ(allocation->classes[1].objective, McfObjective::kMinMaxUtilization);
  // Class 0 all direct; class 1 levels the links at (200 + 300) / 1200.
  EXPECT_NEAR(allocation->paths[0][0].gbps, 200, 1e-6);
  EXPECT_EQ(allocation->paths[0].size(), 1u);
  EXPECT_NEAR(allocation->max_utilization, 500.0 / 1200, 1e-5);
}

// On the shared networks, at half their MLU optimum's load and at their
// own, the solver's latency is the edge LP's under the same cap.
TEST(McfLatencyTest, MatchesTheEdgeLpOnSharedNetworks) {
  for (const char* network : {"Abilene", "Geant2009", "AttMpls", "Esnet"}) {
    absl::StatusOr<McfProblem> problem = LoadRepetitaProblem(network);
    ASSERT_TRUE(problem.ok()) << problem.status();
    absl::StatusOr<EdgeLpResult> optimum = SolveEdgeLp(*problem, McfObjective::kMinMaxUtilization);
    ASSERT_TRUE(optimum.ok()) << optimum.status();
    problem->policies.default_policy.objective = McfObjective::kMinLatency;
    for (const double load : {0.45, 1.0}) {
      McfProblem scaled = *problem;
      // 0.45: demands scaled so the MLU optimum is 0.45; 1.0: the file's own.
      const double factor = load == 1.0 ? 1.0 : load / optimum->max_utilization;
      for (McfCommodity& commodity : scaled.commodities) commodity.demand_gbps *= factor;
      absl::StatusOr<McfAllocation> allocation = McfSolver().Solve(scaled);
      ASSERT_TRUE(allocation.ok()) << allocation.status();
      const std::string where = absl::StrCat(network, " at load ", load);
      EXPECT_EQ(FlowProblem(scaled, *allocation), "") << where;
      EXPECT_EQ(UnroutedDemand(scaled, *allocation), "") << where;
      const double cap = allocation->classes[0].utilization_cap;
      EXPECT_EQ(OverCap(scaled, *allocation, cap), "") << where;
      absl::StatusOr<EdgeLpResult> exact = SolveEdgeLpLatencyUnderCap(scaled, cap);
      ASSERT_TRUE(exact.ok()) << exact.status() << " " << where;
      EXPECT_NEAR(LatencyOf(scaled, *allocation), exact->latency_gbps_us, 1e-6 * exact->latency_gbps_us) << where;
      if (load < 1) {
        // Room everywhere: the cap is the target and the paths are short.
        EXPECT_DOUBLE_EQ(cap, 0.8) << where;
        EXPECT_LE(MeasureLatencyStretch(scaled, *allocation).all.mean, 1.05) << where;
      }
    }
  }
}

// The cap is max(target, (1 + slack) x U*) on both sides of the point where
// the slack takes over, although the MLU phase stops unproven once a U
// shows the cap is the target.
TEST(McfLatencyTest, TheCapIsTheTargetUntilTheSlackOverTheOptimumExceedsIt) {
  for (const char* network : {"Abilene", "Geant2009"}) {
    absl::StatusOr<McfProblem> problem = LoadRepetitaProblem(network);
    ASSERT_TRUE(problem.ok()) << problem.status();
    absl::StatusOr<EdgeLpResult> optimum = SolveEdgeLp(*problem, McfObjective::kMinMaxUtilization);
    ASSERT_TRUE(optimum.ok()) << optimum.status();
    problem->policies.default_policy.objective = McfObjective::kMinLatency;
    const McfClassPolicy& policy = problem->policies.default_policy;
    const double turn = policy.utilization_target / (1 + policy.mlu_slack);  // U* where the slack takes over
    for (const double load : {0.3, turn * 0.999, turn * 1.001, 0.85, 1.2}) {
      McfProblem scaled = *problem;
      for (McfCommodity& commodity : scaled.commodities) commodity.demand_gbps *= load / optimum->max_utilization;
      absl::StatusOr<McfAllocation> allocation = McfSolver().Solve(scaled);
      ASSERT_TRUE(allocation.ok()) << allocation.status();
      const std::string where = absl::StrCat(network, " with the MLU optimum at ", load);
      const double cap = allocation->classes[0].utilization_cap;
      EXPECT_NEAR(cap, std::max(policy.utilization_target, (1 + policy.mlu_slack) * load), 2e-5 * cap) << where;  // U* within the solver's gap
      EXPECT_LE(allocation->classes[0].utilization_lower_bound, load * (1 + 1e-6)) << where;
      EXPECT_EQ(OverCap(scaled, *allocation, cap), "") << where;
    }
  }
}

// After a link failure a warm re-solve reaches the cold solve's latency.
TEST(McfLatencyTest, WarmResolveAfterALinkFailureMatchesAColdSolve) {
  for (const char* network : {"Abilene", "Geant2009"}) {
    absl::StatusOr<McfProblem> problem = LoadRepetitaProblem(network);
    ASSERT_TRUE(problem.ok()) << problem.status();
    problem->policies.default_policy.objective = McfObjective::kMinLatency;
    McfSolver warm;
    absl::StatusOr<McfAllocation> intact = warm.Solve(*problem);
    ASSERT_TRUE(intact.ok()) << intact.status();
    for (size_t arc = 0; arc < problem->arcs.size(); arc += problem->arcs.size() / 5 + 1) {
      if (intact->arc_load_gbps[arc] <= 0) continue;
      McfProblem failed = *problem;
      failed.arcs[arc].capacity_gbps = 0;
      absl::StatusOr<McfAllocation> resolved = warm.Resolve(failed);
      ASSERT_TRUE(resolved.ok()) << resolved.status();
      EXPECT_TRUE(resolved->stats.warm);
      absl::StatusOr<McfAllocation> cold = McfSolver().Solve(failed);
      ASSERT_TRUE(cold.ok()) << cold.status();
      const std::string where = absl::StrCat(network, " arc ", arc);
      EXPECT_EQ(FlowProblem(failed, *resolved), "") << where;
      EXPECT_EQ(UnroutedDemand(failed, *resolved), "") << where;
      // Each cap comes from its own MLU, found within the solver's gap.
      EXPECT_NEAR(resolved->classes[0].utilization_cap, cold->classes[0].utilization_cap,
                  1e-4 * cold->classes[0].utilization_cap) << where;
      EXPECT_EQ(OverCap(failed, *resolved, resolved->classes[0].utilization_cap), "") << where;
      absl::StatusOr<EdgeLpResult> exact = SolveEdgeLpLatencyUnderCap(failed, resolved->classes[0].utilization_cap);
      ASSERT_TRUE(exact.ok()) << exact.status() << " " << where;
      EXPECT_NEAR(LatencyOf(failed, *resolved), exact->latency_gbps_us, 1e-6 * exact->latency_gbps_us) << where;
      ASSERT_TRUE(warm.Resolve(*problem).ok());
    }
  }
}

TEST(McfLatencyTest, RejectsABadPolicy) {
  McfProblem problem = DirectAndDetour(200);
  problem.policies.default_policy = {.objective = McfObjective::kMinLatency, .utilization_target = 0};
  EXPECT_EQ(McfSolver().Solve(problem).status().code(), absl::StatusCode::kInvalidArgument);
  problem.policies.default_policy = {.objective = McfObjective::kMinLatency, .mlu_slack = -0.1};
  EXPECT_EQ(McfSolver().Solve(problem).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(SolveEdgeLpLatencyUnderCap(problem, 0).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace geodesic::pathcomp
