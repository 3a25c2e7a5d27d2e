#include "pathcomp/solver/internal/spread_start.h"

#include <gtest/gtest.h>

#include <vector>

namespace geodesic::pathcomp::internal {
namespace {

constexpr double kTolerance = 1e-12;

// Four sources 0-3, each with a short way to the destination 6 over hub 4
// (arcs 0-3, then arc 8; 2 us) and a long one over hub 5 (arcs 4-7, then
// arc 9; 10 us); capacity 1 everywhere (solver units). One group of 0.4 from
// each source, all on the short way: hub 4's last arc carries 1.6, and the
// optimum, two groups each way, is 0.8.
struct Ladder {
  Ladder() {
    graph.node_count = 7;
    for (int s = 0; s < 4; ++s) AddArc(s, 4, 1);
    for (int s = 0; s < 4; ++s) AddArc(s, 5, 5);
    AddArc(4, 6, 1);
    AddArc(5, 6, 5);
    graph.Index();
    const size_t arcs = graph.arc_src.size();
    spec.phase = kUtilizationPhase;
    spec.arc_scale.assign(arcs, 1);
    spec.arc_upper.assign(arcs, 0);
    spec.arc_open.assign(arcs, 1);
    spec.group_lower.assign(4, 0.4);
    spec.group_upper.assign(4, 0.4);
    spec.freeze_routed_groups = true;
    for (int s = 0; s < 4; ++s) {
      FlowGroup& group = storage[static_cast<size_t>(s)];
      group.src = s;
      group.dst = 6;
      group.demand = 0.4;
      group.paths.emplace_back(std::vector<int>{s, 8});
      groups.push_back(&group);
    }
  }
  void AddArc(int src, int dst, double cost_us) {
    graph.arc_src.push_back(src);
    graph.arc_dst.push_back(dst);
    graph.arc_capacity.push_back(1);
    graph.arc_cost_us.push_back(cost_us);
  }
  // What the groups' first paths put on `arc`, each at its demand.
  double Load(int arc) const {
    double load = 0;
    for (const FlowGroup* group : groups) {
      for (int a : group->paths.front().arcs) load += a == arc ? group->demand : 0;
    }
    return load;
  }
  int OverHub(int hub_arc) const {
    int count = 0;
    for (const FlowGroup* group : groups) count += group->paths.front().arcs.back() == hub_arc;
    return count;
  }

  Graph graph;
  PhaseSpec spec;
  FlowGroup storage[4];
  std::vector<FlowGroup*> groups;
  std::vector<Role> roles = std::vector<Role>(4, Role::kFree);
};

TEST(SpreadStartTest, SpreadingMovesTheGroupsOffTheHotLinkToTheOptimum) {
  Ladder ladder;
  const GroupsBySource by_source(ladder.groups, ladder.graph.node_count);
  PricedShortestPaths paths(ladder.graph);
  ASSERT_TRUE(SpreadFirstPaths(ladder.graph, ladder.spec, ladder.groups, ladder.roles, by_source, paths));
  EXPECT_NEAR(ladder.Load(8), 0.8, kTolerance);
  EXPECT_NEAR(ladder.Load(9), 0.8, kTolerance);
  for (const FlowGroup* group : ladder.groups) {
    ASSERT_EQ(group->paths.size(), 1u);
    const std::vector<int>& arcs = group->paths.front().arcs;
    ASSERT_EQ(arcs.size(), 2u);
    EXPECT_EQ(ladder.graph.arc_src[arcs[0]], group->src);
    EXPECT_EQ(ladder.graph.arc_dst[arcs[1]], 6);
  }
}

TEST(SpreadStartTest, NothingMovesWhenTheLowestLatencyPathsAreEnough) {
  Ladder ladder;
  ladder.spec.utilization_enough = 1.6;  // a latency class whose target 1.6 already holds
  const GroupsBySource by_source(ladder.groups, ladder.graph.node_count);
  PricedShortestPaths paths(ladder.graph);
  EXPECT_FALSE(SpreadFirstPaths(ladder.graph, ladder.spec, ladder.groups, ladder.roles, by_source, paths));
  EXPECT_EQ(ladder.OverHub(8), 4);
}

TEST(SpreadStartTest, AGroupLeftOutKeepsItsPathAndAddsNoLoad) {
  Ladder ladder;
  ladder.roles[0] = Role::kLeftOut;
  const GroupsBySource by_source(ladder.groups, ladder.graph.node_count);
  PricedShortestPaths paths(ladder.graph);
  ASSERT_TRUE(SpreadFirstPaths(ladder.graph, ladder.spec, ladder.groups, ladder.roles, by_source, paths));
  EXPECT_EQ(ladder.groups[0]->paths.front().arcs, (std::vector<int>{0, 8}));
  // The three others: 1.2 on the short way's last arc was too much.
  int moved = 0;
  for (int s = 1; s < 4; ++s) moved += ladder.groups[static_cast<size_t>(s)]->paths.front().arcs.back() == 9;
  EXPECT_GE(moved, 1);
}

TEST(SpreadStartTest, ShorteningTakesBackOnlyWhatFitsUnderTheUtilization) {
  Ladder ladder;
  const GroupsBySource by_source(ladder.groups, ladder.graph.node_count);
  PricedShortestPaths paths(ladder.graph);
  ASSERT_TRUE(SpreadFirstPaths(ladder.graph, ladder.spec, ladder.groups, ladder.roles, by_source, paths));
  for (FlowGroup* group : ladder.groups) group->paths.front().flow = group->demand;  // as the master leaves them
  // At U 0.8 both ways are full: nothing moves.
  EXPECT_EQ(ShortenSinglePaths(ladder.graph, ladder.spec, ladder.groups, ladder.roles, by_source, 0.8, paths), 0);
  EXPECT_EQ(ladder.OverHub(9), 2);
  // At 1.2 the short way takes one more group, not two.
  EXPECT_EQ(ShortenSinglePaths(ladder.graph, ladder.spec, ladder.groups, ladder.roles, by_source, 1.2, paths), 1);
  EXPECT_EQ(ladder.OverHub(8), 3);
  EXPECT_LE(ladder.Load(8), 1.2 + kTolerance);
  for (const FlowGroup* group : ladder.groups) {
    EXPECT_NEAR(group->paths.front().flow, 0.4, kTolerance);
    EXPECT_EQ(group->paths.front().status[kUtilizationPhase], kNoStatus);
  }
}

TEST(SpreadStartTest, ShorteningLeavesSplitAndFrozenGroupsAlone) {
  Ladder ladder;
  for (FlowGroup* group : ladder.groups) {
    group->paths.front() = PathColumn(std::vector<int>{group->src + 4, 9});  // all on the long way
    group->paths.front().flow = group->demand;
  }
  ladder.groups[0]->paths.front().flow = 0.2;  // split: half on the short way
  ladder.groups[0]->paths.emplace_back(std::vector<int>{0, 8});
  ladder.groups[0]->paths.back().flow = 0.2;
  ladder.roles[1] = Role::kFrozen;
  const GroupsBySource by_source(ladder.groups, ladder.graph.node_count);
  PricedShortestPaths paths(ladder.graph);
  // Room for everything: only the two free single-path groups move.
  EXPECT_EQ(ShortenSinglePaths(ladder.graph, ladder.spec, ladder.groups, ladder.roles, by_source, 10, paths), 2);
  EXPECT_EQ(ladder.groups[0]->paths.size(), 2u);
  EXPECT_EQ(ladder.groups[0]->paths.front().arcs.back(), 9);
  EXPECT_EQ(ladder.groups[1]->paths.front().arcs.back(), 9);
  EXPECT_EQ(ladder.groups[2]->paths.front().arcs.back(), 8);
  EXPECT_EQ(ladder.groups[3]->paths.front().arcs.back(), 8);
}

}  // namespace
}  // namespace geodesic::pathcomp::internal
