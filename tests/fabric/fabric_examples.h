#pragma once
// Fabrics the fabric/ tests share (test-only).
#include "geodesic/v1/model.pb.h"

namespace geodesic::fabric::testing {

inline v1::FabricLayer Layer(const char* name, uint32_t switches, uint32_t down, uint32_t up,
                             double speed_gbps) {
  v1::FabricLayer layer;
  layer.set_name(name);
  layer.set_switch_count(switches);
  layer.set_downlink_ports(down);
  layer.set_uplink_ports(up);
  layer.set_port_speed_gbps(speed_gbps);
  return layer;
}

// A non-blocking two-tier fabric of radix-64 switches at 400G: 8 planes, servers
// of 8 GPUs, 2,048 GPUs with one NIC per plane. Per plane: 64 leaves (32 down, 32
// up), 32 spines (64 down). Plane capacity 819.2 Tb/s; fabric 6.5536 Pb/s.
inline v1::Fabric NonBlockingTwoTier() {
  v1::Fabric fabric;
  fabric.set_facility_id("iad");
  fabric.set_planes(8);
  fabric.set_rails(8);
  fabric.set_gpus(2048);
  fabric.set_nic_speed_gbps(400);
  *fabric.add_layers() = Layer("leaf", 64, 32, 32, 400);
  *fabric.add_layers() = Layer("spine", 32, 64, 0, 400);
  fabric.set_backbone_uplink_gbps(12800);
  return fabric;
}

// Three tiers, 96 GPUs at 400G per plane (38.4 Tb/s): a 1:1 leaf, a spine with
// 25.6 Tb/s of uplinks (1.5:1), a super-spine whose downlinks match.
inline v1::Fabric ThreeTierSpineOversubscribed() {
  v1::Fabric fabric;
  fabric.set_facility_id("ord");
  fabric.set_planes(2);
  fabric.set_rails(8);
  fabric.set_gpus(96);
  fabric.set_nic_speed_gbps(400);
  *fabric.add_layers() = Layer("leaf", 3, 32, 32, 400);
  *fabric.add_layers() = Layer("spine", 4, 24, 16, 400);
  *fabric.add_layers() = Layer("super-spine", 2, 32, 0, 400);
  fabric.set_backbone_uplink_gbps(3200);
  return fabric;
}

}  // namespace geodesic::fabric::testing
