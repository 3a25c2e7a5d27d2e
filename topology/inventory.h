#pragma once
// A backbone inventory: facilities, nodes, links, fabrics, services and
// workloads, whatever format it was read from (the project's YAML/JSON format,
// REPETITA, Topology Zoo GraphML), plus the geometry and address helpers the
// readers share. Plain values; thread-compatible.
#include <cstdint>
#include <string>
#include <vector>

#include "geodesic/v1/model.pb.h"

namespace geodesic::topology {

struct Topology {
  std::vector<v1::Facility> facilities;
  std::vector<v1::Node> nodes;
  std::vector<v1::Link> links;      // directed; src/dst facility filled in
  std::vector<v1::Fabric> fabrics;  // at most one per facility
  std::vector<v1::Service> services;
  std::vector<v1::Workload> workloads;
};

// Fiber latency assumed when a link gives none: light in fiber covers ~200 km
// per ms and fiber routes run ~25% longer than the great circle.
inline constexpr double kFiberRouteFactor = 1.25;
inline constexpr double kFiberUsPerKm = 5.0;

// The one-way latency range a link may have (the project format's bounds).
inline constexpr uint64_t kMinLinkLatencyUs = 1;
inline constexpr uint64_t kMaxLinkLatencyUs = 1'000'000;

// Great-circle distance in km.
double GreatCircleKm(const v1::GeoPosition& a, const v1::GeoPosition& b);

// One-way latency of a fiber span joining two points `great_circle_km` apart:
// km x kFiberRouteFactor x kFiberUsPerKm, rounded, clamped to the link range.
uint64_t FiberLatencyUs(double great_circle_km);

// True for "a.b.c.d/len" and IPv6 "x::/len" with host bits clear.
bool IsValidPrefix(const std::string& cidr);

}  // namespace geodesic::topology
