#include "pathcomp/solver/mcf_problem.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"

namespace geodesic::pathcomp {
namespace {

bool NonNegative(double value) { return std::isfinite(value) && value >= 0; }

absl::Status ValidateProtection(const McfProblem& problem) {
  const McfProtection& protection = problem.protection;
  const int arcs = static_cast<int>(problem.arcs.size());
  auto arc_ok = [arcs](int arc) { return arc >= 0 && arc < arcs; };
  auto node_ok = [&](int node) { return node >= 0 && node < problem.node_count; };
  for (size_t f = 0; f < protection.failures.size(); ++f) {
    const McfFailure& failure = protection.failures[f];
    for (int arc : failure.arcs) {
      if (!arc_ok(arc)) return absl::InvalidArgumentError(absl::StrCat("failure ", f, ": arc out of range"));
    }
    for (const McfReroute& reroute : failure.reroutes) {
      if (!node_ok(reroute.node) || !node_ok(reroute.dst)) {
        return absl::InvalidArgumentError(absl::StrCat("failure ", f, ": reroute node out of range"));
      }
      for (const auto& [arc, load] : reroute.arc_load) {
        if (!arc_ok(arc) || !NonNegative(load)) {
          return absl::InvalidArgumentError(absl::StrCat("failure ", f, ": reroute with a bad arc or load"));
        }
      }
    }
  }
  for (const auto& [priority, limits] : protection.limits) {
    if (problem.ObjectiveOf(priority) == McfObjective::kMaxFairThroughput) {
      return absl::InvalidArgumentError(
          absl::StrCat("class ", priority, ": protection needs objective mlu or latency, not total-flow"));
    }
    for (const McfFailureLimit& limit : limits) {
      if (limit.failure < 0 || limit.failure >= static_cast<int>(protection.failures.size()) || !arc_ok(limit.arc) ||
          !NonNegative(limit.limit_gbps)) {
        return absl::InvalidArgumentError(absl::StrCat("class ", priority, ": a failure limit with a bad failure, arc or limit"));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateMcfProblem(const McfProblem& problem) {
  const int n = problem.node_count;
  if (n < 0) return absl::InvalidArgumentError("negative node count");
  auto in_range = [n](int node) { return node >= 0 && node < n; };
  for (size_t i = 0; i < problem.arcs.size(); ++i) {
    const McfArc& arc = problem.arcs[i];
    if (!in_range(arc.src) || !in_range(arc.dst)) {
      return absl::InvalidArgumentError(absl::StrCat("arc ", i, ": node out of range"));
    }
    if (arc.src == arc.dst) return absl::InvalidArgumentError(absl::StrCat("arc ", i, ": self-loop"));
    if (!std::isfinite(arc.capacity_gbps) || !NonNegative(arc.cost_us)) {
      return absl::InvalidArgumentError(absl::StrCat("arc ", i, ": bad capacity or cost"));
    }
  }
  for (size_t i = 0; i < problem.commodities.size(); ++i) {
    const McfCommodity& commodity = problem.commodities[i];
    if (!in_range(commodity.src) || !in_range(commodity.dst)) {
      return absl::InvalidArgumentError(absl::StrCat("commodity ", i, ": node out of range"));
    }
    if (commodity.src == commodity.dst) {
      return absl::InvalidArgumentError(absl::StrCat("commodity ", i, ": src equals dst"));
    }
    if (!NonNegative(commodity.demand_gbps)) {
      return absl::InvalidArgumentError(absl::StrCat("commodity ", i, ": bad demand"));
    }
  }
  for (const auto* limits : {&problem.node_send_gbps, &problem.node_receive_gbps}) {
    if (!limits->empty() && static_cast<int>(limits->size()) != n) {
      return absl::InvalidArgumentError("fabric limits must be empty or one per node");
    }
    for (double limit : *limits) {
      if (!NonNegative(limit) && !std::isinf(limit)) {
        return absl::InvalidArgumentError("bad fabric limit");
      }
    }
  }
  auto valid_policy = [](const McfClassPolicy& policy) {
    return std::isfinite(policy.utilization_target) && policy.utilization_target > 0 &&
           policy.utilization_target <= 10 && std::isfinite(policy.mlu_slack) && policy.mlu_slack >= 0 &&
           policy.mlu_slack <= 10 && std::isfinite(policy.protection_limit) && policy.protection_limit > 0 &&
           policy.protection_limit <= 10;
  };
  auto protection_refused = [](const McfClassPolicy& policy) {
    return policy.protection != ProtectionKind::kNone && policy.objective == McfObjective::kMaxFairThroughput;
  };
  constexpr char kRanges[] = "utilization_target and protection_limit must be in (0, 10], mlu_slack in [0, 10]";
  constexpr char kProtectedObjective[] = "protection needs objective mlu or latency, not total-flow";
  if (!valid_policy(problem.policies.default_policy)) {
    return absl::InvalidArgumentError(absl::StrCat("default class policy: ", kRanges));
  }
  if (protection_refused(problem.policies.default_policy)) {
    return absl::InvalidArgumentError(absl::StrCat("default class policy: ", kProtectedObjective));
  }
  for (const auto& [priority, policy] : problem.policies.by_priority) {
    if (!valid_policy(policy)) return absl::InvalidArgumentError(absl::StrCat("class ", priority, ": ", kRanges));
    if (protection_refused(policy)) {
      return absl::InvalidArgumentError(absl::StrCat("class ", priority, ": ", kProtectedObjective));
    }
  }
  return ValidateProtection(problem);
}

const char* ProtectionKindName(ProtectionKind kind) {
  switch (kind) {
    case ProtectionKind::kNone: return "none";
    case ProtectionKind::kLinks: return "links";
    case ProtectionKind::kSrlgs: return "srlgs";
    case ProtectionKind::kFacilities: return "facilities";
  }
  return "unknown";
}

const char* ObjectiveName(McfObjective objective) {
  switch (objective) {
    case McfObjective::kMinMaxUtilization: return "mlu";
    case McfObjective::kMaxFairThroughput: return "total-flow";
    case McfObjective::kMinLatency: return "latency";
  }
  return "unknown";
}

double LatencyUtilizationCap(const McfClassPolicy& policy, double optimum) {
  return std::max(policy.utilization_target, (1 + policy.mlu_slack) * optimum);
}

McfProblem McfProblemFromSnapshot(const Snapshot& snapshot) {
  McfProblem problem;
  problem.node_count = snapshot.facility_count();
  problem.arcs.reserve(snapshot.link_count());
  for (int link = 0; link < snapshot.link_count(); ++link) {
    const LinkState& state = snapshot.link_state(link);
    problem.arcs.push_back(McfArc{
        .src = snapshot.link_src(link),
        .dst = snapshot.link_dst(link),
        .capacity_gbps = state.usable ? snapshot.link_capacity_gbps(link) : 0.0,
        .cost_us = static_cast<double>(state.cost_us),
    });
  }
  problem.commodities.reserve(snapshot.demands().size());
  for (const Demand& demand : snapshot.demands()) {
    problem.commodities.push_back(McfCommodity{
        .src = demand.src, .dst = demand.dst, .demand_gbps = demand.gbps, .priority = demand.priority});
  }
  return problem;
}

}  // namespace geodesic::pathcomp
