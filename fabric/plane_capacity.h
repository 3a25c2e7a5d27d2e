#pragma once
// What the fields of a v1::Fabric mean, and how much one plane carries.
// Every other file in fabric/ reads a Fabric through these definitions.
//
// The model: rail-optimized, multi-plane (the reading of proto/geodesic/v1/model.proto
// used throughout this folder):
//   - NIC: one network port of `nic_speed_gbps` facing one plane. A physical NIC
//     whose ports are split over several planes (an 800G NIC as 4 x 200G into 4
//     planes) counts as one NIC per plane.
//   - Every GPU has exactly one NIC in every plane: a GPU has `planes` NICs in all
//     and can send planes x nic_speed_gbps into the fabric.
//   - GPU servers hold `rails` GPUs each (so `gpus` is a whole number of servers):
//     a server has `rails` NICs per plane, as the proto says.
//   - Rail r of plane p: NIC r of every server in plane p (the plane-p NIC of each
//     server's GPU r), together with the leaf switches of plane p that those NICs
//     attach to. A failed rail takes those NICs (1/rails of the plane's NICs) out.
//   - The planes are identical and disjoint (no switch or link is shared between
//     planes). `layers` describes ONE plane, bottom-up: layers[0] is the leaf, whose
//     downlinks face the NICs; the last layer is the top, with no uplinks.
//     switch_count is per plane; downlink_ports / uplink_ports are per switch; a
//     breakout (one 800G cage as 2 x 400G) counts as two ports of 400.
//   - backbone_uplink_gbps: what the whole facility (all planes together) can send
//     to, or receive from, the backbone routers.
//
// Capacities, in Gb/s, one direction, per plane unless the name says otherwise:
//   - NIC capacity: gpus x nic_speed_gbps (one NIC per GPU in the plane).
//   - A layer's uplink / downlink capacity: switch_count x ports x port_speed_gbps.
//   - Plane capacity: the bottleneck between the NICs and the top layer, i.e. the
//     minimum of the NIC capacity, every layer's downlink capacity and every layer's
//     uplink capacity below the top. It is what the plane carries when its traffic
//     crosses the top layer (where the backbone border attaches); for a
//     non-blocking (1:1) plane it equals the NIC capacity.
//   - Fabric capacity: planes x plane capacity (all planes healthy).
//
// Pure: no I/O, no clock, no threads. Thread-compatible. The functions expect a
// fabric that passes ValidateFabric; on others they return unspecified values but
// never read out of bounds.
#include <cstdint>
#include <string>

#include "geodesic/v1/model.pb.h"

namespace geodesic::fabric {

// gpus x nic_speed_gbps.
double NicCapacityPerPlaneGbps(const v1::Fabric& fabric);

// switch_count x uplink_ports x port_speed_gbps (0 for the top layer).
double UplinkCapacityGbps(const v1::FabricLayer& layer);

// switch_count x downlink_ports x port_speed_gbps.
double DownlinkCapacityGbps(const v1::FabricLayer& layer);

// The bottleneck between the NICs and the top layer of one plane (see above).
// 0 for a fabric without layers.
double PlaneCapacityGbps(const v1::Fabric& fabric);

// planes x PlaneCapacityGbps.
double FabricCapacityGbps(const v1::Fabric& fabric);

// "400 Gb/s", "25.6 Tb/s", "1.64 Pb/s": at most two decimals, trailing zeros dropped.
std::string FormatBandwidth(double gbps);

}  // namespace geodesic::fabric
