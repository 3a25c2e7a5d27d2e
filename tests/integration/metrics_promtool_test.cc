// Every daemon of a lab scraped as Prometheus scrapes it, each answer checked
// by Prometheus's own linter (`promtool check metrics`, Debian package
// prometheus), and a fiber cut moving the numbers an operator watches: the
// link's state at pathcomp, pathcomp's solves, routerd's local repairs.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/process.h"
#include "tests/support/lab_testing.h"
#include "tests/support/metrics_testing.h"

namespace geodesic {
namespace {

using sim::LocalLab;
using std::chrono::seconds;

constexpr seconds kDeadline{30};

class MetricsPromtoolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto lab = LocalLab::Create(testing::LabOptionsFor(work_.path()));  // no probes: no flaps
    ASSERT_TRUE(lab.ok()) << lab.status();
    lab_ = *std::move(lab);
    ASSERT_TRUE(lab_->StartAll().ok());
    client_ = std::make_unique<sim::LabClient>(*lab_);
    ASSERT_TRUE(client_->WaitLinksIn(v1::OPER_STATE_UP, kDeadline).ok());
    auto converged = client_->WaitConverged({.timeout = kDeadline});
    ASSERT_TRUE(converged.ok()) << converged.status();
  }

  void TearDown() override {
    client_.reset();
    lab_.reset();
    if (HasFailure()) work_.keep();
  }

  std::string Scrape(const std::string& process) {
    auto url = lab_->AdminUrl(process);
    EXPECT_TRUE(url.ok()) << url.status();
    if (!url.ok()) return "";
    auto text = testing::ScrapeMetrics(*url);
    EXPECT_TRUE(text.ok()) << text.status();
    return text.ok() ? *text : "";
  }

  // The value of `process`'s series, 0 when absent (a counter not yet moved).
  double Value(const std::string& process, const std::string& name, const metrics::Labels& labels) {
    return testing::SeriesValue(Scrape(process), name, labels).value_or(0);
  }

  // Waits until `process`'s series `name{labels}` is above `before`.
  void ExpectRisesAbove(const std::string& process, const std::string& name, const metrics::Labels& labels,
                        double before) {
    double last = before;
    const absl::Status waited =
        sim::WaitUntil(process + " " + name + " to rise above " + std::to_string(before), kDeadline, [&] {
          last = Value(process, name, labels);
          return last > before;
        });
    EXPECT_TRUE(waited.ok()) << waited << "; last value " << last;
  }

  testing::TempDir work_{"metrics-promtool"};
  std::unique_ptr<LocalLab> lab_;
  std::unique_ptr<sim::LabClient> client_;
};

TEST_F(MetricsPromtoolTest, EveryDaemonsScrapePassesPromtool) {
  std::vector<std::string> processes = {"pathcomp"};
  for (const auto& facility : lab_->topology().facilities) {
    processes.push_back("agent/" + facility.id());
    processes.push_back("routerd/" + facility.id());
  }
  for (const std::string& process : processes) {
    const std::string text = Scrape(process);
    ASSERT_FALSE(text.empty()) << process;
    const std::string file = work_.Write("scrape.txt", text);
    auto checked = sim::RunCommand({"/bin/sh", "-c", "promtool check metrics < " + file + " 2>&1"});
    ASSERT_TRUE(checked.ok()) << checked.status();
    EXPECT_EQ(checked->exit_code, 0) << process << ": promtool check metrics:\n" << checked->output;
    EXPECT_EQ(checked->output, "") << process << ": promtool check metrics:\n" << checked->output;
  }
}

TEST_F(MetricsPromtoolTest, AFiberCutMovesLinkStateSolvesAndLocalRepairs) {
  const metrics::Labels iad_chi_down = {{"link", "iad-chi"}, {"src", "iad"}, {"dst", "chi"}, {"state", "down"}};
  const metrics::Labels by_telemetry = {{"cause", "telemetry"}};
  ASSERT_EQ(Value("pathcomp", "geodesic_pathcomp_link_oper_state", iad_chi_down), 0);
  const double solves = Value("pathcomp", "geodesic_pathcomp_solves_total", by_telemetry);
  const double repairs = Value("routerd/iad", "geodesic_routerd_local_repairs_total", {});
  const double repair_durations = Value("routerd/iad", "geodesic_routerd_local_repair_duration_seconds_count", {});

  for (const std::string link : {"iad-chi", "chi-iad"}) ASSERT_TRUE(lab_->SetLinkState(link, "down").ok());

  ExpectRisesAbove("pathcomp", "geodesic_pathcomp_link_oper_state", iad_chi_down, 0);
  ExpectRisesAbove("pathcomp", "geodesic_pathcomp_solves_total", by_telemetry, solves);
  ExpectRisesAbove("routerd/iad", "geodesic_routerd_local_repairs_total", {}, repairs);
  ExpectRisesAbove("routerd/iad", "geodesic_routerd_local_repair_duration_seconds_count", {}, repair_durations);
  // The agent that measured it says so too.
  ExpectRisesAbove("agent/iad", "geodesic_site_agent_link_state", {{"link", "iad-chi"}, {"state", "down"}}, 0);
}

}  // namespace
}  // namespace geodesic
