// tectl's words for a plan's elephant allocation (get plan).
#include "cli/elephant_text.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace geodesic::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

v1::ElephantAllocation TwoClasses() {
  v1::ElephantAllocation elephants;
  elephants.set_demand_gbps(300);
  elephants.set_carried_gbps(300);
  elephants.set_max_utilization(0.8);
  elephants.set_mean_stretch(1.02);
  elephants.set_p95_stretch(1.2);
  v1::ElephantClass& safe = *elephants.add_classes();
  safe.set_priority(0);
  safe.set_objective("latency");
  safe.set_demand_gbps(200);
  safe.set_carried_gbps(200);
  safe.set_max_utilization(0.769);
  safe.set_utilization_cap(0.8);
  safe.set_protection("links");
  safe.set_protection_limit(1);
  safe.set_failure_safe(true);
  safe.set_failures_checked(52);
  safe.set_failure_limits(56);
  safe.set_max_utilization_after_failure(0.995);
  safe.set_worst_failure("link edge_10");
  safe.set_worst_failure_link("edge_12");
  safe.set_unprotected_max_utilization(0.8);
  v1::ElephantClass& bulk = *elephants.add_classes();
  bulk.set_priority(3);
  bulk.set_objective("mlu");
  bulk.set_demand_gbps(100);
  bulk.set_carried_gbps(100);
  bulk.set_max_utilization(0.8);
  bulk.set_protection("none");
  return elephants;
}

TEST(ElephantTextTest, ARowPerClassWithItsProtection) {
  const std::string text = ElephantAllocationText(TwoClasses());
  EXPECT_THAT(text, HasSubstr("elephant flows: 300.0 of 300.0 Gbps carried, max link utilization 0.800"));
  EXPECT_THAT(text, HasSubstr("CLASS  OBJECTIVE"));
  EXPECT_THAT(text, HasSubstr("links <= 1.00"));
  EXPECT_THAT(text, HasSubstr("yes (52 failures, 56 limits)"));
  EXPECT_THAT(text, HasSubstr("0.995 (link edge_10: edge_12)"));
  EXPECT_THAT(text, Not(HasSubstr("not failure-safe")));
}

TEST(ElephantTextTest, AClassThatIsNotFailureSafeSaysWhy) {
  v1::ElephantAllocation elephants = TwoClasses();
  v1::ElephantClass& cls = *elephants.mutable_classes(0);
  cls.set_failure_safe(false);
  cls.set_failure_limits(0);
  cls.set_protection_problem("protection stopped by its budget in round 1 of failure limits");
  const std::string text = ElephantAllocationText(elephants);
  EXPECT_THAT(text, HasSubstr("NO (52 failures, 0 limits)"));
  EXPECT_THAT(text, HasSubstr("class 0 is not failure-safe (the plan is the unprotected one): protection stopped by "
                              "its budget in round 1 of failure limits\n"));
  EXPECT_THAT(text, Not(HasSubstr("class 3 is not")));  // unprotected: nothing to say
}

TEST(ElephantTextTest, NothingWithoutElephants) { EXPECT_EQ(ElephantAllocationText({}), ""); }

}  // namespace
}  // namespace geodesic::cli
