// OperatorService: the automatic drainer's actions and the gray-failure
// reads (operator_service.h). An automatic drain takes the operator's path —
// pre-check, model, etcd, audit, re-plan — with the replica as the actor.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "daemon/clock.h"
#include "daemon/log.h"
#include "pathcomp/health/link_judge.h"
#include "pathcomp/service/auto_drainer.h"
#include "pathcomp/service/grpc_status.h"
#include "pathcomp/service/operator_service.h"
#include "pathcomp/solver/impact.h"
#include "tls/peer_identity.h"

namespace geodesic::pathcomp {
namespace {

// "auto-iad-chi-1733390000123": unique per link and moment, a valid id.
std::string AutomaticIntentId(const std::string& link_id, int64_t now_unix_ms) {
  std::string id = absl::StrCat("auto-", link_id);
  const std::string suffix = absl::StrCat("-", now_unix_ms);
  id.resize(std::min(id.size(), size_t{63} - suffix.size()));
  return id + suffix;
}

}  // namespace

absl::StatusOr<std::vector<std::string>> OperatorService::TakeAutomaticDrain(const tls::Identity& controller,
                                                                             const health::DrainOrder& order,
                                                                             double utilization_limit) {
  const int64_t now = daemon::UnixNowMs();
  std::vector<v1::Intent> intents;
  std::string reason = absl::StrCat("auto-drain: ", health::VerdictName(order.verdict), ": ", order.evidence);
  if (reason.size() > 1024) reason.resize(1024);
  for (const std::string& link_id : order.link_ids) {
    v1::Intent& intent = intents.emplace_back();
    intent.set_id(AutomaticIntentId(link_id, now));
    intent.mutable_drain()->mutable_target()->set_link_id(link_id);
  }
  if (order.plane_set) {
    v1::Intent& intent = intents.emplace_back();
    intent.set_id(AutomaticIntentId(absl::StrCat("plane-", order.facility_id, "-", order.plane), now));
    intent.mutable_drain()->mutable_target()->set_facility_id(order.facility_id);
    intent.mutable_drain()->set_plane(order.plane);
    intent.mutable_drain()->set_plane_set(true);
  }
  for (v1::Intent& intent : intents) {
    intent.set_reason(reason);
    intent.set_automatic(true);
  }
  const std::string what = order.plane_set ? absl::StrCat("plane ", order.facility_id, ":", order.plane)
                                           : absl::StrCat("links ", absl::StrJoin(order.link_ids, ","));
  const std::string arguments = absl::StrCat(what, ": ", reason);
  absl::Status result = may_mutate_();
  for (const v1::Intent& intent : intents) {
    if (result.ok()) result = model_.CheckIntent(intent);
  }
  // The pre-check: the plan with the fiber drained against the plan now.
  if (result.ok()) {
    auto impact = Impact({}, intents, utilization_limit);
    if (!impact.ok()) {
      result = impact.status();
    } else if (const std::vector<std::string> refusals = DrainRefusals(*impact); !refusals.empty()) {
      result = absl::FailedPreconditionError(
          absl::StrCat("automatic drain refused by the pre-check: ", absl::StrJoin(refusals, "; ")));
    }
  }
  std::vector<std::string> taken;
  for (const v1::Intent& intent : intents) {
    if (!result.ok()) break;
    result = model_.AddIntent(intent, controller.spiffe_id, now);
    if (!result.ok()) break;
    taken.push_back(intent.id());
    if (replication_.publish_intent) {
      if (auto stored = model_.FindIntent(intent.id())) result = replication_.publish_intent(*stored);
      if (!result.ok()) {
        RollBack(absl::StrCat("add intent ", intent.id()), model_.DeleteIntent(intent.id(), "rollback: etcd refused it"));
        taken.pop_back();
      }
    }
  }
  if (!result.ok()) {
    // All or nothing: a fiber half drained is not what was decided.
    for (const std::string& id : taken) {
      if (replication_.retract_intent) (void)replication_.retract_intent(id);
      (void)model_.DeleteIntent(id, "rollback: the automatic drain did not complete");
    }
    Audit(controller, "automatic drain", arguments, result);
    return result;
  }
  uint64_t generation = 0;
  for (const v1::Intent& intent : intents) {
    v1::Event event;
    event.set_at_unix_ms(now);
    *event.mutable_intent()->mutable_intent() = *model_.FindIntent(intent.id());
    events_.Publish(event);
  }
  auto solved = planner_.SolveNow(SolveCause::kIntent,
                                  absl::StrCat("automatic drain of ", what, " (",
                                               health::VerdictName(order.verdict), ")"));
  if (solved.ok()) generation = *solved;
  Audit(controller, "automatic drain", absl::StrCat(arguments, " -> intents ", absl::StrJoin(taken, ",")),
        solved.status(), generation);
  return taken;
}

absl::Status OperatorService::UndoAutomaticDrain(const tls::Identity& controller, const health::UndrainOrder& order) {
  absl::Status result = may_mutate_();
  uint64_t generation = 0;
  for (const std::string& id : order.intent_ids) {
    if (!result.ok()) break;
    auto removed = RemoveIntent(id, controller.spiffe_id, order.reason);
    if (removed.ok()) generation = *removed;
    if (!removed.ok() && !absl::IsNotFound(removed.status())) result = removed.status();
  }
  Audit(controller, "automatic undrain", absl::StrCat("intents ", absl::StrJoin(order.intent_ids, ","), ": ", order.reason),
        result, generation);
  return result;
}

grpc::Status OperatorService::ListLinkAssessments(grpc::ServerContext* context,
                                                  const v1::ListLinkAssessmentsRequest* request,
                                                  v1::ListLinkAssessmentsResponse* response) {
  auto identity = Authorize(context, tls::Role::kViewer);
  if (!identity.ok()) return ToGrpcStatus(identity.status());
  if (auto_drainer_ == nullptr) return grpc::Status(grpc::StatusCode::UNAVAILABLE, "no gray-failure judge");
  if (!request->link_id().empty() && !tls::IsValidId(request->link_id())) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, absl::StrCat("\"", request->link_id(), "\" is not a link id"));
  }
  auto assessments = auto_drainer_->Assess(request->link_id(), daemon::UnixNowMs());
  if (!assessments.ok()) return ToGrpcStatus(assessments.status());
  for (v1::LinkAssessment& assessment : *assessments) {
    if (request->unhealthy_only() && !health::IsGray(assessment.verdict())) continue;
    *response->add_assessments() = std::move(assessment);
  }
  return grpc::Status::OK;
}

grpc::Status OperatorService::GetAutoDrainStatus(grpc::ServerContext* context, const v1::GetAutoDrainStatusRequest*,
                                                 v1::AutoDrainStatus* response) {
  auto identity = Authorize(context, tls::Role::kViewer);
  if (!identity.ok()) return ToGrpcStatus(identity.status());
  if (auto_drainer_ == nullptr) return grpc::Status(grpc::StatusCode::UNAVAILABLE, "no automatic drainer");
  *response = auto_drainer_->Status(daemon::UnixNowMs());
  return grpc::Status::OK;
}

}  // namespace geodesic::pathcomp
