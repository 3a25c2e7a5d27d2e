#include "pathcomp/service/plan_service.h"

#include <chrono>

#include "absl/strings/str_cat.h"
#include "daemon/log.h"
#include "pathcomp/service/grpc_status.h"
#include "tls/peer_identity.h"

namespace geodesic::pathcomp {

PlanService::PlanService(Model& model, Planner& planner) : model_(model), planner_(planner) {}

grpc::Status PlanService::Authorize(grpc::ServerContext* context,
                                    const std::string& facility_id) const {
  auto identity = tls::PeerIdentity(*context);
  if (!identity.ok()) return ToGrpcStatus(identity.status());
  if (identity->kind != tls::Identity::Kind::kRouterd) {
    return grpc::Status(grpc::StatusCode::PERMISSION_DENIED,
                        absl::StrCat(identity->spiffe_id, " is not a routerd"));
  }
  if (identity->facility_id != facility_id) {
    return grpc::Status(grpc::StatusCode::PERMISSION_DENIED,
                        absl::StrCat("routerd of ", identity->facility_id,
                                     " may not use the plan of facility \"", facility_id, "\""));
  }
  for (const auto& facility : model_.Facilities()) {
    if (facility.id() == facility_id) return grpc::Status::OK;
  }
  return grpc::Status(grpc::StatusCode::NOT_FOUND,
                      absl::StrCat("unknown facility \"", facility_id, "\""));
}

grpc::Status PlanService::Watch(grpc::ServerContext* context, const v1::WatchPlanRequest* request,
                                grpc::ServerWriter<v1::SitePlan>* writer) {
  if (auto status = Authorize(context, request->facility_id()); !status.ok()) return status;
  daemon::LogInfo("routerd watching", {{"facility", request->facility_id()},
                                       {"known_generation",
                                        std::to_string(request->known_generation())}});
  context->AddInitialMetadata("geodesic-plan-watch", "1");  // see plan.proto
  writer->SendInitialMetadata();
  uint64_t known = request->known_generation();
  while (!context->IsCancelled()) {
    auto site = planner_.WaitForSitePlan(
        request->facility_id(), known,
        std::chrono::steady_clock::now() + std::chrono::milliseconds(500));
    if (!site) {
      if (planner_.stopping()) break;
      continue;
    }
    if (!writer->Write(*site)) break;
    known = site->generation();
  }
  return grpc::Status::OK;
}

grpc::Status PlanService::Ack(grpc::ServerContext* context, const v1::PlanAck* request,
                              v1::PlanAckResponse*) {
  if (auto status = Authorize(context, request->facility_id()); !status.ok()) return status;
  if (request->error().size() > 4096) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "error text longer than 4096");
  }
  const int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  planner_.RecordAck(*request, now);
  return grpc::Status::OK;
}

}  // namespace geodesic::pathcomp
