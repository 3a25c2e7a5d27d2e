#include "pathcomp/model/entity_rules.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "entity/entity_id.h"
#include "topology/topology.h"

namespace geodesic::pathcomp {
namespace {

bool SameMessage(const google::protobuf::MessageLite& a, const google::protobuf::MessageLite& b) {
  return a.SerializeAsString() == b.SerializeAsString();
}

absl::Status CheckPin(const Entities& entities, const v1::Pin& pin) {
  auto workload = entities.workloads.find(pin.workload_id());
  if (workload == entities.workloads.end()) {
    return absl::NotFoundError(absl::StrCat("unknown workload ", pin.workload_id()));
  }
  if (!workload->second.has_chain()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "workload ", pin.workload_id(),
        " is an elephant flow: it follows per-destination routes that every flow to its prefix shares, so a pin "
        "cannot hold it alone on a path; only agent chains can be pinned (drain links or facilities instead)"));
  }
  const v1::AgentChain& chain = workload->second.chain();
  if (pin.path_facility_ids().empty() == pin.allowed_facility_ids().empty()) {
    return absl::InvalidArgumentError("a pin gives a path or a facility set (one of them)");
  }
  if (!pin.path_facility_ids().empty()) {
    if (pin.path_facility_ids_size() != chain.service_ids_size()) {
      return absl::InvalidArgumentError(absl::StrCat("chain ", pin.workload_id(), " makes ", chain.service_ids_size(),
                                                     " calls; a path pin names one replica facility per call, not ",
                                                     pin.path_facility_ids_size()));
    }
    for (int call = 0; call < chain.service_ids_size(); ++call) {
      const std::string& facility = pin.path_facility_ids(call);
      auto service = entities.services.find(chain.service_ids(call));
      const bool hosted = service != entities.services.end() &&
                          std::find(service->second.replica_facility_ids().begin(),
                                    service->second.replica_facility_ids().end(),
                                    facility) != service->second.replica_facility_ids().end();
      if (!hosted) {
        return absl::InvalidArgumentError(absl::StrCat("call ", call + 1, " (service ", chain.service_ids(call),
                                                       ") has no replica in ", facility));
      }
    }
  }
  for (const std::string& facility : pin.allowed_facility_ids()) {
    if (!entities.facilities.count(facility)) return absl::NotFoundError(absl::StrCat("unknown facility ", facility));
  }
  return absl::OkStatus();
}

absl::Status CheckDrainTarget(const Entities& entities, const v1::Drain& drain) {
  const auto& target = drain.target();
  switch (target.kind_case()) {
    case v1::Target::kLinkId:
      if (!entities.links.count(target.link_id())) {
        return absl::NotFoundError(absl::StrCat("unknown link ", target.link_id()));
      }
      break;
    case v1::Target::kNodeId:
      if (!entities.nodes.count(target.node_id())) {
        return absl::NotFoundError(absl::StrCat("unknown node ", target.node_id()));
      }
      break;
    case v1::Target::kFacilityId:
      if (!entities.facilities.count(target.facility_id())) {
        return absl::NotFoundError(absl::StrCat("unknown facility ", target.facility_id()));
      }
      break;
    case v1::Target::KIND_NOT_SET:
      return absl::InvalidArgumentError("the drain names no target");
  }
  if (!drain.plane_set()) return absl::OkStatus();
  if (target.kind_case() != v1::Target::kFacilityId) {
    return absl::InvalidArgumentError("a plane drain names a facility (whose fabric has the plane)");
  }
  auto fabric = entities.fabrics.find(target.facility_id());
  if (fabric == entities.fabrics.end()) {
    return absl::NotFoundError(absl::StrCat("facility ", target.facility_id(), " has no fabric in the model"));
  }
  if (drain.plane() >= fabric->second.planes()) {
    return absl::InvalidArgumentError(absl::StrCat("the fabric of ", target.facility_id(), " has ",
                                                   fabric->second.planes(), " planes; there is no plane ",
                                                   drain.plane()));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckWorkload(const Entities& entities, const v1::Workload& workload) {
  if (!entity::IsValidEntityId(workload.id())) {
    return absl::InvalidArgumentError(absl::StrCat("workload id \"", workload.id(),
                                                   "\" is not valid (", entity::kEntityIdRule, ")"));
  }
  if (!workload.tenant().empty() && !entity::IsValidEntityId(workload.tenant())) {
    return absl::InvalidArgumentError(absl::StrCat("workload ", workload.id(), ": tenant \"",
                                                   workload.tenant(), "\" is not a valid id (",
                                                   entity::kEntityIdRule, ")"));
  }
  if (workload.has_elephant()) {
    const auto& flow = workload.elephant();
    if (!entities.facilities.count(flow.src_facility_id())) {
      return absl::NotFoundError(absl::StrCat("unknown facility ", flow.src_facility_id()));
    }
    if (!topology::IsValidPrefix(flow.dst_prefix())) {
      return absl::InvalidArgumentError(
          absl::StrCat("dst_prefix \"", flow.dst_prefix(), "\" is not a CIDR prefix"));
    }
    if (!std::isfinite(flow.demand_gbps()) || flow.demand_gbps() <= 0) {
      return absl::InvalidArgumentError("demand_gbps must be positive");
    }
    return absl::OkStatus();
  }
  if (workload.has_chain()) {
    const auto& chain = workload.chain();
    if (!entities.facilities.count(chain.origin_facility_id())) {
      return absl::NotFoundError(absl::StrCat("unknown facility ", chain.origin_facility_id()));
    }
    if (chain.service_ids().empty()) return absl::InvalidArgumentError("a chain calls services");
    for (const auto& service : chain.service_ids()) {
      if (!entities.services.count(service)) return absl::NotFoundError(absl::StrCat("unknown service ", service));
    }
    if (chain.latency_budget_us() == 0) return absl::InvalidArgumentError("latency_budget_us must be positive");
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError("a workload is an elephant flow or an agent chain");
}

absl::Status CheckIntentTarget(const Entities& entities, const v1::Intent& intent) {
  if (intent.has_metric_override()) {
    const v1::MetricOverride& override = intent.metric_override();
    if (!entities.links.count(override.link_id())) {
      return absl::NotFoundError(absl::StrCat("unknown link ", override.link_id()));
    }
    if (override.igp_metric() < 1 || override.igp_metric() > 65535) {
      return absl::InvalidArgumentError(absl::StrCat("a metric is 1..65535, not ", override.igp_metric()));
    }
    if (override.expires_at_unix_ms() < 0) return absl::InvalidArgumentError("expires_at_unix_ms is negative");
    return absl::OkStatus();
  }
  if (intent.has_pin()) return CheckPin(entities, intent.pin());
  if (intent.has_auto_drain_pause()) {
    if (intent.automatic()) return absl::InvalidArgumentError("only a drain can be automatic");
    return absl::OkStatus();
  }
  if (intent.has_drain()) return CheckDrainTarget(entities, intent.drain());
  return absl::InvalidArgumentError("the intent names no action");
}

absl::Status CheckNewIntent(const Entities& entities, const v1::Intent& intent) {
  if (!entity::IsValidEntityId(intent.id())) {
    return absl::InvalidArgumentError(
        absl::StrCat("intent id \"", intent.id(), "\" is not valid (", entity::kEntityIdRule, ")"));
  }
  if (entities.intents.count(intent.id())) {
    return absl::AlreadyExistsError(absl::StrCat("intent ", intent.id(), " already exists"));
  }
  if (auto status = CheckIntentTarget(entities, intent); !status.ok()) return status;
  for (const auto& [id, existing] : entities.intents) {
    if (intent.has_drain() && existing.has_drain() && SameMessage(existing.drain(), intent.drain())) {
      return absl::AlreadyExistsError(absl::StrCat("already drained by intent ", id));
    }
    if (intent.has_pin() && existing.has_pin() && existing.pin().workload_id() == intent.pin().workload_id()) {
      return absl::AlreadyExistsError(
          absl::StrCat("workload ", intent.pin().workload_id(), " is already pinned by intent ", id));
    }
    if (intent.has_auto_drain_pause() && existing.has_auto_drain_pause()) {
      return absl::AlreadyExistsError(absl::StrCat("automatic drains are already paused by intent ", id));
    }
    if (intent.has_metric_override() && existing.has_metric_override() &&
        existing.metric_override().link_id() == intent.metric_override().link_id()) {
      return absl::AlreadyExistsError(absl::StrCat("link ", intent.metric_override().link_id(),
                                                   " already has a metric override: intent ", id));
    }
  }
  if (intent.reason().size() > 1024) return absl::InvalidArgumentError("reason longer than 1024");
  return absl::OkStatus();
}

std::optional<std::string> PinningIntent(const Entities& entities, const std::string& workload_id) {
  for (const auto& [id, intent] : entities.intents) {
    if (intent.has_pin() && intent.pin().workload_id() == workload_id) return id;
  }
  return std::nullopt;
}

std::vector<std::string> ExpiredIntents(const Entities& entities, int64_t now_unix_ms) {
  std::vector<std::string> expired;
  for (const auto& [id, intent] : entities.intents) {
    const int64_t expires = intent.has_metric_override() ? intent.metric_override().expires_at_unix_ms() : 0;
    if (expires != 0 && expires <= now_unix_ms) expired.push_back(id);
  }
  return expired;
}

absl::Status CheckReferencesAfterImport(const Entities& next, bool replacing_workloads) {
  for (const auto& [id, workload] : next.workloads) {
    if (auto status = CheckWorkload(next, workload); !status.ok()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "after the import, workload ", id, " would be invalid: ", status.message(),
          replacing_workloads ? "" : " (remove it first, or replace the workloads)"));
    }
  }
  for (const auto& [id, intent] : next.intents) {
    if (auto status = CheckIntentTarget(next, intent); !status.ok()) {
      return absl::FailedPreconditionError(absl::StrCat("after the import, intent ", id,
                                                        " would be invalid: ", status.message(),
                                                        " (remove the intent first)"));
    }
  }
  return absl::OkStatus();
}

}  // namespace geodesic::pathcomp
