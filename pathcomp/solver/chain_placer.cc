#include "pathcomp/solver/chain_placer.h"

#include <algorithm>
#include <map>

#include "pathcomp/solver/failure_distances.h"
#include "pathcomp/solver/internal/chain_layers.h"
#include "pathcomp/solver/internal/huge_pages.h"
#include "pathcomp/solver/transit_audit.h"

namespace geodesic::pathcomp {
namespace {

using internal::ChainView;
using internal::FullPlacement;
using internal::LayerCall;
using internal::LayerChain;
using internal::LayerEntry;
using internal::LayerScratch;
using internal::SearchEntry;
using internal::SolveLayers;
using internal::SolveLayersAfter;

bool SameExclusion(const Exclusion& a, const Exclusion& b) {
  return a.link == b.link && a.srlg == b.srlg && a.facility == b.facility && a.allowed == b.allowed;
}

// The single-facility dependency a facility backup reveals, if any: its
// chain cannot run without the facility, or not within its budget.
void AddChainDependency(const Snapshot& snapshot, const ChainPlan& plan, const ChainPlan::CompactBackup& backup,
                        bool primary_within_budget, std::vector<FacilityDependency>& dependencies) {
  if (backup.failure.kind != ChainFailure::Kind::kFacility) return;
  if (backup.placed && (backup.within_budget || !primary_within_budget)) return;
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

// How many chains ahead of the one placed PlanAll asks the memory for a
// chain's head, and for its layers (which the head locates).
constexpr size_t kHeadsAhead = 8, kLayersAhead = 4;

}  // namespace

// What the plans share between chains: shortest paths per pin mask, the
// failures' numbering, the layers' scratch, and the chains in flat arrays:
// backups are solved one failure at a time, each for chains all over the
// plan, so what a backup reads of its chain stays together in memory.
class ChainPlacer::Shared {
 public:
  explicit Shared(const Snapshot& snapshot)
      : snapshot_(snapshot),
        ids_(snapshot),
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
    internal::ReserveInHugePages(layer_calls_, services_.size());
    internal::ReserveInHugePages(layer_entries_, entries);
  }

  const FailureIds& ids() const { return ids_; }
  bool primary_within_budget(int c) const { return heads_[c].primary_within_budget; }

  // The primary placement of chain `c`, whole. Its layered graph is kept
  // for its backups once `plan` has it (KeepLayers).
  ChainPlacement PlacePrimary(int c) {
    const Chain& chain = snapshot_.chains()[c];
    FailureDistances& paths = PathsFor(c);
    paths.SetFailure(Exclusion{});
    ChainPlacement result;
    if (!SolveLayers(snapshot_, View(c), -1, [&](int a) { return paths.Row(a); }, scratch_, result)) return result;
    return FullPlacement(snapshot_, chain, scratch_, [&](int a, int b) { return paths.LinksTo(a, b); });
  }

  // Keeps chain `c`'s unfailed layered graph and primary hops (from
  // `plan`, which has its placed primary) for its backups. After
  // PlacePrimary(c), from what it solved; else solved again (the unfailed
  // graph of this snapshot, whose best placement is the primary).
  void KeepLayers(int c, const ChainPlan& plan, bool just_placed) {
    LayerChain& head = heads_[c];
    if (!just_placed) {
      FailureDistances& paths = PathsFor(c);
      paths.SetFailure(Exclusion{});
      if (!SolveLayers(snapshot_, View(c), -1, [&](int a) { return paths.Row(a); }, scratch_, unplaced_)) {
        ClearUnplaced();
        return;  // not placed: no backups
      }
    }
    head.calls_at = static_cast<uint32_t>(layer_calls_.size());
    head.entries_at = static_cast<uint32_t>(layer_entries_.size());
    head.primary_within_budget = plan.primary[c].within_budget;
    const ChainView chain = View(c);
    layer_entries_.push_back({.total_us = 0, .from = -1, .facility = chain.origin});
    for (int call = 0; call < chain.calls; ++call) {
      const ServiceReplicas& replicas = snapshot_.service(chain.services[call]);
      const ChainPlan::PrimaryCall& primary = plan.primary_calls[plan.call_begin[c] + call];
      layer_calls_.push_back({.service_time_us = replicas.service_time_us,
                              .count = static_cast<int>(replicas.facilities.size()),
                              .service = chain.services[call],
                              .replica = primary.replica,
                              .from = primary.from,
                              .path_there = primary.path_there,
                              .path_back = primary.path_back,
                              .rtt_us = plan.primary[c].hops[call].network_rtt_us});
      const size_t at = layer_entries_.size();
      for (int facility : replicas.facilities) layer_entries_.push_back({.facility = facility});
      for (size_t i = scratch_.begin[call + 1]; i < scratch_.begin[call + 2]; ++i) {
        const SearchEntry& entry = scratch_.entries[i];
        layer_entries_[at + entry.position].total_us = entry.total_us;
        layer_entries_[at + entry.position].from = scratch_.entries[scratch_.begin[call] + entry.from].position;
      }
    }
    head.entry_count = static_cast<uint32_t>(layer_entries_.size() - head.entries_at);
    // What is left to go from each entry, last call first (the rows
    // SolveLayers read are still the unfailed ones).
    for (size_t i = scratch_.begin[chain.calls]; i < scratch_.begin[chain.calls + 1]; ++i) {
      ToGo(head, chain.calls, scratch_.entries[i].position) = 0;
    }
    for (int call = chain.calls; call-- > 0;) {  // the layer of call - 1 (0: the origin) from call's
      const uint64_t service_us = layer_calls_[head.calls_at + call].service_time_us;
      for (size_t i = scratch_.begin[call]; i < scratch_.begin[call + 1]; ++i) {
        const SearchEntry& entry = scratch_.entries[i];
        uint64_t best = kUnreachable;
        for (size_t j = scratch_.begin[call + 1]; j < scratch_.begin[call + 2]; ++j) {
          const SearchEntry& next = scratch_.entries[j];
          const uint64_t after = ToGo(head, call + 1, next.position);
          if (after == kUnreachable) continue;
          uint64_t network = 0;
          if (next.facility != entry.facility) {
            const uint64_t there = entry.row[next.facility], back = next.row[entry.facility];
            if (there == kUnreachable || back == kUnreachable) continue;
            network = there + back;
          }
          best = std::min(best, network + service_us + after);
        }
        ToGo(head, call, entry.position) = best;
      }
    }
    // The primary's entry per layer, back from the best last one as
    // SolveLayers chose it; the best placement through any other entry.
    primary_position_.assign(chain.calls + 1, 0);
    size_t at = scratch_.begin[chain.calls];
    for (size_t i = at + 1; i < scratch_.begin[chain.calls + 1]; ++i) {
      if (scratch_.entries[i].total_us < scratch_.entries[at].total_us) at = i;
    }
    for (int layer = chain.calls; layer > 0; --layer) {
      primary_position_[layer] = scratch_.entries[at].position;
      at = scratch_.begin[layer - 1] + scratch_.entries[at].from;
    }
    head.runner_up_us = kUnreachable;
    size_t k = head.entries_at + 1;
    for (int call = 0; call < chain.calls; ++call) {
      const int count = layer_calls_[head.calls_at + call].count;
      for (int position = 0; position < count; ++position, ++k) {
        const LayerEntry& entry = layer_entries_[k];
        if (position == primary_position_[call + 1] || entry.total_us == kUnreachable ||
            entry.to_go_us == kUnreachable) {
          continue;
        }
        head.runner_up_us = std::min(head.runner_up_us, entry.total_us + entry.to_go_us);
      }
    }
  }

  // The to_go_us of chain `head`'s entry at `position` in layer `layer` (0:
  // the origin, i: call i - 1's replicas).
  uint64_t& ToGo(const LayerChain& head, int layer, int position) {
    size_t at = head.entries_at;
    for (int call = 0; call < layer; ++call) at += call == 0 ? 1 : layer_calls_[head.calls_at + call - 1].count;
    return layer_entries_[at + position].to_go_us;
  }

  // The failure the next PlaceBackup calls are for.
  void BeginFailure(const ChainFailure& failure) { failure_ = failure; }

  // Asks the memory for what PlaceBackup(c) reads of chain `c` ahead of
  // it: a failure's backups read chains all over the plan, and waiting for
  // each chain's layers in turn was most of their time.
  void PrefetchHead(int c) const { __builtin_prefetch(&heads_[c]); }
  void PrefetchLayers(int c) const {
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

  // The backup of chain `c` (whose primary `plan` has) under the current
  // failure (BeginFailure), written at plan.backups[slot], or appended
  // when slot is kAppend.
  static constexpr size_t kAppend = ~size_t{0};
  // `on_path`: bit i set when the failure may be on the primary's paths of
  // call i (all set: unknown).
  // The chain's layers must be kept (KeepLayers): they are kept again here
  // otherwise, correctly but at the price of the failure's repairs.
  void PlaceBackup(int c, ChainPlan& plan, uint32_t on_path, size_t slot = kAppend) {
    if (heads_[c].calls_at == LayerChain::kNone) KeepLayers(c, plan, false);
    const LayerChain& chain = heads_[c];
    FailureDistances& paths = PathsFor(c);
    const Exclusion exclusion = failure_.AsExclusion();
    paths.SetFailure(exclusion);
    ChainPlan::CompactBackup& backup = slot == kAppend ? plan.backups.emplace_back() : plan.backups[slot];
    backup = ChainPlan::CompactBackup();
    backup.failure = failure_;
    backup.chain = c;
    const LayerCall* was = &layer_calls_[chain.calls_at];
    // The primary's hops under the failure, if it survives: a bound. A hop
    // whose paths the failure is not on keeps its round trip.
    scratch_.rtt_us.resize(chain.calls);
    uint64_t bound_us = 0;
    for (int call = 0; call < chain.calls && bound_us != kUnreachable; ++call) {
      const int from = was[call].from, replica = was[call].replica;
      uint64_t& rtt = scratch_.rtt_us[call];
      rtt = 0;
      if (replica == exclusion.facility || from == exclusion.facility) {
        bound_us = kUnreachable;
        break;
      }
      if (from != replica) {
        if (call < 32 && ((on_path >> call) & 1) == 0) {
          rtt = was[call].rtt_us;
        } else {
          const uint64_t there = paths.Row(from)[replica], back = paths.Row(replica)[from];
          if (there == kUnreachable || back == kUnreachable) {
            bound_us = kUnreachable;
            break;
          }
          rtt = there + back;
        }
      }
      bound_us += rtt + was[call].service_time_us;
    }
    if (bound_us < chain.runner_up_us) {
      // Every other placement takes at least the runner-up's sum: the
      // primary's replicas stay, alone best (no tie to break).
      scratch_.replica.resize(chain.calls);
      scratch_.from.resize(chain.calls);
      for (int call = 0; call < chain.calls; ++call) {
        scratch_.replica[call] = was[call].replica;
        scratch_.from[call] = was[call].from;
      }
      scratch_.total_us = bound_us;
    } else if (!SolveLayersAfter(snapshot_, chain, was, &layer_entries_[chain.entries_at],
                                 chain.pinned ? &snapshot_.chains()[c] : nullptr, exclusion.facility, bound_us,
                                 paths, scratch_, unplaced_)) {
      backup.failed_call = static_cast<int16_t>(unplaced_.failed_call);
      backup.why = unplaced_.why;
      backup.first = static_cast<uint32_t>(plan.unreached_from.size());
      backup.count = static_cast<uint16_t>(unplaced_.unreached_from.size());
      plan.unreached_from.insert(plan.unreached_from.end(), unplaced_.unreached_from.begin(),
                                 unplaced_.unreached_from.end());
      ClearUnplaced();
      return;
    }
    backup.placed = true;
    backup.total_us = scratch_.total_us;
    backup.within_budget = scratch_.total_us <= chain.budget_us;
    backup.first = static_cast<uint32_t>(plan.changed.size());
    for (int call = 0; call < chain.calls; ++call) {
      const int from = scratch_.from[call], replica = scratch_.replica[call];
      if (replica == was[call].replica && from == was[call].from) {
        // The same hop keeps its paths unless the failure is on them.
        if (from == replica) continue;
        const bool maybe_on_path = call >= 32 || ((on_path >> call) & 1) != 0;
        if (!maybe_on_path && !paths.MovesUntouchedPaths(from) && !paths.MovesUntouchedPaths(replica)) continue;
      }
      int there = 0, back = 0;
      if (from != replica) {
        there = paths.PathId(from, replica, plan.paths);
        back = paths.PathId(replica, from, plan.paths);
      }
      if (replica == was[call].replica && there == was[call].path_there && back == was[call].path_back) continue;
      plan.changed.push_back({call, replica, there, back, scratch_.rtt_us[call]});
      ++backup.count;
    }
  }

  // The failures a placed primary touches: every facility but the origin,
  // every link, every SRLG of those links; by id, ascending, each with the
  // calls whose paths it is on (bit i: call i; calls past 31 always set).
  struct TouchedFailure {
    int id;
    uint32_t on_path;
    friend bool operator<(const TouchedFailure& a, const TouchedFailure& b) { return a.id < b.id; }
  };
  const std::vector<TouchedFailure>& Touched(const Chain& chain, const ChainPlacement& primary) {
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
        for (int link : *links) {
          add_facility(snapshot_.link_src(link), bit);
          add_facility(snapshot_.link_dst(link), bit);
          add(ids_.Id({ChainFailure::Kind::kLink, link}), bit);
          for (int srlg : snapshot_.link_srlgs(link)) add(ids_.Id({ChainFailure::Kind::kSrlg, srlg}), bit);
        }
      }
    }
    std::sort(touched_.begin(), touched_.end());
    return touched_;
  }

 private:
  ChainView View(int c) const {
    return {heads_[c].origin, services_.data() + service_begin_[c], heads_[c].calls,
            heads_[c].pinned ? &snapshot_.chains()[c] : nullptr};
  }
  void ClearUnplaced() {
    unplaced_.failed_call = -1;
    unplaced_.why = ChainUnplacedWhy::kNone;
    unplaced_.failed_facility = -1;
    unplaced_.unreached_from.clear();
  }

  FailureDistances& PathsFor(int c) {
    const Chain* pins = heads_[c].pinned ? &snapshot_.chains()[c] : nullptr;
    if (pins == nullptr || pins->allowed.empty()) {
      if (!unpinned_) unpinned_ = std::make_unique<FailureDistances>(snapshot_, nullptr);
      return *unpinned_;
    }
    auto [it, inserted] = pinned_paths_.try_emplace(pins->allowed);
    if (inserted) it->second = std::make_unique<FailureDistances>(snapshot_, &it->first);
    return *it->second;
  }

  const Snapshot& snapshot_;
  FailureIds ids_;
  std::unique_ptr<FailureDistances> unpinned_;
  std::map<std::vector<char>, std::unique_ptr<FailureDistances>> pinned_paths_;  // by mask
  LayerScratch scratch_;
  ChainPlacement unplaced_;
  std::vector<uint32_t> mark_;  // per failure id: == stamp_ when touched by the current chain
  uint32_t stamp_ = 0;
  std::vector<int> position_;  // per failure id marked: its place in touched_
  std::vector<TouchedFailure> touched_;
  std::vector<int> primary_position_;  // KeepLayers' scratch: per layer
  ChainFailure failure_{ChainFailure::Kind::kFacility, -1};  // the current one
  // The chains, flat: services of chain c at services_[service_begin_[c] ..).
  std::vector<int> services_;
  std::vector<uint32_t> service_begin_;
  // Per chain, and the unfailed layered graphs kept (KeepLayers).
  std::vector<LayerChain> heads_;
  std::vector<LayerCall> layer_calls_;
  std::vector<LayerEntry> layer_entries_;
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
  if (!SolveLayers(snapshot_, ChainView::Of(chain), failure.facility,
                   [this](int a) { return From(a).distance_us.data(); }, scratch,
                   result)) {
    return result;
  }
  return FullPlacement(snapshot_, chain, scratch, [this](int a, int b) { return From(a).LinksTo(b); });
}

ChainPlacer::Shared& ChainPlacer::shared() {
  if (!shared_) shared_ = std::make_unique<Shared>(snapshot_);
  return *shared_;
}

std::vector<ChainPlacement> ChainPlacer::PlacePrimaries() {
  const int chain_count = static_cast<int>(snapshot_.chains().size());
  Shared& shared = this->shared();
  std::vector<ChainPlacement> primaries;
  primaries.reserve(static_cast<size_t>(chain_count));
  for (int c = 0; c < chain_count; ++c) primaries.push_back(shared.PlacePrimary(c));
  return primaries;
}

ChainPlan ChainPlacer::PlanAll() {
  const auto& chains = snapshot_.chains();
  const int chain_count = static_cast<int>(chains.size());
  Shared& shared = this->shared();
  ChainPlan plan;
  plan.primary.reserve(chains.size());
  plan.call_begin.reserve(chains.size() + 1);

  // Primaries, and which chains each failure touches.
  std::vector<std::vector<std::pair<int, uint32_t>>> touched(shared.ids().size());  // (chain, on_path)
  size_t backups = 0;
  for (int c = 0; c < chain_count; ++c) {
    ChainPlacement primary = shared.PlacePrimary(c);
    const bool placed = primary.placed;
    if (placed) {
      const auto& ids = shared.Touched(chains[c], primary);
      for (const auto& [id, on_path] : ids) touched[id].push_back({c, on_path});
      backups += ids.size();
    }
    plan.AddPrimary(chains[c], std::move(primary));
    if (placed) shared.KeepLayers(c, plan, true);
  }
  // One failure at a time, in ChainFailure order.
  internal::ReserveInHugePages(plan.backups, backups + ChainPlan::BackupRoom(backups));
  internal::ReserveInHugePages(plan.changed, 2 * backups);
  for (int id = 0; id < static_cast<int>(touched.size()); ++id) {
    if (touched[id].empty()) continue;
    shared.BeginFailure(shared.ids().At(id));
    const auto& chains_touched = touched[id];
    for (size_t i = 0; i < chains_touched.size(); ++i) {
      if (i + kHeadsAhead < chains_touched.size()) shared.PrefetchHead(chains_touched[i + kHeadsAhead].first);
      if (i + kLayersAhead < chains_touched.size()) shared.PrefetchLayers(chains_touched[i + kLayersAhead].first);
      const auto& [c, on_path] = chains_touched[i];
      shared.PlaceBackup(c, plan, on_path);
      AddChainDependency(snapshot_, plan, plan.backups.back(), shared.primary_within_budget(c), plan.dependencies);
    }
  }
  plan.Finish();
  CompleteAudit(snapshot_, plan.dependencies);
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
  if (!changed) return previous;
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

  Shared& shared = this->shared();
  ChainPlan plan = std::move(previous);
  // Chains placed again whole (their primary used a changed link, or was
  // not placed): their backups are dropped, and the failures their new
  // primaries touch get new ones.
  std::vector<std::vector<std::pair<int, uint32_t>>> touched(shared.ids().size());  // (chain, on_path)
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
      for (const auto& [id, on_path] : shared.Touched(chains[c], primary)) touched[id].push_back({c, on_path});
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
  std::vector<int8_t> reach_kept(shared.ids().size(), -1);  // per failure id: -1 not known yet
  std::vector<char> seen(snapshot_.facility_count());
  std::vector<int> stack;
  auto reachability_kept = [&](int id) {
    if (reach_kept[id] >= 0) return reach_kept[id] == 1;
    const Exclusion failure = shared.ids().At(id).AsExclusion();
    bool kept = true;
    for (int link : down) {
      if (failure.link == link || failure.facility == before.link_src(link) || failure.facility == before.link_dst(link)) {
        continue;  // out under the failure anyway
      }
      const auto srlgs = before.link_srlgs(link);
      if (failure.srlg >= 0 && std::find(srlgs.begin(), srlgs.end(), failure.srlg) != srlgs.end()) continue;
      std::fill(seen.begin(), seen.end(), 0);
      stack.assign(1, snapshot_.link_src(link));
      seen[stack[0]] = 1;
      while (!stack.empty() && !seen[snapshot_.link_dst(link)]) {
        const int at = stack.back();
        stack.pop_back();
        for (int out : snapshot_.out_links(at)) {
          const int next = snapshot_.link_dst(out);
          if (seen[next] || failure.Excludes(snapshot_, out)) continue;
          seen[next] = 1;
          stack.push_back(next);
        }
      }
      if (!seen[snapshot_.link_dst(link)]) {
        kept = false;
        break;
      }
    }
    reach_kept[id] = kept ? 1 : 0;
    return kept;
  };

  // The other chains' backups placed again where they are: those not
  // placed (unless reachability is kept), and those whose changed hops use
  // a changed link (their other hops are the primary's, which does not).
  // Read in storage order (the backups and their changed hops front to
  // back: chain by chain, it was a cache miss per backup).
  std::vector<std::vector<uint32_t>> redo(shared.ids().size());
  std::vector<char> layers_needed(chain_count, 0);
  for (uint32_t position = 0; position < plan.backups.size(); ++position) {
    const ChainPlan::CompactBackup& backup = plan.backups[position];
    if (backup.chain < 0 || again[backup.chain]) continue;  // dropped
    const int id = shared.ids().Id(backup.failure);
    bool place = !backup.placed && (!chains[backup.chain].allowed.empty() || !reachability_kept(id));
    for (uint32_t k = backup.first; backup.placed && !place && k < backup.first + backup.count; ++k) {
      place = path_worse[plan.changed[k].path_there] || path_worse[plan.changed[k].path_back];
    }
    if (!place) continue;
    redo[id].push_back(position);
    layers_needed[backup.chain] = 1;
  }
  for (int c = 0; c < chain_count; ++c) {
    if (layers_needed[c]) shared.KeepLayers(c, plan, false);  // before the failures, which it would interleave with
  }
  std::sort(free_slots.begin(), free_slots.end());
  size_t next_free = 0;
  for (int id = 0; id < static_cast<int>(touched.size()); ++id) {
    if (redo[id].empty() && touched[id].empty()) continue;
    shared.BeginFailure(shared.ids().At(id));
    for (uint32_t position : redo[id]) shared.PlaceBackup(plan.backups[position].chain, plan, ~uint32_t{0}, position);
    for (const auto& [c, on_path] : touched[id]) {
      shared.PlaceBackup(c, plan, on_path, next_free < free_slots.size() ? free_slots[next_free++] : Shared::kAppend);
    }
  }
  plan.Finish();
  // The audit, from the new placements.
  plan.dependencies.clear();
  for (const ChainPlan::CompactBackup& backup : plan.backups) {
    if (backup.chain >= 0) {
      AddChainDependency(snapshot_, plan, backup, plan.primary[backup.chain].within_budget, plan.dependencies);
    }
  }
  CompleteAudit(snapshot_, plan.dependencies);
  return plan;
}

}  // namespace geodesic::pathcomp
