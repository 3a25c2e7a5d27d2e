#include "sim/netns/netns_lab.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

namespace geodesic::sim {

absl::StatusOr<std::unique_ptr<NetnsLab>> NetnsLab::Start(NetnsLabOptions options) {
  std::unique_ptr<NetnsLab> netns_lab(new NetnsLab(std::move(options)));
  const NetnsLabOptions& opts = netns_lab->options_;
  auto lab = LocalLab::Create({.source_dir = opts.source_dir,
                               .binary_dir = opts.binary_dir,
                               .work_dir = opts.work_dir,
                               .topology_path = opts.topology_path,
                               .probe_interval_ms = 0,
                               .pathcomp_listen_host = "0.0.0.0"});
  if (!lab.ok()) return lab.status();
  netns_lab->lab_ = *std::move(lab);
  NetnsOptions backbone_options = opts.backbone;
  backbone_options.management_network = true;
  auto backbone = NetnsBackbone::Create(netns_lab->lab_->topology(), backbone_options);
  if (!backbone.ok()) return backbone.status();
  netns_lab->backbone_ = *std::move(backbone);
  if (absl::Status started = netns_lab->lab_->StartPathcomp(); !started.ok()) return started;
  for (const auto& facility : netns_lab->lab_->topology().facilities) {
    if (absl::Status started = netns_lab->lab_->StartAgent(facility.id()); !started.ok()) return started;
    if (absl::Status started = netns_lab->StartFacility(facility.id()); !started.ok()) return started;
  }
  return netns_lab;
}

NetnsLab::~NetnsLab() {
  routerds_.clear();
  routers_.clear();
  lab_.reset();
  backbone_.reset();
}

absl::StatusOr<std::string> NetnsLab::PathcompAddressFrom(const std::string& facility_id) const {
  absl::StatusOr<NetnsFacility> facility = backbone_->Facility(facility_id);
  if (!facility.ok()) return facility.status();
  const std::string& listening = lab_->pathcomp_address();  // "0.0.0.0:PORT"
  const size_t colon = listening.rfind(':');
  if (colon == std::string::npos) return absl::InternalError(absl::StrCat("pathcomp's address ", listening, " has no port"));
  return absl::StrCat(facility->management_host_address, listening.substr(colon));
}

absl::StatusOr<std::string> NetnsLab::NextHop(const std::string& link_id, const std::string& facility_id,
                                              bool v6) const {
  absl::StatusOr<NetnsLink> link = backbone_->Link(link_id);
  if (!link.ok()) return link.status();
  absl::StatusOr<NetnsLinkEnd> near = backbone_->End(link_id, facility_id);
  if (!near.ok()) return near.status();
  const NetnsLinkEnd& far = near->interface == link->a.interface ? link->b : link->a;
  return v6 ? far.address_v6 : far.address_v4;
}

NetnsRouter* NetnsLab::router(const std::string& facility_id) {
  auto it = routers_.find(facility_id);
  return it == routers_.end() ? nullptr : it->second.get();
}

absl::Status NetnsLab::StartFacility(const std::string& facility_id) {
  auto router = NetnsRouter::Start(
      *backbone_, {.facility_id = facility_id, .work_dir = absl::StrCat(options_.work_dir, "/frr-", facility_id),
                   .local_as = kRouterAs, .listen_address = kRouterAddress,
                   .peers = {{.address = kRouterdAddress, .remote_as = kRouterdAs}}, .stalepath_time_s = 360});
  if (!router.ok()) return router.status();
  routers_[facility_id] = *std::move(router);

  std::string bgp = absl::StrCat(
      "bgp:\n  local_as: ", kRouterdAs, "\n  router_id: ", kRouterdAddress,
      "\n  hold_time_s: 9\n  graceful_restart_s: 120\n  bandwidth_per_weight_mbps: ",
      options_.bandwidth_per_weight_mbps, "\n  peers:\n    - {address: ", kRouterAddress,
      ", port: ", NetnsRouter::kBgpPort, ", remote_as: ", kRouterAs, ", local_address: ", kRouterdAddress,
      "}\n  next_hops:\n");
  for (const v1::Link& link : lab_->topology().links) {
    if (link.src_facility_id() != facility_id) continue;
    absl::StatusOr<std::string> v4 = NextHop(link.id(), facility_id, false);
    if (!v4.ok()) return v4.status();
    absl::StatusOr<std::string> v6 = NextHop(link.id(), facility_id, true);
    if (!v6.ok()) return v6.status();
    absl::StrAppend(&bgp, "    - {link: ", link.id(), ", ipv4: ", *v4, ", ipv6: \"", *v6, "\"}\n");
  }
  absl::StatusOr<std::string> pathcomp = PathcompAddressFrom(facility_id);
  if (!pathcomp.ok()) return pathcomp.status();
  absl::StatusOr<std::string> config = lab_->WriteRouterdConfig(facility_id, {*pathcomp}, bgp);
  if (!config.ok()) return config.status();
  absl::StatusOr<ChildProcessPtr> routerd =
      backbone_->Spawn(facility_id, {options_.binary_dir + "/bin/routerd", "--config", *config},
                       absl::StrCat(options_.work_dir, "/logs/routerd-", facility_id, ".log"));
  if (!routerd.ok()) return routerd.status();
  routerds_[facility_id] = *std::move(routerd);
  return absl::OkStatus();
}

absl::Status NetnsLab::SetFiberUp(const std::string& link_id, bool up) {
  absl::StatusOr<NetnsLink> link = backbone_->Link(link_id);
  if (!link.ok()) return link.status();
  if (absl::Status set = backbone_->SetLinkUp(link_id, up); !set.ok()) return set;
  for (const std::string& direction : {link->forward_id, link->reverse_id}) {
    if (direction.empty()) continue;
    if (absl::Status set = lab_->SetLinkState(direction, up ? "up" : "down"); !set.ok()) return set;
  }
  return absl::OkStatus();
}

}  // namespace geodesic::sim
