#include "routerd/bgp/route_paths.h"

#include <cstring>

#include "absl/strings/str_cat.h"

namespace geodesic::routerd::bgp {

PathBuilder::PathBuilder(PathPolicy policy) : policy_(std::move(policy)) {
  for (size_t i = 0; i < policy_.next_hops.size(); ++i) {
    links_[policy_.next_hops[i].first] = {static_cast<uint32_t>(i + 1), &policy_.next_hops[i].second};
  }
}

absl::StatusOr<std::pair<IpPrefix, std::vector<BgpPath>>> PathBuilder::Build(const v1::Route& route) {
  auto prefix = IpPrefix::Parse(route.prefix());
  if (!prefix) return absl::InvalidArgumentError(absl::StrCat("route prefix \"", route.prefix(), "\" is not a CIDR prefix"));
  std::vector<BgpPath> paths;
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
    PathAttributes attributes;
    attributes.origin = Origin::kIgp;
    attributes.next_hop = *address;
    attributes.communities = policy_.communities;
    attributes.large_communities = policy_.large_communities;
    const double bytes_per_second = hop.weight() * policy_.bandwidth_per_weight_mbps * 125000.0;
    const uint16_t as2 = policy_.local_as > 0xffff ? kAsTrans : static_cast<uint16_t>(policy_.local_as);
    attributes.extended_communities.push_back(LinkBandwidthCommunity(as2, static_cast<float>(bytes_per_second)));
    paths.push_back({.path_id = link->second.first, .weight = hop.weight(), .attributes = Intern(attributes)});
  }
  std::sort(paths.begin(), paths.end(), [](const BgpPath& a, const BgpPath& b) { return a.path_id < b.path_id; });
  for (size_t i = 1; i < paths.size(); ++i) {
    if (paths[i].path_id == paths[i - 1].path_id) {
      return absl::InvalidArgumentError(absl::StrCat("route ", route.prefix(), ": a link appears twice among its next hops"));
    }
  }
  return std::make_pair(*prefix, std::move(paths));
}

AttributesPtr PathBuilder::Intern(const PathAttributes& attributes) {
  // Only the next hop and the bandwidth differ between paths; the rest is policy.
  std::string key(attributes.next_hop->bytes.begin(), attributes.next_hop->bytes.end());
  key.push_back(static_cast<char>(attributes.next_hop->family));
  const auto& bandwidth = attributes.extended_communities.back();
  key.append(bandwidth.begin(), bandwidth.end());
  auto [it, inserted] = interned_.try_emplace(key);
  if (inserted) it->second = std::make_shared<const PathAttributes>(attributes);
  if (interned_.size() >= purge_at_) {
    std::erase_if(interned_, [&](const auto& entry) { return entry.second.use_count() == 1 && entry.first != key; });
    purge_at_ = std::max<size_t>(1024, interned_.size() * 2);
  }
  return it->second;
}

}  // namespace geodesic::routerd::bgp
