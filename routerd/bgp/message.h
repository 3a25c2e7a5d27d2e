#pragma once
// BGP-4 messages (RFC 4271) with the extensions routerd speaks: 4-octet AS
// (RFC 6793), multiprotocol IPv4/IPv6 unicast (RFC 4760), ADD-PATH (RFC 7911),
// communities (RFC 1997), extended communities (RFC 4360, link bandwidth),
// large communities (RFC 8092), graceful restart (RFC 4724), route refresh
// (RFC 2918). Decoding follows RFC 7606: a malformed UPDATE is either
// treated as a withdrawal of everything it carries, loses an attribute, or
// resets the session with the NOTIFICATION the RFC names.
// Pure, standard library only (the libFuzzer target builds it with clang alone).
// Thread-compatible.
#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "routerd/bgp/ip_prefix.h"

namespace geodesic::routerd::bgp {

constexpr size_t kHeaderBytes = 19;
constexpr size_t kMaxMessageBytes = 4096;
constexpr uint16_t kAsTrans = 23456;

enum class MessageType : uint8_t {
  kOpen = 1, kUpdate = 2, kNotification = 3, kKeepalive = 4, kRouteRefresh = 5,
};

// NOTIFICATION error codes and the subcodes routerd sends.
namespace error {
constexpr uint8_t kHeader = 1, kOpen = 2, kUpdate = 3, kHoldTimerExpired = 4, kFsm = 5, kCease = 6;
constexpr uint8_t kConnectionNotSynchronized = 1, kBadMessageLength = 2, kBadMessageType = 3;
constexpr uint8_t kUnsupportedVersion = 1, kBadPeerAs = 2, kBadBgpId = 3,
                  kUnsupportedOptionalParameter = 4, kUnacceptableHoldTime = 6,
                  kUnsupportedCapability = 7;
constexpr uint8_t kMalformedAttributeList = 1, kUnrecognizedWellKnown = 2, kMissingWellKnown = 3,
                  kAttributeFlags = 4, kAttributeLength = 5, kInvalidOrigin = 6,
                  kInvalidNextHop = 8, kOptionalAttribute = 9, kInvalidNetworkField = 10,
                  kMalformedAsPath = 11;
constexpr uint8_t kMaxPrefixes = 1, kAdministrativeShutdown = 2, kPeerDeconfigured = 3,
                  kAdministrativeReset = 4, kConnectionRejected = 5, kOtherConfigurationChange = 6,
                  kCollisionResolution = 7, kOutOfResources = 8;
}  // namespace error

// A reason to end the session: the NOTIFICATION to send and why, for logs.
struct BgpError {
  uint8_t code = 0;
  uint8_t subcode = 0;
  std::vector<uint8_t> data;
  std::string reason;
};

struct AfiSafi {
  uint16_t afi = kAfiIpv4;
  uint8_t safi = kSafiUnicast;
  auto operator<=>(const AfiSafi&) const = default;
};

// ADD-PATH (RFC 7911): bit 1 = can receive, bit 2 = can send.
struct AddPathFamily {
  AfiSafi family;
  uint8_t send_receive = 0;
  bool operator==(const AddPathFamily&) const = default;
};
constexpr uint8_t kAddPathReceive = 1, kAddPathSend = 2;

struct GracefulRestartFamily {
  AfiSafi family;
  bool forwarding_preserved = false;
  bool operator==(const GracefulRestartFamily&) const = default;
};
struct GracefulRestart {
  bool restarting = false;  // R bit: "I have just restarted"
  uint16_t restart_time_s = 0;  // 12 bits on the wire
  std::vector<GracefulRestartFamily> families;
  bool operator==(const GracefulRestart&) const = default;
};

struct Capabilities {
  std::vector<AfiSafi> multiprotocol;
  std::optional<uint32_t> four_octet_as;
  bool route_refresh = false;
  std::vector<AddPathFamily> add_path;
  std::optional<GracefulRestart> graceful_restart;
  bool operator==(const Capabilities&) const = default;
};

struct OpenMessage {
  uint8_t version = 4;
  uint32_t as_number = 0;  // the 4-octet AS when advertised, else the 2-octet field
  uint16_t hold_time_s = 0;
  uint32_t bgp_id = 0;     // host order
  Capabilities capabilities;
  bool operator==(const OpenMessage&) const = default;
};

struct Nlri {
  IpPrefix prefix;
  uint32_t path_id = 0;  // ADD-PATH identifier; 0 without ADD-PATH
  auto operator<=>(const Nlri&) const = default;
};

enum class Origin : uint8_t { kIgp = 0, kEgp = 1, kIncomplete = 2 };

struct AsPathSegment {
  uint8_t type = 2;  // 1 AS_SET, 2 AS_SEQUENCE, 3/4 confederation
  std::vector<uint32_t> as_numbers;
  bool operator==(const AsPathSegment&) const = default;
};

using ExtendedCommunity = std::array<uint8_t, 8>;
struct LargeCommunity {
  uint32_t global_admin = 0, local_data1 = 0, local_data2 = 0;
  auto operator<=>(const LargeCommunity&) const = default;
};

// Link bandwidth (draft-ietf-idr-link-bandwidth): non-transitive, AS-specific,
// subtype 4, an IEEE float in bytes per second. FRR weighs multipath by it.
ExtendedCommunity LinkBandwidthCommunity(uint16_t as_number, float bytes_per_second);
std::optional<float> LinkBandwidthOf(const ExtendedCommunity& community);

struct PathAttributes {
  std::optional<Origin> origin;
  std::optional<std::vector<AsPathSegment>> as_path;
  std::optional<IpAddress> next_hop;  // NEXT_HOP, or MP_REACH's global next hop
  std::optional<uint32_t> med;
  std::optional<uint32_t> local_pref;
  std::vector<uint32_t> communities;
  std::vector<ExtendedCommunity> extended_communities;
  std::vector<LargeCommunity> large_communities;
  bool operator==(const PathAttributes&) const = default;
};

struct UpdateMessage {
  std::vector<Nlri> withdrawn;  // IPv4 field and MP_UNREACH_NLRI together
  std::vector<Nlri> announced;  // IPv4 NLRI and MP_REACH_NLRI together
  PathAttributes attributes;
  // An End-of-RIB marker (RFC 4724): no routes, no attributes but an empty MP_UNREACH.
  std::optional<AfiSafi> end_of_rib;
};

struct NotificationMessage {
  uint8_t code = 0;
  uint8_t subcode = 0;
  std::vector<uint8_t> data;
};

struct RouteRefreshMessage {
  AfiSafi family;
};

struct KeepaliveMessage {};

// What the session negotiated; decoding an UPDATE depends on it.
struct DecodeContext {
  bool four_octet_as = true;
  bool add_path_ipv4 = false;  // the peer sends path identifiers for IPv4 unicast
  bool add_path_ipv6 = false;
  bool external_peer = true;   // eBGP: LOCAL_PREF is discarded
};

// RFC 7606's outcome for one UPDATE.
struct DecodedUpdate {
  UpdateMessage update;
  // Treat-as-withdraw: every announced prefix is to be handled as withdrawn.
  bool treat_as_withdraw = false;
  std::vector<std::string> problems;  // attributes discarded or why routes were withdrawn
};

using Message = std::variant<OpenMessage, DecodedUpdate, NotificationMessage, KeepaliveMessage,
                             RouteRefreshMessage>;

// Splits a byte stream into messages. `buffer` holds what has arrived so far.
// Returns the length of the first complete message, 0 when more bytes are
// needed, or a header error (bad marker, length or type).
std::variant<size_t, BgpError> FrameLength(std::span<const uint8_t> buffer);

// Decodes one framed message (header included). A BgpError means: send that
// NOTIFICATION and close the session.
std::variant<Message, BgpError> DecodeMessage(std::span<const uint8_t> frame,
                                              const DecodeContext& context);

// Encoders produce complete messages with header.
std::vector<uint8_t> EncodeOpen(const OpenMessage& open);
std::vector<uint8_t> EncodeKeepalive();
std::vector<uint8_t> EncodeNotification(const NotificationMessage& notification);
std::vector<uint8_t> EncodeRouteRefresh(AfiSafi family);
std::vector<uint8_t> EncodeEndOfRib(AfiSafi family);

struct EncodeContext {
  bool four_octet_as = true;
  bool add_path = false;  // send path identifiers for this message's family
};
// One UPDATE of one family: withdrawals and/or announcements sharing `attributes`
// (IPv4 in the classic fields with NEXT_HOP, IPv6 in MP_REACH/MP_UNREACH).
// The caller keeps it within kMaxMessageBytes (UpdatePacker does).
std::vector<uint8_t> EncodeUpdate(Family family, std::span<const Nlri> withdrawn,
                                  std::span<const Nlri> announced,
                                  const PathAttributes& attributes, const EncodeContext& context);

// Bytes one NLRI takes on the wire.
inline size_t NlriWireBytes(const Nlri& nlri, bool add_path) {
  return (add_path ? 4 : 0) + 1 + static_cast<size_t>(nlri.prefix.WireBytes());
}
// Bytes the attributes of an UPDATE of `family` take, for packing: exact for
// IPv4, for IPv6 an upper bound (room for both MP_REACH and MP_UNREACH).
size_t AttributesWireBytes(Family family, const PathAttributes& attributes,
                           const EncodeContext& context);

std::string MessageTypeName(uint8_t type);
std::string DescribeNotification(uint8_t code, uint8_t subcode);

}  // namespace geodesic::routerd::bgp
