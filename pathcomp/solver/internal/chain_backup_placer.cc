#include "pathcomp/solver/internal/chain_backup_placer.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <mutex>
#include <span>
#include <tuple>
#include <utility>

#include "pathcomp/solver/internal/huge_pages.h"
#include "pathcomp/solver/internal/on_threads.h"

namespace geodesic::pathcomp::internal {
namespace {

// How many chains ahead of the one placed PlanAll asks the memory for a
// chain's head, and for its layers (which the head locates).
constexpr size_t kHeadsAhead = 8, kLayersAhead = 4;

// Facilities up to which each worker remembers a failure's path ids for
// every pair (8 bytes a pair: 8 MiB at this many).
constexpr size_t kPathMemoFacilities = 1024;

// Backups a plan needs per thread before more than one thread places them:
// fewer finish before a thread would have started.
constexpr size_t kBackupsPerThread = 4096;

void ClearUnplaced(ChainPlacement& unplaced) {
  unplaced.failed_call = -1;
  unplaced.why = ChainUnplacedWhy::kNone;
  unplaced.failed_facility = -1;
  unplaced.unreached_from.clear();
}

}  // namespace

ChainBackupPlacer::ChainBackupPlacer(const Snapshot& snapshot)
    : snapshot_(snapshot),
      ids_(snapshot),
      facilities_(static_cast<size_t>(snapshot.facility_count())),
      blocks_(snapshot, ids_),
      mark_(ids_.size(), 0),
      position_(ids_.size(), 0) {
  const auto& chains = snapshot.chains();
  service_begin_.reserve(chains.size() + 1);
  service_begin_.push_back(0);
  heads_.reserve(chains.size());
  size_t entries = 0;
  for (const Chain& chain : chains) {
    services_.insert(services_.end(), chain.services.begin(), chain.services.end());
    service_begin_.push_back(static_cast<uint32_t>(services_.size()));
    heads_.push_back({.budget_us = chain.budget_us, .origin = chain.origin,
                      .calls = static_cast<int>(chain.services.size()),
                      .pinned = !chain.pinned_replicas.empty() || !chain.allowed.empty()});
    entries += 1;
    for (int service : chain.services) entries += snapshot.service(service).facilities.size();
  }
  // Every chain's layers, if all are kept: read all over by every failure.
  ReserveInHugePages(layer_calls_, services_.size());
  ReserveInHugePages(layer_entries_, entries);
}

void ChainBackupPlacer::BuildTrees(int threads) {
  std::vector<int> sources;
  for (const Chain& chain : snapshot_.chains()) sources.push_back(chain.origin);
  for (int service = 0; service < snapshot_.service_count(); ++service) {
    const auto& replicas = snapshot_.service(service).facilities;
    sources.insert(sources.end(), replicas.begin(), replicas.end());
  }
  if (!main_.unpinned) main_.unpinned = std::make_unique<FailureDistances>(snapshot_, nullptr);
  main_.unpinned->BuildTrees(sources, threads);
}

ChainPlacement ChainBackupPlacer::PlacePrimary(int c) {
  const Chain& chain = snapshot_.chains()[c];
  FailureDistances& paths = PathsFor(main_, c);
  paths.SetFailure(Exclusion{});
  ChainPlacement result;
  if (!SolveLayers(snapshot_, View(c), -1, [&](int a) { return paths.Row(a); }, main_.scratch, result)) {
    return result;
  }
  return FullPlacement(snapshot_, chain, main_.scratch, [&](int a, int b) { return paths.LinksTo(a, b); });
}

void ChainBackupPlacer::KeepLayers(int c, const ChainPlan& plan, bool just_placed) {
  LayerChain& head = heads_[c];
  const LayerScratch& scratch = main_.scratch;
  if (!just_placed) {
    FailureDistances& paths = PathsFor(main_, c);
    paths.SetFailure(Exclusion{});
    if (!SolveLayers(snapshot_, View(c), -1, [&](int a) { return paths.Row(a); }, main_.scratch, main_.unplaced)) {
      ClearUnplaced(main_.unplaced);
      return;  // not placed: no backups
    }
  }
  head.calls_at = static_cast<uint32_t>(layer_calls_.size());
  head.entries_at = static_cast<uint32_t>(layer_entries_.size());
  head.primary_us = plan.primary[c].total_us;
  const ChainView chain = View(c);
  layer_entries_.push_back({.total_us = 0, .from = -1, .facility = chain.origin});
  for (int call = 0; call < chain.calls; ++call) {
    const ServiceReplicas& replicas = snapshot_.service(chain.services[call]);
    const ChainPlan::PrimaryCall& primary = plan.primary_calls[plan.call_begin[c] + call];
    int hop = -1;
    if (primary.from != primary.replica) {
      const uint64_t key = static_cast<uint64_t>(primary.from) << 32 | static_cast<uint32_t>(primary.replica);
      hop = hop_ids_.try_emplace(key, static_cast<int>(hop_ids_.size())).first->second;
    }
    const int block = chain.pins != nullptr || !blocks_.usable() ? -1
                      : call == 0 ? blocks_.FirstCall(chain.origin, chain.services[0])
                                  : blocks_.LaterCall(chain.services[call - 1], chain.services[call]);
    layer_calls_.push_back({.service_time_us = replicas.service_time_us,
                            .count = static_cast<int>(replicas.facilities.size()),
                            .service = chain.services[call],
                            .replica = primary.replica,
                            .from = primary.from,
                            .path_there = primary.path_there,
                            .path_back = primary.path_back,
                            .rtt_us = plan.primary[c].hops[call].network_rtt_us,
                            .hop = hop,
                            .block = block});
    const size_t at = layer_entries_.size();
    for (int facility : replicas.facilities) layer_entries_.push_back({.facility = facility});
    for (size_t i = scratch.begin[call + 1]; i < scratch.begin[call + 2]; ++i) {
      const SearchEntry& entry = scratch.entries[i];
      layer_entries_[at + entry.position].total_us = entry.total_us;
      layer_entries_[at + entry.position].from = scratch.entries[scratch.begin[call] + entry.from].position;
    }
  }
  head.entry_count = static_cast<uint32_t>(layer_entries_.size() - head.entries_at);
  // The primary's entry per layer, back from the best last one as
  // SolveLayers chose it.
  primary_position_.assign(chain.calls + 1, 0);
  size_t at = scratch.begin[chain.calls];
  for (size_t i = at + 1; i < scratch.begin[chain.calls + 1]; ++i) {
    if (scratch.entries[i].total_us < scratch.entries[at].total_us) at = i;
  }
  for (int layer = chain.calls; layer > 0; --layer) {
    primary_position_[layer] = scratch.entries[at].position;
    at = scratch.begin[layer - 1] + scratch.entries[at].from;
  }
  // What is left to go from each entry, last call first (the rows
  // SolveLayers read are still the unfailed ones); per call, the best
  // placement that does not make it the primary's way (every placement
  // makes call i from one entry of layer i to one of layer i + 1).
  // Where each layer's kept entries start, and an entry's to_go_us there.
  layer_at_.resize(static_cast<size_t>(chain.calls) + 1);
  layer_at_[0] = head.entries_at;
  for (int call = 0; call < chain.calls; ++call) {
    layer_at_[call + 1] = layer_at_[call] + (call == 0 ? 1 : layer_calls_[head.calls_at + call - 1].count);
  }
  auto to_go = [&](int layer, int position) -> uint64_t& {
    return layer_entries_[layer_at_[layer] + static_cast<size_t>(position)].to_go_us;
  };
  for (size_t i = scratch.begin[chain.calls]; i < scratch.begin[chain.calls + 1]; ++i) {
    to_go(chain.calls, scratch.entries[i].position) = 0;
  }
  for (int call = chain.calls; call-- > 0;) {  // the layer of call - 1 (0: the origin) from call's
    LayerCall& made = layer_calls_[head.calls_at + call];
    const uint64_t service_us = made.service_time_us;
    made.others_us = kUnreachable;
    for (size_t i = scratch.begin[call]; i < scratch.begin[call + 1]; ++i) {
      const SearchEntry& entry = scratch.entries[i];
      const bool primary_caller = entry.position == primary_position_[call];
      uint64_t best = kUnreachable;
      for (size_t j = scratch.begin[call + 1]; j < scratch.begin[call + 2]; ++j) {
        const SearchEntry& next = scratch.entries[j];
        const uint64_t after = to_go(call + 1, next.position);
        if (after == kUnreachable) continue;
        uint64_t network = 0;
        if (next.facility != entry.facility) {
          const uint64_t there = entry.row[next.facility], back = next.row[entry.facility];
          if (there == kUnreachable || back == kUnreachable) continue;
          network = there + back;
        }
        const uint64_t through = network + service_us + after;
        best = std::min(best, through);
        if (!primary_caller || next.position != primary_position_[call + 1]) {
          made.others_us = std::min(made.others_us, entry.total_us + through);
        }
      }
      to_go(call, entry.position) = best;
    }
  }
}

void ChainBackupPlacer::PrefetchLayers(int c) const {
  const LayerChain& chain = heads_[c];
  if (chain.calls_at == LayerChain::kNone) return;
  auto lines = [](const void* begin, size_t bytes) {
    if (bytes == 0) return;
    const char* at = static_cast<const char*>(begin);
    for (size_t offset = 0; offset < bytes; offset += 64) __builtin_prefetch(at + offset);
    __builtin_prefetch(at + bytes - 1);
  };
  lines(layer_calls_.data() + chain.calls_at, chain.calls * sizeof(LayerCall));
  lines(layer_entries_.data() + chain.entries_at, chain.entry_count * sizeof(LayerEntry));
}

ChainPlan::CompactBackup ChainBackupPlacer::PlaceBackup(BackupWorker& worker, int c, const ChainFailure& failure,
                                                        const Exclusion& exclusion, uint32_t on_path,
                                                        BackupSink& sink) const {
  const LayerChain& chain = heads_[c];
  LayerScratch& scratch = worker.scratch;
  FailureDistances& paths = PathsFor(worker, c);
  paths.SetFailure(exclusion);
  // The primary's hops under the failure, worked out once per failure for
  // every chain on the unpinned paths.
  const bool unpinned = &paths == worker.unpinned.get();
  auto round_trip = [&](int from, int replica) {
    const uint64_t there = paths.Row(from)[replica], back = paths.Row(replica)[from];
    return there == kUnreachable || back == kUnreachable ? kUnreachable : there + back;
  };
  auto primary_round_trip = [&](const LayerCall& made) {
    if (!unpinned) return round_trip(made.from, made.replica);
    HopUnderFailure& hop = worker.hops[static_cast<size_t>(made.hop)];
    if (hop.rtt_epoch != worker.epoch) {
      hop.rtt_us = round_trip(made.from, made.replica);
      hop.rtt_epoch = worker.epoch;
    }
    return hop.rtt_us;
  };
  auto path_id = [&](int from, int to) {
    if (!unpinned || worker.paths.empty()) return paths.PathId(from, to, sink.paths);
    PathUnderFailure& memo = worker.paths[static_cast<size_t>(from) * facilities_ + static_cast<size_t>(to)];
    if (memo.epoch != worker.epoch) {
      memo.id = paths.PathId(from, to, sink.paths);
      memo.epoch = worker.epoch;
    }
    return memo.id;
  };
  auto path_ids = [&](int from, int replica) { return std::pair{path_id(from, replica), path_id(replica, from)}; };
  ChainPlan::CompactBackup backup;
  backup.failure = failure;
  backup.chain = c;
  const LayerCall* was = &layer_calls_[chain.calls_at];
  // The primary's hops under the failure, if it survives: a bound. A hop
  // whose paths the failure is not on keeps its round trip.
  scratch.GrowCalls(chain.calls);
  uint64_t* rtt_us = scratch.rtt_us.data();
  uint64_t bound_us = 0;
  // The least unfailed sum of a placement that avoids a call the failure
  // makes longer on the primary (LayerCall::others_us).
  uint64_t others_us = kUnreachable;
  // A round trip the failure may have changed: the bound grows by what it adds.
  auto rerouted = [&](int call) {
    const uint64_t rtt = rtt_us[call] = primary_round_trip(was[call]);
    if (rtt == kUnreachable) return false;
    if (rtt != was[call].rtt_us) {
      others_us = std::min(others_us, was[call].others_us);
      bound_us += rtt - was[call].rtt_us;  // no failure makes a round trip shorter
    }
    return true;
  };
  // A link or an SRLG leaves every replica up: only the calls whose paths
  // it may be on (`on_path`, all set when not known) change.
  const bool link_or_srlg = exclusion.facility < 0 && chain.calls <= 32;
  const uint32_t all_calls = chain.calls >= 32 ? ~uint32_t{0} : (uint32_t{1} << chain.calls) - 1;
  if (link_or_srlg) {
    bound_us = chain.primary_us;
    for (uint32_t calls = on_path & all_calls; calls != 0; calls &= calls - 1) {
      const int call = std::countr_zero(calls);
      if (was[call].from != was[call].replica && !rerouted(call)) {
        bound_us = kUnreachable;
        break;
      }
    }
  } else {
    for (int call = 0; call < chain.calls; ++call) {
      const int from = was[call].from, replica = was[call].replica;
      if (replica == exclusion.facility || from == exclusion.facility) {
        bound_us = kUnreachable;
        break;
      }
      rtt_us[call] = 0;
      if (from != replica) rtt_us[call] = was[call].rtt_us;
      bound_us += rtt_us[call] + was[call].service_time_us;
      if (from != replica && (call >= 32 || ((on_path >> call) & 1) != 0) && !rerouted(call)) {
        bound_us = kUnreachable;
        break;
      }
    }
  }
  // A placement that avoids a call the failure made longer takes at least
  // others_us; one that makes each such call the primary's way pays what
  // the failure adds to it, so takes at least bound_us, and as much only
  // when it tied with the primary unfailed, which SolveLayers' tie-breaks
  // (positions, last layer first, the same under the failure) chose over
  // it. Then the primary's replicas stay.
  const bool primary_replicas = bound_us < others_us;
  if (primary_replicas) {
    scratch.total_us = bound_us;
  } else if (!Search(worker, c, failure, exclusion, bound_us, paths)) {
    const ChainPlacement& unplaced = worker.unplaced;
    backup.failed_call = static_cast<int16_t>(unplaced.failed_call);
    backup.why = unplaced.why;
    backup.first = static_cast<uint32_t>(sink.unreached_from.size());
    backup.count = static_cast<uint16_t>(unplaced.unreached_from.size());
    sink.unreached_from.insert(sink.unreached_from.end(), unplaced.unreached_from.begin(),
                               unplaced.unreached_from.end());
    ClearUnplaced(worker.unplaced);
    return backup;
  }
  backup.placed = true;
  backup.total_us = scratch.total_us;
  backup.within_budget = scratch.total_us <= chain.budget_us;
  backup.first = static_cast<uint32_t>(sink.changed.size());
  if (primary_replicas && link_or_srlg && !paths.AnyMovesUntouchedPaths()) {
    // The primary's hops, each the same unless the failure may be on its
    // paths: only those are looked at (the loop below, for them alone).
    for (uint32_t calls = on_path & all_calls; calls != 0; calls &= calls - 1) {
      const int call = std::countr_zero(calls);
      const LayerCall& made = was[call];
      if (made.from == made.replica) continue;
      const auto [there, back] = path_ids(made.from, made.replica);
      if (there == made.path_there && back == made.path_back) continue;
      sink.changed.push_back({call, made.replica, there, back, rtt_us[call]});
      ++backup.count;
    }
    return backup;
  }
  for (int call = 0; call < chain.calls; ++call) {
    const int from = primary_replicas ? was[call].from : scratch.from[call];
    const int replica = primary_replicas ? was[call].replica : scratch.replica[call];
    const bool same_hop = replica == was[call].replica && from == was[call].from;
    const bool maybe_on_path = call >= 32 || ((on_path >> call) & 1) != 0;
    if (same_hop) {
      // The same hop keeps its paths unless the failure is on them.
      if (from == replica) continue;
      if (!maybe_on_path && !paths.MovesUntouchedPaths(from) && !paths.MovesUntouchedPaths(replica)) continue;
    }
    int there = 0, back = 0;
    if (from != replica) std::tie(there, back) = path_ids(from, replica);
    if (replica == was[call].replica && there == was[call].path_there && back == was[call].path_back) continue;
    // The round trip: the search's, or the bound's (the primary's where the
    // failure is not on its paths).
    const uint64_t rtt = !primary_replicas ? scratch.rtt_us[call] : maybe_on_path ? rtt_us[call] : was[call].rtt_us;
    sink.changed.push_back({call, replica, there, back, rtt});
    ++backup.count;
  }
  return backup;
}

bool ChainBackupPlacer::Search(BackupWorker& worker, int c, const ChainFailure& failure, const Exclusion& exclusion,
                               uint64_t bound_us, FailureDistances& paths) const {
  const LayerChain& chain = heads_[c];
  const LayerCall* calls = &layer_calls_[chain.calls_at];
  const LayerEntry* unfailed = &layer_entries_[chain.entries_at];
  if (!chain.pinned && blocks_.usable()) {
    worker.round_trips.Start(blocks_, paths, ids_.Id(failure), exclusion.facility, worker.epoch);
    return SolveLayersOnBlocks(snapshot_, chain, calls, unfailed, exclusion.facility, worker.round_trips,
                               worker.scratch, worker.unplaced);
  }
  return SolveLayersAfter(snapshot_, chain, calls, unfailed, chain.pinned ? &snapshot_.chains()[c] : nullptr,
                          exclusion.facility, bound_us, paths, worker.scratch, worker.unplaced);
}

template <typename Placed>
void ChainBackupPlacer::PlaceFailure(BackupWorker& worker, int id, const std::vector<BackupTask>& tasks,
                                     BackupSink& sink, Placed&& placed) const {
  if (tasks.empty()) return;
  if (++worker.epoch == 0) {  // wrapped: forget every hop and block
    std::fill(worker.hops.begin(), worker.hops.end(), HopUnderFailure{});
    std::fill(worker.paths.begin(), worker.paths.end(), PathUnderFailure{});
    worker.round_trips.Forget();
    worker.epoch = 1;
  }
  const ChainFailure failure = ids_.At(id);
  const Exclusion exclusion = failure.AsExclusion();
  for (size_t i = 0; i < tasks.size(); ++i) {
    if (i + kHeadsAhead < tasks.size()) PrefetchHead(tasks[i + kHeadsAhead].chain);
    if (i + kLayersAhead < tasks.size()) PrefetchLayers(tasks[i + kLayersAhead].chain);
    placed(tasks[i], PlaceBackup(worker, tasks[i].chain, failure, exclusion, tasks[i].on_path, sink));
  }
}

int ChainBackupPlacer::PlaceBackups(const std::vector<std::vector<BackupTask>>& tasks, ChainPlan& plan, int threads,
                                    const BackupAudit& audit) {
  // Every chain's layers kept first, on this thread (the workers only read
  // them): the callers keep them, this holds should one not have.
  size_t total = 0;
  for (const auto& failure_tasks : tasks) {
    total += failure_tasks.size();
    for (const BackupTask& task : failure_tasks) {
      if (heads_[task.chain].calls_at == LayerChain::kNone) KeepLayers(task.chain, plan, false);
    }
  }
  main_.hops.resize(hop_ids_.size());
  main_.paths.resize(PathMemoSize());
  // The blocks the chains' calls are made over, worked out before any
  // worker reads them (and before the helpers copy the trees built here).
  if (!main_.unpinned) main_.unpinned = std::make_unique<FailureDistances>(snapshot_, nullptr);
  blocks_.Prepare(*main_.unpinned, threads);
  threads = static_cast<int>(std::clamp<size_t>(total / kBackupsPerThread, 1, static_cast<size_t>(threads)));
  if (threads == 1) {
    BackupSink sink{plan.changed, plan.unreached_from, plan.paths};
    for (int id = 0; id < static_cast<int>(tasks.size()); ++id) {
      PlaceFailure(main_, id, tasks[id], sink, [&](const BackupTask& task, const ChainPlan::CompactBackup& backup) {
        const ChainPlan::CompactBackup& stored = Store(plan, task.slot, backup);
        if (audit) audit(stored, plan.dependencies);
      });
    }
    return 1;
  }
  // Runs of failures, about a backup count each, taken in turn by the
  // threads: a failure's backups stay on one (its repairs are made once).
  struct Run {
    int begin = 0, end = 0;
    int worker = -1;
    int paths_begin = 0, paths_end = 0;  // the ids its worker's table gave paths first met in it
    // Those paths' links, copied out of the table (which its worker goes
    // on growing) for whichever thread merges them: path i's are
    // new_links[new_begin[i] .. new_begin[i + 1]).
    std::vector<int> new_links;
    std::vector<uint32_t> new_begin;
    // Its backups' changed hops and unreached facilities, which their
    // `first` counts from until they are written into the plan's.
    std::vector<ChainPlan::ChangedHop> changed;
    std::vector<int> unreached_from;
    std::vector<FacilityDependency> dependencies;  // found by the audit
    // Where its output goes in the plan: its appended backups (known from
    // the tasks), its hops and facilities (after the placing).
    size_t appended_at = 0, changed_at = 0, unreached_at = 0;
  };
  std::vector<Run> runs;
  const size_t per_run = std::max<size_t>(total / (static_cast<size_t>(threads) * 16), 1);
  size_t in_run = 0;
  for (int id = 0; id < static_cast<int>(tasks.size()); ++id) {
    if (runs.empty() || in_run >= per_run) {
      runs.emplace_back().begin = id;
      in_run = 0;
    }
    runs.back().end = id + 1;
    in_run += tasks[id].size();
  }
  size_t appended_at = plan.backups.size();
  for (Run& run : runs) {
    size_t backups = 0;
    run.appended_at = appended_at;
    for (int id = run.begin; id < run.end; ++id) {
      backups += tasks[id].size();
      for (const BackupTask& task : tasks[id]) appended_at += task.slot == BackupTask::kAppend ? 1 : 0;
    }
    run.changed.reserve(2 * backups);  // as PlanAll's storage
  }
  plan.backups.resize(appended_at);
  std::vector<std::unique_ptr<BackupWorker>> helpers;
  for (int t = 1; t < threads; ++t) {
    BackupWorker& helper = *helpers.emplace_back(std::make_unique<BackupWorker>());
    helper.hops.resize(hop_ids_.size());
    helper.paths.resize(PathMemoSize());
    // The unfailed trees built here, copied rather than built again.
    if (main_.unpinned) {
      helper.unpinned = std::make_unique<FailureDistances>(snapshot_, nullptr);
      helper.unpinned->CopyUnfailedTrees(*main_.unpinned);
    }
  }
  const int base_paths = plan.paths.size();
  std::vector<ChainPathTable> tables(static_cast<size_t>(threads), plan.paths);
  // Paths new to the plan interned as they first come in failure order,
  // as one thread would have: a run's new paths are its worker's ids from
  // paths_begin, in the order its backups first used them (a path is
  // interned when a changed hop is about to use it), and its backups come
  // in failure order. So runs are merged in order, each once it is placed,
  // by whichever thread finds it so (while the others place the next
  // ones); to_plan[t] maps thread t's ids from base_paths to the plan's.
  std::vector<std::vector<int>> to_plan(static_cast<size_t>(threads));
  std::vector<std::atomic<bool>> placed(runs.size());
  std::mutex merging;  // of the runs, in order: plan.paths, to_plan, merged
  size_t merged = 0;
  auto merge_placed = [&] {
    for (; merged < runs.size() && placed[merged].load(std::memory_order_acquire); ++merged) {
      const Run& run = runs[merged];
      std::vector<int>& ids = to_plan[static_cast<size_t>(run.worker)];
      for (size_t i = 0; i + 1 < run.new_begin.size(); ++i) {
        const int* links = run.new_links.data();
        ids.push_back(plan.paths.Intern(std::span<const int>(links + run.new_begin[i], links + run.new_begin[i + 1])));
      }
    }
  };
  // Runs are taken in turn by whichever thread is free: their backups are
  // placed (each written at its place, and audited) and their new paths
  // merged, then their hops written into the plan's after the runs before
  // them.
  std::atomic<size_t> next_run{0};
  OnThreads(threads, [&](int t) {
    BackupWorker& worker = t == 0 ? main_ : *helpers[static_cast<size_t>(t) - 1];
    ChainPathTable& table = tables[static_cast<size_t>(t)];
    for (size_t r; (r = next_run++) < runs.size();) {
      Run& run = runs[r];
      run.worker = t;
      run.paths_begin = table.size();
      BackupSink sink{run.changed, run.unreached_from, table};
      size_t appended = run.appended_at;
      for (int id = run.begin; id < run.end; ++id) {
        PlaceFailure(worker, id, tasks[id], sink, [&](const BackupTask& task, const ChainPlan::CompactBackup& backup) {
          const ChainPlan::CompactBackup& stored = plan.backups[PlaceOf(task, appended)] = backup;
          if (audit) audit(stored, run.dependencies);
        });
      }
      run.paths_end = table.size();
      run.new_begin.push_back(0);
      for (int path = run.paths_begin; path < run.paths_end; ++path) {
        const std::span<const int> links = table.Links(path);
        run.new_links.insert(run.new_links.end(), links.begin(), links.end());
        run.new_begin.push_back(static_cast<uint32_t>(run.new_links.size()));
      }
      placed[r].store(true, std::memory_order_release);
      // Else the thread merging finds it, or the last merge below does.
      if (std::unique_lock<std::mutex> lock(merging, std::try_to_lock); lock.owns_lock()) merge_placed();
    }
  });
  merge_placed();  // the runs placed last
  size_t changed_at = plan.changed.size(), unreached_at = plan.unreached_from.size();
  for (Run& run : runs) {
    run.changed_at = changed_at;
    run.unreached_at = unreached_at;
    changed_at += run.changed.size();
    unreached_at += run.unreached_from.size();
  }
  plan.changed.resize(changed_at);
  plan.unreached_from.resize(unreached_at);
  next_run = 0;
  OnThreads(threads, [&](int) {
    for (size_t r; (r = next_run++) < runs.size();) {
      Run& run = runs[r];
      const std::vector<int>& ids = to_plan[static_cast<size_t>(run.worker)];
      auto path_in_plan = [&](int path) { return path < base_paths ? path : ids[static_cast<size_t>(path - base_paths)]; };
      for (size_t i = 0; i < run.changed.size(); ++i) {
        ChainPlan::ChangedHop hop = run.changed[i];
        hop.path_there = path_in_plan(hop.path_there);
        hop.path_back = path_in_plan(hop.path_back);
        plan.changed[run.changed_at + i] = hop;
      }
      std::copy(run.unreached_from.begin(), run.unreached_from.end(),
                plan.unreached_from.begin() + static_cast<std::ptrdiff_t>(run.unreached_at));
      size_t appended = run.appended_at;
      for (int id = run.begin; id < run.end; ++id) {
        for (const BackupTask& task : tasks[id]) {
          ChainPlan::CompactBackup& backup = plan.backups[PlaceOf(task, appended)];
          backup.first += static_cast<uint32_t>(backup.placed ? run.changed_at : run.unreached_at);
        }
      }
    }
  });
  for (const Run& run : runs) {
    plan.dependencies.insert(plan.dependencies.end(), run.dependencies.begin(), run.dependencies.end());
  }
  return threads;
}

const std::vector<ChainBackupPlacer::TouchedFailure>& ChainBackupPlacer::Touched(const Chain& chain, const ChainPlacement& primary) {
  touched_.clear();
  ++stamp_;
  auto add = [&](int id, uint32_t calls) {
    if (mark_[id] != stamp_) {
      mark_[id] = stamp_;
      position_[id] = static_cast<int>(touched_.size());
      touched_.push_back({id, 0});
    }
    touched_[position_[id]].on_path |= calls;
  };
  auto add_facility = [&](int facility, uint32_t calls) {
    if (facility != chain.origin) add(ids_.Id({ChainFailure::Kind::kFacility, facility}), calls);
  };
  for (size_t call = 0; call < primary.hops.size(); ++call) {
    const ChainHop& hop = primary.hops[call];
    const uint32_t bit = call < 32 ? uint32_t{1} << call : ~uint32_t{0};
    add_facility(hop.replica, 0);
    for (const auto* links : {&hop.links_there, &hop.links_back}) {
      // A path: each link leaves the facility the one before it reached.
      if (!links->empty()) add_facility(snapshot_.link_src(links->front()), bit);
      for (int link : *links) {
        add_facility(snapshot_.link_dst(link), bit);
        add(ids_.Id({ChainFailure::Kind::kLink, link}), bit);
        for (int srlg : snapshot_.link_srlgs(link)) add(ids_.Id({ChainFailure::Kind::kSrlg, srlg}), bit);
      }
    }
  }
  return touched_;
}

size_t ChainBackupPlacer::PathMemoSize() const {
  return facilities_ <= kPathMemoFacilities ? facilities_ * facilities_ : 0;
}

FailureDistances& ChainBackupPlacer::MakePathsFor(BackupWorker& worker, int c) const {
  const Chain* pins = heads_[c].pinned ? &snapshot_.chains()[c] : nullptr;
  if (pins == nullptr || pins->allowed.empty()) {
    if (!worker.unpinned) worker.unpinned = std::make_unique<FailureDistances>(snapshot_, nullptr);
    return *worker.unpinned;
  }
  auto [it, inserted] = worker.pinned.try_emplace(pins->allowed);
  if (inserted) it->second = std::make_unique<FailureDistances>(snapshot_, &it->first);
  return *it->second;
}

}  // namespace geodesic::pathcomp::internal
