#include "fabric/usable_capacity.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/fabric/fabric_examples.h"

namespace geodesic::fabric {
namespace {

constexpr double kPlaneGbps = 819200;  // NonBlockingTwoTier: 2,048 NICs x 400G per plane

v1::FabricPlaneHealth* Report(v1::Fabric& fabric, uint32_t plane, v1::OperState state) {
  v1::FabricPlaneHealth* health = fabric.add_plane_health();
  health->set_plane(plane);
  health->set_state(state);
  return health;
}

// Every plane reports UP.
v1::Fabric AllPlanesUp() {
  v1::Fabric fabric = testing::NonBlockingTwoTier();
  for (uint32_t plane = 0; plane < fabric.planes(); ++plane) Report(fabric, plane, v1::OPER_STATE_UP);
  return fabric;
}

TEST(UsableCapacityTest, AllPlanesUpIsTheWholeFabric) {
  const UsableCapacity capacity = ComputeUsableCapacity(AllPlanesUp());
  EXPECT_TRUE(capacity.health_reported);
  EXPECT_DOUBLE_EQ(capacity.total_gbps, 8 * kPlaneGbps);
  EXPECT_DOUBLE_EQ(capacity.usable_gbps, 8 * kPlaneGbps);
  EXPECT_DOUBLE_EQ(capacity.usable_fraction, 1.0);
  EXPECT_DOUBLE_EQ(capacity.backbone_exchange_gbps, 12800);  // the backbone uplink binds
  ASSERT_EQ(capacity.planes.size(), 8u);
  EXPECT_EQ(capacity.planes[5].reason, "up");
}

TEST(UsableCapacityTest, OnePlaneOfEightDownLeavesSevenEighths) {
  v1::Fabric fabric = AllPlanesUp();
  fabric.mutable_plane_health(3)->set_state(v1::OPER_STATE_DOWN);
  fabric.mutable_plane_health(3)->add_failed_rails(0);  // irrelevant once down
  const UsableCapacity capacity = ComputeUsableCapacity(fabric);
  EXPECT_DOUBLE_EQ(capacity.usable_gbps, 7 * kPlaneGbps);
  EXPECT_DOUBLE_EQ(capacity.usable_fraction, 7.0 / 8);
  EXPECT_DOUBLE_EQ(capacity.planes[3].usable_gbps, 0);
  EXPECT_EQ(capacity.planes[3].state, v1::OPER_STATE_DOWN);
}

TEST(UsableCapacityTest, TwoOfEightRailsFailedLeaveThatPlaneAtSixEighths) {
  v1::Fabric fabric = AllPlanesUp();
  v1::FabricPlaneHealth* health = fabric.mutable_plane_health(2);
  health->set_state(v1::OPER_STATE_DEGRADED);
  health->add_failed_rails(1);
  health->add_failed_rails(6);
  const UsableCapacity capacity = ComputeUsableCapacity(fabric);
  EXPECT_DOUBLE_EQ(capacity.planes[2].usable_gbps, kPlaneGbps * 6 / 8);
  EXPECT_EQ(capacity.planes[2].failed_rails, 2u);
  EXPECT_EQ(capacity.planes[2].reason, "degraded, 2 of 8 rails failed");
  EXPECT_DOUBLE_EQ(capacity.usable_gbps, 7 * kPlaneGbps + kPlaneGbps * 6 / 8);
  EXPECT_DOUBLE_EQ(capacity.usable_fraction, (7 + 0.75) / 8);
}

TEST(UsableCapacityTest, FailedRailsCountOnAPlaneStillReportedUp) {
  v1::Fabric fabric = AllPlanesUp();
  fabric.mutable_plane_health(0)->add_failed_rails(7);
  EXPECT_DOUBLE_EQ(ComputeUsableCapacity(fabric).planes[0].usable_gbps, kPlaneGbps * 7 / 8);
}

TEST(UsableCapacityTest, UnknownOrUnreportedPlanesAreNotTrusted) {
  v1::Fabric fabric = testing::NonBlockingTwoTier();
  for (uint32_t plane = 0; plane < 6; ++plane) Report(fabric, plane, v1::OPER_STATE_UP);
  Report(fabric, 6, v1::OPER_STATE_UNKNOWN);  // expired measurement; plane 7 says nothing
  const UsableCapacity capacity = ComputeUsableCapacity(fabric);
  EXPECT_DOUBLE_EQ(capacity.usable_gbps, 6 * kPlaneGbps);
  EXPECT_EQ(capacity.planes[6].reason, "unknown");
  EXPECT_EQ(capacity.planes[7].state, v1::OPER_STATE_UNKNOWN);
  EXPECT_EQ(capacity.planes[7].reason, "unknown (no report for this plane)");
}

TEST(UsableCapacityTest, NoHealthAtAllAssumesEveryPlaneUp) {
  const UsableCapacity capacity = ComputeUsableCapacity(testing::NonBlockingTwoTier());
  EXPECT_FALSE(capacity.health_reported);
  EXPECT_DOUBLE_EQ(capacity.usable_fraction, 1.0);
  EXPECT_EQ(capacity.planes[0].state, v1::OPER_STATE_UP);
}

TEST(UsableCapacityTest, BackboneExchangeIsLimitedByTheUsableFabric) {
  v1::Fabric fabric = AllPlanesUp();
  fabric.set_backbone_uplink_gbps(8 * kPlaneGbps);
  for (uint32_t plane = 0; plane < 4; ++plane) {
    fabric.mutable_plane_health(plane)->set_state(v1::OPER_STATE_DOWN);
  }
  EXPECT_DOUBLE_EQ(ComputeUsableCapacity(fabric).backbone_exchange_gbps, 4 * kPlaneGbps);
  for (auto& health : *fabric.mutable_plane_health()) health.set_state(v1::OPER_STATE_DOWN);
  const UsableCapacity none = ComputeUsableCapacity(fabric);
  EXPECT_DOUBLE_EQ(none.usable_gbps, 0);
  EXPECT_DOUBLE_EQ(none.backbone_exchange_gbps, 0);
}

TEST(UsableCapacityTest, RailsScaleTheBottleneckOfAnOversubscribedPlane) {
  v1::Fabric fabric = testing::ThreeTierSpineOversubscribed();  // 25.6 Tb/s per plane
  Report(fabric, 0, v1::OPER_STATE_UP);
  Report(fabric, 1, v1::OPER_STATE_DEGRADED)->add_failed_rails(4);
  const UsableCapacity capacity = ComputeUsableCapacity(fabric);
  EXPECT_DOUBLE_EQ(capacity.total_gbps, 51200);
  EXPECT_DOUBLE_EQ(capacity.usable_gbps, 25600 + 25600 * 7.0 / 8);
}

}  // namespace
}  // namespace geodesic::fabric
