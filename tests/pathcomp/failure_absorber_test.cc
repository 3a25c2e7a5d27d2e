#include "pathcomp/solver/internal/failure_absorber.h"

#include <gtest/gtest.h>

#include <vector>

namespace geodesic::pathcomp::internal {
namespace {

constexpr double kTolerance = 1e-9;

// 0 -> 1 direct (arc 0) or over 2 (arcs 1, 2); capacity 1 each (solver
// units). One group 0 -> 1 of 1.8 that was split 0.9 / 0.9; arc 0 has
// failed, and its path is gone (as McfSolver::Resolve drops it).
struct Diamond {
  Diamond() {
    graph.node_count = 3;
    graph.arc_src = {0, 0, 2};
    graph.arc_dst = {1, 2, 1};
    graph.arc_capacity = {0, 1, 1};
    graph.arc_cost_us = {100, 100, 100};
    graph.Index();
    spec.phase = kUtilizationPhase;
    spec.arc_scale = {1, 1, 1};
    spec.arc_upper = {0, 0, 0};
    spec.arc_open = {0, 1, 1};
    spec.group_lower = {1.8};
    spec.group_upper = {1.8};
    spec.freeze_routed_groups = true;
    group.src = 0;
    group.dst = 1;
    group.demand = 1.8;
    group.paths.emplace_back(std::vector<int>{1, 2});
    group.paths[0].flow = 0.9;
  }
  Graph graph;
  PhaseSpec spec;
  FlowGroup group;
  FlowGroup* groups[1] = {&group};
};

TEST(FailureAbsorberTest, PricesOfTheCutProveTheRaisedOptimum) {
  Diamond diamond;
  // The last LP priced both routes' first arcs (sum of price x capacity = 1).
  const std::vector<double> prices = {0.5, 0.5, 0};
  FailureAbsorber absorber(diamond.graph, diamond.spec, diamond.groups, prices);
  EXPECT_NEAR(absorber.PriceBound(), 1.8, kTolerance);
}

TEST(FailureAbsorberTest, WithoutPricesTheBoundIsTheFloor) {
  Diamond diamond;
  diamond.spec.utilization_floor = 0.25;
  const std::vector<double> prices = {0, 0, 0};
  FailureAbsorber absorber(diamond.graph, diamond.spec, diamond.groups, prices);
  EXPECT_EQ(absorber.PriceBound(), 0.25);
}

TEST(FailureAbsorberTest, RoutesWhatTheFailureBrokeWhenItFits) {
  Diamond diamond;
  const std::vector<double> prices = {0.5, 0.5, 0};
  FailureAbsorber absorber(diamond.graph, diamond.spec, diamond.groups, prices);
  // Below 1.8 the missing 0.9 does not fit: nothing changes.
  EXPECT_FALSE(absorber.AbsorbAt(1.5).has_value());
  EXPECT_NEAR(diamond.group.paths[0].flow, 0.9, kTolerance);
  std::optional<std::vector<double>> load = absorber.AbsorbAt(1.8 * (1 + 1e-9));
  ASSERT_TRUE(load.has_value());
  EXPECT_NEAR((*load)[1], 1.8, kTolerance);
  EXPECT_NEAR((*load)[2], 1.8, kTolerance);
  EXPECT_NEAR(diamond.group.paths[0].flow, 1.8, kTolerance);
  // The group's statuses for the phase are forgotten: the next LP starts afresh.
  EXPECT_EQ(diamond.group.paths[0].status[kUtilizationPhase], kNoStatus);
}

TEST(FailureAbsorberTest, AGroupCutOffIsNotAbsorbed) {
  Diamond diamond;
  diamond.spec.arc_open = {0, 0, 1};  // 0 reaches nothing
  diamond.group.paths.clear();
  const std::vector<double> prices = {0.5, 0.5, 0};
  FailureAbsorber absorber(diamond.graph, diamond.spec, diamond.groups, prices);
  EXPECT_FALSE(absorber.AbsorbAt(10).has_value());
  EXPECT_TRUE(diamond.group.paths.empty());
  // The cut-off group adds nothing to the bound.
  EXPECT_EQ(absorber.PriceBound(), 0);
}

}  // namespace
}  // namespace geodesic::pathcomp::internal
