#include "topology/inventory_proto.h"

#include "topology/project_reader.h"
#include "topology/topology_writer.h"

namespace geodesic::topology {
namespace {

template <typename T>
void CopyInto(const std::vector<T>& from, google::protobuf::RepeatedPtrField<T>* to) {
  to->Reserve(static_cast<int>(from.size()));
  for (const auto& item : from) *to->Add() = item;
}

template <typename T>
std::vector<T> CopyOut(const google::protobuf::RepeatedPtrField<T>& from) {
  return {from.begin(), from.end()};
}

}  // namespace

v1::Inventory ToInventoryProto(const Topology& topology) {
  v1::Inventory inventory;
  CopyInto(topology.facilities, inventory.mutable_facilities());
  CopyInto(topology.nodes, inventory.mutable_nodes());
  CopyInto(topology.links, inventory.mutable_links());
  CopyInto(topology.fabrics, inventory.mutable_fabrics());
  CopyInto(topology.services, inventory.mutable_services());
  CopyInto(topology.workloads, inventory.mutable_workloads());
  return inventory;
}

absl::StatusOr<Topology> TopologyFromInventoryProto(const v1::Inventory& inventory,
                                                    const std::string& origin) {
  Topology topology;
  topology.facilities = CopyOut(inventory.facilities());
  topology.nodes = CopyOut(inventory.nodes());
  topology.links = CopyOut(inventory.links());
  topology.fabrics = CopyOut(inventory.fabrics());
  topology.services = CopyOut(inventory.services());
  topology.workloads = CopyOut(inventory.workloads());
  // One validator for every way an inventory arrives: render the wire form in
  // the project format and read it back through the file reader. The writer
  // round-trips whatever the reader accepts, so valid input comes back equal.
  return ParseTopology(WriteTopologyYaml(topology), origin);
}

}  // namespace geodesic::topology
