#include "fabric/plane_capacity.h"

#include <gtest/gtest.h>

#include "tests/fabric/fabric_examples.h"

namespace geodesic::fabric {
namespace {

TEST(PlaneCapacityTest, NonBlockingPlaneCarriesItsNics) {
  const v1::Fabric fabric = testing::NonBlockingTwoTier();
  EXPECT_DOUBLE_EQ(NicCapacityPerPlaneGbps(fabric), 2048 * 400.0);
  EXPECT_DOUBLE_EQ(UplinkCapacityGbps(fabric.layers(0)), 64 * 32 * 400.0);
  EXPECT_DOUBLE_EQ(DownlinkCapacityGbps(fabric.layers(1)), 32 * 64 * 400.0);
  EXPECT_DOUBLE_EQ(UplinkCapacityGbps(fabric.layers(1)), 0);
  EXPECT_DOUBLE_EQ(PlaneCapacityGbps(fabric), 819200);
  EXPECT_DOUBLE_EQ(FabricCapacityGbps(fabric), 8 * 819200.0);
}

TEST(PlaneCapacityTest, PlaneIsLimitedByItsNarrowestStage) {
  // The spine's 25.6 Tb/s of uplinks, not the 38.4 Tb/s of NICs.
  EXPECT_DOUBLE_EQ(PlaneCapacityGbps(testing::ThreeTierSpineOversubscribed()), 25600);

  v1::Fabric too_few_leaf_ports = testing::NonBlockingTwoTier();
  too_few_leaf_ports.mutable_layers(0)->set_downlink_ports(16);  // half the NICs attach
  EXPECT_DOUBLE_EQ(PlaneCapacityGbps(too_few_leaf_ports), 409600);

  v1::Fabric thin_spine = testing::NonBlockingTwoTier();
  thin_spine.mutable_layers(1)->set_switch_count(8);  // 8 x 64 ports for 2,048 leaf uplinks
  EXPECT_DOUBLE_EQ(PlaneCapacityGbps(thin_spine), 8 * 64 * 400.0);
}

TEST(PlaneCapacityTest, SingleLayerRailOnlyPlaneIsItsLeaves) {
  v1::Fabric fabric = testing::NonBlockingTwoTier();
  fabric.mutable_layers()->RemoveLast();
  fabric.mutable_layers(0)->set_downlink_ports(64);
  fabric.mutable_layers(0)->set_uplink_ports(0);
  EXPECT_DOUBLE_EQ(PlaneCapacityGbps(fabric), 819200);
  fabric.clear_layers();
  EXPECT_DOUBLE_EQ(PlaneCapacityGbps(fabric), 0);
}

TEST(PlaneCapacityTest, FormatsBandwidthInTheLargestFittingUnit) {
  EXPECT_EQ(FormatBandwidth(0), "0 Gb/s");
  EXPECT_EQ(FormatBandwidth(400), "400 Gb/s");
  EXPECT_EQ(FormatBandwidth(12.5), "12.5 Gb/s");
  EXPECT_EQ(FormatBandwidth(25600), "25.6 Tb/s");
  EXPECT_EQ(FormatBandwidth(38400), "38.4 Tb/s");
  EXPECT_EQ(FormatBandwidth(819200), "819.2 Tb/s");
  EXPECT_EQ(FormatBandwidth(6553600), "6.55 Pb/s");
}

}  // namespace
}  // namespace geodesic::fabric
