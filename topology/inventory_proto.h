#pragma once
// A Topology as the wire's v1::Inventory (operator.proto's ImportTopology),
// and back with the same validation a topology file gets.
#include <string>

#include "absl/status/statusor.h"
#include "geodesic/v1/model.pb.h"
#include "topology/inventory.h"

namespace geodesic::topology {

v1::Inventory ToInventoryProto(const Topology& topology);

// The inventory as a Topology, validated exactly as the project format is
// (topology/project_reader.h): references, duplicate ids, ranges, prefixes.
// Runtime state the format does not carry (link health, admin state, fabric
// plane health) is dropped. InvalidArgument lists every problem, each
// prefixed with `origin` and the entry's line in the inventory's YAML form.
[[nodiscard]] absl::StatusOr<Topology> TopologyFromInventoryProto(const v1::Inventory& inventory,
                                                                 const std::string& origin);

}  // namespace geodesic::topology
