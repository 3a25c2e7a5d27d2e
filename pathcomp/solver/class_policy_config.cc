#include "pathcomp/solver/class_policy_config.h"

#include <string>

namespace geodesic::pathcomp {
namespace {

// {objective: mlu | latency | total-flow, utilization_target, mlu_slack,
// protection: none | links | srlgs | facilities, protection_limit}: what a
// priority class optimizes and what it is protected against.
McfClassPolicy ReadClassPolicy(config::ConfigReader& entry, bool objective_required) {
  McfClassPolicy policy;
  const std::string objective =
      objective_required ? entry.RequiredString("objective") : entry.OptionalString("objective", "mlu");
  if (objective == "total-flow") {
    policy.objective = McfObjective::kMaxFairThroughput;
  } else if (objective == "latency") {
    policy.objective = McfObjective::kMinLatency;
  } else if (objective != "mlu" && !objective.empty()) {
    entry.AddError("objective", "expected mlu, latency or total-flow, got \"" + objective + "\"");
  }
  policy.utilization_target = entry.OptionalDouble("utilization_target", policy.utilization_target, 0.01, 10);
  policy.mlu_slack = entry.OptionalDouble("mlu_slack", policy.mlu_slack, 0, 10);
  const std::string protection = entry.OptionalString("protection", "none");
  if (protection == "links") {
    policy.protection = ProtectionKind::kLinks;
  } else if (protection == "srlgs") {
    policy.protection = ProtectionKind::kSrlgs;
  } else if (protection == "facilities") {
    policy.protection = ProtectionKind::kFacilities;
  } else if (protection != "none") {
    entry.AddError("protection", "expected none, links, srlgs or facilities, got \"" + protection + "\"");
  }
  policy.protection_limit = entry.OptionalDouble("protection_limit", policy.protection_limit, 0.01, 10);
  if (policy.protection != ProtectionKind::kNone && policy.objective == McfObjective::kMaxFairThroughput) {
    entry.AddError("protection", "protection needs objective mlu or latency, not total-flow");
  }
  return policy;
}

}  // namespace

void ReadClassPolicies(config::ConfigReader& root, McfClassPolicies& policies) {
  for (auto& entry : root.OptionalMapList("elephant_objectives")) {
    const auto priority = static_cast<uint32_t>(entry.RequiredUint("priority", 0, 1'000'000));
    const McfClassPolicy policy = ReadClassPolicy(entry, /*objective_required=*/true);
    if (!policies.by_priority.emplace(priority, policy).second) {
      entry.AddError("priority", "priority " + std::to_string(priority) + " is listed twice");
    }
    entry.RejectUnknownKeys();
  }
  if (auto fallback = root.OptionalMap("elephant_default")) {
    policies.default_policy = ReadClassPolicy(*fallback, /*objective_required=*/false);
    fallback->RejectUnknownKeys();
  }
}

}  // namespace geodesic::pathcomp
