// Writes a seed corpus for bgp_message_fuzzer: valid OPEN, UPDATEs (IPv4,
// IPv6, ADD-PATH, every attribute routerd knows), End-of-RIB, NOTIFICATION,
// ROUTE-REFRESH. Each file is one context byte followed by messages.
#include <cstdio>
#include <fstream>
#include <string>

#include "routerd/bgp/message.h"

namespace bgp = geodesic::routerd::bgp;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_seeds DIR\n");
    return 2;
  }
  const std::string dir = argv[1];
  int count = 0;
  auto write = [&](uint8_t context, const std::vector<uint8_t>& message) {
    std::ofstream out(dir + "/seed-" + std::to_string(count++), std::ios::binary);
    out.put(static_cast<char>(context));
    out.write(reinterpret_cast<const char*>(message.data()), static_cast<std::streamsize>(message.size()));
  };
  bgp::OpenMessage open{.version = 4, .as_number = 4200000001, .hold_time_s = 90, .bgp_id = 1, .capabilities = {}};
  open.capabilities.multiprotocol = {{bgp::kAfiIpv4, bgp::kSafiUnicast}, {bgp::kAfiIpv6, bgp::kSafiUnicast}};
  open.capabilities.four_octet_as = 4200000001;
  open.capabilities.route_refresh = true;
  open.capabilities.add_path = {{.family = {bgp::kAfiIpv4, bgp::kSafiUnicast}, .send_receive = 3}};
  open.capabilities.graceful_restart = bgp::GracefulRestart{
      .restarting = true, .restart_time_s = 120,
      .families = {{.family = {bgp::kAfiIpv4, bgp::kSafiUnicast}, .forwarding_preserved = true}}};
  write(1, bgp::EncodeOpen(open));
  bgp::PathAttributes attributes;
  attributes.origin = bgp::Origin::kIgp;
  attributes.as_path = std::vector<bgp::AsPathSegment>{{.type = 2, .as_numbers = {65001, 65002}}};
  attributes.next_hop = bgp::IpAddress::Parse("192.0.2.1");
  attributes.med = 10;
  attributes.communities = {0xfde90001};
  attributes.extended_communities = {bgp::LinkBandwidthCommunity(65001, 1e9f)};
  attributes.large_communities = {{1, 2, 3}};
  const std::vector<bgp::Nlri> v4 = {{*bgp::IpPrefix::Parse("10.1.0.0/16"), 1}, {*bgp::IpPrefix::Parse("10.2.3.0/24"), 2}};
  for (uint8_t context : {0x9, 0xb, 0x1, 0x0}) {
    const bool add_path = context & 2;
    write(context, bgp::EncodeUpdate(bgp::Family::kIpv4, v4, v4, attributes,
                                     {.four_octet_as = (context & 1) != 0, .add_path = add_path}));
  }
  attributes.next_hop = bgp::IpAddress::Parse("2001:db8::1");
  const std::vector<bgp::Nlri> v6 = {{*bgp::IpPrefix::Parse("2001:db8:1::/48"), 0}};
  write(0x9, bgp::EncodeUpdate(bgp::Family::kIpv6, v6, v6, attributes, {.four_octet_as = true, .add_path = false}));
  write(0x9, bgp::EncodeEndOfRib({bgp::kAfiIpv6, bgp::kSafiUnicast}));
  write(0x9, bgp::EncodeNotification({.code = 6, .subcode = 2, .data = {1, 2}}));
  write(0x9, bgp::EncodeRouteRefresh({bgp::kAfiIpv4, bgp::kSafiUnicast}));
  std::vector<uint8_t> stream = bgp::EncodeKeepalive();
  const auto eor = bgp::EncodeEndOfRib({bgp::kAfiIpv4, bgp::kSafiUnicast});
  stream.insert(stream.end(), eor.begin(), eor.end());
  write(0x9, stream);
  std::printf("%d seeds in %s\n", count, dir.c_str());
  return 0;
}
