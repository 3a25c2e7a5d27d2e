#pragma once
// Imports an Internet Topology Zoo network from its GraphML file.
//
// Mapping (ids and prefixes: see topology/internal/imported_network.h):
// - <node> -> facility SanitizeId(label) (unique with -2, -3, ...; the node's
//   XML id when it has no label), display name = label, position from the
//   Latitude/Longitude data, region "", one backbone router "<facility>-r",
//   prefix 10.<i / 256>.<i % 256>.0/24 for the i-th node in file order. A node
//   without Latitude and Longitude (the Zoo's external nodes) is unplaced and
//   stored at (0, 0).
// - <edge> -> two directed links "<a>-<b>" and "<b>-<a>" (parallel edges get
//   -2, -3, ...); one link when the graph or the edge is directed.
//   capacity_gbps = LinkSpeedRaw (bit/s) / 1e9, or kGraphmlDefaultCapacityGbps
//   when the edge has none; igp_metric = floor(10 x the file's largest
//   capacity / the link's capacity), at least 1 (the inverse-capacity weights
//   of the REPETITA datasets: 10, 40, 200 for 10, 2.5, 0.5 Gbps); latency from
//   the great circle between the ends (see FiberLatencyUs), or, with an
//   unplaced end, the mean latency of the file's other links (1 ms when none).
// The keys are found by their attr.name (Latitude, Longitude, label,
// LinkSpeedRaw; any case) through the <key> declarations, so the data ids
// ("d29") may differ from file to file. Other data, <default> values of keys,
// ports and nested graphs are not used.
#include <string>

#include "absl/status/statusor.h"
#include "topology/inventory.h"

namespace geodesic::topology {

// What the REPETITA datasets give a Zoo link that states no speed (every
// Cogentco link is 1,000,000 kbit/s there).
inline constexpr double kGraphmlDefaultCapacityGbps = 1.0;

// NotFound when the file cannot be read. InvalidArgument, listing each
// problem as "file:line: reason", for XML that is not well formed, a root
// other than <graphml>, other than one <graph>, a hyperedge, a node without
// an id or declared twice, an edge naming an unknown node or looping on one,
// a non-numeric or out-of-range Latitude/Longitude, a node with only one of
// them, a LinkSpeedRaw that is not a positive number, or no node or no edge.
// Nothing is returned on error.
[[nodiscard]] absl::StatusOr<Topology> LoadGraphml(const std::string& path);

}  // namespace geodesic::topology
