// Encoders for routerd's BGP messages (see message.h).
#include <cstring>

#include "routerd/bgp/internal/wire.h"
#include "routerd/bgp/message.h"

namespace geodesic::routerd::bgp {
namespace {

using internal::WireWriter;

constexpr uint8_t kFlagOptional = 0x80, kFlagTransitive = 0x40, kFlagExtendedLength = 0x10;
constexpr uint8_t kAttrOrigin = 1, kAttrAsPath = 2, kAttrNextHop = 3, kAttrMed = 4,
                  kAttrLocalPref = 5, kAttrCommunities = 8, kAttrMpReach = 14,
                  kAttrMpUnreach = 15, kAttrExtendedCommunities = 16, kAttrLargeCommunities = 32;

// Starts a message: marker, length placeholder, type. Returns where length goes.
size_t BeginMessage(WireWriter& w, MessageType type) {
  for (int i = 0; i < 16; ++i) w.U8(0xff);
  const size_t at = w.Reserve16();
  w.U8(static_cast<uint8_t>(type));
  return at;
}

void EndMessage(WireWriter& w, size_t length_at) { w.PatchU16(length_at, static_cast<uint16_t>(w.size())); }

void WriteNlri(WireWriter& w, const Nlri& nlri, bool add_path) {
  if (add_path) w.U32(nlri.path_id);
  w.U8(nlri.prefix.length);
  w.Bytes(nlri.prefix.bytes.data(), static_cast<size_t>(nlri.prefix.WireBytes()));
}

// Attribute header with a length fitted afterwards (extended when > 255).
class AttributeScope {
 public:
  AttributeScope(std::vector<uint8_t>& out, uint8_t flags, uint8_t type, size_t expected_length)
      : out_(out), extended_(expected_length > 255) {
    out_.push_back(flags | (extended_ ? kFlagExtendedLength : 0));
    out_.push_back(type);
    length_at_ = out_.size();
    out_.push_back(0);
    if (extended_) out_.push_back(0);
  }
  ~AttributeScope() {
    const size_t length = out_.size() - length_at_ - (extended_ ? 2 : 1);
    if (extended_) {
      out_[length_at_] = static_cast<uint8_t>(length >> 8);
      out_[length_at_ + 1] = static_cast<uint8_t>(length & 0xff);
    } else {
      out_[length_at_] = static_cast<uint8_t>(length);
    }
  }

 private:
  std::vector<uint8_t>& out_;
  bool extended_;
  size_t length_at_ = 0;
};

size_t AsPathBytes(const PathAttributes& attributes, bool four_octet_as) {
  size_t bytes = 0;
  if (attributes.as_path) {
    for (const auto& segment : *attributes.as_path) {
      bytes += 2 + segment.as_numbers.size() * (four_octet_as ? 4 : 2);
    }
  }
  return bytes;
}

void WriteAsPath(std::vector<uint8_t>& out, const std::vector<AsPathSegment>& path, bool four_octet_as,
                 uint8_t type) {
  size_t expected = 0;
  for (const auto& segment : path) expected += 2 + segment.as_numbers.size() * (four_octet_as ? 4 : 2);
  AttributeScope scope(out, type == kAttrAsPath ? kFlagTransitive : kFlagOptional | kFlagTransitive,
                       type, expected);
  WireWriter w(out);
  for (const auto& segment : path) {
    w.U8(segment.type);
    w.U8(static_cast<uint8_t>(segment.as_numbers.size()));
    for (uint32_t as : segment.as_numbers) {
      if (four_octet_as) {
        w.U32(as);
      } else {
        w.U16(as > 0xffff ? kAsTrans : static_cast<uint16_t>(as));
      }
    }
  }
}

bool NeedsAs4Path(const PathAttributes& attributes) {
  if (!attributes.as_path) return false;
  for (const auto& segment : *attributes.as_path) {
    for (uint32_t as : segment.as_numbers) {
      if (as > 0xffff) return true;
    }
  }
  return false;
}

// Every attribute but NEXT_HOP / MP_REACH, in type order.
void WriteCommonAttributes(std::vector<uint8_t>& out, const PathAttributes& attributes,
                           const EncodeContext& context) {
  WireWriter w(out);
  if (attributes.origin) {
    AttributeScope scope(out, kFlagTransitive, kAttrOrigin, 1);
    w.U8(static_cast<uint8_t>(*attributes.origin));
  }
  if (attributes.as_path) WriteAsPath(out, *attributes.as_path, context.four_octet_as, kAttrAsPath);
  if (attributes.med) {
    AttributeScope scope(out, kFlagOptional, kAttrMed, 4);
    w.U32(*attributes.med);
  }
  if (attributes.local_pref) {
    AttributeScope scope(out, kFlagTransitive, kAttrLocalPref, 4);
    w.U32(*attributes.local_pref);
  }
  if (!attributes.communities.empty()) {
    AttributeScope scope(out, kFlagOptional | kFlagTransitive, kAttrCommunities,
                         attributes.communities.size() * 4);
    for (uint32_t community : attributes.communities) w.U32(community);
  }
  if (!attributes.extended_communities.empty()) {
    AttributeScope scope(out, kFlagOptional | kFlagTransitive, kAttrExtendedCommunities,
                         attributes.extended_communities.size() * 8);
    for (const auto& community : attributes.extended_communities) w.Bytes(community.data(), 8);
  }
  if (!context.four_octet_as && NeedsAs4Path(attributes)) {
    WriteAsPath(out, *attributes.as_path, /*four_octet_as=*/true, /*AS4_PATH*/ 17);
  }
  if (!attributes.large_communities.empty()) {
    AttributeScope scope(out, kFlagOptional | kFlagTransitive, kAttrLargeCommunities,
                         attributes.large_communities.size() * 12);
    for (const auto& community : attributes.large_communities) {
      w.U32(community.global_admin);
      w.U32(community.local_data1);
      w.U32(community.local_data2);
    }
  }
}

}  // namespace

ExtendedCommunity LinkBandwidthCommunity(uint16_t as_number, float bytes_per_second) {
  uint32_t bits = 0;
  static_assert(sizeof bits == sizeof bytes_per_second);
  std::memcpy(&bits, &bytes_per_second, sizeof bits);
  return {0x40, 0x04, static_cast<uint8_t>(as_number >> 8), static_cast<uint8_t>(as_number & 0xff),
          static_cast<uint8_t>(bits >> 24), static_cast<uint8_t>(bits >> 16),
          static_cast<uint8_t>(bits >> 8), static_cast<uint8_t>(bits)};
}

std::optional<float> LinkBandwidthOf(const ExtendedCommunity& community) {
  if ((community[0] != 0x40 && community[0] != 0x00) || community[1] != 0x04) return std::nullopt;
  const uint32_t bits = static_cast<uint32_t>(community[4]) << 24 | static_cast<uint32_t>(community[5]) << 16 |
                        static_cast<uint32_t>(community[6]) << 8 | community[7];
  float value = 0;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

std::vector<uint8_t> EncodeOpen(const OpenMessage& open) {
  std::vector<uint8_t> out;
  WireWriter w(out);
  const size_t length_at = BeginMessage(w, MessageType::kOpen);
  w.U8(open.version);
  w.U16(open.as_number > 0xffff ? kAsTrans : static_cast<uint16_t>(open.as_number));
  w.U16(open.hold_time_s);
  w.U32(open.bgp_id);
  const size_t params_length_at = out.size();
  w.U8(0);
  // One optional parameter (type 2) per capability, as most speakers send them.
  auto capability = [&](uint8_t code, const std::vector<uint8_t>& value) {
    w.U8(2);
    w.U8(static_cast<uint8_t>(value.size() + 2));
    w.U8(code);
    w.U8(static_cast<uint8_t>(value.size()));
    w.Bytes(value.data(), value.size());
  };
  const Capabilities& caps = open.capabilities;
  for (const AfiSafi& family : caps.multiprotocol) {
    capability(1, {static_cast<uint8_t>(family.afi >> 8), static_cast<uint8_t>(family.afi), 0, family.safi});
  }
  if (caps.route_refresh) capability(2, {});
  if (caps.graceful_restart) {
    const GracefulRestart& gr = *caps.graceful_restart;
    const uint16_t flags_time = static_cast<uint16_t>((gr.restarting ? 0x8000 : 0) | (gr.restart_time_s & 0x0fff));
    std::vector<uint8_t> value = {static_cast<uint8_t>(flags_time >> 8), static_cast<uint8_t>(flags_time)};
    for (const auto& family : gr.families) {
      value.insert(value.end(), {static_cast<uint8_t>(family.family.afi >> 8), static_cast<uint8_t>(family.family.afi),
                                 family.family.safi, static_cast<uint8_t>(family.forwarding_preserved ? 0x80 : 0)});
    }
    capability(64, value);
  }
  if (caps.four_octet_as) {
    const uint32_t as = *caps.four_octet_as;
    capability(65, {static_cast<uint8_t>(as >> 24), static_cast<uint8_t>(as >> 16), static_cast<uint8_t>(as >> 8),
                    static_cast<uint8_t>(as)});
  }
  if (!caps.add_path.empty()) {
    std::vector<uint8_t> value;
    for (const auto& entry : caps.add_path) {
      value.insert(value.end(), {static_cast<uint8_t>(entry.family.afi >> 8), static_cast<uint8_t>(entry.family.afi),
                                 entry.family.safi, entry.send_receive});
    }
    capability(69, value);
  }
  w.PatchU8(params_length_at, static_cast<uint8_t>(out.size() - params_length_at - 1));
  EndMessage(w, length_at);
  return out;
}

std::vector<uint8_t> EncodeKeepalive() {
  std::vector<uint8_t> out;
  WireWriter w(out);
  EndMessage(w, BeginMessage(w, MessageType::kKeepalive));
  return out;
}

std::vector<uint8_t> EncodeNotification(const NotificationMessage& notification) {
  std::vector<uint8_t> out;
  WireWriter w(out);
  const size_t length_at = BeginMessage(w, MessageType::kNotification);
  w.U8(notification.code);
  w.U8(notification.subcode);
  const size_t room = kMaxMessageBytes - out.size();
  w.Bytes(notification.data.data(), std::min(room, notification.data.size()));
  EndMessage(w, length_at);
  return out;
}

std::vector<uint8_t> EncodeRouteRefresh(AfiSafi family) {
  std::vector<uint8_t> out;
  WireWriter w(out);
  const size_t length_at = BeginMessage(w, MessageType::kRouteRefresh);
  w.U16(family.afi);
  w.U8(0);
  w.U8(family.safi);
  EndMessage(w, length_at);
  return out;
}

std::vector<uint8_t> EncodeEndOfRib(AfiSafi family) {
  std::vector<uint8_t> out;
  WireWriter w(out);
  const size_t length_at = BeginMessage(w, MessageType::kUpdate);
  w.U16(0);  // no withdrawn routes
  if (family.afi == kAfiIpv4 && family.safi == kSafiUnicast) {
    w.U16(0);  // and no attributes: the IPv4 unicast End-of-RIB
  } else {
    w.U16(6);
    w.U8(kFlagOptional);
    w.U8(kAttrMpUnreach);
    w.U8(3);
    w.U16(family.afi);
    w.U8(family.safi);
  }
  EndMessage(w, length_at);
  return out;
}

size_t AttributesWireBytes(Family family, const PathAttributes& attributes, const EncodeContext& context) {
  auto header = [](size_t length) { return length > 255 ? 4 : 3; };
  size_t bytes = 0;
  if (attributes.origin) bytes += 3 + 1;
  if (attributes.as_path) {
    const size_t length = AsPathBytes(attributes, context.four_octet_as);
    bytes += header(length) + length;
    if (!context.four_octet_as && NeedsAs4Path(attributes)) {
      const size_t as4 = AsPathBytes(attributes, true);
      bytes += header(as4) + as4;
    }
  }
  if (attributes.med) bytes += 3 + 4;
  if (attributes.local_pref) bytes += 3 + 4;
  if (!attributes.communities.empty()) bytes += header(attributes.communities.size() * 4) + attributes.communities.size() * 4;
  if (!attributes.extended_communities.empty()) {
    bytes += header(attributes.extended_communities.size() * 8) + attributes.extended_communities.size() * 8;
  }
  if (!attributes.large_communities.empty()) {
    bytes += header(attributes.large_communities.size() * 12) + attributes.large_communities.size() * 12;
  }
  if (family == Family::kIpv4) {
    if (attributes.next_hop) bytes += 3 + 4;
  } else {
    // MP_REACH header (always extended here) + AFI/SAFI, next hop, reserved byte;
    // MP_UNREACH header + AFI/SAFI. The NLRI themselves are counted by the packer.
    bytes += 4 + 3 + 1 + (attributes.next_hop ? 16 : 0) + 1;
    bytes += 4 + 3;
  }
  return bytes;
}

std::vector<uint8_t> EncodeUpdate(Family family, std::span<const Nlri> withdrawn, std::span<const Nlri> announced,
                                  const PathAttributes& attributes, const EncodeContext& context) {
  std::vector<uint8_t> out;
  out.reserve(kMaxMessageBytes);
  WireWriter w(out);
  const size_t length_at = BeginMessage(w, MessageType::kUpdate);
  const size_t withdrawn_length_at = w.Reserve16();
  if (family == Family::kIpv4) {
    for (const Nlri& nlri : withdrawn) WriteNlri(w, nlri, context.add_path);
  }
  w.PatchU16(withdrawn_length_at, static_cast<uint16_t>(out.size() - withdrawn_length_at - 2));
  const size_t attributes_length_at = w.Reserve16();
  if (family == Family::kIpv6 && !withdrawn.empty()) {
    // MP_UNREACH_NLRI comes first so a receiver sees withdrawals before announcements.
    size_t expected = 3;
    for (const Nlri& nlri : withdrawn) expected += NlriWireBytes(nlri, context.add_path);
    AttributeScope scope(out, kFlagOptional, kAttrMpUnreach, std::max<size_t>(expected, 256));
    w.U16(kAfiIpv6);
    w.U8(kSafiUnicast);
    for (const Nlri& nlri : withdrawn) WriteNlri(w, nlri, context.add_path);
  }
  if (!announced.empty()) {
    WriteCommonAttributes(out, attributes, context);
    if (family == Family::kIpv4) {
      if (attributes.next_hop) {
        AttributeScope scope(out, kFlagTransitive, kAttrNextHop, 4);
        w.Bytes(attributes.next_hop->bytes.data(), 4);
      }
    } else {
      size_t expected = 5 + (attributes.next_hop ? 16 : 0);
      for (const Nlri& nlri : announced) expected += NlriWireBytes(nlri, context.add_path);
      AttributeScope scope(out, kFlagOptional, kAttrMpReach, std::max<size_t>(expected, 256));
      w.U16(kAfiIpv6);
      w.U8(kSafiUnicast);
      w.U8(attributes.next_hop ? 16 : 0);
      if (attributes.next_hop) w.Bytes(attributes.next_hop->bytes.data(), 16);
      w.U8(0);  // reserved
      for (const Nlri& nlri : announced) WriteNlri(w, nlri, context.add_path);
    }
  }
  w.PatchU16(attributes_length_at, static_cast<uint16_t>(out.size() - attributes_length_at - 2));
  if (family == Family::kIpv4) {
    for (const Nlri& nlri : announced) WriteNlri(w, nlri, context.add_path);
  }
  EndMessage(w, length_at);
  return out;
}

std::string MessageTypeName(uint8_t type) {
  switch (type) {
    case 1: return "OPEN";
    case 2: return "UPDATE";
    case 3: return "NOTIFICATION";
    case 4: return "KEEPALIVE";
    case 5: return "ROUTE-REFRESH";
    default: return "type " + std::to_string(type);
  }
}

std::string DescribeNotification(uint8_t code, uint8_t subcode) {
  static const char* const kCodes[] = {"", "message header error", "OPEN message error", "UPDATE message error",
                                       "hold timer expired", "finite state machine error", "cease"};
  // RFC 4271 6.1-6.6, RFC 4486 (cease), RFC 6608 (FSM).
  static const std::vector<std::vector<const char*>> kSubcodes = {
      {},
      {"", "connection not synchronized", "bad message length", "bad message type"},
      {"", "unsupported version number", "bad peer AS", "bad BGP identifier", "unsupported optional parameter",
       "", "unacceptable hold time", "unsupported capability"},
      {"", "malformed attribute list", "unrecognized well-known attribute", "missing well-known attribute",
       "attribute flags error", "attribute length error", "invalid ORIGIN attribute", "",
       "invalid NEXT_HOP attribute", "optional attribute error", "invalid network field", "malformed AS_PATH"},
      {},
      {"", "unexpected message in OpenSent", "unexpected message in OpenConfirm",
       "unexpected message in Established"},
      {"", "maximum number of prefixes reached", "administrative shutdown", "peer de-configured",
       "administrative reset", "connection rejected", "other configuration change",
       "connection collision resolution", "out of resources", "hard reset"},
  };
  std::string text = code < 7 && code > 0 ? kCodes[code] : "error code " + std::to_string(code);
  if (code < kSubcodes.size() && subcode < kSubcodes[code].size() && *kSubcodes[code][subcode] != '\0') {
    return text + ": " + kSubcodes[code][subcode];
  }
  return text + " (subcode " + std::to_string(subcode) + ")";
}

}  // namespace geodesic::routerd::bgp
