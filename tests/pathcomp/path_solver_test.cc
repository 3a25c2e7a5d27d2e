#include "pathcomp/solver/path_solver.h"

#include <map>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "pathcomp/solver/elephant_allocator.h"
#include "pathcomp/solver/shortest_paths.h"
#include "pathcomp/solver/wcmp.h"
#include "site_plan/site_plan_reader.h"
#include "site_plan/site_plan_writer.h"
#include "tests/pathcomp/link_testing.h"
#include "topology/synthetic_wan.h"

namespace geodesic::pathcomp {
namespace {

using ::testing::ElementsAre;

// Facilities a..e with one prefix each; links added both ways, up, with a latency.
class PathSolverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* id : {"a", "b", "c", "d", "e"}) {
      v1::Facility facility;
      facility.set_id(id);
      facility.add_prefixes(absl::StrCat("10.", id[0] - 'a' + 1, ".0.0/16"));
      model_.facilities.push_back(facility);
    }
  }

  void Fiber(const std::string& x, const std::string& y, uint64_t latency_us,
             std::vector<std::string> srlgs = {}) {
    for (auto [src, dst] : {std::pair{x, y}, std::pair{y, x}}) {
      v1::Link link = testing::UpLink(src + "-" + dst, src, dst, latency_us);
      link.set_admin_state(v1::ADMIN_STATE_UP);
      for (const auto& srlg : srlgs) link.add_srlgs(srlg);
      model_.links.push_back(link);
    }
  }

  v1::Link& LinkById(const std::string& id) {
    for (auto& link : model_.links) {
      if (link.id() == id) return link;
    }
    ADD_FAILURE() << "no link " << id;
    return model_.links.front();
  }

  v1::Plan Solve() {
    PlanStamp stamp;
    stamp.generation = 7;
    stamp.epoch = 3;
    stamp.replica_id = "pc1";
    return PathSolver().Solve(Snapshot::Build(model_), stamp);
  }

  // The route with its backups resolved; empty when there is none.
  static site_plan::ExpandedRoute RouteTo(const v1::Plan& plan, const std::string& site,
                                          const std::string& destination) {
    for (const auto& site_plan : plan.sites()) {
      if (site_plan.facility_id() != site) continue;
      EXPECT_TRUE(site_plan::ValidateIndices(site_plan).ok());
      if (const v1::Route* route = site_plan::FindRouteTo(site_plan, destination)) {
        return site_plan::Expand(site_plan, *route);
      }
    }
    return {};
  }

  static std::vector<std::string> Hops(const google::protobuf::RepeatedPtrField<v1::NextHop>& hops) {
    std::vector<std::string> ids;
    for (const auto& hop : hops) ids.push_back(hop.link_id());
    return ids;
  }

  ModelView model_;
};

TEST_F(PathSolverTest, ChoosesLowestLatencyPathAndStampsThePlan) {
  Fiber("a", "b", 1000);
  Fiber("b", "c", 1000);
  Fiber("a", "c", 5000);
  Fiber("c", "d", 1000);
  Fiber("d", "e", 1000);
  const v1::Plan plan = Solve();
  EXPECT_EQ(plan.generation(), 7u);
  EXPECT_EQ(plan.epoch(), 3u);
  ASSERT_EQ(plan.sites_size(), 5);
  EXPECT_EQ(plan.sites(0).generation(), 7u);
  const site_plan::ExpandedRoute route = RouteTo(plan, "a", "d");
  EXPECT_EQ(route.primary.prefix(), "10.4.0.0/16");
  EXPECT_THAT(Hops(route.primary.next_hops()), ElementsAre("a-b"));
  EXPECT_THAT(route.primary.path_facility_ids(), ElementsAre("a", "b", "c", "d"));
  EXPECT_EQ(route.primary.path_latency_us(), 3000u);
  EXPECT_TRUE(plan.unreachable().empty());
  EXPECT_EQ(plan.sites(0).routes_size(), 4);  // one prefix per other facility
}

TEST_F(PathSolverTest, UsesMeasuredRttOverInventoryLatency) {
  Fiber("a", "b", 1000);
  Fiber("b", "c", 1000);
  Fiber("a", "c", 2500);
  LinkById("a-b").mutable_health()->set_rtt_us(8000);  // congested: 4 ms one way
  const site_plan::ExpandedRoute route = RouteTo(Solve(), "a", "c");
  EXPECT_THAT(Hops(route.primary.next_hops()), ElementsAre("a-c"));
}

TEST_F(PathSolverTest, EqualCostPathsGiveEveryFirstHop) {
  Fiber("a", "b", 1000);
  Fiber("a", "c", 1000);
  Fiber("b", "d", 1000);
  Fiber("c", "d", 1000);
  const site_plan::ExpandedRoute route = RouteTo(Solve(), "a", "d");
  EXPECT_THAT(Hops(route.primary.next_hops()), ElementsAre("a-b", "a-c"));
  for (const auto& hop : route.primary.next_hops()) EXPECT_EQ(hop.weight(), 1u);
}

TEST_F(PathSolverTest, DownUnknownDrainedLinksAreAvoidedAndDegradedIsLastResort) {
  Fiber("a", "b", 1000);
  Fiber("b", "c", 1000);
  Fiber("a", "c", 5000);
  Fiber("a", "d", 1000);
  Fiber("d", "c", 9000);
  LinkById("a-b").mutable_health()->set_state(v1::OPER_STATE_DOWN);
  EXPECT_THAT(Hops(RouteTo(Solve(), "a", "c").primary.next_hops()), ElementsAre("a-c"));
  LinkById("a-c").mutable_health()->set_state(v1::OPER_STATE_UNKNOWN);
  EXPECT_THAT(Hops(RouteTo(Solve(), "a", "c").primary.next_hops()), ElementsAre("a-d"));
  LinkById("a-c").mutable_health()->set_state(v1::OPER_STATE_DEGRADED);
  EXPECT_THAT(Hops(RouteTo(Solve(), "a", "c").primary.next_hops()), ElementsAre("a-d"));
  v1::Intent drain;
  drain.set_id("drain-d");
  drain.mutable_drain()->mutable_target()->set_facility_id("d");
  model_.intents.push_back(drain);
  // Only the degraded direct link is left.
  EXPECT_THAT(Hops(RouteTo(Solve(), "a", "c").primary.next_hops()), ElementsAre("a-c"));
}

TEST_F(PathSolverTest, BackupsAvoidTheFailedLinkSrlgAndTransitFacility) {
  Fiber("a", "b", 1000, {"conduit-1"});
  Fiber("b", "c", 1000);
  Fiber("a", "d", 1500, {"conduit-1"});
  Fiber("d", "c", 1500);
  Fiber("a", "e", 3000);
  Fiber("e", "c", 3000);
  const site_plan::ExpandedRoute route = RouteTo(Solve(), "a", "c");
  EXPECT_THAT(route.primary.path_facility_ids(), ElementsAre("a", "b", "c"));
  std::map<std::string, std::vector<std::string>> backup_paths;
  for (const auto& backup : route.backups) {
    backup_paths[absl::StrCat(backup.protects.kind(), ":", backup.protects.id())] =
        {backup.route.path_facility_ids().begin(), backup.route.path_facility_ids().end()};
  }
  EXPECT_THAT(backup_paths[absl::StrCat(v1::FAILURE_KIND_LINK, ":a-b")], ElementsAre("a", "d", "c"));
  // a-d shares the conduit with a-b: the SRLG backup must go around both.
  EXPECT_THAT(backup_paths[absl::StrCat(v1::FAILURE_KIND_SRLG, ":conduit-1")],
              ElementsAre("a", "e", "c"));
  EXPECT_THAT(backup_paths[absl::StrCat(v1::FAILURE_KIND_FACILITY, ":b")], ElementsAre("a", "d", "c"));
  EXPECT_EQ(backup_paths.size(), 3u);
}

// b reaches c directly. Around a cut of b-c the shortest way is via a
// (100 + 5000 us), but a itself forwards to c via b: handing it b's traffic
// would loop until the next plan. The backup is d, whose own route to c
// never comes back, although longer (3000 + 3000 us).
TEST_F(PathSolverTest, BackupsOnlyHandTrafficToNeighboursThatDoNotSendItBack) {
  Fiber("b", "c", 1000);
  Fiber("a", "b", 100);
  Fiber("a", "c", 5000);
  Fiber("b", "d", 3000);
  Fiber("d", "c", 3000);
  const v1::Plan plan = Solve();
  EXPECT_THAT(RouteTo(plan, "a", "c").primary.path_facility_ids(), ElementsAre("a", "b", "c"));
  const site_plan::ExpandedRoute route = RouteTo(plan, "b", "c");
  ASSERT_EQ(static_cast<int>(route.backups.size()), 1);
  const site_plan::ExpandedBackup& backup = route.backups[0];
  EXPECT_EQ(backup.protects.id(), "b-c");
  EXPECT_THAT(Hops(backup.route.next_hops()), ElementsAre("b-d"));
  EXPECT_THAT(backup.route.path_facility_ids(), ElementsAre("b", "d", "c"));
  EXPECT_EQ(backup.route.path_latency_us(), 6000u);
}

// When no neighbour is loop-free, the one that sends the least back: a
// splits its traffic to c equally via b and e (half comes back), f three
// ways, one via b (a third comes back), although a is closer.
TEST_F(PathSolverTest, WithoutALoopFreeNeighbourTheBackupSendsTheLeastBack) {
  for (const char* id : {"f", "g", "h"}) {
    v1::Facility facility;
    facility.set_id(id);
    facility.add_prefixes(absl::StrCat("10.", id[0] - 'a' + 1, ".0.0/16"));
    model_.facilities.push_back(facility);
  }
  Fiber("b", "c", 1000);
  Fiber("a", "b", 100);
  Fiber("a", "e", 100);
  Fiber("e", "c", 1000);
  Fiber("b", "f", 200);
  Fiber("f", "g", 200);
  Fiber("g", "c", 1000);
  Fiber("f", "h", 200);
  Fiber("h", "c", 1000);
  const v1::Plan plan = Solve();
  ASSERT_EQ(RouteTo(plan, "a", "c").primary.next_hops_size(), 2);
  ASSERT_EQ(RouteTo(plan, "f", "c").primary.next_hops_size(), 3);
  const site_plan::ExpandedRoute route = RouteTo(plan, "b", "c");
  ASSERT_GE(static_cast<int>(route.backups.size()), 1);
  EXPECT_EQ(route.backups[0].protects.id(), "b-c");
  EXPECT_THAT(Hops(route.backups[0].route.next_hops()), ElementsAre("b-f"));
}

// With an allocation, a backup must also have room for what the failure
// moves: b sends 50 Gbps to c on b-c. Around a cut, d is shorter (2000 us)
// but its links carry 10 Gbps; e is longer (6000 us) with room for it all.
// Without the allocation's loads, the shorter way.
TEST_F(PathSolverTest, BackupsGoWhereTheTrafficTheyTakeOnHasRoom) {
  Fiber("b", "c", 1000);
  Fiber("b", "d", 1000);
  Fiber("d", "c", 1000);
  Fiber("b", "e", 3000);
  Fiber("e", "c", 3000);
  for (v1::Link& link : model_.links) {
    const bool thin = link.id().find('d') != std::string::npos;
    link.set_capacity_gbps(thin ? 10 : 100);
  }
  const Snapshot snapshot = Snapshot::Build(model_);
  const int b = snapshot.FacilityIndex("b"), c = snapshot.FacilityIndex("c");
  const int b_c = snapshot.LinkIndex("b-c");
  Wcmp weights;
  weights.facility_count = snapshot.facility_count();
  weights.link_count = snapshot.link_count();
  weights.weight_resolution = 1000;
  weights.routes.assign(weights.facility_count, std::vector<WcmpRoute>(weights.facility_count));
  weights.routes[c][b] = {.next_hops = {{.link = b_c, .weight = 1000}}, .follows_allocation = true};
  weights.flow_gbps.assign(weights.facility_count, std::vector<double>(weights.link_count, 0));
  weights.flow_gbps[c][b_c] = 50;
  weights.arc_load_gbps.assign(weights.link_count, 0);
  weights.arc_load_gbps[b_c] = 50;
  weights.rounding_bound_gbps.assign(weights.link_count, 0);
  const site_plan::ExpandedRoute with_loads = RouteTo(PathSolver().Solve(snapshot, PlanStamp{}, &weights), "b", "c");
  ASSERT_EQ(static_cast<int>(with_loads.backups.size()), 1);
  EXPECT_EQ(with_loads.backups[0].protects.id(), "b-c");
  EXPECT_THAT(with_loads.backups[0].route.path_facility_ids(), ElementsAre("b", "e", "c"));
  const site_plan::ExpandedRoute without = RouteTo(Solve(), "b", "c");
  ASSERT_EQ(static_cast<int>(without.backups.size()), 1);
  EXPECT_THAT(without.backups[0].route.path_facility_ids(), ElementsAre("b", "d", "c"));
}

// Where every neighbour would send all the traffic back, the backup is still
// the shortest way around the failure (right once the next plan is installed).
TEST_F(PathSolverTest, WithoutALoopFreeNeighbourTheBackupIsTheShortestWayAround) {
  Fiber("b", "c", 1000);
  Fiber("a", "b", 100);
  Fiber("a", "c", 5000);
  const site_plan::ExpandedRoute route = RouteTo(Solve(), "b", "c");
  ASSERT_EQ(static_cast<int>(route.backups.size()), 1);
  EXPECT_THAT(Hops(route.backups[0].route.next_hops()), ElementsAre("b-a"));
  EXPECT_THAT(route.backups[0].route.path_facility_ids(), ElementsAre("b", "a", "c"));
}

TEST_F(PathSolverTest, PartitionedFacilitiesAreReportedUnreachable) {
  Fiber("a", "b", 1000);
  Fiber("c", "d", 1000);
  Fiber("d", "e", 1000);
  const v1::Plan plan = Solve();
  EXPECT_THAT(plan.unreachable(), ::testing::Contains("a->c"));
  EXPECT_THAT(plan.unreachable(), ::testing::Contains("e->b"));
  EXPECT_EQ(plan.unreachable_size(), 12);  // {a,b} x {c,d,e}, both ways
  EXPECT_EQ(RouteTo(plan, "a", "c").primary.prefix(), "");
}

// A generated WAN (topology::GenerateSyntheticWan) as a model view: its
// facilities, links and elephant flows, the links up at their inventory
// latency but every `down_every`-th from `down_at` down.
absl::StatusOr<ModelView> SyntheticWanView(uint32_t seed, uint32_t facilities, uint32_t flows, size_t down_every,
                                           size_t down_at) {
  topology::SyntheticWanOptions options;
  options.seed = seed;
  options.facilities = facilities;
  options.elephant_flows = flows;
  auto wan = topology::GenerateSyntheticWan(options);
  if (!wan.ok()) return wan.status();
  ModelView view;
  view.facilities = wan->facilities;
  view.links = wan->links;
  view.workloads = wan->workloads;
  for (size_t i = 0; i < view.links.size(); ++i) {
    v1::Link& link = view.links[i];
    link.mutable_health()->set_state(i % down_every == down_at ? v1::OPER_STATE_DOWN : v1::OPER_STATE_UP);
    link.mutable_health()->set_rtt_us(2 * link.latency_us());
  }
  return view;
}

// On a generated WAN (SRLG conduits, parallel circuits, a few links down):
// every backup, loop-free neighbour or detour, starts with a usable link the
// failure spares, runs from the site to the destination over links between
// consecutive facilities, never through the failed facility, and is no
// shorter than the shortest way around the failure; a route has no backup
// for a failure only when nothing goes around it. Detours come from repaired
// shortest-path trees, so this holds them to ShortestPaths::Run.
TEST(PathSolverWanTest, EveryBackupGoesAroundItsFailureAndNoneIsShorterThanTheShortestWay) {
  const absl::StatusOr<ModelView> view = SyntheticWanView(3, 60, 0, 37, 5);
  ASSERT_TRUE(view.ok()) << view.status();
  const Snapshot snapshot = Snapshot::Build(*view);
  const v1::Plan plan = PathSolver().Solve(snapshot, PlanStamp{});
  ASSERT_EQ(plan.sites_size(), snapshot.facility_count());
  int backups = 0;
  for (const v1::SitePlan& site : plan.sites()) {
    ASSERT_TRUE(site_plan::ValidateIndices(site).ok());
    const int source = snapshot.FacilityIndex(site.facility_id());
    for (const v1::Route& route : site.routes()) {
      const int dst = snapshot.FacilityIndex(site_plan::DestinationId(site, route));
      for (int b = 0; b < site_plan::BackupCount(route); ++b) {
        const v1::FailureScope& scope = site_plan::BackupFailure(site, route, b);
        Exclusion failure;
        if (scope.kind() == v1::FAILURE_KIND_LINK) failure.link = snapshot.LinkIndex(scope.id());
        if (scope.kind() == v1::FAILURE_KIND_SRLG) failure.srlg = snapshot.SrlgIndex(scope.id());
        if (scope.kind() == v1::FAILURE_KIND_FACILITY) failure.facility = snapshot.FacilityIndex(scope.id());
        const std::string what = absl::StrCat(site.facility_id(), " to ", route.prefix(), " under ", scope.id());
        ASSERT_FALSE(failure.empty()) << what;
        const uint64_t shortest_us = ShortestPaths::Run(snapshot, source, failure).distance_us[dst];
        const v1::ForwardingRoute backup = site_plan::WithBackup(site, route, b);
        if (backup.next_hops_size() == 0) {
          EXPECT_EQ(shortest_us, kUnreachable) << what << ": no backup, but there is a way around";
          continue;
        }
        ++backups;
        ASSERT_EQ(backup.next_hops_size(), 1) << what;
        const int first = snapshot.LinkIndex(backup.next_hops(0).link_id());
        EXPECT_FALSE(failure.Excludes(snapshot, first)) << what << ": the backup's link fails with it";
        ASSERT_GE(backup.path_facility_ids_size(), 2) << what;
        EXPECT_EQ(backup.path_facility_ids(0), site.facility_id()) << what;
        EXPECT_EQ(backup.path_facility_ids(1), snapshot.facility_id(snapshot.link_dst(first))) << what;
        EXPECT_EQ(backup.path_facility_ids(backup.path_facility_ids_size() - 1), snapshot.facility_id(dst)) << what;
        for (int i = 0; i < backup.path_facility_ids_size(); ++i) {
          const int at = snapshot.FacilityIndex(backup.path_facility_ids(i));
          EXPECT_NE(at, failure.facility) << what << ": the backup crosses the failed facility";
          if (i == 0) continue;
          const int before = snapshot.FacilityIndex(backup.path_facility_ids(i - 1));
          bool linked = false;
          for (const int link : snapshot.out_links(before)) linked |= snapshot.link_dst(link) == at;
          EXPECT_TRUE(linked) << what << ": no link " << backup.path_facility_ids(i - 1) << " -> "
                              << backup.path_facility_ids(i);
        }
        EXPECT_GE(backup.path_latency_us(), shortest_us) << what << ": shorter than the shortest way around";
      }
    }
  }
  EXPECT_GT(backups, 10'000);  // the check looked at a real plan
  // Sites shared out to threads: the same plan, byte for byte.
  EXPECT_EQ(PathSolver().Solve(snapshot, PlanStamp{}, nullptr, 3).SerializeAsString(), plan.SerializeAsString());
}

// Sites are solved in batches, destination by destination over a batch,
// and with an allocation each site's backups keep their own account of the
// room they take on the links. Whatever the batch (4 sites with one thread,
// 1 with sixteen), the plan is the one made a site at a time, byte for byte.
TEST(PathSolverWanTest, BatchesOfSitesMakeThePlanOfOneSiteAtATime) {
  absl::StatusOr<ModelView> view = SyntheticWanView(5, 60, 1500, 41, 7);
  ASSERT_TRUE(view.ok()) << view.status();
  // Loaded so that backups compete for the room left on the links (a
  // batch sharing one site's account of it fails this test).
  for (v1::Workload& workload : view->workloads) {
    workload.mutable_elephant()->set_demand_gbps(8 * workload.elephant().demand_gbps());
  }
  const Snapshot snapshot = Snapshot::Build(*view);
  ElephantAllocator allocator(0.1);
  const auto elephants = allocator.Allocate(snapshot, {});
  ASSERT_TRUE(elephants.ok()) << elephants.status();
  const auto weights = BuildWcmp(snapshot, elephants->allocation);
  ASSERT_TRUE(weights.ok()) << weights.status();
  const v1::Plan batched = PathSolver().Solve(snapshot, PlanStamp{}, &*weights, 1);
  const v1::Plan alone = PathSolver().Solve(snapshot, PlanStamp{}, &*weights, 16);
  ASSERT_EQ(batched.sites_size(), snapshot.facility_count());
  EXPECT_TRUE(batched.SerializeAsString() == alone.SerializeAsString()) << "batched sites made another plan";
  // The allocation shaped the plan (its weights, the rooms): not the plan without it.
  EXPECT_FALSE(batched.SerializeAsString() == PathSolver().Solve(snapshot, PlanStamp{}).SerializeAsString());
}

TEST(CountChangedRoutesTest, CountsAddedRemovedAndChanged) {
  v1::SitePlan before, after;
  site_plan::SitePlanWriter before_writer(&before), after_writer(&after);
  auto add = [&](v1::SitePlan& plan, const std::string& prefix, const std::string& link) {
    v1::NextHop hop;
    hop.set_link_id(link);
    hop.set_weight(1);
    (&plan == &before ? before_writer : after_writer).AddRoute(prefix, "d", {hop}, {}, 0);
  };
  add(before, "p1", "x");
  add(before, "p2", "x");
  add(before, "p3", "x");
  add(after, "p1", "x");  // same
  add(after, "p2", "y");  // changed
  add(after, "p4", "x");  // added; p3 removed
  EXPECT_EQ(CountChangedRoutes(before, after), 3u);
  EXPECT_EQ(CountChangedRoutes(after, after), 0u);
}

}  // namespace
}  // namespace geodesic::pathcomp
