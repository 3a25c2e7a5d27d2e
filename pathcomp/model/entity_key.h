#pragma once
// The id under which the model stores an entity: its `id`, except for a
// fabric, which is keyed by its facility (one fabric per facility), and an
// agent's session, keyed by facility and agent.
#include <string>

#include "geodesic/v1/model.pb.h"

namespace geodesic::pathcomp {

template <typename T>
const std::string& EntityKeyOf(const T& entity) {
  return entity.id();
}
inline const std::string& EntityKeyOf(const v1::Fabric& fabric) { return fabric.facility_id(); }

inline std::string SessionKey(const std::string& facility_id, const std::string& agent_id) {
  return facility_id + "." + agent_id;
}

}  // namespace geodesic::pathcomp
