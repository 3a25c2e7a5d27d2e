#pragma once
// Operator-facing names of link states: "up", "degraded", "down", "unknown".
#include <string>

#include "geodesic/v1/model.pb.h"

namespace geodesic::entity {

inline std::string OperStateName(v1::OperState state) {
  switch (state) {
    case v1::OPER_STATE_UP: return "up";
    case v1::OPER_STATE_DEGRADED: return "degraded";
    case v1::OPER_STATE_DOWN: return "down";
    default: return "unknown";
  }
}

}  // namespace geodesic::entity
