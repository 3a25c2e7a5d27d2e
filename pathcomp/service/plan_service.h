#pragma once
// PlanService: each facility's routerd watches its own part of the plan and
// acknowledges what it installed. Authorization by certificate: a routerd of
// facility F may watch and acknowledge only F.
#include "geodesic/v1/plan.grpc.pb.h"
#include "pathcomp/model/model.h"
#include "pathcomp/service/planner.h"

namespace geodesic::pathcomp {

class PlanService final : public v1::PlanService::Service {
 public:
  PlanService(Model& model, Planner& planner);

  grpc::Status Watch(grpc::ServerContext* context, const v1::WatchPlanRequest* request,
                     grpc::ServerWriter<v1::SitePlan>* writer) override;
  grpc::Status Ack(grpc::ServerContext* context, const v1::PlanAck* request,
                   v1::PlanAckResponse* response) override;

 private:
  grpc::Status Authorize(grpc::ServerContext* context, const std::string& facility_id) const;

  Model& model_;
  Planner& planner_;
};

}  // namespace geodesic::pathcomp
