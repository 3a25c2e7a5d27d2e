// The agents' and routerd's /metrics as Prometheus scrapes them from the real
// daemons of a LocalLab: the numbers follow what the daemons do (reports
// acknowledged, probes answered, a plan installed) and what happens to them
// (the controller goes away: fail static engages). Every wait is a bounded
// poll of the scrape (sim/wait_until.h).
#include <gtest/gtest.h>

#include <signal.h>

#include <string>

#include "tests/support/lab_testing.h"
#include "tests/support/metrics_testing.h"

namespace geodesic {
namespace {

using sim::LocalLab;
using std::chrono::seconds;

constexpr seconds kDeadline{30};

class DaemonMetricsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    sim::LabOptions options = testing::LabOptionsFor(work_.path());
    options.probe_interval_ms = 10;  // the probe RTT histogram is asserted on
    auto lab = LocalLab::Create(options);
    ASSERT_TRUE(lab.ok()) << lab.status();
    lab_ = *std::move(lab);
    ASSERT_TRUE(lab_->StartAll().ok());
  }

  void TearDown() override {
    lab_.reset();
    if (HasFailure()) work_.keep();
  }

  // Waits until `process`'s series `name{labels}` satisfies `holds`; the
  // last value read goes into the failure message.
  void ExpectSeries(const std::string& process, const std::string& name, const metrics::Labels& labels,
                    const std::function<bool(double)>& holds, const std::string& what) {
    auto url = lab_->AdminUrl(process);
    ASSERT_TRUE(url.ok()) << url.status();
    std::optional<double> last;
    const absl::Status waited = sim::WaitUntil(process + " " + name + " " + what, kDeadline, [&] {
      auto text = testing::ScrapeMetrics(*url);
      if (!text.ok()) return false;
      last = testing::SeriesValue(*text, name, labels);
      return last && holds(*last);
    });
    EXPECT_TRUE(waited.ok()) << waited << "; last value " << (last ? std::to_string(*last) : "absent");
  }

  testing::TempDir work_{"daemon-metrics"};
  std::unique_ptr<LocalLab> lab_;
};

TEST_F(DaemonMetricsTest, NumbersFollowTheDaemonsAndFailStaticEngagesWithoutTheController) {
  const std::string replica = lab_->pathcomp_address();
  auto at_least = [](double bound) { return [bound](double value) { return value >= bound; }; };
  auto equals = [](double want) { return [want](double value) { return value == want; }; };

  // The agent reports to the controller and probes its links.
  ExpectSeries("agent/iad", "geodesic_site_agent_pathcomp_connected", {{"replica", replica}}, equals(1), "== 1");
  ExpectSeries("agent/iad", "geodesic_site_agent_reports_acked_total", {{"replica", replica}}, at_least(2),
               ">= 2 (snapshot and sync marker)");
  ExpectSeries("agent/iad", "geodesic_site_agent_probe_rtt_seconds_count", {{"link", "iad-chi"}}, at_least(10),
               ">= 10 answered probes");
  ExpectSeries("agent/iad", "geodesic_site_agent_link_state", {{"link", "iad-chi"}, {"state", "up"}}, equals(1),
               "== 1");
  ExpectSeries("agent/iad", "geodesic_site_agent_routerd_connected", {}, equals(1), "== 1");

  // routerd installs the controller's plan.
  ExpectSeries("routerd/iad", "geodesic_routerd_controller_connected", {{"replica", replica}}, equals(1), "== 1");
  ExpectSeries("routerd/iad", "geodesic_routerd_plan_installs_total", {}, at_least(1), ">= 1");
  ExpectSeries("routerd/iad", "geodesic_routerd_installed_plan_generation", {}, at_least(1), ">= 1");
  ExpectSeries("routerd/iad", "geodesic_routerd_routes_on_routers", {}, at_least(1), ">= 1");
  ExpectSeries("routerd/iad", "geodesic_routerd_local_events_received_total", {}, at_least(1),
               ">= 1 (the agent's snapshot)");
  ExpectSeries("routerd/iad", "geodesic_routerd_fail_static_engaged", {}, equals(0), "== 0");

  // The controller goes away: routerd keeps its routes and says for how long.
  lab_->Kill("pathcomp", SIGKILL);
  ExpectSeries("routerd/iad", "geodesic_routerd_fail_static_engaged", {}, equals(1), "== 1");
  ExpectSeries("routerd/iad", "geodesic_routerd_controller_connected", {{"replica", replica}}, equals(0), "== 0");
  ExpectSeries("routerd/iad", "geodesic_routerd_fail_static_remaining_seconds", {},
               [](double value) { return value > 0 && value < 86400; }, "counting down from stale_after (1 day)");
  ExpectSeries("agent/iad", "geodesic_site_agent_pathcomp_connected", {{"replica", replica}}, equals(0), "== 0");
}

}  // namespace
}  // namespace geodesic
