#include "pathcomp/solver/chain_placer.h"

#include <algorithm>
#include <atomic>
#include <future>

#include "pathcomp/solver/internal/chain_backup_placer.h"
#include "pathcomp/solver/internal/chain_layers.h"
#include "pathcomp/solver/internal/huge_pages.h"
#include "pathcomp/solver/internal/on_threads.h"
#include "pathcomp/solver/transit_audit.h"

namespace geodesic::pathcomp {
namespace {

using internal::BackupTask;
using internal::ChainBackupPlacer;
using internal::ChainView;
using internal::FullPlacement;
using internal::LayerScratch;
using internal::SolveLayers;

bool SameExclusion(const Exclusion& a, const Exclusion& b) {
  return a.link == b.link && a.srlg == b.srlg && a.facility == b.facility && a.allowed == b.allowed;
}

// The single-facility dependency a facility backup reveals, if any: its
// chain cannot run without the facility, or not within its budget.
void AddChainDependency(const Snapshot& snapshot, const ChainPlan& plan, const ChainPlan::CompactBackup& backup,
                        std::vector<FacilityDependency>& dependencies) {
  if (backup.failure.kind != ChainFailure::Kind::kFacility) return;
  if (backup.placed && (backup.within_budget || !plan.primary[backup.chain].within_budget)) return;
  const Chain& chain = snapshot.chains()[backup.chain];
  const int facility = backup.failure.index;
  if (!backup.placed) {
    const int call = backup.failed_call;
    FacilityDependency dependency{.workload = chain.workload, .facility = facility,
                                  .why = FacilityDependency::Why::kOnlyTransitToService,
                                  .service = chain.services[call]};
    if (backup.why == ChainUnplacedWhy::kOneReplica) {
      dependency.why = FacilityDependency::Why::kOneReplica;
    } else if (backup.why == ChainUnplacedWhy::kPinnedToFailed) {
      dependency.why = FacilityDependency::Why::kPinnedTo;
    } else {
      dependency.from = plan.primary_calls[plan.call_begin[backup.chain] + call].from;
    }
    dependencies.push_back(dependency);
  } else {
    dependencies.push_back({.workload = chain.workload, .facility = facility,
                            .why = FacilityDependency::Why::kOverBudget, .total_us = backup.total_us,
                            .budget_us = chain.budget_us});
  }
}

// The elephant flows' part of the audit (transit facilities), which depends
// on the snapshot alone: with more than one thread, computed on another
// beside the chains' primaries (which run on one) from the start.
std::future<std::vector<FacilityDependency>> StartElephantAudit(const Snapshot& snapshot, int threads) {
  return std::async(threads > 1 ? std::launch::async : std::launch::deferred,
                    [&snapshot] { return ElephantTransitDependencies(snapshot); });
}

// The audit's last step, after the chains' dependencies: the elephant
// flows', then everything in a stable order.
void CompleteAudit(std::future<std::vector<FacilityDependency>>& elephant_audit,
                   std::vector<FacilityDependency>& dependencies) {
  const std::vector<FacilityDependency> elephants = elephant_audit.get();
  dependencies.insert(dependencies.end(), elephants.begin(), elephants.end());
  std::sort(dependencies.begin(), dependencies.end(), DependencyBefore);
}

// A plan's last steps: the backups of `tasks` placed (on up to `threads`
// threads) into `plan` with the chains' part of the audit, appended to
// plan.dependencies; then the audit completed (the elephant flows' part
// joined, all sorted) beside the plan's index by chain. Returns the threads
// the backups were placed on.
int PlaceAndFinish(const Snapshot& snapshot, ChainBackupPlacer& shared,
                   const std::vector<std::vector<BackupTask>>& tasks, int threads,
                   std::future<std::vector<FacilityDependency>>& elephant_audit, ChainPlan& plan) {
  const int used = shared.PlaceBackups(
      tasks, plan, threads,
      [&](const ChainPlan::CompactBackup& backup, std::vector<FacilityDependency>& dependencies) {
        AddChainDependency(snapshot, plan, backup, dependencies);
      });
  auto audit = std::async(threads > 1 ? std::launch::async : std::launch::deferred,
                          [&] { CompleteAudit(elephant_audit, plan.dependencies); });
  plan.Finish(threads);
  audit.get();
  return used;
}

// Whether which facilities reach which is unchanged under a failure when
// the links `down` went down: each still has another way between its ends
// under the failure (or is out under it anyway). Remembered per failure id.
class ReachabilityKept {
 public:
  ReachabilityKept(const Snapshot& now, const Snapshot& before, const internal::FailureIds& ids,
                   const std::vector<int>& down)
      : now_(now), before_(before), ids_(ids), down_(down), kept_(ids.size(), -1), seen_(now.facility_count()) {}

  bool operator()(int id) {
    if (kept_[id] >= 0) return kept_[id] == 1;
    const Exclusion failure = ids_.At(id).AsExclusion();
    bool kept = true;
    for (int link : down_) {
      if (failure.link == link || failure.facility == before_.link_src(link) ||
          failure.facility == before_.link_dst(link)) {
        continue;  // out under the failure anyway
      }
      const auto srlgs = before_.link_srlgs(link);
      if (failure.srlg >= 0 && std::find(srlgs.begin(), srlgs.end(), failure.srlg) != srlgs.end()) continue;
      std::fill(seen_.begin(), seen_.end(), 0);
      stack_.assign(1, now_.link_src(link));
      seen_[stack_[0]] = 1;
      while (!stack_.empty() && !seen_[now_.link_dst(link)]) {
        const int at = stack_.back();
        stack_.pop_back();
        for (int out : now_.out_links(at)) {
          const int next = now_.link_dst(out);
          if (seen_[next] || failure.Excludes(now_, out)) continue;
          seen_[next] = 1;
          stack_.push_back(next);
        }
      }
      if (!seen_[now_.link_dst(link)]) {
        kept = false;
        break;
      }
    }
    kept_[id] = kept ? 1 : 0;
    return kept;
  }

 private:
  const Snapshot& now_;
  const Snapshot& before_;
  const internal::FailureIds& ids_;
  const std::vector<int>& down_;
  std::vector<int8_t> kept_;  // per failure id: -1 not known yet
  std::vector<char> seen_;
  std::vector<int> stack_;
};

}  // namespace

ChainPlacer::ChainPlacer(const Snapshot& snapshot, int threads)
    : snapshot_(snapshot), threads_(std::max(threads, 1)), from_(snapshot.facility_count()) {}

ChainPlacer::~ChainPlacer() = default;

void ChainPlacer::SetFailure(const Exclusion& failure) {
  if (SameExclusion(failure, failure_)) return;
  failure_ = failure;
  for (auto& paths : from_) paths.reset();
}

const ShortestPaths& ChainPlacer::From(int source) {
  if (!from_[source]) {
    from_[source] = std::make_unique<ShortestPaths>(ShortestPaths::Run(snapshot_, source, failure_));
  }
  return *from_[source];
}

ChainPlacement ChainPlacer::Place(const Chain& chain, const Exclusion& failure_only) {
  // A pinned chain keeps to its facility set, also when it fails over.
  Exclusion failure = failure_only;
  if (!chain.allowed.empty()) failure.allowed = &chain.allowed;
  SetFailure(failure);
  LayerScratch scratch;
  ChainPlacement result;
  if (!SolveLayers(snapshot_, ChainView::Of(chain), failure.facility,
                   [this](int a) { return From(a).distance_us.data(); }, scratch,
                   result)) {
    return result;
  }
  return FullPlacement(snapshot_, chain, scratch, [this](int a, int b) { return From(a).LinksTo(b); });
}

ChainBackupPlacer& ChainPlacer::shared() {
  if (!shared_) shared_ = std::make_unique<ChainBackupPlacer>(snapshot_);
  return *shared_;
}

std::vector<ChainPlacement> ChainPlacer::PlacePrimaries() {
  const int chain_count = static_cast<int>(snapshot_.chains().size());
  ChainBackupPlacer& shared = this->shared();
  std::vector<ChainPlacement> primaries;
  primaries.reserve(static_cast<size_t>(chain_count));
  for (int c = 0; c < chain_count; ++c) primaries.push_back(shared.PlacePrimary(c));
  return primaries;
}

ChainPlan ChainPlacer::PlanAll() {
  const auto& chains = snapshot_.chains();
  const int chain_count = static_cast<int>(chains.size());
  ChainBackupPlacer& shared = this->shared();
  auto elephant_audit = StartElephantAudit(snapshot_, threads_);
  shared.BuildTrees(threads_);
  ChainPlan plan;
  plan.primary.reserve(chains.size());
  plan.call_begin.reserve(chains.size() + 1);

  // Primaries; and, following them on another thread when there is one,
  // which chains each failure touches (in chain order either way).
  std::vector<std::vector<BackupTask>> touched(shared.ids().size());
  std::atomic<int> primaries{0};  // chains whose primary the plan has; -1: the loop gave up (threw)
  auto file_touched = std::async(threads_ > 1 ? std::launch::async : std::launch::deferred, [&] {
    size_t backups = 0;
    for (int c = 0, have = 0; c < chain_count; ++c) {
      while (have <= c) {
        if (have < 0) return backups;
        primaries.wait(have, std::memory_order_acquire);
        have = primaries.load(std::memory_order_acquire);
      }
      const ChainPlacement& primary = plan.primary[c];
      if (!primary.placed) continue;
      const auto& ids = shared.Touched(chains[c], primary);
      for (const auto& [id, on_path] : ids) touched[id].push_back({.chain = c, .on_path = on_path});
      backups += ids.size();
    }
    return backups;
  });
  constexpr int kNotifyEvery = 64;  // chains: waking the other thread for each costs more than it saves
  try {
    for (int c = 0; c < chain_count; ++c) {
      ChainPlacement primary = shared.PlacePrimary(c);
      const bool placed = primary.placed;
      plan.AddPrimary(chains[c], std::move(primary));  // plan.primary does not move: reserved
      if (placed) shared.KeepLayers(c, plan, true);
      primaries.store(c + 1, std::memory_order_release);
      if ((c + 1) % kNotifyEvery == 0 || c + 1 == chain_count) primaries.notify_one();
    }
  } catch (...) {  // std::bad_alloc: the filing stops before the future's destructor waits for it
    primaries.store(-1, std::memory_order_release);
    primaries.notify_one();
    throw;
  }
  const size_t backups = file_touched.get();
  // Failure by failure, in ChainFailure order.
  internal::ReserveInHugePages(plan.backups, backups + ChainPlan::BackupRoom(backups));
  internal::ReserveInHugePages(plan.changed, 2 * backups);
  backup_threads_ = PlaceAndFinish(snapshot_, shared, touched, threads_, elephant_audit, plan);
  return plan;
}

ChainPlan ChainPlacer::Replan(ChainPlan previous, const Snapshot& before) {
  const auto& chains = snapshot_.chains();
  const int chain_count = static_cast<int>(chains.size());
  if (!snapshot_.SharesInventory(before) || previous.primary.size() != chains.size() ||
      previous.call_begin.size() != chains.size() + 1 || previous.primary_calls.size() != previous.call_begin.back()) {
    return PlanAll();
  }
  // The links whose change matters to paths: each must have got worse.
  std::vector<char> worse(snapshot_.link_count(), 0);
  bool changed = false;
  for (int link = 0; link < snapshot_.link_count(); ++link) {
    const LinkState& was = before.link_state(link);
    const LinkState& now = snapshot_.link_state(link);
    if (was.usable == now.usable && (!now.usable || was.cost_us == now.cost_us)) continue;
    if (now.usable && (!was.usable || now.cost_us < was.cost_us)) return PlanAll();  // better: anything may move
    worse[link] = 1;
    changed = true;
  }
  if (!changed) {
    backup_threads_ = 0;
    return previous;
  }
  auto elephant_audit = StartElephantAudit(snapshot_, threads_);
  // Which of the previous plan's paths use a changed link.
  std::vector<char> path_worse(previous.paths.size(), 0);
  for (int path = 0; path < previous.paths.size(); ++path) {
    for (int link : previous.paths.Links(path)) {
      if (worse[link]) {
        path_worse[path] = 1;
        break;
      }
    }
  }

  ChainBackupPlacer& shared = this->shared();
  ChainPlan plan = std::move(previous);
  // Chains placed again whole (their primary used a changed link, or was
  // not placed): their backups are dropped, and the failures their new
  // primaries touch get new ones.
  std::vector<std::vector<BackupTask>> touched(shared.ids().size());
  std::vector<char> again(chain_count, 0);
  // The dropped backups' places, which the new ones take (in order, so that
  // a chain's stay in failure order) before any is appended: the plan's
  // storage does not grow (and move) for a chain placed anew.
  std::vector<uint32_t> free_slots;
  for (int c = 0; c < chain_count; ++c) {
    bool redo = !plan.primary[c].placed;
    for (uint32_t k = plan.call_begin[c]; !redo && k < plan.call_begin[c + 1]; ++k) {
      redo = path_worse[plan.primary_calls[k].path_there] || path_worse[plan.primary_calls[k].path_back];
    }
    if (!redo) continue;
    again[c] = 1;
    for (int i = 0; i < plan.backup_count(c); ++i) free_slots.push_back(plan.backup_position(c, i));
    plan.DropBackups(c);
    ChainPlacement primary = shared.PlacePrimary(c);
    const bool placed = primary.placed;
    if (placed) {
      for (const auto& [id, on_path] : shared.Touched(chains[c], primary)) {
        touched[id].push_back({.chain = c, .on_path = on_path});
      }
    }
    plan.SetPrimary(c, std::move(primary));
    if (placed) shared.KeepLayers(c, plan, true);
  }
  // Links that went down. A backup that could not be placed stays as it is
  // when every one of them has another way between its ends under the
  // backup's failure: which facilities reach which is then unchanged, and
  // that is all an unplaced answer (the first call without a reachable
  // replica, the facilities it is called from) depends on.
  std::vector<int> down;
  for (int link = 0; link < snapshot_.link_count(); ++link) {
    if (worse[link] && !snapshot_.link_state(link).usable) down.push_back(link);
  }

  // The other chains' backups placed again where they are: those not
  // placed (unless reachability is kept), and those whose changed hops use
  // a changed link (their other hops are the primary's, which does not).
  // Read in storage order (the backups and their changed hops front to
  // back: chain by chain, it was a cache miss per backup), in parts on the
  // placer's threads. The audit of those that stay is taken as they are
  // read; the others' as placed.
  struct Scan {
    std::vector<std::vector<uint32_t>> redo;  // per failure id: positions, ascending
    std::vector<char> layers_needed;          // per chain
    std::vector<FacilityDependency> kept_dependencies;
  };
  constexpr size_t kBackupsPerScan = 4096;  // fewer are read before a thread would start
  const size_t stored = plan.backups.size();
  std::vector<Scan> scans(std::clamp<size_t>(stored / kBackupsPerScan, 1, static_cast<size_t>(threads_)));
  internal::OnThreads(static_cast<int>(scans.size()), [&](int t) {
    Scan& scan = scans[static_cast<size_t>(t)];
    scan.redo.resize(shared.ids().size());
    scan.layers_needed.assign(chain_count, 0);
    ReachabilityKept reachability_kept(snapshot_, before, shared.ids(), down);
    const size_t begin = stored * t / scans.size(), end = stored * (t + 1) / scans.size();
    for (size_t position = begin; position < end; ++position) {
      const ChainPlan::CompactBackup& backup = plan.backups[position];
      if (backup.chain < 0 || again[backup.chain]) continue;  // dropped
      const int id = shared.ids().Id(backup.failure);
      bool place = !backup.placed && (!chains[backup.chain].allowed.empty() || !reachability_kept(id));
      for (uint32_t k = backup.first; backup.placed && !place && k < backup.first + backup.count; ++k) {
        place = path_worse[plan.changed[k].path_there] || path_worse[plan.changed[k].path_back];
      }
      if (!place) {
        AddChainDependency(snapshot_, plan, backup, scan.kept_dependencies);
        continue;
      }
      scan.redo[id].push_back(static_cast<uint32_t>(position));
      scan.layers_needed[backup.chain] = 1;
    }
  });
  std::vector<std::vector<uint32_t>> redo = std::move(scans[0].redo);
  std::vector<char> layers_needed = std::move(scans[0].layers_needed);
  std::vector<FacilityDependency> kept_dependencies = std::move(scans[0].kept_dependencies);
  for (size_t t = 1; t < scans.size(); ++t) {
    for (size_t id = 0; id < redo.size(); ++id) {
      redo[id].insert(redo[id].end(), scans[t].redo[id].begin(), scans[t].redo[id].end());
    }
    for (int c = 0; c < chain_count; ++c) layers_needed[c] |= scans[t].layers_needed[c];
    kept_dependencies.insert(kept_dependencies.end(), scans[t].kept_dependencies.begin(),
                             scans[t].kept_dependencies.end());
  }
  for (int c = 0; c < chain_count; ++c) {
    if (layers_needed[c]) shared.KeepLayers(c, plan, false);  // before the failures, which it would interleave with
  }
  // Per failure, those placed again where they are, then the new ones,
  // where the dropped ones were in order, then appended.
  std::sort(free_slots.begin(), free_slots.end());
  size_t next_free = 0;
  std::vector<std::vector<BackupTask>> tasks(shared.ids().size());
  for (int id = 0; id < static_cast<int>(tasks.size()); ++id) {
    for (uint32_t position : redo[id]) {
      tasks[id].push_back({.chain = plan.backups[position].chain, .on_path = ~uint32_t{0}, .slot = position});
    }
    for (BackupTask task : touched[id]) {
      if (next_free < free_slots.size()) task.slot = free_slots[next_free++];
      tasks[id].push_back(task);
    }
  }
  plan.dependencies = std::move(kept_dependencies);
  backup_threads_ = PlaceAndFinish(snapshot_, shared, tasks, threads_, elephant_audit, plan);
  return plan;
}

}  // namespace geodesic::pathcomp
