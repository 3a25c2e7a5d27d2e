#include "routerd/bgp/ip_prefix.h"

#include <arpa/inet.h>

#include <charconv>

namespace geodesic::routerd::bgp {

std::optional<IpAddress> IpAddress::Parse(std::string_view text) {
  if (text.empty() || text.size() > 45) return std::nullopt;
  const std::string copy(text);
  IpAddress address;
  if (copy.find(':') == std::string::npos) {
    address.family = Family::kIpv4;
    if (inet_pton(AF_INET, copy.c_str(), address.bytes.data()) != 1) return std::nullopt;
  } else {
    address.family = Family::kIpv6;
    if (inet_pton(AF_INET6, copy.c_str(), address.bytes.data()) != 1) return std::nullopt;
  }
  return address;
}

std::string IpAddress::ToString() const {
  char buffer[INET6_ADDRSTRLEN] = {};
  inet_ntop(family == Family::kIpv4 ? AF_INET : AF_INET6, bytes.data(), buffer, sizeof buffer);
  return buffer;
}

bool IpAddress::IsUnspecified() const {
  for (int i = 0; i < AddressBytes(family); ++i) {
    if (bytes[i] != 0) return false;
  }
  return true;
}

std::optional<IpPrefix> IpPrefix::Parse(std::string_view text) {
  const auto slash = text.find('/');
  if (slash == std::string_view::npos) return std::nullopt;
  auto address = IpAddress::Parse(text.substr(0, slash));
  if (!address) return std::nullopt;
  const std::string_view length_text = text.substr(slash + 1);
  int length = -1;
  const auto [end, error] =
      std::from_chars(length_text.data(), length_text.data() + length_text.size(), length);
  if (error != std::errc() || end != length_text.data() + length_text.size() || length < 0 ||
      length > MaxPrefixLength(address->family)) {
    return std::nullopt;
  }
  IpPrefix prefix{.family = address->family, .bytes = address->bytes, .length = static_cast<uint8_t>(length)};
  for (int bit = length; bit < MaxPrefixLength(prefix.family); ++bit) {
    if (prefix.bytes[bit / 8] & (0x80 >> (bit % 8))) return std::nullopt;  // host bits set
  }
  return prefix;
}

std::string IpPrefix::ToString() const {
  return IpAddress{.family = family, .bytes = bytes}.ToString() + "/" + std::to_string(length);
}

}  // namespace geodesic::routerd::bgp
