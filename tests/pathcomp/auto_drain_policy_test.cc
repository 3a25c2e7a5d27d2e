// The automatic drainer's decisions on synthetic assessments: hold times,
// limits, fail open, pause, undrain and an operator's undrain.
#include "pathcomp/health/auto_drain_policy.h"

#include <gtest/gtest.h>

namespace geodesic::pathcomp::health {
namespace {

constexpr int64_t kStart = 1'800'000'000'000;

v1::LinkAssessment Assessment(const std::string& id, const std::string& reverse, v1::LinkVerdict verdict,
                              bool confirmed) {
  v1::LinkAssessment assessment;
  assessment.set_link_id(id);
  assessment.set_reverse_link_id(reverse);
  assessment.set_verdict(verdict);
  assessment.set_confirmed(confirmed);
  v1::VerdictEvidence& evidence = *assessment.add_evidence();
  evidence.set_source(v1::VerdictEvidence::SOURCE_NEAR_PROBES);
  evidence.set_observer(id.substr(0, 3));
  evidence.set_verdict(verdict);
  evidence.set_detail(verdict == v1::LINK_VERDICT_LOSSY ? "loss 5.0%" : "fine");
  return assessment;
}

// Fibers f0..f(n-1), each "aN-bN" and "bN-aN"; `bad` of them lossy and confirmed.
std::vector<v1::LinkAssessment> Network(int fibers, std::set<int> bad, bool confirmed = true) {
  std::vector<v1::LinkAssessment> all;
  for (int i = 0; i < fibers; ++i) {
    const std::string forward = "a" + std::to_string(i) + "-b" + std::to_string(i);
    const std::string back = "b" + std::to_string(i) + "-a" + std::to_string(i);
    const auto verdict = bad.count(i) ? v1::LINK_VERDICT_LOSSY : v1::LINK_VERDICT_HEALTHY;
    all.push_back(Assessment(forward, back, verdict, bad.count(i) && confirmed));
    all.push_back(Assessment(back, forward, verdict, bad.count(i) && confirmed));
  }
  return all;
}

// The intents a shell would have stored for `order`.
std::vector<v1::Intent> Take(AutoDrainPolicy& policy, const DrainOrder& order, int64_t now,
                             std::vector<v1::Intent> intents) {
  std::vector<std::string> ids;
  for (const std::string& link : order.link_ids) {
    v1::Intent intent;
    intent.set_id("auto-" + link);
    intent.mutable_drain()->mutable_target()->set_link_id(link);
    intent.set_automatic(true);
    intent.set_created_at_unix_ms(now);
    ids.push_back(intent.id());
    intents.push_back(intent);
  }
  policy.Drained(order, ids, now);
  return intents;
}

TEST(AutoDrainPolicyTest, DrainsAConfirmedFiberAfterTheHold) {
  AutoDrainPolicy policy(AutoDrainOptions{.hold_ms = 30'000});
  const auto bad = Network(3, {1});
  EXPECT_TRUE(policy.Decide(bad, {}, kStart).drain.empty());
  EXPECT_TRUE(policy.Decide(bad, {}, kStart + 29'000).drain.empty());
  const auto decision = policy.Decide(bad, {}, kStart + 30'000);
  ASSERT_EQ(decision.drain.size(), 1u);
  EXPECT_EQ(decision.drain[0].fiber, "a1-b1|b1-a1");
  EXPECT_EQ(decision.drain[0].link_ids, (std::vector<std::string>{"a1-b1", "b1-a1"}));
  EXPECT_EQ(decision.drain[0].verdict, v1::LINK_VERDICT_LOSSY);
  EXPECT_NE(decision.drain[0].evidence.find("a1-b1 lossy (a1-: loss 5.0%)"), std::string::npos)
      << decision.drain[0].evidence;
}

TEST(AutoDrainPolicyTest, AHealthyIntervalRestartsTheHold) {
  AutoDrainPolicy policy(AutoDrainOptions{.hold_ms = 30'000});
  policy.Decide(Network(3, {1}), {}, kStart);
  policy.Decide(Network(3, {}), {}, kStart + 20'000);
  EXPECT_TRUE(policy.Decide(Network(3, {1}), {}, kStart + 40'000).drain.empty());
  EXPECT_EQ(policy.Decide(Network(3, {1}), {}, kStart + 70'000).drain.size(), 1u);
}

TEST(AutoDrainPolicyTest, SuspectedLinksAreNeverDrained) {
  AutoDrainPolicy policy(AutoDrainOptions{.hold_ms = 0});
  const auto suspected = Network(3, {1}, /*confirmed=*/false);
  EXPECT_TRUE(policy.Decide(suspected, {}, kStart).drain.empty());
  EXPECT_TRUE(policy.Decide(suspected, {}, kStart + 3'600'000).drain.empty());
}

TEST(AutoDrainPolicyTest, AMeasurementStormDrainsNothingAndSaysSo) {
  AutoDrainPolicy policy(AutoDrainOptions{.hold_ms = 0, .fail_open_links = 3});
  // Ten fibers trip at once (twenty links).
  std::set<int> ten = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  auto decision = policy.Decide(Network(12, ten), {}, kStart);
  EXPECT_TRUE(decision.drain.empty());
  ASSERT_EQ(decision.events.size(), 1u);
  EXPECT_EQ(decision.events[0].action(), v1::AutoDrainEvent::ACTION_FAIL_OPEN);
  EXPECT_EQ(decision.events[0].link_ids_size(), 20);
  EXPECT_TRUE(policy.failed_open());
  // Still nothing while it lasts, and no second event.
  decision = policy.Decide(Network(12, ten), {}, kStart + 600'000);
  EXPECT_TRUE(decision.drain.empty());
  EXPECT_TRUE(decision.events.empty());
  // It clears when few links are bad and few tripped within the window;
  // the one still bad is drained then.
  decision = policy.Decide(Network(12, {4}), {}, kStart + 700'000);
  ASSERT_EQ(decision.events.size(), 1u);
  EXPECT_EQ(decision.events[0].action(), v1::AutoDrainEvent::ACTION_FAIL_OPEN_CLEARED);
  ASSERT_EQ(decision.drain.size(), 1u);
  EXPECT_EQ(decision.drain[0].fiber, "a4-b4|b4-a4");
}

TEST(AutoDrainPolicyTest, TripsWithinTheWindowFailOpenEvenWhenEachRecovers) {
  AutoDrainPolicy policy(AutoDrainOptions{.hold_ms = 60'000, .fail_open_links = 2, .fail_open_window_ms = 60'000});
  policy.Decide(Network(5, {0}), {}, kStart);
  policy.Decide(Network(5, {1}), {}, kStart + 10'000);
  EXPECT_FALSE(policy.failed_open());
  policy.Decide(Network(5, {2}), {}, kStart + 20'000);
  EXPECT_TRUE(policy.failed_open());
}

TEST(AutoDrainPolicyTest, LimitsHoldDrainsBackAndReportOnce) {
  AutoDrainPolicy policy(AutoDrainOptions{.hold_ms = 0, .max_active = 1, .max_per_hour = 10, .fail_open_links = 5});
  auto decision = policy.Decide(Network(4, {0, 1}), {}, kStart);
  ASSERT_EQ(decision.drain.size(), 1u);
  EXPECT_EQ(decision.drain[0].fiber, "a0-b0|b0-a0");
  ASSERT_EQ(decision.events.size(), 1u);
  EXPECT_EQ(decision.events[0].action(), v1::AutoDrainEvent::ACTION_HELD);
  EXPECT_NE(decision.events[0].reason().find("max_active 1"), std::string::npos);
  const auto intents = Take(policy, decision.drain[0], kStart, {});
  decision = policy.Decide(Network(4, {0, 1}), intents, kStart + 1000);
  EXPECT_TRUE(decision.drain.empty());
  EXPECT_TRUE(decision.events.empty()) << "held is said once";
}

TEST(AutoDrainPolicyTest, AtMostMaxPerHour) {
  AutoDrainPolicy policy(AutoDrainOptions{.hold_ms = 0, .max_active = 10, .max_per_hour = 2, .fail_open_links = 9});
  std::vector<v1::Intent> intents;
  auto decision = policy.Decide(Network(4, {0, 1, 2}), intents, kStart);
  ASSERT_EQ(decision.drain.size(), 2u);
  for (const auto& order : decision.drain) intents = Take(policy, order, kStart, intents);
  EXPECT_EQ(policy.DrainsWithinHour(kStart), 2u);
  decision = policy.Decide(Network(4, {0, 1, 2}), intents, kStart + 1000);
  EXPECT_TRUE(decision.drain.empty());
  // An hour later the third may go.
  decision = policy.Decide(Network(4, {0, 1, 2}), intents, kStart + 3'600'000);
  ASSERT_EQ(decision.drain.size(), 1u);
  EXPECT_EQ(decision.drain[0].fiber, "a2-b2|b2-a2");
}

TEST(AutoDrainPolicyTest, DrainsAfterARestartCountAgainstTheLimits) {
  AutoDrainPolicy first(AutoDrainOptions{.hold_ms = 0, .max_active = 1});
  auto decision = first.Decide(Network(3, {0}), {}, kStart);
  const auto intents = Take(first, decision.drain[0], kStart, {});
  AutoDrainPolicy restarted(AutoDrainOptions{.hold_ms = 0, .max_active = 1});
  decision = restarted.Decide(Network(3, {0, 1}), intents, kStart + 1000);
  EXPECT_TRUE(decision.drain.empty()) << "the drain found in the model is active";
  EXPECT_EQ(restarted.DrainsWithinHour(kStart + 1000), 1u);
}

TEST(AutoDrainPolicyTest, UndrainsAfterTheHealthyHold) {
  AutoDrainPolicy policy(AutoDrainOptions{.hold_ms = 0, .undrain_hold_ms = 300'000});
  auto decision = policy.Decide(Network(2, {0}), {}, kStart);
  const auto intents = Take(policy, decision.drain[0], kStart, {});
  EXPECT_TRUE(policy.Decide(Network(2, {}), intents, kStart + 10'000).undrain.empty());
  EXPECT_TRUE(policy.Decide(Network(2, {}), intents, kStart + 300'000).undrain.empty());
  decision = policy.Decide(Network(2, {}), intents, kStart + 310'000);
  ASSERT_EQ(decision.undrain.size(), 1u);
  EXPECT_EQ(decision.undrain[0].intent_ids, (std::vector<std::string>{"auto-a0-b0", "auto-b0-a0"}));
  // Gone from the model by our own hand: a new episode drains again.
  decision = policy.Decide(Network(2, {0}), {}, kStart + 320'000);
  EXPECT_EQ(decision.drain.size(), 1u);
}

TEST(AutoDrainPolicyTest, AnOperatorsUndrainHoldsUntilTheFiberWasHealthy) {
  AutoDrainPolicy policy(AutoDrainOptions{.hold_ms = 0});
  auto decision = policy.Decide(Network(2, {0}), {}, kStart);
  const auto intents = Take(policy, decision.drain[0], kStart, {});
  policy.Decide(Network(2, {0}), intents, kStart + 1000);
  // `tectl undrain`: the intents are gone while the fiber is still bad.
  EXPECT_TRUE(policy.Decide(Network(2, {0}), {}, kStart + 2000).drain.empty());
  EXPECT_TRUE(policy.Decide(Network(2, {0}), {}, kStart + 3'600'000).drain.empty());
  policy.Decide(Network(2, {}), {}, kStart + 3'601'000);
  EXPECT_EQ(policy.Decide(Network(2, {0}), {}, kStart + 3'602'000).drain.size(), 1u);
}

TEST(AutoDrainPolicyTest, APauseHoldsEverything) {
  AutoDrainPolicy policy(AutoDrainOptions{.hold_ms = 0, .undrain_hold_ms = 0});
  v1::Intent pause;
  pause.set_id("pause-1");
  pause.mutable_auto_drain_pause();
  pause.set_created_by("spiffe://geodesic/operator/alice");
  pause.set_reason("fiber maintenance");
  auto decision = policy.Decide(Network(2, {0}), {pause}, kStart);
  EXPECT_TRUE(decision.drain.empty());
  ASSERT_EQ(decision.events.size(), 1u);
  EXPECT_EQ(decision.events[0].action(), v1::AutoDrainEvent::ACTION_HELD);
  EXPECT_NE(decision.events[0].reason().find("paused by spiffe://geodesic/operator/alice: fiber maintenance"),
            std::string::npos);
  // Resumed: drained.
  decision = policy.Decide(Network(2, {0}), {}, kStart + 1000);
  ASSERT_EQ(decision.drain.size(), 1u);
  auto intents = Take(policy, decision.drain[0], kStart + 1000, {});
  intents.push_back(pause);
  EXPECT_TRUE(policy.Decide(Network(2, {}), intents, kStart + 2000).undrain.empty()) << "paused: no undrain either";
}

TEST(AutoDrainPolicyTest, ARefusedDrainIsRetriedLater) {
  AutoDrainPolicy policy(AutoDrainOptions{.hold_ms = 0, .retry_refused_ms = 300'000});
  auto decision = policy.Decide(Network(2, {0}), {}, kStart);
  ASSERT_EQ(decision.drain.size(), 1u);
  policy.Refused(decision.drain[0], kStart);
  EXPECT_TRUE(policy.Decide(Network(2, {0}), {}, kStart + 299'000).drain.empty());
  EXPECT_EQ(policy.Decide(Network(2, {0}), {}, kStart + 300'000).drain.size(), 1u);
}

TEST(AutoDrainPolicyTest, OptionsAreValidated) {
  EXPECT_TRUE(ValidateAutoDrainOptions({}).ok());
  EXPECT_FALSE(ValidateAutoDrainOptions({.hold_ms = -1}).ok());
  EXPECT_FALSE(ValidateAutoDrainOptions({.fail_open_window_ms = 10}).ok());
  EXPECT_FALSE(ValidateAutoDrainOptions({.utilization_limit = 0}).ok());
}

}  // namespace
}  // namespace geodesic::pathcomp::health
