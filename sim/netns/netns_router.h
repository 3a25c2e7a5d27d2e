#pragma once
// A facility's router in the netns lab (issue 21): FRR's zebra and bgpd
// running inside the facility's namespace of a NetnsBackbone, so what BGP
// learns reaches that namespace's kernel. bgpd listens on the namespace's
// loopback for the site's routerd (which runs in the same namespace), keeps
// every path routerd announces for a prefix as multipath (eBGP, ADD-PATH,
// `bgp bestpath as-path multipath-relax`, `maximum-paths 64`), and hands them
// to zebra weighted by their link-bandwidth extended communities (FRR's
// weighted ECMP, its default when every path carries one); zebra installs
// them as the kernel's weighted multipath routes. It tells routerd nothing
// back (an outbound deny-all).
//
// Each instance has its own work directory: configs, pid files, zebra's
// zserv socket, the vty sockets and the logs; nothing in /etc/frr or
// /var/run/frr is read or written, so several run on one machine (FRR's own
// crash-log directory /var/tmp/frr/<daemon>.<pid> is removed at the stop). Both daemons
// stay root (zebra: -u root -g frrvty; bgpd: -S): a daemon that changed its
// user or group would lose the parent-death signal (ChildProcess) that kills
// it with a crashed test. zebra still logs that it cannot chown its vty
// socket to frrvty (harmless: only root uses it).
//
// Weights: bgpd gives each path 100 x its link bandwidth / the sum over the
// multipath, truncated (3:1 -> 75/25, 1:2 -> 33/66), and zebra installs
// that as the kernel's nexthop weight (in a nexthop group, `nhid`).
//
// Needs FRR's /usr/lib/frr/{zebra,bgpd} (Debian's frr; NetnsRouterAvailable).
// Thread-compatible; the vty queries are thread-safe.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "sim/frr_vty.h"
#include "sim/netns/netns_backbone.h"
#include "sim/process.h"

namespace geodesic::sim {

struct NetnsRouterPeer {
  std::string address;  // the peer's (routerd's) IPv4 address, added to the namespace's lo
  uint32_t remote_as = 0;
};

struct NetnsRouterOptions {
  std::string facility_id;
  std::string work_dir;                       // created
  uint32_t local_as = 65000;
  // bgpd listens here (port 179 of the namespace), added to lo as a /32.
  // Not 127.0.0.0/8: zebra does not report lo's 127.0.0.1 to bgpd, and bgpd
  // with zebra resets every session whose local address is on no interface
  // it knows ("nexthop_set failed").
  std::string listen_address = "169.254.0.1";
  std::vector<NetnsRouterPeer> peers = {};    // passive: the peers connect
  int stalepath_time_s = 360;                 // how long routes of a restarting peer are kept at most
};

// A next hop of a route in a namespace's kernel table.
struct KernelNextHop {
  std::string gateway;
  std::string device;
  int weight = 1;  // 1..256 (`ip route`'s weight; 1 for a single next hop)
};

// One prefix as a namespace's kernel routes it.
struct KernelRoute {
  std::string prefix;
  std::string protocol;  // "bgp" when zebra installed it for bgpd
  std::vector<KernelNextHop> next_hops;
};

// OK when zebra and bgpd are installed; NotFound naming the missing one.
[[nodiscard]] absl::Status NetnsRouterAvailable();

// The facility's kernel route for exactly `prefix` (`ip -j route show`),
// nullopt when it has none. Internal when `ip` fails or says what this
// cannot read.
[[nodiscard]] absl::StatusOr<std::optional<KernelRoute>> ReadKernelRoute(const NetnsBackbone& backbone,
                                                                       const std::string& facility_id,
                                                                       const std::string& prefix);

// Every route of the facility's main kernel tables, IPv4 and IPv6, by prefix
// as `ip` prints it ("10.1.0.0/16", "2001:db8:1::/48", "default"; host
// routes with their length, "10.0.0.1/32"): two `ip`
// runs, so a caller comparing a whole plan reads each facility at nearly one
// moment (one run per prefix took seconds on a loaded machine, and the
// routes moved under the reader). Internal as ReadKernelRoute.
[[nodiscard]] absl::StatusOr<std::map<std::string, KernelRoute>> ReadKernelRoutes(const NetnsBackbone& backbone,
                                                                                const std::string& facility_id);

class NetnsRouter {
 public:
  // Adds the listen and peer addresses to the namespace's lo, writes the
  // configs, starts zebra in the facility's namespace and waits
  // until its vty answers, then bgpd connected to it, and waits until bgpd
  // answers. NotFound for an unknown facility or FRR missing; Unavailable
  // (naming the log) when a daemon exits at start; DeadlineExceeded when
  // one does not answer within 20 s. Whatever was started is stopped on error.
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<NetnsRouter>> Start(const NetnsBackbone& backbone,
                                                                         NetnsRouterOptions options);
  // Stops bgpd, then zebra (which removes the routes it installed), and
  // removes their empty /var/tmp/frr/<daemon>.<pid>.
  ~NetnsRouter();
  NetnsRouter(const NetnsRouter&) = delete;
  NetnsRouter& operator=(const NetnsRouter&) = delete;

  const std::string& facility_id() const { return options_.facility_id; }
  const std::string& router_id() const { return router_id_; }
  static constexpr int kBgpPort = 179;
  ChildProcess& zebra() { return *zebra_; }
  ChildProcess& bgpd() { return *bgpd_; }

  // One CLI command (enable mode) on the daemon's vty; its output.
  [[nodiscard]] absl::StatusOr<std::string> Bgpd(const std::string& command) const { return bgpd_vty_.Command(command); }
  [[nodiscard]] absl::StatusOr<std::string> Zebra(const std::string& command) const {
    return zebra_vty_.Command(command);
  }
  // The BGP state of the session with `address` ("Established", ...);
  // NotFound when bgpd has no such neighbor.
  [[nodiscard]] absl::StatusOr<std::string> PeerState(const std::string& address) const;

 private:
  NetnsRouter(NetnsRouterOptions options, std::string router_id);
  absl::Status StartDaemon(const NetnsBackbone& backbone, const std::string& name, std::vector<std::string> argv,
                           const FrrVty& vty, ChildProcessPtr& process);

  const NetnsRouterOptions options_;
  const std::string router_id_;
  FrrVty zebra_vty_;
  FrrVty bgpd_vty_;
  ChildProcessPtr zebra_;
  ChildProcessPtr bgpd_;  // after zebra_: destroyed (stopped) first
};
using NetnsRouterPtr = std::unique_ptr<NetnsRouter>;

}  // namespace geodesic::sim
