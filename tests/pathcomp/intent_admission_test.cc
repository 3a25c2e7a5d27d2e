#include "pathcomp/service/intent_admission.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace geodesic::pathcomp {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using tls::Role;

constexpr int64_t kNowMs = 1'700'000'000'000;

v1::AddIntentRequest DrainRequest() {
  v1::AddIntentRequest request;
  request.mutable_intent()->set_id("drain-iad-ord");
  request.mutable_intent()->mutable_drain();
  return request;
}

v1::AddIntentRequest OverrideRequest(int64_t expires_at_unix_ms) {
  v1::AddIntentRequest request;
  request.mutable_intent()->set_id("metric-iad-ord");
  auto* override_ = request.mutable_intent()->mutable_metric_override();
  override_->set_link_id("iad-ord");
  override_->set_igp_metric(50);
  override_->set_expires_at_unix_ms(expires_at_unix_ms);
  return request;
}

v1::Impact Harmless() { return v1::Impact(); }

v1::Impact CutsAWorkload() {
  v1::Impact impact;
  impact.add_cut_workload_ids("train-1");
  return impact;
}

// A policy whose model accepts every intent and whose drains have `impact`;
// counts the pre-checks and remembers the limit they were asked for.
class IntentAdmissionTest : public ::testing::Test {
 protected:
  IntentAdmissionPolicy Policy(v1::Impact impact, absl::Status check = absl::OkStatus()) {
    return IntentAdmissionPolicy([check](const v1::Intent&) { return check; },
                                 [this, impact](const v1::Intent&, double limit) -> absl::StatusOr<v1::Impact> {
                                   ++prechecks_;
                                   limit_ = limit;
                                   return impact;
                                 });
  }
  int prechecks_ = 0;
  double limit_ = 0;
};

TEST_F(IntentAdmissionTest, TheModelsRefusalComesFirst) {
  const auto policy = Policy(Harmless(), absl::NotFoundError("link nowhere: no such link"));
  const IntentAdmission admission = policy.Admit(DrainRequest(), Role::kAdmin, kNowMs);
  EXPECT_EQ(admission.status.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(prechecks_, 0);
  EXPECT_FALSE(admission.impact.has_value());
}

TEST_F(IntentAdmissionTest, AHarmlessDrainIsAdmittedWithItsImpact) {
  const IntentAdmission admission = Policy(Harmless()).Admit(DrainRequest(), Role::kOperator, kNowMs);
  EXPECT_TRUE(admission.status.ok()) << admission.status;
  ASSERT_TRUE(admission.impact.has_value());
  EXPECT_THAT(admission.impact->refusals(), IsEmpty());
  EXPECT_EQ(prechecks_, 1);
  EXPECT_DOUBLE_EQ(limit_, 1.0);  // 0 asks for the default: a link at its capacity
}

TEST_F(IntentAdmissionTest, ADrainThatCutsAWorkloadIsRefusedWithTheReason) {
  const IntentAdmission admission = Policy(CutsAWorkload()).Admit(DrainRequest(), Role::kOperator, kNowMs);
  EXPECT_EQ(admission.status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(admission.status.message(), HasSubstr("workload train-1 would lose its last path"));
  EXPECT_THAT(admission.status.message(), HasSubstr("an admin may force it"));
  ASSERT_TRUE(admission.impact.has_value());
  EXPECT_EQ(admission.impact->refusals_size(), 1);
}

TEST_F(IntentAdmissionTest, ADryRunReportsRefusalsInTheImpactInsteadOfFailing) {
  auto request = DrainRequest();
  request.set_dry_run(true);
  const IntentAdmission admission = Policy(CutsAWorkload()).Admit(request, Role::kOperator, kNowMs);
  EXPECT_TRUE(admission.status.ok()) << admission.status;
  ASSERT_TRUE(admission.impact.has_value());
  EXPECT_THAT(admission.impact->refusals(), ::testing::ElementsAre(HasSubstr("train-1")));
}

TEST_F(IntentAdmissionTest, ForceNeedsAnAdminAndAReason) {
  auto request = DrainRequest();
  request.set_force(true);
  const auto policy = Policy(CutsAWorkload());
  EXPECT_EQ(policy.Admit(request, Role::kOperator, kNowMs).status.code(), absl::StatusCode::kPermissionDenied);
  const IntentAdmission no_reason = policy.Admit(request, Role::kAdmin, kNowMs);
  EXPECT_EQ(no_reason.status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(no_reason.status.message(), HasSubstr("needs a reason"));
  EXPECT_EQ(prechecks_, 0);
  // An admin with a reason goes ahead despite the refusals, which stay in the impact.
  request.mutable_intent()->set_reason("fiber repair, window 1234");
  const IntentAdmission forced = policy.Admit(request, Role::kAdmin, kNowMs);
  EXPECT_TRUE(forced.status.ok()) << forced.status;
  ASSERT_TRUE(forced.impact.has_value());
  EXPECT_EQ(forced.impact->refusals_size(), 1);
}

TEST_F(IntentAdmissionTest, MetricOverridesNeedAnAdminAndAFutureExpiry) {
  const auto policy = Policy(Harmless());
  EXPECT_EQ(policy.Admit(OverrideRequest(0), Role::kOperator, kNowMs).status.code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_TRUE(policy.Admit(OverrideRequest(0), Role::kAdmin, kNowMs).status.ok());  // never expires
  EXPECT_TRUE(policy.Admit(OverrideRequest(kNowMs + 1), Role::kAdmin, kNowMs).status.ok());
  const IntentAdmission past = policy.Admit(OverrideRequest(kNowMs), Role::kAdmin, kNowMs);
  EXPECT_EQ(past.status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(past.status.message(), HasSubstr("expires in the past"));
  // Only drains are pre-checked.
  EXPECT_EQ(prechecks_, 0);
}

TEST_F(IntentAdmissionTest, AnInvalidUtilizationLimitStopsBeforeThePreCheck) {
  auto request = DrainRequest();
  request.set_utilization_limit(11);
  const IntentAdmission admission = Policy(Harmless()).Admit(request, Role::kOperator, kNowMs);
  EXPECT_EQ(admission.status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(prechecks_, 0);
  request.set_utilization_limit(0.8);
  EXPECT_TRUE(Policy(Harmless()).Admit(request, Role::kOperator, kNowMs).status.ok());
  EXPECT_DOUBLE_EQ(limit_, 0.8);
}

TEST_F(IntentAdmissionTest, AFailedPreCheckRefusesTheDrain) {
  const IntentAdmissionPolicy policy(
      [](const v1::Intent&) { return absl::OkStatus(); },
      [](const v1::Intent&, double) -> absl::StatusOr<v1::Impact> { return absl::InternalError("no plan"); });
  const IntentAdmission admission = policy.Admit(DrainRequest(), Role::kOperator, kNowMs);
  EXPECT_EQ(admission.status.code(), absl::StatusCode::kInternal);
  EXPECT_FALSE(admission.impact.has_value());
}

}  // namespace
}  // namespace geodesic::pathcomp
