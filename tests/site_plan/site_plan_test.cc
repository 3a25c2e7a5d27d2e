// The compact SitePlan: what the writer shares, what the reader resolves, and
// the indices ValidateIndices refuses.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>

#include "site_plan/site_plan_reader.h"
#include "site_plan/site_plan_writer.h"

namespace geodesic::site_plan {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

v1::NextHop Hop(const std::string& link, const std::string& peer, uint32_t weight = 1) {
  v1::NextHop hop;
  hop.set_link_id(link);
  hop.set_peer_facility_id(peer);
  hop.set_peer_node_id(peer + "-br1");
  hop.set_weight(weight);
  return hop;
}

v1::FailureScope Failure(v1::FailureKind kind, const std::string& id) {
  v1::FailureScope failure;
  failure.set_kind(kind);
  failure.set_id(id);
  return failure;
}

std::vector<std::string> Links(const v1::ForwardingRoute& route) {
  std::vector<std::string> links;
  for (const auto& hop : route.next_hops()) links.push_back(hop.link_id() + "*" + std::to_string(hop.weight()));
  return links;
}

// iad: two prefixes of dfw behind the same next hops and backups, one of nyc.
v1::SitePlan IadPlan() {
  v1::SitePlan plan;
  plan.set_facility_id("iad");
  plan.set_generation(3);
  SitePlanWriter writer(&plan);
  for (const char* prefix : {"10.4.0.0/16", "fd00:4::/32"}) {
    v1::Route& route = writer.AddRoute(prefix, "dfw", {Hop("iad-chi", "chi", 2), Hop("iad-atl", "atl", 1)},
                                       {"iad", "chi", "dfw"}, 3000);
    writer.AddBackup(route, Failure(v1::FAILURE_KIND_LINK, "iad-chi"), {Hop("iad-atl", "atl")},
                     {"iad", "atl", "dfw"}, 4000);
    writer.AddBackup(route, Failure(v1::FAILURE_KIND_FACILITY, "chi"), {Hop("iad-atl", "atl")},
                     {"iad", "atl", "dfw"}, 4000);
  }
  v1::Route& nyc = writer.AddRoute("10.2.0.0/16", "nyc", {Hop("iad-nyc", "nyc")}, {"iad", "nyc"}, 1000);
  writer.AddBackup(nyc, Failure(v1::FAILURE_KIND_LINK, "iad-nyc"), {}, {}, 0);  // none
  return plan;
}

TEST(SitePlanTest, SharedGroupsPathsAndFailuresAreListedOnce) {
  const v1::SitePlan plan = IadPlan();
  ASSERT_TRUE(ValidateIndices(plan).ok()) << ValidateIndices(plan);
  EXPECT_EQ(plan.ports_size(), 3);          // iad-chi, iad-atl, iad-nyc
  EXPECT_EQ(plan.facility_ids_size(), 5);   // dfw, iad, chi, atl, nyc
  EXPECT_EQ(plan.groups_size(), 4);         // chi+atl, atl, nyc, none
  EXPECT_EQ(PathCount(plan), 4);            // iad>chi>dfw, iad>atl>dfw, iad>nyc, none
  EXPECT_EQ(plan.failures_size(), 3);
  EXPECT_EQ(plan.routes(0).next_hops(), plan.routes(1).next_hops());
  EXPECT_THAT(plan.routes(1).backups(), ElementsAreArray(plan.routes(0).backups()));
}

TEST(SitePlanTest, ResolvesARouteAndItsBackupsIntoIds) {
  const v1::SitePlan plan = IadPlan();
  const v1::Route* route = FindRoute(plan, "fd00:4::/32");
  ASSERT_NE(route, nullptr);
  EXPECT_EQ(DestinationId(plan, *route), "dfw");
  const v1::ForwardingRoute primary = Primary(plan, *route);
  EXPECT_EQ(primary.prefix(), "fd00:4::/32");
  EXPECT_EQ(primary.destination_facility_id(), "dfw");
  EXPECT_THAT(Links(primary), ElementsAre("iad-chi*2", "iad-atl*1"));
  EXPECT_EQ(primary.next_hops(0).peer_facility_id(), "chi");
  EXPECT_EQ(primary.next_hops(0).peer_node_id(), "chi-br1");
  EXPECT_THAT(primary.path_facility_ids(), ElementsAre("iad", "chi", "dfw"));
  EXPECT_EQ(primary.path_latency_us(), 3000u);

  ASSERT_EQ(BackupCount(*route), 2);
  const int facility = FindBackup(plan, *route, Failure(v1::FAILURE_KIND_FACILITY, "chi"));
  ASSERT_EQ(facility, 1);
  const v1::ForwardingRoute backup = WithBackup(plan, *route, facility);
  EXPECT_THAT(Links(backup), ElementsAre("iad-atl*1"));
  EXPECT_THAT(backup.path_facility_ids(), ElementsAre("iad", "atl", "dfw"));
  EXPECT_EQ(backup.path_latency_us(), 4000u);
  EXPECT_EQ(FindBackup(plan, *route, Failure(v1::FAILURE_KIND_LINK, "iad-nyc")), -1);
  EXPECT_EQ(FindBackup(plan, *route, Failure(v1::FAILURE_KIND_SRLG, "iad-chi")), -1) << "the kind counts";

  const ExpandedRoute expanded = Expand(plan, *FindRouteTo(plan, "nyc"));
  EXPECT_EQ(expanded.primary.prefix(), "10.2.0.0/16");
  ASSERT_EQ(expanded.backups.size(), 1u);
  EXPECT_EQ(expanded.backups[0].protects.id(), "iad-nyc");
  EXPECT_TRUE(expanded.backups[0].route.next_hops().empty()) << "a backup may have no next hop";
  EXPECT_EQ(FindRoute(plan, "10.9.0.0/16"), nullptr);
  EXPECT_EQ(FindRouteTo(plan, "sea"), nullptr);
}

TEST(SitePlanTest, AWriterOnAnExistingPlanReusesItsTables) {
  v1::SitePlan plan = IadPlan();
  const int groups = plan.groups_size(), paths = PathCount(plan), ports = plan.ports_size();
  SitePlanWriter writer(&plan);
  writer.AddRoute("10.5.0.0/16", "dfw", {Hop("iad-chi", "chi", 2), Hop("iad-atl", "atl", 1)}, {"iad", "chi", "dfw"},
                  3000);
  EXPECT_EQ(plan.groups_size(), groups);
  EXPECT_EQ(PathCount(plan), paths);
  EXPECT_EQ(plan.routes(3).next_hops(), plan.routes(0).next_hops());
  // The same links with other weights are another group; a new link is a new port.
  writer.AddRoute("10.6.0.0/16", "dfw", {Hop("iad-chi", "chi", 1), Hop("iad-sea", "sea", 1)}, {"iad", "chi", "dfw"},
                  3000);
  EXPECT_EQ(plan.groups_size(), groups + 1);
  EXPECT_EQ(plan.ports_size(), ports + 1);
  EXPECT_TRUE(ValidateIndices(plan).ok());
}

// A plan stored before the paths were a flat table parses with none: its
// routes keep their next hops and backups, on one empty path.
TEST(SitePlanTest, APlanOfTheOldPathFormatKeepsItsRoutesWithoutPaths) {
  v1::SitePlan plan = IadPlan();
  EXPECT_FALSE(DetachLegacyPaths(plan));  // a plan of this form is left as it is
  plan.clear_path_facilities();
  plan.clear_path_ends();
  plan.clear_path_latencies_us();
  ASSERT_FALSE(ValidateIndices(plan).ok());
  const v1::SitePlan before = plan;
  ASSERT_TRUE(DetachLegacyPaths(plan));
  ASSERT_TRUE(ValidateIndices(plan).ok()) << ValidateIndices(plan);
  ASSERT_EQ(plan.routes_size(), before.routes_size());
  for (int r = 0; r < plan.routes_size(); ++r) {
    const v1::ForwardingRoute primary = Primary(plan, plan.routes(r));
    EXPECT_EQ(primary.next_hops_size(), Primary(IadPlan(), IadPlan().routes(r)).next_hops_size());
    EXPECT_EQ(primary.path_facility_ids_size(), 0);
    ASSERT_EQ(BackupCount(plan.routes(r)), BackupCount(before.routes(r)));
    for (int b = 0; b < BackupCount(plan.routes(r)); ++b) {
      EXPECT_EQ(BackupAt(plan.routes(r), b).group, BackupAt(before.routes(r), b).group);
      EXPECT_EQ(BackupAt(plan.routes(r), b).failure, BackupAt(before.routes(r), b).failure);
    }
  }
}

TEST(SitePlanTest, ValidateIndicesNamesWhatIsOutOfRange) {
  const auto refused = [](const std::function<void(v1::SitePlan&)>& damage) {
    v1::SitePlan plan = IadPlan();
    damage(plan);
    return std::string(ValidateIndices(plan).message());
  };
  EXPECT_THAT(refused([](v1::SitePlan& plan) { plan.mutable_routes(2)->set_next_hops(4); }),
              HasSubstr("route 10.2.0.0/16: next-hop group index 4 is out of range (the plan has 4)"));
  EXPECT_THAT(refused([](v1::SitePlan& plan) { plan.mutable_routes(0)->set_path(4); }),
              HasSubstr("route 10.4.0.0/16: path index 4"));
  EXPECT_THAT(refused([](v1::SitePlan& plan) { plan.mutable_routes(0)->set_destination(5); }),
              HasSubstr("destination facility index 5"));
  EXPECT_THAT(refused([](v1::SitePlan& plan) { plan.mutable_routes(0)->set_backups(3, 3); }),
              HasSubstr("route 10.4.0.0/16 backup 1: failure index 3"));
  EXPECT_THAT(refused([](v1::SitePlan& plan) { plan.mutable_routes(0)->set_backups(5, 4); }),
              HasSubstr("backup 1: path index 4"));
  EXPECT_THAT(refused([](v1::SitePlan& plan) { plan.mutable_routes(0)->add_backups(0); }),
              HasSubstr("not (failure, group, path) triples"));
  EXPECT_THAT(refused([](v1::SitePlan& plan) { plan.mutable_groups(1)->set_ports(0, 3); }),
              HasSubstr("next-hop group 1: port index 3"));
  EXPECT_THAT(refused([](v1::SitePlan& plan) { plan.mutable_groups(0)->add_weights(1); }),
              HasSubstr("next-hop group 0: 2 ports but 3 weights"));
  EXPECT_THAT(refused([](v1::SitePlan& plan) { plan.mutable_groups(0)->set_weights(1, 0); }),
              HasSubstr("next-hop group 0: weight 0"));
  EXPECT_THAT(refused([](v1::SitePlan& plan) { plan.set_path_facilities(static_cast<int>(plan.path_ends(1)), 5); }),
              HasSubstr("path 2: facility index 5"));
  // The flat path table's shape: ends in order and within the facilities, a latency per path.
  EXPECT_THAT(refused([](v1::SitePlan& plan) { plan.set_path_ends(1, plan.path_ends(0) - 1); }),
              HasSubstr("path 1: ends at"));
  EXPECT_THAT(refused([](v1::SitePlan& plan) { plan.set_path_ends(3, plan.path_facilities_size() + 1); }),
              HasSubstr("path 3: ends at"));
  EXPECT_THAT(refused([](v1::SitePlan& plan) { plan.add_path_facilities(0); }),
              HasSubstr("path table: the last path ends at"));
  EXPECT_THAT(refused([](v1::SitePlan& plan) { plan.mutable_path_latencies_us()->RemoveLast(); }),
              HasSubstr("path table: 4 path ends but 3 latencies"));
  EXPECT_THAT(refused([](v1::SitePlan& plan) { plan.mutable_ports(0)->clear_link_id(); }),
              HasSubstr("port 0: no link id"));
}

}  // namespace
}  // namespace geodesic::site_plan
