#include "topology/inventory.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cmath>

namespace geodesic::topology {

double GreatCircleKm(const v1::GeoPosition& a, const v1::GeoPosition& b) {
  constexpr double kEarthRadiusKm = 6371.0;
  constexpr double kRad = M_PI / 180.0;
  const double dlat = (b.latitude_deg() - a.latitude_deg()) * kRad;
  const double dlon = (b.longitude_deg() - a.longitude_deg()) * kRad;
  const double h = std::sin(dlat / 2) * std::sin(dlat / 2) +
                   std::cos(a.latitude_deg() * kRad) * std::cos(b.latitude_deg() * kRad) *
                       std::sin(dlon / 2) * std::sin(dlon / 2);
  return 2 * kEarthRadiusKm * std::asin(std::min(1.0, std::sqrt(h)));
}

uint64_t FiberLatencyUs(double great_circle_km) {
  const double us = great_circle_km * kFiberRouteFactor * kFiberUsPerKm;
  if (!(us >= static_cast<double>(kMinLinkLatencyUs))) return kMinLinkLatencyUs;  // also NaN
  if (us >= static_cast<double>(kMaxLinkLatencyUs)) return kMaxLinkLatencyUs;
  return std::max<uint64_t>(kMinLinkLatencyUs, static_cast<uint64_t>(std::llround(us)));
}

bool IsValidPrefix(const std::string& cidr) {
  const size_t slash = cidr.find('/');
  if (slash == std::string::npos || slash + 1 >= cidr.size()) return false;
  const std::string address = cidr.substr(0, slash);
  const std::string length_text = cidr.substr(slash + 1);
  if (length_text.size() > 3) return false;
  int length = 0;
  for (char c : length_text) {
    if (c < '0' || c > '9') return false;
    length = length * 10 + (c - '0');
  }
  unsigned char bytes[16] = {};
  int total_bits = 0;
  if (inet_pton(AF_INET, address.c_str(), bytes) == 1) {
    total_bits = 32;
  } else if (inet_pton(AF_INET6, address.c_str(), bytes) == 1) {
    total_bits = 128;
  } else {
    return false;
  }
  if (length > total_bits) return false;
  for (int bit = length; bit < total_bits; ++bit) {
    if (bytes[bit / 8] & (0x80 >> (bit % 8))) return false;  // host bits set
  }
  return true;
}

}  // namespace geodesic::topology
