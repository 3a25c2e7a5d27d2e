#include "site_agent/probe/probe_packet.h"

#include "absl/strings/str_cat.h"

namespace geodesic::site_agent::probe {
namespace {

constexpr uint8_t kMagic[4] = {'G', 'D', 'P', '1'};

template <typename T>
void Put(uint8_t*& out, T value) {
  for (int shift = (sizeof(T) - 1) * 8; shift >= 0; shift -= 8) *out++ = static_cast<uint8_t>(value >> shift);
}

template <typename T>
T Get(const uint8_t*& in) {
  T value = 0;
  for (size_t i = 0; i < sizeof(T); ++i) value = static_cast<T>((value << 8) | *in++);
  return value;
}

}  // namespace

std::array<uint8_t, kProbePacketBytes> EncodeProbe(const ProbePacket& packet) {
  std::array<uint8_t, kProbePacketBytes> bytes{};
  uint8_t* out = bytes.data();
  for (uint8_t c : kMagic) *out++ = c;
  Put<uint8_t>(out, static_cast<uint8_t>(packet.type));
  Put<uint8_t>(out, 0);
  Put<uint16_t>(out, 0);
  Put<uint64_t>(out, packet.session);
  Put<uint32_t>(out, packet.link_tag);
  Put<uint32_t>(out, 0);
  Put<uint64_t>(out, packet.seq);
  Put<uint64_t>(out, packet.t1_ns);
  Put<uint64_t>(out, packet.t2_ns);
  Put<uint64_t>(out, packet.t3_ns);
  return bytes;
}

absl::StatusOr<ProbePacket> DecodeProbe(std::span<const uint8_t> bytes) {
  if (bytes.size() != kProbePacketBytes) {
    return absl::InvalidArgumentError(absl::StrCat("probe of ", bytes.size(), " bytes, expected ", kProbePacketBytes));
  }
  const uint8_t* in = bytes.data();
  for (uint8_t c : kMagic) {
    if (*in++ != c) return absl::InvalidArgumentError("not a Geodesic probe (magic)");
  }
  ProbePacket packet;
  const uint8_t type = Get<uint8_t>(in);
  if (type != static_cast<uint8_t>(ProbeType::kRequest) && type != static_cast<uint8_t>(ProbeType::kReply)) {
    return absl::InvalidArgumentError(absl::StrCat("unknown probe type ", type));
  }
  packet.type = static_cast<ProbeType>(type);
  const uint8_t flags = Get<uint8_t>(in);
  const uint16_t reserved = Get<uint16_t>(in);
  if (flags != 0 || reserved != 0) return absl::InvalidArgumentError("reserved probe bits set");
  packet.session = Get<uint64_t>(in);
  packet.link_tag = Get<uint32_t>(in);
  if (Get<uint32_t>(in) != 0) return absl::InvalidArgumentError("reserved probe bits set");
  packet.seq = Get<uint64_t>(in);
  packet.t1_ns = Get<uint64_t>(in);
  packet.t2_ns = Get<uint64_t>(in);
  packet.t3_ns = Get<uint64_t>(in);
  if (packet.session == 0 || packet.seq == 0) return absl::InvalidArgumentError("probe session and seq start at 1");
  if (packet.type == ProbeType::kReply && packet.t3_ns < packet.t2_ns) {
    return absl::InvalidArgumentError("probe reply sent before it was received");
  }
  return packet;
}

}  // namespace geodesic::site_agent::probe
