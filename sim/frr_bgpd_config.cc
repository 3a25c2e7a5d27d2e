#include "sim/frr_bgpd_config.h"

#include "absl/strings/str_cat.h"

namespace geodesic::sim {

std::string BgpdConfigText(const BgpdConfigOptions& options) {
  std::string config = absl::StrCat(
      "frr defaults datacenter\n"
      "hostname ", options.hostname, "\n"
      "log stdout ", options.log_level, "\n"
      "route-map NOTHING deny 10\n"
      "exit\n"
      "router bgp ", options.local_as, "\n",
      " bgp router-id ", options.router_id, "\n",
      " no bgp ebgp-requires-policy\n"
      " no bgp network import-check\n",
      options.multipath_relax ? " bgp bestpath as-path multipath-relax\n" : "",
      " bgp graceful-restart\n"
      " bgp graceful-restart stalepath-time ", options.stalepath_time_s, "\n",
      " bgp log-neighbor-changes\n");
  for (const BgpdNeighbor& neighbor : options.neighbors) {
    absl::StrAppend(&config, " neighbor ", neighbor.address, " remote-as ", neighbor.remote_as, "\n",
                    " neighbor ", neighbor.address, " passive\n",
                    // routerd may be on loopback, its next hops elsewhere.
                    " neighbor ", neighbor.address, " disable-connected-check\n");
    if (!neighbor.password.empty()) {
      absl::StrAppend(&config, " neighbor ", neighbor.address, " password ", neighbor.password, "\n");
    }
  }
  for (const char* family : {"ipv4", "ipv6"}) {
    absl::StrAppend(&config, " address-family ", family, " unicast\n  maximum-paths 64\n  maximum-paths ibgp 64\n");
    for (const BgpdNeighbor& neighbor : options.neighbors) {
      // The routers learn from routerd and tell it nothing back.
      absl::StrAppend(&config, "  neighbor ", neighbor.address, " activate\n",
                      "  neighbor ", neighbor.address, " route-map NOTHING out\n");
    }
    absl::StrAppend(&config, " exit-address-family\n");
  }
  return config;
}

}  // namespace geodesic::sim
