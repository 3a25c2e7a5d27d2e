// The elephant-flow allocation on generated WAN backbones (topology/
// synthetic_wan.h), the networks bench_solver scales to 2,000 facilities,
// at a size the exact edge LP still solves in a test: each objective's
// optimum, and warm re-solves after link failures and after the traffic
// matrix moved equal to cold solves.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "pathcomp/solver/edge_lp.h"
#include "pathcomp/solver/mcf_solver.h"
#include "tests/pathcomp/mcf_testing.h"

namespace geodesic::pathcomp {
namespace {

using testing::FlowProblem;
using testing::LatencyOf;
using testing::GeneratedProblem;
using testing::UnroutedDemand;

class McfGeneratedTest : public ::testing::TestWithParam<uint64_t> {};

TEST_P(McfGeneratedTest, MluAndLatencyMatchTheEdgeLpColdAndWarm) {
  absl::StatusOr<McfProblem> problem = GeneratedProblem(/*facilities=*/60, /*flows=*/1'500, GetParam());
  ASSERT_TRUE(problem.ok()) << problem.status();
  absl::StatusOr<EdgeLpResult> exact = SolveEdgeLp(*problem, McfObjective::kMinMaxUtilization);
  ASSERT_TRUE(exact.ok()) << exact.status();
  McfSolver solver(McfSolverConfig{.relative_gap = 1e-8});
  absl::StatusOr<McfAllocation> mlu = solver.Solve(*problem);
  ASSERT_TRUE(mlu.ok()) << mlu.status();
  EXPECT_EQ(FlowProblem(*problem, *mlu), "");
  EXPECT_EQ(UnroutedDemand(*problem, *mlu), "");
  EXPECT_NEAR(mlu->max_utilization, exact->max_utilization, 1e-6 * exact->max_utilization);
  EXPECT_LE(mlu->classes[0].utilization_lower_bound, exact->max_utilization * (1 + 1e-6));

  McfProblem latency_problem = *problem;
  latency_problem.policies.default_policy.objective = McfObjective::kMinLatency;
  absl::StatusOr<McfAllocation> latency = McfSolver().Solve(latency_problem);
  ASSERT_TRUE(latency.ok()) << latency.status();
  absl::StatusOr<EdgeLpResult> exact_latency =
      SolveEdgeLpLatencyUnderCap(latency_problem, latency->classes[0].utilization_cap);
  ASSERT_TRUE(exact_latency.ok()) << exact_latency.status();
  EXPECT_EQ(FlowProblem(latency_problem, *latency), "");
  EXPECT_NEAR(LatencyOf(latency_problem, *latency), exact_latency->latency_gbps_us,
              1e-6 * exact_latency->latency_gbps_us);

  // Random loaded links fail one at a time; each warm re-solve (from the
  // intact state) reaches the failed network's optimum.
  std::vector<int> loaded;
  for (size_t a = 0; a < mlu->arc_load_gbps.size(); ++a) {
    if (mlu->arc_load_gbps[a] > 0) loaded.push_back(static_cast<int>(a));
  }
  std::mt19937_64 random(GetParam());
  for (int i = 0; i < 5; ++i) {
    const int arc = loaded[random() % loaded.size()];
    McfProblem failed = *problem;
    failed.arcs[arc].capacity_gbps = 0;
    absl::StatusOr<McfAllocation> warm = solver.Resolve(failed);
    ASSERT_TRUE(warm.ok()) << warm.status();
    EXPECT_TRUE(warm->stats.warm);
    absl::StatusOr<EdgeLpResult> optimum = SolveEdgeLp(failed, McfObjective::kMinMaxUtilization);
    ASSERT_TRUE(optimum.ok()) << optimum.status();
    const std::string where = absl::StrCat("seed ", GetParam(), " arc ", arc);
    EXPECT_EQ(FlowProblem(failed, *warm), "") << where;
    EXPECT_EQ(warm->unroutable, optimum->unroutable) << where;
    EXPECT_NEAR(warm->max_utilization, optimum->max_utilization, 1e-6 * optimum->max_utilization) << where;
    ASSERT_TRUE(solver.Resolve(*problem).ok());
  }
}

// The traffic matrix of `problem` a step later: every demand scaled by a
// factor in [0.5, 1.5], one flow in 20 ended and as many new ones between
// other facilities (some pairs new, some already with flows).
McfProblem MovedDemands(const McfProblem& problem, std::mt19937_64& random) {
  McfProblem moved = problem;
  std::uniform_real_distribution<double> factor(0.5, 1.5);
  std::vector<McfCommodity> kept;
  for (const McfCommodity& commodity : problem.commodities) {
    if (random() % 20 == 0) continue;
    kept.push_back(commodity);
    kept.back().demand_gbps *= factor(random);
  }
  const size_t ended = problem.commodities.size() - kept.size();
  for (size_t i = 0; i < ended; ++i) {
    McfCommodity added = problem.commodities[random() % problem.commodities.size()];
    added.src = static_cast<int>(random() % problem.node_count);
    do {
      added.dst = static_cast<int>(random() % problem.node_count);
    } while (added.dst == added.src);
    kept.push_back(added);
  }
  moved.commodities = std::move(kept);
  return moved;
}

TEST_P(McfGeneratedTest, WarmAfterTheTrafficMatrixMovedMatchesTheEdgeLp) {
  absl::StatusOr<McfProblem> problem = GeneratedProblem(/*facilities=*/60, /*flows=*/1'500, GetParam());
  ASSERT_TRUE(problem.ok()) << problem.status();
  McfProblem latency_problem = *problem;
  latency_problem.policies.default_policy.objective = McfObjective::kMinLatency;
  McfSolver mlu(McfSolverConfig{.relative_gap = 1e-8});
  McfSolver latency;
  ASSERT_TRUE(mlu.Solve(*problem).ok());
  ASSERT_TRUE(latency.Solve(latency_problem).ok());
  // Three steps, each warm from the one before.
  std::mt19937_64 random(GetParam());
  McfProblem now = *problem;
  for (int step = 0; step < 3; ++step) {
    const std::string where = absl::StrCat("seed ", GetParam(), " step ", step);
    now = MovedDemands(now, random);
    absl::StatusOr<McfAllocation> warm = mlu.Resolve(now);
    ASSERT_TRUE(warm.ok()) << warm.status();
    EXPECT_TRUE(warm->stats.warm) << where;
    absl::StatusOr<EdgeLpResult> optimum = SolveEdgeLp(now, McfObjective::kMinMaxUtilization);
    ASSERT_TRUE(optimum.ok()) << optimum.status();
    EXPECT_EQ(FlowProblem(now, *warm), "") << where;
    EXPECT_EQ(UnroutedDemand(now, *warm), "") << where;
    EXPECT_EQ(warm->unroutable, optimum->unroutable) << where;
    EXPECT_NEAR(warm->max_utilization, optimum->max_utilization, 1e-6 * optimum->max_utilization) << where;
    EXPECT_LE(warm->classes[0].utilization_lower_bound, optimum->max_utilization * (1 + 1e-6)) << where;

    McfProblem latency_now = now;
    latency_now.policies = latency_problem.policies;
    absl::StatusOr<McfAllocation> warm_latency = latency.Resolve(latency_now);
    ASSERT_TRUE(warm_latency.ok()) << warm_latency.status();
    EXPECT_TRUE(warm_latency->stats.warm) << where;
    absl::StatusOr<McfAllocation> cold_latency = McfSolver().Solve(latency_now);
    ASSERT_TRUE(cold_latency.ok()) << cold_latency.status();
    const double cap = cold_latency->classes[0].utilization_cap;
    EXPECT_NEAR(warm_latency->classes[0].utilization_cap, cap, 1e-6 * cap) << where;
    absl::StatusOr<EdgeLpResult> exact_latency = SolveEdgeLpLatencyUnderCap(latency_now, cap);
    ASSERT_TRUE(exact_latency.ok()) << exact_latency.status();
    EXPECT_EQ(FlowProblem(latency_now, *warm_latency), "") << where;
    EXPECT_EQ(UnroutedDemand(latency_now, *warm_latency), "") << where;
    EXPECT_NEAR(LatencyOf(latency_now, *warm_latency), exact_latency->latency_gbps_us,
                1e-6 * exact_latency->latency_gbps_us)
        << where;
  }
}

INSTANTIATE_TEST_SUITE_P(Seeds, McfGeneratedTest, ::testing::Values(1, 2, 3));

}  // namespace
}  // namespace geodesic::pathcomp
