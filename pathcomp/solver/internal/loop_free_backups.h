#pragma once
// Choosing a site's backups (PathSolver): where the installed next hops of
// the other sites carry traffic a backup hands them — back to the repairing
// site, into the failure, or on — and how much room the links of a backup
// have left for what a failure moves onto it.
// Internal to pathcomp/solver. Pure; ReturnedShares and BackupRoom are
// scratch for one thread.
#include <cstdint>
#include <limits>
#include <map>
#include <tuple>
#include <vector>

#include "pathcomp/solver/shortest_paths.h"
#include "pathcomp/solver/snapshot.h"
#include "pathcomp/solver/wcmp.h"

namespace geodesic::pathcomp::internal {

// The next hops every facility installs toward every destination:
// installed[dst][facility] = the links with weight (the allocation's where
// it follows one, else the equal-cost first hops). What the routers forward
// on while a backup carries the repairing facility's traffic.
using InstalledHops = std::vector<std::vector<std::vector<int>>>;

// `installed` with each next hop's far end and weight beside it, one flat
// array per solve (the walks read nothing else); read-only once built.
struct FlatHops {
  struct Hop {
    int link = -1;
    int next = -1;  // the link's far end
    double weight = 0;
  };
  std::vector<Hop> hops;             // installed[dst][at] for every dst, then at
  std::vector<uint32_t> first_hop;  // (dst, at)'s: hops[first_hop[dst * n + at] .. first_hop[that + 1])

  FlatHops(const Snapshot& snapshot, const InstalledHops& installed, const Wcmp* weights) {
    const int n = snapshot.facility_count();
    first_hop.reserve(static_cast<size_t>(n) * static_cast<size_t>(n) + 1);
    for (int dst = 0; dst < n; ++dst) {
      for (int at = 0; at < n; ++at) {
        first_hop.push_back(static_cast<uint32_t>(hops.size()));
        const WcmpRoute* weighted =
            weights != nullptr && weights->route(at, dst).follows_allocation ? &weights->route(at, dst) : nullptr;
        for (const int link : installed[dst][at]) {
          double weight = 1;
          if (weighted != nullptr) {
            weight = 0;
            for (const WeightedNextHop& hop : weighted->next_hops) {
              if (hop.link == link) weight = hop.weight;
            }
          }
          hops.push_back(Hop{.link = link, .next = snapshot.link_dst(link), .weight = weight});
        }
      }
    }
    first_hop.push_back(static_cast<uint32_t>(hops.size()));
  }
};

// The share of the traffic for `dst` handed to a facility that the
// installed next hops (split by their weights: the allocation's where it
// follows one, else equally) lead back to `repairing`, into the failed
// facility or across a failed link: 0 for a loop-free alternate. Primary
// forwarding toward a destination is loop-free, so the walk ends. One
// instance serves a whole solve: Begin() starts the shares of one (dst,
// repairing, failure), which every neighbour asked about then shares.
class ReturnedShares {
 public:
  ReturnedShares(const Snapshot& snapshot, const FlatHops& flat)
      : snapshot_(snapshot),
        n_(snapshot.facility_count()),
        hops_(flat.hops),
        first_hop_(flat.first_hop),
        share_(static_cast<size_t>(n_), 0),
        stamp_(static_cast<size_t>(n_), 0) {}

  void Begin(int dst, int repairing, const Exclusion& failure) {
    dst_ = dst;
    repairing_ = repairing;
    failure_ = &failure;
    ++current_;
  }

  double From(int from) { return Walk(from, 0); }

 private:
  using Hop = FlatHops::Hop;

  // Exclusion::Excludes for the current failure (which restricts no
  // facility set), inline: the walks ask it for every hop they take.
  bool Excluded(const Hop& hop, int at) const {
    if (!snapshot_.link_state(hop.link).usable || hop.link == failure_->link) return true;
    if (failure_->facility >= 0 && (at == failure_->facility || hop.next == failure_->facility)) return true;
    if (failure_->srlg >= 0) {
      for (const int srlg : snapshot_.link_srlgs(hop.link)) {
        if (srlg == failure_->srlg) return true;
      }
    }
    return false;
  }

  double Walk(int at, int depth) {
    if (at == dst_) return 0;
    if (at == repairing_ || at == failure_->facility || depth > n_) return 1;
    if (stamp_[at] == current_) return share_[at];
    const size_t row = static_cast<size_t>(dst_) * static_cast<size_t>(n_) + static_cast<size_t>(at);
    double total = 0, returned = 0;
    for (uint32_t i = first_hop_[row]; i < first_hop_[row + 1]; ++i) {
      const Hop& hop = hops_[i];
      total += hop.weight;
      returned += hop.weight * (Excluded(hop, at) ? 1.0 : Walk(hop.next, depth + 1));
    }
    stamp_[at] = current_;
    share_[at] = total > 0 ? returned / total : 1;
    return share_[at];
  }

  const Snapshot& snapshot_;
  const int n_;
  const std::vector<Hop>& hops_;
  const std::vector<uint32_t>& first_hop_;
  std::vector<double> share_;
  std::vector<uint64_t> stamp_;  // share_[f] is current when stamp_[f] == current_
  uint64_t current_ = 0;
  int dst_ = -1, repairing_ = -1;
  const Exclusion* failure_ = nullptr;
};



// The link traffic for each destination takes out of each facility along
// the installed next hops: the heaviest given weights (ties: the first), else
// the first; -1 where none is installed. By [dst * facilities + facility].
std::vector<int> FollowedLinks(const Snapshot& snapshot, const InstalledHops& installed, const Wcmp* weights);

// The path traffic for `dst` takes from `from` along the followed links
// (FollowedLinks), appended to `path`, and its latency.
uint64_t FollowInstalled(const Snapshot& snapshot, const std::vector<int>& followed, int dst, int from,
                         std::vector<int>* path);

// What one site's backups for one failure have taken of the links so far
// (the allocation's loads beside them), so that the backups of many
// destinations do not all count on the same room.
class BackupRoom {
 public:
  BackupRoom(const Snapshot& snapshot, const std::vector<int>& followed, const Wcmp& weights)
      : snapshot_(snapshot), followed_(followed), weights_(weights) {}

  // Starts a site: nothing taken.
  void Clear() { taken_.clear(); }

  // The least room on `link` and the followed links from its far end to
  // `dst` (FollowedLinks) for the failure `key`.
  double Of(const std::tuple<int, int, int>& key, int link, int dst) const {
    const auto it = taken_.find(key);
    const std::vector<double>* taken = it == taken_.end() ? nullptr : &it->second;
    double room = std::numeric_limits<double>::infinity();
    ForEachLink(link, dst, [&](int l) {
      room = std::min(room, snapshot_.link_capacity_gbps(l) - weights_.arc_load_gbps[static_cast<size_t>(l)] -
                                (taken ? (*taken)[static_cast<size_t>(l)] : 0));
    });
    return room;
  }
  // `gbps` more on those links for `key`.
  void Take(const std::tuple<int, int, int>& key, int link, int dst, double gbps) {
    auto [it, added] = taken_.try_emplace(key);
    if (added) it->second.assign(static_cast<size_t>(snapshot_.link_count()), 0);
    ForEachLink(link, dst, [&](int l) { it->second[static_cast<size_t>(l)] += gbps; });
  }

 private:
  template <typename F>
  void ForEachLink(int link, int dst, F&& f) const {
    const int n = snapshot_.facility_count();
    const int* row = followed_.data() + static_cast<size_t>(dst) * static_cast<size_t>(n);
    f(link);
    for (int at = snapshot_.link_dst(link), steps = 0; at != dst && row[at] >= 0 && steps < n; ++steps) {
      f(row[at]);
      at = snapshot_.link_dst(row[at]);
    }
  }

  const Snapshot& snapshot_;
  const std::vector<int>& followed_;
  const Wcmp& weights_;
  std::map<std::tuple<int, int, int>, std::vector<double>> taken_;  // by failure (link, srlg, facility)
};

// A backup for `source`'s traffic to `dst` when `failure` strikes, as the
// other routers forward it until the next plan: the link that loses the least
// of that traffic, then the lowest latency. Lost is what the far end's
// installed forwarding leads back to `source` or into the failure (0: a
// loop-free alternate), and, given the allocation's loads (`room`; null:
// room for all), of the rest what its links have no room for: the
// `moved_gbps` the failure moves off the primary (0 when some primary next
// hop survives it: routerd keeps those) beyond the least room on
// the link and the heaviest next hops onwards, after what this site's
// backups for other destinations already took there for the same failure.
// Traffic handed to a neighbour that sends it back loops until the new plan
// arrives (seen in the netns lab: a repair from chi to nyc for iad, while
// nyc sent 12% of its iad traffic via chi; with multipath hashing those
// flows loop, the others arrive); traffic handed to links without room is
// dropped there, with the traffic already on them (GEANT: the lowest-latency
// loop-free way around Amsterdam-Brussels runs over Malta's 0.5 Gbps links,
// 5.9x over). The link, or -1 when every neighbour sends all of it back; its
// path is FollowInstalled's from the link's far end.
// `shares` must have begun (dst, source, failure) or, for the failure of one
// of source's own links, (dst, source, no failure): traffic that comes back
// to source is counted returned before it could reach source's links.
int FindLoopFreeBackup(const Snapshot& snapshot, const std::vector<ShortestPaths>& all, ReturnedShares& shares,
                       int source, int dst, const Exclusion& failure, double moved_gbps, const BackupRoom* room);

}  // namespace geodesic::pathcomp::internal
