#include "pathcomp/solver/shortest_paths.h"

#include <algorithm>
#include <queue>

namespace geodesic::pathcomp {

bool Exclusion::Excludes(const Snapshot& snapshot, int link_index) const {
  if (!snapshot.link_state(link_index).usable || link_index == link) return true;
  if (facility >= 0 &&
      (snapshot.link_src(link_index) == facility || snapshot.link_dst(link_index) == facility)) {
    return true;
  }
  if (allowed != nullptr &&
      (!(*allowed)[snapshot.link_src(link_index)] || !(*allowed)[snapshot.link_dst(link_index)])) {
    return true;
  }
  if (srlg >= 0) {
    const auto srlgs = snapshot.link_srlgs(link_index);
    if (std::find(srlgs.begin(), srlgs.end(), srlg) != srlgs.end()) return true;
  }
  return false;
}

ShortestPaths ShortestPaths::Run(const Snapshot& snapshot, int source,
                                 const Exclusion& exclusion) {
  const int n = snapshot.facility_count();
  ShortestPaths result{std::vector<uint64_t>(n, kUnreachable), std::vector<int>(n, -1),
                       std::vector<int>(n, -1)};
  if (source == exclusion.facility) return result;
  using Entry = std::pair<uint64_t, int>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> queue;
  result.distance_us[source] = 0;
  queue.emplace(0, source);
  while (!queue.empty()) {
    auto [distance, at] = queue.top();
    queue.pop();
    if (distance != result.distance_us[at]) continue;
    for (const int link : snapshot.out_links(at)) {
      if (exclusion.Excludes(snapshot, link)) continue;
      const int next = snapshot.link_dst(link);
      const uint64_t candidate = distance + snapshot.link_state(link).cost_us;
      if (candidate < result.distance_us[next] ||
          (candidate == result.distance_us[next] && link < result.parent_arc_link[next])) {
        const bool improved = candidate < result.distance_us[next];
        result.distance_us[next] = candidate;
        result.parent_arc_link[next] = link;
        result.parent[next] = at;
        if (improved) queue.emplace(candidate, next);
      }
    }
  }
  return result;
}

std::vector<int> ShortestPaths::PathTo(int dst) const {
  std::vector<int> path;
  for (int at = dst; at >= 0; at = parent[at]) path.push_back(at);
  std::reverse(path.begin(), path.end());
  return path;
}

std::vector<int> ShortestPaths::LinksTo(int dst) const {
  std::vector<int> links;
  for (int at = dst; parent[at] >= 0; at = parent[at]) links.push_back(parent_arc_link[at]);
  std::reverse(links.begin(), links.end());
  return links;
}

int ShortestPaths::FirstLinkTo(int dst) const {
  int at = dst;
  while (parent[at] >= 0 && parent[parent[at]] >= 0) at = parent[at];
  return parent_arc_link[at];
}

}  // namespace geodesic::pathcomp
