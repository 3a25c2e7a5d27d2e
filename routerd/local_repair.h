#pragma once
// Local repair: what a site forwards while some of its backbone links are down,
// decided from the plan alone (its precomputed backups), before any new plan.
// Pure: no I/O, no clock, no threads. Thread-compatible.
#include <optional>
#include <set>
#include <string>

#include "geodesic/v1/plan.pb.h"

namespace geodesic::routerd {

using DownLinks = std::set<std::string, std::less<>>;

// The route to forward with `down` links out of service, resolved into ids
// (site_plan_reader.h): prefix, destination, next hops, path and latency.
// `route` is one of `plan`'s, which has passed site_plan::ValidateIndices.
//  - the primary when none of its next hops uses a down link;
//  - else, when some of them survive, those (their weights kept): a router
//    drops the failed member of a weighted group and spreads over the rest,
//    which follow the allocation's loop-free flow toward the destination
//    (pathcomp/solver/wcmp.h) or lie on lowest-latency paths, so the repair
//    adds no loop and keeps the traffic where the plan put it. The path is
//    the primary's when its first hop survives, else that of the first backup
//    leaving toward the heaviest survivor's peer, else just this site and
//    that peer with latency 0 (not known at the site);
//  - else the first backup protecting one of those links (FAILURE_KIND_LINK)
//    whose next hops avoid every down link, then the first other backup (SRLG,
//    facility) that avoids them — its next hops, path and latency replace the
//    primary's;
//  - else nullopt: nothing reaches the prefix from here, so it is withdrawn and
//    the routers fall back to whatever else they know.
std::optional<v1::ForwardingRoute> RepairRoute(const v1::SitePlan& plan, const v1::Route& route,
                                               const DownLinks& down);

// Every route of `plan` repaired; routes with no surviving path are left out.
v1::ForwardingTable RepairPlan(const v1::SitePlan& plan, const DownLinks& down);

}  // namespace geodesic::routerd
