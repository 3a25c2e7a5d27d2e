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
