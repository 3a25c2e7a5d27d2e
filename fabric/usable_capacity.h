#pragma once
// What a facility's fabric can carry given the health of its planes, and how
// much of it the facility can exchange with the backbone.
// Capacities as defined in fabric/plane_capacity.h.
// Pure: no I/O, no clock, no threads. Thread-compatible.
//
// Per plane:
//   - DOWN: 0.
//   - UP or DEGRADED (DEGRADED is usable, see OperState) with k of R rails
//     failed: (R - k) / R of the plane capacity (a rail is 1/R of the plane's
//     NICs and of the leaves carrying them).
//   - UNKNOWN, or no entry for the plane while other planes report: 0. As
//     OperState says, a missing or expired measurement is not used for
//     planning: an unmeasured plane is not trusted with traffic.
// If plane_health is empty altogether, no one reports fabric health for this
// facility (an inventory or a planned fabric): every plane is taken as UP with
// no failed rails, and `health_reported` is false so callers can tell.
// Plane drains (intents) are not part of a Fabric; callers apply them on top.
#include <cstdint>
#include <string>
#include <vector>

#include "geodesic/v1/model.pb.h"

namespace geodesic::fabric {

struct PlaneUsableCapacity {
  uint32_t plane = 0;
  // The state used: the reported one, UNKNOWN for a plane without an entry,
  // UP for every plane when health_reported is false.
  v1::OperState state = v1::OPER_STATE_UNKNOWN;
  uint32_t failed_rails = 0;
  double capacity_gbps = 0;  // the plane's design capacity
  double usable_gbps = 0;
  // "up", "down", "degraded, 2 of 8 rails failed", "unknown (no report)", ...
  std::string reason;
};

struct UsableCapacity {
  double total_gbps = 0;       // all planes healthy: FabricCapacityGbps
  double usable_gbps = 0;      // sum over planes
  double usable_fraction = 0;  // usable / total; 0 when total is 0
  // min(backbone_uplink_gbps, usable_gbps): what the facility can exchange with
  // the backbone right now.
  double backbone_exchange_gbps = 0;
  bool health_reported = false;            // false: plane_health empty, all assumed UP
  std::vector<PlaneUsableCapacity> planes;  // one per plane, in plane order
};

// Expects a fabric that passes ValidateFabric (entries naming a plane or rail
// out of range are ignored; a rail listed twice counts once).
UsableCapacity ComputeUsableCapacity(const v1::Fabric& fabric);

}  // namespace geodesic::fabric
