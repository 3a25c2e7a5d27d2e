// libFuzzer target for routerd's BGP message decoder: any bytes, under every
// negotiated context, must decode to a message or a NOTIFICATION — never
// crash, hang or read out of bounds (ASan/UBSan). Decoded OPENs and UPDATEs
// must survive a re-encode unchanged.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "routerd/bgp/message.h"

namespace bgp = geodesic::routerd::bgp;

namespace {

void Check(bool condition) {
  if (!condition) std::abort();
}

void RoundTripUpdate(const bgp::DecodedUpdate& decoded, const bgp::DecodeContext& context) {
  const bgp::UpdateMessage& update = decoded.update;
  if (decoded.treat_as_withdraw || update.end_of_rib || update.announced.empty()) return;
  if (!update.attributes.next_hop || !update.attributes.origin || !update.attributes.as_path) return;
  // One family per UPDATE when we encode: only re-check single-family ones.
  const bgp::Family family = update.announced.front().prefix.family;
  for (const auto& nlri : update.announced) {
    if (nlri.prefix.family != family) return;
  }
  if (update.attributes.next_hop->family != family) return;
  if (!update.withdrawn.empty()) return;
  const bool add_path = family == bgp::Family::kIpv4 ? context.add_path_ipv4 : context.add_path_ipv6;
  const bgp::EncodeContext encode{.four_octet_as = context.four_octet_as, .add_path = add_path};
  size_t bytes = bgp::kHeaderBytes + 4 + bgp::AttributesWireBytes(family, update.attributes, encode);
  for (const auto& nlri : update.announced) bytes += bgp::NlriWireBytes(nlri, add_path);
  if (bytes > bgp::kMaxMessageBytes) return;
  const auto encoded = bgp::EncodeUpdate(family, {}, update.announced, update.attributes, encode);
  // The packer's size is exact for IPv4 and an upper bound for IPv6 (it
  // leaves room for an MP_UNREACH_NLRI that an announcement does not carry).
  Check(family == bgp::Family::kIpv4 ? encoded.size() == bytes : encoded.size() <= bytes && encoded.size() + 7 >= bytes);
  auto again = bgp::DecodeMessage(encoded, context);
  Check(std::holds_alternative<bgp::Message>(again));
  const auto& second = std::get<bgp::DecodedUpdate>(std::get<bgp::Message>(again));
  Check(!second.treat_as_withdraw);
  Check(second.update.announced == update.announced);
  Check(second.update.attributes == update.attributes);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const uint8_t flags = data[0];
  const bgp::DecodeContext context{.four_octet_as = (flags & 1) != 0, .add_path_ipv4 = (flags & 2) != 0,
                                   .add_path_ipv6 = (flags & 4) != 0, .external_peer = (flags & 8) != 0};
  std::span<const uint8_t> stream(data + 1, size - 1);
  // Frame the stream as a session would, message by message.
  while (!stream.empty()) {
    auto framed = bgp::FrameLength(stream);
    if (std::holds_alternative<bgp::BgpError>(framed)) return 0;
    const size_t length = std::get<size_t>(framed);
    if (length == 0) return 0;
    Check(length >= bgp::kHeaderBytes && length <= bgp::kMaxMessageBytes && length <= stream.size());
    auto decoded = bgp::DecodeMessage(stream.first(length), context);
    if (auto* message = std::get_if<bgp::Message>(&decoded)) {
      if (auto* open = std::get_if<bgp::OpenMessage>(message)) {
        auto again = bgp::DecodeMessage(bgp::EncodeOpen(*open), context);
        Check(std::holds_alternative<bgp::Message>(again));
        Check(std::get<bgp::OpenMessage>(std::get<bgp::Message>(again)).capabilities.four_octet_as ==
              open->capabilities.four_octet_as);
      } else if (auto* update = std::get_if<bgp::DecodedUpdate>(message)) {
        RoundTripUpdate(*update, context);
      }
    } else {
      const auto& error = std::get<bgp::BgpError>(decoded);
      Check(error.code >= 1 && error.code <= 6 && !error.reason.empty());
      bgp::DescribeNotification(error.code, error.subcode);
      return 0;
    }
    stream = stream.subspan(length);
  }
  return 0;
}
