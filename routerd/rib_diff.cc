#include "routerd/rib_diff.h"

#include <map>

#include "absl/strings/str_cat.h"

namespace geodesic::routerd {
bool SameForwarding(const v1::ForwardingRoute& a, const v1::ForwardingRoute& b) {
  if (a.next_hops_size() != b.next_hops_size()) return false;
  for (int i = 0; i < a.next_hops_size(); ++i) {
    if (a.next_hops(i).link_id() != b.next_hops(i).link_id() ||
        a.next_hops(i).weight() != b.next_hops(i).weight()) {
      return false;
    }
  }
  return true;
}

RibDiff DiffRoutes(const v1::ForwardingTable& installed, const v1::ForwardingTable& next) {
  std::map<std::string, const v1::ForwardingRoute*> old_routes;
  for (const auto& route : installed.routes()) old_routes[route.prefix()] = &route;
  RibDiff diff;
  for (const auto& route : next.routes()) {
    auto it = old_routes.find(route.prefix());
    if (it == old_routes.end()) {
      diff.added.push_back(route);
      continue;
    }
    if (!SameForwarding(*it->second, route)) diff.changed.push_back({*it->second, route});
    old_routes.erase(it);
  }
  for (const auto& [prefix, route] : old_routes) diff.removed.push_back(*route);
  return diff;
}

std::string DescribeNextHops(const v1::ForwardingRoute& route) {
  std::string text;
  for (const auto& hop : route.next_hops()) {
    if (!text.empty()) text += ",";
    absl::StrAppend(&text, hop.link_id(), "(w", hop.weight(), ")");
  }
  return text.empty() ? "none" : text;
}

}  // namespace geodesic::routerd
