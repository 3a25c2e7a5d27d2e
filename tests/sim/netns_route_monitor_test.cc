// Reading `ip -ts -o monitor route` (iproute2 6.1, run with TZ=UTC): the
// stamp as UTC microseconds, the prefix whatever the route's type, deletions,
// host routes given a length, and the window of lines Changes returns.
// Lines as this machine's `ip` printed them. Pure text: no namespace.
#include "sim/netns/netns_route_monitor.h"

#include <gtest/gtest.h>

namespace geodesic::sim {
namespace {

TEST(ParseRouteMonitorLine, ReadsTheStampAsUtcMicroseconds) {
  absl::StatusOr<RouteChange> change =
      ParseRouteMonitorLine("[2026-12-05T04:38:07.452440] 10.99.99.0/24 dev lo scope link ");
  ASSERT_TRUE(change.ok()) << change.status();
  EXPECT_EQ(change->unix_us, 1796445487452440);  // calendar.timegm((2026,12,5,4,38,7)) * 1e6 + 452440
  EXPECT_EQ(change->prefix, "10.99.99.0/24");
  EXPECT_FALSE(change->deleted);
  EXPECT_EQ(change->line, "[2026-12-05T04:38:07.452440] 10.99.99.0/24 dev lo scope link ");
}

TEST(ParseRouteMonitorLine, CountsLeapDaysAndShortFractions) {
  absl::StatusOr<RouteChange> leap = ParseRouteMonitorLine("[2024-02-29T23:59:59.999999] default via 10.0.0.1 dev x");
  ASSERT_TRUE(leap.ok()) << leap.status();
  EXPECT_EQ(leap->unix_us, 1709251199999999);
  EXPECT_EQ(leap->prefix, "default");
  absl::StatusOr<RouteChange> epoch = ParseRouteMonitorLine("[1970-01-01T00:00:01.5] 10.0.0.0/8 dev x");
  ASSERT_TRUE(epoch.ok()) << epoch.status();
  EXPECT_EQ(epoch->unix_us, 1'500'000);
}

TEST(ParseRouteMonitorLine, ReadsDeletionsAndMultipathOnOneLine) {
  absl::StatusOr<RouteChange> change = ParseRouteMonitorLine(
      "[2026-12-05T04:38:07.454392] Deleted 10.2.0.0/16 nhid 20 proto bgp metric 20 \\    nexthop via 10.255.0.1 "
      "dev g0a weight 50 \\    nexthop via 10.255.0.3 dev g1a weight 50 ");
  ASSERT_TRUE(change.ok()) << change.status();
  EXPECT_TRUE(change->deleted);
  EXPECT_EQ(change->prefix, "10.2.0.0/16");
}

TEST(ParseRouteMonitorLine, SkipsTheRouteTypeAndGivesHostRoutesALength) {
  absl::StatusOr<RouteChange> local = ParseRouteMonitorLine(
      "[2026-12-05T04:38:08.000001] local 10.1.0.1 dev lo table local proto kernel scope host src 10.1.0.1 ");
  ASSERT_TRUE(local.ok()) << local.status();
  EXPECT_EQ(local->prefix, "10.1.0.1/32");
  absl::StatusOr<RouteChange> v6 = ParseRouteMonitorLine(
      "[2026-12-05T04:38:08.000002] Deleted local 2001:db8:1::1 dev lo table local proto kernel metric 0 pref medium");
  ASSERT_TRUE(v6.ok()) << v6.status();
  EXPECT_TRUE(v6->deleted);
  EXPECT_EQ(v6->prefix, "2001:db8:1::1/128");
  absl::StatusOr<RouteChange> blackhole =
      ParseRouteMonitorLine("[2026-12-05T04:38:08.000003] blackhole 192.0.2.255 table 4242 ");
  ASSERT_TRUE(blackhole.ok()) << blackhole.status();
  EXPECT_EQ(blackhole->prefix, "192.0.2.255/32");
}

TEST(ParseRouteMonitorLine, RefusesLinesWithoutAStampOrAPrefix) {
  EXPECT_FALSE(ParseRouteMonitorLine("10.2.0.0/16 dev g0a").ok());  // `ip monitor` without -ts
  EXPECT_FALSE(ParseRouteMonitorLine("Timestamp: Sat Dec  5 04:38:07 2026 452440 usec").ok());  // -t
  EXPECT_FALSE(ParseRouteMonitorLine("[2026-13-05T04:38:07.452440] 10.2.0.0/16").ok());  // no month 13
  EXPECT_FALSE(ParseRouteMonitorLine("[2026-12-05T04:38:07.452440]").ok());
  EXPECT_FALSE(ParseRouteMonitorLine("[2026-12-05T04:38:07.452440] Deleted").ok());
  absl::StatusOr<RouteChange> error = ParseRouteMonitorLine("[2026-12-05T04:38:07.452440] Cannot open netlink");
  ASSERT_FALSE(error.ok());
  EXPECT_NE(error.status().message().find("Cannot"), std::string::npos) << error.status();
}

TEST(ParseRouteMonitorOutput, KeepsCompleteLinesFromTheStartTime) {
  const std::string output =
      "[2026-12-05T04:38:07.452440] 10.2.0.0/16 proto bgp metric 20\n"
      "[2026-12-05T04:38:07.500000] Deleted 10.2.0.0/16 proto bgp metric 20\n"
      "[2026-12-05T04:38:07.600000] 10.3.0.0/16 proto bgp metric 20\n"
      "[2026-12-05T04:38:07.7";  // still being written
  absl::StatusOr<std::vector<RouteChange>> all = ParseRouteMonitorOutput(output, 0);
  ASSERT_TRUE(all.ok()) << all.status();
  ASSERT_EQ(all->size(), 3u);
  absl::StatusOr<std::vector<RouteChange>> later = ParseRouteMonitorOutput(output, 1796445487500000);
  ASSERT_TRUE(later.ok()) << later.status();
  ASSERT_EQ(later->size(), 2u);
  EXPECT_TRUE((*later)[0].deleted);
  EXPECT_EQ((*later)[1].prefix, "10.3.0.0/16");
  absl::StatusOr<std::vector<RouteChange>> none = ParseRouteMonitorOutput("", 0);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
  EXPECT_FALSE(ParseRouteMonitorOutput("garbage\n", 0).ok());
}

}  // namespace
}  // namespace geodesic::sim
