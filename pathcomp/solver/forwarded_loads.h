#pragma once
// Link loads "as forwarded": every elephant flow's demand followed hop by hop
// from its source facility toward its destination through each site's
// installed route for the flow's prefix — the plan's primary, or, for the
// links down that leave that site, the route routerd's local repair picks
// (routerd/local_repair.h RepairRoute: the backup for the link, then any
// other backup that avoids the down links, then the surviving next hops) —
// split over the route's next hops by their WCMP weights.
//
// Traffic reaching a facility with no usable route for its prefix is
// dropped; traffic reaching a facility whose routes for the prefix can bring
// it back there (a forwarding loop) is counted as looping and followed no
// further. Both are reported, never followed forever.
//
// Pure: no I/O, no clock, no threads. Thread-compatible.
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "geodesic/v1/plan.pb.h"
#include "routerd/local_repair.h"

namespace geodesic::pathcomp {

// What forwarding needs of a plan: per site, only the routes of the given
// destination prefixes, with the tables those routes use (re-indexed; their
// paths left out: every route and backup names one empty path). A
// whole plan of a large backbone is gigabytes; the simulator keeps this much
// of each plan it forwards with.
class ForwardingPlan {
 public:
  ForwardingPlan() = default;
  // `plan`'s sites must have passed site_plan::ValidateIndices (a plan from
  // pathcomp's plan builder does).
  static ForwardingPlan Of(const v1::Plan& plan, const std::set<std::string>& prefixes);

  // The kept part of `facility`'s SitePlan; null when the plan has none.
  const v1::SitePlan* Site(const std::string& facility) const;
  // The route of `site` for `prefix`; null when it has none.
  const v1::Route* Route(const v1::SitePlan& site, const std::string& prefix) const;

  // A route's primary next hops, resolved once when the plan is kept (a
  // site with no down link forwards on them: most sites after a failure).
  struct Hop {
    std::string link_id;
    std::string peer_facility_id;
    uint32_t weight;
  };
  // Those of `site`'s route for `prefix` (Route() is not null for them).
  const std::vector<Hop>& PrimaryHops(const v1::SitePlan& site, const std::string& prefix) const;

 private:
  std::map<std::string, v1::SitePlan> sites_;                      // by facility id
  std::map<std::string, std::map<std::string, int>> route_index_;  // facility -> prefix -> route
  std::map<std::string, std::vector<std::vector<Hop>>> primary_;   // facility -> per route
};

struct FlowDemand {
  std::string src_facility{};
  std::string dst_prefix{};
  double gbps = 0;
};

struct ForwardedLoads {
  std::map<std::string, double> link_gbps{};  // by link id; links that carry nothing are absent
  double delivered_gbps = 0;
  double dropped_gbps = 0;  // reached a facility with no usable route for its prefix
  double looped_gbps = 0;   // reached a facility of a forwarding loop
};

// Forwards `flows` through `plan` with `down` links out of service (each site
// repairs for the down links that leave it, as its routerd hears of them from
// its own site agent; an empty set: every site on its primaries).
ForwardedLoads Forward(const ForwardingPlan& plan, const std::vector<FlowDemand>& flows,
                       const std::set<std::string>& down);

// The most loaded link of `loads` relative to its capacity (links without a
// positive capacity in `capacity_gbps` are skipped). Utilization 0 and no
// link when nothing is carried.
struct HottestLink {
  double utilization = 0;
  std::string link_id{};
};
HottestLink Hottest(const ForwardedLoads& loads, const std::map<std::string, double>& capacity_gbps);

}  // namespace geodesic::pathcomp
