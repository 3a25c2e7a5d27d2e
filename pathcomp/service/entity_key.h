#pragma once
// The id under which the model stores an entity: its `id`, except for a
// fabric, which is keyed by its facility (one fabric per facility).
#include <string>

#include "geodesic/v1/model.pb.h"

namespace geodesic::pathcomp {

template <typename T>
const std::string& EntityKeyOf(const T& entity) {
  return entity.id();
}
inline const std::string& EntityKeyOf(const v1::Fabric& fabric) { return fabric.facility_id(); }

}  // namespace geodesic::pathcomp
