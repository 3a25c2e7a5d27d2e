// The elephant allocator (pathcomp/solver/elephant_allocator.h): chain
// headroom, fabric limits, warm re-solves and the flows that moved.
#include "pathcomp/solver/elephant_allocator.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "tests/pathcomp/link_testing.h"

namespace geodesic::pathcomp {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

// a -> b directly, or a -> c -> b; 100 Gbps each. The chain "ask" calls a
// service in b from a, so its primary uses a-b.
class ElephantAllocatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* id : {"a", "b", "c"}) {
      v1::Facility& facility = view_.facilities.emplace_back();
      facility.set_id(id);
      facility.add_prefixes(absl::StrCat("10.", id[0] - 'a', ".0.0/16"));
    }
    Link("a", "b", 1000);
    Link("a", "c", 1000);
    Link("c", "b", 1000);
    Link("b", "a", 1000);
    v1::Service& service = view_.services.emplace_back();
    service.set_id("model");
    service.add_replica_facility_ids("b");
    v1::Workload& chain = view_.workloads.emplace_back();
    chain.set_id("ask");
    chain.mutable_chain()->set_origin_facility_id("a");
    chain.mutable_chain()->add_service_ids("model");
    chain.mutable_chain()->set_latency_budget_us(100'000);
    v1::Workload& bulk = view_.workloads.emplace_back();
    bulk.set_id("bulk");
    bulk.mutable_elephant()->set_src_facility_id("a");
    bulk.mutable_elephant()->set_dst_prefix("10.1.0.0/16");
    bulk.mutable_elephant()->set_demand_gbps(100);
  }

  void Link(const std::string& src, const std::string& dst, uint64_t latency_us) {
    v1::Link& link = view_.links.emplace_back(testing::UpLink(src + "-" + dst, src, dst, latency_us));
    link.set_capacity_gbps(100);
  }

  absl::StatusOr<ElephantPlan> Allocate(ElephantAllocator& allocator) {
    const Snapshot snapshot = Snapshot::Build(view_);
    return allocator.Allocate(snapshot, ChainPlacer(snapshot).PlanAll().primary);
  }

  ModelView view_;
};

TEST_F(ElephantAllocatorTest, ChainLinksKeepTheirHeadroom) {
  ElephantAllocator none(0.0);
  auto plain = Allocate(none);
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_NEAR(plain->summary.max_utilization(), 0.5, 1e-6);  // 50 / 50

  // Half of a-b kept for the chain: x / 50 = (100 - x) / 100 at x = 100 / 3.
  ElephantAllocator half(0.5);
  auto kept = Allocate(half);
  ASSERT_TRUE(kept.ok()) << kept.status();
  EXPECT_NEAR(kept->summary.max_utilization(), 2.0 / 3, 1e-5);
  for (const auto& load : kept->summary.links()) {
    if (load.link_id() == "a-b") {
      EXPECT_DOUBLE_EQ(load.capacity_gbps(), 50);
      EXPECT_NEAR(load.load_gbps(), 100.0 / 3, 1e-3);
    }
  }
  EXPECT_NEAR(kept->summary.carried_gbps(), 100, 1e-6);
}

TEST_F(ElephantAllocatorTest, NamesTheFlowsThatMovedAndResolvesWarm) {
  ElephantAllocator allocator(0.0);
  auto first = Allocate(allocator);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_THAT(first->moved_workload_ids, ElementsAre("bulk"));  // new
  auto again = Allocate(allocator);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_THAT(again->moved_workload_ids, IsEmpty());
  EXPECT_TRUE(again->summary.warm());

  view_.links[1].mutable_health()->set_state(v1::OPER_STATE_DOWN);  // a-c
  auto cut = Allocate(allocator);
  ASSERT_TRUE(cut.ok()) << cut.status();
  EXPECT_THAT(cut->moved_workload_ids, ElementsAre("bulk"));
  EXPECT_NEAR(cut->summary.max_utilization(), 1.0, 1e-6);  // all on a-b
}

TEST_F(ElephantAllocatorTest, FabricLimitsWhatAFacilitySends) {
  v1::Fabric& fabric = view_.fabrics.emplace_back();
  fabric.set_facility_id("a");
  fabric.set_planes(1);
  fabric.set_rails(1);
  fabric.set_gpus(8);
  fabric.set_nic_speed_gbps(400);
  auto* leaf = fabric.add_layers();
  leaf->set_name("leaf");
  leaf->set_switch_count(1);
  leaf->set_downlink_ports(8);
  leaf->set_uplink_ports(0);
  leaf->set_port_speed_gbps(400);
  fabric.set_backbone_uplink_gbps(40);
  McfClassPolicies policies;
  policies.default_policy.objective = McfObjective::kMaxFairThroughput;
  ElephantAllocator allocator(0.0, policies);
  auto plan = Allocate(allocator);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_NEAR(plan->summary.carried_gbps(), 40, 1e-6);
  EXPECT_DOUBLE_EQ(plan->summary.demand_gbps(), 100);
}

}  // namespace
}  // namespace geodesic::pathcomp
