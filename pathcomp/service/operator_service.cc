#include "pathcomp/service/operator_service.h"

#include <chrono>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "daemon/clock.h"
#include "daemon/log.h"
#include "pathcomp/model/model_queries.h"
#include "pathcomp/service/grpc_status.h"
#include "pathcomp/service/intent_admission.h"
#include "pathcomp/solver/impact.h"
#include "tls/peer_identity.h"
#include "topology/inventory_proto.h"

namespace geodesic::pathcomp {
namespace {

// An import as the audit log shows it: everything but the inventory itself.
v1::ImportTopologyRequest ImportSummary(const v1::ImportTopologyRequest& request) {
  v1::ImportTopologyRequest summary = request;
  summary.clear_inventory();
  return summary;
}

}  // namespace

OperatorService::OperatorService(Model& model, Planner& planner, EventBus& events,
                                 ResyncAgents resync_agents, MayMutate may_mutate, ReplicationHooks replication)
    : model_(model),
      planner_(planner),
      events_(events),
      resync_agents_(std::move(resync_agents)),
      may_mutate_(std::move(may_mutate)),
      replication_(std::move(replication)) {}

absl::StatusOr<tls::Identity> OperatorService::Authorize(grpc::ServerContext* context,
                                                         tls::Role role) const {
  auto identity = tls::PeerIdentity(*context);
  if (!identity.ok()) return identity.status();
  if (identity->kind != tls::Identity::Kind::kOperator) {
    return absl::PermissionDeniedError(absl::StrCat(identity->spiffe_id, " is not an operator"));
  }
  if (identity->role < role) {
    return absl::PermissionDeniedError(absl::StrCat("operator ", identity->name, " has role ",
                                                    std::string(tls::RoleName(identity->role)), "; this needs ",
                                                    std::string(tls::RoleName(role))));
  }
  return identity;
}

void OperatorService::Audit(const tls::Identity& who, std::string_view action, std::string arguments,
                            const absl::Status& result, uint64_t plan_generation) const {
  // A request may be large (a workload list, a refused oversized call): the
  // record keeps its start and says how long it was.
  constexpr size_t kMaxArguments = 4096;
  if (arguments.size() > kMaxArguments) {
    const size_t size = arguments.size();
    arguments.resize(kMaxArguments);
    absl::StrAppend(&arguments, "... (", size, " bytes)");
  }
  daemon::LogInfo("audit", {{"who", who.spiffe_id},
                            {"what", std::string(action)},
                            {"arguments", arguments},
                            {"result", result.ok() ? "ok" : result.ToString()}});
  v1::AuditRecord record;
  record.set_at_unix_ms(daemon::UnixNowMs());
  record.set_identity(who.spiffe_id);
  record.set_role(who.kind == tls::Identity::Kind::kOperator ? std::string(tls::RoleName(who.role)) : "");
  record.set_action(std::string(action));
  record.set_arguments(std::move(arguments));
  record.set_ok(result.ok());
  record.set_result(result.ok() ? "OK" : result.ToString());
  if (plan_generation == 0) {
    if (auto plan = planner_.CurrentPlan()) plan_generation = plan->generation();
  }
  record.set_plan_generation(plan_generation);
  if (replication_.append_audit) {
    // One history in etcd, written by the leader; a follower's refusals are
    // not decisions about the network and stay in its log (above).
    if (!may_mutate_().ok()) return;
    if (auto stored = replication_.append_audit(std::move(record)); !stored.ok()) {
      daemon::LogError("audit record not stored in etcd", {{"error", std::string(stored.status().message())}});
    }
    return;
  }
  if (auto stored = model_.AppendAudit(std::move(record)); !stored.ok()) {
    daemon::LogError("audit record not stored", {{"error", std::string(stored.status().message())}});
  }
}

absl::StatusOr<uint64_t> OperatorService::Replan(const v1::IntentChange& change,
                                                 const std::string& reason) {
  v1::Event event;
  event.set_at_unix_ms(daemon::UnixNowMs());
  *event.mutable_intent() = change;
  events_.Publish(event);
  return planner_.SolveNow(SolveCause::kIntent, reason);
}

#define GEODESIC_AUTHORIZE(identity, context, role)          \
  auto identity = Authorize(context, role);                  \
  if (!identity.ok()) return ToGrpcStatus(identity.status())

// Authorizes, then refuses on a replica that may not change the model (a
// follower). Refusals are audited too: who tried what.
#define GEODESIC_AUTHORIZE_MUTATION(identity, context, role, action, request)           \
  auto identity = Authorize(context, role);                                             \
  if (!identity.ok()) {                                                                 \
    AuditRefused(context, action, (request).ShortDebugString(), identity.status());     \
    return ToGrpcStatus(identity.status());                                             \
  }                                                                                     \
  if (absl::Status may = may_mutate_(); !may.ok()) {                                    \
    Audit(*identity, action, (request).ShortDebugString(), may);                        \
    return ToGrpcStatus(may);                                                           \
  }

void OperatorService::RollBack(std::string_view change, const absl::Status& undo) const {
  if (undo.ok()) {
    daemon::LogWarn("etcd refused a change; the model rolled it back", {{"change", std::string(change)}});
    return;
  }
  daemon::LogError("etcd refused a change and the model's rollback failed; resyncing the model from etcd",
                   {{"change", std::string(change)}, {"rollback_error", undo.ToString()}});
  if (replication_.resync) replication_.resync();
}

void OperatorService::AuditRefused(grpc::ServerContext* context, std::string_view action, std::string arguments,
                                   const absl::Status& why) const {
  tls::Identity who;
  if (auto identity = tls::PeerIdentity(*context); identity.ok()) {
    who = *identity;
  } else {
    who.spiffe_id = absl::StrCat("(unauthenticated peer ", context->peer(), ")");
  }
  Audit(who, action, std::move(arguments), why);
}

grpc::Status OperatorService::ListFacilities(grpc::ServerContext* context,
                                             const v1::ListFacilitiesRequest*,
                                             v1::ListFacilitiesResponse* response) {
  GEODESIC_AUTHORIZE(identity, context, tls::Role::kViewer);
  for (auto& facility : model_.Facilities()) *response->add_facilities() = std::move(facility);
  return grpc::Status::OK;
}

grpc::Status OperatorService::ListNodes(grpc::ServerContext* context,
                                        const v1::ListNodesRequest* request,
                                        v1::ListNodesResponse* response) {
  GEODESIC_AUTHORIZE(identity, context, tls::Role::kViewer);
  *response = pathcomp::ListNodes(model_, *request);
  return grpc::Status::OK;
}

grpc::Status OperatorService::ListLinks(grpc::ServerContext* context,
                                        const v1::ListLinksRequest* request,
                                        v1::ListLinksResponse* response) {
  GEODESIC_AUTHORIZE(identity, context, tls::Role::kViewer);
  *response = pathcomp::ListLinks(model_, *request);
  return grpc::Status::OK;
}

grpc::Status OperatorService::ListFabrics(grpc::ServerContext* context,
                                          const v1::ListFabricsRequest* request,
                                          v1::ListFabricsResponse* response) {
  GEODESIC_AUTHORIZE(identity, context, tls::Role::kViewer);
  *response = pathcomp::ListFabrics(model_, *request);
  return grpc::Status::OK;
}

grpc::Status OperatorService::ListServices(grpc::ServerContext* context,
                                           const v1::ListServicesRequest*,
                                           v1::ListServicesResponse* response) {
  GEODESIC_AUTHORIZE(identity, context, tls::Role::kViewer);
  for (auto& service : model_.Services()) *response->add_services() = std::move(service);
  return grpc::Status::OK;
}

grpc::Status OperatorService::GetPlan(grpc::ServerContext* context,
                                      const v1::GetPlanRequest* request,
                                      v1::GetPlanResponse* response) {
  GEODESIC_AUTHORIZE(identity, context, tls::Role::kViewer);
  // The plan and the revision it reflects in one read: read apart, a plan
  // published in between would let this answer pair the older plan with the
  // newer plan's revision, and a waiter would take the older one as converged.
  const Planner::Convergence convergence = planner_.ConvergenceState();
  std::shared_ptr<const v1::Plan> plan = convergence.plan;
  if (request->generation() != 0 && (!plan || plan->generation() != request->generation())) {
    auto old = model_.PlanAt(request->generation());
    if (!old.ok()) return ToGrpcStatus(old.status());
    plan = std::make_shared<const v1::Plan>(*std::move(old));
  }
  auto site_plan = PlanForSite(std::move(plan), request->facility_id());
  if (!site_plan.ok()) return ToGrpcStatus(site_plan.status());
  *response->mutable_plan() = *std::move(site_plan);
  for (auto& status : planner_.InstallStatus()) {
    if (request->facility_id().empty() || status.facility_id() == request->facility_id()) {
      *response->add_sites() = std::move(status);
    }
  }
  response->set_replan_pending(convergence.replan_pending);
  response->set_model_revision(convergence.model_revision);
  response->set_plan_model_revision(convergence.plan_model_revision);
  return grpc::Status::OK;
}

grpc::Status OperatorService::ListWorkloads(grpc::ServerContext* context,
                                            const v1::ListWorkloadsRequest*,
                                            v1::ListWorkloadsResponse* response) {
  GEODESIC_AUTHORIZE(identity, context, tls::Role::kViewer);
  for (auto& workload : model_.Workloads()) *response->add_workloads() = std::move(workload);
  return grpc::Status::OK;
}

grpc::Status OperatorService::AddWorkload(grpc::ServerContext* context,
                                          const v1::AddWorkloadRequest* request,
                                          v1::AddWorkloadResponse*) {
  GEODESIC_AUTHORIZE_MUTATION(identity, context, tls::Role::kOperator, "add workload", *request);
  absl::Status result = model_.AddWorkload(request->workload(), identity->spiffe_id);
  if (result.ok() && replication_.publish_workload) {
    result = replication_.publish_workload(request->workload());
    if (!result.ok()) {
      RollBack(absl::StrCat("add workload ", request->workload().id()),
               model_.DeleteWorkload(request->workload().id(), "rollback: etcd refused it"));
    }
  }
  if (result.ok()) {
    planner_.RequestSolve(SolveCause::kWorkload,
                          absl::StrCat("workload ", request->workload().id(), " added by ", identity->name));
  }
  Audit(*identity, "add workload", request->ShortDebugString(), result);
  return ToGrpcStatus(result);
}

grpc::Status OperatorService::DeleteWorkload(grpc::ServerContext* context,
                                             const v1::DeleteWorkloadRequest* request,
                                             v1::DeleteWorkloadResponse*) {
  GEODESIC_AUTHORIZE_MUTATION(identity, context, tls::Role::kOperator, "delete workload", *request);
  std::optional<v1::Workload> previous;
  for (v1::Workload& stored : model_.Workloads()) {
    if (stored.id() == request->id()) previous = std::move(stored);
  }
  absl::Status result = model_.DeleteWorkload(request->id(), identity->spiffe_id);
  if (result.ok() && replication_.retract_workload) {
    result = replication_.retract_workload(request->id());
    if (!result.ok() && previous) {
      RollBack(absl::StrCat("delete workload ", request->id()),
               model_.AddWorkload(*previous, "rollback: etcd refused the removal"));
    }
  }
  if (result.ok()) {
    planner_.RequestSolve(SolveCause::kWorkload,
                          absl::StrCat("workload ", request->id(), " removed by ", identity->name));
  }
  Audit(*identity, "delete workload", request->ShortDebugString(), result);
  return ToGrpcStatus(result);
}

grpc::Status OperatorService::ListIntents(grpc::ServerContext* context,
                                          const v1::ListIntentsRequest*,
                                          v1::ListIntentsResponse* response) {
  GEODESIC_AUTHORIZE(identity, context, tls::Role::kViewer);
  for (auto& intent : model_.Intents()) *response->add_intents() = std::move(intent);
  return grpc::Status::OK;
}

absl::StatusOr<v1::Impact> OperatorService::Impact(const std::vector<v1::FailureScope>& failures,
                                                   const std::vector<v1::Intent>& intents,
                                                   double utilization_limit) const {
  ModelView view = model_.View();
  const v1::Plan before = planner_.Hypothetical(view);
  const Snapshot snapshot = Snapshot::Build(view);
  view.intents.insert(view.intents.end(), intents.begin(), intents.end());
  if (!failures.empty()) {
    if (auto applied = ApplyFailures(failures, view); !applied.ok()) return applied;
  }
  const v1::Plan after = planner_.Hypothetical(view);
  v1::Impact impact = CompareImpact(before, after, snapshot, utilization_limit);
  if (auto plan = planner_.CurrentPlan()) impact.set_plan_generation(plan->generation());
  return impact;
}

grpc::Status OperatorService::AddIntent(grpc::ServerContext* context,
                                        const v1::AddIntentRequest* request,
                                        v1::AddIntentResponse* response) {
  GEODESIC_AUTHORIZE_MUTATION(identity, context, tls::Role::kOperator, "add intent", *request);
  const v1::Intent& intent = request->intent();
  const std::string action = request->force() && request->dry_run() ? "add intent (forced, dry run)"
                             : request->force()                     ? "add intent (forced)"
                             : request->dry_run()                   ? "add intent (dry run)"
                                                                    : "add intent";
  const IntentAdmissionPolicy admission_policy(
      [this](const v1::Intent& checked) { return model_.CheckIntent(checked); },
      [this](const v1::Intent& drain, double utilization_limit) {
        return Impact({}, {drain}, utilization_limit);
      });
  IntentAdmission admission = admission_policy.Admit(*request, identity->role, daemon::UnixNowMs());
  absl::Status result = admission.status;
  if (admission.impact) *response->mutable_impact() = *std::move(admission.impact);
  if (result.ok() && request->dry_run()) {
    if (auto plan = planner_.CurrentPlan()) response->set_plan_generation(plan->generation());
    // Nothing changed; a pre-check that refuses is audited all the same (what
    // was tried, and why it did not go ahead).
    if (!response->impact().refusals().empty() && !request->force()) {
      Audit(*identity, action, request->ShortDebugString(),
            absl::FailedPreconditionError(absl::StrJoin(response->impact().refusals(), "; ")));
    }
    return grpc::Status::OK;
  }
  if (result.ok()) result = model_.AddIntent(intent, identity->spiffe_id, daemon::UnixNowMs());
  if (result.ok() && replication_.publish_intent) {
    for (const v1::Intent& stored : model_.Intents()) {
      if (stored.id() == intent.id()) result = replication_.publish_intent(stored);
    }
    if (!result.ok()) {
      RollBack(absl::StrCat("add intent ", intent.id()), model_.DeleteIntent(intent.id(), "rollback: etcd refused it"));
    }
  }
  if (result.ok()) {
    v1::IntentChange change;
    *change.mutable_intent() = intent;
    auto generation = Replan(change, absl::StrCat("intent ", intent.id(), " by ", identity->name,
                                                  request->force() ? " (forced)" : ""));
    if (generation.ok()) response->set_plan_generation(*generation);
    result = generation.status();
  }
  Audit(*identity, action, request->ShortDebugString(), result, response->plan_generation());
  return ToGrpcStatus(result);
}

grpc::Status OperatorService::WhatIf(grpc::ServerContext* context, const v1::WhatIfRequest* request,
                                     v1::WhatIfResponse* response) {
  GEODESIC_AUTHORIZE(identity, context, tls::Role::kOperator);
  absl::StatusOr<double> limit = UtilizationLimit(request->utilization_limit());
  if (!limit.ok()) return ToGrpcStatus(limit.status());
  auto impact = Impact({request->failures().begin(), request->failures().end()}, {}, *limit);
  if (!impact.ok()) return ToGrpcStatus(impact.status());
  *response->mutable_impact() = *std::move(impact);
  return grpc::Status::OK;
}

grpc::Status OperatorService::ListPlans(grpc::ServerContext* context, const v1::ListPlansRequest* request,
                                        v1::ListPlansResponse* response) {
  GEODESIC_AUTHORIZE(identity, context, tls::Role::kViewer);
  for (auto& summary : model_.PlanHistory(request->limit())) *response->add_plans() = std::move(summary);
  return grpc::Status::OK;
}

grpc::Status OperatorService::ListAuditLog(grpc::ServerContext* context, const v1::ListAuditLogRequest* request,
                                           v1::ListAuditLogResponse* response) {
  GEODESIC_AUTHORIZE(identity, context, tls::Role::kViewer);
  auto log = replication_.list_audit ? replication_.list_audit(*request) : model_.AuditLog(*request);
  if (!log.ok()) return ToGrpcStatus(log.status());
  *response = *std::move(log);
  return grpc::Status::OK;
}

absl::StatusOr<uint64_t> OperatorService::RemoveIntent(const std::string& id, const std::string& actor,
                                                       const std::string& why) {
  std::optional<v1::Intent> previous;
  for (v1::Intent& stored : model_.Intents()) {
    if (stored.id() == id) previous = std::move(stored);
  }
  absl::Status result = model_.DeleteIntent(id, actor);
  if (result.ok() && replication_.retract_intent) {
    result = replication_.retract_intent(id);
    if (!result.ok() && previous) {
      RollBack(absl::StrCat("delete intent ", id),
               model_.AddIntent(*previous, previous->created_by(), previous->created_at_unix_ms()));
    }
  }
  if (!result.ok()) return result;
  v1::IntentChange change;
  change.mutable_intent()->set_id(id);
  change.set_removed(true);
  return Replan(change, absl::StrCat("intent ", id, " ", why));
}

grpc::Status OperatorService::DeleteIntent(grpc::ServerContext* context,
                                           const v1::DeleteIntentRequest* request,
                                           v1::DeleteIntentResponse* response) {
  GEODESIC_AUTHORIZE_MUTATION(identity, context, tls::Role::kOperator, "delete intent", *request);
  absl::Status result;
  for (const v1::Intent& stored : model_.Intents()) {
    if (stored.id() == request->id() && stored.has_metric_override() && identity->role < tls::Role::kAdmin) {
      result = absl::PermissionDeniedError("metric overrides need the admin role");
    }
  }
  if (result.ok()) {
    auto generation = RemoveIntent(request->id(), identity->spiffe_id, absl::StrCat("removed by ", identity->name));
    if (generation.ok()) response->set_plan_generation(*generation);
    result = generation.status();
  }
  Audit(*identity, "delete intent", request->ShortDebugString(), result, response->plan_generation());
  return ToGrpcStatus(result);
}

void OperatorService::ExpireIntents(int64_t now_unix_ms) {
  if (!may_mutate_().ok()) return;  // the leader expires them; followers mirror it
  for (const std::string& id : model_.ExpiredIntents(now_unix_ms)) {
    tls::Identity pathcomp;
    pathcomp.kind = tls::Identity::Kind::kPathcomp;
    pathcomp.spiffe_id = "pathcomp (expiry)";
    auto generation = RemoveIntent(id, pathcomp.spiffe_id, "expired");
    v1::DeleteIntentRequest request;
    request.set_id(id);
    Audit(pathcomp, "expire intent", request.ShortDebugString(), generation.status(),
          generation.ok() ? *generation : 0);
  }
}

grpc::Status OperatorService::ImportTopology(grpc::ServerContext* context,
                                             const v1::ImportTopologyRequest* request,
                                             v1::ImportTopologyResponse* response) {
  GEODESIC_AUTHORIZE_MUTATION(identity, context, tls::Role::kAdmin, "import topology",
                              ImportSummary(*request));
  const std::string source = request->source().empty() ? "an import request" : request->source();
  absl::Status result;
  if (source.size() > 1024 || source.find('\n') != std::string::npos) {
    result = absl::InvalidArgumentError("source must be one line of at most 1024 characters");
  }
  // (A StatusOr may not be built from an OK status: absl aborts or errs.)
  absl::StatusOr<topology::Topology> inventory =
      result.ok() ? topology::TopologyFromInventoryProto(request->inventory(), source)
                  : absl::StatusOr<topology::Topology>(result);
  ImportOptions options;
  options.replace_workloads = request->replace_workloads();
  options.dry_run = request->dry_run();
  const std::string cause = absl::StrCat("import of ", source, " by ", identity->spiffe_id);
  absl::StatusOr<ImportResult> imported =
      !inventory.ok() ? absl::StatusOr<ImportResult>(inventory.status())
      : options.dry_run || !replication_.publish_inventory ? model_.ImportInventory(*inventory, cause, options)
                                                           : ImportReplicated(*inventory, cause, options);
  result = imported.status();
  if (imported.ok()) {
    *response = ToImportResponse(*imported);
    if (!imported->resync_facilities.empty() && resync_agents_) {
      resync_agents_(imported->resync_facilities);
    }
    if (imported->changed()) {
      auto generation =
          planner_.SolveNow(SolveCause::kInventory, absl::StrCat("import of ", source, " by ", identity->name));
      if (generation.ok()) response->set_plan_generation(*generation);
      result = generation.status();
    } else if (auto plan = planner_.CurrentPlan()) {
      response->set_plan_generation(plan->generation());
    }
  }
  Audit(*identity, request->dry_run() ? "dry-run import topology" : "import topology",
        absl::StrCat(ImportSummary(*request).ShortDebugString(),
                     imported.ok() ? absl::StrCat(" journal_seq: ", imported->journal_seq) : ""),
        result, response->plan_generation());
  return ToGrpcStatus(result);
}

absl::StatusOr<ImportResult> OperatorService::ImportReplicated(const topology::Topology& inventory,
                                                             const std::string& cause, const ImportOptions& options) {
  // What etcd holds, every replica must be able to apply: check it first.
  ImportOptions check = options;
  check.dry_run = true;
  if (auto checked = model_.ImportInventory(inventory, cause, check); !checked.ok()) return checked.status();
  std::map<std::string, std::string> before;
  for (const v1::Workload& workload : model_.Workloads()) before[workload.id()] = workload.SerializeAsString();
  absl::StatusOr<ImportResult> imported = absl::InternalError("the import was not applied");
  auto version = replication_.publish_inventory(topology::ToInventoryProto(inventory), cause, [&] {
    imported = model_.ImportInventory(inventory, cause, options);
    return imported.status();
  });
  if (!version.ok()) return version.status();
  // The import's workloads replicate as workloads: etcd gets what changed.
  std::map<std::string, std::string> after;
  for (const v1::Workload& workload : model_.Workloads()) after[workload.id()] = workload.SerializeAsString();
  std::vector<std::string> changed, removed;
  for (const auto& [id, bytes] : after) {
    auto was = before.find(id);
    if (was == before.end() || was->second != bytes) changed.push_back(id);
  }
  for (const auto& [id, bytes] : before) {
    if (!after.count(id)) removed.push_back(id);
  }
  const absl::Status published = replication_.publish_workload_changes(changed, removed);
  if (!published.ok()) {
    // The inventory is in etcd; some workloads are not: etcd stays the truth.
    daemon::LogError("the import's workloads did not all reach etcd; resyncing the model from etcd",
                     {{"version", std::to_string(*version)}, {"error", published.ToString()}});
    if (replication_.resync) replication_.resync();
    return published;
  }
  return imported;
}

grpc::Status OperatorService::ListJournal(grpc::ServerContext* context,
                                          const v1::ListJournalRequest* request,
                                          v1::ListJournalResponse* response) {
  GEODESIC_AUTHORIZE(identity, context, tls::Role::kViewer);
  auto journal = model_.Journal(*request);
  if (!journal.ok()) return ToGrpcStatus(journal.status());
  *response = *std::move(journal);
  return grpc::Status::OK;
}

grpc::Status OperatorService::WatchEvents(grpc::ServerContext* context,
                                          const v1::WatchEventsRequest*,
                                          grpc::ServerWriter<v1::Event>* writer) {
  GEODESIC_AUTHORIZE(identity, context, tls::Role::kViewer);
  auto subscription = events_.Subscribe();
  // Subscribed before this is written: a watcher that has read it misses nothing after.
  v1::Event subscribed;
  subscribed.set_at_unix_ms(daemon::UnixNowMs());
  const std::shared_ptr<const v1::Plan> current = planner_.CurrentPlan();
  subscribed.mutable_subscribed()->set_plan_generation(current ? current->generation() : 0);
  if (!writer->Write(subscribed)) {
    events_.Unsubscribe(subscription);
    return grpc::Status::OK;
  }
  while (!context->IsCancelled() && !planner_.stopping()) {
    auto event = subscription->Next(std::chrono::steady_clock::now() +
                                    std::chrono::milliseconds(500));
    if (event && !writer->Write(*event)) break;
  }
  events_.Unsubscribe(subscription);
  return grpc::Status::OK;
}

#undef GEODESIC_AUTHORIZE_MUTATION
#undef GEODESIC_AUTHORIZE

}  // namespace geodesic::pathcomp
