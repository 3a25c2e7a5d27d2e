// The planner's two decisions, without a server or a clock: when a burst of
// solve requests becomes one solve (SolveDebounce), and when a computed plan
// is the published one again (SameRouting: no new generation).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "pathcomp/service/same_routing.h"
#include "pathcomp/service/solve_debounce.h"
#include "site_plan/site_plan_writer.h"

namespace geodesic::pathcomp {
namespace {

using namespace std::chrono_literals;
using ::testing::ElementsAre;

const SolveDebounce::Clock::time_point kT0 = SolveDebounce::Clock::time_point{} + 1000s;

TEST(SolveDebounceTest, ABurstWithinTheWindowIsOneSolveWithEveryReason) {
  SolveDebounce debounce(50ms);
  EXPECT_FALSE(debounce.pending());
  EXPECT_FALSE(debounce.due().has_value());
  debounce.Request("link a down", kT0);
  debounce.Request("link b down", kT0 + 20ms);
  debounce.Request("link c down", kT0 + 49ms);
  EXPECT_EQ(debounce.due(), kT0 + 50ms);  // from the first request, not the last
  EXPECT_FALSE(debounce.TakeDue(kT0 + 49ms).has_value());
  auto reasons = debounce.TakeDue(kT0 + 50ms);
  ASSERT_TRUE(reasons.has_value());
  EXPECT_THAT(*reasons, ElementsAre("link a down", "link b down", "link c down"));
  EXPECT_FALSE(debounce.pending());
  EXPECT_FALSE(debounce.TakeDue(kT0 + 1s).has_value());
}

TEST(SolveDebounceTest, ARequestAfterTheBurstOpensItsOwnWindow) {
  SolveDebounce debounce(50ms);
  debounce.Request("first", kT0);
  ASSERT_TRUE(debounce.TakeDue(kT0 + 50ms).has_value());
  debounce.SolveFinished(kT0 + 60ms);
  debounce.Request("second", kT0 + 200ms);
  EXPECT_EQ(debounce.due(), kT0 + 250ms);
  EXPECT_FALSE(debounce.TakeDue(kT0 + 249ms).has_value());
  EXPECT_THAT(*debounce.TakeDue(kT0 + 250ms), ElementsAre("second"));
}

TEST(SolveDebounceTest, RequestsDuringASolveWaitAWholeWindowAfterIt) {
  SolveDebounce debounce(50ms);
  debounce.Request("first", kT0);
  ASSERT_TRUE(debounce.TakeDue(kT0 + 50ms).has_value());
  // The solve runs from +50 ms to +2 s; a report arrives meanwhile.
  debounce.Request("during the solve", kT0 + 100ms);
  debounce.SolveFinished(kT0 + 2s);
  EXPECT_EQ(debounce.due(), kT0 + 2s + 50ms);
  // The rest of the burst, arriving just after the solve, joins it.
  debounce.Request("just after", kT0 + 2s + 10ms);
  EXPECT_FALSE(debounce.TakeDue(kT0 + 2s + 49ms).has_value());
  EXPECT_THAT(*debounce.TakeDue(kT0 + 2s + 50ms), ElementsAre("during the solve", "just after"));
}

TEST(SolveDebounceTest, AZeroWindowSolvesAtOnce) {
  SolveDebounce debounce(0ms);
  debounce.Request("now", kT0);
  EXPECT_THAT(*debounce.TakeDue(kT0), ElementsAre("now"));
}

v1::Plan TwoSitePlan() {
  v1::Plan plan;
  plan.set_generation(7);
  plan.set_epoch(1);
  plan.set_reason("link a down");
  plan.set_computed_at_unix_ms(1000);
  for (const char* site_id : {"iad", "ord"}) {
    v1::SitePlan* site = plan.add_sites();
    site->set_facility_id(site_id);
    site->set_generation(7);
    v1::NextHop hop;
    hop.set_link_id(std::string(site_id) + "-sea");
    hop.set_weight(1);
    site_plan::SitePlanWriter(site).AddRoute("10.1.0.0/16", "sea", {hop}, {site_id, "sea"}, 1000);
  }
  plan.add_unreachable("iad>lax");
  return plan;
}

TEST(SameRoutingTest, StampsDoNotMakeANewPlan) {
  const v1::Plan published = TwoSitePlan();
  v1::Plan computed = TwoSitePlan();
  computed.set_generation(8);
  computed.set_epoch(1);
  computed.set_reason("a measurement changed");
  computed.set_computed_at_unix_ms(2000);
  for (v1::SitePlan& site : *computed.mutable_sites()) site.set_generation(8);
  EXPECT_TRUE(SameRouting(published, computed));
}

TEST(SameRoutingTest, ANextHopWeightIsANewPlan) {
  const v1::Plan published = TwoSitePlan();
  v1::Plan computed = TwoSitePlan();
  computed.mutable_sites(1)->mutable_groups(0)->set_weights(0, 2);
  EXPECT_FALSE(SameRouting(published, computed));
}

TEST(SameRoutingTest, ABackupIsANewPlan) {
  const v1::Plan published = TwoSitePlan();
  v1::Plan computed = TwoSitePlan();
  v1::SitePlan& iad = *computed.mutable_sites(0);
  v1::FailureScope failure;
  failure.set_id("iad-sea");
  v1::NextHop hop;
  hop.set_link_id("iad-ord");
  hop.set_weight(1);
  site_plan::SitePlanWriter(&iad).AddBackup(*iad.mutable_routes(0), failure, {hop}, {"iad", "ord", "sea"}, 2000);
  EXPECT_FALSE(SameRouting(published, computed));
}

TEST(SameRoutingTest, SitesAndReachabilityCount) {
  const v1::Plan published = TwoSitePlan();
  v1::Plan fewer_sites = TwoSitePlan();
  fewer_sites.mutable_sites()->RemoveLast();
  EXPECT_FALSE(SameRouting(published, fewer_sites));
  v1::Plan reachable = TwoSitePlan();
  reachable.clear_unreachable();
  EXPECT_FALSE(SameRouting(published, reachable));
  v1::Plan renamed = TwoSitePlan();
  renamed.mutable_sites(0)->set_facility_id("jfk");
  EXPECT_FALSE(SameRouting(published, renamed));
}

TEST(SameRoutingTest, AMovedWorkloadOrANewDependencyIsANewPlan) {
  const v1::Plan published = TwoSitePlan();
  v1::Plan moved = TwoSitePlan();
  moved.add_moved_workload_ids("chain-1");
  EXPECT_FALSE(SameRouting(published, moved));
  v1::Plan dependent = TwoSitePlan();
  dependent.add_single_facility_dependencies();
  EXPECT_FALSE(SameRouting(published, dependent));
}

}  // namespace
}  // namespace geodesic::pathcomp
