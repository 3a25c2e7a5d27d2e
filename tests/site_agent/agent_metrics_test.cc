// AgentMetrics declares every family of site_agent with no agent running
// (the metric reference is generated that way), and what the agent binds
// reads as Prometheus would scrape it.
#include "site_agent/agent_metrics.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "tests/support/metrics_testing.h"

namespace geodesic::site_agent {
namespace {

using metrics::Kind;

struct Expected {
  Kind kind;
  std::vector<std::string> labels;
};

TEST(AgentMetricsTest, DeclaresEveryFamilyWithItsTypeAndLabels) {
  metrics::Registry registry("site_agent", {{"facility", "iad"}, {"version", "test"}});
  AgentMetrics metrics(registry);
  const std::map<std::string, Expected> expected = {
      {"info", {Kind::kGauge, {"facility", "version"}}},
      {"probe_rtt_seconds", {Kind::kHistogram, {"link"}}},
      {"link_state", {Kind::kGauge, {"link", "state"}}},
      {"link_rtt_seconds", {Kind::kGauge, {"link"}}},
      {"link_jitter_seconds", {Kind::kGauge, {"link"}}},
      {"link_loss_ratio", {Kind::kGauge, {"link"}}},
      {"link_utilization_ratio", {Kind::kGauge, {"link"}}},
      {"link_capacity_bytes_per_second", {Kind::kGauge, {"link"}}},
      {"fabric_plane_state", {Kind::kGauge, {"plane", "state"}}},
      {"fabric_plane_failed_rails", {Kind::kGauge, {"plane"}}},
      {"reports_sent_total", {Kind::kCounter, {"replica"}}},
      {"reports_resent_total", {Kind::kCounter, {"replica"}}},
      {"reports_acked_total", {Kind::kCounter, {"replica"}}},
      {"report_snapshots_total", {Kind::kCounter, {"replica"}}},
      {"report_sessions_total", {Kind::kCounter, {"replica"}}},
      {"report_outbox_messages", {Kind::kGauge, {"replica"}}},
      {"pathcomp_connected", {Kind::kGauge, {"replica"}}},
      {"probe_requests_sent_total", {Kind::kCounter, {}}},
      {"probe_requests_answered_total", {Kind::kCounter, {}}},
      {"probe_replies_accepted_total", {Kind::kCounter, {}}},
      {"probe_packets_refused_total", {Kind::kCounter, {"reason"}}},
      {"routerd_connected", {Kind::kGauge, {}}},
      {"local_events_sent_total", {Kind::kCounter, {}}},
  };
  std::map<std::string, Expected> declared;
  for (const metrics::FamilyDoc& family : registry.Families()) {
    EXPECT_FALSE(family.help.empty()) << family.name;
    declared[family.name] = {family.kind, family.labels};
  }
  EXPECT_EQ(declared.size(), expected.size());
  for (const auto& [name, want] : expected) {
    auto it = declared.find("geodesic_site_agent_" + name);
    ASSERT_NE(it, declared.end()) << name << " is not declared";
    EXPECT_EQ(it->second.kind, want.kind) << name;
    EXPECT_EQ(it->second.labels, want.labels) << name;
  }
}

TEST(AgentMetricsTest, UnboundFamiliesHaveNoSamples) {
  metrics::Registry registry("site_agent", {});
  AgentMetrics metrics(registry);
  const std::string text = registry.Scrape();
  EXPECT_EQ(text.find("geodesic_site_agent_link_state{"), std::string::npos) << text;
  EXPECT_EQ(text.find("geodesic_site_agent_reports_sent_total{"), std::string::npos) << text;
}

TEST(AgentMetricsTest, LinksReadInBaseUnitsWithOneStateSeriesSet) {
  metrics::Registry registry("site_agent", {});
  AgentMetrics metrics(registry);
  LinkSample nyc;
  nyc.link_id = "iad-nyc";
  nyc.capacity_bytes_per_second = 100e9;
  nyc.health.set_state(v1::OPER_STATE_DEGRADED);
  nyc.health.set_rtt_us(4200);
  nyc.health.set_jitter_us(300);
  nyc.health.set_loss_ratio(0.2);
  nyc.health.set_utilization_ratio(0.5);
  LinkSample chi;
  chi.link_id = "iad-chi";  // capacity unknown
  chi.health.set_state(v1::OPER_STATE_DOWN);
  metrics.BindLinks([&] { return std::vector<LinkSample>{nyc, chi}; });

  const std::string text = registry.Scrape();
  using testing::SeriesValue;
  const std::string p = "geodesic_site_agent_";
  EXPECT_EQ(SeriesValue(text, p + "link_state", {{"link", "iad-nyc"}, {"state", "degraded"}}), 1.0);
  EXPECT_EQ(SeriesValue(text, p + "link_state", {{"link", "iad-nyc"}, {"state", "up"}}), 0.0);
  EXPECT_EQ(SeriesValue(text, p + "link_state", {{"link", "iad-nyc"}, {"state", "unknown"}}), 0.0);
  EXPECT_EQ(SeriesValue(text, p + "link_state", {{"link", "iad-chi"}, {"state", "down"}}), 1.0);
  EXPECT_DOUBLE_EQ(*SeriesValue(text, p + "link_rtt_seconds", {{"link", "iad-nyc"}}), 0.0042);
  EXPECT_DOUBLE_EQ(*SeriesValue(text, p + "link_jitter_seconds", {{"link", "iad-nyc"}}), 0.0003);
  EXPECT_DOUBLE_EQ(*SeriesValue(text, p + "link_loss_ratio", {{"link", "iad-nyc"}}), 0.2);
  EXPECT_DOUBLE_EQ(*SeriesValue(text, p + "link_utilization_ratio", {{"link", "iad-nyc"}}), 0.5);
  EXPECT_DOUBLE_EQ(*SeriesValue(text, p + "link_capacity_bytes_per_second", {{"link", "iad-nyc"}}), 100e9);
  EXPECT_EQ(SeriesValue(text, p + "link_capacity_bytes_per_second", {{"link", "iad-chi"}}), std::nullopt);

  metrics.Unbind();
  EXPECT_EQ(SeriesValue(registry.Scrape(), p + "link_rtt_seconds", {{"link", "iad-nyc"}}), std::nullopt);
}

TEST(AgentMetricsTest, PlanesProbesAndLocalEvents) {
  metrics::Registry registry("site_agent", {});
  AgentMetrics metrics(registry);
  v1::FabricPlaneHealth plane;
  plane.set_plane(3);
  plane.set_state(v1::OPER_STATE_DEGRADED);
  plane.add_failed_rails(1);
  plane.add_failed_rails(6);
  metrics.BindPlanes([&] { return std::vector<v1::FabricPlaneHealth>{plane}; });
  metrics.BindProbes([] { return probe::ProbeCounters{.requests_sent = 7, .rejected_replay = 2}; });
  metrics.BindLocalEvents([] { return LocalEventsSample{.connected = true, .messages_sent = 5}; });
  metrics.ProbeRtt("iad-nyc").Observe(0.004);

  const std::string text = registry.Scrape();
  using testing::SeriesValue;
  const std::string p = "geodesic_site_agent_";
  EXPECT_EQ(SeriesValue(text, p + "fabric_plane_state", {{"plane", "3"}, {"state", "degraded"}}), 1.0);
  EXPECT_EQ(SeriesValue(text, p + "fabric_plane_failed_rails", {{"plane", "3"}}), 2.0);
  EXPECT_EQ(SeriesValue(text, p + "probe_requests_sent_total"), 7.0);
  EXPECT_EQ(SeriesValue(text, p + "probe_packets_refused_total", {{"reason", "replay"}}), 2.0);
  EXPECT_EQ(SeriesValue(text, p + "probe_packets_refused_total", {{"reason", "malformed"}}), 0.0);
  EXPECT_EQ(SeriesValue(text, p + "routerd_connected"), 1.0);
  EXPECT_EQ(SeriesValue(text, p + "local_events_sent_total"), 5.0);
  EXPECT_EQ(SeriesValue(text, p + "probe_rtt_seconds_count", {{"link", "iad-nyc"}}), 1.0);
  EXPECT_EQ(SeriesValue(text, p + "probe_rtt_seconds_bucket", {{"link", "iad-nyc"}, {"le", "0.005"}}), 1.0);
  EXPECT_EQ(SeriesValue(text, p + "probe_rtt_seconds_bucket", {{"link", "iad-nyc"}, {"le", "0.0025"}}), 0.0);
}

}  // namespace
}  // namespace geodesic::site_agent
