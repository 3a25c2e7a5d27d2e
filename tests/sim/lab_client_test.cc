// What a lab client calls converged: no re-plan pending, the plan from the
// awaited model revision, and its generation at every site's routers.
#include "sim/lab_client.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace geodesic::sim {
namespace {

using ::testing::HasSubstr;

v1::GetPlanResponse Converged() {
  v1::GetPlanResponse response;
  response.mutable_plan()->set_generation(7);
  response.set_model_revision(12);
  response.set_plan_model_revision(12);
  for (const char* facility : {"iad", "chi"}) {
    v1::SiteInstallStatus& site = *response.add_sites();
    site.set_facility_id(facility);
    site.set_generation(7);
    site.set_installed(true);
    site.set_sent_to_routers(true);
  }
  return response;
}

TEST(ConvergenceGapTest, EmptyWhenEverySiteHasTheCurrentGenerationAtItsRouters) {
  EXPECT_EQ(ConvergenceGap(Converged(), {"iad", "chi"}, 12), "");
}

TEST(ConvergenceGapTest, NamesWhatIsMissing) {
  v1::GetPlanResponse pending = Converged();
  pending.set_replan_pending(true);
  EXPECT_THAT(ConvergenceGap(pending, {"iad"}), HasSubstr("re-plan is pending"));

  EXPECT_THAT(ConvergenceGap(Converged(), {"iad"}, 13), HasSubstr("not yet 13"));

  v1::GetPlanResponse behind = Converged();
  behind.mutable_sites(1)->set_generation(6);
  EXPECT_THAT(ConvergenceGap(behind, {"iad", "chi"}), HasSubstr("chi (at 6)"));

  v1::GetPlanResponse received = Converged();
  received.mutable_sites(0)->set_sent_to_routers(false);
  EXPECT_THAT(ConvergenceGap(received, {"iad"}), HasSubstr("iad (not yet at its routers)"));

  EXPECT_THAT(ConvergenceGap(Converged(), {"iad", "dfw"}), HasSubstr("dfw (no install reported)"));
}

}  // namespace
}  // namespace geodesic::sim
