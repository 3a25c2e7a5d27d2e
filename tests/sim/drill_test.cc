// The drill simulator on the shipped drills (sim/drills/*.yaml, the example
// backbone and the REPETITA networks of ../shared/data) and on drills that
// must fail or must be refused; its automatic drainer on the auto-drain drills.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "sim/drill/drill_charts.h"
#include "sim/drill/simulator.h"
#include "tests/support/test_dirs.h"

namespace geodesic::sim {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
namespace fs = std::filesystem;

std::string SourceDir() {
  const char* dir = std::getenv("GEODESIC_SOURCE_DIR");
  return dir ? dir : ".";
}

TEST(DrillTest, ImpossibleExpectationsFailAndSayWhich) {
  auto spec = LoadDrill(SourceDir() + "/tests/sim/drills/impossible.yaml");
  ASSERT_TRUE(spec.ok()) << spec.status();
  const v1::DrillReport report = RunDrill(*spec);
  EXPECT_FALSE(report.passed());
  ASSERT_EQ(report.expectations_size(), 2);
  EXPECT_FALSE(report.expectations(0).ok());
  EXPECT_THAT(report.expectations(0).name(), HasSubstr("max_chain_outage_ms <= 0"));
  EXPECT_THAT(report.expectations(0).detail(), HasSubstr("at fail facility chi"));
  EXPECT_GT(report.max_chain_outage_ms(), 0u);
}

TEST(DrillTest, SameSeedSameReportAndAnotherSeedAnother) {
  auto spec = LoadDrill(SourceDir() + "/sim/drills/backbone-facility-loss.yaml");
  ASSERT_TRUE(spec.ok()) << spec.status();
  const std::string first = RunDrill(*spec).SerializeAsString();
  auto again = LoadDrill(SourceDir() + "/sim/drills/backbone-facility-loss.yaml");
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(RunDrill(*again).SerializeAsString(), first);
  EXPECT_EQ(TimelineChart(RunDrill(*again)), TimelineChart(RunDrill(*spec)));

  const std::string text = [&] {
    std::ifstream in(SourceDir() + "/sim/drills/backbone-facility-loss.yaml");
    return std::string(std::istreambuf_iterator<char>(in), {});
  }();
  const testing::TempDir dir("drill-seed");
  const fs::path other = dir.Join("drill-seed.yaml");
  std::string reseeded = text;
  reseeded.replace(reseeded.find("seed: 11"), 8, "seed: 12");
  const std::string backbone = SourceDir() + "/deploy/examples/backbone.yaml";
  reseeded.replace(reseeded.find("../../deploy/examples/backbone.yaml"), 35, backbone);
  std::ofstream(other) << reseeded;
  auto seeded = LoadDrill(other.string());
  ASSERT_TRUE(seeded.ok()) << seeded.status();
  EXPECT_NE(RunDrill(*seeded).SerializeAsString(), first);
}

TEST(DrillTest, ReportsWhatHappenedAtEachEvent) {
  auto spec = LoadDrill(SourceDir() + "/sim/drills/backbone-leader-loss.yaml");
  ASSERT_TRUE(spec.ok()) << spec.status();
  const v1::DrillReport report = RunDrill(*spec);
  ASSERT_EQ(report.events_size(), 3);
  const auto& cut = report.events(1);  // the link fails while no leader publishes
  EXPECT_EQ(cut.event(), "fail link chi-den");
  EXPECT_EQ(cut.detected_at_ms(), 11'030u);           // 10 ms probes x 3
  EXPECT_EQ(cut.repaired_at_ms(), 11'055u);           // + local repair
  EXPECT_EQ(cut.replanned_at_ms(), 12'500u);          // the new leader, 2.5 s after the loss
  EXPECT_GT(cut.affected_workload_ids_size(), 0);
  EXPECT_LE(report.max_chain_outage_ms(), 55u) << report.worst_chain();  // routers repaired without a leader
  EXPECT_THAT(TimelineChart(report), HasSubstr("<svg"));
  EXPECT_THAT(ChainLatencyChart(report), HasSubstr("before ("));
}

TEST(DrillTest, BadDrillFilesAreRefusedWithTheirLines) {
  const testing::TempDir dir("bad-drill");
  const fs::path file = dir.Join("bad-drill.yaml");
  const std::string backbone = SourceDir() + "/deploy/examples/backbone.yaml";
  std::ofstream(file) << "name: bad\ntopology: " << backbone
                      << "\nduration_s: 30\n"
                         "timeline:\n"
                         "  - {at_s: 5, fail: link, id: nowhere}\n"
                         "  - {at_s: 50, fail: link, id: iad-nyc}\n"
                         "  - {at_s: 6, fail: link, drain: link, id: iad-nyc}\n"
                         "  - {at_s: 7, fail: plane, id: sjc, plane: 9}\n"
                         "  - {at_s: 8, degrade: link, id: iad-nyc}\n"
                         "expect: {max_mlu: -1, surprise: 1, max_packet_loss_ms: -5, min_delivered_ratio: 1.5}\n";
  auto spec = LoadDrill(file.string());
  ASSERT_FALSE(spec.ok());
  const std::string message(spec.status().message());
  EXPECT_THAT(message, HasSubstr(":5: timeline[0].id: unknown link nowhere"));
  EXPECT_THAT(message, HasSubstr(":6: timeline[1].at_s: after the drill's end"));
  EXPECT_THAT(message, HasSubstr("exactly one of"));
  EXPECT_THAT(message, HasSubstr("4 planes, not plane 9"));
  EXPECT_THAT(message, HasSubstr("give loss and/or added_latency_ms"));
  EXPECT_THAT(message, HasSubstr("surprise"));
  EXPECT_THAT(message, HasSubstr("max_packet_loss_ms"));
  EXPECT_THAT(message, HasSubstr("min_delivered_ratio"));
}

TEST(DrillTest, ASyntheticWanDrillGeneratesItsBackbone) {
  const testing::TempDir dir("synthetic-drill");
  const fs::path file = dir.Join("synthetic.yaml");
  std::ofstream(file) << "name: synthetic\n"
                         "synthetic_wan: {facilities: 24, seed: 3, elephant_flows: 120}\n"
                         "generate: {seed: 3, chains: {count: 10, services: 4, replicas: 2, min_hops: 2, max_hops: 3,"
                         " budget_ms: 400}}\n"
                         "duration_s: 60\n"
                         "timeline:\n"
                         "  - {at_s: 10, fail: facility, id: eu-0001}\n"
                         "  - {at_s: 40, restore: facility, id: eu-0001}\n";
  auto spec = LoadDrill(file.string());
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->topology.facilities.size(), 24u);
  size_t flows = 0, chains = 0;
  for (const auto& workload : spec->topology.workloads) {
    flows += workload.has_elephant() ? 1 : 0;
    chains += workload.has_chain() ? 1 : 0;
  }
  EXPECT_EQ(flows, 120u);
  EXPECT_EQ(chains, 10u);
  const v1::DrillReport first = RunDrill(*spec);
  const v1::DrillReport second = RunDrill(*spec);
  EXPECT_EQ(first.SerializeAsString(), second.SerializeAsString());
  EXPECT_EQ(first.events_size(), 2);
}

TEST(DrillTest, BadSyntheticWanKeysAreRefused) {
  const testing::TempDir dir("bad-synthetic-drill");
  const fs::path file = dir.Join("bad-synthetic.yaml");
  const std::string backbone = SourceDir() + "/deploy/examples/backbone.yaml";
  std::ofstream(file) << "name: bad\ntopology: " << backbone
                      << "\nsynthetic_wan: {facilities: 3, mean_degree: 9, surprise: 1}\nduration_s: 30\n";
  auto spec = LoadDrill(file.string());
  ASSERT_FALSE(spec.ok());
  const std::string message(spec.status().message());
  EXPECT_THAT(message, HasSubstr("either topology or synthetic_wan"));
  EXPECT_THAT(message, HasSubstr("synthetic_wan.facilities"));
  EXPECT_THAT(message, HasSubstr("synthetic_wan.mean_degree"));
  EXPECT_THAT(message, HasSubstr("surprise"));

  std::ofstream(file, std::ios::trunc) << "name: bad\nsynthetic_wan: {facilities: 10, elephant_flows: 46}\nduration_s: 30\n";
  auto too_many = LoadDrill(file.string());
  ASSERT_FALSE(too_many.ok());
  EXPECT_THAT(too_many.status().message(), HasSubstr("elephant_flows: 46"));
}

TEST(DrillTest, PacketExpectationsAreNotJudgedWithoutPackets) {
  auto spec = LoadDrill(SourceDir() + "/sim/drills/backbone-link-cut.yaml");
  ASSERT_TRUE(spec.ok()) << spec.status();
  spec->expect.max_packet_loss_ms = 0;
  spec->expect.min_delivered_ratio = 1;
  const v1::DrillReport report = RunDrill(*spec);
  int named = 0;
  for (const auto& expectation : report.expectations()) {
    if (expectation.name().find("packet") == std::string::npos &&
        expectation.name().find("delivered") == std::string::npos) {
      continue;
    }
    ++named;
    EXPECT_TRUE(expectation.ok()) << expectation.name();
    EXPECT_THAT(expectation.detail(), HasSubstr("not judged"));
  }
  EXPECT_EQ(named, 2);
}

TEST(DrillTest, PacketExpectationsAreJudgedOnTheNetnsDrillsPackets) {
  Expectations expect;
  expect.max_packet_loss_ms = 50;
  expect.min_delivered_ratio = 0.99;
  v1::DrillReport report;
  report.mutable_packets()->set_streams(3);
  report.mutable_packets()->set_sent(1000);
  report.mutable_packets()->set_received(980);
  report.mutable_packets()->set_delivered_ratio(0.98);
  report.mutable_packets()->set_max_loss_ms(75);
  report.mutable_packets()->set_worst("elephant-1 iad>lon at fail link iad-chi");
  JudgeDrill(expect, report);
  EXPECT_FALSE(report.passed());
  ASSERT_EQ(report.expectations_size(), 2);
  EXPECT_FALSE(report.expectations(0).ok());
  EXPECT_THAT(report.expectations(0).detail(), HasSubstr("75.0 ms, elephant-1 iad>lon at fail link iad-chi"));
  EXPECT_FALSE(report.expectations(1).ok());
  EXPECT_THAT(report.expectations(1).detail(), HasSubstr("980 of 1000"));
}

// --- The automatic drainer (issue 22 §2) ---

v1::DrillReport RunShipped(const std::string& name, const std::function<void(DrillSpec&)>& change = nullptr) {
  auto spec = LoadDrill(SourceDir() + "/sim/drills/" + name + ".yaml");
  EXPECT_TRUE(spec.ok()) << spec.status();
  if (!spec.ok()) return {};
  if (change) change(*spec);
  return RunDrill(*spec);
}

std::vector<std::string> Actions(const v1::DrillReport& report) {
  std::vector<std::string> actions;
  for (const auto& action : report.auto_drain().actions()) {
    actions.push_back(absl::StrCat(action.at_ms(), " ", v1::AutoDrainEvent::Action_Name(action.action()), " ",
                                   absl::StrJoin(action.link_ids(), ",")));
  }
  return actions;
}

TEST(DrillAutoDrainTest, AGrayLinkIsDrainedAfterTheHoldAndGivenBackAfterTheUndrainHold) {
  const v1::DrillReport report = RunShipped("backbone-gray-auto-drain");
  EXPECT_TRUE(report.passed());
  EXPECT_THAT(Actions(report), ElementsAre("41000 ACTION_DRAINED lon-nyc,nyc-lon", "121000 ACTION_UNDRAINED lon-nyc,nyc-lon"));
  const auto& drained = report.auto_drain().actions(0);
  EXPECT_EQ(drained.verdict(), v1::LINK_VERDICT_LOSSY);
  EXPECT_EQ(drained.replanned_at_ms(), 41'250u);  // debounce + solve
  EXPECT_EQ(drained.after_event_index(), 0);
  EXPECT_THAT(drained.reason(), HasSubstr("reverse link"));  // confirmed from both ends
  EXPECT_EQ(report.auto_drain().actions(1).after_event(), "restore link nyc-lon");
  EXPECT_EQ(report.auto_drain().actions(1).replanned_at_ms(), 121'250u);
  EXPECT_GE(report.auto_drain().gray_drained_plans(), 1u);
  EXPECT_EQ(report.auto_drain().max_gray_link_load_gbps(), 0);
  EXPECT_EQ(report.plans(), 5u);  // start, degrade, drain, restore, undrain
  EXPECT_EQ(RunShipped("backbone-gray-auto-drain").SerializeAsString(), report.SerializeAsString());
}

TEST(DrillAutoDrainTest, AddedLatencyAloneIsDrainedAsSlow) {
  const v1::DrillReport report = RunShipped("backbone-gray-auto-drain", [](DrillSpec& spec) {
    spec.timeline[0].loss = 0;
    spec.timeline[0].added_latency_us = 30'000;
  });
  ASSERT_GE(report.auto_drain().actions_size(), 1);
  EXPECT_EQ(report.auto_drain().actions(0).action(), v1::AutoDrainEvent::ACTION_DRAINED);
  EXPECT_EQ(report.auto_drain().actions(0).verdict(), v1::LINK_VERDICT_SLOW);
}

TEST(DrillAutoDrainTest, WithoutAutoDrainTheGrayFailureStaysOnThePlannerAndTheExpectationsFail) {
  const v1::DrillReport report = RunShipped("backbone-gray-auto-drain", [](DrillSpec& spec) { spec.auto_drain.enabled = false; });
  EXPECT_FALSE(report.auto_drain().enabled());
  EXPECT_THAT(Actions(report), IsEmpty());
  EXPECT_EQ(report.plans(), 3u);
  EXPECT_FALSE(report.passed());
  std::vector<std::string> failed;
  for (const auto& expectation : report.expectations()) {
    if (!expectation.ok()) failed.push_back(expectation.name());
  }
  EXPECT_THAT(failed, ElementsAre("min_auto_drains >= 1", "max_gray_link_load_gbps <= 0"));
}

TEST(DrillAutoDrainTest, ALeaderLossDuringTheHoldStartsItAgainAtTheNewLeader) {
  const v1::DrillReport report = RunShipped("backbone-gray-auto-drain", [](DrillSpec& spec) {
    TimelineEvent loss;
    loss.at_ms = 20'000;
    loss.action = TimelineEvent::Action::kLeaderLoss;
    spec.timeline.insert(spec.timeline.begin() + 1, loss);
  });
  ASSERT_GE(report.auto_drain().actions_size(), 1);
  // The new leader publishes at 22.5 s, first decides at 23 s, holds 30 s.
  EXPECT_EQ(report.auto_drain().actions(0).at_ms(), 53'000u);
  EXPECT_EQ(report.auto_drain().actions(0).after_event(), "leader loss");
}

TEST(DrillAutoDrainTest, AMeasurementStormFailsOpenAndDrainsNothing) {
  const v1::DrillReport report = RunShipped("backbone-measurement-storm");
  EXPECT_TRUE(report.passed());
  ASSERT_EQ(report.auto_drain().actions_size(), 2);
  EXPECT_EQ(report.auto_drain().actions(0).action(), v1::AutoDrainEvent::ACTION_FAIL_OPEN);
  EXPECT_EQ(report.auto_drain().actions(0).at_ms(), 11'000u);  // the first second the reports show it
  EXPECT_EQ(report.auto_drain().actions(0).link_ids_size(), 20);
  EXPECT_EQ(report.auto_drain().actions(1).action(), v1::AutoDrainEvent::ACTION_FAIL_OPEN_CLEARED);
  EXPECT_EQ(report.auto_drain().actions(1).at_ms(), 72'000u);  // the trips left the 60 s window
  EXPECT_EQ(report.auto_drain().drains(), 0u);
  // Under the limit, the same reports are drained (two at most at once, the rest held).
  const v1::DrillReport trusting =
      RunShipped("backbone-measurement-storm", [](DrillSpec& spec) { spec.auto_drain.fail_open_links = 20; });
  EXPECT_FALSE(trusting.auto_drain().failed_open());
  EXPECT_EQ(trusting.auto_drain().drains(), 2u);
  EXPECT_GT(trusting.auto_drain().held(), 0u);
  EXPECT_FALSE(trusting.passed());
}

TEST(DrillAutoDrainTest, ADrainThatWouldCutWorkloadsIsRefusedAndRetriedLater) {
  const v1::DrillReport report = RunShipped("backbone-auto-drain-refused");
  EXPECT_TRUE(report.passed());
  EXPECT_THAT(Actions(report), ElementsAre("41000 ACTION_DRAINED ams-iad,iad-ams", "41000 ACTION_REFUSED lon-nyc,nyc-lon"));
  const auto& refused = report.auto_drain().actions(1);
  ASSERT_GT(refused.refusals_size(), 0);
  EXPECT_THAT(refused.refusals(0), HasSubstr("would lose its last path"));
  EXPECT_EQ(refused.replanned_at_ms(), 0u);
  EXPECT_GT(report.auto_drain().max_gray_link_load_gbps(), 0);  // the refused cable still carries them
  EXPECT_EQ(report.auto_drain().max_gray_link(), "lon-nyc");
  const v1::DrillReport retried =
      RunShipped("backbone-auto-drain-refused", [](DrillSpec& spec) { spec.auto_drain.retry_refused_ms = 20'000; });
  EXPECT_EQ(retried.auto_drain().refusals(), 3u);  // at 41 s, 61 s and 81 s
  EXPECT_EQ(retried.auto_drain().drains(), 1u);
}

TEST(DrillAutoDrainTest, AutoDrainExpectationsAreNotJudgedWithoutTheSimulator) {
  Expectations expect;
  expect.min_auto_drains = 1;
  expect.fail_open = true;
  v1::DrillReport report;  // as --live and --netns make it: no auto_drain
  JudgeDrill(expect, report);
  EXPECT_TRUE(report.passed());
  ASSERT_EQ(report.expectations_size(), 2);
  EXPECT_THAT(report.expectations(1).detail(), HasSubstr("not judged"));
}

TEST(DrillAutoDrainTest, BadAutoDrainKeysAreRefusedWithTheirLines) {
  const testing::TempDir dir("bad-auto-drain");
  const fs::path file = dir.Join("bad-auto-drain.yaml");
  std::ofstream(file) << "name: bad\ntopology: " << SourceDir() << "/deploy/examples/backbone.yaml\nduration_s: 30\n"
                      << "auto_drain: {hold_s: -1, max_active: 5000, utilization_limit: 0, surprise: 1}\n"
                      << "timeline:\n  - {at_s: 5, fail: link, id: iad-nyc}\n"
                      << "expect: {min_auto_drains: 2, max_auto_drains: 1, fail_open: maybe, max_gray_link_load_gbps: -1}\n";
  auto spec = LoadDrill(file.string());
  ASSERT_FALSE(spec.ok());
  const std::string message(spec.status().message());
  EXPECT_THAT(message, HasSubstr(":4: auto_drain.hold_s"));
  EXPECT_THAT(message, HasSubstr("auto_drain.max_active"));
  EXPECT_THAT(message, HasSubstr("auto_drain.utilization_limit"));
  EXPECT_THAT(message, HasSubstr("auto_drain.surprise"));
  EXPECT_THAT(message, HasSubstr("expect.max_auto_drains: below min_auto_drains"));
  EXPECT_THAT(message, HasSubstr("expect.fail_open"));
  EXPECT_THAT(message, HasSubstr("expect.max_gray_link_load_gbps"));
}

// Link loads as forwarded after local repair (pathcomp/solver/forwarded_loads.h).
TEST(DrillForwardingTest, TheOverloadDrillShowsTheBackupsOverloadingALinkUntilTheReplan) {
  auto spec = LoadDrill(SourceDir() + "/sim/drills/backbone-repair-overload.yaml");
  ASSERT_TRUE(spec.ok()) << spec.status();
  ASSERT_TRUE(spec->expect.max_utilization_after_repair.has_value());
  EXPECT_DOUBLE_EQ(*spec->expect.max_utilization_after_repair, 2.0);
  const v1::DrillReport report = RunDrill(*spec);
  EXPECT_TRUE(report.passed());
  ASSERT_EQ(report.events_size(), 2);
  const v1::DrillEventOutcome& cut = report.events(0);
  EXPECT_EQ(cut.event(), "fail link iad-dfw");
  EXPECT_GT(cut.max_utilization_after_repair(), 1.0);  // over capacity on the backups ...
  EXPECT_EQ(cut.max_utilization_after_repair_link(), "chi-dfw");
  EXPECT_DOUBLE_EQ(cut.dropped_after_repair_gbps(), 0);
  EXPECT_DOUBLE_EQ(cut.looped_after_repair_gbps(), 0);
  EXPECT_LE(cut.mlu_after(), 1.0);  // ... while every plan keeps within it
  // Forwarding the re-plan's routes gives back the plan's own MLU (to within
  // its WCMP weights): the forwarding follows what the plan built.
  EXPECT_NEAR(cut.forwarded_utilization_after(), cut.mlu_after(), 0.02);
  EXPECT_EQ(report.events(1).max_utilization_after_repair(), 0);  // a restore: no local repair
  const v1::DrillForwarding& forwarding = report.forwarding();
  EXPECT_EQ(forwarding.repairs(), 1u);
  EXPECT_DOUBLE_EQ(forwarding.max_utilization_after_repair(), cut.max_utilization_after_repair());
  EXPECT_EQ(forwarding.max_utilization_after_repair_link(), "chi-dfw");
  EXPECT_EQ(forwarding.max_utilization_after_repair_event(), "fail link iad-dfw");
  EXPECT_LE(forwarding.max_utilization_of_plans(), 1.0);
}

// A busy backbone whose classes are protected against fiber cuts
// (protection: links): every plan holds what the backups would carry after
// any single cut, so the cut overloads nothing; the same drill unprotected
// overloads chi-dfw on the backups.
TEST(DrillForwardingTest, TheProtectedDrillKeepsEveryLinkWithinCapacityOnTheBackups) {
  auto spec = LoadDrill(SourceDir() + "/sim/drills/backbone-repair-protected.yaml");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->elephant_policies.default_policy.protection, pathcomp::ProtectionKind::kLinks);
  DrillSpec unprotected = *spec;
  unprotected.elephant_policies.default_policy.protection = pathcomp::ProtectionKind::kNone;
  const v1::DrillReport before = RunDrill(unprotected);
  const v1::DrillReport report = RunDrill(*spec);
  for (const v1::DrillExpectation& expectation : report.expectations()) {
    EXPECT_TRUE(expectation.ok()) << expectation.name() << ": " << expectation.detail();
  }
  ASSERT_EQ(report.events_size(), 2);
  ASSERT_EQ(before.events_size(), 2);
  const v1::DrillEventOutcome& cut = report.events(0);
  EXPECT_GT(before.events(0).max_utilization_after_repair(), 1.0) << "unprotected, the cut overloads a link (the premise)";
  EXPECT_LE(cut.max_utilization_after_repair(), 1.0 + 1e-6);
  EXPECT_GT(cut.max_utilization_after_repair(), 0);  // the cut was repaired locally and forwarded
  EXPECT_DOUBLE_EQ(cut.dropped_after_repair_gbps(), 0);
  EXPECT_DOUBLE_EQ(cut.looped_after_repair_gbps(), 0);
  std::printf("after the cut on the backups: unprotected %.3f on %s, protected %.3f on %s\n",
              before.events(0).max_utilization_after_repair(),
              before.events(0).max_utilization_after_repair_link().c_str(), cut.max_utilization_after_repair(),
              cut.max_utilization_after_repair_link().c_str());
}

TEST(DrillForwardingTest, TheJudgeFailsADrillOverItsLimitNamingTheEventAndTheLink) {
  auto spec = LoadDrill(SourceDir() + "/sim/drills/backbone-repair-overload.yaml");
  ASSERT_TRUE(spec.ok()) << spec.status();
  spec->expect.max_utilization_after_repair = 1.0;
  const v1::DrillReport report = RunDrill(*spec);
  EXPECT_FALSE(report.passed());
  bool judged = false;
  for (const v1::DrillExpectation& expectation : report.expectations()) {
    if (expectation.name() != "max_utilization_after_repair <= 1") {
      EXPECT_TRUE(expectation.ok()) << expectation.name();
      continue;
    }
    judged = true;
    EXPECT_FALSE(expectation.ok());
    EXPECT_THAT(expectation.detail(), HasSubstr("fail link iad-dfw"));
    EXPECT_THAT(expectation.detail(), HasSubstr("on chi-dfw"));
  }
  EXPECT_TRUE(judged);
}

TEST(DrillForwardingTest, NotJudgedWithoutLoadsNorFailedWithoutARepair) {
  Expectations expect;
  expect.max_utilization_after_repair = 1.0;
  v1::DrillReport none;  // a runner that computes no link loads after repair
  JudgeDrill(expect, none);
  EXPECT_TRUE(none.passed());
  ASSERT_EQ(none.expectations_size(), 1);
  EXPECT_THAT(none.expectations(0).detail(), HasSubstr("not judged"));

  v1::DrillReport quiet;
  quiet.mutable_forwarding();  // the simulator's or a live run's, with no local repair
  JudgeDrill(expect, quiet);
  EXPECT_TRUE(quiet.passed());
  EXPECT_THAT(quiet.expectations(0).detail(), HasSubstr("no local repair"));
}

TEST(DrillForwardingTest, TheLimitMustBeAUtilizationAboveZero) {
  const testing::TempDir dir("bad-repair-limit");
  for (const char* value : {"0", "-1", "101", "lots"}) {
    const fs::path file = dir.Join("bad-repair-limit.yaml");
    std::ofstream(file) << "name: bad\ntopology: " << SourceDir() << "/deploy/examples/backbone.yaml\nduration_s: 30\n"
                        << "timeline:\n  - {at_s: 5, fail: link, id: iad-nyc}\n"
                        << "expect: {max_utilization_after_repair: " << value << "}\n";
    auto spec = LoadDrill(file.string());
    ASSERT_FALSE(spec.ok()) << value;
    const std::string message(spec.status().message());
    EXPECT_THAT(message, HasSubstr("expect.max_utilization_after_repair")) << value;
    // One error each, not a second about the value the first refused.
    EXPECT_EQ(message.find("max_utilization_after_repair"), message.rfind("max_utilization_after_repair")) << message;
  }
  const fs::path good = dir.Join("good-repair-limit.yaml");
  std::ofstream(good) << "name: good\ntopology: " << SourceDir() << "/deploy/examples/backbone.yaml\nduration_s: 30\n"
                      << "timeline:\n  - {at_s: 5, fail: link, id: iad-nyc}\n"
                      << "expect: {max_utilization_after_repair: 100}\n";
  auto spec = LoadDrill(good.string());
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_DOUBLE_EQ(*spec->expect.max_utilization_after_repair, 100);
}

}  // namespace
}  // namespace geodesic::sim
