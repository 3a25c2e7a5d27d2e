#include "state/kind.h"

namespace geodesic::state {

std::string_view KindName(Kind kind) {
  switch (kind) {
    case Kind::kFacility:
      return "facility";
    case Kind::kNode:
      return "node";
    case Kind::kLink:
      return "link";
    case Kind::kService:
      return "service";
    case Kind::kWorkload:
      return "workload";
    case Kind::kIntent:
      return "intent";
    case Kind::kPlan:
      return "plan";
    case Kind::kAgentSession:
      return "agent_session";
    case Kind::kMeta:
      return "meta";
    case Kind::kFabric:
      return "fabric";
    case Kind::kLinkHealth:
      return "link_health";
    case Kind::kPlanHistory:
      return "plan_history";
    case Kind::kAudit:
      return "audit";
    case Kind::kLinkBaseline:
      return "link_baseline";
  }
  return "";
}

std::optional<Kind> KindFromName(std::string_view name) {
  for (Kind kind : kAllKinds) {
    if (KindName(kind) == name) return kind;
  }
  return std::nullopt;
}

bool JournaledByDigest(Kind kind) { return kind == Kind::kPlanHistory; }

std::string EntityKey(Kind kind, std::string_view id) {
  const std::string_view name = KindName(kind);
  std::string key;
  key.reserve(name.size() + 1 + id.size());
  key.append(name).append("/").append(id);
  return key;
}

}  // namespace geodesic::state
