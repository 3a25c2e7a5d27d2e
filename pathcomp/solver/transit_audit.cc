#include "pathcomp/solver/transit_audit.h"

#include <utility>


namespace geodesic::pathcomp {
namespace {

// Immediate dominators of every facility reachable from `source` over usable
// links (Cooper, Harvey and Kennedy's iterative algorithm); -1 when
// unreachable, `source` for itself.
std::vector<int> ImmediateDominators(const Snapshot& snapshot, const std::vector<std::vector<int>>& in_links,
                                     int source) {
  const int n = snapshot.facility_count();
  // Reverse postorder of a depth-first search.
  std::vector<int> postorder;
  std::vector<char> seen(n, 0);
  std::vector<std::pair<int, size_t>> stack = {{source, 0}};
  seen[source] = 1;
  while (!stack.empty()) {
    auto& [at, next] = stack.back();
    const auto out = snapshot.out_links(at);
    if (next == out.size()) {
      postorder.push_back(at);
      stack.pop_back();
      continue;
    }
    const int link = out[next++];
    const int to = snapshot.link_dst(link);
    if (seen[to] || !snapshot.link_state(link).usable) continue;
    seen[to] = 1;
    stack.emplace_back(to, 0);
  }
  std::vector<int> rank(n, -1);  // position in postorder: higher is earlier in reverse postorder
  for (int i = 0; i < static_cast<int>(postorder.size()); ++i) rank[postorder[i]] = i;
  std::vector<int> idom(n, -1);
  idom[source] = source;
  auto intersect = [&](int a, int b) {
    while (a != b) {
      while (rank[a] < rank[b]) a = idom[a];
      while (rank[b] < rank[a]) b = idom[b];
    }
    return a;
  };
  for (bool changed = true; changed;) {
    changed = false;
    for (auto it = postorder.rbegin(); it != postorder.rend(); ++it) {
      const int at = *it;
      if (at == source) continue;
      int dominator = -1;
      for (int link : in_links[at]) {
        const int from = snapshot.link_src(link);
        if (idom[from] < 0 || !snapshot.link_state(link).usable) continue;
        dominator = dominator < 0 ? from : intersect(from, dominator);
      }
      if (dominator != idom[at]) {
        idom[at] = dominator;
        changed = true;
      }
    }
  }
  return idom;
}

}  // namespace

std::vector<FacilityDependency> ElephantTransitDependencies(const Snapshot& snapshot) {
  const int n = snapshot.facility_count();
  const auto& demands = snapshot.demands();
  std::vector<std::vector<int>> by_source(n);
  for (int d = 0; d < static_cast<int>(demands.size()); ++d) by_source[demands[d].src].push_back(d);
  std::vector<std::vector<int>> in_links(n);
  for (int link = 0; link < snapshot.link_count(); ++link) in_links[snapshot.link_dst(link)].push_back(link);

  std::vector<FacilityDependency> dependencies;
  for (int source = 0; source < n; ++source) {
    if (by_source[source].empty()) continue;
    const std::vector<int> idom = ImmediateDominators(snapshot, in_links, source);
    for (int d : by_source[source]) {
      const int dst = demands[d].dst;
      if (dst == source || idom[dst] < 0) continue;
      for (int at = idom[dst]; at != source; at = idom[at]) {
        dependencies.push_back({.workload = demands[d].workload, .facility = at,
                                .why = FacilityDependency::Why::kOnlyTransit, .from = source, .to = dst});
      }
    }
  }
  return dependencies;
}

}  // namespace geodesic::pathcomp
