#pragma once
// Reads a compact SitePlan (proto/geodesic/v1/plan.proto): checks that every
// index it holds is in range, and resolves a route, or one of its backups,
// into what a site's routers need (next hops with link and peer ids and
// weights, the path's facility ids, its latency).
//
// Every function but ValidateIndices requires `plan` to have passed
// ValidateIndices (they do not check ranges again); a plan from PathSolver
// or SitePlanWriter always does. Routes passed in must be `plan`'s own.
// Pure: no I/O. Thread-compatible: any number of threads may read one const
// plan at once.
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "geodesic/v1/plan.pb.h"

namespace geodesic::site_plan {

// OK when every index in `plan` is in range: each route's destination,
// next-hop group, path and backups (failure, group, path; a whole number of
// triples), each group's ports (as many weights as ports, every weight at
// least 1), the path tree (each node's parent an earlier node, its facility
// in range, no path longer than the facilities) and each path's node. InvalidArgument naming the first offending
// route or table entry otherwise.
[[nodiscard]] absl::Status ValidateIndices(const v1::SitePlan& plan);

// A SitePlan stored before its paths were a tree of prefixes (plan.proto's
// fields 11, then 13 to 15, now reserved) refers to paths its table does not
// have. Puts every route
// and backup of such a plan on one empty path (next hops, failures and
// backups stay), so that it validates and resolves; true when it did. A
// plan with a path table, or without routes, is left as it is.
bool DetachLegacyPaths(v1::SitePlan& plan);

// One precomputed backup of a route: indices into the plan's failures,
// groups and paths.
struct BackupRef {
  uint32_t failure = 0;
  uint32_t group = 0;
  uint32_t path = 0;
};
int BackupCount(const v1::Route& route);
BackupRef BackupAt(const v1::Route& route, int backup);  // 0 <= backup < BackupCount

const std::string& DestinationId(const v1::SitePlan& plan, const v1::Route& route);
const v1::NextHopGroup& PrimaryGroup(const v1::SitePlan& plan, const v1::Route& route);

// The plan's paths (SitePlan.path_nodes): how many, and path `path`'s
// facilities (indices into facility_ids, from this site) and latency.
int PathCount(const v1::SitePlan& plan);
std::vector<uint32_t> PathFacilities(const v1::SitePlan& plan, uint32_t path);
uint64_t PathLatencyUs(const v1::SitePlan& plan, uint32_t path);
const v1::FailureScope& BackupFailure(const v1::SitePlan& plan, const v1::Route& route, int backup);

// The link id of a group's i-th next hop.
const std::string& LinkId(const v1::SitePlan& plan, const v1::NextHopGroup& group, int i);

// A group's next hops with their ids and weights, in the group's order.
std::vector<v1::NextHop> NextHops(const v1::SitePlan& plan, const v1::NextHopGroup& group);
// Path `path`'s facility ids, from this site.
std::vector<std::string> PathIds(const v1::SitePlan& plan, uint32_t path);

// The route as the routers get it without a failure: prefix, destination,
// primary next hops, path and latency.
v1::ForwardingRoute Primary(const v1::SitePlan& plan, const v1::Route& route);
// The same with backup `backup`'s next hops, path and latency instead.
v1::ForwardingRoute WithBackup(const v1::SitePlan& plan, const v1::Route& route, int backup);

// A route with each of its backups resolved, for displays and tests.
struct ExpandedBackup {
  v1::FailureScope protects;
  v1::ForwardingRoute route;  // WithBackup
};
struct ExpandedRoute {
  v1::ForwardingRoute primary;
  std::vector<ExpandedBackup> backups;  // in the route's order
};
ExpandedRoute Expand(const v1::SitePlan& plan, const v1::Route& route);

// The first backup of `route` for exactly `failure` (kind, id and plane);
// -1 when it has none.
int FindBackup(const v1::SitePlan& plan, const v1::Route& route, const v1::FailureScope& failure);

// The route for `prefix` (null when none); routes are searched in order.
const v1::Route* FindRoute(const v1::SitePlan& plan, const std::string& prefix);
// The first route toward facility `destination_id` (null when none).
const v1::Route* FindRouteTo(const v1::SitePlan& plan, const std::string& destination_id);

}  // namespace geodesic::site_plan
