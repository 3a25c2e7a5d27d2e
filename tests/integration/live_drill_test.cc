// A drill file driving the real daemons: pathcomp, an agent and a routerd per
// facility of the example backbone, FRR bgpd behind iad's routerd; the fiber
// cut of sim/drills/backbone-link-cut.yaml, its expectations checked against
// what the daemons did.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include "sim/drill/live_drill.h"
#include "tests/support/test_dirs.h"

namespace geodesic::sim {
namespace {

using ::geodesic::testing::BinaryDir;
using ::geodesic::testing::SourceDir;

TEST(LiveDrillTest, TheLinkCutDrillHoldsOnTheRealDaemons) {
  auto spec = LoadDrill(SourceDir() + "/sim/drills/backbone-link-cut.yaml");
  ASSERT_TRUE(spec.ok()) << spec.status();
  LiveDrillOptions options;
  options.source_dir = SourceDir();
  options.binary_dir = BinaryDir();
  testing::TempDir work("live-drill");
  options.work_dir = work.path();
  auto report = RunLiveDrill(*spec, options);
  ASSERT_TRUE(report.ok()) << report.status();
  for (const auto& expectation : report->expectations()) {
    EXPECT_TRUE(expectation.ok()) << expectation.name() << ": " << expectation.detail();
  }
  ASSERT_EQ(report->events_size(), 2);
  const auto& cut = report->events(0);
  EXPECT_EQ(cut.event(), "fail link iad-nyc");
  EXPECT_GT(cut.affected_workload_ids_size(), 0);
  EXPECT_LE(cut.at_ms(), cut.detected_at_ms());
  EXPECT_LE(cut.detected_at_ms(), cut.replanned_at_ms());
  EXPECT_GT(cut.repaired_at_ms(), 0u) << "iad's routerd recorded no local repair";
  // The link loads of the routerds' own repairs are judged, not skipped.
  EXPECT_EQ(report->forwarding().repairs(), 1u);
  EXPECT_GT(cut.max_utilization_after_repair(), 0);
  EXPECT_FALSE(cut.max_utilization_after_repair_link().empty());
  std::cout << "live: cut at " << cut.at_ms() << " ms, seen by pathcomp at " << cut.detected_at_ms()
            << " ms, repaired locally at " << cut.repaired_at_ms() << " ms, new plan everywhere at "
            << cut.replanned_at_ms() << " ms; after the repair " << cut.max_utilization_after_repair() << " on "
            << cut.max_utilization_after_repair_link() << "; longest chain outage " << report->max_chain_outage_ms()
            << " ms (" << report->worst_chain() << ")\n";
  if (HasFailure()) work.keep();
}

TEST(LiveDrillTest, PlaneLossesGoThroughTheAgentsFabricSource) {
  auto spec = LoadDrill(SourceDir() + "/sim/drills/backbone-plane-loss.yaml");
  ASSERT_TRUE(spec.ok()) << spec.status();
  LiveDrillOptions options;
  options.source_dir = SourceDir();
  options.binary_dir = BinaryDir();
  testing::TempDir work("live-plane");
  options.work_dir = work.path();
  auto report = RunLiveDrill(*spec, options);
  ASSERT_TRUE(report.ok()) << report.status();
  for (const auto& expectation : report->expectations()) {
    EXPECT_TRUE(expectation.ok()) << expectation.name() << ": " << expectation.detail();
  }
  ASSERT_EQ(report->events_size(), 3);
  for (const auto& event : report->events()) {
    EXPECT_LE(event.at_ms(), event.detected_at_ms()) << event.event();  // pathcomp saw the plane's state
    EXPECT_LE(event.detected_at_ms(), event.replanned_at_ms()) << event.event();
  }
  if (HasFailure()) work.keep();
}

}  // namespace
}  // namespace geodesic::sim
