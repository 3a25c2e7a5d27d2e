#include "pathcomp/solver/internal/loop_free_backups.h"

#include <algorithm>

namespace geodesic::pathcomp::internal {

std::vector<int> FollowedLinks(const Snapshot& snapshot, const InstalledHops& installed, const Wcmp* weights) {
  const int n = snapshot.facility_count();
  std::vector<int> followed(static_cast<size_t>(n) * static_cast<size_t>(n), -1);
  for (int dst = 0; dst < n; ++dst) {
    for (int at = 0; at < n; ++at) {
      const std::vector<int>& hops = installed[dst][at];
      if (hops.empty()) continue;
      int best = hops.front();
      if (weights != nullptr) {
        uint32_t heaviest = 0;
        for (const WeightedNextHop& hop : weights->route(at, dst).next_hops) {
          if (hop.weight > heaviest) {
            heaviest = hop.weight;
            best = hop.link;
          }
        }
        if (std::find(hops.begin(), hops.end(), best) == hops.end()) best = hops.front();
      }
      followed[static_cast<size_t>(dst) * static_cast<size_t>(n) + static_cast<size_t>(at)] = best;
    }
  }
  return followed;
}

uint64_t FollowInstalled(const Snapshot& snapshot, const std::vector<int>& followed, int dst, int from,
                         std::vector<int>* path) {
  const int n = snapshot.facility_count();
  const int* row = followed.data() + static_cast<size_t>(dst) * static_cast<size_t>(n);
  uint64_t latency_us = 0;
  for (int at = from, steps = 0; at != dst && steps < n; ++steps) {
    const int link = row[at];
    if (link < 0) break;
    latency_us += snapshot.link_state(link).cost_us;
    at = snapshot.link_dst(link);
    path->push_back(at);
  }
  return latency_us;
}

int FindLoopFreeBackup(const Snapshot& snapshot, const std::vector<ShortestPaths>& all, ReturnedShares& shares,
                       size_t column, int source, int dst, const Exclusion& failure, double moved_gbps,
                       const BackupRoom* room) {
  int best = -1;
  double best_lost = 0;
  uint64_t best_score = kUnreachable;
  const std::tuple<int, int, int> key(failure.link, failure.srlg, failure.facility);
  for (const int link : snapshot.out_links(source)) {
    if (failure.Excludes(snapshot, link)) continue;
    const int next = snapshot.link_dst(link);
    double returned = 0;
    if (next != dst) {
      if (next == failure.facility || all[next].distance_us[dst] == kUnreachable) continue;
      returned = shares.From(next, column);
      if (returned >= 1) continue;
    }
    double overflow = 0;  // the share of what goes on that finds no room
    if (moved_gbps > 0 && room != nullptr) {
      overflow = std::clamp((moved_gbps - room->Of(key, link, dst)) / moved_gbps, 0.0, 1.0);
    }
    const double lost = returned + (1 - returned) * overflow;
    const uint64_t score = snapshot.link_state(link).cost_us + (next == dst ? 0 : all[next].distance_us[dst]);
    // Less lost first, then latency; ties: the lowest link index (out_links order).
    if (best >= 0 && (lost > best_lost + 1e-9 || (lost > best_lost - 1e-9 && score >= best_score))) continue;
    best = link;
    best_lost = lost;
    best_score = score;
  }
  return best;
}

}  // namespace geodesic::pathcomp::internal
