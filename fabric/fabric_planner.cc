#include "fabric/fabric_planner.h"

#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"

namespace geodesic::fabric {
namespace {

absl::Status ValidateInputs(uint32_t radix, uint32_t planes, uint32_t nics_per_gpu) {
  if (radix < 2 || radix > kMaxPlannerRadix || radix % 2 != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("radix: must be even and in [2, ", kMaxPlannerRadix, "], got ", radix));
  }
  if (nics_per_gpu == 0 || nics_per_gpu > kMaxNicsPerGpu) {
    return absl::InvalidArgumentError(
        absl::StrCat("nics_per_gpu: must be in [1, ", kMaxNicsPerGpu, "], got ", nics_per_gpu));
  }
  if (planes == 0) return absl::InvalidArgumentError("planes: must be positive");
  if (planes > nics_per_gpu) {
    return absl::InvalidArgumentError(absl::StrCat(
        "planes: ", planes, " exceeds nics_per_gpu (", nics_per_gpu,
        "): every GPU needs a NIC in every plane"));
  }
  if (nics_per_gpu % planes != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "planes: ", planes, " does not divide nics_per_gpu (", nics_per_gpu,
        "): every GPU needs the same number of NICs in every plane"));
  }
  return absl::OkStatus();
}

// Fills what follows from the layers and the endpoint count.
PlanResult Finish(uint32_t tiers, uint32_t radix, uint32_t planes, uint32_t nics_per_gpu,
                  uint64_t endpoints_per_plane, std::vector<PlannedLayer> layers) {
  PlanResult plan;
  plan.tiers = tiers;
  plan.radix = radix;
  plan.planes = planes;
  plan.nics_per_gpu = nics_per_gpu;
  plan.nics_per_gpu_per_plane = nics_per_gpu / planes;
  plan.endpoints_per_plane = endpoints_per_plane;
  plan.gpus = endpoints_per_plane / plan.nics_per_gpu_per_plane;
  plan.idle_endpoints_per_plane = endpoints_per_plane % plan.nics_per_gpu_per_plane;
  for (const PlannedLayer& layer : layers) {
    plan.switches_per_plane += layer.switches_per_plane;
    plan.switch_links_per_plane += layer.switches_per_plane * layer.uplink_ports;
  }
  plan.layers = std::move(layers);
  plan.switches_total = plan.switches_per_plane * planes;
  plan.switch_links_total = plan.switch_links_per_plane * planes;
  plan.max_switch_hops = 2 * tiers - 1;
  return plan;
}

absl::StatusOr<TierOption> FewestPlanes(bool three_tier, uint32_t radix, uint32_t nics_per_gpu,
                                        uint64_t target_gpus) {
  TierOption option;
  for (uint32_t planes = 1; planes <= nics_per_gpu; ++planes) {
    if (nics_per_gpu % planes != 0) continue;
    absl::StatusOr<PlanResult> plan = three_tier ? PlanThreeTier(radix, planes, nics_per_gpu)
                                                 : PlanTwoTier(radix, planes, nics_per_gpu);
    if (!plan.ok()) return plan.status();
    option.plan = *std::move(plan);
    if (option.plan.gpus >= target_gpus) {
      option.reaches_target = true;
      break;
    }
  }
  return option;
}

}  // namespace

absl::StatusOr<PlanResult> PlanTwoTier(uint32_t radix, uint32_t planes, uint32_t nics_per_gpu) {
  if (absl::Status status = ValidateInputs(radix, planes, nics_per_gpu); !status.ok()) return status;
  const uint64_t r = radix;
  const uint32_t half = radix / 2;
  return Finish(2, radix, planes, nics_per_gpu, r * r / 2,
                {{"leaf", r, half, half}, {"spine", r / 2, radix, 0}});
}

absl::StatusOr<PlanResult> PlanThreeTier(uint32_t radix, uint32_t planes, uint32_t nics_per_gpu) {
  if (absl::Status status = ValidateInputs(radix, planes, nics_per_gpu); !status.ok()) return status;
  const uint64_t k = radix;
  const uint32_t half = radix / 2;
  return Finish(3, radix, planes, nics_per_gpu, k * k * k / 4,
                {{"leaf", k * k / 2, half, half},
                 {"spine", k * k / 2, half, half},
                 {"super-spine", k * k / 4, radix, 0}});
}

absl::StatusOr<TierVsPlanes> CompareTierVsPlanes(uint32_t radix, uint32_t nics_per_gpu,
                                                 uint64_t target_gpus) {
  if (target_gpus == 0) return absl::InvalidArgumentError("target_gpus: must be positive");
  if (absl::Status status = ValidateInputs(radix, 1, nics_per_gpu); !status.ok()) return status;
  TierVsPlanes comparison;
  comparison.target_gpus = target_gpus;
  absl::StatusOr<TierOption> two = FewestPlanes(false, radix, nics_per_gpu, target_gpus);
  if (!two.ok()) return two.status();
  absl::StatusOr<TierOption> three = FewestPlanes(true, radix, nics_per_gpu, target_gpus);
  if (!three.ok()) return three.status();
  comparison.two_tier = *std::move(two);
  comparison.three_tier = *std::move(three);
  if (comparison.two_tier.reaches_target &&
      (!comparison.three_tier.reaches_target ||
       comparison.two_tier.plan.switches_total <= comparison.three_tier.plan.switches_total)) {
    comparison.fewer_switches_tiers = 2;
  } else if (comparison.three_tier.reaches_target) {
    comparison.fewer_switches_tiers = 3;
  }
  return comparison;
}

absl::StatusOr<v1::Fabric> MakeFabric(const PlanResult& plan, const FabricOptions& options) {
  constexpr uint64_t kMaxField = std::numeric_limits<uint32_t>::max();
  if (plan.planes == 0 || plan.nics_per_gpu != plan.planes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "plan: the model holds one NIC per GPU per plane; this plan has ", plan.nics_per_gpu,
        " NICs per GPU over ", plan.planes, " planes"));
  }
  if (plan.layers.empty()) return absl::InvalidArgumentError("plan: has no layers");
  if (options.facility_id.empty()) return absl::InvalidArgumentError("facility_id: must not be empty");
  if (!(options.port_speed_gbps > 0) || !std::isfinite(options.port_speed_gbps)) {
    return absl::InvalidArgumentError("port_speed_gbps: must be positive");
  }
  if (!(options.backbone_uplink_gbps >= 0) || !std::isfinite(options.backbone_uplink_gbps)) {
    return absl::InvalidArgumentError("backbone_uplink_gbps: must be finite and not negative");
  }
  if (options.gpus_per_server == 0 || options.gpus_per_server > plan.gpus) {
    return absl::InvalidArgumentError(absl::StrCat("gpus_per_server: must be in [1, ", plan.gpus,
                                                   "], got ", options.gpus_per_server));
  }
  const uint64_t gpus = plan.gpus / options.gpus_per_server * options.gpus_per_server;
  if (gpus > kMaxField) {
    return absl::InvalidArgumentError(
        absl::StrCat("plan: ", gpus, " GPUs do not fit Fabric.gpus (uint32)"));
  }
  v1::Fabric fabric;
  fabric.set_facility_id(options.facility_id);
  fabric.set_planes(plan.planes);
  fabric.set_rails(options.gpus_per_server);
  fabric.set_gpus(static_cast<uint32_t>(gpus));
  fabric.set_nic_speed_gbps(options.port_speed_gbps);
  fabric.set_backbone_uplink_gbps(options.backbone_uplink_gbps);
  for (const PlannedLayer& planned : plan.layers) {
    if (planned.switches_per_plane > kMaxField) {
      return absl::InvalidArgumentError(absl::StrCat(
          "plan: ", planned.switches_per_plane, " ", planned.name,
          " switches do not fit FabricLayer.switch_count (uint32)"));
    }
    v1::FabricLayer* layer = fabric.add_layers();
    layer->set_name(planned.name);
    layer->set_switch_count(static_cast<uint32_t>(planned.switches_per_plane));
    layer->set_downlink_ports(planned.downlink_ports);
    layer->set_uplink_ports(planned.uplink_ports);
    layer->set_port_speed_gbps(options.port_speed_gbps);
  }
  return fabric;
}

}  // namespace geodesic::fabric
