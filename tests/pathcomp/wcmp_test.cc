#include "pathcomp/solver/wcmp.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "pathcomp/solver/mcf_problem.h"
#include "pathcomp/solver/mcf_solver.h"
#include "pathcomp/solver/path_solver.h"
#include "pathcomp/solver/shortest_paths.h"
#include "site_plan/site_plan_reader.h"
#include "tests/pathcomp/link_testing.h"
#include "tests/pathcomp/mcf_testing.h"

namespace geodesic::pathcomp {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr double kTolerance = 1e-9;

// Facilities a..e with one prefix each (10.<n>.0.0/16); fibers both ways,
// up, 100 Gbps; elephant flows between facilities; allocations by hand.
class WcmpTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* id : {"a", "b", "c", "d", "e"}) {
      v1::Facility facility;
      facility.set_id(id);
      facility.add_prefixes(Prefix(id));
      model_.facilities.push_back(facility);
    }
  }

  static std::string Prefix(const std::string& facility) {
    return absl::StrCat("10.", facility[0] - 'a' + 1, ".0.0/16");
  }

  void Fiber(const std::string& x, const std::string& y, uint64_t latency_us) {
    for (auto [src, dst] : {std::pair{x, y}, std::pair{y, x}}) {
      v1::Link link = testing::UpLink(src + "-" + dst, src, dst, latency_us);
      link.set_capacity_gbps(100);
      link.set_admin_state(v1::ADMIN_STATE_UP);
      model_.links.push_back(link);
    }
  }

  // Elephant flows get demand indices in the order they are added.
  void Elephant(const std::string& src, const std::string& dst, double gbps) {
    v1::Workload workload;
    workload.set_id(absl::StrCat("w", model_.workloads.size()));
    workload.mutable_elephant()->set_src_facility_id(src);
    workload.mutable_elephant()->set_dst_prefix(Prefix(dst));
    workload.mutable_elephant()->set_demand_gbps(gbps);
    model_.workloads.push_back(workload);
  }

  Snapshot Build() { return Snapshot::Build(model_); }

  // Per demand index, paths as link ids with their Gbps; arc loads and
  // carried Gbps follow from them.
  using Paths = std::map<int, std::vector<std::pair<std::vector<std::string>, double>>>;
  static McfAllocation Allocation(const Snapshot& snapshot, const Paths& paths) {
    McfAllocation allocation;
    allocation.paths = McfPaths(snapshot.demands().size());
    allocation.carried_gbps.assign(snapshot.demands().size(), 0);
    allocation.arc_load_gbps.assign(snapshot.link_count(), 0);
    for (const auto& [demand, flows] : paths) {
      for (const auto& [links, gbps] : flows) {
        std::vector<int> arcs;
        for (const auto& id : links) {
          arcs.push_back(snapshot.LinkIndex(id));
          allocation.arc_load_gbps[arcs.back()] += gbps;
        }
        allocation.carried_gbps[demand] += gbps;
        allocation.paths.Add(demand, arcs, gbps);
      }
    }
    return allocation;
  }

  // "link:weight" per next hop of `facility` toward `dst`.
  static std::vector<std::string> Hops(const Snapshot& snapshot, const Wcmp& wcmp, const std::string& facility,
                                       const std::string& dst) {
    std::vector<std::string> hops;
    for (const WeightedNextHop& hop :
         wcmp.route(snapshot.FacilityIndex(facility), snapshot.FacilityIndex(dst)).next_hops) {
      hops.push_back(absl::StrCat(snapshot.link_id(hop.link), ":", hop.weight));
    }
    return hops;
  }

  static double Load(const Snapshot& snapshot, const std::vector<double>& loads, const std::string& link) {
    return loads[snapshot.LinkIndex(link)];
  }

  ModelView model_;
};

TEST_F(WcmpTest, SplitsInProportionToTheAllocation) {
  Fiber("a", "b", 100);
  Fiber("b", "c", 100);
  Fiber("a", "c", 300);
  Elephant("a", "c", 10);
  const Snapshot snapshot = Build();
  const McfAllocation allocation = Allocation(snapshot, {{0, {{{"a-c"}, 7}, {{"a-b", "b-c"}, 3}}}});

  absl::StatusOr<Wcmp> wcmp = BuildWcmp(snapshot, allocation);
  ASSERT_TRUE(wcmp.ok()) << wcmp.status();
  EXPECT_THAT(Hops(snapshot, *wcmp, "a", "c"), ElementsAre("a-b:300", "a-c:700"));
  EXPECT_TRUE(wcmp->route(snapshot.FacilityIndex("a"), snapshot.FacilityIndex("c")).follows_allocation);
  EXPECT_THAT(Hops(snapshot, *wcmp, "b", "c"), ElementsAre("b-c:1000"));
  EXPECT_EQ(wcmp->cancelled_cycles, 0);

  const ForwardingCheck check = CheckWcmpForwarding(snapshot, *wcmp, allocation);
  EXPECT_TRUE(check.ok);
  EXPECT_EQ(check.loop, "");
  EXPECT_NEAR(Load(snapshot, check.arc_load_gbps, "a-c"), 7, kTolerance);
  EXPECT_NEAR(Load(snapshot, check.arc_load_gbps, "a-b"), 3, kTolerance);
  EXPECT_NEAR(Load(snapshot, check.arc_load_gbps, "b-c"), 3, kTolerance);
  EXPECT_NEAR(check.max_abs_diff_gbps, 0, kTolerance);
}

// Toward c: a sends 5 via b, b sends 4 via a. Summed per destination that is
// a cycle a -> b -> a of 4 Gbps, which no router could forward.
TEST_F(WcmpTest, CancelsACycleInTheFlowTowardADestination) {
  Fiber("a", "b", 100);
  Fiber("b", "c", 100);
  Fiber("a", "c", 100);
  Elephant("a", "c", 5);
  Elephant("b", "c", 4);
  const Snapshot snapshot = Build();
  const McfAllocation allocation =
      Allocation(snapshot, {{0, {{{"a-b", "b-c"}, 5}}}, {1, {{{"b-a", "a-c"}, 4}}}});

  absl::StatusOr<Wcmp> wcmp = BuildWcmp(snapshot, allocation);
  ASSERT_TRUE(wcmp.ok()) << wcmp.status();
  EXPECT_EQ(wcmp->cancelled_cycles, 1);
  EXPECT_NEAR(wcmp->cancelled_gbps, 8, kTolerance);  // 4 off a-b and 4 off b-a
  EXPECT_NEAR(Load(snapshot, wcmp->arc_load_gbps, "a-b"), 1, kTolerance);
  EXPECT_NEAR(Load(snapshot, wcmp->arc_load_gbps, "b-a"), 0, kTolerance);
  EXPECT_THAT(Hops(snapshot, *wcmp, "a", "c"), ElementsAre("a-b:200", "a-c:800"));
  EXPECT_THAT(Hops(snapshot, *wcmp, "b", "c"), ElementsAre("b-c:1000"));

  const ForwardingCheck check = CheckWcmpForwarding(snapshot, *wcmp, allocation);
  EXPECT_TRUE(check.ok) << check.loop;
  EXPECT_NEAR(Load(snapshot, check.arc_load_gbps, "a-b"), 1, kTolerance);
  EXPECT_NEAR(Load(snapshot, check.arc_load_gbps, "a-c"), 4, kTolerance);
  EXPECT_NEAR(Load(snapshot, check.arc_load_gbps, "b-c"), 5, kTolerance);
  EXPECT_NEAR(Load(snapshot, check.arc_load_gbps, "b-a"), 0, kTolerance);
  for (int link = 0; link < snapshot.link_count(); ++link) {
    EXPECT_LE(check.arc_load_gbps[link], allocation.arc_load_gbps[link] + kTolerance) << snapshot.link_id(link);
  }
}

// A cycle through three facilities, not via the destination's neighbor.
TEST_F(WcmpTest, CancelsALongerCycleAndKeepsDelivery) {
  Fiber("a", "b", 100);
  Fiber("b", "d", 100);
  Fiber("d", "a", 100);
  Fiber("d", "c", 100);
  Elephant("a", "c", 6);
  Elephant("b", "c", 2);
  const Snapshot snapshot = Build();
  // a goes a -> b -> d -> c; b goes b -> d -> a -> d -> c, a walk through d
  // twice: toward c, d -> a -> d is a cycle.
  const McfAllocation allocation =
      Allocation(snapshot, {{0, {{{"a-b", "b-d", "d-c"}, 6}}}, {1, {{{"b-d", "d-a", "a-d", "d-c"}, 2}}}});

  absl::StatusOr<Wcmp> wcmp = BuildWcmp(snapshot, allocation);
  ASSERT_TRUE(wcmp.ok()) << wcmp.status();
  // The search meets a -> b -> d -> a first (2 Gbps): what is left is
  // a -> b 4, a -> d 2, b -> d 6, d -> c 8.
  EXPECT_EQ(wcmp->cancelled_cycles, 1);
  EXPECT_NEAR(wcmp->cancelled_gbps, 6, kTolerance);
  EXPECT_NEAR(Load(snapshot, wcmp->arc_load_gbps, "a-b"), 4, kTolerance);
  EXPECT_NEAR(Load(snapshot, wcmp->arc_load_gbps, "a-d"), 2, kTolerance);
  EXPECT_NEAR(Load(snapshot, wcmp->arc_load_gbps, "b-d"), 6, kTolerance);
  EXPECT_NEAR(Load(snapshot, wcmp->arc_load_gbps, "d-a"), 0, kTolerance);
  EXPECT_NEAR(Load(snapshot, wcmp->arc_load_gbps, "d-c"), 8, kTolerance);
  EXPECT_THAT(Hops(snapshot, *wcmp, "a", "c"), ElementsAre("a-b:667", "a-d:333"));
  const ForwardingCheck check = CheckWcmpForwarding(snapshot, *wcmp, allocation);
  EXPECT_TRUE(check.ok) << check.loop;
  EXPECT_NEAR(check.undelivered_gbps, 0, kTolerance);
  EXPECT_NEAR(Load(snapshot, check.arc_load_gbps, "d-c"), 8, kTolerance);  // all of it arrives
  EXPECT_LE(check.max_abs_diff_gbps, 6 * 2.0 / 1000);  // a's 6 Gbps split 667:333 for 4:2
}

// e carries nothing toward c; its lowest-latency next hop leads into the
// allocation's DAG at a, whose weights then take it to c.
TEST_F(WcmpTest, FacilitiesWithoutFlowUseLowestLatencyNextHops) {
  Fiber("a", "b", 100);
  Fiber("b", "c", 100);
  Fiber("a", "c", 300);
  Fiber("e", "a", 10);
  Fiber("e", "d", 500);
  Fiber("d", "c", 500);
  Elephant("a", "c", 10);
  const Snapshot snapshot = Build();
  const McfAllocation allocation = Allocation(snapshot, {{0, {{{"a-c"}, 5}, {{"a-b", "b-c"}, 5}}}});

  absl::StatusOr<Wcmp> wcmp = BuildWcmp(snapshot, allocation);
  ASSERT_TRUE(wcmp.ok()) << wcmp.status();
  const int e = snapshot.FacilityIndex("e"), c = snapshot.FacilityIndex("c");
  EXPECT_FALSE(wcmp->route(e, c).follows_allocation);
  EXPECT_THAT(Hops(snapshot, *wcmp, "e", "c"), ElementsAre("e-a:1"));
  EXPECT_THAT(Hops(snapshot, *wcmp, "d", "c"), ElementsAre("d-c:1"));
  // Every facility routes to every other; a facility has no route to itself.
  for (int v = 0; v < snapshot.facility_count(); ++v) {
    for (int dst = 0; dst < snapshot.facility_count(); ++dst) {
      EXPECT_EQ(wcmp->route(v, dst).next_hops.empty(), v == dst)
          << snapshot.facility_id(v) << " -> " << snapshot.facility_id(dst);
    }
  }
  const ForwardingCheck check = CheckWcmpForwarding(snapshot, *wcmp, allocation);
  EXPECT_TRUE(check.ok) << check.loop;
}

TEST_F(WcmpTest, RoundsWeightsWithinTheStatedBound) {
  Fiber("a", "b", 100);
  Fiber("b", "c", 100);
  Fiber("a", "c", 100);
  Fiber("a", "d", 100);
  Fiber("d", "c", 100);
  Elephant("a", "c", 30);
  const Snapshot snapshot = Build();
  // Shares 1/3, 2/3 - 1e-4, 1e-4 at resolution 10: 3, 7, and 1 for the sliver.
  const McfAllocation allocation =
      Allocation(snapshot, {{0, {{{"a-c"}, 10}, {{"a-b", "b-c"}, 20 - 0.003}, {{"a-d", "d-c"}, 0.003}}}});

  absl::StatusOr<Wcmp> wcmp = BuildWcmp(snapshot, allocation, WcmpConfig{.weight_resolution = 10});
  ASSERT_TRUE(wcmp.ok()) << wcmp.status();
  EXPECT_THAT(Hops(snapshot, *wcmp, "a", "c"), ElementsAre("a-b:7", "a-c:3", "a-d:1"));

  const ForwardingCheck check = CheckWcmpForwarding(snapshot, *wcmp, allocation);
  EXPECT_TRUE(check.ok) << check.loop;
  // Forwarding puts 30 * 3/11 on a-c, not 10: rounding, and bounded.
  EXPECT_NEAR(Load(snapshot, check.arc_load_gbps, "a-c"), 30.0 * 3 / 11, kTolerance);
  EXPECT_GT(check.max_abs_diff_gbps, 1);
  EXPECT_LE(check.max_excess_over_bound_gbps, check.tolerance_gbps);
  // The bound at a: 30 * sum |r - s|, at most 30 * 2 * 3 / 10.
  const double bound = wcmp->rounding_bound_gbps[snapshot.LinkIndex("a-c")];
  EXPECT_GE(bound, check.max_abs_diff_gbps);
  EXPECT_LE(bound, 30.0 * 2 * 3 / 10);
  EXPECT_NEAR(wcmp->rounding_bound_gbps[snapshot.LinkIndex("b-c")], bound, kTolerance);  // downstream of a

  // At the default resolution the same split is within the bound 2 * 3 / 1000 of 30 Gbps.
  absl::StatusOr<Wcmp> fine = BuildWcmp(snapshot, allocation);
  ASSERT_TRUE(fine.ok());
  const ForwardingCheck fine_check = CheckWcmpForwarding(snapshot, *fine, allocation);
  EXPECT_TRUE(fine_check.ok);
  EXPECT_LT(fine_check.max_abs_diff_gbps, 30.0 * 2 * 3 / 1000);
}

TEST_F(WcmpTest, TheCheckFindsALoop) {
  Fiber("a", "b", 100);
  Fiber("b", "c", 100);
  Elephant("a", "c", 1);
  const Snapshot snapshot = Build();
  const McfAllocation allocation = Allocation(snapshot, {{0, {{{"a-b", "b-c"}, 1}}}});
  absl::StatusOr<Wcmp> wcmp = BuildWcmp(snapshot, allocation);
  ASSERT_TRUE(wcmp.ok()) << wcmp.status();
  ASSERT_TRUE(CheckWcmpForwarding(snapshot, *wcmp, allocation).ok);

  // b sends back to a instead of on to c.
  wcmp->routes[snapshot.FacilityIndex("c")][snapshot.FacilityIndex("b")].next_hops = {
      {snapshot.LinkIndex("b-a"), 1}};
  const ForwardingCheck check = CheckWcmpForwarding(snapshot, *wcmp, allocation);
  EXPECT_FALSE(check.ok);
  EXPECT_THAT(check.loop, HasSubstr("toward c: a -> b -> a"));
  EXPECT_NEAR(check.undelivered_gbps, 1, kTolerance);
}

TEST_F(WcmpTest, TheCheckFindsLoadOffTheAllocation) {
  Fiber("a", "b", 100);
  Fiber("b", "c", 100);
  Fiber("a", "c", 100);
  Elephant("a", "c", 10);
  const Snapshot snapshot = Build();
  const McfAllocation allocation = Allocation(snapshot, {{0, {{{"a-c"}, 5}, {{"a-b", "b-c"}, 5}}}});
  absl::StatusOr<Wcmp> wcmp = BuildWcmp(snapshot, allocation);
  ASSERT_TRUE(wcmp.ok()) << wcmp.status();
  for (WeightedNextHop& hop : wcmp->routes[snapshot.FacilityIndex("c")][snapshot.FacilityIndex("a")].next_hops) {
    if (snapshot.link_id(hop.link) == "a-c") hop.weight = 3 * hop.weight;
  }
  const ForwardingCheck check = CheckWcmpForwarding(snapshot, *wcmp, allocation);
  EXPECT_FALSE(check.ok);
  EXPECT_EQ(check.loop, "");
  EXPECT_NEAR(check.max_abs_diff_gbps, 2.5, kTolerance);
  EXPECT_GT(check.max_excess_over_bound_gbps, 2);
}

TEST_F(WcmpTest, RejectsAnAllocationThatDoesNotFitTheSnapshot) {
  Fiber("a", "b", 100);
  Fiber("b", "c", 100);
  Elephant("a", "c", 1);
  const Snapshot snapshot = Build();
  // Not a walk from a to c.
  McfAllocation allocation = Allocation(snapshot, {{0, {{{"b-c"}, 1}}}});
  EXPECT_EQ(BuildWcmp(snapshot, allocation).status().code(), absl::StatusCode::kInvalidArgument);
  allocation = Allocation(snapshot, {{0, {{{"a-b", "b-c"}, 1}}}});
  allocation.paths = McfPaths(snapshot.demands().size() - 1);
  EXPECT_EQ(BuildWcmp(snapshot, allocation).status().code(), absl::StatusCode::kInvalidArgument);
  allocation = Allocation(snapshot, {{0, {{{"a-b", "b-c"}, 1}}}});
  EXPECT_EQ(BuildWcmp(snapshot, allocation, WcmpConfig{.weight_resolution = 0}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(WcmpTest, PathSolverInstallsTheWeightsAndKeepsBackups) {
  Fiber("a", "b", 100);
  Fiber("b", "c", 100);
  Fiber("a", "c", 300);
  Elephant("a", "c", 10);
  const Snapshot snapshot = Build();
  const McfAllocation allocation = Allocation(snapshot, {{0, {{{"a-c"}, 3}, {{"a-b", "b-c"}, 7}}}});
  absl::StatusOr<Wcmp> wcmp = BuildWcmp(snapshot, allocation);
  ASSERT_TRUE(wcmp.ok()) << wcmp.status();

  auto route_to = [](const v1::Plan& plan, const std::string& site, const std::string& dst) {
    for (const auto& site_plan : plan.sites()) {
      if (site_plan.facility_id() != site) continue;
      if (const v1::Route* route = site_plan::FindRouteTo(site_plan, dst)) return site_plan::Expand(site_plan, *route);
    }
    return site_plan::ExpandedRoute();
  };
  auto hops = [](const site_plan::ExpandedRoute& route) {
    std::vector<std::string> out;
    for (const auto& hop : route.primary.next_hops()) out.push_back(absl::StrCat(hop.link_id(), ":", hop.weight()));
    return out;
  };
  auto protects = [](const site_plan::ExpandedRoute& route) {
    std::vector<std::string> out;
    for (const auto& backup : route.backups) out.push_back(backup.protects.id());
    return out;
  };

  const v1::Plan ecmp = PathSolver().Solve(snapshot, PlanStamp{});
  const v1::Plan weighted = PathSolver().Solve(snapshot, PlanStamp{}, &*wcmp);
  const site_plan::ExpandedRoute before = route_to(ecmp, "a", "c");
  const site_plan::ExpandedRoute after = route_to(weighted, "a", "c");
  EXPECT_THAT(hops(before), ElementsAre("a-b:1"));
  EXPECT_THAT(hops(after), ElementsAre("a-b:700", "a-c:300"));
  EXPECT_THAT(after.primary.path_facility_ids(), ElementsAre("a", "b", "c"));  // the heavier way
  EXPECT_EQ(after.primary.path_latency_us(), 200u);
  // Each next-hop link is protected, and the transit facility b.
  EXPECT_THAT(protects(after), ElementsAre("a-b", "a-c", "b"));
  for (const auto& backup : after.backups) {
    if (backup.protects.id() == "a-b" || backup.protects.id() == "b") {
      EXPECT_THAT(backup.route.path_facility_ids(), ElementsAre("a", "c"));
    }
  }
  // Without flow toward a, c still routes to a as without an allocation.
  EXPECT_EQ(hops(route_to(weighted, "c", "a")), hops(route_to(ecmp, "c", "a")));
}

// The REPETITA networks: the MCF solver's min-max-utilization allocation,
// forwarded over its WCMP weights, loads every link as allocated (within the
// rounding bound), with no loop, and every facility routes to every other.
class WcmpRepetitaTest : public ::testing::TestWithParam<std::string> {};

TEST_P(WcmpRepetitaTest, ForwardingMatchesTheAllocation) {
  absl::StatusOr<Snapshot> snapshot = testing::LoadRepetitaSnapshot(GetParam());
  ASSERT_TRUE(snapshot.ok()) << snapshot.status();
  const McfProblem problem = McfProblemFromSnapshot(*snapshot);
  absl::StatusOr<McfAllocation> allocation = McfSolver().Solve(problem);
  ASSERT_TRUE(allocation.ok()) << allocation.status();
  ASSERT_EQ(testing::FlowProblem(problem, *allocation), "");

  absl::StatusOr<Wcmp> wcmp = BuildWcmp(*snapshot, *allocation);
  ASSERT_TRUE(wcmp.ok()) << wcmp.status();
  const ForwardingCheck check = CheckWcmpForwarding(*snapshot, *wcmp, *allocation);
  EXPECT_EQ(check.loop, "");
  EXPECT_LE(check.undelivered_gbps, check.tolerance_gbps);
  EXPECT_LE(check.max_excess_over_bound_gbps, check.tolerance_gbps)
      << "worst link " << snapshot->link_id(check.worst_link);
  EXPECT_TRUE(check.ok);

  double largest_bound = 0, largest_load = 0;
  for (int link = 0; link < snapshot->link_count(); ++link) {
    // Cycle cancelling only ever lowers a load.
    EXPECT_LE(wcmp->arc_load_gbps[link], allocation->arc_load_gbps[link] + check.tolerance_gbps);
    largest_bound = std::max(largest_bound, wcmp->rounding_bound_gbps[link]);
    largest_load = std::max(largest_load, allocation->arc_load_gbps[link]);
  }
  // Forwarding moves at most a small share of the largest load (a weak
  // check: the bound above is the real one).
  EXPECT_LT(check.max_abs_diff_gbps, 0.05 * largest_load);
  EXPECT_LT(check.max_utilization, allocation->max_utilization * 1.05);

  // Every facility has next hops toward every other it can reach.
  for (int v = 0; v < snapshot->facility_count(); ++v) {
    const ShortestPaths paths = ShortestPaths::Run(*snapshot, v, Exclusion{});
    for (int dst = 0; dst < snapshot->facility_count(); ++dst) {
      if (dst == v) continue;
      const WcmpRoute& route = wcmp->route(v, dst);
      EXPECT_EQ(route.next_hops.empty(), paths.distance_us[dst] == kUnreachable)
          << snapshot->facility_id(v) << " -> " << snapshot->facility_id(dst);
      for (const WeightedNextHop& hop : route.next_hops) EXPECT_GE(hop.weight, 1u);
    }
  }
  RecordProperty("cancelled_cycles", wcmp->cancelled_cycles);
  std::printf("%s: max |forwarded - allocated| %.4g Gbps (rel %.3g), largest bound %.4g Gbps, "
              "utilization %.4f forwarded vs %.4f allocated, %d cycles cancelled (%.4g Gbps)\n",
              GetParam().c_str(), check.max_abs_diff_gbps, check.max_rel_diff, largest_bound,
              check.max_utilization, allocation->max_utilization, wcmp->cancelled_cycles, wcmp->cancelled_gbps);
}

INSTANTIATE_TEST_SUITE_P(Networks, WcmpRepetitaTest,
                         ::testing::Values("Abilene", "Geant2009", "AttMpls", "Esnet", "Deltacom", "Cogentco"));

}  // namespace
}  // namespace geodesic::pathcomp
