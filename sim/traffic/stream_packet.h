#pragma once
// The traffic generator's UDP payload: one packet of a paced stream.
//
//   offset  bytes  field (network byte order)
//        0      4  magic "GDTR" (0x47445452)
//        4      4  stream id
//        8      8  sequence number (0 for the stream's first packet, +1 per packet sent)
//       16      8  send time, ns since the Unix epoch (CLOCK_REALTIME; every network
//                  namespace of one machine shares it)
//       24      4  the sender's packet interval in ns (so a receiver can turn a gap
//                  in sequence numbers into milliseconds)
//       28      4  the packet's size in bytes, header included
//       32      -  zero padding up to that size
//
// Pure: no I/O, no clock. Thread-safe (no state).
#include <cstdint>
#include <span>
#include <string>

#include "absl/status/statusor.h"

namespace geodesic::traffic {

inline constexpr uint32_t kStreamPacketMagic = 0x47445452;  // "GDTR"
inline constexpr size_t kStreamPacketHeaderBytes = 32;
// The largest packet a stream sends: a jumbo frame's payload.
inline constexpr size_t kStreamPacketMaxBytes = 9000;

struct StreamPacket {
  uint32_t stream_id = 0;
  uint64_t sequence = 0;
  int64_t send_time_ns = 0;
  uint32_t interval_ns = 0;
  uint32_t size_bytes = kStreamPacketHeaderBytes;
};

// Writes `packet` into `buffer` (header, then zeros up to packet.size_bytes).
// InvalidArgument when size_bytes is below the header or above
// kStreamPacketMaxBytes, or when `buffer` is smaller than size_bytes.
[[nodiscard]] absl::Status EncodeStreamPacket(const StreamPacket& packet, std::span<uint8_t> buffer);

// Why a datagram is not a stream packet.
enum class PacketRejection {
  kTooShort,      // shorter than the header
  kBadMagic,      // not ours
  kSizeMismatch,  // its length is not the size its header declares (truncated or padded),
                  // or is above kStreamPacketMaxBytes
};
const char* PacketRejectionName(PacketRejection rejection);

// A decoded datagram, or why it was rejected.
struct DecodedPacket {
  bool ok = false;
  StreamPacket packet;
  PacketRejection rejection = PacketRejection::kTooShort;  // when !ok
};

// Reads one received datagram (its whole length).
[[nodiscard]] DecodedPacket DecodeStreamPacket(std::span<const uint8_t> datagram);

}  // namespace geodesic::traffic
