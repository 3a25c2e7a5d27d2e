// Verdicts from synthetic series: baselines, slow/lossy/flapping, and the
// localization that confirms a link only with both ends or several paths.
#include "pathcomp/health/link_judge.h"

#include <gtest/gtest.h>

#include <random>

#include "pathcomp/health/rtt_baseline.h"

namespace geodesic::pathcomp::health {
namespace {

constexpr int64_t kMinute = 60'000;
constexpr int64_t kStart = 1'800'000'000'000;  // a Unix ms, minute-aligned

v1::Link Link(const std::string& id, const std::string& src, const std::string& dst) {
  v1::Link link;
  link.set_id(id);
  link.set_src_node_id(src + "-r1");
  link.set_dst_node_id(dst + "-r1");
  link.set_src_facility_id(src);
  link.set_dst_facility_id(dst);
  return link;
}

v1::LinkHealth Health(uint64_t rtt_us, double loss = 0, v1::OperState state = v1::OPER_STATE_UP) {
  v1::LinkHealth health;
  health.set_state(state);
  health.set_rtt_us(rtt_us);
  health.set_loss_ratio(loss);
  return health;
}

// iad-chi and chi-iad (one fiber), chi-den and den-chi, iad-den (no reverse).
std::vector<v1::Link> Links() {
  return {Link("iad-chi", "iad", "chi"), Link("chi-iad", "chi", "iad"), Link("chi-den", "chi", "den"),
          Link("den-chi", "den", "chi"), Link("iad-den", "iad", "den")};
}

// Ten minutes of every link at its normal RTT, one report a second.
LinkJudge Warmed(int64_t* now, VerdictThresholds thresholds = {}) {
  LinkJudge judge(thresholds);
  judge.SetLinks(Links());
  for (*now = kStart; *now < kStart + 10 * kMinute; *now += 1000) {
    for (const auto& link : Links()) judge.Observe(link.id(), Health(10'000 + (*now / 1000) % 7 * 10), *now);
  }
  return judge;
}

v1::LinkAssessment Find(const std::vector<v1::LinkAssessment>& all, const std::string& id) {
  for (const auto& assessment : all) {
    if (assessment.link_id() == id) return assessment;
  }
  ADD_FAILURE() << "no assessment of " << id;
  return {};
}

TEST(RttBaselineTest, MedianAndMadOfMinuteMedians) {
  RttBaseline baseline(BaselineOptions{.window_minutes = 60, .min_minutes = 3});
  EXPECT_FALSE(baseline.Stats(kStart).has_value());
  // Minutes with medians 10, 12, 11, 30 ms: the outlier minute moves the median little.
  const uint64_t medians[] = {10'000, 12'000, 11'000, 30'000};
  for (int minute = 0; minute < 4; ++minute) {
    for (int i = 0; i < 5; ++i) baseline.Add(kStart + minute * kMinute + i * 1000, medians[minute] + (i - 2) * 100);
  }
  auto stats = baseline.Stats(kStart + 4 * kMinute);
  ASSERT_TRUE(stats.has_value());
  EXPECT_EQ(stats->minutes, 4u);
  EXPECT_EQ(stats->median_rtt_us, 12'000u);  // upper median of 10, 11, 12, 30
  EXPECT_EQ(stats->mad_us, 2'000u);  // deviations 0, 1, 2, 18 ms
  // An hour later every minute left the window.
  EXPECT_FALSE(baseline.Stats(kStart + 70 * kMinute).has_value());
}

TEST(RttBaselineTest, SurvivesAStoreRoundTrip) {
  RttBaseline baseline(BaselineOptions{.min_minutes = 2});
  for (int minute = 0; minute < 3; ++minute) baseline.Add(kStart + minute * kMinute, 10'000 + minute);
  baseline.Add(kStart + 3 * kMinute, 99);  // closes minute 2
  EXPECT_TRUE(baseline.TakeChanged());
  EXPECT_FALSE(baseline.TakeChanged());
  RttBaseline restored(BaselineOptions{.min_minutes = 2});
  restored.Restore(baseline.ToProto("l"));
  ASSERT_TRUE(restored.Stats(kStart + 3 * kMinute).has_value());
  EXPECT_EQ(restored.Stats(kStart + 3 * kMinute)->median_rtt_us, 10'001u);
  EXPECT_EQ(restored.ToProto("l").minutes_size(), 3);
}

// The cached stats are the stats, whatever the order of samples and asks:
// samples measured a minute before they are received, gaps that close
// minutes and empty the window, asks within a minute and across it.
TEST(RttBaselineTest, CurrentStatsAreTheStatsAtEveryAsk) {
  RttBaseline cached(BaselineOptions{.window_minutes = 6, .min_minutes = 2, .max_samples_per_minute = 5});
  RttBaseline reference = cached;
  std::mt19937 random(7);
  int64_t now = kStart;
  for (int step = 0; step < 20'000; ++step) {
    switch (random() % 8) {
      case 0: now += kMinute * (random() % 9); break;  // a gap
      case 1: now += random() % kMinute; break;
      default: now += random() % 5'000;
    }
    if (random() % 3 != 0) {
      // Measured up to a minute and a half before it is received.
      const int64_t at = now - static_cast<int64_t>(random() % (3 * kMinute / 2));
      const uint64_t rtt = 10'000 + random() % 5'000;
      cached.Add(at, rtt);
      reference.Add(at, rtt);
    }
    if (random() % 500 == 0) {
      const v1::RttBaseline stored = reference.ToProto("l");
      cached.Restore(stored);
      reference.Restore(stored);
    }
    const auto expected = reference.Stats(now);
    const auto got = cached.CurrentStats(now);
    ASSERT_EQ(got.has_value(), expected.has_value()) << "step " << step;
    if (!expected) continue;
    ASSERT_EQ(got->median_rtt_us, expected->median_rtt_us) << "step " << step;
    ASSERT_EQ(got->mad_us, expected->mad_us) << "step " << step;
    ASSERT_EQ(got->minutes, expected->minutes) << "step " << step;
  }
}

TEST(LinkJudgeTest, HealthyLinksStayHealthyAndLearnABaseline) {
  int64_t now = 0;
  LinkJudge judge = Warmed(&now);
  for (const auto& assessment : judge.Assess(now)) {
    EXPECT_EQ(assessment.verdict(), v1::LINK_VERDICT_HEALTHY) << assessment.link_id();
    EXPECT_FALSE(assessment.confirmed());
    EXPECT_NEAR(static_cast<double>(assessment.baseline_rtt_us()), 10'030, 40);
    EXPECT_GE(assessment.baseline_minutes(), 9u);
  }
  EXPECT_EQ(Find(judge.Assess(now), "iad-chi").reverse_link_id(), "chi-iad");
  EXPECT_EQ(Find(judge.Assess(now), "iad-den").reverse_link_id(), "");
}

TEST(LinkJudgeTest, SlowNeedsFactorFloorAndMads) {
  int64_t now = 0;
  LinkJudge judge = Warmed(&now);
  // 14 ms against a 10 ms baseline: over the floor (2 ms) but under 1.5x.
  judge.Observe("iad-chi", Health(14'000), now);
  EXPECT_EQ(judge.AssessLink("iad-chi", now)->verdict(), v1::LINK_VERDICT_HEALTHY);
  // 16 ms: over both.
  judge.Observe("iad-chi", Health(16'000), now);
  auto slow = judge.AssessLink("iad-chi", now);
  EXPECT_EQ(slow->verdict(), v1::LINK_VERDICT_SLOW);
  EXPECT_EQ(slow->since_unix_ms(), now);
  EXPECT_FALSE(slow->confirmed()) << "the near end alone is not enough";
  ASSERT_GE(slow->evidence_size(), 2);
  EXPECT_EQ(slow->evidence(0).source(), v1::VerdictEvidence::SOURCE_NEAR_PROBES);
  EXPECT_EQ(slow->evidence(0).observer(), "iad");
  EXPECT_NE(slow->evidence(0).detail().find("baseline 10.0 ms"), std::string::npos) << slow->evidence(0).detail();
  EXPECT_EQ(slow->evidence(1).source(), v1::VerdictEvidence::SOURCE_FAR_PROBES);
  EXPECT_EQ(slow->evidence(1).observer(), "chi");
  EXPECT_EQ(slow->evidence(1).verdict(), v1::LINK_VERDICT_HEALTHY);

  // The far end sees it too: confirmed, on both links of the fiber.
  judge.Observe("chi-iad", Health(16'500), now + 500);
  EXPECT_TRUE(judge.AssessLink("iad-chi", now + 500)->confirmed());
  EXPECT_TRUE(judge.AssessLink("chi-iad", now + 500)->confirmed());
}

TEST(LinkJudgeTest, SlowSamplesDoNotBecomeTheBaseline) {
  int64_t now = 0;
  LinkJudge judge = Warmed(&now);
  for (int64_t end = now + 30 * kMinute; now < end; now += 1000) judge.Observe("iad-chi", Health(25'000), now);
  const auto assessment = judge.AssessLink("iad-chi", now);
  EXPECT_EQ(assessment->verdict(), v1::LINK_VERDICT_SLOW);
  EXPECT_LT(assessment->baseline_rtt_us(), 11'000u);
}

TEST(LinkJudgeTest, NoBaselineNoSlowVerdict) {
  LinkJudge judge;
  judge.SetLinks(Links());
  judge.Observe("iad-chi", Health(90'000), kStart);
  const auto assessment = judge.AssessLink("iad-chi", kStart);
  EXPECT_EQ(assessment->verdict(), v1::LINK_VERDICT_HEALTHY);
  EXPECT_NE(assessment->evidence(0).detail().find("no baseline yet"), std::string::npos);
}

TEST(LinkJudgeTest, LossyFromBothEndsIsConfirmed) {
  int64_t now = 0;
  LinkJudge judge = Warmed(&now);
  judge.Observe("chi-den", Health(10'000, 0.05), now);
  EXPECT_EQ(judge.AssessLink("chi-den", now)->verdict(), v1::LINK_VERDICT_LOSSY);
  EXPECT_FALSE(judge.AssessLink("chi-den", now)->confirmed());
  judge.Observe("den-chi", Health(10'000, 0.04), now);
  const auto assessment = judge.AssessLink("chi-den", now);
  EXPECT_TRUE(assessment->confirmed());
  EXPECT_NE(assessment->evidence(0).detail().find("loss 5.0%"), std::string::npos) << assessment->evidence(0).detail();
  // Under the threshold: healthy again.
  judge.Observe("chi-den", Health(10'000, 0.01), now + 1000);
  EXPECT_EQ(judge.AssessLink("chi-den", now + 1000)->verdict(), v1::LINK_VERDICT_HEALTHY);
}

TEST(LinkJudgeTest, FlappingCountsStateChangesInTheWindow) {
  int64_t now = 0;
  LinkJudge judge = Warmed(&now);
  for (int i = 0; i < 4; ++i) {
    judge.Observe("iad-den", Health(0, 1, v1::OPER_STATE_DOWN), now += 1000);
    judge.Observe("iad-den", Health(10'000), now += 1000);
  }
  auto assessment = judge.AssessLink("iad-den", now);
  EXPECT_EQ(assessment->verdict(), v1::LINK_VERDICT_FLAPPING);
  EXPECT_EQ(assessment->state_changes(), 8u);
  // No reverse link: one end's evidence never confirms.
  EXPECT_FALSE(assessment->confirmed());
  // Out of the window, the changes are forgotten; the last report stands.
  EXPECT_EQ(judge.AssessLink("iad-den", now + 11 * kMinute)->verdict(), v1::LINK_VERDICT_HEALTHY);
}

TEST(LinkJudgeTest, DownIsNotGray) {
  int64_t now = 0;
  LinkJudge judge = Warmed(&now);
  judge.Observe("iad-chi", Health(0, 1, v1::OPER_STATE_DOWN), now);
  judge.Observe("chi-iad", Health(0, 1, v1::OPER_STATE_DOWN), now);
  EXPECT_EQ(judge.AssessLink("iad-chi", now)->verdict(), v1::LINK_VERDICT_HEALTHY);
}

TEST(LinkJudgeTest, TheLastReportStandsUntilTheNext) {
  int64_t now = 0;
  LinkJudge judge = Warmed(&now);
  judge.Observe("iad-chi", Health(10'000, 0.05), now);
  EXPECT_EQ(judge.AssessLink("iad-chi", now + 3'600'000)->verdict(), v1::LINK_VERDICT_LOSSY);
  judge.Observe("iad-chi", Health(0, 0, v1::OPER_STATE_UNKNOWN), now + 3'600'000);
  EXPECT_EQ(judge.AssessLink("iad-chi", now + 3'600'000)->verdict(), v1::LINK_VERDICT_UNKNOWN);
}

TEST(LinkJudgeTest, PathsBlameTheLinkTheyShareMost) {
  int64_t now = 0;
  LinkJudge judge = Warmed(&now);
  // Probes see nothing. Two bad paths share chi-den; each also crosses another link.
  judge.ObservePath({.id = "chain c1 hop 1", .link_ids = {"iad-chi", "chi-den"}, .bad = true, .at_unix_ms = now});
  EXPECT_EQ(judge.AssessLink("chi-den", now)->verdict(), v1::LINK_VERDICT_HEALTHY) << "one path is not enough";
  judge.ObservePath({.id = "chain c2 hop 0", .link_ids = {"chi-den", "den-chi"}, .bad = true, .at_unix_ms = now});
  judge.ObservePath({.id = "chain c3 hop 2", .link_ids = {"iad-chi"}, .bad = false, .at_unix_ms = now});
  const auto all = judge.Assess(now);
  const auto blamed = Find(all, "chi-den");
  EXPECT_EQ(blamed.verdict(), v1::LINK_VERDICT_SLOW);
  EXPECT_TRUE(blamed.confirmed());
  ASSERT_EQ(blamed.evidence_size(), 3);
  EXPECT_EQ(blamed.evidence(2).source(), v1::VerdictEvidence::SOURCE_PATHS);
  EXPECT_EQ(blamed.evidence(2).observer(), "chain c1 hop 1, chain c2 hop 0");
  EXPECT_EQ(Find(all, "iad-chi").verdict(), v1::LINK_VERDICT_HEALTHY) << "on one bad path only";
  EXPECT_EQ(Find(all, "den-chi").verdict(), v1::LINK_VERDICT_HEALTHY);
  // The paths' evidence expires.
  EXPECT_EQ(judge.AssessLink("chi-den", now + 61'000)->verdict(), v1::LINK_VERDICT_HEALTHY);
}

TEST(LinkJudgeTest, BaselinesAreStoredWhenAMinuteCloses) {
  int64_t now = 0;
  LinkJudge judge = Warmed(&now);
  const auto changed = judge.TakeChangedBaselines();
  EXPECT_EQ(changed.size(), Links().size());
  EXPECT_TRUE(judge.TakeChangedBaselines().empty());
  LinkJudge restarted;
  restarted.SetLinks(Links());
  for (const auto& baseline : changed) restarted.RestoreBaseline(baseline);
  restarted.Observe("iad-chi", Health(16'000), now);
  restarted.Observe("chi-iad", Health(16'000), now);
  EXPECT_EQ(restarted.AssessLink("iad-chi", now)->verdict(), v1::LINK_VERDICT_SLOW) << "judged at once after a restart";
}

TEST(LinkJudgeTest, APlaneFlapsOnItsFabricManagersReports) {
  LinkJudge judge;
  judge.SetLinks(Links());
  v1::FabricPlaneHealth plane;
  plane.set_plane(3);
  int64_t now = kStart;
  plane.set_state(v1::OPER_STATE_UP);
  judge.ObservePlane("sjc", plane, now);
  ASSERT_EQ(judge.AssessPlanes(now).size(), 1u);
  EXPECT_EQ(judge.AssessPlanes(now)[0].verdict(), v1::LINK_VERDICT_HEALTHY);
  for (int i = 0; i < 2; ++i) {
    plane.set_state(v1::OPER_STATE_DOWN);
    judge.ObservePlane("sjc", plane, now += 1000);
    plane.set_state(v1::OPER_STATE_UP);
    judge.ObservePlane("sjc", plane, now += 1000);
  }
  const auto planes = judge.AssessPlanes(now);
  EXPECT_EQ(planes[0].facility_id(), "sjc");
  EXPECT_EQ(planes[0].plane(), 3u);
  EXPECT_EQ(planes[0].verdict(), v1::LINK_VERDICT_FLAPPING);
  EXPECT_EQ(planes[0].state_changes(), 4u);
  EXPECT_EQ(judge.AssessPlanes(now + 11 * kMinute)[0].verdict(), v1::LINK_VERDICT_HEALTHY);
}

TEST(LinkJudgeTest, ThresholdsAreValidated) {
  EXPECT_TRUE(ValidateThresholds({}).ok());
  EXPECT_FALSE(ValidateThresholds({.slow_factor = 0.5}).ok());
  EXPECT_FALSE(ValidateThresholds({.lossy_ratio = 0}).ok());
  EXPECT_FALSE(ValidateThresholds({.flap_changes = 1}).ok());
  EXPECT_FALSE(ValidateThresholds({.min_bad_paths = 1}).ok());
  VerdictThresholds baseline;
  baseline.baseline.min_minutes = 100;
  EXPECT_FALSE(ValidateThresholds(baseline).ok());
}

}  // namespace
}  // namespace geodesic::pathcomp::health
