#pragma once
// The path table of a chain's plan (proto/geodesic/v1/plan.proto, ChainPlan):
// each path its hops take stored once, hops naming paths by index. Written
// by pathcomp as it makes a chain's wire form (and by AddChainPath, for
// tools and tests); read by tectl, pathcomp's services and the drills.
//
// ChainPathIds requires `chain` to have passed ValidateChainPaths; a chain
// from pathcomp always does. Pure: no I/O. Thread-compatible.
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "geodesic/v1/plan.pb.h"

namespace geodesic::site_plan {

// OK when the chain's path table is well formed (path_ends starting with an
// empty path 0, never decreasing, ending at path_facilities' size; every
// facility index in path_facility_ids) and every hop of its primary and of
// its backups names a path in it. InvalidArgument naming the first offending
// entry or hop otherwise. A chain without paths at all (every hop local, or
// a plan from before the table) passes when its hops name path 0 only.
[[nodiscard]] absl::Status ValidateChainPaths(const v1::ChainPlan& chain);

// How many paths the table has (0 for an empty table: path 0 is then still
// the empty path).
int ChainPathCount(const v1::ChainPlan& chain);

// Path `path`'s facility ids, in order; empty for path 0.
std::vector<std::string> ChainPathIds(const v1::ChainPlan& chain, uint32_t path);

// Appends a path through `facility_ids` to the chain's table (starting the
// table with path 0 when it has none) and returns its index; an empty path
// is path 0. Each facility id is added to path_facility_ids once. For tools
// and tests: it does not look for an equal path already there.
uint32_t AddChainPath(v1::ChainPlan& chain, const std::vector<std::string>& facility_ids);

}  // namespace geodesic::site_plan
