// The drill outcome measures the simulator and the live runner share.
#include "sim/drill/drill_outcome.h"
#include "site_plan/site_plan_writer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace geodesic::sim {
namespace {

using ::testing::ElementsAre;

v1::Plan PlanWith(uint64_t generation, const std::vector<std::pair<std::string, std::string>>& routes) {
  v1::Plan plan;
  plan.set_generation(generation);
  v1::SitePlan& site = *plan.add_sites();
  site.set_facility_id("iad");
  site_plan::SitePlanWriter writer(&site);
  for (const auto& [prefix, link] : routes) {
    v1::NextHop hop;
    hop.set_link_id(link);
    hop.set_weight(1);
    writer.AddRoute(prefix, "dfw", {hop}, {}, 0);
  }
  return plan;
}

TEST(DrillOutcomeTest, PercentileIsNearestRank) {
  EXPECT_EQ(Percentile({}, 0.5), 0u);
  EXPECT_EQ(Percentile({30, 10, 20}, 0.5), 20u);
  EXPECT_EQ(Percentile({30, 10, 20}, 0.99), 30u);
  EXPECT_EQ(Percentile({7}, 0.0), 7u);
}

TEST(DrillOutcomeTest, CarriedRatioIsCappedByCapacity) {
  v1::Plan plan;
  EXPECT_DOUBLE_EQ(PlanCarriedRatio(plan), 1.0);  // no demand
  plan.mutable_elephants()->set_demand_gbps(100);
  plan.mutable_elephants()->set_carried_gbps(80);
  plan.mutable_elephants()->set_max_utilization(0.5);
  EXPECT_DOUBLE_EQ(PlanCarriedRatio(plan), 0.8);
  plan.mutable_elephants()->set_max_utilization(2.0);  // over capacity: half of it is carried
  EXPECT_DOUBLE_EQ(PlanCarriedRatio(plan), 0.4);
}

TEST(DrillOutcomeTest, CutListsUnroutableFlowsThenUnplacedChains) {
  v1::Plan plan;
  plan.mutable_elephants()->add_unroutable_workload_ids("bulk");
  v1::ChainPlan& placed = *plan.add_chains();
  placed.set_workload_id("rag");
  placed.mutable_primary()->set_placed(true);
  plan.add_chains()->set_workload_id("agent");
  EXPECT_THAT(CutWorkloads(plan), ElementsAre("bulk", "agent"));
}

TEST(DrillOutcomeTest, SignaturesCountTheSameChangedRoutesAsThePlans) {
  const v1::Plan before = PlanWith(1, {{"10.0.0.0/16", "iad-chi"}, {"10.1.0.0/16", "iad-nyc"}, {"10.2.0.0/16", "iad-den"}});
  // One next hop moved, one route gone, one new.
  v1::Plan after = PlanWith(2, {{"10.0.0.0/16", "iad-chi"}, {"10.1.0.0/16", "iad-chi"}, {"10.3.0.0/16", "iad-sjc"}});
  EXPECT_EQ(RoutesChanged(before, after), 3u);
  EXPECT_EQ(RoutesChanged(SignaturesOf(before), SignaturesOf(after)), 3u);
  // A weight alone is a change too; a site the earlier plan lacks counts all its routes.
  v1::Plan reweighted = before;
  ASSERT_EQ(reweighted.sites(0).groups_size(), 3);  // one per route
  reweighted.mutable_sites(0)->mutable_groups(2)->set_weights(0, 5);
  v1::SitePlan& added = *reweighted.add_sites();
  added.set_facility_id("chi");
  site_plan::SitePlanWriter(&added).AddRoute("10.9.0.0/16", "dfw", {}, {}, 0);
  EXPECT_EQ(RoutesChanged(before, reweighted), 2u);
  EXPECT_EQ(RoutesChanged(SignaturesOf(before), SignaturesOf(reweighted)), 2u);
  EXPECT_EQ(RoutesChanged(SignaturesOf(before), SignaturesOf(before)), 0u);

  // Settle takes the runner's count when given one.
  v1::DrillReport report;
  DrillOutcomes totals(report);
  totals.Settle(SettledFromPlans(nullptr, before));
  SettledPlan settled = SettledFromPlans(&before, after);
  settled.routes_changed = 7;
  EXPECT_EQ(totals.Settle(settled).routes_changed, 7u);
}

TEST(DrillOutcomeTest, TotalsFollowEverySettledPlanAndOnlyNewDependenciesCount) {
  v1::DrillReport report;
  DrillOutcomes totals(report);
  v1::Plan baseline = PlanWith(1, {{"10.0.0.0/16", "iad-chi"}, {"10.1.0.0/16", "iad-nyc"}});
  auto* known = baseline.add_single_facility_dependencies();
  known->set_workload_id("rag");
  known->set_facility_id("chi");
  baseline.mutable_elephants()->set_max_utilization(0.4);
  const auto first = totals.Settle(SettledFromPlans(nullptr, baseline));
  EXPECT_EQ(first.routes_changed, 0u);
  EXPECT_TRUE(first.new_dependencies.empty());  // the baseline's own are not new
  EXPECT_EQ(report.plans(), 1u);

  v1::Plan after = PlanWith(2, {{"10.0.0.0/16", "iad-nyc"}, {"10.1.0.0/16", "iad-nyc"}});
  *after.add_single_facility_dependencies() = *known;
  auto* added = after.add_single_facility_dependencies();
  added->set_workload_id("bulk");
  added->set_facility_id("nyc");
  after.mutable_elephants()->set_max_utilization(0.9);
  after.mutable_elephants()->set_demand_gbps(10);
  after.mutable_elephants()->set_carried_gbps(5);
  SettledPlan settled = SettledFromPlans(&baseline, after);
  settled.chain_latency_us = {100, 300, 200};
  settled.budget_violations = 2;
  const auto second = totals.Settle(settled);
  EXPECT_EQ(second.routes_changed, 1u);
  EXPECT_THAT(second.new_dependencies, ElementsAre("bulk@nyc"));
  EXPECT_EQ(second.chain_latency_p50_us, 200u);
  EXPECT_EQ(second.chain_latency_p99_us, 300u);

  v1::DrillEventOutcome outcome;
  DrillOutcomes::FillOutcome(second, outcome);
  EXPECT_EQ(outcome.routes_changed(), 1u);
  EXPECT_DOUBLE_EQ(outcome.carried_ratio_after(), 0.5);
  EXPECT_DOUBLE_EQ(outcome.mlu_after(), 0.9);
  EXPECT_EQ(outcome.budget_violations_after(), 2u);
  EXPECT_THAT(outcome.new_dependencies(), ElementsAre("bulk@nyc"));

  // The same generation again (nothing moved) is not another plan.
  totals.Settle(SettledFromPlans(&after, after));
  EXPECT_EQ(report.plans(), 2u);
  EXPECT_EQ(report.routes_changed(), 1u);
  EXPECT_DOUBLE_EQ(report.max_mlu(), 0.9);
  EXPECT_EQ(report.max_budget_violations(), 2u);
  EXPECT_DOUBLE_EQ(report.min_settled_carried_ratio(), 0.5);
  EXPECT_THAT(totals.all_new_dependencies(), ElementsAre("bulk@nyc"));
}

}  // namespace
}  // namespace geodesic::sim
