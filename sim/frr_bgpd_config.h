#pragma once
// The bgpd.conf both of the project's FRR routers run (sim/frr_router.h on
// loopback, sim/netns/netns_router.h in a facility's namespace): routerd's
// peers passive and unchecked for connectedness, multipath up to 64 paths
// per prefix, graceful restart, nothing sent back to routerd. Pure.
#include <cstdint>
#include <string>
#include <vector>

namespace geodesic::sim {

struct BgpdNeighbor {
  std::string address;   // routerd's address
  uint32_t remote_as = 0;
  std::string password = {};  // TCP-MD5 when set
};

struct BgpdConfigOptions {
  std::string hostname;
  std::string log_level = "informational";
  uint32_t local_as = 0;
  std::string router_id;
  int stalepath_time_s = 360;  // how long GR-stale routes are kept at most
  // Keep a prefix's paths multipath even when they come from peers with
  // different AS paths.
  bool multipath_relax = false;
  std::vector<BgpdNeighbor> neighbors = {};
};

[[nodiscard]] std::string BgpdConfigText(const BgpdConfigOptions& options);

}  // namespace geodesic::sim
