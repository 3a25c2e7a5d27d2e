// The Operator API's agent-chain reads: ExplainChain and ListStragglers
// (viewer role). The rest of OperatorService is in operator_service.cc.
#include "pathcomp/service/grpc_status.h"
#include "pathcomp/service/operator_service.h"

namespace geodesic::pathcomp {

grpc::Status OperatorService::ExplainChain(grpc::ServerContext* context, const v1::ExplainChainRequest* request,
                                           v1::ExplainChainResponse* response) {
  if (auto identity = Authorize(context, tls::Role::kViewer); !identity.ok()) return ToGrpcStatus(identity.status());
  auto explained = chains_.Explain(request->workload_id());
  if (!explained.ok()) return ToGrpcStatus(explained.status());
  *response = *std::move(explained);
  return grpc::Status::OK;
}

grpc::Status OperatorService::ListStragglers(grpc::ServerContext* context, const v1::ListStragglersRequest* request,
                                             v1::ListStragglersResponse* response) {
  if (auto identity = Authorize(context, tls::Role::kViewer); !identity.ok()) return ToGrpcStatus(identity.status());
  auto stragglers = chains_.Stragglers(request->limit());
  if (!stragglers.ok()) return ToGrpcStatus(stragglers.status());
  *response = *std::move(stragglers);
  return grpc::Status::OK;
}

}  // namespace geodesic::pathcomp
