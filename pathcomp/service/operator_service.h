#pragma once
// The Operator API (operator.proto). Roles come from the operator's
// certificate: viewer reads; operator also changes workloads and intents;
// admin also imports a topology.
// Every mutation, and every refused attempt at one, is recorded in the audit
// log (store, `tectl audit-log`) with who, what, the result and the plan
// generation it produced; accepted ones are also journaled with their cause.
// Drains are pre-checked (impact.h) unless forced by an admin.
#include <functional>
#include <string>
#include <vector>

#include "geodesic/v1/operator.grpc.pb.h"
#include "pathcomp/health/auto_drain_policy.h"
#include "pathcomp/model/model.h"
#include "pathcomp/service/event_bus.h"
#include "pathcomp/service/planner.h"
#include "tls/identity.h"

namespace geodesic::pathcomp {

class AutoDrainer;

class OperatorService final : public v1::Operator::Service {
 public:
  // `resync_agents` is called with the facilities whose agents must send a
  // fresh snapshot after an import (TelemetryService::Resync).
  using ResyncAgents = std::function<void(const std::vector<std::string>& facility_ids)>;
  // OK when this replica may change the model (standalone, or the leader);
  // else why not and where to go (FailedPrecondition).
  using MayMutate = std::function<absl::Status()>;
  // Replicated: an intent or workload the model accepted is published to
  // etcd (and rolled back from the model when that fails); standalone: empty.
  // When the rollback fails too, the model may hold what etcd does not (or
  // lack what it holds): `resync` makes the model hold exactly etcd's again.
  struct ReplicationHooks {
    std::function<absl::Status(const v1::Intent&)> publish_intent;
    std::function<absl::Status(const std::string& id)> retract_intent;
    std::function<absl::Status(const v1::Workload&)> publish_workload;
    std::function<absl::Status(const std::string& id)> retract_workload;
    // Many workloads at once (an import's), as the model holds them now.
    std::function<absl::Status(const std::vector<std::string>& changed, const std::vector<std::string>& removed)>
        publish_workload_changes;
    std::function<void()> resync;
    // The inventory: published to etcd as the next release, with
    // `apply_locally` run in between (this replica's model); the version.
    std::function<absl::StatusOr<uint64_t>(const v1::Inventory& inventory, const std::string& cause,
                                           const std::function<absl::Status()>& apply_locally)>
        publish_inventory;
    // The audit log in etcd (etcd_audit_log.h): the leader appends, any replica lists.
    std::function<absl::StatusOr<uint64_t>(v1::AuditRecord)> append_audit;
    std::function<absl::StatusOr<v1::ListAuditLogResponse>(const v1::ListAuditLogRequest&)> list_audit;
  };
  OperatorService(Model& model, Planner& planner, EventBus& events, ResyncAgents resync_agents,
                  MayMutate may_mutate = [] { return absl::OkStatus(); }, ReplicationHooks replication = {});

  grpc::Status ListFacilities(grpc::ServerContext*, const v1::ListFacilitiesRequest*,
                              v1::ListFacilitiesResponse*) override;
  grpc::Status ListNodes(grpc::ServerContext*, const v1::ListNodesRequest*,
                         v1::ListNodesResponse*) override;
  grpc::Status ListLinks(grpc::ServerContext*, const v1::ListLinksRequest*,
                         v1::ListLinksResponse*) override;
  grpc::Status ListFabrics(grpc::ServerContext*, const v1::ListFabricsRequest*,
                           v1::ListFabricsResponse*) override;
  grpc::Status ListServices(grpc::ServerContext*, const v1::ListServicesRequest*,
                            v1::ListServicesResponse*) override;
  grpc::Status GetPlan(grpc::ServerContext*, const v1::GetPlanRequest*,
                       v1::GetPlanResponse*) override;
  grpc::Status ListWorkloads(grpc::ServerContext*, const v1::ListWorkloadsRequest*,
                             v1::ListWorkloadsResponse*) override;
  grpc::Status AddWorkload(grpc::ServerContext*, const v1::AddWorkloadRequest*,
                           v1::AddWorkloadResponse*) override;
  grpc::Status DeleteWorkload(grpc::ServerContext*, const v1::DeleteWorkloadRequest*,
                              v1::DeleteWorkloadResponse*) override;
  grpc::Status ListIntents(grpc::ServerContext*, const v1::ListIntentsRequest*,
                           v1::ListIntentsResponse*) override;
  grpc::Status AddIntent(grpc::ServerContext*, const v1::AddIntentRequest*,
                         v1::AddIntentResponse*) override;
  grpc::Status DeleteIntent(grpc::ServerContext*, const v1::DeleteIntentRequest*,
                            v1::DeleteIntentResponse*) override;
  grpc::Status ImportTopology(grpc::ServerContext*, const v1::ImportTopologyRequest*,
                              v1::ImportTopologyResponse*) override;
  grpc::Status ListJournal(grpc::ServerContext*, const v1::ListJournalRequest*,
                           v1::ListJournalResponse*) override;
  grpc::Status WatchEvents(grpc::ServerContext*, const v1::WatchEventsRequest*,
                           grpc::ServerWriter<v1::Event>*) override;
  // Removes the metric overrides expired at `now_unix_ms` (only where this
  // replica may change the model); audited as pathcomp's own doing.
  void ExpireIntents(int64_t now_unix_ms);

  grpc::Status WhatIf(grpc::ServerContext*, const v1::WhatIfRequest*, v1::WhatIfResponse*) override;
  grpc::Status ListPlans(grpc::ServerContext*, const v1::ListPlansRequest*, v1::ListPlansResponse*) override;
  grpc::Status ListAuditLog(grpc::ServerContext*, const v1::ListAuditLogRequest*,
                            v1::ListAuditLogResponse*) override;
  grpc::Status ListLinkAssessments(grpc::ServerContext*, const v1::ListLinkAssessmentsRequest*,
                                   v1::ListLinkAssessmentsResponse*) override;
  grpc::Status GetAutoDrainStatus(grpc::ServerContext*, const v1::GetAutoDrainStatusRequest*,
                                  v1::AutoDrainStatus*) override;

  // The gray-failure judge and automatic drainer these RPCs read; set once,
  // before the service is served (without it they answer UNAVAILABLE).
  void AttachAutoDrainer(const AutoDrainer* drainer) { auto_drainer_ = drainer; }

  // The automatic drainer's actions (operator_auto_drain.cc), taken as
  // `controller` (the replica's identity) the way an operator's are.
  // A drain of a fiber is pre-checked as the failure of the fiber (the
  // link and its reverse) against the plan; refused (FailedPrecondition
  // naming the refusals, audited) when it would cut a workload or push a
  // link over `utilization_limit`. Then one automatic drain intent per
  // link, stored, replicated, audited with the evidence, and one re-plan.
  absl::StatusOr<std::vector<std::string>> TakeAutomaticDrain(const tls::Identity& controller,
                                                              const health::DrainOrder& order,
                                                              double utilization_limit);
  absl::Status UndoAutomaticDrain(const tls::Identity& controller, const health::UndrainOrder& order);

 private:
  // The caller's identity when it is an operator with at least `role`.
  absl::StatusOr<tls::Identity> Authorize(grpc::ServerContext* context, tls::Role role) const;
  // Removes an intent (through etcd when replicated) and re-plans; the
  // generation current afterwards. `why` ends the plan's reason.
  absl::StatusOr<uint64_t> RemoveIntent(const std::string& id, const std::string& actor, const std::string& why);
  // Announces an intent change and re-solves at once; the generation current afterwards.
  absl::StatusOr<uint64_t> Replan(const v1::IntentChange& change, const std::string& reason);
  // Replicated import at the leader: checked here, published to etcd as the
  // next inventory release (which every replica applies), applied here, and
  // the workloads it adds, changes or removes published like any other.
  absl::StatusOr<ImportResult> ImportReplicated(const topology::Topology& inventory, const std::string& cause,
                                                const ImportOptions& options);
  // The impact of `failures` and/or `intents` (may be empty) on the plan.
  absl::StatusOr<v1::Impact> Impact(const std::vector<v1::FailureScope>& failures,
                                    const std::vector<v1::Intent>& intents, double utilization_limit) const;
  // Records a mutation (or a refused one) in the audit log and the daemon's
  // log; `plan_generation` 0: the current plan's.
  void Audit(const tls::Identity& who, std::string_view action, std::string arguments,
             const absl::Status& result, uint64_t plan_generation = 0) const;
  // After etcd refused a change the model had made: `undo` is the model's
  // rollback. A failed rollback is logged as an error and the model resyncs
  // from etcd (ReplicationHooks::resync), so replicas never silently diverge.
  void RollBack(std::string_view change, const absl::Status& undo) const;
  // Records a call refused before the caller was known to be an operator.
  void AuditRefused(grpc::ServerContext* context, std::string_view action, std::string arguments,
                    const absl::Status& why) const;

  Model& model_;
  Planner& planner_;
  EventBus& events_;
  ResyncAgents resync_agents_;
  MayMutate may_mutate_;
  ReplicationHooks replication_;
  const AutoDrainer* auto_drainer_ = nullptr;
};

}  // namespace geodesic::pathcomp
