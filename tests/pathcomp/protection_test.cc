// Protected classes in whole plans (BuildPlan, protection.h): the failures a
// kind names, a plan held failure-safe checked here fiber by fiber with the
// routers' own repair, and a plan no allocation can protect published
// unprotected with its reason.
#include "pathcomp/solver/protection.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "pathcomp/solver/forwarded_loads.h"
#include "pathcomp/solver/plan_builder.h"
#include "pathcomp/solver/snapshot.h"
#include "tests/pathcomp/mcf_testing.h"
#include "topology/synthetic_wan.h"

namespace geodesic::pathcomp {
namespace {

// A generated WAN, every link up, its elephant demands times `scale`.
Snapshot WanSnapshot(double scale) {
  topology::SyntheticWanOptions options;
  options.seed = 3;
  options.facilities = 24;
  options.elephant_flows = 200;
  auto wan = topology::GenerateSyntheticWan(options);
  EXPECT_TRUE(wan.ok()) << wan.status();
  for (auto& workload : wan->workloads) {
    if (workload.has_elephant()) {
      workload.mutable_elephant()->set_demand_gbps(workload.elephant().demand_gbps() * scale);
    }
  }
  return testing::SnapshotAllUp(*wan);
}

TEST(ProtectionTest, FailuresOfEachKind) {
  const Snapshot snapshot = WanSnapshot(1);
  // Fibers: every link in exactly one, with its reverse.
  std::vector<int> seen(snapshot.link_count(), 0);
  for (const ProtectionFailure& fiber : ProtectionFailures(snapshot, ProtectionKind::kLinks)) {
    ASSERT_FALSE(fiber.links.empty());
    ASSERT_LE(fiber.links.size(), 2u) << fiber.name;
    for (int link : fiber.links) ++seen[link];
    if (fiber.links.size() == 2) {
      EXPECT_EQ(snapshot.link_src(fiber.links[0]), snapshot.link_dst(fiber.links[1])) << fiber.name;
      EXPECT_EQ(snapshot.link_dst(fiber.links[0]), snapshot.link_src(fiber.links[1])) << fiber.name;
    }
    EXPECT_EQ(fiber.facility, -1);
  }
  for (int link = 0; link < snapshot.link_count(); ++link) EXPECT_EQ(seen[link], 1) << snapshot.link_id(link);
  // Facilities: every link touching the facility, both ways.
  const auto facilities = ProtectionFailures(snapshot, ProtectionKind::kFacilities);
  EXPECT_EQ(static_cast<int>(facilities.size()), snapshot.facility_count());
  for (const ProtectionFailure& failure : facilities) {
    ASSERT_GE(failure.facility, 0);
    EXPECT_EQ(failure.name, "facility " + snapshot.facility_id(failure.facility));
    for (int link = 0; link < snapshot.link_count(); ++link) {
      const bool touches = snapshot.link_src(link) == failure.facility || snapshot.link_dst(link) == failure.facility;
      EXPECT_EQ(touches, std::binary_search(failure.links.begin(), failure.links.end(), link)) << failure.name;
    }
  }
  EXPECT_TRUE(ProtectionFailures(snapshot, ProtectionKind::kNone).empty());
}

// The worst a fiber cut does to the plan's links, as the routers forward
// the class's demands (and those before it) on their backups.
double WorstAfterACut(const Snapshot& snapshot, const v1::Plan& plan, uint32_t priority) {
  std::set<std::string> prefixes;
  std::vector<FlowDemand> flows;
  for (const Demand& demand : snapshot.demands()) {
    if (demand.priority > priority || snapshot.facility_prefixes(demand.dst).empty()) continue;
    const std::string& prefix = snapshot.facility_prefixes(demand.dst)[0];
    prefixes.insert(prefix);
    flows.push_back({.src_facility = snapshot.facility_id(demand.src), .dst_prefix = prefix, .gbps = demand.gbps});
  }
  const ForwardingPlan forwarding = ForwardingPlan::Of(plan, prefixes);
  double worst = 0;
  for (const ProtectionFailure& fiber : ProtectionFailures(snapshot, ProtectionKind::kLinks)) {
    std::set<std::string> down;
    for (int link : fiber.links) down.insert(snapshot.link_id(link));
    for (const auto& [link, gbps] : Forward(forwarding, flows, down).link_gbps) {
      worst = std::max(worst, gbps / snapshot.link_capacity_gbps(snapshot.LinkIndex(link)));
    }
  }
  return worst;
}

McfClassPolicies ProtectedLatency() {
  McfClassPolicies policies;
  policies.default_policy.objective = McfObjective::kMinLatency;
  policies.default_policy.protection = ProtectionKind::kLinks;
  return policies;
}

// Each load: a plan either failure-safe (and then no cut overloads a link
// when checked here) or published unprotected with the failure that makes
// protection impossible; at a light load it is safe, at a crushing one (an
// optimum above 1 before any cut) not.
TEST(ProtectionTest, PlansAreFailureSafeOrSayWhyNot) {
  int safe = 0, unsafe = 0;
  for (const double scale : {0.05, 0.5, 1.0, 20.0, 40.0}) {
    const Snapshot snapshot = WanSnapshot(scale);
    ElephantAllocator allocator(0, ProtectedLatency());
    const BuiltPlan built = BuildPlan(snapshot, PlanStamp{}, allocator, nullptr);
    ASSERT_TRUE(built.elephants.has_value()) << scale;
    for (const v1::ElephantClass& cls : built.plan.elephants().classes()) {
      EXPECT_EQ(cls.protection(), "links");
      EXPECT_GT(cls.failures_checked(), 0u);
      const double worst = WorstAfterACut(snapshot, built.plan, cls.priority());
      if (cls.failure_safe()) {
        ++safe;
        EXPECT_LE(worst, 1 + 1e-6) << "scale " << scale << ", class " << cls.priority();
        EXPECT_TRUE(cls.protection_problem().empty());
      } else {
        ++unsafe;
        EXPECT_GT(worst, 1) << "scale " << scale << ", class " << cls.priority();
        EXPECT_FALSE(cls.protection_problem().empty());
        EXPECT_TRUE(std::any_of(built.problems.begin(), built.problems.end(), [](const std::string& problem) {
          return problem.find("not failure-safe") != std::string::npos;
        }));
      }
      EXPECT_NEAR(cls.max_utilization_after_failure(), worst, 1e-6 + 1e-6 * worst) << scale;
      EXPECT_GT(cls.unprotected_max_utilization(), 0);
    }
    if (scale == 0.05) {
      EXPECT_EQ(unsafe, 0) << "a light load is protected";
    }
  }
  EXPECT_GT(safe, 0);
  EXPECT_GT(unsafe, 0) << "a crushing load cannot be protected";
}

// a-b-d and a-c-d, 100 Gbps fibers but a-c at `a_c_gbps`; 50 Gbps from a to d.
Snapshot Diamond(double a_c_gbps) {
  ModelView model;
  for (const char* id : {"a", "b", "c", "d"}) {
    v1::Facility& facility = model.facilities.emplace_back();
    facility.set_id(id);
    facility.add_prefixes(absl::StrCat("10.", id[0] - 'a' + 1, ".0.0/16"));
  }
  for (const auto& [x, y] : {std::pair{"a", "b"}, {"b", "d"}, {"a", "c"}, {"c", "d"}}) {
    for (const auto& [src, dst] : {std::pair{x, y}, std::pair{y, x}}) {
      v1::Link& link = model.links.emplace_back();
      link.set_id(absl::StrCat(src, "-", dst));
      link.set_src_facility_id(src);
      link.set_dst_facility_id(dst);
      link.set_src_node_id(absl::StrCat(src, "1"));
      link.set_dst_node_id(absl::StrCat(dst, "1"));
      link.set_latency_us(1000);
      const bool thin = (link.id() == "a-c" || link.id() == "c-a");
      link.set_capacity_gbps(thin ? a_c_gbps : 100);
      link.set_admin_state(v1::ADMIN_STATE_UP);
      link.mutable_health()->set_state(v1::OPER_STATE_UP);
    }
  }
  v1::Workload& flow = model.workloads.emplace_back();
  flow.set_id("a-to-d");
  flow.mutable_elephant()->set_src_facility_id("a");
  flow.mutable_elephant()->set_dst_prefix("10.4.0.0/16");
  flow.mutable_elephant()->set_demand_gbps(50);
  return Snapshot::Build(model);
}

// A failure that leaves a facility's remaining links too little room for
// its own traffic makes protection impossible for any allocation and any
// repair: the plan says so at once, naming the facility, with no rounds.
TEST(ProtectionTest, AFacilityAFailureLeavesTooLittleRoomIsNamedWithoutRounds) {
  const Snapshot thin = Diamond(10);
  const ProtectionChecker checker(thin, ProtectedLatency());
  const std::vector<FacilityCut> cuts = checker.TightestFacilityCuts();
  ASSERT_EQ(cuts.size(), 1u);
  ASSERT_TRUE(cuts[0].shortfall());
  EXPECT_EQ(checker.failures()[cuts[0].failure].name, "link a-b");
  EXPECT_EQ(thin.facility_id(cuts[0].facility), "a");
  EXPECT_TRUE(cuts[0].sending);
  EXPECT_DOUBLE_EQ(cuts[0].gbps, 50);
  EXPECT_DOUBLE_EQ(cuts[0].room_gbps, 10);
  ElephantAllocator allocator(0, ProtectedLatency());
  const BuiltPlan built = BuildPlan(thin, PlanStamp{}, allocator, nullptr);
  ASSERT_EQ(built.plan.elephants().classes_size(), 1);
  const v1::ElephantClass& cls = built.plan.elephants().classes(0);
  EXPECT_FALSE(cls.failure_safe());
  EXPECT_EQ(cls.failure_limits(), 0u) << "no round is tried";
  EXPECT_NE(cls.protection_problem().find("after link a-b, facility a sends 50 Gbps"), std::string::npos)
      << cls.protection_problem();
  EXPECT_GT(WorstAfterACut(thin, built.plan, 0), 1);

  // With room on a-c the cut constrains nothing and the plan is protected.
  const Snapshot wide = Diamond(100);
  const std::vector<FacilityCut> wide_cuts = ProtectionChecker(wide, ProtectedLatency()).TightestFacilityCuts();
  ASSERT_EQ(wide_cuts.size(), 1u);
  EXPECT_FALSE(wide_cuts[0].shortfall());
  EXPECT_DOUBLE_EQ(wide_cuts[0].gbps / wide_cuts[0].room_gbps, 0.5);
  ElephantAllocator wide_allocator(0, ProtectedLatency());
  const BuiltPlan safe = BuildPlan(wide, PlanStamp{}, wide_allocator, nullptr);
  EXPECT_TRUE(safe.plan.elephants().classes(0).failure_safe()) << safe.plan.elephants().classes(0).protection_problem();
  EXPECT_LE(WorstAfterACut(wide, safe.plan, 0), 1 + 1e-6);
}

// The caller's stop (pathcomp: protection_budget_ms) ends the rounds before
// one or inside its allocation: the plan is then the unprotected one, and
// says protection was stopped, with what still breaks.
TEST(ProtectionTest, TheCallersStopPublishesTheUnprotectedPlanSayingSo) {
  const Snapshot snapshot = WanSnapshot(20.0);
  ElephantAllocator plain_allocator(0, [] {
    McfClassPolicies policies = ProtectedLatency();
    policies.default_policy.protection = ProtectionKind::kNone;
    return policies;
  }());
  const BuiltPlan plain = BuildPlan(snapshot, PlanStamp{}, plain_allocator, nullptr);
  int asked_unlimited = 0;
  ElephantAllocator whole_allocator(0, ProtectedLatency());
  const BuiltPlan whole = BuildPlan(snapshot, PlanStamp{}, whole_allocator, nullptr, nullptr, {}, 1,
                                    [&asked_unlimited] { return ++asked_unlimited < 0; });
  ASSERT_GE(asked_unlimited, 2) << "the premise: protection takes a round, and its allocation asks too";
  // Stopped before the first round, then inside the first round's allocation.
  for (const int allowed : {0, 1}) {
    int asked = 0;
    ElephantAllocator allocator(0, ProtectedLatency());
    const BuiltPlan built = BuildPlan(snapshot, PlanStamp{}, allocator, nullptr, nullptr, {}, 1,
                                      [&asked, allowed] { return ++asked > allowed; });
    if (allowed == 0) {
      EXPECT_EQ(asked, 1) << "no round";
    } else {
      EXPECT_GE(asked, 2) << "asked in the allocation (each protected phase asks)";
    }
    const v1::ElephantClass& cls = built.plan.elephants().classes(0);
    EXPECT_FALSE(cls.failure_safe());
    EXPECT_EQ(cls.failure_limits(), 0u) << "the unprotected allocation";
    EXPECT_DOUBLE_EQ(cls.max_utilization(), plain.plan.elephants().classes(0).max_utilization());
    EXPECT_NE(cls.protection_problem().find("protection stopped by its budget in round 1"), std::string::npos)
        << cls.protection_problem();
    EXPECT_TRUE(std::any_of(built.problems.begin(), built.problems.end(), [](const std::string& problem) {
      return problem.find("not failure-safe") != std::string::npos;
    }));
  }
}

// Without a protected class nothing is checked and the plan is as before.
TEST(ProtectionTest, UnprotectedClassesAreNotChecked) {
  const Snapshot snapshot = WanSnapshot(1);
  McfClassPolicies policies = ProtectedLatency();
  policies.default_policy.protection = ProtectionKind::kNone;
  ElephantAllocator allocator(0, policies);
  const BuiltPlan built = BuildPlan(snapshot, PlanStamp{}, allocator, nullptr);
  for (const v1::ElephantClass& cls : built.plan.elephants().classes()) {
    EXPECT_EQ(cls.protection(), "none");
    EXPECT_EQ(cls.failures_checked(), 0u);
    EXPECT_FALSE(cls.failure_safe());
  }
}

}  // namespace
}  // namespace geodesic::pathcomp
