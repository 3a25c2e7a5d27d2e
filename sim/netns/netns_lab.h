#pragma once
// The netns lab (issue 21): pathcomp's real plan in every facility's kernel.
// On a topology it builds a NetnsBackbone with its management network, a
// private PKI, and starts
//   - pathcomp on the host (root namespace), listening on every address, an
//     ephemeral port;
//   - a site agent per facility, either
//       on the host, as LocalLab runs them without probing (probe_interval_ms
//       0): each reports its links' health from its config (up, the fiber's
//       round trip) and its health file (SetLinkState); or
//       in the facility's namespace (probe_interval_ms > 0), probing its
//       links across their veths: its probe socket on every address of the
//       namespace, port kProbePort (each namespace has its own ports), each
//       link's peer the far end's IPv4 veth address, answering the far ends
//       of its links only; a veth down or lossy is seen by the probes alone.
//       The veths have no delay (no netem here), so the health file gives
//       each link its fiber's round trip (rtt_us) and nothing else: the state
//       is the probes'. It dials pathcomp like routerd, over the management
//       veth, and reaches routerd over the same Unix socket as on the host.
//       NetnsLab owns it: lab().process("agent/<facility>") is nullptr, and
//       its admin listener is on the namespace's loopback;
//   - in every facility's namespace, a NetnsRouter (FRR zebra + bgpd) and a
//     routerd that dials pathcomp over the facility's management veth (the
//     root end's address), talks to its agent over a Unix socket (the file
//     system is shared) and announces its site plan to bgpd on 169.254.0.1
//     with the far ends of its links' veths as next hops and the plan's
//     weights as link bandwidth; zebra installs them as weighted multipath.
// The configs and logs are LocalLab's (work_dir/*.yaml, work_dir/logs/);
// the routers' under work_dir/frr-<facility>, routerd's log
// work_dir/logs/routerd-<facility>.log, a namespaced agent's
// work_dir/logs/agent-<facility>.log (as on the host).
//
// Needs root, iproute2 and FRR (NetnsBackbone::Available, NetnsRouterAvailable).
// Thread-compatible.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "geodesic/v1/plan.pb.h"
#include "sim/local_lab.h"
#include "sim/netns/netns_backbone.h"
#include "sim/netns/netns_router.h"
#include "sim/process.h"

namespace geodesic::sim {

struct NetnsLabOptions {
  std::string source_dir = {};  // the checkout (deploy/pki/make-pki.sh)
  std::string binary_dir = {};  // the build tree (bin/pathcomp, bin/routerd, bin/site_agent)
  std::string work_dir = {};    // created
  std::string topology_path = {};
  NetnsOptions backbone = {};  // management_network is always on
  // routerd announces a next hop of plan weight w with w x this link
  // bandwidth, routerd's default. bgpd keeps a link bandwidth community's
  // value as bytes/s in 32 bits and wraps above ~34 Gbit/s (a 167:833 plan
  // once became 77:22 in the kernel); routerd scales such a route down as a
  // whole (routerd/bgp/route_paths.h), which this lab's test checks.
  double bandwidth_per_weight_mbps = 1000;
  // 0: the agents run on the host and report configured health. > 0: they
  // run in the facilities' namespaces and probe their links every this many
  // milliseconds (see above).
  int probe_interval_ms = 0;
  // Probing: a link is down after this many intervals without an answer, and
  // an unanswered probe counts as lost after as long. A loss of p per
  // direction loses a round trip with 1 - (1 - p)^2 (30%: 51%); choose the
  // multiplier so that the losses meant as gray rarely lose that many in a
  // row, or they read as down (site_agent/probe/link_estimator.h).
  int probe_detect_multiplier = 3;
  // false: every routerd is configured with `local_repair: {enabled: false}`,
  // so it does not switch to its precomputed backups on its agent's link
  // events and waits for pathcomp's new plan.
  bool local_repair = true;
  // Appended to pathcomp's config (LabOptions::pathcomp_extra_config).
  std::string pathcomp_extra_config = {};
};

class NetnsLab {
 public:
  static constexpr uint32_t kRouterAs = 65000;
  static constexpr uint32_t kRouterdAs = 4200000000;
  static constexpr char kRouterAddress[] = "169.254.0.1";   // bgpd, on each namespace's lo
  static constexpr char kRouterdAddress[] = "169.254.0.2";  // routerd's BGP address, same
  // A namespaced agent's UDP probe port, the same in every namespace.
  static constexpr int kProbePort = 3784;

  // Builds and starts everything above. InvalidArgument for a negative
  // probe interval or a multiplier below 1; the errors of what failed
  // (NetnsBackbone::Create, LocalLab, NetnsRouter::Start, a spawn); whatever
  // was started is stopped and removed on error. Does not wait for a plan:
  // ask LabClient(lab()).WaitConverged.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<NetnsLab>> Start(NetnsLabOptions options);
  // Stops the routerds, the routers, the agents and pathcomp, then removes
  // the namespaces.
  ~NetnsLab();
  NetnsLab(const NetnsLab&) = delete;
  NetnsLab& operator=(const NetnsLab&) = delete;

  // The host side: pathcomp, the agents, the PKI, the topology.
  LocalLab& lab() { return *lab_; }
  const NetnsBackbone& backbone() const { return *backbone_; }
  // The address routerd dials pathcomp at from `facility_id`'s namespace.
  [[nodiscard]] absl::StatusOr<std::string> PathcompAddressFrom(const std::string& facility_id) const;
  // The next hop `facility_id` announces for `link_id`: the far end of the
  // link's veth. NotFound / InvalidArgument as NetnsBackbone::End.
  [[nodiscard]] absl::StatusOr<std::string> NextHop(const std::string& link_id, const std::string& facility_id,
                                                    bool v6) const;
  // The facility's router; nullptr for an unknown facility.
  NetnsRouter* router(const std::string& facility_id);

  // A fiber cut (up = false) or its repair: both ends of the link's veth
  // down (up). Probing, the agents see it by themselves; otherwise both
  // directions' health is also reported down (up) by their agents' health
  // files. NotFound for an unknown link (either direction's id).
  [[nodiscard]] absl::Status SetFiberUp(const std::string& link_id, bool up);
  // A facility lost (up = false) or back: down, its routerd, its agent and
  // its router (zebra, bgpd: the kernel's routes go with them) are stopped
  // and every link of it cut (SetFiberUp); up, the links come back and the
  // daemons start again with their configs and state (routerd restores its
  // last plan). The facility's namespace and host addresses stay. NotFound
  // for an unknown facility; the errors of a restart.
  [[nodiscard]] absl::Status SetFacilityUp(const std::string& facility_id, bool up);

  // The routes of `plan` that a facility's kernel does not hold as planned,
  // one line each ("iad 10.2.0.0/16: plan 10.255.0.1 weight 50, ...;
  // kernel no route"); empty when every kernel routes every prefix of its
  // site plan via exactly the plan's next hops (the far ends of the links'
  // veths) in the plan's proportion as FRR installs it: weight
  // floor(100 x w / sum), give or take the 1 of FRR's rounding, per next hop
  // of positive weight; a single next hop 1. A route counts only when zebra installed it for bgpd. The error of
  // reading a kernel's routes.
  [[nodiscard]] absl::StatusOr<std::vector<std::string>> KernelRoutesDiffering(const v1::Plan& plan) const;

  // A gray failure: `percent` (0..100) of the packets entering either end of
  // the link's veth dropped (NetnsBackbone::SetLoss), probes included; 0
  // repairs it. Only probing agents notice. NotFound for an unknown link,
  // InvalidArgument for a percent out of range.
  [[nodiscard]] absl::Status SetLinkLoss(const std::string& link_id, double percent);

 private:
  explicit NetnsLab(NetnsLabOptions options) : options_(std::move(options)) {}
  absl::Status StartFacility(const std::string& facility_id);
  // The facility's agent in its namespace, probing its links (probe_interval_ms > 0).
  absl::Status StartProbingAgent(const std::string& facility_id);

  NetnsLabOptions options_;
  // Destroyed bottom-up: routerds, namespaced agents, routers, the host's
  // daemons, the namespaces.
  NetnsBackbonePtr backbone_;
  std::unique_ptr<LocalLab> lab_;
  std::map<std::string, NetnsRouterPtr> routers_;
  std::map<std::string, ChildProcessPtr> agents_;  // probing only
  std::map<std::string, ChildProcessPtr> routerds_;
};
using NetnsLabPtr = std::unique_ptr<NetnsLab>;

}  // namespace geodesic::sim
