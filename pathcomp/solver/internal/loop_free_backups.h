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
#include <span>
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
// repairing) under each of a route's failures, a column each, which every
// neighbour asked about then shares. One walk serves every column: the
// failures of a route cut few of the facilities it visits, so walking them
// once with a share per failure beside each is what walking once per
// failure was, without the repeated visits (the same sums in the same
// order: the same shares).
class ReturnedShares {
 public:
  ReturnedShares(const Snapshot& snapshot, const FlatHops& flat)
      : snapshot_(snapshot),
        n_(snapshot.facility_count()),
        hops_(flat.hops),
        first_hop_(flat.first_hop),
        column_of_facility_(static_cast<size_t>(n_), -1),
        stamp_(static_cast<size_t>(n_), 0) {}

  // Starts (dst, repairing) under `columns`, one failure each (Exclusion{}:
  // none but the links that are down; no facility failed by two columns),
  // which must outlive the walks.
  void Begin(int dst, int repairing, std::span<const Exclusion> columns) {
    for (const int facility : failed_facilities_) column_of_facility_[static_cast<size_t>(facility)] = -1;
    failed_facilities_.clear();
    dst_ = dst;
    repairing_ = repairing;
    columns_ = columns;
    k_ = columns.size();
    links_or_srlgs_ = false;
    for (size_t k = 0; k < k_; ++k) {
      if (columns[k].facility >= 0) {
        column_of_facility_[static_cast<size_t>(columns[k].facility)] = static_cast<int>(k);
        failed_facilities_.push_back(columns[k].facility);
      }
      links_or_srlgs_ = links_or_srlgs_ || columns[k].link >= 0 || columns[k].srlg >= 0;
    }
    // Room for the widest Begin so far: a row per facility, an accumulator
    // per depth 0 .. n_.
    if (zeros_.size() < k_) {
      share_.resize(static_cast<size_t>(n_) * k_);
      returned_.resize(static_cast<size_t>(n_ + 1) * k_);
      cut_.resize(k_);
      zeros_.resize(k_, 0.0);
      ones_.resize(k_, 1.0);
    }
    ++current_;
  }

  // The share handed to `from` that fails under column `column`.
  double From(int from, size_t column) { return Walk(from, 0)[column]; }

 private:
  using Hop = FlatHops::Hop;

  // Whether column k's failure of a link or an SRLG takes `hop`.
  bool CutsLink(size_t k, const Hop& hop) const {
    const Exclusion& failure = columns_[k];
    if (hop.link == failure.link) return true;
    if (failure.srlg >= 0) {
      for (const int srlg : snapshot_.link_srlgs(hop.link)) {
        if (srlg == failure.srlg) return true;
      }
    }
    return false;
  }

  // The shares of `at`, a column each; valid until the next Begin(). A hop
  // into a failed facility returns all it carries for that failure's column
  // (as does one out of it: that column's share of the failed facility is 1).
  const double* Walk(int at, int depth) {
    if (at == dst_) return zeros_.data();
    if (at == repairing_ || depth > n_) return ones_.data();
    double* share = share_.data() + static_cast<size_t>(at) * k_;
    if (stamp_[at] == current_) return share;
    double* returned = returned_.data() + static_cast<size_t>(depth) * k_;
    std::fill(returned, returned + k_, 0.0);
    double total = 0;
    const size_t row = static_cast<size_t>(dst_) * static_cast<size_t>(n_) + static_cast<size_t>(at);
    for (uint32_t i = first_hop_[row]; i < first_hop_[row + 1]; ++i) {
      const Hop& hop = hops_[i];
      const double weight = hop.weight;
      total += weight;
      if (!snapshot_.link_state(hop.link).usable) {
        for (size_t k = 0; k < k_; ++k) returned[k] += weight * 1.0;
        continue;
      }
      const double* next = Walk(hop.next, depth + 1);
      const int into_failed = column_of_facility_[static_cast<size_t>(hop.next)];
      if (!links_or_srlgs_) {
        for (size_t k = 0; k < k_; ++k) {
          returned[k] += weight * (static_cast<int>(k) == into_failed ? 1.0 : next[k]);
        }
        continue;
      }
      for (size_t k = 0; k < k_; ++k) {
        cut_[k] = static_cast<int>(k) == into_failed || CutsLink(k, hop) ? 1.0 : next[k];
      }
      for (size_t k = 0; k < k_; ++k) returned[k] += weight * cut_[k];
    }
    for (size_t k = 0; k < k_; ++k) share[k] = total > 0 ? returned[k] / total : 1;
    if (const int failed = column_of_facility_[static_cast<size_t>(at)]; failed >= 0) share[failed] = 1;
    stamp_[at] = current_;
    return share;
  }

  const Snapshot& snapshot_;
  const int n_;
  const std::vector<Hop>& hops_;
  const std::vector<uint32_t>& first_hop_;
  std::span<const Exclusion> columns_;
  size_t k_ = 0;
  bool links_or_srlgs_ = false;       // some column fails a link or an SRLG
  std::vector<int> column_of_facility_;  // the column failing each facility, or -1
  std::vector<int> failed_facilities_;   // those with a column
  std::vector<double> cut_;              // a hop's shares, a column each
  std::vector<double> share_;     // [facility * k_ + column]
  std::vector<double> returned_;  // [depth * k_ + column]: a walk's sums in progress
  std::vector<double> zeros_, ones_;
  std::vector<uint64_t> stamp_;  // share_'s row f is current when stamp_[f] == current_
  uint64_t current_ = 0;
  int dst_ = -1, repairing_ = -1;
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
// `shares` must have begun (dst, source) with `failure` as column `column`
// or, for the failure of one of source's own links, no failure there:
// traffic that comes back to source is counted returned before it could
// reach source's links.
int FindLoopFreeBackup(const Snapshot& snapshot, const std::vector<ShortestPaths>& all, ReturnedShares& shares,
                       size_t column, int source, int dst, const Exclusion& failure, double moved_gbps,
                       const BackupRoom* room);

}  // namespace geodesic::pathcomp::internal
