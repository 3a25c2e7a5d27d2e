// routerd's BGP speaker against a real FRRouting bgpd on loopback: FRR learns
// the routes with the intended next hops and link-bandwidth weights, follows
// changes and withdrawals, answers route refresh, and with TCP-MD5 too.
#include <gtest/gtest.h>


#include "routerd/bgp/speaker.h"
#include "sim/frr_router.h"
#include "sim/wait_until.h"
#include "tests/support/test_dirs.h"

namespace geodesic::routerd::bgp {
namespace {

using std::chrono::seconds;

constexpr uint32_t kFrrAs = 65000, kRouterdAs = 4200000001;
constexpr char kRouterdAddress[] = "127.0.0.2";

v1::ForwardingRoute Route(const std::string& prefix, std::vector<std::pair<std::string, uint32_t>> hops) {
  v1::ForwardingRoute route;
  route.set_prefix(prefix);
  for (const auto& [link, weight] : hops) {
    v1::NextHop* hop = route.add_next_hops();
    hop->set_link_id(link);
    hop->set_weight(weight);
  }
  return route;
}

class BgpFrrTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto status = sim::FrrAvailable(); !status.ok()) GTEST_SKIP() << status;
  }
  void TearDown() override {
    speaker_.reset();
    frr_.reset();
    if (HasFailure()) dir_.keep();
  }

  void StartFrr(const std::string& password = "") {
    auto frr = sim::FrrRouter::Start({.work_dir = dir_.Join("frr"), .local_as = kFrrAs, .address = "127.0.0.1",
                                      .neighbors = {{.address = kRouterdAddress, .remote_as = kRouterdAs,
                                                     .password = password}},
                                      .stalepath_time_s = 360});
    ASSERT_TRUE(frr.ok()) << frr.status();
    frr_ = *std::move(frr);
  }

  void StartSpeaker(const std::string& password = "") {
    SpeakerConfig config;
    config.session = {.local_as = kRouterdAs, .router_id = 0x7f000002, .graceful_restart_s = 120,
                      .restarting = false, .connect_retry_min = std::chrono::milliseconds(100),
                      .connect_retry_max = std::chrono::milliseconds(1000)};
    config.peers = {{.address = *IpAddress::Parse("127.0.0.1"), .port = static_cast<uint16_t>(frr_->port()),
                     .remote_as = kFrrAs, .local_address = IpAddress::Parse(kRouterdAddress), .password = password,
                     .max_prefixes = 100, .hold_time_s = 9, .ttl_security = false}};
    config.paths.local_as = kRouterdAs;
    config.paths.bandwidth_per_weight_mbps = 100;
    config.paths.next_hops = {
        {"iad-nyc", {.ipv4 = IpAddress::Parse("10.255.0.1"), .ipv6 = IpAddress::Parse("fd00::1")}},
        {"iad-chi", {.ipv4 = IpAddress::Parse("10.255.0.2"), .ipv6 = IpAddress::Parse("fd00::2")}},
        {"iad-atl", {.ipv4 = IpAddress::Parse("10.255.0.3"), .ipv6 = IpAddress::Parse("fd00::3")}}};
    speaker_ = BgpSpeaker::Start(config);
  }

  bool Established() {
    auto neighbor = frr_->Neighbor(kRouterdAddress);
    return neighbor.ok() && neighbor->state == "Established";
  }

  // Waits until FRR's table for the family equals `expected`:
  // prefix -> {next hop -> link bandwidth in bytes/s}.
  using Expected = std::map<std::string, std::map<std::string, double>>;
  ::testing::AssertionResult WaitForTable(bool ipv6, const Expected& expected) {
    std::string last;
    const bool ok = sim::WaitUntil("FRR's table", seconds(20), [&] {
          auto routes = frr_->Routes(ipv6);
          if (!routes.ok()) {
            last = routes.status().ToString();
            return false;
          }
          Expected seen;
          for (const auto& [prefix, paths] : *routes) {
            for (const sim::FrrPath& path : paths) {
              if (!path.valid) continue;
              seen[prefix][path.next_hop] = path.bandwidth_bytes;
              if (paths.size() > 1 && !path.multipath && !path.best) {
                last = prefix + ": path via " + path.next_hop + " is neither best nor multipath";
                return false;
              }
            }
          }
          if (seen == expected) return true;
          last = "FRR holds " + std::to_string(seen.size()) + " prefixes, expected " +
                 std::to_string(expected.size());
          for (const auto& [prefix, hops] : expected) {
            auto it = seen.find(prefix);
            if (it == seen.end()) {
              last += "; missing " + prefix;
              break;
            }
            if (it->second != hops) {
              last += "; " + prefix + " differs";
              break;
            }
          }
          return false;
        }).ok();
    if (ok) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << last;
  }

  testing::TempDir dir_{"bgp-frr"};
  std::unique_ptr<sim::FrrRouter> frr_;
  std::unique_ptr<BgpSpeaker> speaker_;
};

TEST_F(BgpFrrTest, FrrLearnsFollowsAndWithdrawsThePlan) {
  StartFrr();
  StartSpeaker();
  RibDiff first;
  Expected v4, v6;
  for (int i = 0; i < 300; ++i) {
    const std::string prefix = "10." + std::to_string(i / 250) + "." + std::to_string(i % 250) + ".0/24";
    first.added.push_back(Route(prefix, {{"iad-nyc", 1}, {"iad-chi", 3}}));
    v4[prefix] = {{"10.255.0.1", 1 * 100 * 125000.0}, {"10.255.0.2", 3 * 100 * 125000.0}};
  }
  for (int i = 0; i < 50; ++i) {
    char prefix[64];
    std::snprintf(prefix, sizeof prefix, "2001:db8:%x::/48", i);
    const std::string canonical = IpPrefix::Parse(prefix)->ToString();  // as FRR prints it
    first.added.push_back(Route(canonical, {{"iad-atl", 2}}));
    v6[canonical] = {{"fd00::3", 2 * 100 * 125000.0}};
  }
  ASSERT_TRUE(speaker_->Apply(first).ok());
  EXPECT_TRUE(WaitForTable(false, v4));
  EXPECT_TRUE(WaitForTable(true, v6));
  // FRR's next-hop cache (what bench_bgp polls with 100,000 prefixes) counts the same paths.
  auto next_hops = frr_->NextHopPaths();
  ASSERT_TRUE(next_hops.ok()) << next_hops.status();
  EXPECT_EQ((*next_hops)["10.255.0.1"], 300u);
  EXPECT_EQ((*next_hops)["10.255.0.2"], 300u);
  ASSERT_EQ(sim::WaitUntil("the session established", seconds(5), [&] { return Established(); }), absl::OkStatus());

  // The plan moves a third of the prefixes to other links and drops another third.
  RibDiff second;
  int index = 0;
  for (auto it = v4.begin(); it != v4.end(); ++index) {
    if (index % 3 == 0) {
      second.changed.push_back({Route(it->first, {}), Route(it->first, {{"iad-atl", 5}})});
      it->second = {{"10.255.0.3", 5 * 100 * 125000.0}};
      ++it;
    } else if (index % 3 == 1) {
      second.removed.push_back(Route(it->first, {}));
      it = v4.erase(it);
    } else {
      ++it;
    }
  }
  second.removed.push_back(Route(v6.begin()->first, {}));
  v6.erase(v6.begin());
  ASSERT_TRUE(speaker_->Apply(second).ok());
  EXPECT_TRUE(WaitForTable(false, v4));
  EXPECT_TRUE(WaitForTable(true, v6));

  // Route refresh: FRR asks for everything again and ends with the same table.
  ASSERT_TRUE(frr_->Vtysh("clear bgp ipv4 unicast * soft in").ok());
  EXPECT_TRUE(WaitForTable(false, v4));
  EXPECT_TRUE(Established());

  const auto status = speaker_->Status();
  ASSERT_EQ(status.size(), 1u);
  EXPECT_EQ(status[0].established_count, 1u);
  EXPECT_TRUE(status[0].add_path_ipv4);
  EXPECT_EQ(status[0].notifications_received, 0u);
  // 350 prefixes in a handful of messages, not one each.
  EXPECT_LT(status[0].updates_sent, 40u);
}

TEST_F(BgpFrrTest, BadInputChangesNothing) {
  StartFrr();
  StartSpeaker();
  RibDiff good;
  good.added.push_back(Route("10.9.0.0/16", {{"iad-nyc", 1}}));
  ASSERT_TRUE(speaker_->Apply(good).ok());
  EXPECT_TRUE(WaitForTable(false, {{"10.9.0.0/16", {{"10.255.0.1", 100 * 125000.0}}}}));
  RibDiff bad;
  bad.added.push_back(Route("10.8.0.0/16", {{"iad-nyc", 1}}));
  bad.added.push_back(Route("10.7.0.0/16", {{"nowhere", 1}}));
  EXPECT_EQ(speaker_->Apply(bad).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(speaker_->route_count(), 1u);
  EXPECT_TRUE(WaitForTable(false, {{"10.9.0.0/16", {{"10.255.0.1", 100 * 125000.0}}}}));
}

TEST_F(BgpFrrTest, TcpMd5) {
  StartFrr("geodesic-md5");
  StartSpeaker("geodesic-md5");
  RibDiff diff;
  diff.added.push_back(Route("10.9.0.0/16", {{"iad-nyc", 1}}));
  ASSERT_TRUE(speaker_->Apply(diff).ok());
  EXPECT_TRUE(WaitForTable(false, {{"10.9.0.0/16", {{"10.255.0.1", 100 * 125000.0}}}}));
}

}  // namespace
}  // namespace geodesic::routerd::bgp
