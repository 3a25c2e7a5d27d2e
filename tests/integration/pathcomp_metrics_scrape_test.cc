// pathcomp's /metrics as an operator's Prometheus reads it: the real daemons
// on loopback (pathcomp, every facility's agent, iad's routerd), scraped over
// HTTP on pathcomp's admin listener. The figures say what the controller
// knows: agents connected, links measured, solves and why, what iad's routerd
// installed; a link going down moves them. Replicated (a real three-member
// etcd), each replica says whether it leads and reaches etcd. Every wait is a
// bounded poll.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <signal.h>

#include <optional>
#include <string>
#include <vector>

#include "tests/support/lab_testing.h"
#include "tests/support/metrics_testing.h"

namespace geodesic {
namespace {

using sim::LocalLab;
using sim::WaitUntil;
using std::chrono::seconds;

class PathcompMetricsScrapeTest : public ::testing::Test {
 protected:
  // Starts `replicas` pathcomp replicas (more than 1: with etcd), every
  // facility's agent and iad's routerd; Scrape() reads replica 0.
  void StartLab(int replicas) {
    sim::LabOptions options = testing::LabOptionsFor(work_.path());
    options.replicas = replicas;
    auto lab = LocalLab::Create(options);
    ASSERT_TRUE(lab.ok()) << lab.status();
    lab_ = *std::move(lab);
    ASSERT_TRUE(lab_->StartPathcomp().ok());
    for (const auto& facility : lab_->topology().facilities) ASSERT_TRUE(lab_->StartAgent(facility.id()).ok());
    ASSERT_TRUE(lab_->StartRouterd("iad").ok());
    for (int replica = 0; replica < replicas; ++replica) {
      auto url = lab_->AdminUrl(lab_->ReplicaName(replica));
      ASSERT_TRUE(url.ok()) << url.status();
      admin_urls_.push_back(*url);
    }
  }

  void TearDown() override {
    lab_.reset();
    if (HasFailure()) work_.keep();
  }

  // GET /metrics of a replica; empty when it does not answer.
  std::string Scrape(int replica = 0) {
    auto text = testing::ScrapeMetrics(admin_urls_.at(replica));
    return text.ok() ? *text : "";
  }

  std::optional<double> Value(const std::string& name, const metrics::Labels& labels = {}, int replica = 0) {
    return testing::SeriesValue(Scrape(replica), "geodesic_pathcomp_" + name, labels);
  }

  // Polls the scrape until `name{labels}` is `expected`.
  absl::Status WaitForValue(const std::string& name, const metrics::Labels& labels, double expected) {
    return WaitUntil(name + " to be " + std::to_string(expected), seconds(30),
                     [&] { return Value(name, labels) == expected; });
  }

  static metrics::Labels IadChiIn(const std::string& state) {
    return {{"link", "iad-chi"}, {"src", "iad"}, {"dst", "chi"}, {"state", state}};
  }

  testing::TempDir work_{"pathcomp-metrics"};
  std::unique_ptr<LocalLab> lab_;
  std::vector<std::string> admin_urls_;  // by replica
};

TEST_F(PathcompMetricsScrapeTest, FiguresFollowTheNetwork) {
  StartLab(1);
  sim::LabClient client(*lab_);
  ASSERT_TRUE(client.WaitLinksIn(v1::OPER_STATE_UP, seconds(60)).ok());
  auto converged = client.WaitConverged({.timeout = seconds(60), .facilities = {"iad"}});
  ASSERT_TRUE(converged.ok()) << converged.status();
  const double generation = static_cast<double>(converged->plan().generation());

  const std::string text = Scrape();
  ASSERT_FALSE(text.empty()) << "no answer from " << admin_urls_[0];
  EXPECT_THAT(text, ::testing::HasSubstr("# TYPE geodesic_pathcomp_solves_total counter"));
  auto value = [&](const std::string& name, const metrics::Labels& labels = {}) {
    return testing::SeriesValue(text, "geodesic_pathcomp_" + name, labels);
  };
  EXPECT_EQ(value("leader"), 1.0);
  EXPECT_EQ(value("plan_generation"), generation);
  EXPECT_EQ(value("replan_pending"), 0.0);
  EXPECT_EQ(value("solves_total", {{"cause", "startup"}}), 1.0);
  EXPECT_GE(value("solves_total", {{"cause", "telemetry"}}).value_or(0), 1.0);  // the links came up
  EXPECT_EQ(value("solve_failures_total"), 0.0);
  for (const auto& facility : lab_->topology().facilities) {
    EXPECT_EQ(value("agent_sessions_connected", {{"facility", facility.id()}}), 1.0) << facility.id();
  }
  EXPECT_GE(value("telemetry_messages_total", {{"result", "applied"}}).value_or(0), 8.0);
  EXPECT_EQ(value("telemetry_refused_total", {{"reason", "invalid"}}), 0.0);
  EXPECT_GE(value("telemetry_commit_duration_seconds_count").value_or(0), 8.0);
  // A measurement delta (iad's agent reads a new RTT off its health file)
  // carries its measured_at: the applied delta counts its age.
  ASSERT_TRUE(lab_->SetLinkHealth("iad-chi", "rtt_us: 12345").ok());
  EXPECT_TRUE(WaitUntil("a measurement delta's age in geodesic_pathcomp_telemetry_measurement_age_seconds", seconds(30),
                        [&] { return Value("telemetry_measurement_age_seconds_count", {}).value_or(0) >= 1; })
                  .ok());
  EXPECT_EQ(value("link_oper_state", IadChiIn("up")), 1.0);
  EXPECT_EQ(value("link_usable", {{"link", "iad-chi"}, {"src", "iad"}, {"dst", "chi"}}), 1.0);
  // iad's routerd installed the plan; no other routerd runs.
  EXPECT_EQ(value("site_installed_generation", {{"facility", "iad"}}), generation);
  EXPECT_EQ(value("site_install_lag_generations", {{"facility", "iad"}}), 0.0);
  EXPECT_EQ(value("site_installed_generation", {{"facility", "chi"}}), 0.0);
  EXPECT_EQ(value("site_install_lag_generations", {{"facility", "chi"}}), generation);
  EXPECT_EQ(value("chains", {{"budget", "gt_100ms"}}), 1.0);  // the example's rag-nyc: 150 ms
  EXPECT_EQ(value("chains_unplaced", {{"budget", "gt_100ms"}}), 0.0);
  EXPECT_EQ(value("etcd_reachable"), std::nullopt);  // standalone

  // iad-chi goes down: the state set moves, and a telemetry solve makes a plan iad installs.
  const double telemetry_solves = value("solves_total", {{"cause", "telemetry"}}).value_or(0);
  ASSERT_TRUE(lab_->SetLinkState("iad-chi", "down").ok());
  ASSERT_TRUE(WaitForValue("link_oper_state", IadChiIn("down"), 1).ok());
  EXPECT_EQ(Value("link_oper_state", IadChiIn("up")), 0.0);
  EXPECT_EQ(Value("link_usable", {{"link", "iad-chi"}, {"src", "iad"}, {"dst", "chi"}}), 0.0);
  auto after = client.WaitConverged({.timeout = seconds(60), .facilities = {"iad"}});
  ASSERT_TRUE(after.ok()) << after.status();
  ASSERT_GT(after->plan().generation(), converged->plan().generation());
  EXPECT_GT(Value("solves_total", {{"cause", "telemetry"}}).value_or(0), telemetry_solves);
  EXPECT_EQ(Value("site_installed_generation", {{"facility", "iad"}}),
            static_cast<double>(after->plan().generation()));

  // chi's agent goes away: no stream of chi any more.
  lab_->Kill("agent/chi", SIGKILL);
  EXPECT_TRUE(WaitForValue("agent_sessions_connected", {{"facility", "chi"}}, 0).ok());
}

// Replicated: one replica leads (its epoch, the sites' installs); every
// replica reaches etcd; the followers' plans go nowhere, so they show no
// site installs and epoch 0.
TEST_F(PathcompMetricsScrapeTest, ReplicasSayWhoLeadsAndWhetherEtcdAnswers) {
  StartLab(3);
  int leader = -1;
  const absl::Status elected = WaitUntil("exactly one replica to lead", seconds(60), [&] {
    int leaders = 0;
    for (int replica = 0; replica < 3; ++replica) {
      if (Value("leader", {}, replica) == 1.0) {
        ++leaders;
        leader = replica;
      }
    }
    return leaders == 1;
  });
  ASSERT_TRUE(elected.ok()) << elected;
  sim::LabClient client(*lab_, leader);
  auto converged = client.WaitConverged({.timeout = seconds(60), .facilities = {"iad"}});
  ASSERT_TRUE(converged.ok()) << converged.status();
  for (int replica = 0; replica < 3; ++replica) {
    SCOPED_TRACE(lab_->ReplicaName(replica));
    const std::string text = Scrape(replica);
    auto value = [&](const std::string& name, const metrics::Labels& labels = {}) {
      return testing::SeriesValue(text, "geodesic_pathcomp_" + name, labels);
    };
    EXPECT_EQ(value("etcd_reachable"), 1.0);
    EXPECT_THAT(text, ::testing::HasSubstr("replica=\"" + lab_->ReplicaId(replica) + "\""));  // _info
    if (replica == leader) {
      EXPECT_EQ(value("leader_epoch"), static_cast<double>(converged->plan().epoch()));
      EXPECT_EQ(value("site_installed_generation", {{"facility", "iad"}}),
                static_cast<double>(converged->plan().generation()));
    } else {
      EXPECT_EQ(value("leader"), 0.0);
      EXPECT_EQ(value("leader_epoch"), 0.0);
      EXPECT_EQ(value("site_installed_generation", {{"facility", "iad"}}), std::nullopt);
    }
  }
}

}  // namespace
}  // namespace geodesic
