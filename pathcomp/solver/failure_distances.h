#pragma once
// Lowest-latency paths between pairs of facilities with no failure and under
// one failure at a time (a link, an SRLG or a facility), for solvers that ask
// many pairs under many failures (the chain placer's backups).
//
// Answers are exactly ShortestPaths::Run's (same distances, same paths, same
// tie-breaks): a shortest-path tree is determined by its distances (every
// facility's parent link is the lowest-index link into it on a shortest
// path), so a facility whose tree path from the source avoids the failure
// keeps its distance and its path, and only the subtrees the failure cuts off
// are recomputed (a Dijkstra over them, seeded from the rest of the tree).
// Trees are computed lazily per source; repairs lazily per (failure, source),
// on the first question about that source under that failure. Memory grows
// with the sources asked about: O(facilities) each.
// Pure: no I/O, no clock; no threads but BuildTrees' (joined before it
// returns). Thread-compatible. Keeps references to the snapshot and to
// `allowed`, which must outlive it.
#include <atomic>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "pathcomp/solver/chain_plan.h"
#include "pathcomp/solver/shortest_paths.h"
#include "pathcomp/solver/snapshot.h"

namespace geodesic::pathcomp {

class FailureDistances {
 public:
  // `allowed`: only links between allowed facilities (a pinned chain's mask,
  // Chain::allowed), or null for every usable link.
  FailureDistances(const Snapshot& snapshot, const std::vector<char>* allowed);
  ~FailureDistances();
  FailureDistances(const FailureDistances&) = delete;
  FailureDistances& operator=(const FailureDistances&) = delete;

  // Builds the unfailed tree of each of `sources` not built yet, on up to
  // `threads` threads (the calling one among them, joined before it
  // returns): for solvers that will ask all of them. The one call that uses
  // threads; no other call may run at the same time.
  void BuildTrees(const std::vector<int>& sources, int threads);
  // Takes the unfailed trees `other` has built (over the same snapshot and
  // mask), copied, instead of building them again: for solvers that ask the
  // same sources on several threads, each with its own FailureDistances.
  void CopyUnfailedTrees(const FailureDistances& other);

  // Answers from now on avoid `failure` (its link, SRLG and facility; its
  // `allowed` is ignored: the constructor's applies). Cheap when unchanged.
  void SetFailure(const Exclusion& failure);

  // The unfailed path from `from` to `to`, whose tree must be built
  // (BuildTrees, or any question about `from`): its links appended to
  // `links` and its facilities (`to` and `from` included) to `facilities`,
  // from `to` back; its latency returned (kUnreachable: no path, nothing
  // appended). `regular` is set false when the tree has zero-latency cycles
  // (MovesUntouchedPaths): then any failure may move any of its paths, and
  // nothing is appended.
  // Reads only the built tree, so threads may ask it at once.
  uint64_t UnfailedPath(int from, int to, std::vector<int>& links, std::vector<int>& facilities,
                        bool& regular) const;

  // Lowest latency from `from` to `to`; kUnreachable when there is no path
  // (also from a failed facility, to itself included).
  uint64_t Distance(int from, int to);
  // Link indices of that path (ShortestPaths::LinksTo); empty when from == to
  // or unreachable.
  std::vector<int> LinksTo(int from, int to);
  // That path's facilities, `from` first, appended to `facilities`, and its
  // first link; nothing and -1 when LinksTo is empty. Nothing allocated but
  // what `facilities` grows by (for solvers that keep many paths in one
  // array).
  int AppendPath(int from, int to, std::vector<int>& facilities);

  // The last link of the path LinksTo(from, to) and the facility it leaves,
  // and whether that path is the unfailed one (the failure leaves it alone;
  // so does it every path to a facility on it). {-1, -1, ...} when from ==
  // to or unreachable. For solvers that walk many paths of one source back
  // to a prefix they already know.
  struct LastStep {
    int link = -1;
    int before = -1;
    bool unfailed = false;
  };
  LastStep LastStepTo(int from, int to);

  // Distance(from, to) for every `to` but a failed facility (whose entry is
  // unspecified), as one row: valid until the next SetFailure or Row call
  // for another failure. For solvers that ask a source many times: after
  // the first, a question about the same source under the same failure is
  // an array look-up.
  const uint64_t* Row(int from) { return row_epoch_[from] == epoch_ ? row_[from] : DecideRow(from); }
  // Whether Distance(from, to) may differ under the current failure from
  // its unfailed value (false: it is the same): whether the failure cuts
  // `to` off the unfailed tree from `from` (or the tree is recomputed
  // whole). Cheap: a bit per pair once `from` has been asked about under
  // the failure; before that, from the unfailed tree, without repairing it
  // (most pairs asked are on trees the failure cuts elsewhere).
  bool MayChange(int from, int to) {
    if (row_epoch_[from] != epoch_) return CutOff(from, to);
    return (may_change_[static_cast<size_t>(from) * words_ + (to >> 6)] >> (to & 63)) & 1;
  }
  // The id in `paths` of LinksTo(from, to), interned there. Ids are
  // remembered per pair for the table last passed (another table, by
  // ChainPathTable::identity, makes it forget them).
  int PathId(int from, int to, ChainPathTable& paths);
  // Whether a failure can change the path from `from` to a facility that the
  // failure does not touch (its link, its SRLG's links, the facility's
  // links are not on the unfailed path): false, unless the tree from `from`
  // has zero-latency cycles and is recomputed whole. Call after the first
  // question about `from`.
  bool MovesUntouchedPaths(int from) const { return irregular_[from]; }
  // Whether MovesUntouchedPaths is true for any source yet (false: for none).
  bool AnyMovesUntouchedPaths() const { return any_irregular_.load(std::memory_order_relaxed); }

 private:
  struct Tree;

  Tree& BuiltTree(int source);  // built, under no failure
  Tree& TreeFrom(int source);   // built, and decided for the current failure
  // MayChange(from, to) before `from` is decided: what its repair would mark.
  bool CutOff(int from, int to);
  // Calls `root(r)` for the root r of each subtree the current failure cuts
  // off `tree` (unfailed): the far end of a failed link that is the tree's
  // link there, the failed facility when facilities hang below it. Stops at
  // the first call that returns true, and returns whether one did.
  template <typename Root>
  bool AnyCutRoot(const Tree& tree, Root&& root) const;
  const uint64_t* DecideRow(int from);  // Row's first question per (source, failure)
  void Decide(int source, Tree& tree);
  void Repair(Tree& tree);  // of the subtrees below roots_
  // Whether the current failure (or the link's state) rules `link` out;
  // after ExcludedLinks() under the current failure.
  bool Excluded(int link) const { return excluded_[link] != 0; }
  void ExcludedLinks();

  const Snapshot& snapshot_;
  const std::vector<char>* allowed_;
  Exclusion exclusion_;
  uint32_t epoch_ = 1;  // of the current failure
  // The links into and out of each facility, with the facility at their
  // other end and their cost, in one array each (a repair reads them for
  // every facility it cuts off): facility v's from begin[v] to begin[v + 1],
  // the links in ascending order.
  struct Arc {
    int link;
    int other;  // the link's source for an arc in, its destination for one out
    uint64_t cost_us;
  };
  std::vector<uint32_t> in_begin_, out_begin_;
  std::vector<Arc> in_arcs_, out_arcs_;
  std::vector<std::vector<int>> srlg_links_;  // per SRLG
  std::vector<std::unique_ptr<Tree>> trees_;  // per source, lazily
  std::vector<char> irregular_;  // per source whose tree is built
  std::atomic<bool> any_irregular_{false};  // atomic: BuildTrees builds on several threads
  std::vector<uint64_t> unreachable_row_;
  // Row's answers under the current failure: row_[from] when
  // row_epoch_[from] == epoch_.
  std::vector<const uint64_t*> row_;
  std::vector<uint32_t> row_epoch_;
  // MayChange's bits, per source `words_` words (valid with row_).
  size_t words_;
  std::vector<uint64_t> may_change_;
  std::vector<char> excluded_;  // per link, under the failure of excluded_epoch_
  std::vector<char> base_excluded_;  // per link, under no failure
  std::vector<int> failed_links_;    // those excluded_ has out beyond base_excluded_
  uint32_t excluded_epoch_ = 0;
  std::vector<int> path_scratch_;
  // Decide's and Repair's scratch, kept between repairs (tens of thousands
  // per plan): the roots of the cut subtrees, the queue.
  std::vector<int> roots_;
  std::vector<std::pair<uint64_t, int>> queue_;
  uint64_t path_table_ = 0;  // the identity of the table PathId's ids are in (0: none yet)
};

}  // namespace geodesic::pathcomp
