#pragma once
// A real FRRouting bgpd on loopback, as the reference router for routerd's
// tests, benchmarks and live drills: its own config, vty socket and log in a
// work directory, no zebra (-Z), listening on an ephemeral port (or, inside a
// network namespace of the caller's, on BGP's own port 179 there). Queried
// through bgpd's vty socket (what vtysh speaks, without a process per query:
// benchmarks poll it every millisecond). Stopped when the handle goes away.
// Thread-safe.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "sim/frr_vty.h"
#include "sim/process.h"

namespace geodesic::sim {

struct FrrNeighbor {
  std::string address;   // routerd's (local) address
  uint32_t remote_as = 0;
  std::string password;  // TCP-MD5 when set
};

struct FrrOptions {
  std::string work_dir;  // created
  uint32_t local_as = 65000;
  std::string address = "127.0.0.1";  // listen address and router id
  std::vector<FrrNeighbor> neighbors;
  int stalepath_time_s = 360;  // how long GR-stale routes are kept at most
  // When set, bgpd runs in this existing network namespace (`ip netns exec`,
  // needs root) and listens on `address`:179 there; `address` must be one of
  // the namespace's. The vty socket stays in work_dir, reachable from here.
  std::string network_namespace = {};
  // The listening port; 0 picks a free one (179 in a network namespace). A
  // caller that must know it before bgpd starts picks one itself (FreePort).
  int port = 0;
};

// One path of a prefix as FRR holds it.
struct FrrPath {
  std::string next_hop;
  uint32_t path_id = 0;             // ADD-PATH id received
  double bandwidth_bytes = 0;       // link-bandwidth extended community, bytes/s (0: none)
  bool valid = false;
  bool best = false;
  bool multipath = false;
  bool stale = false;               // kept through the peer's graceful restart
};

// How many paths FRR holds per next hop (`show bgp nexthop`: its next-hop
// cache, one entry per address any path uses); next hops no path uses are 0
// or absent.
using FrrNextHopPaths = std::map<std::string, uint64_t>;

struct FrrNeighborState {
  std::string state;                // "Established", ...
  uint64_t prefixes_received = 0;
  uint64_t updates_received = 0;
};

class FrrRouter {
 public:
  [[nodiscard]] static absl::StatusOr<std::unique_ptr<FrrRouter>> Start(FrrOptions options);
  ~FrrRouter();

  int port() const { return port_; }
  const std::string& address() const { return options_.address; }
  uint32_t local_as() const { return options_.local_as; }
  ChildProcess& process() { return *bgpd_; }

  // Runs one CLI command (enable mode) on bgpd's vty socket; its output.
  [[nodiscard]] absl::StatusOr<std::string> Vtysh(const std::string& command) const;
  // Every prefix FRR holds for the family, with every path (detail JSON).
  [[nodiscard]] absl::StatusOr<std::map<std::string, std::vector<FrrPath>>> Routes(bool ipv6) const;
  // The paths FRR holds for one prefix (empty when none).
  [[nodiscard]] absl::StatusOr<std::vector<FrrPath>> Prefix(const std::string& prefix) const;
  [[nodiscard]] absl::StatusOr<FrrNeighborState> Neighbor(const std::string& address) const;
  // Paths per next hop over every prefix: cheap to ask with 100,000 prefixes,
  // unlike Routes.
  [[nodiscard]] absl::StatusOr<FrrNextHopPaths> NextHopPaths() const;

 private:
  explicit FrrRouter(FrrOptions options)
      : options_(std::move(options)), vty_(options_.work_dir + "/bgpd.vty") {}

  FrrOptions options_;
  FrrVty vty_;
  int port_ = 0;
  ChildProcessPtr bgpd_;
};

// NotFound when FRR (bgpd) is not installed.
[[nodiscard]] absl::Status FrrAvailable();

}  // namespace geodesic::sim
