#pragma once
// Finds where a fabric's design cannot carry what its lower stages send: an
// oversubscribed layer, a layer with too few downlink ports to attach what is
// below it, and a backbone uplink the fabric cannot fill (or none at all).
// Works on the design (all planes identical and healthy); health is the business
// of ComputeUsableCapacity. Definitions in fabric/plane_capacity.h.
// Pure: no I/O, no clock, no threads. Thread-compatible.
#include <string>
#include <vector>

#include "geodesic/v1/model.pb.h"

namespace geodesic::fabric {

enum class FindingKind {
  // A layer's uplink capacity is below what the stage beneath offers it: for the
  // leaf, the NIC capacity of the plane; for a higher layer, the uplink capacity
  // of the layer beneath (what it can actually send up, whatever the spare
  // downlink ports of this layer). The top layer has no uplinks and is not checked.
  kOversubscribed,
  // A layer's downlink ports, across the plane, are fewer than what must attach
  // to them: the plane's NICs (one per GPU) for the leaf, the uplink ports of the
  // layer beneath for a higher layer.
  kPortShortfall,
  // backbone_uplink_gbps exceeds the fabric capacity (all planes): the excess can
  // never be used.
  kBackboneExceedsFabric,
  // backbone_uplink_gbps is 0: the facility exchanges nothing with the backbone.
  kNoBackboneUplink,
};

struct OversubscriptionFinding {
  FindingKind kind = FindingKind::kOversubscribed;
  // Index into Fabric.layers, or -1 for the facility-level (backbone) findings.
  int layer_index = -1;
  std::string layer_name;  // empty for the backbone findings
  // kOversubscribed: Gb/s per plane, offered from below vs the layer's uplinks.
  // kPortShortfall: ports per plane, needed vs available.
  // kBackboneExceedsFabric: Gb/s, backbone uplink vs fabric capacity (all planes).
  // kNoBackboneUplink: 0 and the fabric capacity.
  double demand = 0;
  double capacity = 0;
  double ratio = 0;  // demand / capacity (the N of "N:1")
  // One line for an operator, e.g. "layers[1] spine: 1.50:1 oversubscribed per
  // plane (uplinks 25.6 Tb/s for 38.4 Tb/s from leaf)".
  std::string message;
};

// Findings bottom-up by layer (for each layer, port shortfall before
// oversubscription), then the backbone finding. Empty for a non-blocking fabric
// whose ports all attach and whose backbone uplink is in (0, fabric capacity].
// Ratios above 1 by less than one part in 10^9 are not reported.
// Expects a fabric that passes ValidateFabric.
std::vector<OversubscriptionFinding> AuditOversubscription(const v1::Fabric& fabric);

}  // namespace geodesic::fabric
