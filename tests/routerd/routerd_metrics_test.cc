// RouterdMetrics declares every family of routerd with no routerd running
// (the metric reference is generated that way), and what routerd binds
// reads as Prometheus would scrape it.
#include "routerd/routerd_metrics.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "tests/support/metrics_testing.h"

namespace geodesic::routerd {
namespace {

using metrics::Kind;
using testing::SeriesValue;

const std::string kPrefix = "geodesic_routerd_";

struct Expected {
  Kind kind;
  std::vector<std::string> labels;
};

TEST(RouterdMetricsTest, DeclaresEveryFamilyWithItsTypeAndLabels) {
  metrics::Registry registry("routerd", {{"facility", "iad"}, {"version", "test"}});
  RouterdMetrics metrics(registry);
  const std::map<std::string, Expected> expected = {
      {"info", {Kind::kGauge, {"facility", "version"}}},
      {"plan_installs_total", {Kind::kCounter, {}}},
      {"plans_refused_total", {Kind::kCounter, {"reason"}}},
      {"local_repairs_total", {Kind::kCounter, {}}},
      {"local_repair_routes_total", {Kind::kCounter, {}}},
      {"local_repair_failures_total", {Kind::kCounter, {}}},
      {"local_repair_duration_seconds", {Kind::kHistogram, {}}},
      {"suspect_down_holds_total", {Kind::kCounter, {}}},
      {"installed_plan_generation", {Kind::kGauge, {}}},
      {"installed_plan_epoch", {Kind::kGauge, {}}},
      {"routes_on_routers", {Kind::kGauge, {}}},
      {"local_repair_down_links", {Kind::kGauge, {}}},
      {"suspect_down_links", {Kind::kGauge, {}}},
      {"fail_static_engaged", {Kind::kGauge, {}}},
      {"fail_static_remaining_seconds", {Kind::kGauge, {}}},
      {"controller_connected", {Kind::kGauge, {"replica"}}},
      {"bgp_session_up", {Kind::kGauge, {"peer"}}},
      {"bgp_session_state", {Kind::kGauge, {"peer", "state"}}},
      {"bgp_sessions_established_total", {Kind::kCounter, {"peer"}}},
      {"bgp_updates_sent_total", {Kind::kCounter, {"peer"}}},
      {"bgp_updates_received_total", {Kind::kCounter, {"peer"}}},
      {"bgp_prefixes_advertised", {Kind::kGauge, {"peer"}}},
      {"bgp_prefix_announcements_total", {Kind::kCounter, {"peer"}}},
      {"bgp_prefix_withdrawals_total", {Kind::kCounter, {"peer"}}},
      {"bgp_prefixes_received", {Kind::kGauge, {"peer"}}},
      {"bgp_notifications_sent_total", {Kind::kCounter, {"peer"}}},
      {"bgp_notifications_received_total", {Kind::kCounter, {"peer"}}},
      {"bgp_treat_as_withdraw_total", {Kind::kCounter, {"peer"}}},
      {"bgp_attributes_discarded_total", {Kind::kCounter, {"peer"}}},
      {"local_events_received_total", {Kind::kCounter, {}}},
      {"local_events_refused_total", {Kind::kCounter, {"reason"}}},
  };
  std::map<std::string, Expected> declared;
  for (const metrics::FamilyDoc& family : registry.Families()) {
    EXPECT_FALSE(family.help.empty()) << family.name;
    declared[family.name] = {family.kind, family.labels};
  }
  EXPECT_EQ(declared.size(), expected.size());
  for (const auto& [name, want] : expected) {
    auto it = declared.find(kPrefix + name);
    ASSERT_NE(it, declared.end()) << name << " is not declared";
    EXPECT_EQ(it->second.kind, want.kind) << name;
    EXPECT_EQ(it->second.labels, want.labels) << name;
  }
}

TEST(RouterdMetricsTest, BgpPeersReadFromTheSpeakersStatus) {
  metrics::Registry registry("routerd", {});
  RouterdMetrics metrics(registry);
  bgp::PeerStatus up;
  up.peer = "192.0.2.1:179";
  up.state = "Established";
  up.established_count = 2;
  up.updates_sent = 40;
  up.updates_received = 3;
  up.prefixes_advertised = 12;
  bgp::PeerStatus down;
  down.peer = "192.0.2.2:179";
  down.state = "Connect";
  metrics.BindBgpPeers([&] { return std::vector<bgp::PeerStatus>{up, down}; });

  const std::string text = registry.Scrape();
  const metrics::Labels r1 = {{"peer", "192.0.2.1:179"}}, r2 = {{"peer", "192.0.2.2:179"}};
  EXPECT_EQ(SeriesValue(text, kPrefix + "bgp_session_up", r1), 1.0);
  EXPECT_EQ(SeriesValue(text, kPrefix + "bgp_session_up", r2), 0.0);
  EXPECT_EQ(SeriesValue(text, kPrefix + "bgp_session_state", {{"peer", "192.0.2.2:179"}, {"state", "Connect"}}), 1.0);
  EXPECT_EQ(SeriesValue(text, kPrefix + "bgp_session_state", {{"peer", "192.0.2.2:179"}, {"state", "Established"}}),
            0.0);
  EXPECT_EQ(SeriesValue(text, kPrefix + "bgp_sessions_established_total", r1), 2.0);
  EXPECT_EQ(SeriesValue(text, kPrefix + "bgp_updates_sent_total", r1), 40.0);
  EXPECT_EQ(SeriesValue(text, kPrefix + "bgp_updates_received_total", r1), 3.0);
  EXPECT_EQ(SeriesValue(text, kPrefix + "bgp_prefixes_advertised", r1), 12.0);
  EXPECT_EQ(SeriesValue(text, kPrefix + "bgp_prefixes_advertised", r2), 0.0);
}

TEST(RouterdMetricsTest, ControllersAndFailStatic) {
  metrics::Registry registry("routerd", {});
  RouterdMetrics metrics(registry);
  metrics.BindControllers([] {
    return ControllersSample{.fail_static_engaged = true,
                             .fail_static_remaining_seconds = 1500,
                             .replicas = {{"10.0.0.1:7443", false}, {"10.0.0.2:7443", false}}};
  });
  const std::string text = registry.Scrape();
  EXPECT_EQ(SeriesValue(text, kPrefix + "fail_static_engaged"), 1.0);
  EXPECT_EQ(SeriesValue(text, kPrefix + "fail_static_remaining_seconds"), 1500.0);
  EXPECT_EQ(SeriesValue(text, kPrefix + "controller_connected", {{"replica", "10.0.0.2:7443"}}), 0.0);
  metrics.Unbind();
  EXPECT_EQ(SeriesValue(registry.Scrape(), kPrefix + "fail_static_engaged"), std::nullopt);
}

}  // namespace
}  // namespace geodesic::routerd
