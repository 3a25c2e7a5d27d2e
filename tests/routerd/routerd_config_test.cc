#include "routerd/routerd_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace geodesic::routerd {
namespace {

using ::testing::HasSubstr;

constexpr char kBase[] = R"(facility: iad
pathcomp: [{address: 127.0.0.1:7443}]
tls: {ca: ca.crt, cert: r.crt, key: r.key}
state_dir: /tmp/routerd-iad
)";

constexpr char kBgp[] = R"(bgp:
  local_as: 4200000001
  router_id: 10.0.0.1
  graceful_restart_s: 300
  bandwidth_per_weight_mbps: 100
  communities: ["65001:100"]
  large_communities: ["4200000001:1:2"]
  peers:
    - {address: 127.0.0.2, port: 1179, remote_as: 65000, password: s3cret, max_prefixes: 10}
    - {address: "::1", remote_as: 4200000001, hold_time_s: 0}
  next_hops:
    - {link: iad-nyc, ipv4: 192.0.2.1, ipv6: "2001:db8::1"}
    - {link: iad-chi, ipv4: 192.0.2.2}
fail_static: {stale_after_s: 7200}
)";

TEST(RouterdConfigTest, ReadsTheBgpSection) {
  auto config = ParseRouterdConfig(std::string(kBase) + kBgp, "routerd.yaml");
  ASSERT_TRUE(config.ok()) << config.status();
  ASSERT_TRUE(config->bgp);
  const bgp::SpeakerConfig& bgp = *config->bgp;
  EXPECT_EQ(bgp.session.local_as, 4200000001u);
  EXPECT_EQ(bgp.session.router_id, 0x0a000001u);
  EXPECT_EQ(bgp.session.graceful_restart_s, 300);
  ASSERT_EQ(bgp.peers.size(), 2u);
  EXPECT_EQ(bgp.peers[0].port, 1179);
  EXPECT_EQ(bgp.peers[0].password, "s3cret");
  EXPECT_EQ(bgp.peers[0].hold_time_s, 90);
  EXPECT_EQ(bgp.peers[1].address.ToString(), "::1");
  EXPECT_EQ(bgp.peers[1].hold_time_s, 0);
  EXPECT_EQ(bgp.paths.communities, std::vector<uint32_t>{65001u << 16 | 100});
  ASSERT_EQ(bgp.paths.next_hops.size(), 2u);
  EXPECT_EQ(bgp.paths.next_hops[1].first, "iad-chi");
  EXPECT_FALSE(bgp.paths.next_hops[1].second.ipv6);
  EXPECT_EQ(config->stale_after, std::chrono::seconds(7200));
}

TEST(RouterdConfigTest, WithoutBgpRoutesAreOnlyLogged) {
  auto config = ParseRouterdConfig(kBase, "routerd.yaml");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_FALSE(config->bgp);
  EXPECT_EQ(config->stale_after, std::chrono::seconds(86400));
}

TEST(RouterdConfigTest, SuspectLinkDownReportsHaveSafeDefaultsAndAreTunable) {
  auto defaults = ParseRouterdConfig(kBase, "routerd.yaml");
  ASSERT_TRUE(defaults.ok()) << defaults.status();
  EXPECT_EQ(defaults->suspect_down.share, 1.0);  // only every link at once
  EXPECT_EQ(defaults->suspect_down.window, std::chrono::milliseconds(1000));
  auto tuned = ParseRouterdConfig(std::string(kBase) + "local_repair: {suspect_share: 0.75, suspect_window_ms: 250}\n",
                                  "routerd.yaml");
  ASSERT_TRUE(tuned.ok()) << tuned.status();
  EXPECT_EQ(tuned->suspect_down.share, 0.75);
  EXPECT_EQ(tuned->suspect_down.window, std::chrono::milliseconds(250));
}

TEST(RouterdConfigTest, LocalRepairIsOnUnlessTurnedOff) {
  auto defaults = ParseRouterdConfig(kBase, "routerd.yaml");
  ASSERT_TRUE(defaults.ok()) << defaults.status();
  EXPECT_TRUE(defaults->local_repair);
  auto off = ParseRouterdConfig(std::string(kBase) + "local_repair: {enabled: false}\n", "routerd.yaml");
  ASSERT_TRUE(off.ok()) << off.status();
  EXPECT_FALSE(off->local_repair);
  auto bad = ParseRouterdConfig(std::string(kBase) + "local_repair: {enabled: maybe}\n", "routerd.yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("enabled"), std::string::npos) << bad.status();
}

TEST(RouterdConfigTest, BadBgpInputIsNamed) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"bgp: {local_as: 0, router_id: 10.0.0.1, peers: [{address: 127.0.0.2, remote_as: 1}], next_hops: [{link: a, ipv4: 1.1.1.1}]}",
       "local_as"},
      {"bgp: {local_as: 1, router_id: 0.0.0.0, peers: [{address: 127.0.0.2, remote_as: 1}], next_hops: [{link: a, ipv4: 1.1.1.1}]}",
       "router_id"},
      {"bgp: {local_as: 1, router_id: ::1, peers: [{address: 127.0.0.2, remote_as: 1}], next_hops: [{link: a, ipv4: 1.1.1.1}]}",
       "router_id"},
      {"bgp: {local_as: 1, router_id: 10.0.0.1, peers: [{address: 127.0.0.300, remote_as: 1}], next_hops: [{link: a, ipv4: 1.1.1.1}]}",
       "address"},
      {"bgp: {local_as: 1, router_id: 10.0.0.1, peers: [{address: 127.0.0.2, remote_as: 1, hold_time_s: 2}], next_hops: [{link: a, ipv4: 1.1.1.1}]}",
       "hold_time_s"},
      {"bgp: {local_as: 1, router_id: 10.0.0.1, peers: [{address: 127.0.0.2, remote_as: 1}, {address: 127.0.0.2, remote_as: 2}], next_hops: [{link: a, ipv4: 1.1.1.1}]}",
       "configured twice"},
      {"bgp: {local_as: 1, router_id: 10.0.0.1, peers: [{address: 127.0.0.2, remote_as: 1}], next_hops: [{link: a, ipv4: \"2001:db8::1\"}]}",
       "ipv4"},
      {"bgp: {local_as: 1, router_id: 10.0.0.1, peers: [{address: 127.0.0.2, remote_as: 1}], next_hops: [{link: a}]}",
       "needs an ipv4 or ipv6"},
      {"bgp: {local_as: 1, router_id: 10.0.0.1, peers: [{address: 127.0.0.2, remote_as: 1}], next_hops: [{link: a, ipv4: 1.1.1.1}, {link: a, ipv4: 1.1.1.2}]}",
       "listed twice"},
      {"bgp: {local_as: 1, router_id: 10.0.0.1, communities: [\"70000:1\"], peers: [{address: 127.0.0.2, remote_as: 1}], next_hops: [{link: a, ipv4: 1.1.1.1}]}",
       "communities"},
      {"bgp: {local_as: 1, router_id: 10.0.0.1, peers: [{address: 127.0.0.2, remote_as: 1, colour: red}], next_hops: [{link: a, ipv4: 1.1.1.1}]}",
       "colour"},
      {"fail_static: {stale_after_s: 5}", "stale_after_s"},
      {"local_repair: {suspect_share: 0}", "suspect_share"},
      {"local_repair: {suspect_share: 1.5}", "suspect_share"},
      {"local_repair: {suspect_share: half}", "suspect_share"},
      {"local_repair: {suspect_window_ms: 0}", "suspect_window_ms"},
      {"local_repair: {suspect_window_ms: 3600000}", "suspect_window_ms"},
      {"local_repair: {suspect_windw_ms: 100}", "suspect_windw_ms"},
  };
  for (const auto& [extra, expected] : cases) {
    SCOPED_TRACE(extra);
    auto config = ParseRouterdConfig(std::string(kBase) + extra + "\n", "routerd.yaml");
    ASSERT_FALSE(config.ok());
    EXPECT_THAT(std::string(config.status().message()), HasSubstr(expected));
  }
}

}  // namespace
}  // namespace geodesic::routerd
