// The netns drill `make test` runs: sim/drills/backbone-netns.yaml (the
// example backbone; a fiber cut and its splice, a gray failure of 5% loss
// and its repair) in network namespaces, with FRR installing the plans in
// the kernels, the agents probing the veths and UDP streams for the elephant
// flows. Beyond the drill's own expectations (its packet loss and delivered
// ratio included): at every event every kernel routes the settled plan
// exactly as planned, and the kernels' routes moved at the cut. Skipped only where namespaces cannot be made (not root) or
// FRR is missing; every namespace and process is gone when it returns.
#include "sim/drill/netns_drill.h"

#include <cstdio>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "absl/strings/str_join.h"
#include "sim/netns/netns_backbone.h"
#include "sim/netns/netns_router.h"
#include "tests/support/test_dirs.h"

namespace geodesic::sim {
namespace {

TEST(NetnsDrillTest, FiberCutGrayFailureAndRestoresWithRealPackets) {
  if (absl::Status available = NetnsBackbone::Available(); !available.ok()) {
    GTEST_SKIP() << "network namespaces unavailable: " << available.message();
  }
  if (absl::Status available = NetnsRouterAvailable(); !available.ok()) {
    GTEST_SKIP() << "FRR unavailable: " << available.message();
  }
  absl::StatusOr<DrillSpec> spec = LoadDrill(testing::SourceDir() + "/sim/drills/backbone-netns.yaml");
  ASSERT_TRUE(spec.ok()) << spec.status();
  testing::TempDir dir("netns_drill_test");
  absl::StatusOr<v1::DrillReport> report = RunNetnsDrill(
      *spec, {.source_dir = testing::SourceDir(), .binary_dir = testing::BinaryDir(), .work_dir = dir.Join("drill")});
  if (!report.ok()) dir.keep();
  ASSERT_TRUE(report.ok()) << report.status() << " (logs in " << dir.path() << ")";
  struct KeepOnFailure {
    testing::TempDir& dir;
    ~KeepOnFailure() {
      if (::testing::Test::HasFailure()) {
        dir.keep();
        std::printf("logs kept in %s\n", dir.path().c_str());
      }
    }
  } keep_on_failure{dir};

  std::vector<std::string> failed;
  for (const auto& expectation : report->expectations()) {
    std::printf("%-36s %s  %s\n", expectation.name().c_str(), expectation.ok() ? "ok" : "FAILED",
                expectation.detail().c_str());
    if (!expectation.ok()) failed.push_back(expectation.name() + ": " + expectation.detail());
  }
  EXPECT_TRUE(report->passed()) << absl::StrJoin(failed, "; ");

  const v1::DrillPackets& packets = report->packets();
  ASSERT_GT(packets.streams(), 0u) << "no traffic was sent";
  EXPECT_GT(packets.sent(), 0u);
  ASSERT_EQ(report->events_size(), 4);
  for (const v1::DrillEventOutcome& event : report->events()) {
    const v1::EventPackets& seen = event.packets();
    std::printf("%-40s streams hit %u/%u, longest loss %.1f ms (%s), recovered %llu ms, FIB %llu..%llu ms, "
                "kernels as planned at %llu ms, load error %.1f Gbps over %d links\n",
                event.event().c_str(), seen.streams_hit(), seen.streams(), seen.max_loss_ms(),
                seen.worst_stream().c_str(), static_cast<unsigned long long>(seen.last_recovered_ms()),
                static_cast<unsigned long long>(seen.fib_first_change_ms()),
                static_cast<unsigned long long>(seen.fib_last_change_ms()),
                static_cast<unsigned long long>(seen.kernels_follow_ms()), seen.max_link_load_error_gbps(),
                seen.link_loads_size());
    EXPECT_EQ(seen.streams(), packets.streams()) << event.event();
    EXPECT_EQ(seen.kernel_routes_differing_size(), 0)
        << event.event() << ": kernels not as planned: " << absl::StrJoin(seen.kernel_routes_differing(), "; ");
    // Settled: the veths' rates beside the plan's loads, for the reader.
    // Not asserted: on a loaded machine the senders fall behind and catch
    // up, and the agents' probes starve (a link flaps, the plan moves while
    // it is measured); how close they come is a speed, bench_netns's to say.
    // What the test holds to is above: every kernel routed every settled
    // plan exactly as planned.
    double planned = 0, measured = 0;
    for (const v1::LinkLoadCheck& link : seen.link_loads()) {
      planned += link.planned_gbps();
      measured += link.measured_gbps();
    }
    std::printf("%-40s veths carry %.0f of the plan's %.0f Gbps\n", event.event().c_str(), measured, planned);
    EXPECT_GT(seen.link_loads_size(), 0) << event.event() << ": no link's rate was measured";
  }
  const v1::DrillEventOutcome& cut = report->events(0);
  EXPECT_EQ(cut.event(), "fail link iad-chi");
  EXPECT_GT(cut.packets().fib_changes(), 0u) << "iad's and chi's kernels never changed a facility's route after the cut";
  EXPECT_GT(cut.replanned_at_ms(), cut.at_ms());
}

}  // namespace
}  // namespace geodesic::sim
