#pragma once
// Imports a REPETITA topology (the text format of the REPETITA traffic
// engineering framework; ../shared/data/README.md describes it):
//
//   <name>.graph           NODES <n> / label x y / n rows, blank line,
//                          EDGES <m> / label src dest weight bw delay / m rows
//   <name>.0000.demands    DEMANDS <k> / label src dest bw / k rows
//
// Mapping (ids: see topology/internal/imported_network.h and SanitizeId):
// - node i -> facility SanitizeId(label) (unique with -2, -3, ...), display
//   name = label, position lat = y, lon = x, region "", one backbone router
//   "<facility>-r", prefix 10.<i / 256>.<i % 256>.0/24.
// - edge -> one directed link: id SanitizeId(label) when no other edge's label
//   maps to the same id, else "<src facility>-<dst facility>-<n>"; capacity
//   bw kbit/s / 1e6 -> capacity_gbps; igp_metric = weight (integer >= 1).
// - latency: both ends placed -> great circle x kFiberRouteFactor x
//   kFiberUsPerKm. An end at (0, 0) (unknown position) -> the delay column,
//   read as 0.6 km of great circle per unit (kRepetitaKmPerDelayUnit), then
//   the same fiber rule; delay 0 -> the mean latency of the file's other links
//   (1 ms when there are none).
// - demand -> elephant-flow workload: id SanitizeId(label) (unique with -2,
//   ...), src facility, dst_prefix = the dst facility's prefix, bw kbit/s /
//   1e6 -> demand_gbps, priority 0. Rows with bw 0 (pairs without traffic in
//   the matrix) carry no workload and are skipped.
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "topology/inventory.h"

namespace geodesic::topology {

// The delay column of the 2016TopologyZooUCL datasets is proportional to the
// great-circle distance: delay / km is 1.67 (median; 1.67-1.76 across the
// eight networks of ../shared/data) on edges whose ends are both placed, i.e.
// one unit is 0.6 km. Edges with an unplaced end carry the mean of the placed
// edges' delays (Cogentco: 825 = the mean 824.6), so they get the network's
// average length.
inline constexpr double kRepetitaKmPerDelayUnit = 0.6;

// Reads `graph_path` and, unless `demands_path` is empty, the demands.
// NotFound when a file cannot be read. InvalidArgument when the input is
// malformed, listing each problem as "file:line: reason": missing section or
// wrong section header, wrong column header, truncated section (fewer rows
// than its count; reported at the count's line), content after the last
// section, wrong field count, non-numeric field, coordinate out of range,
// capacity <= 0, weight < 1, negative delay or demand, node index out of
// range, demand from a node to itself, a label used twice within a section.
// Nothing is returned on error.
// Skipped, each with one "file:line: ..." line appended to `warnings` (when
// not null): a self-loop edge (a well-formed edge from a node to itself: it
// carries no traffic). Parallel edges between the same nodes are kept (they
// are parallel circuits), and so are their capacities.
[[nodiscard]] absl::StatusOr<Topology> LoadRepetita(const std::string& graph_path,
                                                    const std::string& demands_path,
                                                    std::vector<std::string>* warnings = nullptr);

}  // namespace geodesic::topology
