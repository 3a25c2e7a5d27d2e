#pragma once
// Turns a plan's routes into BGP paths: one path per next hop, addressed to the
// router at the far end of the next hop's backbone link, weighted with the
// link-bandwidth extended community (FRR's weighted multipath), identified by
// an ADD-PATH id that stays the same for a link across plans and restarts.
// Pure. Thread-compatible.
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "geodesic/v1/plan.pb.h"
#include "routerd/bgp/rib_out.h"

namespace geodesic::routerd::bgp {

struct NextHopAddresses {
  std::optional<IpAddress> ipv4;
  std::optional<IpAddress> ipv6;
};

struct PathPolicy {
  // Link id -> the far-end router's addresses. The path id of a link is its
  // position here plus one, so keep the order when editing the config.
  std::vector<std::pair<std::string, NextHopAddresses>> next_hops;
  uint32_t local_as = 0;
  // Link bandwidth carried per unit of plan weight.
  double bandwidth_per_weight_mbps = 1.0;
  std::vector<uint32_t> communities;
  std::vector<LargeCommunity> large_communities;
};

class PathBuilder {
 public:
  explicit PathBuilder(PathPolicy policy);

  // InvalidArgument when the prefix is malformed or a next hop's link has no
  // address of the prefix's family.
  [[nodiscard]] absl::StatusOr<std::pair<IpPrefix, std::vector<BgpPath>>> Build(const v1::Route& route);

 private:
  AttributesPtr Intern(const PathAttributes& attributes);

  PathPolicy policy_;
  std::map<std::string, std::pair<uint32_t, const NextHopAddresses*>> links_;  // id -> (path id, addresses)
  std::map<std::string, AttributesPtr> interned_;
  size_t purge_at_ = 1024;
};

}  // namespace geodesic::routerd::bgp
