#include "pathcomp/solver/chain_plan.h"

#include <algorithm>
#include <atomic>
#include <set>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "pathcomp/solver/internal/on_threads.h"

namespace geodesic::pathcomp {
namespace {

std::string FacilityList(const Snapshot& snapshot, const std::vector<int>& facilities) {
  std::vector<std::string> ids;
  for (int f : facilities) ids.push_back(snapshot.facility_id(f));
  return absl::StrJoin(ids, ", ");
}

uint64_t HashLinks(std::span<const int> links) {
  uint64_t hash = 0x9e3779b97f4a7c15ull ^ links.size();
  for (int link : links) {
    hash ^= static_cast<uint64_t>(static_cast<uint32_t>(link)) + 0x9e3779b97f4a7c15ull + (hash << 6) + (hash >> 2);
    hash *= 0xff51afd7ed558ccdull;
  }
  return hash ^ (hash >> 29);
}

}  // namespace

std::string ChainPlacement::Reason(const Snapshot& snapshot, const Chain& chain) const {
  if (placed || why == ChainUnplacedWhy::kNone) return "";
  if (why == ChainUnplacedWhy::kOriginDown) {
    return absl::StrCat("the origin ", snapshot.facility_id(chain.origin), " is down");
  }
  const int service = chain.services[failed_call];
  const std::string& name = snapshot.service_id(service);
  switch (why) {
    case ChainUnplacedWhy::kPinnedToFailed:
      return absl::StrCat("service ", name, " is pinned to ", snapshot.facility_id(failed_facility));
    case ChainUnplacedWhy::kPinBlocks:
      return absl::StrCat("no replica of service ", name, " the chain's pin allows can be reached and back");
    case ChainUnplacedWhy::kNoKnownReplica:
      return absl::StrCat("service ", name, " has no replica in a known facility");
    case ChainUnplacedWhy::kOneReplica:
      return absl::StrCat("service ", name, " has one replica, in ", snapshot.facility_id(failed_facility));
    case ChainUnplacedWhy::kUnreachable:
      return absl::StrCat("no replica of service ", name, " (",
                          FacilityList(snapshot, snapshot.service(service).facilities), ") can be reached from ",
                          FacilityList(snapshot, unreached_from), " and back");
    default: return "";
  }
}

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

std::string FacilityDependency::Reason(const Snapshot& snapshot) const {
  const std::string& id = snapshot.facility_id(facility);
  switch (why) {
    case Why::kOneReplica:
      return absl::StrCat("service ", snapshot.service_id(service), " has one replica, in ", id);
    case Why::kPinnedTo:
      return absl::StrCat("service ", snapshot.service_id(service), " is pinned to ", id);
    case Why::kOnlyTransitToService:
      return absl::StrCat("facility ", id, " is the only transit between ", snapshot.facility_id(from),
                          " and the replicas of service ", snapshot.service_id(service));
    case Why::kOverBudget:
      return absl::StrCat("without facility ", id, " the chain takes ", total_us, " us, over its budget of ",
                          budget_us, " us");
    case Why::kOnlyTransit:
      return absl::StrCat("facility ", id, " is the only transit between ", snapshot.facility_id(from), " and ",
                          snapshot.facility_id(to));
  }
  return "";
}

bool DependencyBefore(const FacilityDependency& a, const FacilityDependency& b) {
  return std::tie(a.workload, a.facility, a.why, a.from, a.to, a.service, a.total_us, a.budget_us) <
         std::tie(b.workload, b.facility, b.why, b.from, b.to, b.service, b.total_us, b.budget_us);
}

namespace {
std::atomic<uint64_t> next_table_identity{1};
}  // namespace

ChainPathTable::ChainPathTable()
    : begin_{0, 0}, hashes_{HashLinks({})}, slots_(64, -1), identity_(next_table_identity++) {
  slots_[Slot(hashes_[0])] = 0;
}

ChainPathTable::ChainPathTable(const ChainPathTable& other)
    : links_(other.links_),
      begin_(other.begin_),
      hashes_(other.hashes_),
      slots_(other.slots_),
      identity_(next_table_identity++) {}

ChainPathTable& ChainPathTable::operator=(const ChainPathTable& other) {
  if (this == &other) return *this;
  links_ = other.links_;
  begin_ = other.begin_;
  hashes_ = other.hashes_;
  slots_ = other.slots_;
  identity_ = next_table_identity++;
  return *this;
}

void ChainPathTable::Grow() {
  slots_.assign(slots_.size() * 2, -1);
  for (int path = 0; path < size(); ++path) {
    size_t slot = Slot(hashes_[path]);
    while (slots_[slot] >= 0) slot = (slot + 1) & (slots_.size() - 1);
    slots_[slot] = path;
  }
}

int ChainPathTable::Intern(std::span<const int> links) {
  const uint64_t hash = HashLinks(links);
  size_t slot = Slot(hash);
  for (; slots_[slot] >= 0; slot = (slot + 1) & (slots_.size() - 1)) {
    const int path = slots_[slot];
    if (hashes_[path] != hash) continue;
    const std::span<const int> known = Links(path);
    if (std::equal(known.begin(), known.end(), links.begin(), links.end())) return path;
  }
  const int path = size();
  links_.insert(links_.end(), links.begin(), links.end());
  begin_.push_back(static_cast<uint32_t>(links_.size()));
  hashes_.push_back(hash);
  slots_[slot] = path;
  if (2 * static_cast<size_t>(size()) > slots_.size()) Grow();
  return path;
}

void ChainPlan::AddPrimary(const Chain& chain, ChainPlacement placement) {
  const int c = chain_count();
  primary_calls.resize(primary_calls.size() + chain.services.size(), PrimaryCall{-1, chain.origin, 0, 0});
  call_begin.push_back(static_cast<uint32_t>(primary_calls.size()));
  primary.emplace_back();
  SetPrimary(c, std::move(placement));
}

void ChainPlan::SetPrimary(int c, ChainPlacement placement) {
  SetCalls(c, placement);
  primary[c] = std::move(placement);
}

void ChainPlan::SetCalls(int c, const ChainPlacement& placement) {
  PrimaryCall* calls = &primary_calls[call_begin[c]];
  const size_t count = call_begin[c + 1] - call_begin[c];
  for (size_t call = 0; call < count; ++call) {
    if (!placement.placed) {
      calls[call].replica = -1;
      if (call > 0) calls[call].from = -1;
      calls[call].path_there = calls[call].path_back = 0;
      continue;
    }
    const ChainHop& hop = placement.hops[call];
    if (call > 0) calls[call].from = placement.hops[call - 1].replica;
    calls[call].replica = hop.replica;
    calls[call].path_there = paths.Intern(hop.links_there);
    calls[call].path_back = paths.Intern(hop.links_back);
  }
}

void ChainPlan::DropBackups(int chain) {
  for (int i = 0; i < backup_count(chain); ++i) backups[backup_position(chain, i)].chain = -1;
}

void ChainPlan::AddBackup(int chain, ChainFailure failure, const ChainPlacement& placement) {
  CompactBackup& backup = backups.emplace_back();
  backup.failure = failure;
  backup.chain = chain;
  backup.total_us = placement.total_us;
  backup.placed = placement.placed;
  backup.within_budget = placement.within_budget;
  backup.failed_call = static_cast<int16_t>(placement.failed_call);
  backup.why = placement.why;
  if (!placement.placed) {
    backup.first = static_cast<uint32_t>(unreached_from.size());
    backup.count = static_cast<uint16_t>(placement.unreached_from.size());
    unreached_from.insert(unreached_from.end(), placement.unreached_from.begin(), placement.unreached_from.end());
    return;
  }
  backup.first = static_cast<uint32_t>(changed.size());
  const std::vector<ChainHop>& was = primary[chain].hops;
  const PrimaryCall* calls = &primary_calls[call_begin[chain]];
  for (size_t call = 0; call < placement.hops.size(); ++call) {
    const ChainHop& hop = placement.hops[call];
    const int there = paths.Intern(hop.links_there), back = paths.Intern(hop.links_back);
    if (hop.replica == was[call].replica && there == calls[call].path_there && back == calls[call].path_back) continue;
    changed.push_back({static_cast<int>(call), hop.replica, there, back, hop.network_rtt_us});
    ++backup.count;
  }
}

void ChainPlan::Finish(int threads) {
  const int chains = chain_count();
  const size_t stored = backups.size();
  // A counting sort by chain, the storage cut into parts (one per thread):
  // each part counts its backups per chain, then writes them from where
  // the parts before it end.
  constexpr size_t kBackupsPerPart = 1 << 16;  // fewer are counted before a thread would start
  const size_t parts = std::clamp<size_t>(stored / kBackupsPerPart, 1, static_cast<size_t>(std::max(threads, 1)));
  std::vector<std::vector<uint32_t>> from(parts, std::vector<uint32_t>(static_cast<size_t>(chains), 0));
  std::vector<size_t> live(parts, 0), live_changed(parts, 0);
  auto part_range = [&](size_t part) { return std::pair{stored * part / parts, stored * (part + 1) / parts}; };
  internal::OnThreads(static_cast<int>(parts), [&](int t) {
    const size_t part = static_cast<size_t>(t);
    const auto [begin, end] = part_range(part);
    std::vector<uint32_t>& count = from[part];
    for (size_t i = begin; i < end; ++i) {
      const CompactBackup& backup = backups[i];
      if (backup.chain < 0) continue;
      ++count[static_cast<size_t>(backup.chain)];
      ++live[part];
      live_changed[part] += backup.placed ? backup.count : 0;
    }
  });
  // Each part's counts become where its backups of each chain go.
  backup_begin_.assign(chains + 1, 0);
  for (int c = 0; c < chains; ++c) {
    uint32_t at = backup_begin_[c];
    for (std::vector<uint32_t>& part : from) {
      const uint32_t count = part[static_cast<size_t>(c)];
      part[static_cast<size_t>(c)] = at;
      at += count;
    }
    backup_begin_[c + 1] = at;
  }
  size_t all_live = 0, all_live_changed = 0;
  for (size_t part = 0; part < parts; ++part) {
    all_live += live[part];
    all_live_changed += live_changed[part];
  }
  backup_index_.resize(all_live);
  internal::OnThreads(static_cast<int>(parts), [&](int t) {
    const size_t part = static_cast<size_t>(t);
    const auto [begin, end] = part_range(part);
    std::vector<uint32_t>& fill = from[part];
    for (size_t i = begin; i < end; ++i) {
      if (backups[i].chain < 0) continue;
      backup_index_[fill[static_cast<size_t>(backups[i].chain)]++] = static_cast<uint32_t>(i);
    }
  });
  // Dropped and replaced backups stay in storage until they are as many as
  // the live ones: then the live ones are copied out, chain by chain.
  if (stored > 2 * all_live || changed.size() > 2 * all_live_changed) CompactStorage(all_live_changed);
}

void ChainPlan::CompactStorage(size_t live_changed) {
  std::vector<CompactBackup> kept_backups;
  std::vector<ChangedHop> kept_changed;
  std::vector<int> kept_from;
  kept_backups.reserve(backup_index_.size() + BackupRoom(backup_index_.size()));
  kept_changed.reserve(2 * live_changed);
  for (uint32_t position : backup_index_) {
    CompactBackup backup = backups[position];
    if (backup.placed) {
      const uint32_t first = static_cast<uint32_t>(kept_changed.size());
      kept_changed.insert(kept_changed.end(), changed.begin() + backup.first, changed.begin() + backup.first + backup.count);
      backup.first = first;
    } else {
      const uint32_t first = static_cast<uint32_t>(kept_from.size());
      kept_from.insert(kept_from.end(), unreached_from.begin() + backup.first,
                       unreached_from.begin() + backup.first + backup.count);
      backup.first = first;
    }
    kept_backups.push_back(backup);
  }
  backups = std::move(kept_backups);
  changed = std::move(kept_changed);
  unreached_from = std::move(kept_from);
  for (uint32_t i = 0; i < backup_index_.size(); ++i) backup_index_[i] = i;  // chain by chain now
}

ChainBackup ChainPlan::backup(int chain, int i) const {
  const CompactBackup& compact = compact_backup(chain, i);
  ChainBackup out{compact.failure, {}};
  ChainPlacement& placement = out.placement;
  placement.placed = compact.placed;
  placement.total_us = compact.total_us;
  placement.within_budget = compact.within_budget;
  placement.failed_call = compact.failed_call;
  placement.why = compact.why;
  placement.failed_facility = compact.failed_facility();
  if (!compact.placed) {
    if (compact.why == ChainUnplacedWhy::kUnreachable) {
      placement.unreached_from.assign(unreached_from.begin() + compact.first,
                                      unreached_from.begin() + compact.first + compact.count);
    }
    return out;
  }
  placement.hops = primary[chain].hops;
  for (uint32_t k = compact.first; k < compact.first + compact.count; ++k) {
    const ChangedHop& hop_change = changed[k];
    ChainHop& hop = placement.hops[hop_change.call];
    hop.replica = hop_change.replica;
    const std::span<const int> there = paths.Links(hop_change.path_there), back = paths.Links(hop_change.path_back);
    hop.links_there.assign(there.begin(), there.end());
    hop.links_back.assign(back.begin(), back.end());
    hop.network_rtt_us = hop_change.network_rtt_us;
  }
  return out;
}

std::vector<ChainBackup> ChainPlan::backups_of(int chain) const {
  std::vector<ChainBackup> out;
  out.reserve(backup_count(chain));
  for (int i = 0; i < backup_count(chain); ++i) out.push_back(backup(chain, i));
  return out;
}

bool operator==(const ChainPlan& a, const ChainPlan& b) {
  if (a.primary != b.primary || a.dependencies != b.dependencies || a.total_backups() != b.total_backups()) {
    return false;
  }
  auto same_path = [&](int pa, int pb) {
    const auto la = a.paths.Links(pa), lb = b.paths.Links(pb);
    return std::equal(la.begin(), la.end(), lb.begin(), lb.end());
  };
  for (int c = 0; c < a.chain_count(); ++c) {
    if (a.backup_count(c) != b.backup_count(c)) return false;
    for (int i = 0; i < a.backup_count(c); ++i) {
      const ChainPlan::CompactBackup& p = a.compact_backup(c, i);
      const ChainPlan::CompactBackup& q = b.compact_backup(c, i);
      if (!(p.failure == q.failure) || p.chain != q.chain || p.total_us != q.total_us || p.count != q.count ||
          p.failed_call != q.failed_call || p.placed != q.placed || p.within_budget != q.within_budget ||
          p.why != q.why) {
        return false;
      }
      for (uint32_t k = 0; k < p.count; ++k) {
        if (!p.placed) {
          if (a.unreached_from[p.first + k] != b.unreached_from[q.first + k]) return false;
          continue;
        }
        const ChainPlan::ChangedHop& g = a.changed[p.first + k];
        const ChainPlan::ChangedHop& h = b.changed[q.first + k];
        if (g.call != h.call || g.replica != h.replica || g.network_rtt_us != h.network_rtt_us ||
            !same_path(g.path_there, h.path_there) || !same_path(g.path_back, h.path_back)) {
          return false;
        }
      }
    }
  }
  return true;
}

}  // namespace geodesic::pathcomp
