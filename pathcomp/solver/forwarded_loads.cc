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
  kept.add_path_nodes(0);  // path 0, the only one: empty
  kept.add_path_latencies_us(0);
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
    // Exactly its size: grown three entries at a time, a drill's copies of
    // wan754's plans left ~300 MB of room unused (heaptrack).
    out.mutable_backups()->Reserve(3 * site_plan::BackupCount(route));
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

}  // namespace

int ForwardingPlan::FacilityIndex(const std::string& id) {
  const auto [it, added] = facility_index_.try_emplace(id, static_cast<int>(facility_ids_.size()));
  if (added) {
    facility_ids_.push_back(id);
    sites_.emplace_back();
  }
  return it->second;
}

int ForwardingPlan::LinkIndex(const std::string& id) {
  const auto [it, added] = link_index_.try_emplace(id, static_cast<int>(link_ids_.size()));
  if (added) {
    link_ids_.push_back(id);
    sites_of_link_.emplace_back();
  }
  return it->second;
}

ForwardingPlan ForwardingPlan::Of(const v1::Plan& plan, const std::set<std::string>& prefixes) {
  return Build(plan, prefixes, nullptr);
}

ForwardingPlan ForwardingPlan::OfReleasing(v1::Plan& plan, const std::set<std::string>& prefixes) {
  return Build(plan, prefixes, &plan);
}

ForwardingPlan ForwardingPlan::Build(const v1::Plan& plan, const std::set<std::string>& prefixes,
                                     v1::Plan* release) {
  ForwardingPlan kept;
  for (const std::string& prefix : prefixes) {
    kept.prefix_index_.emplace(prefix, static_cast<int>(kept.prefix_ids_.size()));
    kept.prefix_ids_.push_back(prefix);
  }
  kept.destination_of_.assign(kept.prefix_ids_.size(), -1);
  struct Kept {
    int facility;
    v1::SitePlan site;
  };
  std::vector<Kept> trimmed;
  for (int i = 0; i < plan.sites_size(); ++i) {
    const v1::SitePlan& site = plan.sites(i);
    v1::SitePlan routes = Trim(site, prefixes);
    if (release != nullptr) v1::SitePlan().Swap(release->mutable_sites(i));  // Clear() would keep its memory
    if (routes.routes().empty()) continue;
    const int facility = kept.FacilityIndex(routes.facility_id());
    for (const v1::Port& port : routes.ports()) {
      std::vector<int>& sites = kept.sites_of_link_[kept.LinkIndex(port.link_id())];
      if (sites.empty() || sites.back() != facility) sites.push_back(facility);
    }
    for (const std::string& peer : routes.facility_ids()) kept.FacilityIndex(peer);
    for (const v1::Port& port : routes.ports()) kept.FacilityIndex(port.peer_facility_id());
    trimmed.push_back({facility, std::move(routes)});
  }
  const size_t slots = kept.facility_ids_.size() * kept.prefix_ids_.size();
  kept.route_of_.assign(slots, -1);
  kept.primary_.assign(slots, {});
  for (Kept& site : trimmed) {
    for (int r = 0; r < site.site.routes_size(); ++r) {
      const v1::Route& route = site.site.routes(r);
      const int prefix = kept.prefix_index_.at(route.prefix());
      const size_t slot = kept.Slot(site.facility, prefix);
      kept.route_of_[slot] = r;
      kept.destination_of_[static_cast<size_t>(prefix)] =
          kept.facility_index_.at(site_plan::DestinationId(site.site, route));
      const v1::ForwardingRoute resolved = site_plan::Primary(site.site, route);
      double total = 0;
      for (const v1::NextHop& hop : resolved.next_hops()) total += hop.weight();
      if (total <= 0) continue;
      for (const v1::NextHop& hop : resolved.next_hops()) {
        kept.primary_[slot].push_back({.link = kept.link_index_.at(hop.link_id()),
                                       .to = kept.facility_index_.at(hop.peer_facility_id()),
                                       .share = hop.weight() / total});
      }
    }
    kept.sites_[static_cast<size_t>(site.facility)] = std::move(site.site);
  }
  return kept;
}

const v1::SitePlan* ForwardingPlan::Site(const std::string& facility) const {
  const auto it = facility_index_.find(facility);
  if (it == facility_index_.end()) return nullptr;
  const v1::SitePlan& site = sites_[static_cast<size_t>(it->second)];
  return site.routes().empty() ? nullptr : &site;
}

const v1::Route* ForwardingPlan::Route(const v1::SitePlan& site, const std::string& prefix) const {
  const auto facility = facility_index_.find(site.facility_id());
  const auto index = prefix_index_.find(prefix);
  if (facility == facility_index_.end() || index == prefix_index_.end()) return nullptr;
  const int route = route_of_[Slot(facility->second, index->second)];
  return route < 0 ? nullptr : &site.routes(route);
}

GroupedFlows::GroupedFlows(const ForwardingPlan& plan, const std::vector<FlowDemand>& flows) {
  std::map<int, std::map<int, double>> sums;  // prefix -> source -> Gbps, in index order
  for (const FlowDemand& flow : flows) {
    if (!(flow.gbps > 0)) continue;
    const auto prefix = plan.prefix_index_.find(flow.dst_prefix);
    const auto source = plan.facility_index_.find(flow.src_facility);
    if (prefix == plan.prefix_index_.end() || source == plan.facility_index_.end() ||
        plan.destination_of_[static_cast<size_t>(prefix->second)] < 0) {
      unknown_gbps_ += flow.gbps;  // no site has a route for it, or the source has none at all
      continue;
    }
    sums[prefix->second][source->second] += flow.gbps;
  }
  for (const auto& [prefix, sources] : sums) {
    std::vector<Source>& out = by_prefix_.emplace_back(prefix, std::vector<Source>()).second;
    for (const auto& [facility, gbps] : sources) out.push_back({facility, gbps});
  }
}

namespace {

// One Forward call's scratch over the plan's facilities, reused prefix by
// prefix: which facilities the traffic reaches, their next hops (the
// primary's, or the repaired route's at a site with a down link of its
// own), the loops among them and what arrives at each.
class PrefixForwarder {
 public:
  using Hop = std::tuple<int, int, double>;  // link, to, share

  explicit PrefixForwarder(size_t facilities)
      : stamp_(facilities, 0), arriving_(facilities, 0), hops_(facilities), routed_(facilities, 0),
        in_loop_(facilities, 0), index_(facilities, -1), low_(facilities, 0), on_stack_(facilities, 0),
        component_of_(facilities, -1) {}

  // Forwards the traffic toward `destination` arriving at `sources`;
  // `next_hops(facility, out)` fills a facility's next hops (false: no
  // usable route there).
  template <typename NextHops>
  void Run(int destination, const std::vector<std::pair<int, double>>& sources, NextHops&& next_hops,
           std::vector<double>& link_gbps, std::vector<int>& touched, ForwardedLoads& loads) {
    ++run_;
    reached_.clear();
    std::deque<int> unresolved;
    auto reach = [&](int facility) {
      if (stamp_[facility] == run_) return;
      stamp_[facility] = run_;
      arriving_[facility] = 0;
      hops_[facility].clear();
      routed_[facility] = 0;
      in_loop_[facility] = 0;
      index_[facility] = -1;
      reached_.push_back(facility);
      unresolved.push_back(facility);
    };
    for (const auto& [source, gbps] : sources) {
      reach(source);
      arriving_[source] += gbps;
    }
    while (!unresolved.empty()) {
      const int at = unresolved.front();
      unresolved.pop_front();
      if (at == destination) {
        routed_[at] = 1;
        continue;
      }
      if (!next_hops(at, hops_[at])) continue;
      routed_[at] = 1;
      for (const auto& [link, to, share] : hops_[at]) reach(to);
    }
    MarkLoops();
    // Component by component in topological order (Tarjan emits them in
    // reverse): a facility outside any loop splits what arrives over its
    // next hops; traffic entering a loop follows each flow's own way.
    for (auto component = components_.rbegin(); component != components_.rend(); ++component) {
      if (!in_loop_[component->front()]) {
        const int at = component->front();
        const double gbps = arriving_[at];
        if (gbps <= 0) continue;
        if (at == destination) {
          loads.delivered_gbps += gbps;
        } else if (!routed_[at]) {
          loads.dropped_gbps += gbps;
        } else {
          for (const auto& [link, to, share] : hops_[at]) Carry(link, to, gbps * share, link_gbps, touched);
        }
        continue;
      }
      for (int at : *component) {
        if (arriving_[at] <= 0) continue;
        budget_ = kLoopStepBudget;
        visited_.assign(1, at);
        ThroughLoop(at, arriving_[at], link_gbps, touched, loads);
      }
    }
  }

 private:
  // Steps ThroughLoop takes for one entry into a loop before what is left is
  // counted looping (a loop of a few facilities needs a handful).
  static constexpr int kLoopStepBudget = 100'000;

  void Carry(int link, int to, double gbps, std::vector<double>& link_gbps, std::vector<int>& touched) {
    if (gbps <= 0) return;
    if (link_gbps[link] == 0) touched.push_back(link);
    link_gbps[link] += gbps;
    arriving_[to] += gbps;
  }

  // `gbps` at `at` inside a loop, having come through visited_ (at last).
  // Routers hash each flow onto one next hop, the same every time it comes
  // back: flows split by the weights at each facility, and a flow that
  // reaches a facility it already passed loops from then on (its traffic is
  // counted looping, its links once). Flows that leave the loop go on.
  void ThroughLoop(int at, double gbps, std::vector<double>& link_gbps, std::vector<int>& touched,
                   ForwardedLoads& loads) {
    if (!routed_[at]) {
      loads.dropped_gbps += gbps;
      return;
    }
    for (const auto& [link, to, share] : hops_[at]) {
      const double part = gbps * share;
      if (part <= 0) continue;
      if (component_of_[to] != component_of_[at]) {
        Carry(link, to, part, link_gbps, touched);
        continue;
      }
      if (link_gbps[link] == 0) touched.push_back(link);
      link_gbps[link] += part;
      if (std::find(visited_.begin(), visited_.end(), to) != visited_.end() || --budget_ <= 0) {
        loads.looped_gbps += part;
        continue;
      }
      visited_.push_back(to);
      ThroughLoop(to, part, link_gbps, touched, loads);
      visited_.pop_back();
    }
  }

  // Marks the facilities of every forwarding loop: a strongly connected
  // component of more than one facility, or one forwarding to itself (Tarjan),
  // and keeps every component (components_, in reverse topological order).
  void MarkLoops() {
    int next = 0;
    components_.clear();
    std::vector<int> stack;
    std::function<void(int)> visit = [&](int v) {
      index_[v] = low_[v] = next++;
      stack.push_back(v);
      on_stack_[v] = 1;
      for (const auto& [link, to, share] : hops_[v]) {
        if (index_[to] < 0) {
          visit(to);
          low_[v] = std::min(low_[v], low_[to]);
        } else if (on_stack_[to]) {
          low_[v] = std::min(low_[v], index_[to]);
        }
      }
      if (low_[v] != index_[v]) return;
      std::vector<int> component;
      int w = -1;
      do {
        w = stack.back();
        stack.pop_back();
        on_stack_[w] = 0;
        component.push_back(w);
      } while (w != v);
      bool loop = component.size() > 1;
      for (const auto& [link, to, share] : hops_[v]) loop = loop || to == v;
      for (int member : component) {
        in_loop_[member] = loop ? 1 : 0;
        component_of_[member] = static_cast<int>(components_.size());
      }
      components_.push_back(std::move(component));
    };
    for (int v : reached_) {
      if (index_[v] < 0) visit(v);
    }
  }

  uint64_t run_ = 0;
  std::vector<uint64_t> stamp_;  // == run_: reached in this run (the rest is stale)
  std::vector<double> arriving_;
  std::vector<std::vector<Hop>> hops_;
  std::vector<char> routed_, in_loop_;
  std::vector<int> index_, low_;
  std::vector<char> on_stack_;
  std::vector<int> component_of_;
  std::vector<std::vector<int>> components_;  // of the reached facilities, reverse topological order
  std::vector<int> visited_;  // ThroughLoop's way so far
  int budget_ = 0;
  std::vector<int> reached_;
};

}  // namespace

ForwardedLoads Forward(const ForwardingPlan& plan, const GroupedFlows& flows, const std::set<std::string>& down) {
  ForwardedLoads loads;
  loads.dropped_gbps = flows.unknown_gbps_;
  // What each site's routerd hears of: the down links that leave it.
  std::map<int, routerd::DownLinks> site_down;
  for (const std::string& link : down) {
    const auto it = plan.link_index_.find(link);
    if (it == plan.link_index_.end()) continue;
    for (int site : plan.sites_of_link_[static_cast<size_t>(it->second)]) site_down[site].insert(link);
  }
  std::vector<double> link_gbps(plan.link_ids_.size(), 0);
  std::vector<int> touched;
  PrefixForwarder forwarder(plan.facility_ids_.size());
  std::vector<std::pair<int, double>> sources;
  for (const auto& [prefix, grouped] : flows.by_prefix_) {
    sources.clear();
    for (const GroupedFlows::Source& source : grouped) sources.push_back({source.facility, source.gbps});
    auto next_hops = [&](int at, std::vector<PrefixForwarder::Hop>& out) {
      const size_t slot = plan.Slot(at, prefix);
      const int route = plan.route_of_[slot];
      if (route < 0) return false;
      const auto repairing = site_down.find(at);
      if (repairing == site_down.end()) {
        for (const ForwardingPlan::Hop& hop : plan.primary_[slot]) out.emplace_back(hop.link, hop.to, hop.share);
        return !out.empty();
      }
      const v1::SitePlan& site = plan.sites_[static_cast<size_t>(at)];
      const std::optional<v1::ForwardingRoute> repaired =
          routerd::RepairRoute(site, site.routes(route), repairing->second);
      if (!repaired) return false;
      double total = 0;
      for (const v1::NextHop& hop : repaired->next_hops()) total += hop.weight();
      if (total <= 0) return false;
      for (const v1::NextHop& hop : repaired->next_hops()) {
        out.emplace_back(plan.link_index_.at(hop.link_id()), plan.facility_index_.at(hop.peer_facility_id()),
                         hop.weight() / total);
      }
      return true;
    };
    forwarder.Run(plan.destination_of_[static_cast<size_t>(prefix)], sources, next_hops, link_gbps, touched, loads);
  }
  for (int link : touched) loads.link_gbps[plan.link_ids_[static_cast<size_t>(link)]] = link_gbps[link];
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
