#include "pathcomp/solver/chain_placer.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "pathcomp/solver/failure_distances.h"
#include "pathcomp/solver/transit_audit.h"

namespace geodesic::pathcomp {
namespace {

bool SameExclusion(const Exclusion& a, const Exclusion& b) {
  return a.link == b.link && a.srlg == b.srlg && a.facility == b.facility && a.allowed == b.allowed;
}

std::string FacilityList(const Snapshot& snapshot, const std::vector<int>& facilities) {
  std::vector<std::string> ids;
  for (int f : facilities) ids.push_back(snapshot.facility_id(f));
  return absl::StrJoin(ids, ", ");
}

}  // namespace

std::vector<int> ChainPlacement::Facilities(const Snapshot& snapshot, const Chain& chain) const {
  std::set<int> facilities = {chain.origin};
  for (const ChainHop& hop : hops) {
    facilities.insert(hop.replica);
    for (const auto* links : {&hop.links_there, &hop.links_back}) {
      for (int link : *links) {
        facilities.insert(snapshot.link_src(link));
        facilities.insert(snapshot.link_dst(link));
      }
    }
  }
  return {facilities.begin(), facilities.end()};
}

std::vector<int> ChainPlacement::Links() const {
  std::set<int> links;
  for (const ChainHop& hop : hops) {
    links.insert(hop.links_there.begin(), hop.links_there.end());
    links.insert(hop.links_back.begin(), hop.links_back.end());
  }
  return {links.begin(), links.end()};
}

Exclusion ChainFailure::AsExclusion() const {
  switch (kind) {
    case Kind::kFacility: return Exclusion{.facility = index};
    case Kind::kLink: return Exclusion{.link = index};
    case Kind::kSrlg: return Exclusion{.srlg = index};
  }
  return {};
}

namespace {

// One entry of the layered graph: a replica a call can run at, the least
// latency sum up to and including the call, and the entry of the previous
// layer it is called from (its position there).
struct Entry {
  int facility;
  uint64_t total_us;
  int from;
};

// The layers of one placement, one after another; reused between placements.
struct LayerScratch {
  std::vector<Entry> entries;
  std::vector<size_t> begin;  // layer i: entries[begin[i] .. begin[i + 1])
};

// The least latency-sum placement of `chain` avoiding `failed_facility`
// (-1: none), with one-way distances and paths from `distance(a, b)` and
// `links(a, b)`, which must already avoid the failure and keep to the chain's
// pin mask. Shared by Place() and the plans, so both place alike.
template <typename DistanceFn, typename LinksFn>
ChainPlacement PlaceChain(const Snapshot& snapshot, const Chain& chain, int failed_facility,
                          DistanceFn&& distance, LinksFn&& links, LayerScratch& scratch) {
  ChainPlacement result;
  if (failed_facility == chain.origin) {
    result.failed_call = 0;
    result.reason = absl::StrCat("the origin ", snapshot.facility_id(chain.origin), " is down");
    return result;
  }
  auto rtt = [&](int a, int b) -> uint64_t {
    if (a == b) return 0;
    const uint64_t there = distance(a, b);
    if (there == kUnreachable) return kUnreachable;
    const uint64_t back = distance(b, a);
    return back == kUnreachable ? kUnreachable : there + back;
  };

  std::vector<Entry>& entries = scratch.entries;
  std::vector<size_t>& begin = scratch.begin;
  entries.clear();
  begin.clear();
  begin.push_back(0);
  entries.push_back(Entry{chain.origin, 0, -1});
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
      Entry best{replica, kUnreachable, -1};
      for (int j = 0; j < previous_size; ++j) {
        const Entry& from = entries[previous + j];
        const uint64_t network = rtt(from.facility, replica);
        if (network == kUnreachable) continue;
        const uint64_t total = from.total_us + network;
        if (total < best.total_us) best = Entry{replica, total, j};  // ties: lowest index
      }
      if (best.from < 0) continue;
      best.total_us += replicas.service_time_us;
      entries.push_back(best);
    }
    if (entries.size() == begin.back()) {
      const std::string& name = snapshot.service_id(service);
      result.failed_call = static_cast<int>(call);
      if (!chain.pinned_replicas.empty() && chain.pinned_replicas[call] == failed_facility) {
        result.reason = absl::StrCat("service ", name, " is pinned to ", snapshot.facility_id(failed_facility));
      } else if (!chain.pinned_replicas.empty() || !chain.allowed.empty()) {
        result.reason = absl::StrCat("no replica of service ", name, " the chain's pin allows can be reached and back");
      } else if (replicas.facilities.empty()) {
        result.reason = absl::StrCat("service ", name, " has no replica in a known facility");
      } else if (failed_facility >= 0 &&
                 std::all_of(replicas.facilities.begin(), replicas.facilities.end(),
                             [&](int f) { return f == failed_facility; })) {
        result.reason = absl::StrCat("service ", name, " has one replica, in ",
                                     snapshot.facility_id(failed_facility));
      } else {
        std::vector<int> from;
        for (int j = 0; j < previous_size; ++j) from.push_back(entries[previous + j].facility);
        result.reason = absl::StrCat("no replica of service ", name, " (",
                                     FacilityList(snapshot, replicas.facilities),
                                     ") can be reached from ", FacilityList(snapshot, from),
                                     " and back");
      }
      return result;
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
  result.placed = true;
  result.total_us = entries[last + at].total_us;
  result.within_budget = result.total_us <= chain.budget_us;
  result.hops.resize(calls);
  for (size_t call = calls; call-- > 0;) {
    const Entry& entry = entries[begin[call + 1] + at];
    const int from = entries[begin[call] + entry.from].facility;
    ChainHop& hop = result.hops[call];
    hop.service = chain.services[call];
    hop.replica = entry.facility;
    hop.service_time_us = snapshot.service(hop.service).service_time_us;
    if (from != entry.facility) {
      hop.links_there = links(from, entry.facility);
      hop.links_back = links(entry.facility, from);
      hop.network_rtt_us = rtt(from, entry.facility);
    }
    at = entry.from;
  }
  return result;
}

// The single-facility dependency a facility backup reveals, if any: the chain
// cannot run without the facility, or not within its budget.
void AddChainDependency(const Snapshot& snapshot, const Chain& chain, const ChainPlacement& primary,
                        const ChainBackup& backup, std::vector<FacilityDependency>& dependencies) {
  if (backup.failure.kind != ChainFailure::Kind::kFacility) return;
  const int facility = backup.failure.index;
  if (!backup.placement.placed) {
    std::string reason = backup.placement.reason;
    if (reason.rfind("service ", 0) != 0 || (reason.find(" has one replica") == std::string::npos &&
                                              reason.find(" is pinned to ") == std::string::npos)) {
      const int call = backup.placement.failed_call;
      const int from = call == 0 ? chain.origin : primary.hops[call - 1].replica;
      reason = absl::StrCat("facility ", snapshot.facility_id(facility), " is the only transit between ",
                            snapshot.facility_id(from), " and the replicas of service ",
                            snapshot.service_id(chain.services[call]));
    }
    dependencies.push_back({chain.workload, facility, std::move(reason)});
  } else if (primary.within_budget && !backup.placement.within_budget) {
    dependencies.push_back({chain.workload, facility,
                            absl::StrCat("without facility ", snapshot.facility_id(facility), " the chain takes ",
                                         backup.placement.total_us, " us, over its budget of ", chain.budget_us,
                                         " us")});
  }
}

// The audit's last step, after the chains' dependencies: the elephant
// flows' (transit facilities), then everything in a stable order.
void CompleteAudit(const Snapshot& snapshot, std::vector<FacilityDependency>& dependencies) {
  std::vector<FacilityDependency> elephants = ElephantTransitDependencies(snapshot);
  dependencies.insert(dependencies.end(), std::make_move_iterator(elephants.begin()),
                      std::make_move_iterator(elephants.end()));
  std::sort(dependencies.begin(), dependencies.end(), [](const FacilityDependency& a, const FacilityDependency& b) {
    if (a.workload != b.workload) return a.workload < b.workload;
    if (a.facility != b.facility) return a.facility < b.facility;
    return a.reason < b.reason;
  });
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

  // The placement of chain `c` under `failure` (none when null).
  ChainPlacement Place(int c, const ChainFailure* failure) {
    const Chain& chain = snapshot_.chains()[c];
    FailureDistances& paths = PathsFor(chain);
    const Exclusion exclusion = failure != nullptr ? failure->AsExclusion() : Exclusion{};
    paths.SetFailure(exclusion);
    return PlaceChain(
        snapshot_, chain, exclusion.facility, [&](int a, int b) { return paths.Distance(a, b); },
        [&](int a, int b) { return paths.LinksTo(a, b); }, scratch_);
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
  return PlaceChain(
      snapshot_, chain, failure.facility, [this](int a, int b) { return From(a).distance_us[b]; },
      [this](int a, int b) { return From(a).LinksTo(b); }, scratch);
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
  plan.primary.reserve(chains.size());
  plan.backups.resize(chains.size());

  // Primaries, and which chains each failure touches.
  std::vector<std::vector<int>> touched(shared.ids().size());
  for (int c = 0; c < chain_count; ++c) {
    plan.primary.push_back(shared.Place(c, nullptr));
    const ChainPlacement& primary = plan.primary.back();
    if (!primary.placed) continue;
    const std::vector<int>& ids = shared.Touched(chains[c], primary);
    plan.backups[c].reserve(ids.size());
    for (int id : ids) touched[id].push_back(c);
  }
  // One failure at a time, in ChainFailure order, so every chain's backups
  // come out ordered by failure.
  for (int id = 0; id < static_cast<int>(touched.size()); ++id) {
    if (touched[id].empty()) continue;
    const ChainFailure failure = shared.ids().At(id);
    for (int c : touched[id]) {
      ChainBackup& backup = plan.backups[c].emplace_back(ChainBackup{failure, shared.Place(c, &failure)});
      AddChainDependency(snapshot_, chains[c], plan.primary[c], backup, plan.dependencies);
    }
  }
  CompleteAudit(snapshot_, plan.dependencies);
  return plan;
}

ChainPlan ChainPlacer::Replan(ChainPlan previous, const Snapshot& before) {
  const auto& chains = snapshot_.chains();
  const int chain_count = static_cast<int>(chains.size());
  if (!snapshot_.SharesInventory(before) || previous.primary.size() != chains.size() ||
      previous.backups.size() != chains.size()) {
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
  auto uses_worse = [&](const ChainPlacement& placement) {
    for (const ChainHop& hop : placement.hops) {
      for (const auto* links : {&hop.links_there, &hop.links_back}) {
        for (int link : *links) {
          if (worse[link]) return true;
        }
      }
    }
    return false;
  };

  Shared& shared = this->shared();
  ChainPlan plan = std::move(previous);
  // Per failure id, the (chain, backup position) pairs to place again.
  std::vector<std::vector<std::pair<int, int>>> redo(shared.ids().size());
  for (int c = 0; c < chain_count; ++c) {
    std::vector<ChainBackup>& backups = plan.backups[c];
    if (!plan.primary[c].placed || uses_worse(plan.primary[c])) {
      plan.primary[c] = shared.Place(c, nullptr);
      backups.clear();
      if (!plan.primary[c].placed) continue;
      for (int id : shared.Touched(chains[c], plan.primary[c])) {
        redo[id].emplace_back(c, static_cast<int>(backups.size()));
        backups.push_back(ChainBackup{shared.ids().At(id), {}});
      }
      continue;
    }
    for (int i = 0; i < static_cast<int>(backups.size()); ++i) {
      if (!backups[i].placement.placed || uses_worse(backups[i].placement)) {
        redo[shared.ids().Id(backups[i].failure)].emplace_back(c, i);
      }
    }
  }
  for (int id = 0; id < static_cast<int>(redo.size()); ++id) {
    if (redo[id].empty()) continue;
    const ChainFailure failure = shared.ids().At(id);
    for (const auto& [c, i] : redo[id]) plan.backups[c][i].placement = shared.Place(c, &failure);
  }
  // The audit, from the new placements.
  plan.dependencies.clear();
  for (int c = 0; c < chain_count; ++c) {
    for (const ChainBackup& backup : plan.backups[c]) {
      if (backup.failure.kind != ChainFailure::Kind::kFacility) break;  // facilities come first
      AddChainDependency(snapshot_, chains[c], plan.primary[c], backup, plan.dependencies);
    }
  }
  CompleteAudit(snapshot_, plan.dependencies);
  return plan;
}

}  // namespace geodesic::pathcomp
