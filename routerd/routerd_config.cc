#include "routerd/routerd_config.h"

#include <charconv>
#include <set>

#include "absl/strings/str_split.h"
#include "config/config_reader.h"
#include "config/shared_keys.h"

namespace geodesic::routerd {
namespace {

bool ParseUint(std::string_view text, uint64_t max, uint64_t& out) {
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), out);
  return error == std::errc() && end == text.data() + text.size() && !text.empty() && out <= max;
}

std::optional<bgp::IpAddress> ReadAddress(config::ConfigReader& reader, const std::string& key, bool required,
                                          std::optional<bgp::Family> family = std::nullopt) {
  if (!required && !reader.Has(key)) return std::nullopt;
  const std::string text = reader.RequiredString(key);
  if (text.empty()) {
    if (reader.Has(key)) reader.AddError(key, "must not be empty");
    return std::nullopt;
  }
  auto address = bgp::IpAddress::Parse(text);
  if (!address) {
    reader.AddError(key, "\"" + text + "\" is not an IP address");
    return std::nullopt;
  }
  if (family && address->family != *family) {
    reader.AddError(key, "\"" + text + "\" is not an IPv" + std::to_string(static_cast<int>(*family)) + " address");
    return std::nullopt;
  }
  if (address->IsUnspecified()) {
    reader.AddError(key, "the unspecified address is not usable here");
    return std::nullopt;
  }
  return address;
}

void ReadCommunities(config::ConfigReader& reader, bgp::PathPolicy& policy) {
  for (const std::string& text : reader.OptionalStringList("communities")) {
    std::vector<std::string> parts = absl::StrSplit(text, ':');
    uint64_t high = 0, low = 0;
    if (parts.size() != 2 || !ParseUint(parts[0], 0xffff, high) || !ParseUint(parts[1], 0xffff, low)) {
      reader.AddError("communities", "\"" + text + "\" is not ASN:VALUE with both parts 0..65535");
      continue;
    }
    policy.communities.push_back(static_cast<uint32_t>(high << 16 | low));
  }
  for (const std::string& text : reader.OptionalStringList("large_communities")) {
    std::vector<std::string> parts = absl::StrSplit(text, ':');
    uint64_t a = 0, b = 0, c = 0;
    if (parts.size() != 3 || !ParseUint(parts[0], 0xffffffff, a) || !ParseUint(parts[1], 0xffffffff, b) ||
        !ParseUint(parts[2], 0xffffffff, c)) {
      reader.AddError("large_communities", "\"" + text + "\" is not GLOBAL:LOCAL1:LOCAL2 of 32-bit numbers");
      continue;
    }
    policy.large_communities.push_back({static_cast<uint32_t>(a), static_cast<uint32_t>(b), static_cast<uint32_t>(c)});
  }
}

uint16_t ReadHoldTime(config::ConfigReader& reader, uint64_t fallback) {
  const uint64_t hold = reader.OptionalUint("hold_time_s", fallback, 0, 65535);
  if (hold == 1 || hold == 2) reader.AddError("hold_time_s", "must be 0 or at least 3 (RFC 4271)");
  return static_cast<uint16_t>(hold);
}

bgp::SpeakerConfig ReadBgp(config::ConfigReader bgp_reader) {
  bgp::SpeakerConfig config;
  bgp::SessionSettings& session = config.session;
  session.local_as = static_cast<uint32_t>(bgp_reader.RequiredUint("local_as", 1, 0xffffffff));
  if (auto id = ReadAddress(bgp_reader, "router_id", true, bgp::Family::kIpv4)) {
    session.router_id = uint32_t{id->bytes[0]} << 24 | uint32_t{id->bytes[1]} << 16 | uint32_t{id->bytes[2]} << 8 |
                        id->bytes[3];
  }
  const uint16_t hold_time = ReadHoldTime(bgp_reader, 90);
  session.graceful_restart_s = static_cast<uint16_t>(bgp_reader.OptionalUint("graceful_restart_s", 120, 1, 4095));
  config.paths.local_as = session.local_as;
  config.paths.bandwidth_per_weight_mbps = bgp_reader.OptionalDouble("bandwidth_per_weight_mbps", 1000, 1e-3, 1e7);
  ReadCommunities(bgp_reader, config.paths);

  std::set<std::pair<bgp::IpAddress, uint16_t>> peers_seen;
  auto peers = bgp_reader.RequiredMapList("peers");
  for (config::ConfigReader& peer_reader : peers) {
    bgp::PeerConfig peer;
    auto address = ReadAddress(peer_reader, "address", true);
    peer.port = static_cast<uint16_t>(peer_reader.OptionalUint("port", 179, 1, 65535));
    peer.remote_as = static_cast<uint32_t>(peer_reader.RequiredUint("remote_as", 1, 0xffffffff));
    peer.local_address = ReadAddress(peer_reader, "local_address", false);
    peer.password = peer_reader.OptionalString("password", "");
    if (peer.password.size() > 80) peer_reader.AddError("password", "TCP-MD5 keys are at most 80 bytes");
    peer.max_prefixes = static_cast<uint32_t>(peer_reader.OptionalUint("max_prefixes", 1000, 0, 10000000));
    peer.hold_time_s = ReadHoldTime(peer_reader, hold_time);
    peer.ttl_security = peer_reader.OptionalBool("ttl_security", false);
    peer_reader.RejectUnknownKeys();
    if (!address) continue;
    peer.address = *address;
    if (peer.local_address && peer.local_address->family != peer.address.family) {
      peer_reader.AddError("local_address", "is not of the peer address's family");
    }
    if (!peers_seen.insert({peer.address, peer.port}).second) {
      peer_reader.AddError("address", peer.address.ToString() + " port " + std::to_string(peer.port) +
                                          " is configured twice");
    }
    config.peers.push_back(std::move(peer));
  }
  if (peers.empty() && bgp_reader.Has("peers")) bgp_reader.AddError("peers", "needs at least one router");

  std::set<std::string> links_seen;
  for (config::ConfigReader& hop_reader : bgp_reader.RequiredMapList("next_hops")) {
    const std::string link = hop_reader.RequiredId("link");
    bgp::NextHopAddresses addresses{.ipv4 = ReadAddress(hop_reader, "ipv4", false, bgp::Family::kIpv4),
                                    .ipv6 = ReadAddress(hop_reader, "ipv6", false, bgp::Family::kIpv6)};
    if (!hop_reader.Has("ipv4") && !hop_reader.Has("ipv6")) {
      hop_reader.AddError("link", "needs an ipv4 or ipv6 next-hop address");
    }
    if (!link.empty() && !links_seen.insert(link).second) hop_reader.AddError("link", link + " is listed twice");
    hop_reader.RejectUnknownKeys();
    config.paths.next_hops.push_back({link, addresses});
  }
  bgp_reader.RejectUnknownKeys();
  return config;
}

absl::StatusOr<RouterdConfig> ReadConfig(config::ConfigReader reader) {
  RouterdConfig config;
  config.facility_id = reader.RequiredId("facility");
  config.pathcomp_addresses = config::ReadPathcompReplicas(reader);
  config.tls = config::ReadTlsKeys(reader);
  config.state_dir = reader.RequiredPath("state_dir");
  config.agent_socket = reader.OptionalPath("agent_socket", "");
  config.health_listen = config::ReadHealthListen(reader);
  config.metrics = config::ReadMetricsListen(reader, config.tls);
  if (auto fail_static = reader.OptionalMap("fail_static")) {
    config.stale_after = std::chrono::seconds(fail_static->OptionalUint("stale_after_s", 86400, 60, 365 * 86400));
    fail_static->RejectUnknownKeys();
  }
  if (auto local_repair = reader.OptionalMap("local_repair")) {
    config.suspect_down.share = local_repair->OptionalDouble("suspect_share", 1.0, 0.01, 1.0);
    config.suspect_down.window =
        std::chrono::milliseconds(local_repair->OptionalUint("suspect_window_ms", 1000, 1, 60000));
    config.local_repair = local_repair->OptionalBool("enabled", true);
    local_repair->RejectUnknownKeys();
  }
  if (auto bgp_reader = reader.OptionalMap("bgp")) config.bgp = ReadBgp(*bgp_reader);
  reader.RejectUnknownKeys();
  if (auto status = reader.status(); !status.ok()) return status;
  return config;
}

}  // namespace

absl::StatusOr<RouterdConfig> LoadRouterdConfig(const std::string& path) {
  auto reader = config::ConfigReader::OpenFile(path);
  if (!reader.ok()) return reader.status();
  return ReadConfig(*std::move(reader));
}

absl::StatusOr<RouterdConfig> ParseRouterdConfig(const std::string& text, const std::string& origin) {
  auto reader = config::ConfigReader::FromString(text, origin);
  if (!reader.ok()) return reader.status();
  return ReadConfig(*std::move(reader));
}

}  // namespace geodesic::routerd
