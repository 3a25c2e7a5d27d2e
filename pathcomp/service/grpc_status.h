#pragma once
// absl::Status -> grpc::Status at the service edge (same canonical codes).
#include <grpcpp/support/status.h>

#include "absl/status/status.h"

namespace geodesic::pathcomp {

inline grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), std::string(status.message()));
}

}  // namespace geodesic::pathcomp
