#pragma once
// Sizes non-blocking (1:1) rail-optimized multi-plane fabrics built from one
// switch model of `radix` ports: how many GPUs two tiers (leaf-spine) or three
// tiers (a k-ary fat tree: leaf, spine, super-spine) reach, at what cost in
// switches and links, and whether more planes or a third tier is the cheaper way
// to a GPU count.
// Pure: no I/O, no clock, no threads. Thread-compatible.
//
// The model (as in fabric/plane_capacity.h, generalized to k NICs per GPU and plane):
//   - Every GPU has `nics_per_gpu` NICs, each NIC into exactly one plane, spread
//     evenly: nics_per_gpu / planes NICs per GPU in every plane. So `planes` must
//     divide `nics_per_gpu`. More planes than NICs per GPU would leave every GPU
//     outside some planes, splitting the GPUs into islands that cannot reach each
//     other, so that is rejected rather than counted as "more GPUs".
//   - Endpoints (NIC ports) per plane: R^2/2 with two tiers (R leaves with R/2
//     ports down and R/2 up, R/2 spines with R ports down); R^3/4 with three
//     tiers (R pods of R/2 leaves and R/2 spines, (R/2)^2 super-spines).
//   - GPUs reached = floor(endpoints_per_plane / (nics_per_gpu / planes))
//     = endpoints_per_plane x planes / nics_per_gpu, rounded down.
//     With a fixed nics_per_gpu, going from 1 plane to nics_per_gpu planes
//     multiplies the GPUs by nics_per_gpu at the same radix and tier count; the
//     two-tier maximum is R^2/2 GPUs (one NIC per GPU per plane).
//   - Hops: switches on the longest GPU-to-GPU path inside a plane: 3 (leaf,
//     spine, leaf) with two tiers, 5 with three.
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "geodesic/v1/model.pb.h"

namespace geodesic::fabric {

// Inputs accepted by the planner: radix even in [2, kMaxPlannerRadix];
// nics_per_gpu in [1, kMaxNicsPerGpu]; planes >= 1 dividing nics_per_gpu.
inline constexpr uint32_t kMaxPlannerRadix = 4096;
inline constexpr uint32_t kMaxNicsPerGpu = 1024;

// One tier of a plane, as Fabric.layers would hold it.
struct PlannedLayer {
  std::string name;  // "leaf", "spine", "super-spine"
  uint64_t switches_per_plane = 0;
  uint32_t downlink_ports = 0;  // per switch
  uint32_t uplink_ports = 0;    // per switch; 0 at the top
};

struct PlanResult {
  uint32_t tiers = 0;  // 2 or 3
  uint32_t radix = 0;
  uint32_t planes = 0;
  uint32_t nics_per_gpu = 0;
  uint32_t nics_per_gpu_per_plane = 0;
  uint64_t endpoints_per_plane = 0;       // NIC-facing ports of one plane
  uint64_t gpus = 0;
  uint64_t idle_endpoints_per_plane = 0;  // left over when endpoints are not a multiple
  std::vector<PlannedLayer> layers;       // bottom-up
  uint64_t switches_per_plane = 0;
  uint64_t switches_total = 0;
  uint64_t switch_links_per_plane = 0;    // switch-to-switch cables
  uint64_t switch_links_total = 0;
  uint32_t max_switch_hops = 0;           // 3 or 5
};

// InvalidArgument naming the input ("radix: must be even and in [2, 4096], got 63").
[[nodiscard]] absl::StatusOr<PlanResult> PlanTwoTier(uint32_t radix, uint32_t planes,
                                                     uint32_t nics_per_gpu);
[[nodiscard]] absl::StatusOr<PlanResult> PlanThreeTier(uint32_t radix, uint32_t planes,
                                                       uint32_t nics_per_gpu);

// One way to reach a target: the fewest planes (a divisor of nics_per_gpu) that
// reach it, or, when no plane count does, the largest design (planes =
// nics_per_gpu) with reaches_target false.
struct TierOption {
  bool reaches_target = false;
  PlanResult plan;
};

struct TierVsPlanes {
  uint64_t target_gpus = 0;
  TierOption two_tier;
  TierOption three_tier;
  // Of the options that reach the target, the one with fewer switches in total
  // (two tiers on a tie: fewer hops); 0 when neither reaches it.
  uint32_t fewer_switches_tiers = 0;
};

// More planes with two tiers, or a third tier, to reach target_gpus with a
// given switch radix and NICs per GPU. InvalidArgument for bad inputs or a
// target of 0.
[[nodiscard]] absl::StatusOr<TierVsPlanes> CompareTierVsPlanes(uint32_t radix, uint32_t nics_per_gpu,
                                                               uint64_t target_gpus);

struct FabricOptions {
  std::string facility_id;
  double port_speed_gbps = 0;    // every switch port and NIC (a 1:1 plan)
  uint32_t gpus_per_server = 8;  // becomes Fabric.rails
  double backbone_uplink_gbps = 0;
};

// The planned fabric as the model holds it: layers from the plan, gpus rounded
// down to whole servers, no plane_health. The model holds one NIC per GPU per
// plane, so a plan with nics_per_gpu != planes is InvalidArgument, as are an
// empty facility_id, a non-positive port speed, gpus_per_server of 0 or more
// GPUs per server than the plan reaches, and counts that do not fit the model's
// 32-bit fields. The result passes ValidateFabric and AuditOversubscription
// finds nothing in its layers.
[[nodiscard]] absl::StatusOr<v1::Fabric> MakeFabric(const PlanResult& plan,
                                                    const FabricOptions& options);

}  // namespace geodesic::fabric
