#pragma once
// Lowest-latency paths over a Snapshot's usable links, avoiding a failure
// (one link, one SRLG or one facility). Shared by the route and chain solvers.
// Pure: no I/O, no clock, no threads.
#include <cstdint>
#include <limits>
#include <vector>

#include "pathcomp/solver/snapshot.h"

namespace geodesic::pathcomp {

inline constexpr uint64_t kUnreachable = std::numeric_limits<uint64_t>::max();

// What a shortest-path run must avoid, besides the links that are not usable.
struct Exclusion {
  int link = -1;
  int srlg = -1;
  int facility = -1;  // its links, in and out: the facility is gone
  // A pinned chain's facility set (Chain::allowed): links leaving it are out
  // too. Null: no restriction. Not owned.
  const std::vector<char>* allowed = nullptr;

  bool empty() const { return link < 0 && srlg < 0 && facility < 0 && allowed == nullptr; }
  // True when `link_index` may not be used: unusable, or hit by the failure.
  bool Excludes(const Snapshot& snapshot, int link_index) const;
};

// Single-source shortest paths from one facility; ties broken by link index
// so that plans are deterministic.
struct ShortestPaths {
  std::vector<uint64_t> distance_us;  // kUnreachable when there is no path
  std::vector<int> parent_arc_link;   // link into each facility on one shortest path
  std::vector<int> parent;            // facility before it on that path

  static ShortestPaths Run(const Snapshot& snapshot, int source, const Exclusion& exclusion);

  // Facility indices from the source to `dst`, inclusive.
  std::vector<int> PathTo(int dst) const;
  // Link indices from the source to `dst`.
  std::vector<int> LinksTo(int dst) const;
  // Link index of the first arc on the recorded path to `dst`.
  int FirstLinkTo(int dst) const;
};

}  // namespace geodesic::pathcomp
