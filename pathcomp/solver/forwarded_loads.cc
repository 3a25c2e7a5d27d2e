#include "pathcomp/solver/forwarded_loads.h"

#include <algorithm>
#include <deque>
#include <functional>
#include <optional>
#include <utility>

#include "site_plan/site_plan_reader.h"

namespace geodesic::pathcomp {
namespace {

// `site` with only the routes of `prefixes` and the table entries they use;
// every route and backup on one empty path (forwarding does not read paths).
v1::SitePlan Trim(const v1::SitePlan& site, const std::set<std::string>& prefixes) {
  v1::SitePlan kept;
  kept.set_facility_id(site.facility_id());
  kept.set_generation(site.generation());
  kept.set_epoch(site.epoch());
  std::vector<int> ports(site.ports_size(), -1), facilities(site.facility_ids_size(), -1);
  std::vector<int> groups(site.groups_size(), -1), failures(site.failures_size(), -1);
  kept.add_paths();  // path 0, the only one
  auto facility = [&](uint32_t i) -> uint32_t {
    if (facilities[i] < 0) {
      facilities[i] = kept.facility_ids_size();
      kept.add_facility_ids(site.facility_ids(static_cast<int>(i)));
    }
    return static_cast<uint32_t>(facilities[i]);
  };
  auto port = [&](uint32_t i) -> uint32_t {
    if (ports[i] < 0) {
      ports[i] = kept.ports_size();
      *kept.add_ports() = site.ports(static_cast<int>(i));
    }
    return static_cast<uint32_t>(ports[i]);
  };
  auto group = [&](uint32_t i) -> uint32_t {
    if (groups[i] < 0) {
      const v1::NextHopGroup& in = site.groups(static_cast<int>(i));
      v1::NextHopGroup out;
      for (int h = 0; h < in.ports_size(); ++h) {
        out.add_ports(port(in.ports(h)));
        out.add_weights(in.weights(h));
      }
      groups[i] = kept.groups_size();
      *kept.add_groups() = std::move(out);
    }
    return static_cast<uint32_t>(groups[i]);
  };
  auto failure = [&](uint32_t i) -> uint32_t {
    if (failures[i] < 0) {
      failures[i] = kept.failures_size();
      *kept.add_failures() = site.failures(static_cast<int>(i));
    }
    return static_cast<uint32_t>(failures[i]);
  };
  for (const v1::Route& route : site.routes()) {
    if (!prefixes.count(route.prefix())) continue;
    v1::Route out;
    out.set_prefix(route.prefix());
    out.set_destination(facility(route.destination()));
    out.set_next_hops(group(route.next_hops()));
    out.set_path(0);
    for (int b = 0; b < site_plan::BackupCount(route); ++b) {
      const site_plan::BackupRef backup = site_plan::BackupAt(route, b);
      out.add_backups(failure(backup.failure));
      out.add_backups(group(backup.group));
      out.add_backups(0);
    }
    *kept.add_routes() = std::move(out);
  }
  return kept;
}

struct Hop {
  std::string link_id{};
  int to = -1;  // node index
  double share = 0;
};

// One facility that traffic toward a prefix reaches.
struct Node {
  std::string facility{};
  bool destination = false;
  bool routed = false;  // has a usable route (or is the destination)
  bool in_loop = false;
  std::vector<Hop> hops{};
  double arriving_gbps = 0;
};

// Marks the nodes of every forwarding loop: a strongly connected component
// of more than one node, or a node forwarding to itself (Tarjan).
void MarkLoops(std::vector<Node>& nodes) {
  const int n = static_cast<int>(nodes.size());
  std::vector<int> index(n, -1), low(n, 0);
  std::vector<bool> on_stack(n, false);
  std::vector<int> stack;
  int next = 0;
  std::function<void(int)> visit = [&](int v) {
    index[v] = low[v] = next++;
    stack.push_back(v);
    on_stack[v] = true;
    for (const Hop& hop : nodes[v].hops) {
      if (index[hop.to] < 0) {
        visit(hop.to);
        low[v] = std::min(low[v], low[hop.to]);
      } else if (on_stack[hop.to]) {
        low[v] = std::min(low[v], index[hop.to]);
      }
    }
    if (low[v] != index[v]) return;
    std::vector<int> component;
    int w = -1;
    do {
      w = stack.back();
      stack.pop_back();
      on_stack[w] = false;
      component.push_back(w);
    } while (w != v);
    bool loop = component.size() > 1;
    for (const Hop& hop : nodes[v].hops) loop = loop || hop.to == v;
    if (loop) {
      for (int member : component) nodes[member].in_loop = true;
    }
  };
  for (int v = 0; v < n; ++v) {
    if (index[v] < 0) visit(v);
  }
}

// Forwards the demands of one prefix (by source facility) into `loads`.
// What each site's routerd hears of: the down links that leave it.
class SiteDownLinks {
 public:
  explicit SiteDownLinks(const std::set<std::string>& down) : down_(down) {}
  const routerd::DownLinks& Of(const v1::SitePlan& site) {
    auto [it, added] = by_site_.try_emplace(site.facility_id());
    if (added) {
      for (const v1::Port& port : site.ports()) {
        if (down_.contains(port.link_id())) it->second.insert(port.link_id());
      }
    }
    return it->second;
  }

 private:
  const std::set<std::string>& down_;
  std::map<std::string, routerd::DownLinks> by_site_;
};

void ForwardPrefix(const ForwardingPlan& plan, const std::string& prefix, const std::map<std::string, double>& sources,
                   SiteDownLinks& down, ForwardedLoads& loads) {
  // The destination, as the sources' routes name it.
  std::string destination;
  for (const auto& [src, gbps] : sources) {
    const v1::SitePlan* site = plan.Site(src);
    const v1::Route* route = site ? plan.Route(*site, prefix) : nullptr;
    if (route != nullptr) {
      destination = site_plan::DestinationId(*site, *route);
      break;
    }
  }
  // Every facility the traffic can reach, each with its route as repaired.
  std::vector<Node> nodes;
  std::map<std::string, int> node_of;
  std::deque<int> unresolved;
  auto node = [&](const std::string& facility) {
    auto [it, added] = node_of.emplace(facility, static_cast<int>(nodes.size()));
    if (added) {
      nodes.push_back({.facility = facility, .destination = facility == destination});
      unresolved.push_back(it->second);
    }
    return it->second;
  };
  for (const auto& [src, gbps] : sources) nodes[node(src)].arriving_gbps += gbps;
  while (!unresolved.empty()) {
    const int v = unresolved.front();
    unresolved.pop_front();
    if (nodes[v].destination) {
      nodes[v].routed = true;
      continue;
    }
    const v1::SitePlan* site = plan.Site(nodes[v].facility);
    const v1::Route* route = site ? plan.Route(*site, prefix) : nullptr;
    if (route == nullptr) continue;
    const std::vector<ForwardingPlan::Hop>* next = nullptr;
    std::vector<ForwardingPlan::Hop> repaired_hops;
    if (const routerd::DownLinks& site_down = down.Of(*site); site_down.empty()) {
      next = &plan.PrimaryHops(*site, prefix);  // RepairRoute's answer without a down link
    } else {
      const std::optional<v1::ForwardingRoute> repaired = routerd::RepairRoute(*site, *route, site_down);
      if (!repaired) continue;
      for (const v1::NextHop& hop : repaired->next_hops()) {
        repaired_hops.push_back(
            {.link_id = hop.link_id(), .peer_facility_id = hop.peer_facility_id(), .weight = hop.weight()});
      }
      next = &repaired_hops;
    }
    double total = 0;
    for (const ForwardingPlan::Hop& hop : *next) total += hop.weight;
    if (total <= 0) continue;
    nodes[v].routed = true;
    std::vector<Hop> hops;
    for (const ForwardingPlan::Hop& hop : *next) {
      hops.push_back({.link_id = hop.link_id, .to = node(hop.peer_facility_id), .share = hop.weight / total});
    }
    nodes[v].hops = std::move(hops);  // after node(): `nodes` may have grown
  }
  MarkLoops(nodes);
  // In topological order of what is not a loop: a loop's traffic stops there.
  std::vector<int> waiting(nodes.size(), 0);
  for (const Node& from : nodes) {
    if (from.in_loop) continue;
    for (const Hop& hop : from.hops) ++waiting[hop.to];
  }
  std::deque<int> ready;
  for (int v = 0; v < static_cast<int>(nodes.size()); ++v) {
    if (waiting[v] == 0) ready.push_back(v);
  }
  while (!ready.empty()) {
    const Node& at = nodes[ready.front()];
    ready.pop_front();
    const double gbps = at.arriving_gbps;
    if (at.destination) {
      loads.delivered_gbps += gbps;
      continue;
    }
    if (at.in_loop) {
      loads.looped_gbps += gbps;
      continue;
    }
    if (!at.routed) {
      loads.dropped_gbps += gbps;
      continue;
    }
    for (const Hop& hop : at.hops) {
      const double share = gbps * hop.share;
      if (share > 0) loads.link_gbps[hop.link_id] += share;
      nodes[hop.to].arriving_gbps += share;
      if (--waiting[hop.to] == 0) ready.push_back(hop.to);
    }
  }
}

}  // namespace

ForwardingPlan ForwardingPlan::Of(const v1::Plan& plan, const std::set<std::string>& prefixes) {
  ForwardingPlan kept;
  for (const v1::SitePlan& site : plan.sites()) {
    v1::SitePlan trimmed = Trim(site, prefixes);
    if (trimmed.routes().empty()) continue;
    std::map<std::string, int>& index = kept.route_index_[site.facility_id()];
    std::vector<std::vector<Hop>>& primary = kept.primary_[site.facility_id()];
    for (int r = 0; r < trimmed.routes_size(); ++r) {
      index.emplace(trimmed.routes(r).prefix(), r);
      std::vector<Hop>& hops = primary.emplace_back();
      const v1::ForwardingRoute resolved = site_plan::Primary(trimmed, trimmed.routes(r));
      for (const v1::NextHop& hop : resolved.next_hops()) {
        hops.push_back({.link_id = hop.link_id(), .peer_facility_id = hop.peer_facility_id(), .weight = hop.weight()});
      }
    }
    kept.sites_[site.facility_id()] = std::move(trimmed);
  }
  return kept;
}

const v1::SitePlan* ForwardingPlan::Site(const std::string& facility) const {
  auto it = sites_.find(facility);
  return it == sites_.end() ? nullptr : &it->second;
}

const v1::Route* ForwardingPlan::Route(const v1::SitePlan& site, const std::string& prefix) const {
  auto routes = route_index_.find(site.facility_id());
  if (routes == route_index_.end()) return nullptr;
  auto it = routes->second.find(prefix);
  return it == routes->second.end() ? nullptr : &site.routes(it->second);
}

const std::vector<ForwardingPlan::Hop>& ForwardingPlan::PrimaryHops(const v1::SitePlan& site,
                                                                   const std::string& prefix) const {
  return primary_.at(site.facility_id())[route_index_.at(site.facility_id()).at(prefix)];
}

ForwardedLoads Forward(const ForwardingPlan& plan, const std::vector<FlowDemand>& flows,
                       const std::set<std::string>& down) {
  std::map<std::string, std::map<std::string, double>> by_prefix;  // prefix -> source -> Gbps
  for (const FlowDemand& flow : flows) {
    if (flow.gbps > 0) by_prefix[flow.dst_prefix][flow.src_facility] += flow.gbps;
  }
  ForwardedLoads loads;
  SiteDownLinks site_down(down);
  for (const auto& [prefix, sources] : by_prefix) ForwardPrefix(plan, prefix, sources, site_down, loads);
  return loads;
}

HottestLink Hottest(const ForwardedLoads& loads, const std::map<std::string, double>& capacity_gbps) {
  HottestLink hottest;
  for (const auto& [link, gbps] : loads.link_gbps) {
    auto capacity = capacity_gbps.find(link);
    if (capacity == capacity_gbps.end() || capacity->second <= 0) continue;
    const double utilization = gbps / capacity->second;
    if (utilization > hottest.utilization) hottest = {.utilization = utilization, .link_id = link};
  }
  return hottest;
}

}  // namespace geodesic::pathcomp
