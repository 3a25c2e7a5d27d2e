#pragma once
// The probe's wire format: a UDP echo in the spirit of TWAMP-light (RFC 5357
// appendix I). A request carries the prober's session, the link it measures,
// a sequence number and the prober's send time; the responder echoes them
// with its own receive and send times, so the RTT excludes the time the
// packet spent in the responder:
//   RTT = (reply received - t1) - (t3 - t2)
// Fixed size, big-endian:
//   magic "GDP1" | type u8 | flags u8 (0) | reserved u16 (0) | session u64 |
//   link_tag u32 | reserved u32 (0) | seq u64 | t1 u64 | t2 u64 | t3 u64
// Times are nanoseconds of the clock of whoever wrote them (only differences
// of one clock are used). Pure.
#include <array>
#include <cstdint>
#include <span>

#include "absl/status/statusor.h"

namespace geodesic::site_agent::probe {

inline constexpr size_t kProbePacketBytes = 56;

enum class ProbeType : uint8_t { kRequest = 1, kReply = 2 };

struct ProbePacket {
  ProbeType type = ProbeType::kRequest;
  uint64_t session = 0;   // random per prober start; the responder echoes it
  uint32_t link_tag = 0;  // the prober's index of the link; echoed
  uint64_t seq = 0;       // from 1, +1 per request of the session
  uint64_t t1_ns = 0;     // prober: request sent
  uint64_t t2_ns = 0;     // responder: request received
  uint64_t t3_ns = 0;     // responder: reply sent
};

std::array<uint8_t, kProbePacketBytes> EncodeProbe(const ProbePacket& packet);

// InvalidArgument naming what is wrong: size, magic, type, reserved bits,
// a zero session or sequence.
[[nodiscard]] absl::StatusOr<ProbePacket> DecodeProbe(std::span<const uint8_t> bytes);

}  // namespace geodesic::site_agent::probe
