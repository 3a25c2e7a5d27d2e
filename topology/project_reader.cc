#include "topology/project_reader.h"

#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "config/config_reader.h"

namespace geodesic::topology {
namespace {

using config::ConfigReader;

// Upper bound of every rate in the format (capacities, demands, NIC and port speeds).
constexpr double kMaxGbps = 1e6;

// A rate that must be positive: the reader reports missing, malformed and
// negative values; a zero that parsed cleanly is reported here.
double RequiredPositiveGbps(ConfigReader& entry, const std::string& key) {
  const size_t errors_before = entry.error_count();
  const double value = entry.RequiredDouble(key, 0, kMaxGbps);
  if (value == 0 && entry.error_count() == errors_before) {
    entry.AddError(key, "must be greater than 0");
  }
  return value;
}

uint32_t RequiredCount(ConfigReader& entry, const std::string& key, uint32_t max) {
  return static_cast<uint32_t>(entry.RequiredUint(key, 1, max));
}

class ProjectReader {
 public:
  explicit ProjectReader(ConfigReader& root) : root_(root) {}

  Topology Read() && {
    LoadFacilities();
    LoadNodes();
    LoadLinks();
    LoadFabrics();
    LoadServices();
    LoadWorkloads();
    root_.RejectUnknownKeys();
    return std::move(topology_);
  }

  // Only `workloads:`, referring to what `known` holds.
  std::vector<v1::Workload> ReadWorkloads(const Topology& known) && {
    for (const auto& facility : known.facilities) {
      facilities_[facility.id()] = facility.position();
      for (const auto& prefix : facility.prefixes()) prefix_owner_.emplace(prefix, facility.id());
    }
    for (const auto& service : known.services) service_ids_.insert(service.id());
    LoadWorkloads();
    root_.RejectUnknownKeys();
    return std::move(topology_.workloads);
  }

 private:
  void LoadFacilities() {
    for (auto& entry : root_.RequiredMapList("facilities")) {
      v1::Facility facility;
      facility.set_id(entry.RequiredId("id"));
      facility.set_display_name(entry.OptionalString("name", facility.id()));
      facility.set_region(entry.OptionalString("region", ""));
      auto position = entry.RequiredMap("position");
      facility.mutable_position()->set_latitude_deg(position.RequiredDouble("lat", -90, 90));
      facility.mutable_position()->set_longitude_deg(position.RequiredDouble("lon", -180, 180));
      position.RejectUnknownKeys();
      for (const auto& prefix : entry.OptionalStringList("prefixes")) {
        if (!IsValidPrefix(prefix)) {
          entry.AddError("prefixes", absl::StrCat("\"", prefix,
                                                  "\" is not a CIDR prefix with host bits clear"));
          continue;
        }
        auto [it, inserted] = prefix_owner_.emplace(prefix, facility.id());
        if (!inserted) {
          entry.AddError("prefixes", absl::StrCat(prefix, " is already announced by ", it->second));
          continue;
        }
        facility.add_prefixes(prefix);
      }
      entry.RejectUnknownKeys();
      if (facility.id().empty()) continue;
      if (facilities_.count(facility.id())) {
        entry.AddError("id", absl::StrCat("duplicate facility id ", facility.id()));
        continue;
      }
      facilities_[facility.id()] = facility.position();
      topology_.facilities.push_back(facility);
    }
  }

  void LoadNodes() {
    for (auto& entry : root_.RequiredMapList("nodes")) {
      v1::Node node;
      node.set_id(entry.RequiredId("id"));
      node.set_facility_id(entry.RequiredId("facility"));
      const std::string role = entry.OptionalString("role", "backbone");
      if (role == "backbone") {
        node.set_role(v1::NODE_ROLE_BACKBONE_ROUTER);
      } else if (role == "fabric") {
        node.set_role(v1::NODE_ROLE_FABRIC_SWITCH);
      } else {
        entry.AddError("role", absl::StrCat("expected backbone or fabric, got \"", role, "\""));
      }
      entry.RejectUnknownKeys();
      if (node.id().empty() || node.facility_id().empty()) continue;
      if (!facilities_.count(node.facility_id())) {
        entry.AddError("facility", absl::StrCat("unknown facility ", node.facility_id()));
        continue;
      }
      if (!node_facility_.emplace(node.id(), node.facility_id()).second) {
        entry.AddError("id", absl::StrCat("duplicate node id ", node.id()));
        continue;
      }
      topology_.nodes.push_back(node);
    }
  }

  void AddLink(ConfigReader& entry, const std::string& key, v1::Link link) {
    if (link.id().empty()) return;
    if (!link_ids_.insert(link.id()).second) {
      entry.AddError(key, absl::StrCat("duplicate link id ", link.id()));
      return;
    }
    topology_.links.push_back(std::move(link));
  }

  void LoadLinks() {
    for (auto& entry : root_.RequiredMapList("links")) {
      v1::Link link;
      link.set_id(entry.RequiredId("id"));
      link.set_src_node_id(entry.RequiredId("from"));
      link.set_dst_node_id(entry.RequiredId("to"));
      const std::string reverse_id = entry.Has("reverse") ? entry.RequiredId("reverse") : "";
      link.set_capacity_gbps(RequiredPositiveGbps(entry, "capacity_gbps"));
      link.set_igp_metric(static_cast<uint32_t>(entry.OptionalUint("metric", 10, 1, 16777215)));
      const bool has_latency = entry.Has("latency_us");
      link.set_latency_us(
          entry.OptionalUint("latency_us", 0, kMinLinkLatencyUs, kMaxLinkLatencyUs));
      for (const auto& srlg : entry.OptionalStringList("srlgs")) link.add_srlgs(srlg);
      link.set_admin_state(v1::ADMIN_STATE_UP);
      entry.RejectUnknownKeys();

      const auto src = node_facility_.find(link.src_node_id());
      const auto dst = node_facility_.find(link.dst_node_id());
      bool ok = true;
      if (!link.src_node_id().empty() && src == node_facility_.end()) {
        entry.AddError("from", absl::StrCat("unknown node ", link.src_node_id()));
        ok = false;
      }
      if (!link.dst_node_id().empty() && dst == node_facility_.end()) {
        entry.AddError("to", absl::StrCat("unknown node ", link.dst_node_id()));
        ok = false;
      }
      if (!ok || link.src_node_id().empty() || link.dst_node_id().empty()) continue;
      if (src->second == dst->second) {
        entry.AddError("to", absl::StrCat("a backbone link must join two facilities; both ends are in ",
                                          src->second));
        continue;
      }
      link.set_src_facility_id(src->second);
      link.set_dst_facility_id(dst->second);
      if (!has_latency) {
        link.set_latency_us(
            FiberLatencyUs(GreatCircleKm(facilities_.at(src->second), facilities_.at(dst->second))));
      }
      if (!reverse_id.empty()) {
        v1::Link reverse = link;
        reverse.set_id(reverse_id);
        reverse.set_src_node_id(link.dst_node_id());
        reverse.set_dst_node_id(link.src_node_id());
        reverse.set_src_facility_id(link.dst_facility_id());
        reverse.set_dst_facility_id(link.src_facility_id());
        AddLink(entry, "id", std::move(link));
        AddLink(entry, "reverse", std::move(reverse));
      } else {
        AddLink(entry, "id", std::move(link));
      }
    }
  }

  // Layers are bottom-up: every layer but the top needs uplinks, the top has none.
  void LoadFabricLayers(ConfigReader& entry, v1::Fabric& fabric) {
    auto layers = entry.RequiredMapList("layers");
    std::set<std::string> names;
    for (size_t i = 0; i < layers.size(); ++i) {
      auto& layer_entry = layers[i];
      v1::FabricLayer layer;
      layer.set_name(layer_entry.RequiredString("name"));
      layer.set_switch_count(RequiredCount(layer_entry, "switch_count", 1'000'000));
      layer.set_downlink_ports(RequiredCount(layer_entry, "downlink_ports", 65535));
      layer.set_uplink_ports(
          static_cast<uint32_t>(layer_entry.OptionalUint("uplink_ports", 0, 0, 65535)));
      layer.set_port_speed_gbps(RequiredPositiveGbps(layer_entry, "port_speed_gbps"));
      layer_entry.RejectUnknownKeys();
      const bool top = i + 1 == layers.size();
      if (!top && layer.uplink_ports() == 0) {
        layer_entry.AddError("uplink_ports", absl::StrCat("layer ", layer.name(), " is below ",
                                                          "another layer and needs uplinks"));
      }
      if (top && layer.uplink_ports() != 0) {
        layer_entry.AddError("uplink_ports",
                             "the top layer has no layer above it; uplink_ports must be 0");
      }
      if (!layer.name().empty() && !names.insert(layer.name()).second) {
        layer_entry.AddError("name", absl::StrCat("duplicate layer name ", layer.name()));
      }
      *fabric.add_layers() = std::move(layer);
    }
  }

  void LoadFabrics() {
    std::set<std::string> with_fabric;
    for (auto& entry : root_.OptionalMapList("fabrics")) {
      v1::Fabric fabric;
      fabric.set_facility_id(entry.RequiredId("facility"));
      fabric.set_planes(RequiredCount(entry, "planes", 1024));
      fabric.set_rails(RequiredCount(entry, "rails", 1024));
      fabric.set_gpus(RequiredCount(entry, "gpus", 100'000'000));
      fabric.set_nic_speed_gbps(RequiredPositiveGbps(entry, "nic_speed_gbps"));
      LoadFabricLayers(entry, fabric);
      fabric.set_backbone_uplink_gbps(RequiredPositiveGbps(entry, "backbone_uplink_gbps"));
      entry.RejectUnknownKeys();
      if (fabric.facility_id().empty()) continue;
      if (!facilities_.count(fabric.facility_id())) {
        entry.AddError("facility", absl::StrCat("unknown facility ", fabric.facility_id()));
        continue;
      }
      if (!with_fabric.insert(fabric.facility_id()).second) {
        entry.AddError("facility", absl::StrCat("facility ", fabric.facility_id(),
                                                " already has a fabric (at most one each)"));
        continue;
      }
      topology_.fabrics.push_back(std::move(fabric));
    }
  }

  void LoadServices() {
    for (auto& entry : root_.OptionalMapList("services")) {
      v1::Service service;
      service.set_id(entry.RequiredId("id"));
      service.set_service_time_us(entry.OptionalUint("service_time_us", 0, 0, 60'000'000));
      for (const auto& replica : entry.OptionalStringList("replicas")) {
        if (!facilities_.count(replica)) {
          entry.AddError("replicas", absl::StrCat("unknown facility ", replica));
          continue;
        }
        service.add_replica_facility_ids(replica);
      }
      if (service.replica_facility_ids().empty()) {
        entry.AddError("replicas", "a service needs at least one replica");
      }
      entry.RejectUnknownKeys();
      if (service.id().empty()) continue;
      if (!service_ids_.insert(service.id()).second) {
        entry.AddError("id", absl::StrCat("duplicate service id ", service.id()));
        continue;
      }
      topology_.services.push_back(service);
    }
  }

  // Returns false when the flow cannot be kept.
  bool LoadElephant(ConfigReader& entry, v1::ElephantFlow& flow) {
    flow.set_src_facility_id(entry.RequiredId("src"));
    flow.set_dst_prefix(entry.RequiredString("dst_prefix"));
    flow.set_demand_gbps(RequiredPositiveGbps(entry, "demand_gbps"));
    flow.set_priority(static_cast<uint32_t>(entry.OptionalUint("priority", 0, 0, kMaxPriority)));
    bool ok = true;
    if (!flow.src_facility_id().empty() && !facilities_.count(flow.src_facility_id())) {
      entry.AddError("src", absl::StrCat("unknown facility ", flow.src_facility_id()));
      ok = false;
    }
    if (flow.dst_prefix().empty()) return false;
    if (!IsValidPrefix(flow.dst_prefix())) {
      entry.AddError("dst_prefix", absl::StrCat("\"", flow.dst_prefix(),
                                                "\" is not a CIDR prefix with host bits clear"));
      return false;
    }
    const auto owner = prefix_owner_.find(flow.dst_prefix());
    if (owner == prefix_owner_.end()) {
      entry.AddError("dst_prefix",
                     absl::StrCat(flow.dst_prefix(), " is not announced by any facility"));
      return false;
    }
    if (owner->second == flow.src_facility_id()) {
      entry.AddError("dst_prefix", absl::StrCat(flow.dst_prefix(), " is announced by ",
                                                owner->second, ", the flow's own source"));
      return false;
    }
    return ok;
  }

  bool LoadChain(ConfigReader& entry, v1::AgentChain& chain) {
    chain.set_origin_facility_id(entry.RequiredId("origin"));
    bool ok = true;
    if (!chain.origin_facility_id().empty() && !facilities_.count(chain.origin_facility_id())) {
      entry.AddError("origin", absl::StrCat("unknown facility ", chain.origin_facility_id()));
      ok = false;
    }
    for (const auto& service : entry.OptionalStringList("services")) {
      if (!service_ids_.count(service)) {
        entry.AddError("services", absl::StrCat("unknown service ", service));
        ok = false;
        continue;
      }
      chain.add_service_ids(service);
    }
    if (chain.service_ids().empty() && ok) {
      entry.AddError("services", "a chain calls at least one service");
      ok = false;
    }
    chain.set_latency_budget_us(entry.RequiredUint("latency_budget_us", 1, 60'000'000));
    return ok;
  }

  void LoadWorkloads() {
    std::set<std::string> ids;
    for (auto& entry : root_.OptionalMapList("workloads")) {
      v1::Workload workload;
      workload.set_id(entry.RequiredId("id"));
      const std::string kind = entry.RequiredString("kind");
      bool ok = false;
      if (kind == "elephant") {
        ok = LoadElephant(entry, *workload.mutable_elephant());
      } else if (kind == "chain") {
        ok = LoadChain(entry, *workload.mutable_chain());
      } else if (!kind.empty()) {
        entry.AddError("kind", absl::StrCat("expected elephant or chain, got \"", kind, "\""));
      }
      if (entry.Has("tenant")) workload.set_tenant(entry.RequiredId("tenant"));
      entry.RejectUnknownKeys();  // also catches keys of the other kind
      if (workload.id().empty()) continue;
      if (!ids.insert(workload.id()).second) {
        entry.AddError("id", absl::StrCat("duplicate workload id ", workload.id()));
        continue;
      }
      if (ok) topology_.workloads.push_back(std::move(workload));
    }
  }

  static constexpr uint64_t kMaxPriority = 7;

  ConfigReader& root_;
  Topology topology_;
  std::map<std::string, v1::GeoPosition> facilities_;
  std::map<std::string, std::string> node_facility_;
  std::set<std::string> link_ids_;
  std::set<std::string> service_ids_;
  std::map<std::string, std::string> prefix_owner_;
};

}  // namespace

absl::StatusOr<Topology> ParseTopology(const std::string& yaml_text, const std::string& origin) {
  auto root = config::ConfigReader::FromString(yaml_text, origin);
  if (!root.ok()) return root.status();
  Topology topology = ProjectReader(*root).Read();
  if (auto status = root->status(); !status.ok()) return status;
  return topology;
}

absl::StatusOr<std::vector<v1::Workload>> ParseWorkloads(const std::string& yaml_text, const std::string& origin,
                                                         const Topology& known) {
  auto root = config::ConfigReader::FromString(yaml_text, origin);
  if (!root.ok()) return root.status();
  std::vector<v1::Workload> workloads = ProjectReader(*root).ReadWorkloads(known);
  if (auto status = root->status(); !status.ok()) return status;
  if (workloads.empty()) return absl::InvalidArgumentError(absl::StrCat(origin, ": no workloads in the file"));
  return workloads;
}

absl::StatusOr<Topology> LoadTopologyFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot open the file"));
  std::stringstream text;
  text << in.rdbuf();
  return ParseTopology(text.str(), path);
}

}  // namespace geodesic::topology
