#pragma once
// What ChainPlacer's plans (PlanAll, Replan: chain_placer.h) share between
// chains: the chains in flat arrays; each placed chain's unfailed layered
// graph and primary hops, kept for its backups (a failure's backups are for
// chains all over the plan, so what a backup reads of its chain stays
// together in memory); shortest paths under a failure per pin mask; the
// blocks of round trips the unpinned chains' calls are made over
// (RoundTripBlocks); the failures' numbering; and the backups, placed
// failure by failure on one thread or shared out to several.
// Internal to pathcomp/solver. Thread-compatible, but for Touched, which
// may run on one thread while PlacePrimary and KeepLayers run on another
// (it shares nothing with them); PlaceBackups starts threads only when
// asked, and joins them before it returns.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "pathcomp/solver/chain_plan.h"
#include "pathcomp/solver/failure_distances.h"
#include "pathcomp/solver/internal/chain_layers.h"
#include "pathcomp/solver/internal/failure_ids.h"
#include "pathcomp/solver/internal/round_trip_blocks.h"
#include "pathcomp/solver/snapshot.h"

namespace geodesic::pathcomp::internal {

// A backup to place under a failure: of which chain, the calls whose
// primary paths the failure may be on (bit i: call i), and where in the
// plan's backups it goes.
struct BackupTask {
  static constexpr uint32_t kAppend = ~uint32_t{0};
  int chain;
  uint32_t on_path;
  uint32_t slot = kAppend;  // kAppend: after the others
};

// A primary hop (between two facilities) under the failure a worker is
// on, on the unpinned paths: its round trip, worked out at most once per
// failure (a failure's backups ask the same few hundred primary hops over
// and over; their path ids are remembered per pair, PathUnderFailure).
struct HopUnderFailure {
  uint64_t rtt_us = 0;
  uint32_t rtt_epoch = 0;  // valid when == BackupWorker::epoch
};

// The id of a path between two facilities under the failure a worker is
// on, on the unpinned paths (valid when epoch == BackupWorker::epoch):
// the changed hops of a failure's backups ask the same pairs again and
// again.
struct PathUnderFailure {
  uint32_t epoch = 0;
  int id = 0;
};

// What one thread places backups with: shortest paths under the failure it
// is on (per pin mask), the primary hops, path ids and round-trip blocks
// under it, and scratch.
struct BackupWorker {
  std::unique_ptr<FailureDistances> unpinned;
  std::vector<HopUnderFailure> hops;  // by LayerCall::hop
  std::vector<PathUnderFailure> paths;  // by (from, to): from * facilities + to (PathMemoSize)
  uint32_t epoch = 0;                 // of the failure the worker is on (PlaceFailure)
  RoundTripBlocks::UnderFailure round_trips;  // on the unpinned paths
  std::map<std::vector<char>, std::unique_ptr<FailureDistances>> pinned;  // by mask
  LayerScratch scratch;
  ChainPlacement unplaced;
};

// Where a backup's changed hops (or, unplaced, the facilities its call
// could be made from) go, and the table their paths are interned in.
struct BackupSink {
  std::vector<ChainPlan::ChangedHop>& changed;
  std::vector<int>& unreached_from;
  ChainPathTable& paths;
};

class ChainBackupPlacer {
 public:
  explicit ChainBackupPlacer(const Snapshot& snapshot);

  const FailureIds& ids() const { return ids_; }

  // Builds, on up to `threads` threads, the unfailed shortest-path trees
  // (on the unpinned paths) that placing the chains asks for: from every
  // origin and every replica, rather than one by one as first asked.
  void BuildTrees(int threads);

  // The primary placement of chain `c`, whole. Its layered graph is kept
  // for its backups once `plan` has it (KeepLayers).
  ChainPlacement PlacePrimary(int c);

  // Keeps chain `c`'s unfailed layered graph and primary hops (from
  // `plan`, which has its placed primary) for its backups. After
  // PlacePrimary(c), from what it solved; else solved again (the unfailed
  // graph of this snapshot, whose best placement is the primary).
  void KeepLayers(int c, const ChainPlan& plan, bool just_placed);

  // What a backup reveals of the single-facility audit, appended to
  // `dependencies`. Called by PlaceBackups on whichever of its threads
  // stores the backup, concurrently with other calls (each with its own
  // list): it may only read the plan's primaries, and of the backup all but
  // `first` (where its hops are is not known yet).
  using BackupAudit =
      std::function<void(const ChainPlan::CompactBackup& backup, std::vector<FacilityDependency>& dependencies)>;

  // Places the backups of `tasks` (per failure id, ascending; of chains
  // whose primary `plan` has placed, their layers kept here first when they
  // are not yet) into `plan`, each at its slot or appended, and, with an
  // `audit`, appends to plan.dependencies what it finds of each backup, in
  // the backups' order. With `threads` > 1 and enough backups, runs of
  // failures go to that many threads (joined before it returns), each with
  // its own worker, sink and copy of the plan's path table, and each
  // writing (and auditing) a run's backups at their places (known from the
  // tasks); their new paths are interned in the plan's in the order they
  // first came (run by run, as soon as the runs before are placed, by a
  // thread done with one while the others place the next), and the threads
  // write each run's hops after the runs before it: the plan is the same
  // (path ids included) whatever the count.
  // Returns the threads used.
  int PlaceBackups(const std::vector<std::vector<BackupTask>>& tasks, ChainPlan& plan, int threads,
                   const BackupAudit& audit);

  // The failures a placed primary touches: every facility but the origin,
  // every link, every SRLG of those links; each once, in no particular
  // order (the callers file them by failure), with the calls whose paths it
  // is on (bit i: call i; calls past 31 always set).
  struct TouchedFailure {
    int id;
    uint32_t on_path;
  };
  const std::vector<TouchedFailure>& Touched(const Chain& chain, const ChainPlacement& primary);

 private:
  ChainView View(int c) const {
    return {heads_[c].origin, services_.data() + service_begin_[c], heads_[c].calls,
            heads_[c].pinned ? &snapshot_.chains()[c] : nullptr};
  }

  // Asks the memory for what PlaceBackup(c) reads of chain `c` ahead of
  // it: a failure's backups read chains all over the plan, and waiting for
  // each chain's layers in turn was most of their time.
  void PrefetchHead(int c) const { __builtin_prefetch(&heads_[c]); }
  void PrefetchLayers(int c) const;
  // The backup of chain `c` under `failure`, placed by `worker`: its
  // changed hops (or the facilities its call could be made from) appended
  // to the sink, `first` counted there. `on_path`: bit i set when the
  // failure may be on the primary's paths of call i (all set: unknown).
  // The chain's layers must be kept (KeepLayers). Reads only what the
  // primaries left (the layers), so threads with a worker and a sink each
  // may place backups at once.
  ChainPlan::CompactBackup PlaceBackup(BackupWorker& worker, int c, const ChainFailure& failure,
                                       const Exclusion& exclusion, uint32_t on_path,
                                       BackupSink& sink) const;
  // PlaceBackup's search, when the primary's replicas may not stay: chain
  // `c`'s best placement under `failure` (as `exclusion`, which `paths`,
  // the chain's, is set to) into the worker's scratch, or why there is none
  // into its `unplaced`. An unpinned chain's calls are read from the blocks
  // (SolveLayersOnBlocks); a pinned one's, from its paths (SolveLayersAfter,
  // with the bound `bound_us`).
  bool Search(BackupWorker& worker, int c, const ChainFailure& failure, const Exclusion& exclusion,
              uint64_t bound_us, FailureDistances& paths) const;
  // Every task of failure `id`, in order, placed by `worker` into `sink`,
  // each backup handed to `placed(task, backup)`.
  template <typename Placed>
  void PlaceFailure(BackupWorker& worker, int id, const std::vector<BackupTask>& tasks, BackupSink& sink,
                    Placed&& placed) const;
  // Where `task`'s backup goes in plan.backups, which the threads have
  // sized: its slot, or (BackupTask::kAppend) the next of the appended
  // ones, counted in `appended`.
  static size_t PlaceOf(const BackupTask& task, size_t& appended) {
    return task.slot == BackupTask::kAppend ? appended++ : task.slot;
  }
  // `backup` into plan.backups at `slot` (BackupTask::kAppend: appended).
  static ChainPlan::CompactBackup& Store(ChainPlan& plan, uint32_t slot, const ChainPlan::CompactBackup& backup) {
    if (slot == BackupTask::kAppend) return plan.backups.emplace_back(backup);
    return plan.backups[slot] = backup;
  }
  // The worker's shortest paths for chain `c` (its pin mask's).
  FailureDistances& PathsFor(BackupWorker& worker, int c) const {
    if (!heads_[c].pinned && worker.unpinned) return *worker.unpinned;
    return MakePathsFor(worker, c);
  }
  // The size of a worker's path ids memo (BackupWorker::paths): a pair
  // each, but none on backbones large enough for that to weigh.
  size_t PathMemoSize() const;
  // PathsFor but for the look-up it inlines: a pinned chain's, or the
  // unpinned ones made.
  FailureDistances& MakePathsFor(BackupWorker& worker, int c) const;

  const Snapshot& snapshot_;
  FailureIds ids_;
  size_t facilities_;
  RoundTripBlocks blocks_;  // the unpinned chains' calls'
  BackupWorker main_;  // the calling thread's: primaries, kept layers and backups
  std::vector<uint32_t> mark_;  // per failure id: == stamp_ when touched by the current chain
  uint32_t stamp_ = 0;
  std::vector<int> position_;  // per failure id marked: its place in touched_
  std::vector<TouchedFailure> touched_;
  std::vector<int> primary_position_;  // KeepLayers' scratch: per layer
  std::vector<size_t> layer_at_;       // KeepLayers' scratch: per layer, where its entries start
  // The primaries' hops between two facilities, numbered (LayerCall::hop)
  // by (from, replica).
  absl::flat_hash_map<uint64_t, int> hop_ids_;
  // The chains, flat: services of chain c at services_[service_begin_[c] ..).
  std::vector<int> services_;
  std::vector<uint32_t> service_begin_;
  // Per chain, and the unfailed layered graphs kept (KeepLayers).
  std::vector<LayerChain> heads_;
  std::vector<LayerCall> layer_calls_;
  std::vector<LayerEntry> layer_entries_;
};

}  // namespace geodesic::pathcomp::internal
