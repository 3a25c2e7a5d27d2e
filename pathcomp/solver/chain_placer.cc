#include "pathcomp/solver/chain_placer.h"

#include <algorithm>
#include <map>

#include "pathcomp/solver/failure_distances.h"
#include "pathcomp/solver/transit_audit.h"

namespace geodesic::pathcomp {
namespace {

bool SameExclusion(const Exclusion& a, const Exclusion& b) {
  return a.link == b.link && a.srlg == b.srlg && a.facility == b.facility && a.allowed == b.allowed;
}

// One entry of the layered graph: a replica a call can run at, the least
// latency sum up to and including the call, the entry of the previous layer
// it is called from (its position there), and the distances from the
// replica's facility under the failure (a row by destination).
struct Entry {
  int facility;
  uint64_t total_us;
  int from;
  const uint64_t* row;
};

// The layers of one placement, one after another, and the answer they lead
// to; reused between placements.
struct LayerScratch {
  std::vector<Entry> entries;
  std::vector<size_t> begin;  // layer i: entries[begin[i] .. begin[i + 1])
  // When placed, per call: the replica, the facility it is called from, the
  // round trip between them.
  std::vector<int> replica, from;
  std::vector<uint64_t> rtt_us;
  uint64_t total_us = 0;
};

// The least latency-sum placement of `chain` avoiding `failed_facility`
// (-1: none), with one-way distances from `row(a)` (distances from a by
// destination, which must already avoid the failure and keep to the chain's
// pin mask; a failed facility's entry is never read). Fills `scratch`'s
// answer and returns true when placed; otherwise fills why it is not in
// `unplaced`. Shared by Place() and the plans, so both place alike.
template <typename RowFn>
bool SolveLayers(const Snapshot& snapshot, const Chain& chain, int failed_facility, RowFn&& row,
                 LayerScratch& scratch, ChainPlacement& unplaced) {
  if (failed_facility == chain.origin) {
    unplaced.failed_call = 0;
    unplaced.why = ChainUnplacedWhy::kOriginDown;
    unplaced.failed_facility = chain.origin;
    return false;
  }
  std::vector<Entry>& entries = scratch.entries;
  std::vector<size_t>& begin = scratch.begin;
  entries.clear();
  begin.clear();
  begin.push_back(0);
  entries.push_back(Entry{chain.origin, 0, -1, row(chain.origin)});
  begin.push_back(1);
  for (size_t call = 0; call < chain.services.size(); ++call) {
    const int service = chain.services[call];
    const ServiceReplicas& replicas = snapshot.service(service);
    const size_t previous = begin[call];
    const int previous_size = static_cast<int>(begin[call + 1] - previous);
    for (int replica : replicas.facilities) {
      if (replica == failed_facility) continue;
      if (!chain.pinned_replicas.empty() && replica != chain.pinned_replicas[call]) continue;
      if (!chain.allowed.empty() && !chain.allowed[replica]) continue;
      const uint64_t* replica_row = row(replica);
      Entry best{replica, kUnreachable, -1, replica_row};
      for (int j = 0; j < previous_size; ++j) {
        const Entry& from = entries[previous + j];
        uint64_t network = 0;
        if (from.facility != replica) {
          const uint64_t there = from.row[replica];
          const uint64_t back = replica_row[from.facility];
          if (there == kUnreachable || back == kUnreachable) continue;
          network = there + back;
        }
        const uint64_t total = from.total_us + network;
        if (total < best.total_us) {  // ties: lowest index
          best.total_us = total;
          best.from = j;
        }
      }
      if (best.from < 0) continue;
      best.total_us += replicas.service_time_us;
      entries.push_back(best);
    }
    if (entries.size() == begin.back()) {
      unplaced.failed_call = static_cast<int>(call);
      if (!chain.pinned_replicas.empty() && chain.pinned_replicas[call] == failed_facility) {
        unplaced.why = ChainUnplacedWhy::kPinnedToFailed;
        unplaced.failed_facility = failed_facility;
      } else if (!chain.pinned_replicas.empty() || !chain.allowed.empty()) {
        unplaced.why = ChainUnplacedWhy::kPinBlocks;
      } else if (replicas.facilities.empty()) {
        unplaced.why = ChainUnplacedWhy::kNoKnownReplica;
      } else if (failed_facility >= 0 &&
                 std::all_of(replicas.facilities.begin(), replicas.facilities.end(),
                             [&](int f) { return f == failed_facility; })) {
        unplaced.why = ChainUnplacedWhy::kOneReplica;
        unplaced.failed_facility = failed_facility;
      } else {
        unplaced.why = ChainUnplacedWhy::kUnreachable;
        for (int j = 0; j < previous_size; ++j) unplaced.unreached_from.push_back(entries[previous + j].facility);
      }
      return false;
    }
    begin.push_back(entries.size());
  }

  // The best last entry, then back through the layers.
  const size_t calls = chain.services.size();
  const size_t last = begin[calls];
  const int last_size = static_cast<int>(begin[calls + 1] - last);
  int at = 0;
  for (int j = 1; j < last_size; ++j) {
    if (entries[last + j].total_us < entries[last + at].total_us) at = j;
  }
  scratch.total_us = entries[last + at].total_us;
  scratch.replica.resize(calls);
  scratch.from.resize(calls);
  scratch.rtt_us.resize(calls);
  for (size_t call = calls; call-- > 0;) {
    const Entry& entry = entries[begin[call + 1] + at];
    const Entry& from = entries[begin[call] + entry.from];
    scratch.replica[call] = entry.facility;
    scratch.from[call] = from.facility;
    scratch.rtt_us[call] =
        entry.total_us - snapshot.service(chain.services[call]).service_time_us - from.total_us;
    at = entry.from;
  }
  return true;
}

// The placement SolveLayers found, whole, with paths from `links(a, b)`.
template <typename LinksFn>
ChainPlacement FullPlacement(const Snapshot& snapshot, const Chain& chain, const LayerScratch& scratch,
                             LinksFn&& links) {
  ChainPlacement result;
  result.placed = true;
  result.total_us = scratch.total_us;
  result.within_budget = result.total_us <= chain.budget_us;
  result.hops.resize(chain.services.size());
  for (size_t call = 0; call < chain.services.size(); ++call) {
    ChainHop& hop = result.hops[call];
    hop.service = chain.services[call];
    hop.replica = scratch.replica[call];
    hop.service_time_us = snapshot.service(hop.service).service_time_us;
    const int from = scratch.from[call];
    if (from != hop.replica) {
      hop.links_there = links(from, hop.replica);
      hop.links_back = links(hop.replica, from);
      hop.network_rtt_us = scratch.rtt_us[call];
    }
  }
  return result;
}

// The single-facility dependency a facility backup reveals, if any: the chain
// cannot run without the facility, or not within its budget.
void AddChainDependency(const Chain& chain, const ChainPlacement& primary, const ChainPlan::CompactBackup& backup,
                        std::vector<FacilityDependency>& dependencies) {
  if (backup.failure.kind != ChainFailure::Kind::kFacility) return;
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
      dependency.from = call == 0 ? chain.origin : primary.hops[call - 1].replica;
    }
    dependencies.push_back(dependency);
  } else if (primary.within_budget && !backup.within_budget) {
    dependencies.push_back({.workload = chain.workload, .facility = facility,
                            .why = FacilityDependency::Why::kOverBudget, .total_us = backup.total_us,
                            .budget_us = chain.budget_us});
  }
}

// The audit's last step, after the chains' dependencies: the elephant
// flows' (transit facilities), then everything in a stable order.
void CompleteAudit(const Snapshot& snapshot, std::vector<FacilityDependency>& dependencies) {
  std::vector<FacilityDependency> elephants = ElephantTransitDependencies(snapshot);
  dependencies.insert(dependencies.end(), elephants.begin(), elephants.end());
  std::sort(dependencies.begin(), dependencies.end(), DependencyBefore);
}

// Dense numbers for failures, in ChainFailure order: facilities, links, SRLGs.
class FailureIds {
 public:
  explicit FailureIds(const Snapshot& snapshot)
      : facilities_(snapshot.facility_count()), links_(snapshot.link_count()) {
    for (int link = 0; link < links_; ++link) {
      for (int srlg : snapshot.link_srlgs(link)) srlgs_ = std::max(srlgs_, srlg + 1);
    }
  }
  int size() const { return facilities_ + links_ + srlgs_; }
  int Id(const ChainFailure& failure) const {
    switch (failure.kind) {
      case ChainFailure::Kind::kFacility: return failure.index;
      case ChainFailure::Kind::kLink: return facilities_ + failure.index;
      case ChainFailure::Kind::kSrlg: return facilities_ + links_ + failure.index;
    }
    return -1;
  }
  ChainFailure At(int id) const {
    if (id < facilities_) return {ChainFailure::Kind::kFacility, id};
    if (id < facilities_ + links_) return {ChainFailure::Kind::kLink, id - facilities_};
    return {ChainFailure::Kind::kSrlg, id - facilities_ - links_};
  }

 private:
  int facilities_, links_, srlgs_ = 0;
};

}  // namespace

// What the plans share between chains: shortest paths per pin mask, the
// failures' numbering, the layers' scratch.
class ChainPlacer::Shared {
 public:
  explicit Shared(const Snapshot& snapshot)
      : snapshot_(snapshot), ids_(snapshot), mark_(ids_.size(), 0) {}

  const FailureIds& ids() const { return ids_; }

  // The primary placement of chain `c`, whole.
  ChainPlacement PlacePrimary(int c) {
    const Chain& chain = snapshot_.chains()[c];
    FailureDistances& paths = PathsFor(chain);
    paths.SetFailure(Exclusion{});
    ChainPlacement result;
    if (!SolveLayers(snapshot_, chain, -1, [&](int a) { return paths.Row(a); }, scratch_, result)) return result;
    return FullPlacement(snapshot_, chain, scratch_, [&](int a, int b) { return paths.LinksTo(a, b); });
  }

  // The backup of chain `c` (whose primary `plan` has) under `failure`,
  // written compactly into `backup` (its failure aside).
  void PlaceBackup(int c, const ChainFailure& failure, ChainPlan& plan, ChainPlan::CompactBackup& backup) {
    const Chain& chain = snapshot_.chains()[c];
    FailureDistances& paths = PathsFor(chain);
    const Exclusion exclusion = failure.AsExclusion();
    paths.SetFailure(exclusion);
    unplaced_.unreached_from.clear();
    ChainPlan::ChainBackups& of = plan.chains[c];
    if (!SolveLayers(snapshot_, chain, exclusion.facility, [&](int a) { return paths.Row(a); }, scratch_,
                     unplaced_)) {
      backup.placed = false;
      backup.within_budget = false;
      backup.total_us = 0;
      backup.failed_call = static_cast<int16_t>(unplaced_.failed_call);
      backup.why = unplaced_.why;
      backup.failed_facility = unplaced_.failed_facility;
      backup.first = static_cast<uint32_t>(of.unreached_from.size());
      backup.count = static_cast<uint16_t>(unplaced_.unreached_from.size());
      of.unreached_from.insert(of.unreached_from.end(), unplaced_.unreached_from.begin(),
                               unplaced_.unreached_from.end());
      unplaced_ = ChainPlacement();
      return;
    }
    backup.placed = true;
    backup.total_us = scratch_.total_us;
    backup.within_budget = scratch_.total_us <= chain.budget_us;
    backup.failed_call = -1;
    backup.why = ChainUnplacedWhy::kNone;
    backup.failed_facility = -1;
    backup.first = static_cast<uint32_t>(of.changed.size());
    backup.count = 0;
    const std::vector<ChainHop>& primary = plan.primary[c].hops;
    for (size_t call = 0; call < chain.services.size(); ++call) {
      const int from = scratch_.from[call], replica = scratch_.replica[call];
      int there = 0, back = 0;
      if (from != replica) {
        there = paths.PathId(from, replica, plan.paths);
        back = paths.PathId(replica, from, plan.paths);
      }
      if (replica == primary[call].replica && there == of.primary_there[call] && back == of.primary_back[call]) {
        continue;
      }
      of.changed.push_back({static_cast<int>(call), replica, there, back, scratch_.rtt_us[call]});
      ++backup.count;
    }
  }

  // The failures a placed primary touches, as ids, ascending: every facility
  // but the origin, every link, every SRLG of those links.
  const std::vector<int>& Touched(const Chain& chain, const ChainPlacement& primary) {
    touched_.clear();
    ++stamp_;
    auto add = [&](int id) {
      if (mark_[id] == stamp_) return;
      mark_[id] = stamp_;
      touched_.push_back(id);
    };
    auto add_facility = [&](int facility) {
      if (facility != chain.origin) add(ids_.Id({ChainFailure::Kind::kFacility, facility}));
    };
    for (const ChainHop& hop : primary.hops) {
      add_facility(hop.replica);
      for (const auto* links : {&hop.links_there, &hop.links_back}) {
        for (int link : *links) {
          add_facility(snapshot_.link_src(link));
          add_facility(snapshot_.link_dst(link));
          add(ids_.Id({ChainFailure::Kind::kLink, link}));
          for (int srlg : snapshot_.link_srlgs(link)) add(ids_.Id({ChainFailure::Kind::kSrlg, srlg}));
        }
      }
    }
    std::sort(touched_.begin(), touched_.end());
    return touched_;
  }

 private:
  FailureDistances& PathsFor(const Chain& chain) {
    if (chain.allowed.empty()) {
      if (!unpinned_) unpinned_ = std::make_unique<FailureDistances>(snapshot_, nullptr);
      return *unpinned_;
    }
    auto [it, inserted] = pinned_.try_emplace(chain.allowed);
    if (inserted) it->second = std::make_unique<FailureDistances>(snapshot_, &it->first);
    return *it->second;
  }

  const Snapshot& snapshot_;
  FailureIds ids_;
  std::unique_ptr<FailureDistances> unpinned_;
  std::map<std::vector<char>, std::unique_ptr<FailureDistances>> pinned_;  // by mask
  LayerScratch scratch_;
  ChainPlacement unplaced_;
  std::vector<uint32_t> mark_;  // per failure id: == stamp_ when touched by the current chain
  uint32_t stamp_ = 0;
  std::vector<int> touched_;
};

ChainPlacer::ChainPlacer(const Snapshot& snapshot)
    : snapshot_(snapshot), from_(snapshot.facility_count()) {}

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
  if (!SolveLayers(snapshot_, chain, failure.facility, [this](int a) { return From(a).distance_us.data(); }, scratch,
                   result)) {
    return result;
  }
  return FullPlacement(snapshot_, chain, scratch, [this](int a, int b) { return From(a).LinksTo(b); });
}

ChainPlacer::Shared& ChainPlacer::shared() {
  if (!shared_) shared_ = std::make_unique<Shared>(snapshot_);
  return *shared_;
}

ChainPlan ChainPlacer::PlanAll() {
  const auto& chains = snapshot_.chains();
  const int chain_count = static_cast<int>(chains.size());
  Shared& shared = this->shared();
  ChainPlan plan;
  plan.primary.resize(chains.size());
  plan.chains.resize(chains.size());

  // Primaries, and which chains each failure touches.
  std::vector<std::vector<int>> touched(shared.ids().size());
  for (int c = 0; c < chain_count; ++c) {
    plan.SetPrimary(c, shared.PlacePrimary(c));
    const ChainPlacement& primary = plan.primary[c];
    if (!primary.placed) continue;
    const std::vector<int>& ids = shared.Touched(chains[c], primary);
    plan.chains[c].backups.reserve(ids.size());
    for (int id : ids) touched[id].push_back(c);
  }
  // One failure at a time, in ChainFailure order, so every chain's backups
  // come out ordered by failure.
  for (int id = 0; id < static_cast<int>(touched.size()); ++id) {
    if (touched[id].empty()) continue;
    const ChainFailure failure = shared.ids().At(id);
    for (int c : touched[id]) {
      ChainPlan::CompactBackup& backup = plan.chains[c].backups.emplace_back();
      backup.failure = failure;
      shared.PlaceBackup(c, failure, plan, backup);
      AddChainDependency(chains[c], plan.primary[c], backup, plan.dependencies);
    }
  }
  CompleteAudit(snapshot_, plan.dependencies);
  return plan;
}

ChainPlan ChainPlacer::Replan(ChainPlan previous, const Snapshot& before) {
  const auto& chains = snapshot_.chains();
  const int chain_count = static_cast<int>(chains.size());
  if (!snapshot_.SharesInventory(before) || previous.primary.size() != chains.size() ||
      previous.chains.size() != chains.size()) {
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
  if (!changed) return previous;
  ChainPlan plan = std::move(previous);
  // Which of the plan's paths use a changed link.
  std::vector<char> path_worse(plan.paths.size(), 0);
  for (int path = 0; path < plan.paths.size(); ++path) {
    for (int link : plan.paths.Links(path)) {
      if (worse[link]) {
        path_worse[path] = 1;
        break;
      }
    }
  }
  auto primary_uses_worse = [&](int c) {
    const ChainPlan::ChainBackups& of = plan.chains[c];
    for (size_t call = 0; call < of.primary_there.size(); ++call) {
      if (path_worse[of.primary_there[call]] || path_worse[of.primary_back[call]]) return true;
    }
    return false;
  };

  Shared& shared = this->shared();
  // Per failure id, the (chain, backup position) pairs to place again.
  std::vector<std::vector<std::pair<int, int>>> redo(shared.ids().size());
  for (int c = 0; c < chain_count; ++c) {
    if (!plan.primary[c].placed || primary_uses_worse(c)) {
      plan.SetPrimary(c, shared.PlacePrimary(c));
      if (!plan.primary[c].placed) continue;
      std::vector<ChainPlan::CompactBackup>& backups = plan.chains[c].backups;
      for (int id : shared.Touched(chains[c], plan.primary[c])) {
        redo[id].emplace_back(c, static_cast<int>(backups.size()));
        backups.emplace_back().failure = shared.ids().At(id);
      }
      continue;
    }
    const ChainPlan::ChainBackups& of = plan.chains[c];
    for (int i = 0; i < static_cast<int>(of.backups.size()); ++i) {
      const ChainPlan::CompactBackup& backup = of.backups[i];
      bool redo_it = !backup.placed;
      for (uint32_t k = backup.first; !redo_it && k < backup.first + backup.count; ++k) {
        redo_it = path_worse[of.changed[k].path_there] || path_worse[of.changed[k].path_back];
      }
      if (redo_it) redo[shared.ids().Id(backup.failure)].emplace_back(c, i);
    }
  }
  for (int id = 0; id < static_cast<int>(redo.size()); ++id) {
    if (redo[id].empty()) continue;
    const ChainFailure failure = shared.ids().At(id);
    for (const auto& [c, i] : redo[id]) shared.PlaceBackup(c, failure, plan, plan.chains[c].backups[i]);
  }
  // The audit, from the new placements.
  plan.dependencies.clear();
  for (int c = 0; c < chain_count; ++c) {
    for (const ChainPlan::CompactBackup& backup : plan.chains[c].backups) {
      if (backup.failure.kind != ChainFailure::Kind::kFacility) break;  // facilities come first
      AddChainDependency(chains[c], plan.primary[c], backup, plan.dependencies);
    }
  }
  CompleteAudit(snapshot_, plan.dependencies);
  return plan;
}

}  // namespace geodesic::pathcomp
