#pragma once
// The id under which the model stores an entity: its `id`, except for a
// fabric, which is keyed by its facility (one fabric per facility), and an
// agent's session, keyed by facility and agent; numbered records by number.
#include <cstdint>
#include <string>

#include "geodesic/v1/model.pb.h"

namespace geodesic::pathcomp {

template <typename T>
const std::string& EntityKeyOf(const T& entity) {
  return entity.id();
}
inline const std::string& EntityKeyOf(const v1::Fabric& fabric) { return fabric.facility_id(); }

// The store id of a numbered record (plan history, audit): zero-padded, so
// that ids sort by number.
inline std::string PaddedId(uint64_t number) {
  std::string digits = std::to_string(number);
  return std::string(20 - digits.size(), '0') + digits;
}

inline std::string SessionKey(const std::string& facility_id, const std::string& agent_id) {
  return facility_id + "." + agent_id;
}

}  // namespace geodesic::pathcomp
