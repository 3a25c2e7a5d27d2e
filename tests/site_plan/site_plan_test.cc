// The compact SitePlan: what the writer shares, what the reader resolves, and
// the indices ValidateIndices refuses.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
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
  // Each prefix once: iad, iad>chi, iad>chi>dfw, iad>atl, iad>atl>dfw, iad>nyc.
  EXPECT_EQ(plan.path_node_parents_size(), 6);
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

// Every path the writer is given reads back as it was, whatever prefixes the
// paths share, and each prefix is listed once in the plan's path tree.
TEST(SitePlanTest, PathsReadBackAsWrittenAndShareTheirPrefixes) {
  v1::SitePlan plan;
  SitePlanWriter writer(&plan);
  for (int f = 0; f < 6; ++f) writer.Facility(absl::StrCat("f", f));
  std::mt19937 random(23);
  std::vector<std::pair<std::vector<uint32_t>, uint64_t>> written;
  std::set<std::vector<uint32_t>> prefixes;
  for (int i = 0; i < 400; ++i) {
    std::vector<uint32_t> facilities(random() % 7);  // may be empty; facilities may repeat
    for (uint32_t& facility : facilities) facility = static_cast<uint32_t>(random() % 3 + (random() % 2) * 3);
    const uint64_t latency_us = random() % 3;
    for (size_t n = 1; n <= facilities.size(); ++n) prefixes.emplace(facilities.begin(), facilities.begin() + n);
    const uint32_t path = writer.Path(facilities, latency_us);
    ASSERT_LT(path, static_cast<uint32_t>(PathCount(plan)));
    written.emplace_back(std::move(facilities), latency_us);
    EXPECT_THAT(PathFacilities(plan, path), ElementsAreArray(written.back().first));
    EXPECT_EQ(PathLatencyUs(plan, path), latency_us);
  }
  ASSERT_TRUE(ValidateIndices(plan).ok()) << ValidateIndices(plan);
  EXPECT_EQ(plan.path_node_parents_size(), static_cast<int>(prefixes.size()));
  EXPECT_EQ(PathCount(plan), static_cast<int>(std::set(written.begin(), written.end()).size()));
  // A writer on the plan finds what it holds, and adds nothing for it.
  SitePlanWriter again(&plan);
  for (const auto& [facilities, latency_us] : written) {
    EXPECT_THAT(PathFacilities(plan, again.Path(facilities, latency_us)), ElementsAreArray(facilities));
  }
  EXPECT_EQ(plan.path_node_parents_size(), static_cast<int>(prefixes.size()));
  EXPECT_EQ(PathCount(plan), static_cast<int>(std::set(written.begin(), written.end()).size()));
}

// A plan stored before the paths were a tree of prefixes parses with none
// (plan.proto's fields 11, then 13 to 15, are unknown to it): its routes keep
// their next hops and backups, on one empty path.
TEST(SitePlanTest, APlanOfAnOldPathFormatKeepsItsRoutesWithoutPaths) {
  v1::SitePlan plan = IadPlan();
  EXPECT_FALSE(DetachLegacyPaths(plan));  // a plan of this form is left as it is
  plan.clear_path_node_parents();
  plan.clear_path_node_facilities();
  plan.clear_path_nodes();
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
  // The path tree: each node an earlier node's path and one facility; each path a node and a latency.
  EXPECT_THAT(refused([](v1::SitePlan& plan) { plan.set_path_node_facilities(2, 5); }),
              HasSubstr("path node 3: facility index 5 is out of range (the plan has 5)"));
  EXPECT_THAT(refused([](v1::SitePlan& plan) { plan.set_path_node_parents(1, 2); }),
              HasSubstr("path node 2: parent 2 is not an earlier node"));
  EXPECT_THAT(refused([](v1::SitePlan& plan) {
                for (int k = 0; k < 5; ++k) {  // below iad>nyc (node 6): node 10 is 6 deep, of 5 facilities
                  plan.add_path_node_parents(static_cast<uint32_t>(plan.path_node_parents_size()));
                  plan.add_path_node_facilities(0);
                }
              }),
              HasSubstr("path node 10: 6 facilities long, more than the plan's 5"));
  EXPECT_THAT(refused([](v1::SitePlan& plan) { plan.add_path_node_parents(0); }),
              HasSubstr("path tree: 7 parents but 6 facilities"));
  EXPECT_THAT(refused([](v1::SitePlan& plan) { plan.set_path_nodes(1, 7); }),
              HasSubstr("path 1: node index 7 is out of range (the plan has 7)"));
  EXPECT_THAT(refused([](v1::SitePlan& plan) { plan.mutable_path_latencies_us()->RemoveLast(); }),
              HasSubstr("path table: 4 paths but 3 latencies"));
  EXPECT_THAT(refused([](v1::SitePlan& plan) { plan.mutable_ports(0)->clear_link_id(); }),
              HasSubstr("port 0: no link id"));
}

}  // namespace
}  // namespace geodesic::site_plan
