// The elephant-flow allocation on every REPETITA network of ../shared/data
// with its demands, against the exact edge LP (COIN-OR CLP): the quality bar
// of the allocation (max link utilization within 1% of the optimum) and the
// warm re-solve's promise (the same optimum as a cold solve).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "pathcomp/solver/edge_lp.h"
#include "pathcomp/solver/mcf_solver.h"
#include "tests/pathcomp/mcf_testing.h"

namespace geodesic::pathcomp {
namespace {

using testing::FlowProblem;
using testing::LoadRepetitaProblem;
using testing::UnroutedDemand;

class McfRepetitaTest : public ::testing::TestWithParam<std::string> {};

TEST_P(McfRepetitaTest, MinUtilizationWithinOnePercentOfTheEdgeLp) {
  absl::StatusOr<McfProblem> problem = LoadRepetitaProblem(GetParam());
  ASSERT_TRUE(problem.ok()) << problem.status();
  ASSERT_FALSE(problem->commodities.empty());
  absl::StatusOr<McfAllocation> allocation = McfSolver().Solve(*problem);
  ASSERT_TRUE(allocation.ok()) << allocation.status();
  absl::StatusOr<EdgeLpResult> exact = SolveEdgeLp(*problem, McfObjective::kMinMaxUtilization);
  ASSERT_TRUE(exact.ok()) << exact.status();

  EXPECT_EQ(FlowProblem(*problem, *allocation), "");
  EXPECT_EQ(UnroutedDemand(*problem, *allocation), "");
  EXPECT_EQ(allocation->unroutable, exact->unroutable);
  const double optimum = exact->max_utilization;
  EXPECT_LE(allocation->max_utilization, 1.01 * optimum);
  // Not below the optimum: the flow check above recomputed it from the paths.
  EXPECT_GE(allocation->max_utilization, optimum * (1 - 1e-6));
  // The bound the solver proves is a true bound.
  EXPECT_LE(allocation->classes[0].utilization_lower_bound, optimum * (1 + 1e-6));
}

INSTANTIATE_TEST_SUITE_P(Networks, McfRepetitaTest, ::testing::ValuesIn(testing::RepetitaNetworks()),
                         [](const auto& info) { return info.param; });

// Twice the demand does not fit: the fair fraction and the total carried
// are those of the LP.
TEST(McfRepetitaThroughputTest, FairThroughputMatchesTheEdgeLp) {
  for (const char* network : {"Abilene", "Geant2009", "AttMpls", "Esnet"}) {
    absl::StatusOr<McfProblem> problem = LoadRepetitaProblem(network);
    ASSERT_TRUE(problem.ok()) << problem.status();
    for (McfCommodity& commodity : problem->commodities) commodity.demand_gbps *= 2;
    problem->policies.default_policy.objective = McfObjective::kMaxFairThroughput;
    absl::StatusOr<McfAllocation> allocation = McfSolver().Solve(*problem);
    ASSERT_TRUE(allocation.ok()) << allocation.status();
    absl::StatusOr<EdgeLpResult> exact = SolveEdgeLp(*problem, McfObjective::kMaxFairThroughput);
    ASSERT_TRUE(exact.ok()) << exact.status();
    EXPECT_EQ(FlowProblem(*problem, *allocation), "") << network;
    EXPECT_NEAR(allocation->classes[0].fair_fraction, exact->fair_fraction, 1e-5) << network;
    EXPECT_NEAR(allocation->classes[0].carried_gbps, exact->carried_gbps, 1e-5 * exact->carried_gbps)
        << network;
  }
}

// Several single-link failures, each re-solved warm from the intact
// network's state and then restored.
TEST(McfRepetitaResolveTest, WarmResolveAfterALinkFailureMatchesAColdSolve) {
  const McfSolverConfig config{.relative_gap = 1e-8};
  for (const char* network : {"Abilene", "Geant2009", "Deltacom"}) {
    absl::StatusOr<McfProblem> problem = LoadRepetitaProblem(network);
    ASSERT_TRUE(problem.ok()) << problem.status();
    McfSolver warm(config);
    absl::StatusOr<McfAllocation> intact = warm.Solve(*problem);
    ASSERT_TRUE(intact.ok()) << intact.status();
    // The busiest link and a few others spread over the loaded ones.
    std::vector<int> loaded;
    for (size_t a = 0; a < problem->arcs.size(); ++a) {
      if (intact->arc_load_gbps[a] > 0) loaded.push_back(static_cast<int>(a));
    }
    std::sort(loaded.begin(), loaded.end(),
              [&](int x, int y) { return intact->arc_load_gbps[x] > intact->arc_load_gbps[y]; });
    // (On Abilene the busiest link is half of a two-link cut: its failure
    // doubles the optimum, which the last prices prove without an LP.)
    for (size_t i = 0; i < loaded.size(); i += loaded.size() / 4 + 1) {
      const int arc = loaded[i];
      McfProblem failed = *problem;
      failed.arcs[arc].capacity_gbps = 0;
      absl::StatusOr<McfAllocation> resolved = warm.Resolve(failed);
      ASSERT_TRUE(resolved.ok()) << resolved.status();
      EXPECT_TRUE(resolved->stats.warm);
      absl::StatusOr<McfAllocation> cold = McfSolver(config).Solve(failed);
      ASSERT_TRUE(cold.ok()) << cold.status();
      EXPECT_EQ(FlowProblem(failed, *resolved), "") << network << " arc " << arc;
      EXPECT_EQ(UnroutedDemand(failed, *resolved), "") << network << " arc " << arc;
      EXPECT_NEAR(resolved->max_utilization, cold->max_utilization, 1e-6 * cold->max_utilization)
          << network << " arc " << arc;
      // Whatever the resolve proved is a true bound.
      EXPECT_LE(resolved->classes[0].utilization_lower_bound, cold->max_utilization * (1 + 1e-6))
          << network << " arc " << arc;
      ASSERT_TRUE(warm.Resolve(*problem).ok());
    }
  }
}

}  // namespace
}  // namespace geodesic::pathcomp
