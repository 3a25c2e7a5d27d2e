// metrics::Registry: what it refuses to declare (a bad name aborts), what it
// lists (Families(): every family, sorted), and what a scrape shows (owned
// series, scraped samples that come and go with the state they read).
#include "metrics/metrics_registry.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <vector>

namespace geodesic::metrics {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

std::vector<std::string> Names(const std::vector<FamilyDoc>& docs) {
  std::vector<std::string> names;
  for (const FamilyDoc& doc : docs) names.push_back(doc.name);
  return names;
}

TEST(RegistryTest, FamiliesAreListedSortedWithPrefixKindHelpAndLabels) {
  Registry registry("routerd", {{"facility", "iad"}, {"version", "1.2.3"}});
  registry.Gauge("routes_installed", "Routes installed", {"router"});
  registry.Counter("bgp_updates_sent_total", "UPDATE messages sent", {"router"});
  registry.Histogram("repair_duration_seconds", "Local repair time");
  registry.ScrapedGauge("fail_static_remaining_seconds", "Fail-static time left");
  registry.ScrapedCounter("events_total", "Local events", {"kind"});
  const std::vector<FamilyDoc> docs = registry.Families();
  EXPECT_THAT(Names(docs),
              ElementsAre("geodesic_routerd_bgp_updates_sent_total", "geodesic_routerd_events_total",
                          "geodesic_routerd_fail_static_remaining_seconds", "geodesic_routerd_info",
                          "geodesic_routerd_repair_duration_seconds", "geodesic_routerd_routes_installed"));
  EXPECT_EQ(registry.prefix(), "geodesic_routerd_");
  EXPECT_EQ(docs[0].kind, Kind::kCounter);
  EXPECT_EQ(docs[0].help, "UPDATE messages sent");
  EXPECT_THAT(docs[0].labels, ElementsAre("router"));
  EXPECT_EQ(docs[1].kind, Kind::kCounter);  // scraped counters are counters
  EXPECT_EQ(docs[2].kind, Kind::kGauge);
  EXPECT_THAT(docs[3].labels, ElementsAre("facility", "version"));
  EXPECT_EQ(docs[4].kind, Kind::kHistogram);
  EXPECT_EQ(KindName(docs[4].kind), "histogram");
}

TEST(RegistryTest, ScrapeHasTypeLinesTheInfoSampleAndOwnedSeries) {
  Registry registry("site_agent", {{"facility", "iad"}});
  registry.Counter("probes_sent_total", "Probes sent", {"link"}).Add({{"link", "iad-chi"}}).Increment(3);
  registry.Gauge("links", "Links probed").Add({}).Set(2);
  registry.Histogram("probe_rtt_seconds", "Probe RTT").Add().Observe(0.003);
  const std::string text = registry.Scrape();
  EXPECT_THAT(text, HasSubstr("# TYPE geodesic_site_agent_probes_sent_total counter"));
  EXPECT_THAT(text, HasSubstr("geodesic_site_agent_probes_sent_total{link=\"iad-chi\"} 3"));
  EXPECT_THAT(text, HasSubstr("# TYPE geodesic_site_agent_links gauge"));
  EXPECT_THAT(text, HasSubstr("geodesic_site_agent_links 2"));
  EXPECT_THAT(text, HasSubstr("# TYPE geodesic_site_agent_probe_rtt_seconds histogram"));
  EXPECT_THAT(text, HasSubstr("geodesic_site_agent_probe_rtt_seconds_bucket{le=\"0.005\"} 1"));
  EXPECT_THAT(text, HasSubstr("geodesic_site_agent_probe_rtt_seconds_count 1"));
  EXPECT_THAT(text, HasSubstr("# HELP geodesic_site_agent_info "));
  EXPECT_THAT(text, HasSubstr("geodesic_site_agent_info{facility=\"iad\"} 1"));
}

TEST(RegistryTest, ScrapedSamplesFollowTheStateTheyRead) {
  Registry registry("pathcomp", {});
  ScrapedFamily& sessions = registry.ScrapedGauge("agent_sessions", "Agent sessions", {"facility"});
  ScrapedFamily& messages = registry.ScrapedCounter("messages_total", "Messages");
  // Declared, unbound: listed, but no samples and no TYPE line.
  EXPECT_THAT(Names(registry.Families()), ::testing::Contains("geodesic_pathcomp_agent_sessions"));
  EXPECT_THAT(registry.Scrape(), Not(HasSubstr("geodesic_pathcomp_agent_sessions")));

  std::vector<std::string> connected = {"iad", "chi"};
  std::atomic<int> reads{0};
  sessions.Bind([&] {
    ++reads;
    std::vector<Sample> samples;
    for (const std::string& facility : connected) samples.push_back({{{"facility", facility}}, 1});
    return samples;
  });
  messages.Bind([] { return std::vector<Sample>{{{}, 42}}; });
  std::string text = registry.Scrape();
  EXPECT_THAT(text, HasSubstr("# TYPE geodesic_pathcomp_agent_sessions gauge"));
  EXPECT_THAT(text, HasSubstr("geodesic_pathcomp_agent_sessions{facility=\"iad\"} 1"));
  EXPECT_THAT(text, HasSubstr("geodesic_pathcomp_agent_sessions{facility=\"chi\"} 1"));
  EXPECT_THAT(text, HasSubstr("# TYPE geodesic_pathcomp_messages_total counter"));
  EXPECT_THAT(text, HasSubstr("geodesic_pathcomp_messages_total 42"));
  EXPECT_EQ(reads.load(), 1);  // read when scraped, not before

  connected = {"iad"};  // chi's agent went away: its series goes with it
  text = registry.Scrape();
  EXPECT_THAT(text, HasSubstr("geodesic_pathcomp_agent_sessions{facility=\"iad\"} 1"));
  EXPECT_THAT(text, Not(HasSubstr("facility=\"chi\"")));

  connected.clear();  // no samples: no family in the text at all
  EXPECT_THAT(registry.Scrape(), Not(HasSubstr("geodesic_pathcomp_agent_sessions")));

  connected = {"iad"};
  sessions.Bind({});  // unbound again
  EXPECT_TRUE(sessions.Samples().empty());
  EXPECT_THAT(registry.Scrape(), Not(HasSubstr("geodesic_pathcomp_agent_sessions")));
}

TEST(RegistryTest, SamplesWhoseLabelsAreNotTheDeclaredOnesAreDropped) {
  Registry registry("pathcomp", {});
  registry.ScrapedGauge("link_up", "Link up", {"link"}).Bind([] {
    return std::vector<Sample>{{{{"link", "iad-chi"}}, 1},
                               {{{"facility", "iad"}}, 1},                    // another label
                               {{{"link", "chi-iad"}, {"src", "chi"}}, 1},   // one too many
                               {{}, 1}};                                      // none
  });
  const std::string text = registry.Scrape();
  EXPECT_THAT(text, HasSubstr("geodesic_pathcomp_link_up{link=\"iad-chi\"} 1"));
  EXPECT_THAT(text, Not(HasSubstr("facility=")));
  EXPECT_THAT(text, Not(HasSubstr("chi-iad")));
  EXPECT_THAT(text, Not(HasSubstr("geodesic_pathcomp_link_up 1")));
}

TEST(RegistryTest, ScrapeHandlerServesTheTextFormat) {
  Registry registry("routerd", {{"facility", "iad"}});
  const daemon::HttpResponse response = ScrapeHandler(registry)(daemon::HttpRequest{});
  EXPECT_EQ(response.status, 200);
  EXPECT_EQ(response.content_type, kTextFormatContentType);
  EXPECT_THAT(response.body, HasSubstr("geodesic_routerd_info{facility=\"iad\"} 1"));
}

// A bad declaration is a programming error: the daemon aborts at start, naming it.
class RegistryDeathTest : public ::testing::Test {
 protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

TEST_F(RegistryDeathTest, OnlyCountersEndInTotal) {
  EXPECT_DEATH(Registry("pathcomp", {}).Gauge("solves_total", "Solves"),
               "geodesic_pathcomp_solves_total: counters, and only counters, end in _total");
  EXPECT_DEATH(Registry("pathcomp", {}).ScrapedGauge("messages_total", "Messages"), "only counters, end in _total");
  EXPECT_DEATH(Registry("pathcomp", {}).Counter("solves", "Solves"), "geodesic_pathcomp_solves: counters");
  EXPECT_DEATH(Registry("pathcomp", {}).ScrapedCounter("messages", "Messages"), "counters, and only counters");
}

TEST_F(RegistryDeathTest, HistogramSeriesNamesAreReserved) {
  EXPECT_DEATH(Registry("pathcomp", {}).Gauge("latency_sum", "Latency"), "_bucket, _count and _sum");
  EXPECT_DEATH(Registry("pathcomp", {}).ScrapedGauge("links_count", "Links"), "_bucket, _count and _sum");
}

TEST_F(RegistryDeathTest, NamesAndLabelsMustBeValid) {
  EXPECT_DEATH(Registry("pathcomp", {}).Gauge("link-up", "Link up"), "\"geodesic_pathcomp_link-up\" is not a valid");
  EXPECT_DEATH(Registry("pathcomp", {}).Gauge("link_up", ""), "help text is empty");
  EXPECT_DEATH(Registry("pathcomp", {}).Gauge("link_up", "Link up", {"link-id"}), "bad label name \"link-id\"");
  EXPECT_DEATH(Registry("pathcomp", {}).Gauge("link_up", "Link up", {"__name"}), "bad label name");
  EXPECT_DEATH(Registry("pathcomp", {}).Histogram("rtt_seconds", "RTT", {"le"}), "bad label name \"le\"");
  EXPECT_DEATH(Registry("pathcomp", {}).Gauge("link_up", "Link up", {"link", "link"}), "label \"link\" repeated");
  EXPECT_DEATH(Registry("pathcomp", {}).Histogram("rtt_seconds", "RTT", {}, {0.1, 0.1}), "buckets must rise");
}

TEST_F(RegistryDeathTest, ANameIsDeclaredOnce) {
  EXPECT_DEATH(
      {
        Registry registry("pathcomp", {});
        registry.Gauge("leader", "Leader");
        registry.ScrapedGauge("leader", "Leader again");
      },
      "geodesic_pathcomp_leader: declared twice");
  EXPECT_DEATH(Registry("pathcomp", {}).Gauge("info", "Info"), "geodesic_pathcomp_info: declared twice");
}

}  // namespace
}  // namespace geodesic::metrics
