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
//  - else the first backup protecting one of those links (FAILURE_KIND_LINK)
//    whose next hops avoid every down link, then the first other backup (SRLG,
//    facility) that avoids them — its next hops, path and latency replace the
//    primary's;
//  - else the primary's surviving next hops;
//  - else nullopt: nothing reaches the prefix from here, so it is withdrawn and
//    the routers fall back to whatever else they know.
std::optional<v1::ForwardingRoute> RepairRoute(const v1::SitePlan& plan, const v1::Route& route,
                                               const DownLinks& down);

// Every route of `plan` repaired; routes with no surviving path are left out.
v1::ForwardingTable RepairPlan(const v1::SitePlan& plan, const DownLinks& down);

}  // namespace geodesic::routerd
