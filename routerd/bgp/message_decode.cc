// Decoding and RFC 7606 error handling for routerd's BGP messages (see message.h).
#include <algorithm>
#include <set>

#include "routerd/bgp/internal/wire.h"
#include "routerd/bgp/message.h"

namespace geodesic::routerd::bgp {
namespace {

using internal::WireReader;

constexpr uint8_t kFlagOptional = 0x80, kFlagTransitive = 0x40, kFlagExtendedLength = 0x10;

BgpError Error(uint8_t code, uint8_t subcode, std::string reason, std::vector<uint8_t> data = {}) {
  return BgpError{.code = code, .subcode = subcode, .data = std::move(data), .reason = std::move(reason)};
}

std::vector<uint8_t> U16Bytes(uint16_t v) { return {static_cast<uint8_t>(v >> 8), static_cast<uint8_t>(v)}; }

// Reads prefixes (with path ids when `add_path`) until `data` ends.
// False when a length is out of range or a prefix runs past the end.
bool ReadNlriList(std::span<const uint8_t> data, Family family, bool add_path, std::vector<Nlri>& out,
                  std::string& why) {
  WireReader r(data);
  while (!r.empty()) {
    Nlri nlri;
    nlri.prefix.family = family;
    if (add_path && !r.U32(nlri.path_id)) {
      why = "path identifier cut short";
      return false;
    }
    uint8_t length = 0;
    if (!r.U8(length)) {
      why = "prefix length missing";
      return false;
    }
    if (length > MaxPrefixLength(family)) {
      why = "prefix length " + std::to_string(length) + " too long";
      return false;
    }
    nlri.prefix.length = length;
    std::span<const uint8_t> bytes;
    if (!r.Take(static_cast<size_t>(nlri.prefix.WireBytes()), bytes)) {
      why = "prefix runs past the end";
      return false;
    }
    std::copy(bytes.begin(), bytes.end(), nlri.prefix.bytes.begin());
    if (length % 8 != 0) nlri.prefix.bytes[length / 8] &= static_cast<uint8_t>(0xff << (8 - length % 8));
    out.push_back(nlri);
  }
  return true;
}

std::variant<OpenMessage, BgpError> DecodeOpen(std::span<const uint8_t> body) {
  WireReader r(body);
  OpenMessage open;
  uint16_t as2 = 0;
  uint8_t params_length = 0;
  if (!r.U8(open.version) || !r.U16(as2) || !r.U16(open.hold_time_s) || !r.U32(open.bgp_id) ||
      !r.U8(params_length)) {
    return Error(error::kHeader, error::kBadMessageLength, "OPEN shorter than its fixed part",
                 U16Bytes(static_cast<uint16_t>(body.size() + kHeaderBytes)));
  }
  if (open.version != 4) {
    return Error(error::kOpen, error::kUnsupportedVersion, "BGP version " + std::to_string(open.version), U16Bytes(4));
  }
  if (open.hold_time_s == 1 || open.hold_time_s == 2) {
    return Error(error::kOpen, error::kUnacceptableHoldTime, "hold time " + std::to_string(open.hold_time_s) + " s");
  }
  if (open.bgp_id == 0 || open.bgp_id == 0xffffffff) {
    return Error(error::kOpen, error::kBadBgpId, "BGP identifier 0 or all ones");
  }
  open.as_number = as2;
  std::span<const uint8_t> params;
  if (!r.Take(params_length, params) || !r.empty()) {
    return Error(error::kOpen, 0, "optional parameters length disagrees with the message");
  }
  WireReader p(params);
  while (!p.empty()) {
    uint8_t type = 0, length = 0;
    std::span<const uint8_t> value;
    if (!p.U8(type) || !p.U8(length) || !p.Take(length, value)) {
      return Error(error::kOpen, 0, "optional parameter runs past the end");
    }
    if (type != 2) {
      return Error(error::kOpen, error::kUnsupportedOptionalParameter,
                   "optional parameter type " + std::to_string(type));
    }
    WireReader c(value);
    while (!c.empty()) {
      uint8_t code = 0, cap_length = 0;
      std::span<const uint8_t> cap;
      if (!c.U8(code) || !c.U8(cap_length) || !c.Take(cap_length, cap)) {
        return Error(error::kOpen, 0, "capability runs past its parameter");
      }
      WireReader v(cap);
      Capabilities& caps = open.capabilities;
      switch (code) {
        case 1: {  // multiprotocol
          uint16_t afi = 0;
          uint8_t reserved = 0, safi = 0;
          if (cap_length != 4 || !v.U16(afi) || !v.U8(reserved) || !v.U8(safi)) {
            return Error(error::kOpen, 0, "multiprotocol capability of length " + std::to_string(cap_length));
          }
          caps.multiprotocol.push_back({afi, safi});
          break;
        }
        case 2:
          caps.route_refresh = true;
          break;
        case 64: {  // graceful restart
          uint16_t flags_time = 0;
          if (cap_length < 2 || (cap_length - 2) % 4 != 0 || !v.U16(flags_time)) {
            return Error(error::kOpen, 0, "graceful restart capability of length " + std::to_string(cap_length));
          }
          GracefulRestart gr{.restarting = (flags_time & 0x8000) != 0,
                             .restart_time_s = static_cast<uint16_t>(flags_time & 0x0fff), .families = {}};
          while (!v.empty()) {
            uint16_t afi = 0;
            uint8_t safi = 0, flags = 0;
            v.U16(afi), v.U8(safi), v.U8(flags);
            gr.families.push_back({.family = {afi, safi}, .forwarding_preserved = (flags & 0x80) != 0});
          }
          caps.graceful_restart = gr;
          break;
        }
        case 65: {  // 4-octet AS
          uint32_t as4 = 0;
          if (cap_length != 4 || !v.U32(as4)) {
            return Error(error::kOpen, 0, "4-octet AS capability of length " + std::to_string(cap_length));
          }
          caps.four_octet_as = as4;
          break;
        }
        case 69: {  // ADD-PATH
          if (cap_length % 4 != 0) {
            return Error(error::kOpen, 0, "ADD-PATH capability of length " + std::to_string(cap_length));
          }
          while (!v.empty()) {
            uint16_t afi = 0;
            uint8_t safi = 0, send_receive = 0;
            v.U16(afi), v.U8(safi), v.U8(send_receive);
            if (send_receive < 1 || send_receive > 3) {
              return Error(error::kOpen, 0, "ADD-PATH send/receive value " + std::to_string(send_receive));
            }
            caps.add_path.push_back({.family = {afi, safi}, .send_receive = send_receive});
          }
          break;
        }
        default:
          break;  // capabilities routerd does not use are ignored (RFC 5492)
      }
    }
  }
  if (open.capabilities.four_octet_as) {
    if (*open.capabilities.four_octet_as == 0) return Error(error::kOpen, error::kBadPeerAs, "4-octet AS 0");
    open.as_number = *open.capabilities.four_octet_as;
  } else if (as2 == 0) {
    return Error(error::kOpen, error::kBadPeerAs, "AS 0");
  }
  return open;
}

// The strongest RFC 7606 action among an UPDATE's problems wins.
struct UpdateProblems {
  bool treat_as_withdraw = false;
  std::vector<std::string> notes;
  void Withdraw(std::string why) {
    treat_as_withdraw = true;
    notes.push_back(std::move(why));
  }
  void Discard(std::string why) { notes.push_back(std::move(why)); }
};

std::string AttributeName(uint8_t type) {
  switch (type) {
    case 1: return "ORIGIN";
    case 2: return "AS_PATH";
    case 3: return "NEXT_HOP";
    case 4: return "MULTI_EXIT_DISC";
    case 5: return "LOCAL_PREF";
    case 6: return "ATOMIC_AGGREGATE";
    case 7: return "AGGREGATOR";
    case 8: return "COMMUNITIES";
    case 9: return "ORIGINATOR_ID";
    case 10: return "CLUSTER_LIST";
    case 14: return "MP_REACH_NLRI";
    case 15: return "MP_UNREACH_NLRI";
    case 16: return "EXTENDED_COMMUNITIES";
    case 17: return "AS4_PATH";
    case 18: return "AS4_AGGREGATOR";
    case 32: return "LARGE_COMMUNITY";
    default: return "attribute " + std::to_string(type);
  }
}

bool ParseAsPath(std::span<const uint8_t> value, bool four_octet, std::vector<AsPathSegment>& out) {
  WireReader r(value);
  while (!r.empty()) {
    AsPathSegment segment;
    uint8_t count = 0;
    if (!r.U8(segment.type) || !r.U8(count)) return false;
    if (segment.type < 1 || segment.type > 4 || count == 0) return false;
    for (int i = 0; i < count; ++i) {
      uint32_t as = 0;
      uint16_t as2 = 0;
      if (four_octet ? !r.U32(as) : !r.U16(as2)) return false;
      segment.as_numbers.push_back(four_octet ? as : as2);
    }
    out.push_back(std::move(segment));
  }
  return true;
}

// MP_REACH_NLRI / MP_UNREACH_NLRI of a family routerd does not speak are
// ignored; a malformed one resets the session (the NLRI cannot be located).
std::optional<BgpError> ParseMpReach(std::span<const uint8_t> value, const DecodeContext& context,
                                     UpdateMessage& update, bool& seen_family) {
  WireReader r(value);
  uint16_t afi = 0;
  uint8_t safi = 0, next_hop_length = 0, reserved = 0;
  std::span<const uint8_t> next_hop;
  if (!r.U16(afi) || !r.U8(safi) || !r.U8(next_hop_length) || !r.Take(next_hop_length, next_hop) ||
      !r.U8(reserved)) {
    return Error(error::kUpdate, error::kOptionalAttribute, "MP_REACH_NLRI cut short");
  }
  if (safi != kSafiUnicast || (afi != kAfiIpv4 && afi != kAfiIpv6)) return std::nullopt;
  const Family family = afi == kAfiIpv4 ? Family::kIpv4 : Family::kIpv6;
  const bool valid_length = family == Family::kIpv4 ? next_hop_length == 4
                                                    : (next_hop_length == 16 || next_hop_length == 32);
  if (!valid_length) {
    return Error(error::kUpdate, error::kOptionalAttribute,
                 "MP_REACH_NLRI next hop length " + std::to_string(next_hop_length));
  }
  IpAddress address{.family = family, .bytes = {}};
  std::copy(next_hop.begin(), next_hop.begin() + AddressBytes(family), address.bytes.begin());
  update.attributes.next_hop = address;
  std::string why;
  const bool add_path = family == Family::kIpv4 ? context.add_path_ipv4 : context.add_path_ipv6;
  if (!ReadNlriList(r.Rest(), family, add_path, update.announced, why)) {
    return Error(error::kUpdate, error::kOptionalAttribute, "MP_REACH_NLRI: " + why);
  }
  seen_family = true;
  return std::nullopt;
}

std::optional<BgpError> ParseMpUnreach(std::span<const uint8_t> value, const DecodeContext& context,
                                       UpdateMessage& update, bool& empty_unreach) {
  WireReader r(value);
  uint16_t afi = 0;
  uint8_t safi = 0;
  if (!r.U16(afi) || !r.U8(safi)) return Error(error::kUpdate, error::kOptionalAttribute, "MP_UNREACH_NLRI cut short");
  if (r.empty()) {
    empty_unreach = true;
    update.end_of_rib = AfiSafi{afi, safi};
    return std::nullopt;
  }
  if (safi != kSafiUnicast || (afi != kAfiIpv4 && afi != kAfiIpv6)) return std::nullopt;
  const Family family = afi == kAfiIpv4 ? Family::kIpv4 : Family::kIpv6;
  const bool add_path = family == Family::kIpv4 ? context.add_path_ipv4 : context.add_path_ipv6;
  std::string why;
  if (!ReadNlriList(r.Rest(), family, add_path, update.withdrawn, why)) {
    return Error(error::kUpdate, error::kOptionalAttribute, "MP_UNREACH_NLRI: " + why);
  }
  return std::nullopt;
}

std::variant<DecodedUpdate, BgpError> DecodeUpdate(std::span<const uint8_t> body, const DecodeContext& context) {
  WireReader r(body);
  DecodedUpdate result;
  UpdateMessage& update = result.update;
  UpdateProblems problems;
  uint16_t withdrawn_length = 0, attributes_length = 0;
  std::span<const uint8_t> withdrawn, attributes;
  // The lengths that locate the NLRI must agree with the message, or nothing can be trusted.
  if (!r.U16(withdrawn_length) || !r.Take(withdrawn_length, withdrawn) || !r.U16(attributes_length) ||
      !r.Take(attributes_length, attributes)) {
    return Error(error::kUpdate, error::kMalformedAttributeList, "withdrawn or attribute length exceeds the message");
  }
  std::string why;
  if (!ReadNlriList(withdrawn, Family::kIpv4, context.add_path_ipv4, update.withdrawn, why)) {
    return Error(error::kUpdate, error::kMalformedAttributeList, "withdrawn routes: " + why);
  }
  std::vector<Nlri> ipv4_nlri;
  if (!ReadNlriList(r.Rest(), Family::kIpv4, context.add_path_ipv4, ipv4_nlri, why)) {
    return Error(error::kUpdate, error::kInvalidNetworkField, "NLRI: " + why);
  }

  std::set<uint8_t> seen;
  bool mp_reach = false, mp_unreach = false, empty_unreach = false, mp_reach_family = false;
  bool four_octet_path_seen = false;
  WireReader a(attributes);
  while (!a.empty()) {
    uint8_t flags = 0, type = 0;
    uint16_t length = 0;
    uint8_t length8 = 0;
    std::span<const uint8_t> value;
    const bool header_ok = a.U8(flags) && a.U8(type) &&
                           ((flags & kFlagExtendedLength) ? a.U16(length) : (a.U8(length8) && (length = length8, true)));
    if (!header_ok || !a.Take(length, value)) {
      // The attribute overruns the attribute list: what follows cannot be
      // parsed. With multiprotocol NLRI possibly inside, the session resets;
      // otherwise the NLRI field is still located, and withdrawn.
      if (mp_reach || mp_unreach) {
        return Error(error::kUpdate, error::kMalformedAttributeList, "attribute runs past the attribute list");
      }
      problems.Withdraw("attribute runs past the attribute list");
      break;
    }
    if (!seen.insert(type).second) {
      if (type == 14 || type == 15) {
        return Error(error::kUpdate, error::kMalformedAttributeList, AttributeName(type) + " appears twice");
      }
      problems.Discard("repeated " + AttributeName(type) + " discarded");
      continue;
    }
    const bool optional = flags & kFlagOptional, transitive = flags & kFlagTransitive;
    auto flags_are = [&](bool want_optional, bool want_transitive) {
      return optional == want_optional && (want_optional && !want_transitive ? !transitive : transitive == want_transitive);
    };
    WireReader v(value);
    switch (type) {
      case 1: {  // ORIGIN
        uint8_t origin = 0;
        if (!flags_are(false, true)) { problems.Withdraw("ORIGIN flags"); break; }
        if (length != 1 || !v.U8(origin) || origin > 2) { problems.Withdraw("invalid ORIGIN"); break; }
        update.attributes.origin = static_cast<Origin>(origin);
        break;
      }
      case 2: {  // AS_PATH
        if (!flags_are(false, true)) { problems.Withdraw("AS_PATH flags"); break; }
        std::vector<AsPathSegment> path;
        if (!ParseAsPath(value, context.four_octet_as, path)) { problems.Withdraw("malformed AS_PATH"); break; }
        update.attributes.as_path = std::move(path);
        break;
      }
      case 3: {  // NEXT_HOP
        if (!flags_are(false, true)) { problems.Withdraw("NEXT_HOP flags"); break; }
        if (length != 4) { problems.Withdraw("NEXT_HOP length " + std::to_string(length)); break; }
        IpAddress next_hop{.family = Family::kIpv4, .bytes = {}};
        std::copy(value.begin(), value.end(), next_hop.bytes.begin());
        if (!update.attributes.next_hop) update.attributes.next_hop = next_hop;
        break;
      }
      case 4: {  // MULTI_EXIT_DISC
        uint32_t med = 0;
        if (!flags_are(true, false)) { problems.Withdraw("MULTI_EXIT_DISC flags"); break; }
        if (length != 4 || !v.U32(med)) { problems.Withdraw("MULTI_EXIT_DISC length"); break; }
        update.attributes.med = med;
        break;
      }
      case 5: {  // LOCAL_PREF
        uint32_t local_pref = 0;
        if (context.external_peer) { problems.Discard("LOCAL_PREF from an external peer discarded"); break; }
        if (!flags_are(false, true)) { problems.Withdraw("LOCAL_PREF flags"); break; }
        if (length != 4 || !v.U32(local_pref)) { problems.Withdraw("LOCAL_PREF length"); break; }
        update.attributes.local_pref = local_pref;
        break;
      }
      case 6:  // ATOMIC_AGGREGATE
        if (length != 0 || !flags_are(false, true)) problems.Discard("malformed ATOMIC_AGGREGATE discarded");
        break;
      case 7:  // AGGREGATOR
        if (length != (context.four_octet_as ? 8 : 6) || !flags_are(true, true)) {
          problems.Discard("malformed AGGREGATOR discarded");
        }
        break;
      case 8: {  // COMMUNITIES
        if (!flags_are(true, true)) { problems.Withdraw("COMMUNITIES flags"); break; }
        if (length == 0 || length % 4 != 0) { problems.Withdraw("COMMUNITIES length " + std::to_string(length)); break; }
        uint32_t community = 0;
        while (v.U32(community)) update.attributes.communities.push_back(community);
        break;
      }
      case 9:   // ORIGINATOR_ID
      case 10:  // CLUSTER_LIST: route reflection; an external peer must not send them
        if (context.external_peer) { problems.Discard(AttributeName(type) + " from an external peer discarded"); break; }
        if (!flags_are(true, false) || (type == 9 ? length != 4 : (length == 0 || length % 4 != 0))) {
          problems.Withdraw("malformed " + AttributeName(type));
        }
        break;
      case 14:  // MP_REACH_NLRI
        mp_reach = true;
        if (!flags_are(true, false)) {
          return Error(error::kUpdate, error::kAttributeFlags, "MP_REACH_NLRI flags", {flags, type});
        }
        if (auto error = ParseMpReach(value, context, update, mp_reach_family)) return *error;
        break;
      case 15:  // MP_UNREACH_NLRI
        mp_unreach = true;
        if (!flags_are(true, false)) {
          return Error(error::kUpdate, error::kAttributeFlags, "MP_UNREACH_NLRI flags", {flags, type});
        }
        if (auto error = ParseMpUnreach(value, context, update, empty_unreach)) return *error;
        break;
      case 16: {  // EXTENDED_COMMUNITIES
        if (!flags_are(true, true)) { problems.Withdraw("EXTENDED_COMMUNITIES flags"); break; }
        if (length == 0 || length % 8 != 0) { problems.Withdraw("EXTENDED_COMMUNITIES length " + std::to_string(length)); break; }
        std::span<const uint8_t> bytes;
        while (v.Take(8, bytes)) {
          ExtendedCommunity community{};
          std::copy(bytes.begin(), bytes.end(), community.begin());
          update.attributes.extended_communities.push_back(community);
        }
        break;
      }
      case 17:  // AS4_PATH: only meaningful from a 2-octet speaker
        if (context.four_octet_as) { problems.Discard("AS4_PATH from a 4-octet speaker discarded"); break; }
        if (std::vector<AsPathSegment> path; !ParseAsPath(value, true, path)) {
          problems.Discard("malformed AS4_PATH discarded");
        } else {
          four_octet_path_seen = true;
          if (update.attributes.as_path) update.attributes.as_path = std::move(path);
        }
        break;
      case 18:  // AS4_AGGREGATOR
        if (length != 8) problems.Discard("malformed AS4_AGGREGATOR discarded");
        break;
      case 32: {  // LARGE_COMMUNITY
        if (!flags_are(true, true)) { problems.Withdraw("LARGE_COMMUNITY flags"); break; }
        if (length == 0 || length % 12 != 0) { problems.Withdraw("LARGE_COMMUNITY length " + std::to_string(length)); break; }
        LargeCommunity community;
        while (v.U32(community.global_admin) && v.U32(community.local_data1) && v.U32(community.local_data2)) {
          update.attributes.large_communities.push_back(community);
        }
        break;
      }
      default:
        if (!optional) {
          return Error(error::kUpdate, error::kUnrecognizedWellKnown, "unrecognized well-known " + AttributeName(type),
                       std::vector<uint8_t>(value.begin(), value.end()));
        }
        break;  // unrecognized optional attributes are not routerd's business
    }
  }
  (void)four_octet_path_seen;
  update.announced.insert(update.announced.begin(), ipv4_nlri.begin(), ipv4_nlri.end());

  // Well-known mandatory attributes (RFC 7606 section 3 d: treat-as-withdraw).
  if (!update.announced.empty() && !problems.treat_as_withdraw) {
    if (!update.attributes.origin) problems.Withdraw("ORIGIN missing");
    if (!update.attributes.as_path) problems.Withdraw("AS_PATH missing");
    if (!ipv4_nlri.empty() && !seen.contains(3)) problems.Withdraw("NEXT_HOP missing");
  }
  if (!update.end_of_rib && update.withdrawn.empty() && update.announced.empty() && attributes_length == 0) {
    update.end_of_rib = AfiSafi{kAfiIpv4, kSafiUnicast};
  } else if (update.end_of_rib && (!empty_unreach || !update.announced.empty() || !update.withdrawn.empty() ||
                                   seen.size() != 1)) {
    update.end_of_rib.reset();  // an empty MP_UNREACH beside other content is no marker
  }
  result.treat_as_withdraw = problems.treat_as_withdraw;
  result.problems = std::move(problems.notes);
  if (result.treat_as_withdraw) {
    update.withdrawn.insert(update.withdrawn.end(), update.announced.begin(), update.announced.end());
    update.announced.clear();
  }
  (void)mp_reach_family;
  return result;
}

}  // namespace

std::variant<size_t, BgpError> FrameLength(std::span<const uint8_t> buffer) {
  if (buffer.size() < kHeaderBytes) {
    for (size_t i = 0; i < std::min<size_t>(buffer.size(), 16); ++i) {
      if (buffer[i] != 0xff) return Error(error::kHeader, error::kConnectionNotSynchronized, "marker is not all ones");
    }
    return size_t{0};
  }
  for (int i = 0; i < 16; ++i) {
    if (buffer[i] != 0xff) return Error(error::kHeader, error::kConnectionNotSynchronized, "marker is not all ones");
  }
  const uint16_t length = static_cast<uint16_t>(buffer[16] << 8 | buffer[17]);
  const uint8_t type = buffer[18];
  if (type < 1 || type > 5) {
    return Error(error::kHeader, error::kBadMessageType, "message " + MessageTypeName(type), {type});
  }
  static constexpr size_t kMinimum[] = {0, 29, 23, 21, 19, 23};
  if (length < kMinimum[type] || length > kMaxMessageBytes || (type == 4 && length != 19) ||
      (type == 5 && length != 23)) {
    return Error(error::kHeader, error::kBadMessageLength,
                 MessageTypeName(type) + " of length " + std::to_string(length), U16Bytes(length));
  }
  return buffer.size() >= length ? size_t{length} : size_t{0};
}

std::variant<Message, BgpError> DecodeMessage(std::span<const uint8_t> frame, const DecodeContext& context) {
  auto framed = FrameLength(frame);
  if (auto* error = std::get_if<BgpError>(&framed)) return *error;
  if (std::get<size_t>(framed) != frame.size()) {
    return Error(error::kHeader, error::kBadMessageLength, "frame length disagrees with the header");
  }
  const auto body = frame.subspan(kHeaderBytes);
  switch (static_cast<MessageType>(frame[18])) {
    case MessageType::kOpen: {
      auto open = DecodeOpen(body);
      if (auto* error = std::get_if<BgpError>(&open)) return *error;
      return Message{std::get<OpenMessage>(open)};
    }
    case MessageType::kUpdate: {
      auto update = DecodeUpdate(body, context);
      if (auto* error = std::get_if<BgpError>(&update)) return *error;
      return Message{std::move(std::get<DecodedUpdate>(update))};
    }
    case MessageType::kNotification:
      return Message{NotificationMessage{.code = body[0], .subcode = body[1],
                                         .data = std::vector<uint8_t>(body.begin() + 2, body.end())}};
    case MessageType::kKeepalive:
      return Message{KeepaliveMessage{}};
    case MessageType::kRouteRefresh: {
      WireReader r(body);
      uint16_t afi = 0;
      uint8_t reserved = 0, safi = 0;
      r.U16(afi), r.U8(reserved), r.U8(safi);
      return Message{RouteRefreshMessage{.family = {afi, safi}}};
    }
  }
  return Error(error::kHeader, error::kBadMessageType, "unknown message type");
}

}  // namespace geodesic::routerd::bgp
