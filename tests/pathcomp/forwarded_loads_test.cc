// Link loads as forwarded (sim/drill/forwarded_loads.h) on hand-made plans:
// WCMP splits, routerd's choice of backups after a cut, traffic without a
// route and forwarding loops.
#include "pathcomp/solver/forwarded_loads.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "site_plan/site_plan_writer.h"

namespace geodesic::pathcomp {
namespace {

using ::testing::DoubleEq;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Pair;

constexpr char kToD[] = "10.0.4.0/24";  // facility d's prefix

v1::NextHop Hop(const std::string& link, const std::string& peer, uint32_t weight = 1) {
  v1::NextHop hop;
  hop.set_link_id(link);
  hop.set_peer_facility_id(peer);
  hop.set_peer_node_id(peer + "-r1");
  hop.set_weight(weight);
  return hop;
}

v1::FailureScope LinkFailure(const std::string& link) {
  v1::FailureScope failure;
  failure.set_kind(v1::FAILURE_KIND_LINK);
  failure.set_id(link);
  return failure;
}

v1::FailureScope SrlgFailure(const std::string& srlg) {
  v1::FailureScope failure;
  failure.set_kind(v1::FAILURE_KIND_SRLG);
  failure.set_id(srlg);
  return failure;
}

struct Backup {
  v1::FailureScope protects;
  std::vector<v1::NextHop> next_hops;
};

// Adds to `plan` site `facility`'s route toward d with `primary` and `backups`.
void AddRoute(v1::Plan& plan, const std::string& facility, const std::vector<v1::NextHop>& primary,
              const std::vector<Backup>& backups = {}, const std::string& prefix = kToD) {
  v1::SitePlan* site = nullptr;
  for (v1::SitePlan& existing : *plan.mutable_sites()) {
    if (existing.facility_id() == facility) site = &existing;
  }
  if (site == nullptr) {
    site = plan.add_sites();
    site->set_facility_id(facility);
  }
  site_plan::SitePlanWriter writer(site);
  v1::Route& route = writer.AddRoute(prefix, "d", primary, {facility, "d"}, 1000);
  for (const Backup& backup : backups) writer.AddBackup(route, backup.protects, backup.next_hops, {facility, "d"}, 2000);
}

// a, b and c each reach d directly; a's and c's backups for their direct
// links both go through b, whose only way on is b-d.
v1::Plan PileOntoB() {
  v1::Plan plan;
  AddRoute(plan, "a", {Hop("a-d", "d")}, {{LinkFailure("a-d"), {Hop("a-b", "b")}}});
  AddRoute(plan, "c", {Hop("c-d", "d")}, {{LinkFailure("c-d"), {Hop("c-b", "b")}}});
  AddRoute(plan, "b", {Hop("b-d", "d")});
  return plan;
}

std::vector<FlowDemand> FromAAndC() {
  return {{.src_facility = "a", .dst_prefix = kToD, .gbps = 60}, {.src_facility = "c", .dst_prefix = kToD, .gbps = 60}};
}

const std::map<std::string, double> kCapacities = {{"a-d", 100}, {"a-b", 100}, {"c-d", 100},
                                                   {"c-b", 100}, {"b-d", 100}, {"a-c", 100}};

TEST(ForwardedLoadsTest, PrimariesCarryEachFlowOnItsOwnLink) {
  const ForwardingPlan plan = ForwardingPlan::Of(PileOntoB(), {kToD});
  const ForwardedLoads loads = Forward(plan, FromAAndC(), {});
  EXPECT_THAT(loads.link_gbps, ElementsAre(Pair("a-d", DoubleEq(60)), Pair("c-d", DoubleEq(60))));
  EXPECT_DOUBLE_EQ(loads.delivered_gbps, 120);
  EXPECT_DOUBLE_EQ(loads.dropped_gbps, 0);
  EXPECT_DOUBLE_EQ(loads.looped_gbps, 0);
  const HottestLink hottest = Hottest(loads, kCapacities);
  EXPECT_DOUBLE_EQ(hottest.utilization, 0.6);
  EXPECT_EQ(hottest.link_id, "a-d");  // the first of equals, by link id
}

TEST(ForwardedLoadsTest, BackupsOfACutPileOntoOneLink) {
  const ForwardingPlan plan = ForwardingPlan::Of(PileOntoB(), {kToD});
  // Both fibers cut, both directions down.
  const ForwardedLoads loads = Forward(plan, FromAAndC(), {"a-d", "d-a", "c-d", "d-c"});
  EXPECT_THAT(loads.link_gbps,
              ElementsAre(Pair("a-b", DoubleEq(60)), Pair("b-d", DoubleEq(120)), Pair("c-b", DoubleEq(60))));
  EXPECT_DOUBLE_EQ(loads.delivered_gbps, 120);
  const HottestLink hottest = Hottest(loads, kCapacities);
  EXPECT_DOUBLE_EQ(hottest.utilization, 1.2);
  EXPECT_EQ(hottest.link_id, "b-d");
}

TEST(ForwardedLoadsTest, EachSiteRepairsOnlyForItsOwnLinks) {
  // c-d is down, but a does not hear of it: a stays on its primary.
  const ForwardingPlan plan = ForwardingPlan::Of(PileOntoB(), {kToD});
  const ForwardedLoads loads = Forward(plan, FromAAndC(), {"c-d", "d-c"});
  EXPECT_THAT(loads.link_gbps,
              ElementsAre(Pair("a-d", DoubleEq(60)), Pair("b-d", DoubleEq(60)), Pair("c-b", DoubleEq(60))));
}

TEST(ForwardedLoadsTest, SplitsByWcmpWeights) {
  v1::Plan built;
  AddRoute(built, "a", {Hop("a-d", "d", 3), Hop("a-b", "b", 1)});
  AddRoute(built, "b", {Hop("b-d", "d")});
  const ForwardedLoads loads =
      Forward(ForwardingPlan::Of(built, {kToD}), {{.src_facility = "a", .dst_prefix = kToD, .gbps = 80}}, {});
  EXPECT_THAT(loads.link_gbps, ElementsAre(Pair("a-b", DoubleEq(20)), Pair("a-d", DoubleEq(60)), Pair("b-d", DoubleEq(20))));
  EXPECT_DOUBLE_EQ(loads.delivered_gbps, 80);
}

TEST(ForwardedLoadsTest, PrefersTheBackupForTheDownLinkAsRouterdDoes) {
  // The SRLG backup comes first, but a-d itself is down: routerd takes the
  // link's backup (through b), not the first that avoids the down links (c).
  v1::Plan built;
  AddRoute(built, "a", {Hop("a-d", "d")},
           {{SrlgFailure("conduit-9"), {Hop("a-c", "c")}}, {LinkFailure("a-d"), {Hop("a-b", "b")}}});
  AddRoute(built, "b", {Hop("b-d", "d")});
  AddRoute(built, "c", {Hop("c-d", "d")});
  const ForwardedLoads loads =
      Forward(ForwardingPlan::Of(built, {kToD}), {{.src_facility = "a", .dst_prefix = kToD, .gbps = 10}}, {"a-d"});
  EXPECT_THAT(loads.link_gbps, ElementsAre(Pair("a-b", DoubleEq(10)), Pair("b-d", DoubleEq(10))));
}

TEST(ForwardedLoadsTest, TrafficWithoutAUsableRouteIsDropped) {
  // b's only link on is cut and b has no backup: what a and c send there is lost at b.
  const ForwardingPlan plan = ForwardingPlan::Of(PileOntoB(), {kToD});
  const ForwardedLoads loads = Forward(plan, FromAAndC(), {"a-d", "c-d", "b-d"});
  EXPECT_THAT(loads.link_gbps, ElementsAre(Pair("a-b", DoubleEq(60)), Pair("c-b", DoubleEq(60))));
  EXPECT_DOUBLE_EQ(loads.dropped_gbps, 120);
  EXPECT_DOUBLE_EQ(loads.delivered_gbps, 0);
  // A source without any route for the prefix drops at once.
  const ForwardedLoads nowhere = Forward(plan, {{.src_facility = "e", .dst_prefix = kToD, .gbps = 5}}, {});
  EXPECT_THAT(nowhere.link_gbps, IsEmpty());
  EXPECT_DOUBLE_EQ(nowhere.dropped_gbps, 5);
}

TEST(ForwardedLoadsTest, ALoopIsCountedAndItsLinksOnce) {
  // a's backup sends to b, whose route sends back to a; c feeds into b.
  v1::Plan built;
  AddRoute(built, "a", {Hop("a-d", "d")}, {{LinkFailure("a-d"), {Hop("a-b", "b")}}});
  AddRoute(built, "b", {Hop("b-a", "a")});
  AddRoute(built, "c", {Hop("c-b", "b")});
  const ForwardedLoads loads = Forward(ForwardingPlan::Of(built, {kToD}),
                                       {{.src_facility = "a", .dst_prefix = kToD, .gbps = 50},
                                        {.src_facility = "c", .dst_prefix = kToD, .gbps = 7}},
                                       {"a-d"});
  EXPECT_DOUBLE_EQ(loads.looped_gbps, 57);
  EXPECT_DOUBLE_EQ(loads.delivered_gbps, 0);
  // Each flow round the loop once, then no further (a router keeps a flow on
  // its hash, so it would go round until its TTL runs out).
  EXPECT_THAT(loads.link_gbps,
              ElementsAre(Pair("a-b", DoubleEq(57)), Pair("b-a", DoubleEq(57)), Pair("c-b", DoubleEq(7))));
}

// A router hashes each flow onto one next hop, the same when it comes back:
// of a's traffic, the flows hashed toward b return and loop; the rest, hashed
// straight to d, arrive. Only those loop.
TEST(ForwardedLoadsTest, OnlyTheFlowsHashedOntoALoopLoop) {
  v1::Plan built;
  AddRoute(built, "a", {Hop("a-d", "d", 4), Hop("a-b", "b", 1)});
  AddRoute(built, "b", {Hop("b-d", "d")}, {{LinkFailure("b-d"), {Hop("b-a", "a")}}});
  AddRoute(built, "c", {Hop("c-b", "b")});
  const ForwardedLoads loads = Forward(ForwardingPlan::Of(built, {kToD}),
                                       {{.src_facility = "a", .dst_prefix = kToD, .gbps = 100},
                                        {.src_facility = "c", .dst_prefix = kToD, .gbps = 10}},
                                       {"b-d"});
  // a: 80 to d, 20 via b back to a (looping). c's 10 via b to a: 8 to d, 2
  // back to b (looping).
  EXPECT_DOUBLE_EQ(loads.delivered_gbps, 88);
  EXPECT_DOUBLE_EQ(loads.looped_gbps, 22);
  EXPECT_THAT(loads.link_gbps, ElementsAre(Pair("a-b", DoubleEq(22)), Pair("a-d", DoubleEq(88)),
                                           Pair("b-a", DoubleEq(30)), Pair("c-b", DoubleEq(10))));
}

TEST(ForwardedLoadsTest, KeepsOnlyTheRoutesOfTheGivenPrefixes) {
  v1::Plan built = PileOntoB();
  AddRoute(built, "a", {Hop("a-c", "c")}, {}, "10.0.9.0/24");
  const ForwardingPlan plan = ForwardingPlan::Of(built, {kToD});
  ASSERT_NE(plan.Site("a"), nullptr);
  EXPECT_EQ(plan.Site("a")->routes_size(), 1);
  EXPECT_EQ(plan.Route(*plan.Site("a"), "10.0.9.0/24"), nullptr);
  EXPECT_EQ(plan.Site("z"), nullptr);
  // The trimmed tables still resolve to the same forwarding.
  EXPECT_THAT(Forward(plan, FromAAndC(), {"a-d", "c-d"}).link_gbps,
              ElementsAre(Pair("a-b", DoubleEq(60)), Pair("b-d", DoubleEq(120)), Pair("c-b", DoubleEq(60))));
}

// OfReleasing keeps what Of keeps and leaves the plan's sites empty.
TEST(ForwardedLoadsTest, ReleasingTheSitesKeepsTheSameForwarding) {
  v1::Plan built = PileOntoB();
  AddRoute(built, "a", {Hop("a-c", "c")}, {}, "10.0.9.0/24");
  const ForwardingPlan kept = ForwardingPlan::Of(built, {kToD});
  const ForwardingPlan released = ForwardingPlan::OfReleasing(built, {kToD});
  ASSERT_EQ(built.sites_size(), 3);
  for (const v1::SitePlan& site : built.sites()) {
    EXPECT_EQ(site.ByteSizeLong(), 0u) << "a site kept its routes";
  }
  for (const std::string facility : {"a", "b", "c", "z"}) {
    const v1::SitePlan* site = released.Site(facility);
    ASSERT_EQ(site == nullptr, kept.Site(facility) == nullptr) << facility;
    if (site != nullptr) {
      EXPECT_EQ(site->SerializeAsString(), kept.Site(facility)->SerializeAsString()) << facility;
    }
  }
  for (const std::set<std::string>& down : std::vector<std::set<std::string>>{{}, {"a-d", "c-d"}, {"b-d"}}) {
    const ForwardedLoads before = Forward(kept, FromAAndC(), down);
    const ForwardedLoads after = Forward(released, FromAAndC(), down);
    EXPECT_EQ(after.link_gbps, before.link_gbps);
    EXPECT_EQ(after.delivered_gbps, before.delivered_gbps);
    EXPECT_EQ(after.dropped_gbps, before.dropped_gbps);
  }
}

}  // namespace
}  // namespace geodesic::pathcomp
