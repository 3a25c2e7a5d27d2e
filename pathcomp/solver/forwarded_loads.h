#pragma once
// Link loads "as forwarded": every elephant flow's demand followed hop by hop
// from its source facility toward its destination through each site's
// installed route for the flow's prefix — the plan's primary, or, for the
// links down that leave that site, the route routerd's local repair picks
// (routerd/local_repair.h RepairRoute: the route's surviving next hops, then
// the backup for the link, then any other backup that avoids the down links) —
// split over the route's next hops by their WCMP weights.
//
// Traffic reaching a facility with no usable route for its prefix is
// dropped. In a forwarding loop (facilities whose routes for the prefix can
// bring traffic back), traffic follows each flow's own way: a router hashes a
// flow onto one next hop, the same each time it comes back, so the flows
// that reach a facility they already passed loop from then on (counted
// looping, their way round the loop counted once on its links), and the
// others leave the loop and go on. Both are reported, never followed forever.
//
// Pure: no I/O, no clock, no threads. Thread-compatible.
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "geodesic/v1/plan.pb.h"
#include "routerd/local_repair.h"

namespace geodesic::pathcomp {

struct ForwardedLoads;
class GroupedFlows;

// What forwarding needs of a plan: per site, only the routes of the given
// destination prefixes, with the tables those routes use (re-indexed; their
// paths left out: every route and backup names one empty path), and those
// routes' primary next hops resolved into dense indices once. A whole plan
// of a large backbone is gigabytes; the simulator keeps this much of each
// plan it forwards with, and the protection check forwards every demand
// through it once per failure.
class ForwardingPlan {
 public:
  ForwardingPlan() = default;
  // `plan`'s sites must have passed site_plan::ValidateIndices (a plan from
  // pathcomp's plan builder does).
  static ForwardingPlan Of(const v1::Plan& plan, const std::set<std::string>& prefixes);
  // Of(), letting go of each of `plan`'s sites as soon as its part is kept
  // (the sites stay, empty): a plan of a large backbone and its forwarding
  // copy are then never both whole in memory.
  static ForwardingPlan OfReleasing(v1::Plan& plan, const std::set<std::string>& prefixes);

  // The kept part of `facility`'s SitePlan; null when the plan has none.
  const v1::SitePlan* Site(const std::string& facility) const;
  // The route of `site` for `prefix`; null when it has none.
  const v1::Route* Route(const v1::SitePlan& site, const std::string& prefix) const;

 private:
  friend class GroupedFlows;
  friend ForwardedLoads Forward(const ForwardingPlan& plan, const GroupedFlows& flows,
                                const std::set<std::string>& down);
  struct Hop {
    int link = -1;  // index into link_ids_
    int to = -1;    // index into facility_ids_
    double share = 0;
  };
  // Of(), and OfReleasing() when `release` is `plan`.
  static ForwardingPlan Build(const v1::Plan& plan, const std::set<std::string>& prefixes, v1::Plan* release);
  int FacilityIndex(const std::string& id);
  int LinkIndex(const std::string& id);
  size_t Slot(int facility, int prefix) const {
    return static_cast<size_t>(facility) * prefix_ids_.size() + static_cast<size_t>(prefix);
  }

  std::vector<std::string> facility_ids_, link_ids_, prefix_ids_;
  std::unordered_map<std::string, int> facility_index_, link_index_, prefix_index_;
  std::vector<v1::SitePlan> sites_;   // by facility index; no routes: the plan has none there
  std::vector<int> route_of_;         // [Slot]: index into the site's routes, -1: none
  std::vector<std::vector<Hop>> primary_;  // [Slot]: the route's primary next hops, shares summing to 1
  std::vector<int> destination_of_;   // by prefix: the facility its routes lead to (-1: unknown)
  std::vector<std::vector<int>> sites_of_link_;  // by link: the sites with a port on it
};

struct FlowDemand {
  std::string src_facility{};
  std::string dst_prefix{};
  double gbps = 0;
};

// Flows summed per destination prefix and source facility once, to forward
// through one ForwardingPlan many times (the protection check: once per
// failure). Flows whose prefix or source the plan has no route for are
// kept as dropped.
class GroupedFlows {
 public:
  GroupedFlows(const ForwardingPlan& plan, const std::vector<FlowDemand>& flows);

 private:
  friend ForwardedLoads Forward(const ForwardingPlan& plan, const GroupedFlows& flows,
                                const std::set<std::string>& down);
  struct Source {
    int facility;
    double gbps;
  };
  std::vector<std::pair<int, std::vector<Source>>> by_prefix_;  // (prefix index, sources)
  double unknown_gbps_ = 0;
};

struct ForwardedLoads {
  std::map<std::string, double> link_gbps{};  // by link id; links that carry nothing are absent
  double delivered_gbps = 0;
  double dropped_gbps = 0;  // reached a facility with no usable route for its prefix
  double looped_gbps = 0;   // reached a facility of a forwarding loop
};

// Forwards `flows` through `plan` with `down` links out of service (each site
// repairs for the down links that leave it, as its routerd hears of them from
// its own site agent; an empty set: every site on its primaries). `flows`
// must have been grouped for `plan`.
ForwardedLoads Forward(const ForwardingPlan& plan, const GroupedFlows& flows, const std::set<std::string>& down);
inline ForwardedLoads Forward(const ForwardingPlan& plan, const std::vector<FlowDemand>& flows,
                              const std::set<std::string>& down) {
  return Forward(plan, GroupedFlows(plan, flows), down);
}

// The most loaded link of `loads` relative to its capacity (links without a
// positive capacity in `capacity_gbps` are skipped). Utilization 0 and no
// link when nothing is carried.
struct HottestLink {
  double utilization = 0;
  std::string link_id{};
};
HottestLink Hottest(const ForwardedLoads& loads, const std::map<std::string, double>& capacity_gbps);

}  // namespace geodesic::pathcomp
