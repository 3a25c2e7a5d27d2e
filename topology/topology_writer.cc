#include "topology/topology_writer.h"

#include <yaml-cpp/yaml.h>

#include <charconv>
#include <cmath>

namespace geodesic::topology {
namespace {

// The shortest text that reads back as exactly `value`; plain decimals for
// the magnitudes an inventory holds, exponent form outside them.
std::string Number(double value) {
  char buffer[64];
  const double magnitude = std::fabs(value);
  const auto format = (value == 0 || (magnitude >= 1e-6 && magnitude < 1e15))
                          ? std::chars_format::fixed
                          : std::chars_format::general;
  const auto result = std::to_chars(buffer, buffer + sizeof(buffer), value, format);
  return std::string(buffer, result.ptr);
}

template <typename Strings>
void StringList(YAML::Emitter& out, const char* key, const Strings& values) {
  out << YAML::Key << key << YAML::Value << YAML::Flow << YAML::BeginSeq;
  for (const auto& value : values) out << value;
  out << YAML::EndSeq;
}

void WriteFacility(YAML::Emitter& out, const v1::Facility& facility) {
  out << YAML::Flow << YAML::BeginMap;
  out << YAML::Key << "id" << YAML::Value << facility.id();
  out << YAML::Key << "name" << YAML::Value << facility.display_name();
  if (!facility.region().empty()) out << YAML::Key << "region" << YAML::Value << facility.region();
  out << YAML::Key << "position" << YAML::Value << YAML::Flow << YAML::BeginMap;
  out << YAML::Key << "lat" << YAML::Value << Number(facility.position().latitude_deg());
  out << YAML::Key << "lon" << YAML::Value << Number(facility.position().longitude_deg());
  out << YAML::EndMap;
  if (!facility.prefixes().empty()) StringList(out, "prefixes", facility.prefixes());
  out << YAML::EndMap;
}

void WriteNode(YAML::Emitter& out, const v1::Node& node) {
  out << YAML::Flow << YAML::BeginMap;
  out << YAML::Key << "id" << YAML::Value << node.id();
  out << YAML::Key << "facility" << YAML::Value << node.facility_id();
  out << YAML::Key << "role" << YAML::Value
      << (node.role() == v1::NODE_ROLE_FABRIC_SWITCH ? "fabric" : "backbone");
  out << YAML::EndMap;
}

void WriteLink(YAML::Emitter& out, const v1::Link& link) {
  out << YAML::Flow << YAML::BeginMap;
  out << YAML::Key << "id" << YAML::Value << link.id();
  out << YAML::Key << "from" << YAML::Value << link.src_node_id();
  out << YAML::Key << "to" << YAML::Value << link.dst_node_id();
  out << YAML::Key << "capacity_gbps" << YAML::Value << Number(link.capacity_gbps());
  out << YAML::Key << "metric" << YAML::Value << link.igp_metric();
  out << YAML::Key << "latency_us" << YAML::Value << link.latency_us();
  if (!link.srlgs().empty()) StringList(out, "srlgs", link.srlgs());
  out << YAML::EndMap;
}

void WriteFabric(YAML::Emitter& out, const v1::Fabric& fabric) {
  out << YAML::BeginMap;
  out << YAML::Key << "facility" << YAML::Value << fabric.facility_id();
  out << YAML::Key << "planes" << YAML::Value << fabric.planes();
  out << YAML::Key << "rails" << YAML::Value << fabric.rails();
  out << YAML::Key << "gpus" << YAML::Value << fabric.gpus();
  out << YAML::Key << "nic_speed_gbps" << YAML::Value << Number(fabric.nic_speed_gbps());
  out << YAML::Key << "backbone_uplink_gbps" << YAML::Value
      << Number(fabric.backbone_uplink_gbps());
  out << YAML::Key << "layers" << YAML::Value << YAML::BeginSeq;
  for (const auto& layer : fabric.layers()) {
    out << YAML::Flow << YAML::BeginMap;
    out << YAML::Key << "name" << YAML::Value << layer.name();
    out << YAML::Key << "switch_count" << YAML::Value << layer.switch_count();
    out << YAML::Key << "downlink_ports" << YAML::Value << layer.downlink_ports();
    out << YAML::Key << "uplink_ports" << YAML::Value << layer.uplink_ports();
    out << YAML::Key << "port_speed_gbps" << YAML::Value << Number(layer.port_speed_gbps());
    out << YAML::EndMap;
  }
  out << YAML::EndSeq;
  out << YAML::EndMap;
}

void WriteService(YAML::Emitter& out, const v1::Service& service) {
  out << YAML::Flow << YAML::BeginMap;
  out << YAML::Key << "id" << YAML::Value << service.id();
  StringList(out, "replicas", service.replica_facility_ids());
  out << YAML::Key << "service_time_us" << YAML::Value << service.service_time_us();
  out << YAML::EndMap;
}

void WriteWorkload(YAML::Emitter& out, const v1::Workload& workload) {
  out << YAML::Flow << YAML::BeginMap;
  out << YAML::Key << "id" << YAML::Value << workload.id();
  if (workload.has_elephant()) {
    const auto& flow = workload.elephant();
    out << YAML::Key << "kind" << YAML::Value << "elephant";
    out << YAML::Key << "src" << YAML::Value << flow.src_facility_id();
    out << YAML::Key << "dst_prefix" << YAML::Value << flow.dst_prefix();
    out << YAML::Key << "demand_gbps" << YAML::Value << Number(flow.demand_gbps());
    out << YAML::Key << "priority" << YAML::Value << flow.priority();
  } else if (workload.has_chain()) {
    const auto& chain = workload.chain();
    out << YAML::Key << "kind" << YAML::Value << "chain";
    out << YAML::Key << "origin" << YAML::Value << chain.origin_facility_id();
    StringList(out, "services", chain.service_ids());
    out << YAML::Key << "latency_budget_us" << YAML::Value << chain.latency_budget_us();
  }
  if (!workload.tenant().empty()) out << YAML::Key << "tenant" << YAML::Value << workload.tenant();
  out << YAML::EndMap;
}

template <typename Entity, typename WriteOne>
void Section(YAML::Emitter& out, const char* key, const std::vector<Entity>& entities,
             bool required, WriteOne write_one) {
  if (entities.empty() && !required) return;
  out << YAML::Key << key << YAML::Value;
  if (entities.empty()) {
    out << YAML::Flow << YAML::BeginSeq << YAML::EndSeq;
    return;
  }
  out << YAML::BeginSeq;
  for (const auto& entity : entities) write_one(out, entity);
  out << YAML::EndSeq;
}

}  // namespace

std::string WriteTopologyYaml(const Topology& topology) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  Section(out, "facilities", topology.facilities, true, WriteFacility);
  Section(out, "nodes", topology.nodes, true, WriteNode);
  Section(out, "links", topology.links, true, WriteLink);
  Section(out, "fabrics", topology.fabrics, false, WriteFabric);
  Section(out, "services", topology.services, false, WriteService);
  Section(out, "workloads", topology.workloads, false, WriteWorkload);
  out << YAML::EndMap;
  return std::string("# Geodesic topology, project format (see deploy/examples/backbone.yaml).\n") +
         out.c_str() + "\n";
}

}  // namespace geodesic::topology
