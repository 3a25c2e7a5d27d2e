#include "pathcomp/model/model_queries.h"

#include <gtest/gtest.h>

#include <memory>

namespace geodesic::pathcomp {
namespace {

// A plan with every kind of top-level field set, and three sites.
std::shared_ptr<const v1::Plan> ThreeSitePlan() {
  auto plan = std::make_shared<v1::Plan>();
  plan->set_generation(7);
  plan->set_epoch(2);
  plan->set_replica_id("pc1");
  plan->set_computed_at_unix_ms(1'700'000'000'000);
  plan->set_reason("link iad-chi down");
  plan->set_model_revision(41);
  plan->add_unreachable("sea->mia");
  plan->add_moved_workload_ids("chain-1");
  plan->mutable_elephants()->set_max_utilization(0.8);
  plan->add_chains()->set_workload_id("chain-1");
  plan->add_single_facility_dependencies()->set_facility_id("chi");
  for (const char* id : {"iad", "chi", "dfw"}) {
    v1::SitePlan& site = *plan->add_sites();
    site.set_facility_id(id);
    site.add_routes()->set_prefix(std::string("10.0.0.0/16 of ") + id);
  }
  return plan;
}

TEST(PlanForSiteTest, KeepsEveryFieldButTheOtherSites) {
  const std::shared_ptr<const v1::Plan> plan = ThreeSitePlan();
  const absl::StatusOr<v1::Plan> chi = PlanForSite(plan, "chi");
  ASSERT_TRUE(chi.ok()) << chi.status();
  v1::Plan expected = *plan;
  expected.mutable_sites()->DeleteSubrange(2, 1);
  expected.mutable_sites()->DeleteSubrange(0, 1);
  EXPECT_EQ(chi->SerializeAsString(), expected.SerializeAsString()) << chi->DebugString();

  const absl::StatusOr<v1::Plan> all = PlanForSite(plan, "");
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_EQ(all->SerializeAsString(), plan->SerializeAsString());

  EXPECT_EQ(PlanForSite(plan, "sjc").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(PlanForSite(nullptr, "chi").status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace geodesic::pathcomp
