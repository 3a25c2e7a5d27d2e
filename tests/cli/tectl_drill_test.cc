// tectl drill run: the real binary on a shipped drill, on one that must fail,
// and on bad input; the report and charts it writes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "geodesic/v1/drill.pb.h"
#include "tests/cli/tectl_testing.h"

namespace geodesic::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;
using namespace ::geodesic::cli::tectl_testing;  // NOLINT: test helpers

TEST(TectlDrillTest, RunsADrillAndWritesItsReportAndCharts) {
  TempDir scratch{"tectl"};
  const TectlRun run = Tectl({"drill", "run", SourceDir() + "/sim/drills/backbone-srlg-cut.yaml", "--report",
                              scratch.path() + "/report.json", "--charts", scratch.path() + "/charts"});
  ASSERT_EQ(run.exit_code, 0) << run;
  EXPECT_THAT(run.out, StartsWith("drill backbone-srlg-cut: 8 facilities"));
  EXPECT_THAT(run.out, HasSubstr("fail srlg conduit-iad-north"));
  EXPECT_THAT(run.out, HasSubstr("max_chain_outage_ms <= 100"));
  const auto report = ParseJson<v1::DrillReport>(ReadFile(scratch.path() + "/report.json"));
  EXPECT_TRUE(report.passed());
  EXPECT_EQ(report.events_size(), 2);
  for (const char* chart : {"/charts/backbone-srlg-cut-timeline.svg", "/charts/backbone-srlg-cut-chain-latency.svg"}) {
    EXPECT_THAT(ReadFile(scratch.path() + chart), StartsWith("<svg")) << chart;
  }
}

TEST(TectlDrillTest, AFailedExpectationExitsFourSayingWhichAndWhy) {
  const TectlRun run = Tectl({"drill", "run", SourceDir() + "/tests/sim/drills/impossible.yaml"});
  EXPECT_EQ(run.exit_code, 4) << run;
  EXPECT_THAT(run.out, HasSubstr("FAILED"));
  EXPECT_THAT(run.err, HasSubstr("tectl: drill impossible failed: max_chain_outage_ms <= 0 (longest: "));
}

TEST(TectlDrillTest, PrintsTheAutomaticDrainersActionsAfterTheirEvents) {
  const TectlRun run = Tectl({"drill", "run", SourceDir() + "/sim/drills/backbone-auto-drain-refused.yaml"});
  ASSERT_EQ(run.exit_code, 0) << run;
  EXPECT_THAT(run.out, HasSubstr("automatic drains: 1 drained, 0 undrained, 1 refused, 0 held, never failed open"));
  EXPECT_THAT(run.out, HasSubstr("AT_MS  AFTER_EVENT"));
  EXPECT_THAT(run.out, HasSubstr("REFUSED  lon-nyc,nyc-lon  lossy"));
  EXPECT_THAT(run.out, HasSubstr("would lose its last path"));
  EXPECT_THAT(run.out, HasSubstr("min_auto_drain_refusals >= 1  ok"));
}

TEST(TectlDrillTest, PrintsTheLinkLoadsAsForwardedAfterLocalRepair) {
  const TectlRun run = Tectl({"drill", "run", SourceDir() + "/sim/drills/backbone-repair-overload.yaml"});
  ASSERT_EQ(run.exit_code, 0) << run;
  EXPECT_THAT(run.out, HasSubstr("link loads as forwarded (elephant demands hop by hop through the sites' routes): "
                                 "highest utilization on local repair 1.349 on chi-dfw at fail link iad-dfw"));
  EXPECT_THAT(run.out, HasSubstr("UTIL_ON_REPAIR  LINK"));
  EXPECT_THAT(run.out, HasSubstr("max_utilization_after_repair <= 2  ok      highest 1.349 on chi-dfw at fail link iad-dfw"));
}

TEST(TectlDrillTest, BadInput) {
  TempDir scratch{"tectl"};
  std::ofstream(scratch.path() + "/bad.yaml") << "name: bad\ntopology: nowhere.yaml\nduration_s: 0\n";
  TectlRun run = Tectl({"drill", "run", scratch.path() + "/bad.yaml"});
  EXPECT_EQ(run.exit_code, 1) << run;
  EXPECT_THAT(run.err, HasSubstr("bad.yaml:2: topology:"));
  EXPECT_THAT(run.err, HasSubstr("timeline"));
  run = Tectl({"drill", "run", scratch.path() + "/missing.yaml"});
  EXPECT_EQ(run.exit_code, 1) << run;
  for (const std::vector<std::string>& bad : std::vector<std::vector<std::string>>{
           {"drill"}, {"drill", "walk", "x.yaml"}, {"drill", "run"}, {"drill", "run", "a.yaml", "--server", "h:1"},
           {"drill", "run", "a.yaml", "--live", "--netns"}, {"drill", "run", "a.yaml", "--keep"},
           {"drill", "run", "a.yaml", "--live", "--no-local-repair"}, {"drill", "clean", "--keep"},
           {"drill", "clean", "x"}}) {
    run = Tectl(bad);
    EXPECT_EQ(run.exit_code, 2) << run;
    EXPECT_THAT(run.err, HasSubstr("\nusage:\n  tectl drill run"));
  }
}

// drill clean removes only what dead runs left: with none, it says so.
TEST(TectlDrillTest, CleanRemovesOnlyWhatDeadRunsLeft) {
  if (geteuid() != 0) GTEST_SKIP() << "network namespaces need root";
  const TectlRun run = Tectl({"drill", "clean"});
  EXPECT_EQ(run.exit_code, 0) << run;
  EXPECT_THAT(run.out, ::testing::AnyOf(HasSubstr("nothing left by a netns drill"), HasSubstr("removed namespace")));
}

}  // namespace
}  // namespace geodesic::cli
