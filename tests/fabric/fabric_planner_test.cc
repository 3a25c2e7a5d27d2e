#include "fabric/fabric_planner.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "fabric/fabric_audit.h"
#include "fabric/fabric_validation.h"
#include "fabric/usable_capacity.h"

namespace geodesic::fabric {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;

TEST(FabricPlannerTest, TwoTiersOfRadix64Reach2048EndpointsPerPlane) {
  // 64 leaves (32 down, 32 up) and 32 spines (64 down) per plane.
  auto plan = PlanTwoTier(64, 8, 8);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->endpoints_per_plane, 2048u);
  EXPECT_EQ(plan->gpus, 2048u);  // one NIC per GPU per plane
  ASSERT_EQ(plan->layers.size(), 2u);
  EXPECT_EQ(plan->layers[0].name, "leaf");
  EXPECT_EQ(plan->layers[0].switches_per_plane, 64u);
  EXPECT_EQ(plan->layers[0].downlink_ports, 32u);
  EXPECT_EQ(plan->layers[0].uplink_ports, 32u);
  EXPECT_EQ(plan->layers[1].name, "spine");
  EXPECT_EQ(plan->layers[1].switches_per_plane, 32u);
  EXPECT_EQ(plan->layers[1].downlink_ports, 64u);
  EXPECT_EQ(plan->layers[1].uplink_ports, 0u);
  EXPECT_EQ(plan->switches_per_plane, 96u);
  EXPECT_EQ(plan->switches_total, 768u);
  EXPECT_EQ(plan->switch_links_per_plane, 2048u);
  EXPECT_EQ(plan->switch_links_total, 16384u);
  EXPECT_EQ(plan->max_switch_hops, 3u);
}

TEST(FabricPlannerTest, ThreeTiersOfRadix64Reach65536EndpointsPerPlane) {
  auto plan = PlanThreeTier(64, 8, 8);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->endpoints_per_plane, 65536u);  // 64^3 / 4
  EXPECT_EQ(plan->gpus, 65536u);
  ASSERT_EQ(plan->layers.size(), 3u);
  EXPECT_EQ(plan->layers[0].switches_per_plane, 2048u);  // 64 pods x 32
  EXPECT_EQ(plan->layers[1].switches_per_plane, 2048u);
  EXPECT_EQ(plan->layers[2].name, "super-spine");
  EXPECT_EQ(plan->layers[2].switches_per_plane, 1024u);  // (64/2)^2
  EXPECT_EQ(plan->switches_per_plane, 5120u);            // 5 k^2 / 4
  EXPECT_EQ(plan->switch_links_per_plane, 131072u);      // k^3 / 2
  EXPECT_EQ(plan->max_switch_hops, 5u);
}

TEST(FabricPlannerTest, MatchesTheFatTreePaperFor48PortSwitches) {
  // Al-Fares et al., SIGCOMM 2008: a fat tree of 48-port switches supports
  // 27,648 hosts with 2,880 switches (576 core).
  auto plan = PlanThreeTier(48, 1, 1);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->gpus, 27648u);
  EXPECT_EQ(plan->switches_total, 2880u);
  EXPECT_EQ(plan->layers[2].switches_per_plane, 576u);
  // k = 4, the paper's worked example: 16 hosts, 20 switches.
  plan = PlanThreeTier(4, 1, 1);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->gpus, 16u);
  EXPECT_EQ(plan->switches_total, 20u);
}

TEST(FabricPlannerTest, PlanesMultiplyGpusAtTheSameRadix) {
  // 8 NICs per GPU: all in one plane, or one in each of 8 planes.
  EXPECT_EQ(PlanTwoTier(64, 1, 8)->gpus, 256u);
  EXPECT_EQ(PlanTwoTier(64, 2, 8)->gpus, 512u);
  EXPECT_EQ(PlanTwoTier(64, 8, 8)->gpus, 2048u);
  EXPECT_EQ(PlanTwoTier(64, 1, 8)->nics_per_gpu_per_plane, 8u);
  EXPECT_EQ(PlanTwoTier(64, 2, 8)->switches_total, 192u);
  // Endpoints that do not fill a whole GPU stay idle.
  auto uneven = PlanTwoTier(64, 1, 3);
  EXPECT_EQ(uneven->gpus, 682u);
  EXPECT_EQ(uneven->idle_endpoints_per_plane, 2u);
}

TEST(FabricPlannerTest, RejectsBadInputsNamingThem) {
  auto expect_invalid = [](absl::StatusOr<PlanResult> plan, const std::string& message) {
    EXPECT_EQ(plan.status().code(), absl::StatusCode::kInvalidArgument) << message;
    EXPECT_THAT(std::string(plan.status().message()), HasSubstr(message));
  };
  expect_invalid(PlanTwoTier(63, 1, 1), "radix: must be even and in [2, 4096], got 63");
  expect_invalid(PlanTwoTier(0, 1, 1), "radix: must be even");
  expect_invalid(PlanThreeTier(4098, 1, 1), "radix: must be even and in [2, 4096], got 4098");
  expect_invalid(PlanTwoTier(64, 0, 8), "planes: must be positive");
  expect_invalid(PlanTwoTier(64, 1, 0), "nics_per_gpu: must be in [1, 1024], got 0");
  expect_invalid(PlanThreeTier(64, 3, 8), "planes: 3 does not divide nics_per_gpu (8)");
  expect_invalid(PlanTwoTier(64, 16, 8), "planes: 16 exceeds nics_per_gpu (8)");
  EXPECT_TRUE(PlanTwoTier(2, 1, 1).ok());
  EXPECT_TRUE(PlanThreeTier(4096, 1024, 1024).ok());
}

TEST(FabricPlannerTest, TwoTiersWithMorePlanesCostFewerSwitchesWhenTheyReach) {
  auto comparison = CompareTierVsPlanes(64, 8, 2000);
  ASSERT_TRUE(comparison.ok()) << comparison.status();
  EXPECT_TRUE(comparison->two_tier.reaches_target);
  EXPECT_EQ(comparison->two_tier.plan.planes, 8u);
  EXPECT_EQ(comparison->two_tier.plan.switches_total, 768u);
  EXPECT_TRUE(comparison->three_tier.reaches_target);
  EXPECT_EQ(comparison->three_tier.plan.planes, 1u);  // 65,536 / 8 = 8,192 GPUs
  EXPECT_EQ(comparison->three_tier.plan.switches_total, 5120u);
  EXPECT_EQ(comparison->fewer_switches_tiers, 2u);
}

TEST(FabricPlannerTest, BeyondTwoTiersOnlyAThirdTierReaches) {
  auto comparison = CompareTierVsPlanes(64, 8, 10000);
  ASSERT_TRUE(comparison.ok());
  EXPECT_FALSE(comparison->two_tier.reaches_target);
  EXPECT_EQ(comparison->two_tier.plan.planes, 8u);  // the most it can: 2,048 GPUs
  EXPECT_EQ(comparison->two_tier.plan.gpus, 2048u);
  EXPECT_TRUE(comparison->three_tier.reaches_target);
  EXPECT_EQ(comparison->three_tier.plan.planes, 2u);  // 16,384 GPUs
  EXPECT_EQ(comparison->three_tier.plan.switches_total, 10240u);
  EXPECT_EQ(comparison->fewer_switches_tiers, 3u);
}

TEST(FabricPlannerTest, NeitherReachesATargetBeyondThreeTiers) {
  auto comparison = CompareTierVsPlanes(64, 8, 100000);
  ASSERT_TRUE(comparison.ok());
  EXPECT_FALSE(comparison->two_tier.reaches_target);
  EXPECT_FALSE(comparison->three_tier.reaches_target);
  EXPECT_EQ(comparison->three_tier.plan.gpus, 65536u);
  EXPECT_EQ(comparison->fewer_switches_tiers, 0u);
  // A bigger radix gets there with two tiers: 512^2 / 2 = 131,072.
  comparison = CompareTierVsPlanes(512, 8, 100000);
  ASSERT_TRUE(comparison.ok());
  EXPECT_TRUE(comparison->two_tier.reaches_target);
  EXPECT_EQ(comparison->two_tier.plan.planes, 8u);
  EXPECT_EQ(comparison->fewer_switches_tiers, 2u);
}

TEST(FabricPlannerTest, ComparisonRejectsBadInputs) {
  EXPECT_EQ(CompareTierVsPlanes(64, 8, 0).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(CompareTierVsPlanes(65, 8, 10).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(CompareTierVsPlanes(64, 0, 10).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(FabricPlannerTest, PlannedFabricIsValidNonBlockingAndFullyUsable) {
  auto plan = PlanThreeTier(16, 4, 4);
  ASSERT_TRUE(plan.ok());
  FabricOptions options;
  options.facility_id = "ams";
  options.port_speed_gbps = 400;
  options.gpus_per_server = 8;
  options.backbone_uplink_gbps = 25600;
  auto fabric = MakeFabric(*plan, options);
  ASSERT_TRUE(fabric.ok()) << fabric.status();
  EXPECT_TRUE(ValidateFabric(*fabric).ok()) << ValidateFabric(*fabric);
  EXPECT_EQ(fabric->planes(), 4u);
  EXPECT_EQ(fabric->rails(), 8u);
  EXPECT_EQ(fabric->gpus(), 1024u);  // 16^3 / 4
  ASSERT_EQ(fabric->layers_size(), 3);
  EXPECT_EQ(fabric->layers(2).name(), "super-spine");
  EXPECT_EQ(fabric->layers(2).switch_count(), 64u);
  EXPECT_THAT(AuditOversubscription(*fabric), IsEmpty());
  EXPECT_DOUBLE_EQ(ComputeUsableCapacity(*fabric).total_gbps, 4 * 1024 * 400.0);
}

TEST(FabricPlannerTest, PlannedFabricRoundsDownToWholeServers) {
  auto plan = PlanTwoTier(6, 1, 1);  // 18 endpoints
  ASSERT_TRUE(plan.ok());
  FabricOptions options{"ams", 100, 8, 100};
  auto fabric = MakeFabric(*plan, options);
  ASSERT_TRUE(fabric.ok()) << fabric.status();
  EXPECT_EQ(fabric->gpus(), 16u);
  EXPECT_TRUE(ValidateFabric(*fabric).ok());
}

TEST(FabricPlannerTest, MakeFabricRejectsWhatTheModelCannotHold) {
  FabricOptions options{"ams", 400, 8, 0};
  auto several_nics_per_plane = MakeFabric(*PlanTwoTier(64, 1, 8), options);
  EXPECT_EQ(several_nics_per_plane.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(several_nics_per_plane.status().message()),
              HasSubstr("one NIC per GPU per plane"));
  auto too_big = MakeFabric(*PlanThreeTier(4096, 1, 1), options);  // 2^34 GPUs
  EXPECT_THAT(std::string(too_big.status().message()), HasSubstr("do not fit Fabric.gpus"));
  FabricOptions no_speed{"ams", 0, 8, 0};
  EXPECT_FALSE(MakeFabric(*PlanTwoTier(64, 1, 1), no_speed).ok());
  FabricOptions no_facility{"", 400, 8, 0};
  EXPECT_FALSE(MakeFabric(*PlanTwoTier(64, 1, 1), no_facility).ok());
}

}  // namespace
}  // namespace geodesic::fabric
