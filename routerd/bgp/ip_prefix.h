#pragma once
// IPv4/IPv6 addresses and prefixes as BGP carries them, with the text forms
// operators write ("10.1.0.0/16", "2001:db8::/32", "192.0.2.1").
// Pure, standard library only (the message fuzzer builds it with clang alone).
#include <array>
#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace geodesic::routerd::bgp {

enum class Family : uint8_t { kIpv4 = 4, kIpv6 = 6 };

constexpr uint16_t kAfiIpv4 = 1;
constexpr uint16_t kAfiIpv6 = 2;
constexpr uint8_t kSafiUnicast = 1;

constexpr uint16_t AfiOf(Family family) { return family == Family::kIpv4 ? kAfiIpv4 : kAfiIpv6; }
constexpr int MaxPrefixLength(Family family) { return family == Family::kIpv4 ? 32 : 128; }
constexpr int AddressBytes(Family family) { return family == Family::kIpv4 ? 4 : 16; }

struct IpAddress {
  Family family = Family::kIpv4;
  std::array<uint8_t, 16> bytes{};  // network order; IPv4 uses the first 4

  auto operator<=>(const IpAddress&) const = default;
  // Parses dotted-quad or RFC 4291 text; nullopt when it is neither.
  static std::optional<IpAddress> Parse(std::string_view text);
  std::string ToString() const;
  bool IsUnspecified() const;
  bool IsLinkLocalV6() const { return family == Family::kIpv6 && bytes[0] == 0xfe && (bytes[1] & 0xc0) == 0x80; }
};

struct IpPrefix {
  Family family = Family::kIpv4;
  std::array<uint8_t, 16> bytes{};  // host bits are always zero
  uint8_t length = 0;

  auto operator<=>(const IpPrefix&) const = default;
  // "a.b.c.d/n" or "x::/n"; nullopt when malformed, the length is out of range
  // or host bits are set (a plan never means 10.1.2.3/16).
  static std::optional<IpPrefix> Parse(std::string_view text);
  std::string ToString() const;
  int WireBytes() const { return (length + 7) / 8; }
};

}  // namespace geodesic::routerd::bgp
