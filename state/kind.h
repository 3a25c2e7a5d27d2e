#pragma once
// The kinds of entity pathcomp keeps in its store. Each kind is one RocksDB
// column family; its name is also the key prefix ("<kind>/<id>", DESIGN §3) and
// is what the journal records, so names are persistent: never rename one.
#include <array>
#include <optional>
#include <string>
#include <string_view>

namespace geodesic::state {

// To add a kind: append it here, to kAllKinds and to KindName.
enum class Kind {
  kFacility,
  kNode,
  kLink,
  kService,
  kWorkload,
  kIntent,
  kPlan,
  kAgentSession,
  kMeta,
  kFabric,
  kLinkHealth,  // a link's measured health, apart from its inventory record
  kPlanHistory,  // past plans by zero-padded generation (the newest ones)
  kAudit,        // the operator audit log by zero-padded seq
  kLinkBaseline, // a link's RTT baseline (pathcomp/health/rtt_baseline.h), by link id
};

// Every kind, in enum order.
inline constexpr std::array<Kind, 14> kAllKinds = {
    Kind::kFacility, Kind::kNode,         Kind::kLink, Kind::kService, Kind::kWorkload,    Kind::kIntent,
    Kind::kPlan,     Kind::kAgentSession, Kind::kMeta, Kind::kFabric,  Kind::kLinkHealth,  Kind::kPlanHistory,
    Kind::kAudit,    Kind::kLinkBaseline,
};

// "facility", "node", "link", "service", "workload", "intent", "plan",
// "agent_session", "meta", "fabric", "link_health", "plan_history", "audit", "link_baseline". Returns "" for a value
// outside the enum.
std::string_view KindName(Kind kind);

// The inverse of KindName; nullopt for an unknown name.
std::optional<Kind> KindFromName(std::string_view name);

// Whether the journal records a put of `kind` by its value's size and
// SHA-256 rather than by its bytes: true for plan_history only, whose values
// are whole plans (178 MB on a 754-facility backbone), are written once per
// plan and live in their column family as long as the history keeps them.
// Copied into the journal, every plan stayed on disk forever, and a page of
// `tectl journal` read every plan it listed. Persistent: journal entries
// written with it (schema 2 on, rocks_migration.h) hold the digest.
bool JournaledByDigest(Kind kind);

// "<kind>/<id>", e.g. "link/iad-ord-1": the entity's RocksDB key (DESIGN §3),
// and how messages name an entity.
std::string EntityKey(Kind kind, std::string_view id);

}  // namespace geodesic::state
