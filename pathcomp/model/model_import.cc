// Model::ImportInventory and Model::ApplyConfiguredInventory: replacing the
// inventory in one journaled commit, keeping what was measured.
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "pathcomp/model/entity_key.h"
#include "pathcomp/model/entity_rules.h"
#include "pathcomp/model/model.h"
#include "topology/topology_writer.h"

namespace geodesic::pathcomp {
namespace {

using state::Kind;

constexpr std::string_view kConfiguredInventoryKey = "configured_inventory";

bool SameMessage(const google::protobuf::MessageLite& a, const google::protobuf::MessageLite& b) {
  return a.SerializeAsString() == b.SerializeAsString();
}

// Makes `next` (a copy of the current entities of `kind`) hold `wanted`:
// entries are added or replaced by key, and, when `remove_missing`, the others
// removed. `merge(stored, wanted)` carries runtime state over before comparing.
template <typename T, typename Merge>
ImportCount Sync(Kind kind, std::map<std::string, T>& next, const std::vector<T>& wanted,
                 bool remove_missing, Merge merge, state::ChangeSet& changes) {
  ImportCount count{kind};
  std::set<std::string> keep;
  for (T item : wanted) {
    const std::string key = EntityKeyOf(item);
    keep.insert(key);
    auto it = next.find(key);
    if (it == next.end()) {
      ++count.added;
    } else {
      merge(it->second, item);
      if (SameMessage(it->second, item)) {
        ++count.unchanged;
        continue;
      }
      ++count.changed;
    }
    changes.Put(kind, key, item);
    next[key] = std::move(item);
  }
  if (remove_missing) {
    for (auto it = next.begin(); it != next.end();) {
      if (keep.count(it->first)) {
        ++it;
        continue;
      }
      ++count.removed;
      changes.Delete(kind, it->first);
      it = next.erase(it);
    }
  }
  return count;
}

// FNV-1a, 64 bits: stable across builds and platforms, enough to notice an edit.
std::string ContentHash(const std::string& text) {
  uint64_t hash = 14695981039346656037ull;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  return absl::StrFormat("%016x", hash);
}

}  // namespace

absl::StatusOr<ImportResult> Model::ImportInventory(const topology::Topology& inventory,
                                                    const std::string& cause,
                                                    const ImportOptions& options) {
  std::lock_guard order(write_order_mu_);
  std::lock_guard lock(mu_);
  return ImportInventoryLocked(inventory, cause, options, {});
}

absl::StatusOr<ImportResult> Model::ImportInventoryLocked(
    const topology::Topology& inventory, const std::string& cause, const ImportOptions& options,
    const std::vector<std::pair<std::string, std::string>>& meta) {
  if (cause.empty()) return absl::InvalidArgumentError("an import needs a cause");
  state::ChangeSet changes(cause);
  auto no_merge = [](const auto&, auto&) {};
  Entities next = entities_;
  ImportResult result;
  result.counts.push_back(Sync(Kind::kFacility, next.facilities, inventory.facilities, true, no_merge, changes));
  result.counts.push_back(Sync(Kind::kNode, next.nodes, inventory.nodes, true, no_merge, changes));
  result.counts.push_back(Sync(Kind::kLink, next.links, inventory.links, true,
                               [](const v1::Link& stored, v1::Link& wanted) {
                                 // Measurements outlive inventory edits. Copy presence
                                 // too: an empty `health {}` on a never-measured link
                                 // would make every re-import a change.
                                 if (stored.has_health()) {
                                   *wanted.mutable_health() = stored.health();
                                 } else {
                                   wanted.clear_health();
                                 }
                               },
                               changes));
  for (const auto& [id, link] : entities_.links) {
    if (!next.links.count(id)) changes.Delete(Kind::kLinkHealth, id);  // its measurements go with it
  }
  result.counts.push_back(Sync(Kind::kFabric, next.fabrics, inventory.fabrics, true,
                               [](const v1::Fabric& stored, v1::Fabric& wanted) {
                                 *wanted.mutable_plane_health() = stored.plane_health();
                               },
                               changes));
  result.counts.push_back(Sync(Kind::kService, next.services, inventory.services, true, no_merge, changes));
  result.counts.push_back(Sync(Kind::kWorkload, next.workloads, inventory.workloads, options.replace_workloads,
                               no_merge, changes));
  // What stays must hold on what the import leaves.
  if (auto check = CheckReferencesAfterImport(next, options.replace_workloads); !check.ok()) return check;
  if (options.dry_run || changes.empty()) return result;

  // Agents report changes only: a link that is new to the model would stay
  // unknown until the next change. Resetting the sessions of its facility
  // makes the agent start over with a full snapshot.
  std::set<std::string> resync;
  for (const auto& [id, link] : next.links) {
    if (!entities_.links.count(id)) resync.insert(link.src_facility_id());
  }
  auto sessions = sessions_;
  for (auto it = sessions.begin(); it != sessions.end();) {
    if (!resync.count(it->second.facility_id())) {
      ++it;
      continue;
    }
    changes.Delete(Kind::kAgentSession, it->first);
    it = sessions.erase(it);
  }
  result.resync_facilities.assign(resync.begin(), resync.end());

  for (const auto& [key, value] : meta) changes.PutRaw(Kind::kMeta, key, value);
  auto committed = store_->Commit(changes);
  if (!committed.ok()) return committed.status();
  result.journal_seq = *committed;
  // Unwritten measurements follow their links into the new entities (those
  // of a removed link go: there is no record left to write them to).
  std::vector<std::pair<UnwrittenMeasurements*, std::vector<std::string>>> unwritten_ids;
  for (auto& [key, unwritten] : unwritten_) {
    std::vector<std::string>& ids = unwritten_ids.emplace_back(&unwritten, std::vector<std::string>()).second;
    for (const v1::Link* link : unwritten.links) ids.push_back(link->id());
    unwritten.links.clear();
  }
  entities_ = std::move(next);
  IndexLinksLocked();
  for (auto& [unwritten, ids] : unwritten_ids) {
    for (const std::string& id : ids) {
      if (const v1::Link* link = FindLinkLocked(id)) unwritten->links.insert(link);
    }
  }
  sessions_ = std::move(sessions);
  InvalidateSnapshot();
  return result;
}

absl::StatusOr<std::optional<ImportResult>> Model::ApplyConfiguredInventory(
    const topology::Topology& inventory, const std::string& path) {
  // The canonical form, so an edit that changes only comments or layout is no change.
  const std::string hash = ContentHash(topology::WriteTopologyYaml(inventory));
  std::lock_guard order(write_order_mu_);
  std::lock_guard lock(mu_);
  auto applied = store_->GetRaw(Kind::kMeta, kConfiguredInventoryKey);
  if (applied.ok() && *applied == hash) return std::nullopt;
  if (!applied.ok() && !absl::IsNotFound(applied.status())) return applied.status();
  auto result = ImportInventoryLocked(inventory, absl::StrCat("inventory file ", path, " (", hash, ")"),
                                      {}, {{std::string(kConfiguredInventoryKey), hash}});
  if (!result.ok()) return result.status();
  if (!result->changed()) {
    // Nothing to change, but remember the file so the next start skips it.
    state::ChangeSet changes(absl::StrCat("inventory file ", path, " (", hash, ") already applied"));
    changes.PutRaw(Kind::kMeta, kConfiguredInventoryKey, hash);
    auto committed = store_->Commit(changes);
    if (!committed.ok()) return committed.status();
  }
  return result;
}

}  // namespace geodesic::pathcomp
