#pragma once
// A link of a model built by hand, as the solver tests build them: between
// facilities `src` and `dst` (each end on node <facility>1), operationally
// up, `latency_us` one way. Callers add what their test needs (capacity,
// admin state, SRLGs). Test-only.
#include <cstdint>
#include <string>

#include "geodesic/v1/model.pb.h"

namespace geodesic::pathcomp::testing {

inline v1::Link UpLink(const std::string& id, const std::string& src, const std::string& dst, uint64_t latency_us) {
  v1::Link link;
  link.set_id(id);
  link.set_src_facility_id(src);
  link.set_dst_facility_id(dst);
  link.set_src_node_id(src + "1");
  link.set_dst_node_id(dst + "1");
  link.set_latency_us(latency_us);
  link.mutable_health()->set_state(v1::OPER_STATE_UP);
  return link;
}

}  // namespace geodesic::pathcomp::testing
