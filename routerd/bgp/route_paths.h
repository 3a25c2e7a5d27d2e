#pragma once
// Turns a plan's routes into BGP paths: one path per next hop, addressed to the
// router at the far end of the next hop's backbone link, weighted with the
// link-bandwidth extended community (FRR's weighted multipath), identified by
// ADD-PATH ids 1..n: the route's next hops in the links' config order, so the
// same plan gives the same ids after a restart, and a next hop swapped for
// a backup is one implicit replacement on the router.
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
  // Link id -> the far-end router's addresses; the order ranks a route's next
  // hops for their ADD-PATH ids.
  std::vector<std::pair<std::string, NextHopAddresses>> next_hops;
  uint32_t local_as = 0;
  // Link bandwidth carried per unit of plan weight. A route whose heaviest
  // next hop would exceed kMaxAnnouncedBandwidthBytes is scaled down as a
  // whole (weights are relative per route), so the ratios always arrive.
  double bandwidth_per_weight_mbps = 1.0;
  std::vector<uint32_t> communities;
  std::vector<LargeCommunity> large_communities;
};

// The largest link bandwidth announced, in bytes/s (32 Gbit/s): the community
// carries a float, but FRR keeps the value as a 32-bit integer and wraps above
// 2^32 (about 34 Gbit/s); a 167:833 plan then reached the kernel as 77:22
// (netns_lab_test). 4e9 is exact as a float and safely below the wrap (2^32 - 1
// itself rounds up to 2^32 as a float).
inline constexpr double kMaxAnnouncedBandwidthBytes = 4e9;

class PathBuilder {
 public:
  explicit PathBuilder(PathPolicy policy);

  // InvalidArgument when the prefix is malformed or a next hop's link has no
  // address of the prefix's family.
  [[nodiscard]] absl::StatusOr<std::pair<IpPrefix, std::vector<BgpPath>>> Build(const v1::ForwardingRoute& route);

 private:
  AttributesPtr Intern(const IpAddress& next_hop, float bytes_per_second);
  using InternKey = std::pair<IpAddress, uint32_t>;  // next hop, bandwidth's bits

  PathPolicy policy_;
  std::map<std::string, std::pair<uint32_t, const NextHopAddresses*>> links_;  // id -> (path id, addresses)
  std::map<InternKey, AttributesPtr> interned_;
  size_t purge_at_ = 1024;
};

}  // namespace geodesic::routerd::bgp
