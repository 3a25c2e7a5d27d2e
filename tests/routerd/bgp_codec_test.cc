// The BGP codec: round trips, framing, and every RFC 7606 outcome class.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include "routerd/bgp/message.h"

namespace geodesic::routerd::bgp {
namespace {

IpPrefix P(const char* text) {
  auto prefix = IpPrefix::Parse(text);
  EXPECT_TRUE(prefix) << text;
  return prefix.value_or(IpPrefix{});
}
IpAddress A(const char* text) {
  auto address = IpAddress::Parse(text);
  EXPECT_TRUE(address) << text;
  return address.value_or(IpAddress{});
}

// A whole UPDATE from raw fields, for crafting malformed ones.
std::vector<uint8_t> RawUpdate(const std::vector<uint8_t>& withdrawn, const std::vector<uint8_t>& attributes,
                               const std::vector<uint8_t>& nlri) {
  std::vector<uint8_t> m(16, 0xff);
  const size_t length = kHeaderBytes + 4 + withdrawn.size() + attributes.size() + nlri.size();
  m.push_back(static_cast<uint8_t>(length >> 8));
  m.push_back(static_cast<uint8_t>(length));
  m.push_back(2);
  m.push_back(static_cast<uint8_t>(withdrawn.size() >> 8));
  m.push_back(static_cast<uint8_t>(withdrawn.size()));
  m.insert(m.end(), withdrawn.begin(), withdrawn.end());
  m.push_back(static_cast<uint8_t>(attributes.size() >> 8));
  m.push_back(static_cast<uint8_t>(attributes.size()));
  m.insert(m.end(), attributes.begin(), attributes.end());
  m.insert(m.end(), nlri.begin(), nlri.end());
  return m;
}

// One path attribute: flags, type, one-octet length, value. Sized once and
// filled in place: growing a 3-byte vector by insert() makes GCC 12 at -O2
// warn -Warray-bounds inside libstdc++'s relocation (a known GCC 12 false positive).
std::vector<uint8_t> Attr(uint8_t flags, uint8_t type, const std::vector<uint8_t>& value) {
  std::vector<uint8_t> a(3 + value.size());
  a[0] = flags;
  a[1] = type;
  a[2] = static_cast<uint8_t>(value.size());
  std::copy(value.begin(), value.end(), a.begin() + 3);
  return a;
}

std::vector<uint8_t> Cat(std::initializer_list<std::vector<uint8_t>> parts) {
  std::vector<uint8_t> all;
  for (const auto& part : parts) all.insert(all.end(), part.begin(), part.end());
  return all;
}

const std::vector<uint8_t> kOrigin = Attr(0x40, 1, {0});
const std::vector<uint8_t> kAsPath = Attr(0x40, 2, {2, 1, 0, 0, 0xfd, 0xe9});  // AS_SEQUENCE [65001]
const std::vector<uint8_t> kNextHop = Attr(0x40, 3, {192, 0, 2, 1});
const std::vector<uint8_t> kNlri = {24, 10, 1, 2};  // 10.1.2.0/24

DecodedUpdate DecodeOk(const std::vector<uint8_t>& message, DecodeContext context = {}) {
  auto decoded = DecodeMessage(message, context);
  if (auto* error = std::get_if<BgpError>(&decoded)) {
    ADD_FAILURE() << "unexpected reset: " << DescribeNotification(error->code, error->subcode) << ": "
                  << error->reason;
    return {};
  }
  return std::get<DecodedUpdate>(std::get<Message>(decoded));
}

BgpError DecodeReset(const std::vector<uint8_t>& message, DecodeContext context = {}) {
  auto decoded = DecodeMessage(message, context);
  if (auto* error = std::get_if<BgpError>(&decoded)) return *error;
  ADD_FAILURE() << "expected a session reset";
  return {};
}

TEST(IpPrefixTest, ParsesAndRejects) {
  EXPECT_EQ(P("10.1.0.0/16").ToString(), "10.1.0.0/16");
  EXPECT_EQ(P("2001:db8::/32").ToString(), "2001:db8::/32");
  EXPECT_EQ(P("0.0.0.0/0").WireBytes(), 0);
  EXPECT_FALSE(IpPrefix::Parse("10.1.2.3/16"));  // host bits
  EXPECT_FALSE(IpPrefix::Parse("10.1.0.0/33"));
  EXPECT_FALSE(IpPrefix::Parse("10.1.0.0"));
  EXPECT_FALSE(IpPrefix::Parse("2001:db8::/129"));
  EXPECT_FALSE(IpPrefix::Parse("10.1.0.0/1x"));
  EXPECT_FALSE(IpAddress::Parse("300.1.1.1"));
  EXPECT_EQ(A("2001:db8::1").ToString(), "2001:db8::1");
}

TEST(BgpOpenTest, RoundTripsEveryCapability) {
  OpenMessage open{.version = 4, .as_number = 4200000001, .hold_time_s = 90, .bgp_id = 0x0a000001,
                   .capabilities = {}};
  open.capabilities.multiprotocol = {{kAfiIpv4, kSafiUnicast}, {kAfiIpv6, kSafiUnicast}};
  open.capabilities.four_octet_as = 4200000001;
  open.capabilities.route_refresh = true;
  open.capabilities.add_path = {{.family = {kAfiIpv4, kSafiUnicast}, .send_receive = kAddPathSend}};
  open.capabilities.graceful_restart =
      GracefulRestart{.restarting = true, .restart_time_s = 120,
                      .families = {{.family = {kAfiIpv6, kSafiUnicast}, .forwarding_preserved = true}}};
  const auto bytes = EncodeOpen(open);
  ASSERT_EQ(std::get<size_t>(FrameLength(bytes)), bytes.size());
  auto decoded = DecodeMessage(bytes, {});
  ASSERT_TRUE(std::holds_alternative<Message>(decoded));
  const auto& back = std::get<OpenMessage>(std::get<Message>(decoded));
  EXPECT_EQ(back, open);
}

TEST(BgpOpenTest, BadOpenGetsTheRfcNotification) {
  auto encode = [](auto mutate) {
    OpenMessage open{.version = 4, .as_number = 65001, .hold_time_s = 90, .bgp_id = 1, .capabilities = {}};
    mutate(open);
    return EncodeOpen(open);
  };
  auto version = encode([](OpenMessage&) {});
  version[kHeaderBytes] = 3;
  EXPECT_EQ(DecodeReset(version).subcode, error::kUnsupportedVersion);
  EXPECT_EQ(DecodeReset(encode([](OpenMessage& o) { o.hold_time_s = 2; })).subcode, error::kUnacceptableHoldTime);
  EXPECT_EQ(DecodeReset(encode([](OpenMessage& o) { o.bgp_id = 0; })).subcode, error::kBadBgpId);
  EXPECT_EQ(DecodeReset(encode([](OpenMessage& o) { o.as_number = 0; })).subcode, error::kBadPeerAs);
  auto param = encode([](OpenMessage& o) { o.capabilities.route_refresh = true; });
  param[kHeaderBytes + 10] = 1;  // first optional parameter: not a capability
  const BgpError error = DecodeReset(param);
  EXPECT_EQ(error.code, error::kOpen);
  EXPECT_EQ(error.subcode, error::kUnsupportedOptionalParameter);
}

TEST(BgpFramingTest, HeaderErrors) {
  auto keepalive = EncodeKeepalive();
  EXPECT_EQ(std::get<size_t>(FrameLength(std::span(keepalive).first(10))), 0u);  // needs more
  auto marker = keepalive;
  marker[3] = 0;
  EXPECT_EQ(std::get<BgpError>(FrameLength(marker)).subcode, error::kConnectionNotSynchronized);
  auto length = keepalive;
  length[17] = 20;
  EXPECT_EQ(std::get<BgpError>(FrameLength(length)).subcode, error::kBadMessageLength);
  auto huge = keepalive;
  huge[16] = 0x20;  // 8211 bytes
  huge[18] = 2;
  EXPECT_EQ(std::get<BgpError>(FrameLength(huge)).subcode, error::kBadMessageLength);
  auto type = keepalive;
  type[18] = 9;
  EXPECT_EQ(std::get<BgpError>(FrameLength(type)).subcode, error::kBadMessageType);
}

TEST(BgpUpdateTest, Ipv4RoundTripWithAddPathAndCommunities) {
  PathAttributes attributes;
  attributes.origin = Origin::kIgp;
  attributes.as_path = std::vector<AsPathSegment>{{.type = 2, .as_numbers = {4200000001}}};
  attributes.next_hop = A("192.0.2.7");
  attributes.med = 5;
  attributes.communities = {0xfde90001};
  attributes.extended_communities = {LinkBandwidthCommunity(65001, 1.25e9f)};
  attributes.large_communities = {{4200000001, 1, 2}};
  const std::vector<Nlri> announced = {{P("10.1.0.0/16"), 3}, {P("10.2.3.0/24"), 3}};
  const std::vector<Nlri> withdrawn = {{P("10.9.0.0/16"), 1}};
  const auto bytes = EncodeUpdate(Family::kIpv4, withdrawn, announced, attributes,
                                  {.four_octet_as = true, .add_path = true});
  const DecodedUpdate decoded = DecodeOk(bytes, {.four_octet_as = true, .add_path_ipv4 = true,
                                                 .add_path_ipv6 = false, .external_peer = true});
  EXPECT_FALSE(decoded.treat_as_withdraw);
  EXPECT_TRUE(decoded.problems.empty());
  EXPECT_EQ(decoded.update.announced, announced);
  EXPECT_EQ(decoded.update.withdrawn, withdrawn);
  EXPECT_EQ(decoded.update.attributes, attributes);
  EXPECT_FLOAT_EQ(*LinkBandwidthOf(decoded.update.attributes.extended_communities[0]), 1.25e9f);
  EXPECT_EQ(bytes.size(), kHeaderBytes + 4 + AttributesWireBytes(Family::kIpv4, attributes, {true, true}) +
                              NlriWireBytes(withdrawn[0], true) + NlriWireBytes(announced[0], true) +
                              NlriWireBytes(announced[1], true));
}

TEST(BgpUpdateTest, Ipv6RoundTripThroughMultiprotocolAttributes) {
  PathAttributes attributes;
  attributes.origin = Origin::kIgp;
  attributes.as_path = std::vector<AsPathSegment>{};
  attributes.next_hop = A("2001:db8::7");
  attributes.local_pref = 100;
  const std::vector<Nlri> announced = {{P("2001:db8:1::/48"), 0}, {P("2001:db8:2::/64"), 0}};
  const auto bytes = EncodeUpdate(Family::kIpv6, {}, announced, attributes, {.four_octet_as = true, .add_path = false});
  const DecodedUpdate decoded =
      DecodeOk(bytes, {.four_octet_as = true, .add_path_ipv4 = false, .add_path_ipv6 = false, .external_peer = false});
  EXPECT_EQ(decoded.update.announced, announced);
  EXPECT_EQ(decoded.update.attributes, attributes);
  const std::vector<Nlri> withdrawn = {{P("2001:db8:1::/48"), 0}};
  const DecodedUpdate gone = DecodeOk(EncodeUpdate(Family::kIpv6, withdrawn, {}, {}, {}));
  EXPECT_EQ(gone.update.withdrawn, withdrawn);
  EXPECT_FALSE(gone.update.end_of_rib);
}

TEST(BgpUpdateTest, EndOfRibMarkers) {
  EXPECT_EQ(DecodeOk(EncodeEndOfRib({kAfiIpv4, kSafiUnicast})).update.end_of_rib, (AfiSafi{kAfiIpv4, kSafiUnicast}));
  EXPECT_EQ(DecodeOk(EncodeEndOfRib({kAfiIpv6, kSafiUnicast})).update.end_of_rib, (AfiSafi{kAfiIpv6, kSafiUnicast}));
}

TEST(BgpUpdateTest, TwoOctetSpeakerPaths) {
  const auto path2 = Attr(0x40, 2, {2, 2, 0xfd, 0xe9, 0x5b, 0xa0});  // [65001, 23456]
  const DecodedUpdate decoded =
      DecodeOk(RawUpdate({}, Cat({kOrigin, path2, kNextHop}), kNlri), {.four_octet_as = false});
  ASSERT_TRUE(decoded.update.attributes.as_path);
  EXPECT_EQ((*decoded.update.attributes.as_path)[0].as_numbers, (std::vector<uint32_t>{65001, kAsTrans}));
}

// RFC 7606 class: treat-as-withdraw.
TEST(Rfc7606Test, TreatAsWithdraw) {
  const std::vector<std::pair<const char*, std::vector<uint8_t>>> cases = {
      {"invalid ORIGIN value", Cat({Attr(0x40, 1, {7}), kAsPath, kNextHop})},
      {"ORIGIN flagged optional", Cat({Attr(0xc0, 1, {0}), kAsPath, kNextHop})},
      {"malformed AS_PATH", Cat({kOrigin, Attr(0x40, 2, {2, 3, 0, 0}), kNextHop})},
      {"AS_PATH segment type 9", Cat({kOrigin, Attr(0x40, 2, {9, 1, 0, 0, 0, 1}), kNextHop})},
      {"NEXT_HOP length 5", Cat({kOrigin, kAsPath, Attr(0x40, 3, {1, 2, 3, 4, 5})})},
      {"missing NEXT_HOP", Cat({kOrigin, kAsPath})},
      {"missing ORIGIN", Cat({kAsPath, kNextHop})},
      {"missing AS_PATH", Cat({kOrigin, kNextHop})},
      {"MED length 3", Cat({kOrigin, kAsPath, kNextHop, Attr(0x80, 4, {0, 0, 1})})},
      {"COMMUNITIES length 6", Cat({kOrigin, kAsPath, kNextHop, Attr(0xc0, 8, {1, 2, 3, 4, 5, 6})})},
      {"EXTENDED_COMMUNITIES length 7", Cat({kOrigin, kAsPath, kNextHop, Attr(0xc0, 16, {1, 2, 3, 4, 5, 6, 7})})},
      {"LARGE_COMMUNITY length 8", Cat({kOrigin, kAsPath, kNextHop, Attr(0xc0, 32, {1, 2, 3, 4, 5, 6, 7, 8})})},
      {"attribute overruns the list", Cat({kOrigin, kAsPath, kNextHop, std::vector<uint8_t>{0xc0, 8, 40, 1, 2}})},
  };
  for (const auto& [name, attributes] : cases) {
    SCOPED_TRACE(name);
    const DecodedUpdate decoded = DecodeOk(RawUpdate({}, attributes, kNlri));
    EXPECT_TRUE(decoded.treat_as_withdraw);
    EXPECT_TRUE(decoded.update.announced.empty());
    ASSERT_EQ(decoded.update.withdrawn.size(), 1u);
    EXPECT_EQ(decoded.update.withdrawn[0].prefix, P("10.1.2.0/24"));
    EXPECT_FALSE(decoded.problems.empty());
  }
}

// RFC 7606 class: attribute discard (the route stays).
TEST(Rfc7606Test, AttributeDiscard) {
  const std::vector<std::pair<const char*, std::vector<uint8_t>>> cases = {
      {"ATOMIC_AGGREGATE with a value", Attr(0x40, 6, {1})},
      {"AGGREGATOR length 3", Attr(0xc0, 7, {1, 2, 3})},
      {"LOCAL_PREF from an external peer", Attr(0x40, 5, {0, 0, 0, 100})},
      {"ORIGINATOR_ID from an external peer", Attr(0x80, 9, {1, 2, 3, 4})},
      {"AS4_PATH from a 4-octet speaker", Attr(0xc0, 17, {2, 1, 0, 0, 0, 1})},
      {"a repeated COMMUNITIES", Cat({Attr(0xc0, 8, {0, 0, 0, 1}), Attr(0xc0, 8, {0, 0, 0, 2})})},
  };
  for (const auto& [name, extra] : cases) {
    SCOPED_TRACE(name);
    const DecodedUpdate decoded = DecodeOk(RawUpdate({}, Cat({kOrigin, kAsPath, kNextHop, extra}), kNlri));
    EXPECT_FALSE(decoded.treat_as_withdraw);
    EXPECT_FALSE(decoded.problems.empty());
    ASSERT_EQ(decoded.update.announced.size(), 1u);
    EXPECT_FALSE(decoded.update.attributes.local_pref);
  }
  // An unrecognized optional attribute is no problem at all.
  const DecodedUpdate unknown = DecodeOk(RawUpdate({}, Cat({kOrigin, kAsPath, kNextHop, Attr(0xc0, 99, {1})}), kNlri));
  EXPECT_TRUE(unknown.problems.empty());
  EXPECT_EQ(unknown.update.announced.size(), 1u);
}

// RFC 7606 class: session reset, with the NOTIFICATION the RFC names.
TEST(Rfc7606Test, SessionReset) {
  const std::vector<uint8_t> mp_reach_v6 = Attr(0x80, 14, Cat({{0, 2, 1, 16}, std::vector<uint8_t>(16, 0x20), {0},
                                                              {32, 0x20, 0x01, 0x0d, 0xb8}}));
  struct Case {
    const char* name;
    std::vector<uint8_t> message;
    uint8_t subcode;
  };
  const std::vector<Case> cases = {
      {"withdrawn length past the message", [] {
         auto m = RawUpdate({}, Cat({kOrigin, kAsPath, kNextHop}), kNlri);
         m[kHeaderBytes + 1] = 200;
         return m;
       }(), error::kMalformedAttributeList},
      {"withdrawn prefix length 40", RawUpdate({40, 1, 2, 3, 4, 5}, {}, {}), error::kMalformedAttributeList},
      {"NLRI prefix length 33", RawUpdate({}, Cat({kOrigin, kAsPath, kNextHop}), {33, 1, 2, 3, 4, 5}),
       error::kInvalidNetworkField},
      {"NLRI cut short", RawUpdate({}, Cat({kOrigin, kAsPath, kNextHop}), {24, 10, 1}), error::kInvalidNetworkField},
      {"MP_REACH_NLRI twice", RawUpdate({}, Cat({kOrigin, kAsPath, mp_reach_v6, mp_reach_v6}), {}),
       error::kMalformedAttributeList},
      {"MP_REACH_NLRI next hop length 5",
       RawUpdate({}, Cat({kOrigin, kAsPath, Attr(0x80, 14, {0, 2, 1, 5, 1, 2, 3, 4, 5, 0})}), {}),
       error::kOptionalAttribute},
      {"MP_REACH_NLRI flagged transitive", RawUpdate({}, Cat({kOrigin, kAsPath, [&] {
                                                        auto a = mp_reach_v6;
                                                        a[0] = 0xc0;
                                                        return a;
                                                      }()}), {}),
       error::kAttributeFlags},
      {"attribute overrun after MP_REACH_NLRI",
       RawUpdate({}, Cat({kOrigin, kAsPath, mp_reach_v6, std::vector<uint8_t>{0xc0, 8, 40, 1}}), {}),
       error::kMalformedAttributeList},
      {"unrecognized well-known attribute", RawUpdate({}, Cat({kOrigin, kAsPath, kNextHop, Attr(0x40, 99, {1})}), kNlri),
       error::kUnrecognizedWellKnown},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const BgpError error = DecodeReset(c.message);
    EXPECT_EQ(error.code, error::kUpdate);
    EXPECT_EQ(error.subcode, c.subcode) << error.reason;
    EXPECT_FALSE(error.reason.empty());
  }
}

TEST(Rfc7606Test, MultiprotocolRoutesAreWithdrawnWhenAttributesAreBad) {
  const std::vector<uint8_t> mp_reach_v6 = Attr(0x80, 14, Cat({{0, 2, 1, 16}, std::vector<uint8_t>(16, 0x20), {0},
                                                              {32, 0x20, 0x01, 0x0d, 0xb8}}));
  const DecodedUpdate decoded = DecodeOk(RawUpdate({}, Cat({Attr(0x40, 1, {9}), kAsPath, mp_reach_v6}), {}));
  EXPECT_TRUE(decoded.treat_as_withdraw);
  ASSERT_EQ(decoded.update.withdrawn.size(), 1u);
  EXPECT_EQ(decoded.update.withdrawn[0].prefix, P("2001:db8::/32"));
}

TEST(BgpNotificationTest, RoundTripAndDescription) {
  const auto bytes = EncodeNotification({.code = error::kCease, .subcode = error::kMaxPrefixes, .data = {0, 1, 1}});
  auto decoded = DecodeMessage(bytes, {});
  const auto& notification = std::get<NotificationMessage>(std::get<Message>(decoded));
  EXPECT_EQ(notification.code, error::kCease);
  EXPECT_EQ(notification.data, (std::vector<uint8_t>{0, 1, 1}));
  EXPECT_NE(DescribeNotification(error::kUpdate, error::kMalformedAsPath).find("AS"), std::string::npos);
  const auto refresh = EncodeRouteRefresh({kAfiIpv6, kSafiUnicast});
  EXPECT_EQ(std::get<RouteRefreshMessage>(std::get<Message>(DecodeMessage(refresh, {}))).family.afi, kAfiIpv6);
}

}  // namespace
}  // namespace geodesic::routerd::bgp
