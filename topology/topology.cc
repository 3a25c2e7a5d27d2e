#include "topology/topology.h"

#include <arpa/inet.h>

#include <cmath>
#include <fstream>
#include <sstream>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "config/config_reader.h"

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

namespace {

struct Loader {
  explicit Loader(config::ConfigReader& reader) : root(reader) {}

  config::ConfigReader& root;
  Topology topology;
  std::set<std::string> facility_ids;
  std::map<std::string, const v1::Facility*> facilities;  // filled once all are loaded
  std::map<std::string, std::string> node_facility;
  std::set<std::string> link_ids;
  std::map<std::string, std::string> prefix_owner;

  void LoadFacilities() {
    for (auto& entry : root.RequiredMapList("facilities")) {
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
        auto [it, inserted] = prefix_owner.emplace(prefix, facility.id());
        if (!inserted) {
          entry.AddError("prefixes", absl::StrCat(prefix, " is already announced by ", it->second));
          continue;
        }
        facility.add_prefixes(prefix);
      }
      entry.RejectUnknownKeys();
      if (facility.id().empty()) continue;
      if (!facility_ids.insert(facility.id()).second) {
        entry.AddError("id", absl::StrCat("duplicate facility id ", facility.id()));
        continue;
      }
      topology.facilities.push_back(facility);
    }
    for (const auto& facility : topology.facilities) facilities[facility.id()] = &facility;
  }

  void LoadNodes() {
    for (auto& entry : root.RequiredMapList("nodes")) {
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
      if (!facilities.count(node.facility_id())) {
        entry.AddError("facility", absl::StrCat("unknown facility ", node.facility_id()));
        continue;
      }
      if (!node_facility.emplace(node.id(), node.facility_id()).second) {
        entry.AddError("id", absl::StrCat("duplicate node id ", node.id()));
        continue;
      }
      topology.nodes.push_back(node);
    }
  }

  void AddLink(config::ConfigReader& entry, const std::string& key, v1::Link link) {
    if (link.id().empty()) return;
    if (!link_ids.insert(link.id()).second) {
      entry.AddError(key, absl::StrCat("duplicate link id ", link.id()));
      return;
    }
    topology.links.push_back(std::move(link));
  }

  void LoadLinks() {
    for (auto& entry : root.RequiredMapList("links")) {
      v1::Link link;
      link.set_id(entry.RequiredId("id"));
      link.set_src_node_id(entry.RequiredId("from"));
      link.set_dst_node_id(entry.RequiredId("to"));
      const std::string reverse_id = entry.Has("reverse") ? entry.RequiredId("reverse") : "";
      link.set_capacity_gbps(entry.RequiredDouble("capacity_gbps", 0.001, 1e6));
      link.set_igp_metric(static_cast<uint32_t>(entry.OptionalUint("metric", 10, 1, 16777215)));
      const bool has_latency = entry.Has("latency_us");
      link.set_latency_us(entry.OptionalUint("latency_us", 0, 1, 1'000'000));
      for (const auto& srlg : entry.OptionalStringList("srlgs")) link.add_srlgs(srlg);
      link.set_admin_state(v1::ADMIN_STATE_UP);
      entry.RejectUnknownKeys();

      const auto src = node_facility.find(link.src_node_id());
      const auto dst = node_facility.find(link.dst_node_id());
      bool ok = true;
      if (!link.src_node_id().empty() && src == node_facility.end()) {
        entry.AddError("from", absl::StrCat("unknown node ", link.src_node_id()));
        ok = false;
      }
      if (!link.dst_node_id().empty() && dst == node_facility.end()) {
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
        const double km = GreatCircleKm(facilities.at(src->second)->position(),
                                        facilities.at(dst->second)->position());
        link.set_latency_us(
            std::max<uint64_t>(1, std::llround(km * kFiberRouteFactor * kFiberUsPerKm)));
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

  void LoadServices() {
    std::set<std::string> ids;
    for (auto& entry : root.OptionalMapList("services")) {
      v1::Service service;
      service.set_id(entry.RequiredId("id"));
      service.set_service_time_us(entry.OptionalUint("service_time_us", 0, 0, 60'000'000));
      for (const auto& replica : entry.OptionalStringList("replicas")) {
        if (!facilities.count(replica)) {
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
      if (!ids.insert(service.id()).second) {
        entry.AddError("id", absl::StrCat("duplicate service id ", service.id()));
        continue;
      }
      topology.services.push_back(service);
    }
  }
};

}  // namespace

absl::StatusOr<Topology> ParseTopology(const std::string& yaml_text, const std::string& origin) {
  auto root = config::ConfigReader::FromString(yaml_text, origin);
  if (!root.ok()) return root.status();
  Loader loader(*root);
  loader.LoadFacilities();
  loader.LoadNodes();
  loader.LoadLinks();
  loader.LoadServices();
  root->RejectUnknownKeys();
  if (auto status = root->status(); !status.ok()) return status;
  return std::move(loader.topology);
}

absl::StatusOr<Topology> LoadTopologyFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot open the file"));
  std::stringstream text;
  text << in.rdbuf();
  return ParseTopology(text.str(), path);
}

}  // namespace geodesic::topology
