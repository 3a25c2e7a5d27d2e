#include "routerd/bgp/route_paths.h"

#include <algorithm>
#include <bit>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace geodesic::routerd::bgp {

PathBuilder::PathBuilder(PathPolicy policy) : policy_(std::move(policy)) {
  for (size_t i = 0; i < policy_.next_hops.size(); ++i) {
    links_[policy_.next_hops[i].first] = {static_cast<uint32_t>(i + 1), &policy_.next_hops[i].second};
  }
}

absl::StatusOr<std::pair<IpPrefix, std::vector<BgpPath>>> PathBuilder::Build(const v1::ForwardingRoute& route) {
  auto prefix = IpPrefix::Parse(route.prefix());
  if (!prefix) return absl::InvalidArgumentError(absl::StrCat("route prefix \"", route.prefix(), "\" is not a CIDR prefix"));
  std::vector<BgpPath> paths;
  uint32_t heaviest = 0;
  for (const v1::NextHop& hop : route.next_hops()) heaviest = std::max(heaviest, hop.weight());
  const double bytes_per_weight =
      std::min(policy_.bandwidth_per_weight_mbps * 125000.0,
               heaviest == 0 ? kMaxAnnouncedBandwidthBytes : kMaxAnnouncedBandwidthBytes / heaviest);
  for (const v1::NextHop& hop : route.next_hops()) {
    auto link = links_.find(hop.link_id());
    if (link == links_.end()) {
      return absl::InvalidArgumentError(absl::StrCat("route ", route.prefix(), ": link ", hop.link_id(),
                                                     " has no next-hop address in bgp.next_hops"));
    }
    const auto& address = prefix->family == Family::kIpv4 ? link->second.second->ipv4 : link->second.second->ipv6;
    if (!address) {
      return absl::InvalidArgumentError(absl::StrCat("route ", route.prefix(), ": link ", hop.link_id(), " has no ",
                                                     prefix->family == Family::kIpv4 ? "ipv4" : "ipv6",
                                                     " next-hop address in bgp.next_hops"));
    }
    const double bytes_per_second = hop.weight() * bytes_per_weight;
    paths.push_back({.path_id = link->second.first, .weight = hop.weight(),
                     .attributes = Intern(*address, static_cast<float>(bytes_per_second))});
  }
  std::sort(paths.begin(), paths.end(), [](const BgpPath& a, const BgpPath& b) { return a.path_id < b.path_id; });
  for (size_t i = 1; i < paths.size(); ++i) {
    if (paths[i].path_id == paths[i - 1].path_id) {
      return absl::InvalidArgumentError(absl::StrCat("route ", route.prefix(), ": a link appears twice among its next hops"));
    }
  }
  // ADD-PATH ids are slots, 1..n in the links' config order: when a failure
  // swaps a next hop for a backup, the router gets one implicit replacement
  // instead of a withdrawal plus an announcement.
  for (size_t i = 0; i < paths.size(); ++i) paths[i].path_id = static_cast<uint32_t>(i + 1);
  return std::make_pair(*prefix, std::move(paths));
}

AttributesPtr PathBuilder::Intern(const IpAddress& next_hop, float bytes_per_second) {
  // Only the next hop and the bandwidth differ between paths; the rest is
  // policy. Look up first: a plan has few distinct (next hop, weight) pairs.
  const InternKey key{next_hop, std::bit_cast<uint32_t>(bytes_per_second)};
  auto [it, inserted] = interned_.try_emplace(key);
  if (inserted) {
    PathAttributes attributes;
    attributes.origin = Origin::kIgp;
    attributes.next_hop = next_hop;
    attributes.communities = policy_.communities;
    attributes.large_communities = policy_.large_communities;
    const uint16_t as2 = policy_.local_as > 0xffff ? kAsTrans : static_cast<uint16_t>(policy_.local_as);
    attributes.extended_communities.push_back(LinkBandwidthCommunity(as2, bytes_per_second));
    it->second = std::make_shared<const PathAttributes>(std::move(attributes));
  }
  AttributesPtr result = it->second;
  if (interned_.size() >= purge_at_) {
    // Forget attributes no path holds any more (weights change from plan to plan).
    std::erase_if(interned_, [&](const auto& entry) { return entry.second.use_count() == 1; });
    purge_at_ = std::max<size_t>(1024, interned_.size() * 2);
  }
  return result;
}

}  // namespace geodesic::routerd::bgp
