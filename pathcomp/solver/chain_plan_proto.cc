#include "pathcomp/solver/chain_plan_proto.h"

#include <algorithm>
#include <map>
#include <span>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "site_plan/chain_paths.h"

namespace geodesic::pathcomp {
namespace {

// One chain's path table on the wire (site_plan/chain_paths.h), written as
// its hops come: each path once by its facilities (paths over parallel
// links are one on the wire), each facility id once. Start() begins a
// chain; the scratch is reused from chain to chain.
class WirePaths {
 public:
  WirePaths(const Snapshot& snapshot, const ChainPathTable& paths)
      : snapshot_(snapshot), paths_(paths), local_facility_(static_cast<size_t>(snapshot.facility_count()), kNone) {}

  void Start(v1::ChainPlan& chain) {
    for (const int facility : facilities_) local_facility_[static_cast<size_t>(facility)] = kNone;
    facilities_.clear();
    by_id_.clear();
    by_facilities_.clear();
    chain_ = &chain;
    chain.add_path_ends(0);  // path 0: empty
  }

  // The wire index of ChainPathTable path `id` (0, empty, for 0).
  uint32_t Path(int id) {
    if (id == 0) return 0;
    if (const auto it = by_id_.find(id); it != by_id_.end()) return it->second;
    const std::span<const int> links = paths_.Links(id);
    key_.clear();
    key_.push_back(Facility(snapshot_.link_src(links.front())));
    for (const int link : links) key_.push_back(Facility(snapshot_.link_dst(link)));
    auto [it, added] = by_facilities_.try_emplace(key_, static_cast<uint32_t>(chain_->path_ends_size()));
    if (added) {
      chain_->mutable_path_facilities()->Add(key_.begin(), key_.end());
      chain_->add_path_ends(static_cast<uint32_t>(chain_->path_facilities_size()));
    }
    by_id_.try_emplace(id, it->second);
    return it->second;
  }

 private:
  static constexpr uint32_t kNone = ~uint32_t{0};

  uint32_t Facility(int facility) {
    uint32_t& local = local_facility_[static_cast<size_t>(facility)];
    if (local == kNone) {
      local = static_cast<uint32_t>(chain_->path_facility_ids_size());
      chain_->add_path_facility_ids(snapshot_.facility_id(facility));
      facilities_.push_back(facility);
    }
    return local;
  }

  const Snapshot& snapshot_;
  const ChainPathTable& paths_;
  v1::ChainPlan* chain_ = nullptr;
  std::vector<uint32_t> local_facility_;  // by snapshot facility: its index in the chain's ids, or kNone
  std::vector<int> facilities_;           // those set, to reset
  absl::flat_hash_map<int, uint32_t> by_id_;
  absl::flat_hash_map<std::vector<uint32_t>, uint32_t> by_facilities_;
  std::vector<uint32_t> key_;
};

// A call of `primary`'s service on the wire, at `replica` over the paths
// (wire indices) with that round trip.
void SetHop(const Snapshot& snapshot, const ChainHop& primary, int replica, uint32_t path_there, uint32_t path_back,
            uint64_t network_rtt_us, v1::ChainHop& out) {
  out.set_service_id(snapshot.service_id(primary.service));
  out.set_replica_facility_id(snapshot.facility_id(replica));
  out.set_path_there(path_there);
  out.set_path_back(path_back);
  out.set_network_rtt_us(network_rtt_us);
  out.set_service_time_us(primary.service_time_us);
}

// Whether `placement` is placed, why not, its latency sum and budget: an
// assignment without its hops.
v1::ChainAssignment WithoutHops(const Snapshot& snapshot, const Chain& chain, const ChainPlacement& placement) {
  v1::ChainAssignment assignment;
  assignment.set_placed(placement.placed);
  assignment.set_reason(placement.Reason(snapshot, chain));
  if (!placement.placed) return assignment;
  assignment.set_total_latency_us(placement.total_us);
  assignment.set_within_budget(placement.within_budget);
  return assignment;
}

// Backup i of chain `c` on the wire: its changed hops only, each the
// primary's hop with the backup's replica, paths and round trip (what
// ChainPlan::backup() expands, without expanding the rest).
v1::ChainAssignment BackupToProto(const Snapshot& snapshot, const Chain& chain, const ChainPlan& plan, int c,
                                  int i, WirePaths& paths) {
  const ChainPlan::CompactBackup& backup = plan.compact_backup(c, i);
  if (!backup.placed) return WithoutHops(snapshot, chain, plan.backup(c, i).placement);
  v1::ChainAssignment assignment;
  assignment.set_placed(true);
  assignment.set_total_latency_us(backup.total_us);
  assignment.set_within_budget(backup.within_budget);
  for (uint32_t k = backup.first; k < backup.first + backup.count; ++k) {
    const ChainPlan::ChangedHop& change = plan.changed[k];
    const uint32_t there = paths.Path(change.path_there);  // there first: the table's order
    const uint32_t back = paths.Path(change.path_back);
    v1::ChainHop& out = *assignment.add_hops();
    SetHop(snapshot, plan.primary[c].hops[change.call], change.replica, there, back, change.network_rtt_us, out);
    out.set_call(static_cast<uint32_t>(change.call));
  }
  return assignment;
}

// Chain `c`'s primary on the wire.
v1::ChainAssignment PrimaryToProto(const Snapshot& snapshot, const Chain& chain, const ChainPlan& plan, int c,
                                   WirePaths& paths) {
  const ChainPlacement& placement = plan.primary[c];
  v1::ChainAssignment assignment = WithoutHops(snapshot, chain, placement);
  if (!placement.placed) return assignment;
  for (size_t k = 0; k < placement.hops.size(); ++k) {
    const ChainHop& hop = placement.hops[k];
    const ChainPlan::PrimaryCall& call = plan.primary_calls[plan.call_begin[c] + k];
    const uint32_t there = paths.Path(call.path_there);  // there first: the table's order
    const uint32_t back = paths.Path(call.path_back);
    SetHop(snapshot, hop, hop.replica, there, back, hop.network_rtt_us, *assignment.add_hops());
  }
  return assignment;
}

void SetScope(const Snapshot& snapshot, const ChainFailure& failure, v1::FailureScope& scope) {
  switch (failure.kind) {
    case ChainFailure::Kind::kFacility:
      scope.set_kind(v1::FAILURE_KIND_FACILITY);
      scope.set_id(snapshot.facility_id(failure.index));
      break;
    case ChainFailure::Kind::kLink:
      scope.set_kind(v1::FAILURE_KIND_LINK);
      scope.set_id(snapshot.link_id(failure.index));
      break;
    case ChainFailure::Kind::kSrlg:
      scope.set_kind(v1::FAILURE_KIND_SRLG);
      scope.set_id(snapshot.srlg_name(failure.index));
      break;
  }
}

// The bytes that tell compact backups of one chain apart (all but the
// failure), in `key`.
void CompactKey(const ChainPlan& plan, const ChainPlan::CompactBackup& backup, std::string& key) {
  key.clear();
  auto put = [&key](const auto& value) { key.append(reinterpret_cast<const char*>(&value), sizeof(value)); };
  put(backup.placed);
  put(backup.total_us);
  put(backup.within_budget);
  put(backup.failed_call);
  put(backup.why);
  put(backup.failed_facility());
  for (uint32_t k = backup.first; k < backup.first + backup.count; ++k) {
    if (!backup.placed) {
      put(plan.unreached_from[k]);
      continue;
    }
    const ChainPlan::ChangedHop& hop = plan.changed[k];
    put(hop.call);
    put(hop.replica);
    put(hop.path_there);
    put(hop.path_back);
    put(hop.network_rtt_us);
  }
}

}  // namespace

void AddChainPlan(const Snapshot& snapshot, const ChainPlan& chains, v1::Plan& plan) {
  std::vector<int> order(chains.primary.size());
  for (size_t c = 0; c < order.size(); ++c) order[c] = static_cast<int>(c);
  const auto& specs = snapshot.chains();
  std::sort(order.begin(), order.end(), [&](int a, int b) {
    return snapshot.workload_id(specs[a].workload) < snapshot.workload_id(specs[b].workload);
  });
  // Per chain, reused: its entries by serialized assignment and by
  // CompactKey (index in its backups), and the keys' scratch.
  absl::flat_hash_map<std::string, int> entry_of, entry_of_compact;
  std::string key, wire;
  WirePaths paths(snapshot, chains.paths);
  plan.mutable_chains()->Reserve(static_cast<int>(order.size()));
  for (int c : order) {
    v1::ChainPlan& out = *plan.add_chains();
    out.set_workload_id(snapshot.workload_id(specs[c].workload));
    out.set_latency_budget_us(specs[c].budget_us);
    paths.Start(out);
    *out.mutable_primary() = PrimaryToProto(snapshot, specs[c], chains, c, paths);
    // Many failures leave the same best answer: one entry each. Compact
    // backups that are equal are the same answer (made and compared on
    // the wire once); different ones can still look alike there (parallel
    // links), so entries are told apart by their wire form.
    entry_of.clear();
    entry_of_compact.clear();
    for (int i = 0; i < chains.backup_count(c); ++i) {
      const ChainPlan::CompactBackup& compact = chains.compact_backup(c, i);
      CompactKey(chains, compact, key);
      auto known = entry_of_compact.find(key);
      int entry;
      if (known != entry_of_compact.end()) {
        entry = known->second;
      } else {
        v1::ChainAssignment assignment = BackupToProto(snapshot, specs[c], chains, c, i, paths);
        assignment.SerializeToString(&wire);
        auto [it, inserted] = entry_of.try_emplace(wire, out.backups_size());
        if (inserted) *out.add_backups()->mutable_assignment() = std::move(assignment);
        entry = it->second;
        entry_of_compact.try_emplace(key, entry);
      }
      SetScope(snapshot, compact.failure, *out.mutable_backups(entry)->add_protects());
    }
  }
  for (const FacilityDependency& dependency : chains.dependencies) {
    v1::FacilityDependency& out = *plan.add_single_facility_dependencies();
    out.set_workload_id(snapshot.workload_id(dependency.workload));
    out.set_facility_id(snapshot.facility_id(dependency.facility));
    out.set_reason(dependency.Reason(snapshot));
  }
}

std::string ChainShape(const v1::ChainPlan& chain, const v1::ChainAssignment& assignment) {
  if (!assignment.placed()) return "unplaced";
  std::string shape;
  for (const auto& hop : assignment.hops()) {
    absl::StrAppend(&shape, hop.service_id(), "@", hop.replica_facility_id(), " there ",
                    absl::StrJoin(site_plan::ChainPathIds(chain, hop.path_there()), ">"), " back ",
                    absl::StrJoin(site_plan::ChainPathIds(chain, hop.path_back()), ">"), "; ");
  }
  return shape;
}

std::vector<std::string> MovedChains(const v1::Plan& before, const v1::Plan& after) {
  std::map<std::string, std::string> old_primary;
  for (const auto& chain : before.chains()) {
    old_primary[chain.workload_id()] = ChainShape(chain, chain.primary());
  }
  std::vector<std::string> moved;
  for (const auto& chain : after.chains()) {
    auto it = old_primary.find(chain.workload_id());
    if (it == old_primary.end() || it->second != ChainShape(chain, chain.primary())) {
      moved.push_back(chain.workload_id());
    }
    if (it != old_primary.end()) old_primary.erase(it);
  }
  for (const auto& [id, primary] : old_primary) moved.push_back(id);
  std::sort(moved.begin(), moved.end());
  return moved;
}

}  // namespace geodesic::pathcomp
