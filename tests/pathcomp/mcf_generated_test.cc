// The elephant-flow allocation on generated WAN backbones (topology/
// synthetic_wan.h), the networks bench_solver scales to 2,000 facilities,
// at a size the exact edge LP still solves in a test: each objective's
// optimum, and warm re-solves after link failures equal to cold solves.
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

INSTANTIATE_TEST_SUITE_P(Seeds, McfGeneratedTest, ::testing::Values(1, 2, 3));

}  // namespace
}  // namespace geodesic::pathcomp
