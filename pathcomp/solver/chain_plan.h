#pragma once
// What a chain plan is (the answer of ChainPlacer, chain_placer.h): for every
// agent chain its primary placement, a backup placement for every failure the
// primary touches, and the single-facility audit. Dense indices only (the
// snapshot's facility, link, SRLG, service and workload indices): no strings,
// no protobuf; text and wire forms are made from it on demand
// (Reason(), chain_plan_proto.h).
//
// Backups are stored compactly, because a plan has hundreds of thousands of
// them: each is the list of calls whose replica or paths differ from its
// chain's primary, with paths interned once per plan (ChainPathTable). Read
// them expanded with backup() / backups_of().
// Thread-compatible.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "pathcomp/solver/shortest_paths.h"
#include "pathcomp/solver/snapshot.h"

namespace geodesic::pathcomp {

struct ChainHop {
  int service = -1;
  int replica = -1;              // facility index running the call
  std::vector<int> links_there;  // from the previous facility; empty when the same
  std::vector<int> links_back;
  uint64_t network_rtt_us = 0;
  uint64_t service_time_us = 0;
  uint64_t latency_us() const { return network_rtt_us + service_time_us; }
  friend bool operator==(const ChainHop&, const ChainHop&) = default;
};

// Why a placement could not be made.
enum class ChainUnplacedWhy : uint8_t {
  kNone,              // placed
  kOriginDown,        // the failure is the chain's origin
  kPinnedToFailed,    // the call is pinned to the failed facility
  kPinBlocks,         // no replica the chain's pin allows can be reached and back
  kNoKnownReplica,    // the service has no replica in a known facility
  kOneReplica,        // the service's only replica is in the failed facility
  kUnreachable,       // no replica can be reached from the previous call's and back
};

struct ChainPlacement {
  bool placed = false;  // every call has a reachable replica
  uint64_t total_us = 0;
  bool within_budget = false;
  std::vector<ChainHop> hops;
  // When not placed: the first call that cannot be made, and why.
  int failed_call = -1;
  ChainUnplacedWhy why = ChainUnplacedWhy::kNone;
  int failed_facility = -1;        // kOriginDown, kPinnedToFailed, kOneReplica
  std::vector<int> unreached_from;  // kUnreachable: the facilities the call could be made from

  // Why, in words ("service retriever has one replica, in c"); empty when placed.
  std::string Reason(const Snapshot& snapshot, const Chain& chain) const;
  // Facility indices the placement uses (origin, transits, replicas), ascending.
  std::vector<int> Facilities(const Snapshot& snapshot, const Chain& chain) const;
  // Link indices on its paths, ascending.
  std::vector<int> Links() const;
  friend bool operator==(const ChainPlacement&, const ChainPlacement&) = default;
};

// A failure a backup avoids.
struct ChainFailure {
  enum class Kind : uint8_t { kFacility, kLink, kSrlg };
  Kind kind;
  int index;  // facility, link or SRLG index
  friend bool operator<(const ChainFailure& a, const ChainFailure& b) {
    return a.kind != b.kind ? a.kind < b.kind : a.index < b.index;
  }
  friend bool operator==(const ChainFailure&, const ChainFailure&) = default;
  Exclusion AsExclusion() const;
};

struct ChainBackup {
  ChainFailure failure;
  ChainPlacement placement;  // placed == false: no placement survives the failure
  friend bool operator==(const ChainBackup&, const ChainBackup&) = default;
};

// A facility without which a workload cannot run (or, for a chain, cannot
// run within its budget), and why.
struct FacilityDependency {
  enum class Why : uint8_t {
    kOneReplica,       // chain: service `service` has one replica, in the facility
    kPinnedTo,         // chain: service `service` is pinned to the facility
    kOnlyTransitToService,  // chain: the only transit between `from` and the replicas of `service`
    kOverBudget,       // chain: without the facility it takes `total_us`, over `budget_us`
    kOnlyTransit,      // elephant flow: the only transit between `from` and `to`
  };
  int workload;  // index for Snapshot::workload_id
  int facility;
  Why why;
  int from = -1;     // kOnlyTransitToService, kOnlyTransit: facility
  int to = -1;       // kOnlyTransit: facility
  int service = -1;  // kOneReplica, kPinnedTo, kOnlyTransitToService
  uint64_t total_us = 0, budget_us = 0;  // kOverBudget

  std::string Reason(const Snapshot& snapshot) const;
  friend bool operator==(const FacilityDependency&, const FacilityDependency&) = default;
};

// The order of ChainPlan::dependencies: by workload, facility, then reason.
bool DependencyBefore(const FacilityDependency& a, const FacilityDependency& b);

// Link paths, each stored once; path 0 is the empty path. Ids are stable
// while the table lives (it only grows).
class ChainPathTable {
 public:
  ChainPathTable();
  // A copy is another table, with the same ids so far: a new identity().
  ChainPathTable(const ChainPathTable& other);
  ChainPathTable& operator=(const ChainPathTable& other);
  ChainPathTable(ChainPathTable&&) noexcept = default;
  ChainPathTable& operator=(ChainPathTable&&) noexcept = default;
  // Tells tables apart for what remembers their ids (FailureDistances::PathId):
  // unique among the process's tables, kept by a move, new for a copy.
  uint64_t identity() const { return identity_; }
  // The id of the path with these links, added when new.
  int Intern(std::span<const int> links);
  std::span<const int> Links(int path) const {
    return {links_.data() + begin_[path], links_.data() + begin_[path + 1]};
  }
  int size() const { return static_cast<int>(begin_.size()) - 1; }
  size_t link_count() const { return links_.size(); }

 private:
  size_t Slot(uint64_t hash) const { return hash & (slots_.size() - 1); }
  void Grow();

  std::vector<int> links_;
  std::vector<uint32_t> begin_;   // path p: links_[begin_[p] .. begin_[p + 1])
  std::vector<uint64_t> hashes_;  // per path
  std::vector<int> slots_;        // open addressing: path id or -1
  uint64_t identity_;
};

class ChainPlan {
 public:
  // A call of a backup that differs from the primary's.
  struct ChangedHop {
    int call;
    int replica;
    int path_there, path_back;  // ChainPathTable ids
    uint64_t network_rtt_us;
    friend bool operator==(const ChangedHop&, const ChangedHop&) = default;
  };
  // One backup, compact: its changed hops are changed[first, first + count)
  // (unplaced kUnreachable: unreached_from[first, first + count), the
  // facilities the call could be made from).
  // 32 bytes: a plan has hundreds of thousands.
  struct CompactBackup {
    ChainFailure failure;
    int chain = -1;
    uint32_t first = 0;
    uint64_t total_us = 0;
    uint16_t count = 0;
    int16_t failed_call = -1;
    bool placed = false;
    bool within_budget = false;
    ChainUnplacedWhy why = ChainUnplacedWhy::kNone;
    // The placement's failed_facility: the failed one, for the reasons that
    // name it (the origin down is the failure of the origin).
    int failed_facility() const {
      return why == ChainUnplacedWhy::kOriginDown || why == ChainUnplacedWhy::kPinnedToFailed ||
                     why == ChainUnplacedWhy::kOneReplica
                 ? failure.index
                 : -1;
    }
  };
  // A call of a primary: where it runs, where it is called from (the
  // origin, then the previous call's replica), its paths.
  struct PrimaryCall {
    int replica;
    int from;
    int path_there, path_back;  // ChainPathTable ids
  };

  std::vector<ChainPlacement> primary;           // per Snapshot::chains()
  std::vector<FacilityDependency> dependencies;  // chains and elephant flows, DependencyBefore
  ChainPathTable paths;                          // of every backup and primary
  // Every backup, in no particular order (PlanAll writes them failure by
  // failure; a re-plan places some again where they are, and those of
  // chains placed anew where dropped ones were, in order, then appended);
  // a chain's, by failure, through backup_count()
  // and compact_backup() / backup(). chain < 0: dropped, no longer listed.
  std::vector<CompactBackup> backups;
  std::vector<ChangedHop> changed;
  std::vector<int> unreached_from;
  // The primaries' calls, one per call of the chain (unplaced: replica and
  // from -1): chain c's are primary_calls[call_begin[c] .. call_begin[c + 1]).
  std::vector<PrimaryCall> primary_calls;
  std::vector<uint32_t> call_begin = {0};

  int chain_count() const { return static_cast<int>(primary.size()); }
  int backup_count(int chain) const { return static_cast<int>(backup_begin_[chain + 1] - backup_begin_[chain]); }
  size_t total_backups() const { return backup_index_.size(); }
  // Backup i of a chain (by failure), compact and expanded.
  const CompactBackup& compact_backup(int chain, int i) const { return backups[backup_index_[backup_begin_[chain] + i]]; }
  uint32_t backup_position(int chain, int i) const { return backup_index_[backup_begin_[chain] + i]; }
  ChainBackup backup(int chain, int i) const;
  std::vector<ChainBackup> backups_of(int chain) const;

  // Building: AddPrimary for every chain in order (SetPrimary replaces one
  // later); backups appended to `backups`, each chain's in failure order
  // (AddBackup from a whole placement, or written directly); DropBackups
  // drops a chain's; then Finish(), which lists them by chain (and
  // compacts the storage when much of it was dropped or replaced; on up to
  // `threads` threads, the calling one among them, joined before it
  // returns: the same lists whatever the count).
  // Storage keeps room to grow (address space, not memory, until written),
  // so that a re-plan does not move the plan's: the changed hops two per
  // backup from PlanAll, twice what is live after a compaction; the backups
  // by BackupRoom() (a re-plan writes those of the chains it places anew
  // over the dropped ones first; a chain's detour can touch more failures
  // than its primary did).
  static size_t BackupRoom(size_t backups) { return backups / 16 + 64; }
  void AddPrimary(const Chain& chain, ChainPlacement placement);
  void SetPrimary(int c, ChainPlacement placement);
  void AddBackup(int chain, ChainFailure failure, const ChainPlacement& placement);
  void DropBackups(int chain);
  void Finish(int threads = 1);

  // Equal placements, backups and audit (paths compared by their links).
  friend bool operator==(const ChainPlan& a, const ChainPlan& b);

 private:
  void SetCalls(int c, const ChainPlacement& placement);
  void CompactStorage(size_t live_changed);

  std::vector<uint32_t> backup_begin_ = {0}, backup_index_;  // per chain, into backups
};

}  // namespace geodesic::pathcomp
