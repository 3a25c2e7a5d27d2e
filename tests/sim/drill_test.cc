// The drill simulator on the shipped drills (sim/drills/*.yaml, the example
// backbone and the REPETITA networks of ../shared/data) and on drills that
// must fail or must be refused.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "sim/drill/drill_charts.h"
#include "sim/drill/simulator.h"
#include "tests/support/test_dirs.h"

namespace geodesic::sim {
namespace {

using ::testing::HasSubstr;
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

}  // namespace
}  // namespace geodesic::sim
