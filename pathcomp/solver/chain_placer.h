#pragma once
// Places agent chains: for every call of a chain, the replica that runs it and
// the paths there and back, so that the SUM of the hops' latencies (round trip
// on the chosen paths plus the service's time) is the least possible; and,
// for every facility, link and SRLG the placement touches, the best placement
// that avoids it (the backup), which also answers the single-facility audit.
//
// A chain is origin -> s1 -> s2 -> ... -> sk: call i runs at a replica r_i of
// s_i and is made from r_{i-1} (r_0 = origin), so its latency is
// rtt(r_{i-1}, r_i) + service_time(s_i), where rtt is the lowest-latency path
// there plus the one back (directed links: the two may differ). Calls within
// one facility cost no backbone latency.
//
// The minimum over all replica choices is a shortest path through the layered
// graph of replicas (dynamic programming over the calls, exact), with
// all-pairs distances from Dijkstra on the snapshot's usable links.
// Pure: no I/O, no clock, no threads. Thread-compatible.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "pathcomp/solver/shortest_paths.h"
#include "pathcomp/solver/snapshot.h"

namespace geodesic::pathcomp {

struct ChainHop {
  int service = -1;
  int replica = -1;             // facility index running the call
  std::vector<int> links_there;  // from the previous facility; empty when the same
  std::vector<int> links_back;
  uint64_t network_rtt_us = 0;
  uint64_t service_time_us = 0;
  uint64_t latency_us() const { return network_rtt_us + service_time_us; }
};

struct ChainPlacement {
  bool placed = false;  // every call has a reachable replica
  uint64_t total_us = 0;
  bool within_budget = false;
  std::vector<ChainHop> hops;
  // When not placed: the first call that cannot be made, and why.
  int failed_call = -1;
  std::string reason;

  // Facility indices the placement uses (origin, transits, replicas), ascending.
  std::vector<int> Facilities(const Snapshot& snapshot, const Chain& chain) const;
  // Link indices on its paths, ascending.
  std::vector<int> Links() const;
};

// A failure a backup avoids.
struct ChainFailure {
  enum class Kind { kFacility, kLink, kSrlg };
  Kind kind;
  int index;  // facility, link or SRLG index
  friend bool operator<(const ChainFailure& a, const ChainFailure& b) {
    return a.kind != b.kind ? a.kind < b.kind : a.index < b.index;
  }
  Exclusion AsExclusion() const;
};

struct ChainBackup {
  ChainFailure failure;
  ChainPlacement placement;  // placed == false: no placement survives the failure
};

// A facility without which a workload cannot run (or, for a chain, cannot
// run within its budget), and why.
struct FacilityDependency {
  int workload;  // index for Snapshot::workload_id
  int facility;
  std::string reason;
};

struct ChainPlan {
  std::vector<ChainPlacement> primary;            // per Snapshot::chains()
  std::vector<std::vector<ChainBackup>> backups;  // per chain, by failure
  std::vector<FacilityDependency> dependencies;   // chains and elephant flows
};

class ChainPlacer {
 public:
  explicit ChainPlacer(const Snapshot& snapshot);

  // The least latency-sum placement of `chain` when `failure` has happened
  // (nothing when empty).
  ChainPlacement Place(const Chain& chain, const Exclusion& failure = {});

  // Primary placements for every chain of the snapshot, a backup for every
  // facility (but the origin), link and SRLG each primary touches, and the
  // single-facility dependencies of every chain and elephant flow. Failures
  // are solved one at a time, so memory stays O(facilities^2).
  ChainPlan PlanAll();

 private:
  // Shortest paths from `source` under the current failure, computed once.
  const ShortestPaths& From(int source);
  void SetFailure(const Exclusion& failure);

  const Snapshot& snapshot_;
  Exclusion failure_;
  std::vector<std::unique_ptr<ShortestPaths>> from_;  // per source, lazily
};

}  // namespace geodesic::pathcomp
