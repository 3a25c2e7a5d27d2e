#include "sim/traffic/stream_packet.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace geodesic::traffic {
namespace {

template <typename T>
void PutBigEndian(T value, uint8_t* out) {
  for (size_t i = 0; i < sizeof(T); ++i) {
    out[i] = static_cast<uint8_t>(static_cast<uint64_t>(value) >> (8 * (sizeof(T) - 1 - i)));
  }
}

template <typename T>
T GetBigEndian(const uint8_t* in) {
  uint64_t value = 0;
  for (size_t i = 0; i < sizeof(T); ++i) value = (value << 8) | in[i];
  return static_cast<T>(value);
}

}  // namespace

absl::Status EncodeStreamPacket(const StreamPacket& packet, std::span<uint8_t> buffer) {
  if (packet.size_bytes < kStreamPacketHeaderBytes || packet.size_bytes > kStreamPacketMaxBytes) {
    return absl::InvalidArgumentError(absl::StrCat("packet size ", packet.size_bytes, " bytes: must be within ",
                                                   kStreamPacketHeaderBytes, "..", kStreamPacketMaxBytes));
  }
  if (buffer.size() < packet.size_bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("buffer of ", buffer.size(), " bytes is smaller than the packet (", packet.size_bytes, ")"));
  }
  uint8_t* out = buffer.data();
  PutBigEndian<uint32_t>(kStreamPacketMagic, out);
  PutBigEndian<uint32_t>(packet.stream_id, out + 4);
  PutBigEndian<uint64_t>(packet.sequence, out + 8);
  PutBigEndian<int64_t>(packet.send_time_ns, out + 16);
  PutBigEndian<uint32_t>(packet.interval_ns, out + 24);
  PutBigEndian<uint32_t>(packet.size_bytes, out + 28);
  std::fill(out + kStreamPacketHeaderBytes, out + packet.size_bytes, uint8_t{0});
  return absl::OkStatus();
}

const char* PacketRejectionName(PacketRejection rejection) {
  switch (rejection) {
    case PacketRejection::kTooShort: return "too_short";
    case PacketRejection::kBadMagic: return "bad_magic";
    case PacketRejection::kSizeMismatch: return "size_mismatch";
  }
  return "unknown";
}

DecodedPacket DecodeStreamPacket(std::span<const uint8_t> datagram) {
  DecodedPacket decoded;
  if (datagram.size() < kStreamPacketHeaderBytes) {
    decoded.rejection = PacketRejection::kTooShort;
    return decoded;
  }
  const uint8_t* in = datagram.data();
  if (GetBigEndian<uint32_t>(in) != kStreamPacketMagic) {
    decoded.rejection = PacketRejection::kBadMagic;
    return decoded;
  }
  decoded.packet.stream_id = GetBigEndian<uint32_t>(in + 4);
  decoded.packet.sequence = GetBigEndian<uint64_t>(in + 8);
  decoded.packet.send_time_ns = GetBigEndian<int64_t>(in + 16);
  decoded.packet.interval_ns = GetBigEndian<uint32_t>(in + 24);
  decoded.packet.size_bytes = GetBigEndian<uint32_t>(in + 28);
  if (decoded.packet.size_bytes != datagram.size() || decoded.packet.size_bytes > kStreamPacketMaxBytes) {
    decoded.rejection = PacketRejection::kSizeMismatch;
    return decoded;
  }
  decoded.ok = true;
  return decoded;
}

}  // namespace geodesic::traffic
