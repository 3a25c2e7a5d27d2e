#pragma once
// The difference between the routes a site has installed and a new site plan:
// what to announce, re-announce with new next hops, and withdraw.
// Pure: no I/O, no clock, no threads. Thread-compatible.
#include <string>
#include <vector>

#include "geodesic/v1/plan.pb.h"

namespace geodesic::routerd {

struct RouteChange {
  v1::ForwardingRoute before;
  v1::ForwardingRoute after;
};

struct RibDiff {
  std::vector<v1::ForwardingRoute> added;
  std::vector<RouteChange> changed;  // next hops or weights differ
  std::vector<v1::ForwardingRoute> removed;

  bool empty() const { return added.empty() && changed.empty() && removed.empty(); }
};

// Routes (what the routers have: resolved, see local_repair.h) are keyed by
// prefix; a route whose next hops (link and weight) are
// unchanged is left alone even when its backups or path details changed.
RibDiff DiffRoutes(const v1::ForwardingTable& installed, const v1::ForwardingTable& next);

// Same next hops (link and weight, in order): nothing to tell the routers.
bool SameForwarding(const v1::ForwardingRoute& a, const v1::ForwardingRoute& b);

// "iad-nyc(w1),iad-chi(w2)" for logs.
std::string DescribeNextHops(const v1::ForwardingRoute& route);

}  // namespace geodesic::routerd
