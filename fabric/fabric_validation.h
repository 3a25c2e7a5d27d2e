#pragma once
// Checks that a v1::Fabric is well formed under the model of fabric/plane_capacity.h.
// Pure: no I/O, no clock, no threads. Thread-compatible.
#include <cstdint>

#include "absl/status/status.h"
#include "geodesic/v1/model.pb.h"

namespace geodesic::fabric {

// Upper bound on `planes`: results are kept per plane, and real fabrics have a
// handful (1 to 16).
inline constexpr uint32_t kMaxPlanes = 1024;

// OK, or InvalidArgument for the first problem found, naming the field:
// "layers[1].port_speed_gbps: must be positive". Checks:
//   - facility_id is set; 0 < planes <= kMaxPlanes; rails > 0; gpus > 0 and a
//     multiple of rails (whole servers); nic_speed_gbps positive and finite;
//   - at least one layer; every layer has a name (unique), switch_count > 0,
//     downlink_ports > 0, a positive finite port_speed_gbps; uplink_ports > 0 below
//     the top layer and == 0 at the top;
//   - backbone_uplink_gbps is finite and >= 0 (0 is legal but AuditOversubscription
//     reports it);
//   - plane_health: a known state, plane < planes and no plane twice; failed_rails
//     < rails and no rail twice.
// Capacity problems (oversubscription, too few ports) are not errors: see
// AuditOversubscription.
[[nodiscard]] absl::Status ValidateFabric(const v1::Fabric& fabric);

}  // namespace geodesic::fabric
