// Plan routes -> BGP paths -> the fewest UPDATEs, checked by decoding them back.
#include <gtest/gtest.h>

#include <set>

#include "routerd/bgp/route_paths.h"

namespace geodesic::routerd::bgp {
namespace {

IpPrefix P(const std::string& text) { return *IpPrefix::Parse(text); }

PathPolicy Policy() {
  PathPolicy policy;
  policy.local_as = 65001;
  policy.bandwidth_per_weight_mbps = 10;
  policy.communities = {0xfde90064};
  policy.next_hops = {{"ams-fra", {.ipv4 = IpAddress::Parse("192.0.2.1"), .ipv6 = IpAddress::Parse("2001:db8::1")}},
                      {"ams-lon", {.ipv4 = IpAddress::Parse("192.0.2.2"), .ipv6 = std::nullopt}}};
  return policy;
}

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

// Everything the messages say, applied in order to what the peer holds.
struct PeerTable {
  std::map<Nlri, PathAttributes> routes;
  size_t messages = 0;
  void Apply(const std::vector<std::vector<uint8_t>>& messages_in, const DecodeContext& context) {
    for (const auto& bytes : messages_in) {
      ++messages;
      ASSERT_LE(bytes.size(), kMaxMessageBytes);
      auto decoded = DecodeMessage(bytes, context);
      ASSERT_TRUE(std::holds_alternative<Message>(decoded));
      const auto& update = std::get<DecodedUpdate>(std::get<Message>(decoded));
      ASSERT_FALSE(update.treat_as_withdraw);
      for (const Nlri& nlri : update.update.withdrawn) routes.erase(nlri);
      for (const Nlri& nlri : update.update.announced) routes[nlri] = update.update.attributes;
    }
  }
};

TEST(PathBuilderTest, OnePathPerLinkWeightedByLinkBandwidth) {
  PathBuilder builder(Policy());
  auto built = builder.Build(Route("10.1.0.0/16", {{"ams-lon", 3}, {"ams-fra", 1}}));
  ASSERT_TRUE(built.ok()) << built.status();
  const auto& [prefix, paths] = *built;
  EXPECT_EQ(prefix, P("10.1.0.0/16"));
  ASSERT_EQ(paths.size(), 2u);
  EXPECT_EQ(paths[0].path_id, 1u);  // ams-fra, first in the config
  EXPECT_EQ(paths[0].attributes->next_hop->ToString(), "192.0.2.1");
  EXPECT_FLOAT_EQ(*LinkBandwidthOf(paths[0].attributes->extended_communities[0]), 1 * 10 * 125000.0f);
  EXPECT_EQ(paths[1].path_id, 2u);
  EXPECT_FLOAT_EQ(*LinkBandwidthOf(paths[1].attributes->extended_communities[0]), 3 * 10 * 125000.0f);
  EXPECT_EQ(paths[1].attributes->communities, std::vector<uint32_t>{0xfde90064});
  // Equal attributes are one object, so grouping compares pointers.
  auto again = builder.Build(Route("10.2.0.0/16", {{"ams-fra", 1}}));
  EXPECT_EQ(again->second[0].attributes, paths[0].attributes);
}

TEST(PathBuilderTest, ScalesARouteDownRatherThanAnnounceMoreThanFrrHolds) {
  PathPolicy policy = Policy();
  policy.bandwidth_per_weight_mbps = 1000;  // 833 x 1 Gbit/s would wrap FRR's 32-bit bytes/s
  PathBuilder builder(policy);
  auto built = builder.Build(Route("10.1.0.0/16", {{"ams-lon", 833}, {"ams-fra", 167}}));
  ASSERT_TRUE(built.ok()) << built.status();
  const auto& paths = built->second;
  ASSERT_EQ(paths.size(), 2u);
  const float fra = *LinkBandwidthOf(paths[0].attributes->extended_communities[0]);
  const float lon = *LinkBandwidthOf(paths[1].attributes->extended_communities[0]);
  EXPECT_LE(lon, kMaxAnnouncedBandwidthBytes);
  EXPECT_GT(lon, 0.99 * kMaxAnnouncedBandwidthBytes);  // as much of the range as fits
  EXPECT_NEAR(lon / fra, 833.0 / 167.0, 1e-4);
}

TEST(PathBuilderTest, RejectsWhatCannotBeAnnounced) {
  PathBuilder builder(Policy());
  EXPECT_FALSE(builder.Build(Route("10.1.2.3/16", {{"ams-fra", 1}})).ok());
  EXPECT_FALSE(builder.Build(Route("10.1.0.0/16", {{"nowhere", 1}})).ok());
  EXPECT_FALSE(builder.Build(Route("2001:db8:1::/48", {{"ams-lon", 1}})).ok());  // no IPv6 far end
  EXPECT_FALSE(builder.Build(Route("10.1.0.0/16", {{"ams-fra", 1}, {"ams-fra", 2}})).ok());
  EXPECT_TRUE(builder.Build(Route("2001:db8:1::/48", {{"ams-fra", 1}})).ok());
}

TEST(RibOutTest, ManyPrefixesFewMessagesAndExactDifferences) {
  PathBuilder builder(Policy());
  PathsByPrefix target;
  std::vector<IpPrefix> dirty;
  for (int i = 0; i < 10000; ++i) {
    const std::string prefix = "10." + std::to_string(i / 256) + "." + std::to_string(i % 256) + ".0/24";
    auto built = builder.Build(i % 2 ? Route(prefix, {{"ams-fra", 1}, {"ams-lon", 1}}) : Route(prefix, {{"ams-fra", 2}}));
    ASSERT_TRUE(built.ok());
    target[built->first] = built->second;
    dirty.push_back(built->first);
  }
  const PeerView view{.add_path_ipv4 = true, .add_path_ipv6 = true};
  const EncodeContext context{.four_octet_as = true, .add_path = true};
  const DecodeContext decode{.four_octet_as = true, .add_path_ipv4 = true, .add_path_ipv6 = true, .external_peer = true};
  const AttributeDecorator as_sent = [](const PathAttributes& a) {
    PathAttributes sent = a;
    sent.as_path = std::vector<AsPathSegment>{{.type = 2, .as_numbers = {65001}}};
    return sent;
  };
  PathsByPrefix sent;
  OutboundChanges changes;
  DiffPaths(target, dirty, view, sent, changes);
  EXPECT_EQ(changes.ipv4.announced.size(), 3u);  // three distinct attribute sets
  EXPECT_EQ(changes.ipv4.announced_count(), 15000u);
  PeerTable peer;
  peer.Apply(PackUpdates(Family::kIpv4, changes.ipv4, context, as_sent), decode);
  EXPECT_EQ(peer.routes.size(), 15000u);
  // 9 bytes per NLRI with a path id: about 450 per message, so 34 to 40 messages.
  EXPECT_LE(peer.messages, 40u);

  // Change a third of the prefixes, withdraw another third.
  std::vector<IpPrefix> changed;
  size_t index = 0;
  for (auto it = target.begin(); it != target.end(); ++index) {
    if (index % 3 == 0) {
      it->second = builder.Build(Route(it->first.ToString(), {{"ams-lon", 5}}))->second;
      changed.push_back(it->first);
      ++it;
    } else if (index % 3 == 1) {
      changed.push_back(it->first);
      it = target.erase(it);
    } else {
      ++it;
    }
  }
  OutboundChanges second;
  DiffPaths(target, changed, view, sent, second);
  const size_t before = peer.messages;
  peer.Apply(PackUpdates(Family::kIpv4, second.ipv4, context, as_sent), decode);
  EXPECT_LE(peer.messages - before, 30u);  // ~7,500 withdrawals and ~3,300 announcements
  size_t expected_routes = 0;
  for (const auto& [prefix, paths] : target) {
    expected_routes += paths.size();
    for (const BgpPath& path : paths) {
      auto it = peer.routes.find({prefix, path.path_id});
      ASSERT_NE(it, peer.routes.end()) << prefix.ToString();
      EXPECT_EQ(it->second.next_hop, path.attributes->next_hop);
      EXPECT_EQ(it->second.extended_communities, path.attributes->extended_communities);
    }
  }
  EXPECT_EQ(peer.routes.size(), expected_routes);
  EXPECT_EQ(sent, target);

  // Nothing changed: nothing to say.
  OutboundChanges none;
  DiffPaths(target, changed, view, sent, none);
  EXPECT_TRUE(none.ipv4.empty());
}

TEST(RibOutTest, WithoutAddPathOnlyTheHeaviestPathIsSent) {
  PathBuilder builder(Policy());
  PathsByPrefix target;
  auto built = builder.Build(Route("10.1.0.0/16", {{"ams-fra", 1}, {"ams-lon", 3}}));
  target[built->first] = built->second;
  PathsByPrefix sent;
  OutboundChanges changes;
  DiffPaths(target, {built->first}, PeerView{}, sent, changes);
  ASSERT_EQ(changes.ipv4.announced.size(), 1u);
  EXPECT_EQ(changes.ipv4.announced[0].second[0].path_id, 0u);
  EXPECT_EQ(changes.ipv4.announced[0].first->next_hop->ToString(), "192.0.2.2");
  // The heaviest moves: the single path is replaced, not withdrawn.
  target[built->first] = builder.Build(Route("10.1.0.0/16", {{"ams-fra", 4}, {"ams-lon", 3}}))->second;
  OutboundChanges moved;
  DiffPaths(target, {built->first}, PeerView{}, sent, moved);
  EXPECT_TRUE(moved.ipv4.withdrawn.empty());
  ASSERT_EQ(moved.ipv4.announced.size(), 1u);
  EXPECT_EQ(moved.ipv4.announced[0].first->next_hop->ToString(), "192.0.2.1");
}

TEST(RibOutTest, Ipv6WithdrawalsAndAnnouncementsPack) {
  PathBuilder builder(Policy());
  PathsByPrefix target, sent;
  std::vector<IpPrefix> dirty;
  for (int i = 0; i < 2000; ++i) {
    char text[64];
    std::snprintf(text, sizeof text, "2001:db8:%x::/48", i);
    auto built = builder.Build(Route(text, {{"ams-fra", 1}}));
    target[built->first] = built->second;
    dirty.push_back(built->first);
  }
  const DecodeContext decode{.four_octet_as = true, .add_path_ipv4 = false, .add_path_ipv6 = false, .external_peer = true};
  const AttributeDecorator as_sent = [](const PathAttributes& a) {
    PathAttributes sent = a;
    sent.as_path = std::vector<AsPathSegment>{};
    return sent;
  };
  OutboundChanges changes;
  DiffPaths(target, dirty, PeerView{}, sent, changes);
  PeerTable peer;
  peer.Apply(PackUpdates(Family::kIpv6, changes.ipv6, {}, as_sent), decode);
  EXPECT_EQ(peer.routes.size(), 2000u);
  target.clear();
  OutboundChanges gone;
  DiffPaths(target, dirty, PeerView{}, sent, gone);
  EXPECT_EQ(gone.ipv6.withdrawn.size(), 2000u);
  peer.Apply(PackUpdates(Family::kIpv6, gone.ipv6, {}, as_sent), decode);
  EXPECT_TRUE(peer.routes.empty());
  EXPECT_TRUE(sent.empty());
}

}  // namespace
}  // namespace geodesic::routerd::bgp
