#include "sim/netns/netns_lab.h"

#include <csignal>
#include <cstdlib>
#include <set>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "site_plan/site_plan_reader.h"

namespace geodesic::sim {

absl::StatusOr<std::unique_ptr<NetnsLab>> NetnsLab::Start(NetnsLabOptions options) {
  if (options.probe_interval_ms < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("probe_interval_ms must be 0 (no probing) or positive, not ", options.probe_interval_ms));
  }
  if (options.probe_detect_multiplier < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("probe_detect_multiplier must be at least 1, not ", options.probe_detect_multiplier));
  }
  std::unique_ptr<NetnsLab> netns_lab(new NetnsLab(std::move(options)));
  const NetnsLabOptions& opts = netns_lab->options_;
  // LocalLab never starts a probing agent here (StartProbingAgent does); its
  // probe interval makes the health files carry the fibers' round trips.
  auto lab = LocalLab::Create({.source_dir = opts.source_dir,
                               .binary_dir = opts.binary_dir,
                               .work_dir = opts.work_dir,
                               .topology_path = opts.topology_path,
                               .probe_interval_ms = opts.probe_interval_ms,
                               // plane failures through the agents' fabric source, as drills make them
                               .fabric_health_files = true,
                               .pathcomp_listen_host = "0.0.0.0",
                               .pathcomp_extra_config = opts.pathcomp_extra_config});
  if (!lab.ok()) return lab.status();
  netns_lab->lab_ = *std::move(lab);
  NetnsOptions backbone_options = opts.backbone;
  backbone_options.management_network = true;
  auto backbone = NetnsBackbone::Create(netns_lab->lab_->topology(), backbone_options);
  if (!backbone.ok()) return backbone.status();
  netns_lab->backbone_ = *std::move(backbone);
  if (absl::Status started = netns_lab->lab_->StartPathcomp(); !started.ok()) return started;
  for (const auto& facility : netns_lab->lab_->topology().facilities) {
    absl::Status agent = opts.probe_interval_ms > 0 ? netns_lab->StartProbingAgent(facility.id())
                                                    : netns_lab->lab_->StartAgent(facility.id());
    if (!agent.ok()) return agent;
    if (absl::Status started = netns_lab->StartFacility(facility.id()); !started.ok()) return started;
  }
  return netns_lab;
}

NetnsLab::~NetnsLab() {
  routerds_.clear();
  agents_.clear();
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
  const std::string local_repair = options_.local_repair ? "" : "local_repair:\n  enabled: false\n";
  absl::StatusOr<std::string> config = lab_->WriteRouterdConfig(facility_id, {*pathcomp}, bgp, local_repair);
  if (!config.ok()) return config.status();
  absl::StatusOr<ChildProcessPtr> routerd =
      backbone_->Spawn(facility_id, {options_.binary_dir + "/bin/routerd", "--config", *config},
                       absl::StrCat(options_.work_dir, "/logs/routerd-", facility_id, ".log"));
  if (!routerd.ok()) return routerd.status();
  routerds_[facility_id] = *std::move(routerd);
  return absl::OkStatus();
}

absl::Status NetnsLab::SetFacilityUp(const std::string& facility_id, bool up) {
  if (absl::StatusOr<NetnsFacility> facility = backbone_->Facility(facility_id); !facility.ok()) {
    return facility.status();
  }
  std::set<std::string> veths;  // by forward id: each cut once
  for (const v1::Link& link : lab_->topology().links) {
    if (link.src_facility_id() != facility_id && link.dst_facility_id() != facility_id) continue;
    if (absl::StatusOr<NetnsLink> veth = backbone_->Link(link.id()); veth.ok()) veths.insert(veth->forward_id);
  }
  const bool probing = options_.probe_interval_ms > 0;
  if (!up) {
    for (const std::string& veth : veths) {
      if (absl::Status cut = SetFiberUp(veth, false); !cut.ok()) return cut;
    }
    routerds_.erase(facility_id);
    if (probing) {
      agents_.erase(facility_id);
    } else {
      lab_->Kill("agent/" + facility_id, SIGTERM);
    }
    routers_.erase(facility_id);
    return absl::OkStatus();
  }
  if (absl::Status started = probing ? StartProbingAgent(facility_id) : lab_->Restart("agent/" + facility_id);
      !started.ok()) {
    return started;
  }
  if (absl::Status started = StartFacility(facility_id); !started.ok()) return started;
  for (const std::string& veth : veths) {
    if (absl::Status spliced = SetFiberUp(veth, true); !spliced.ok()) return spliced;
  }
  return absl::OkStatus();
}

absl::Status NetnsLab::StartProbingAgent(const std::string& facility_id) {
  std::string links = "links:\n";
  std::set<std::string> far_ends;  // whose probes it answers: the far ends of every link it touches
  for (const v1::Link& link : lab_->topology().links) {
    if (link.src_facility_id() != facility_id && link.dst_facility_id() != facility_id) continue;
    absl::StatusOr<std::string> far_end = NextHop(link.id(), facility_id, false);
    if (!far_end.ok()) return far_end.status();
    const std::string far_probe_socket = absl::StrCat(*far_end, ":", kProbePort);
    far_ends.insert(far_probe_socket);
    if (link.src_facility_id() == facility_id) {
      absl::StrAppend(&links, "  - {id: ", link.id(), ", peer: ", far_probe_socket, "}\n");
    }
  }
  if (links == "links:\n") return absl::InvalidArgumentError(absl::StrCat(facility_id, " has no links to probe"));
  // Bound to every address: a probe leaves with its link's near veth address
  // (the connected /31's), which is what the far end's accept_from names.
  // The loss window spans 3 s at the drills' 10 ms interval: over 1 s (100
  // probes) a 10% round-trip loss reads below the 2.5% a degraded link needs
  // to be up again once in about 30 windows, and the gray link would flap.
  const std::string probe = absl::StrCat(
      "probe:\n  listen: 0.0.0.0:", kProbePort, "\n  interval_ms: ", options_.probe_interval_ms,
      "\n  detect_multiplier: ", options_.probe_detect_multiplier,
      "\n  window: 300\n  hold_down_ms: 200\n  realtime_priority: 10\n  accept_from: [",
      absl::StrJoin(far_ends, ", "), "]\n");
  absl::StatusOr<std::string> pathcomp = PathcompAddressFrom(facility_id);
  if (!pathcomp.ok()) return pathcomp.status();
  absl::StatusOr<std::string> config = lab_->WriteAgentConfig(facility_id, {*pathcomp}, links, probe);
  if (!config.ok()) return config.status();
  absl::StatusOr<ChildProcessPtr> agent =
      backbone_->Spawn(facility_id, {options_.binary_dir + "/bin/site_agent", "--config", *config},
                       absl::StrCat(options_.work_dir, "/logs/agent-", facility_id, ".log"));
  if (!agent.ok()) return agent.status();
  agents_[facility_id] = *std::move(agent);
  return absl::OkStatus();
}

absl::Status NetnsLab::SetFiberUp(const std::string& link_id, bool up) {
  absl::StatusOr<NetnsLink> link = backbone_->Link(link_id);
  if (!link.ok()) return link.status();
  if (absl::Status set = backbone_->SetLinkUp(link_id, up); !set.ok()) return set;
  if (options_.probe_interval_ms > 0) return absl::OkStatus();  // the probes tell
  for (const std::string& direction : {link->forward_id, link->reverse_id}) {
    if (direction.empty()) continue;
    if (absl::Status set = lab_->SetLinkState(direction, up ? "up" : "down"); !set.ok()) return set;
  }
  return absl::OkStatus();
}

absl::Status NetnsLab::SetLinkLoss(const std::string& link_id, double percent) {
  return backbone_->SetLoss(link_id, percent);  // validates both
}

namespace {

// Gateway -> kernel weight.
using HopWeights = std::map<std::string, int>;

std::string Describe(const HopWeights& hops) {
  std::vector<std::string> parts;
  for (const auto& [gateway, weight] : hops) parts.push_back(absl::StrCat(gateway, " weight ", weight));
  return parts.empty() ? "no route" : absl::StrJoin(parts, ", ");
}

// The same next hops, each weight within 1 of the plan's: FRR derives the
// weights from the link bandwidths routerd announces (bytes/s, as a float in
// the community), so 100 x w / sum may land one either side.
bool WithinFrrRounding(const HopWeights& planned, const HopWeights& installed) {
  if (planned.size() != installed.size()) return false;
  for (const auto& [gateway, weight] : planned) {
    auto it = installed.find(gateway);
    if (it == installed.end() || std::abs(it->second - weight) > 1) return false;
  }
  return true;
}

}  // namespace

absl::StatusOr<std::vector<std::string>> NetnsLab::KernelRoutesDiffering(const v1::Plan& plan) const {
  std::vector<std::string> differing;
  for (const v1::SitePlan& site : plan.sites()) {
    absl::StatusOr<std::map<std::string, KernelRoute>> table = ReadKernelRoutes(*backbone_, site.facility_id());
    if (!table.ok()) return table.status();
    for (const v1::Route& compact : site.routes()) {
      const v1::ForwardingRoute route = site_plan::Primary(site, compact);
      const bool v6 = route.prefix().find(':') != std::string::npos;
      uint64_t total = 0;
      int positive = 0;
      for (const v1::NextHop& hop : route.next_hops()) {
        total += hop.weight();
        positive += hop.weight() > 0 ? 1 : 0;
      }
      HopWeights planned;
      for (const v1::NextHop& hop : route.next_hops()) {
        if (hop.weight() == 0) continue;
        absl::StatusOr<std::string> gateway = NextHop(hop.link_id(), site.facility_id(), v6);
        planned[gateway.ok() ? *gateway : "?" + hop.link_id()] =
            positive == 1 ? 1 : static_cast<int>(100 * uint64_t{hop.weight()} / total);
      }
      HopWeights installed;
      if (auto kernel = table->find(route.prefix()); kernel != table->end() && kernel->second.protocol == "bgp") {
        for (const KernelNextHop& hop : kernel->second.next_hops) installed[hop.gateway] = hop.weight;
      }
      if (!WithinFrrRounding(planned, installed)) {
        differing.push_back(absl::StrCat(site.facility_id(), " ", route.prefix(), ": plan ", Describe(planned),
                                         "; kernel ", Describe(installed)));
      }
    }
  }
  return differing;
}

}  // namespace geodesic::sim
