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
// Pure: no I/O, no clock; no threads unless asked (PlanAll and Replan with
// `threads` > 1: the backups', the elephant flows' audit's, and in PlanAll
// the filing of the failures each primary touches, as the primaries are
// placed, and the audit's sort; all joined before they return).
// Thread-compatible.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "pathcomp/solver/chain_plan.h"
#include "pathcomp/solver/shortest_paths.h"
#include "pathcomp/solver/snapshot.h"

namespace geodesic::pathcomp {
namespace internal {
class ChainBackupPlacer;  // what PlanAll() and Replan() share between chains
}  // namespace internal

class ChainPlacer {
 public:
  // `threads`: how many threads PlanAll() and Replan() place backups on
  // (the calling thread one of them; at least 1). Their plans are the same
  // whatever the count, down to the order of their storage and path ids.
  explicit ChainPlacer(const Snapshot& snapshot, int threads = 1);
  ~ChainPlacer();

  // The least latency-sum placement of `chain` when `failure` has happened
  // (nothing when empty).
  ChainPlacement Place(const Chain& chain, const Exclusion& failure = {});

  // Primary placements for every chain of the snapshot, a backup for every
  // facility (but the origin), link and SRLG each primary touches, and the
  // single-facility dependencies of every chain and elephant flow.
  // Work is shared between chains: distances come from one shortest-path tree
  // per source, repaired per failure only where the failure cuts it
  // (FailureDistances), so a pair whose path avoids the failure reuses its
  // unfailed distance; a backup is placed only for the chains whose primary
  // touches the failure, and a hop that keeps the primary's ends keeps its
  // paths without a look-up unless the failure is on them; a backup starts
  // from its primary's layered graph (kept per chain), its calls read from
  // blocks of round trips shared by every chain (per origin or service and
  // the service called): the layers before the first call over a block the
  // failure may change keep their sums, and a block is worked out once per
  // failure (pinned chains: an entry whose predecessor and round trip the
  // failure leaves alone keeps its sum, and an entry no placement cheaper
  // than the primary's surviving hops can pass is left out); elephant flows
  // are audited with one dominator tree per source facility. Failures are solved one at a time (per thread: runs
  // of failures go to the placer's threads, each thread's backups are then
  // stored in failure order), so the working memory beyond the plan stays
  // O(facilities^2) per thread (and per distinct pin mask for pinned
  // chains) plus the layered graphs, O(replicas summed over calls).
  // Equal (ChainPlan's operator==) to PlanAllReference().
  ChainPlan PlanAll();

  // PlanAll()'s primary placements alone (its `primary`), for what needs only
  // them and should not wait for the backups and the audit: the elephant
  // allocation's headroom on chain links.
  std::vector<ChainPlacement> PlacePrimaries();

  // PlanAll() of this placer's snapshot, given `previous` = PlanAll() (or
  // Replan()) of `before`, an earlier version of the same inventory (the
  // snapshot is `before.WithLinkHealth(...)`, or one built from it the same
  // way). Equal to PlanAll(), and only re-places what can have changed when
  // every changed link got worse for paths (went unusable, or costs more):
  // then a placement that uses none of those links keeps its latency while
  // every other placement can only get slower, and the shortest-path ties
  // break the same way, so it is still the answer. Re-placed are the chains
  // whose primary uses a changed link or was not placed (with all their
  // backups), the backups whose changed hops use one, and the backups that
  // could not be placed, unless every link that went down still has another
  // way between its ends under the backup's failure (an unplaced answer
  // depends only on which facilities reach which). Backups are re-placed where
  // they are in `previous`; the audit is recomputed. When a link got better
  // (came up, or costs less), any chain may improve and this is a full
  // PlanAll(); likewise when `before` is not the same inventory. Takes
  // `previous` by value: move it in to avoid copying it.
  ChainPlan Replan(ChainPlan previous, const Snapshot& before);

  // The threads the last PlanAll() or Replan() placed backups on: fewer
  // than asked when the plan has too few backups to share (thousands per
  // thread); 0 before either, and after a Replan() that had nothing to do.
  int backup_threads() const { return backup_threads_; }

  // The straightforward computation PlanAll() replaces (a Place() per chain
  // and failure, shortest paths per failure from scratch, the elephant audit
  // by removing each transit facility). The oracle of tests and benchmarks;
  // too slow for plans.
  ChainPlan PlanAllReference();

 private:
  internal::ChainBackupPlacer& shared();

  // Place() as it was before plans shared work (chain_placer_reference.cc).
  ChainPlacement PlaceReference(const Chain& chain, const Exclusion& failure = {});
  // Shortest paths from `source` under the current failure, computed once.
  const ShortestPaths& From(int source);
  void SetFailure(const Exclusion& failure);

  const Snapshot& snapshot_;
  const int threads_;
  int backup_threads_ = 0;
  Exclusion failure_;
  std::vector<std::unique_ptr<ShortestPaths>> from_;  // per source, lazily
  std::unique_ptr<internal::ChainBackupPlacer> shared_;  // lazily
};

}  // namespace geodesic::pathcomp
