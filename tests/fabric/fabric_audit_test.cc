#include "fabric/fabric_audit.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "fabric/fabric_validation.h"
#include "tests/fabric/fabric_examples.h"

namespace geodesic::fabric {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

TEST(FabricAuditTest, NonBlockingFabricHasNoFindings) {
  const v1::Fabric fabric = testing::NonBlockingTwoTier();
  ASSERT_TRUE(ValidateFabric(fabric).ok());
  EXPECT_THAT(AuditOversubscription(fabric), IsEmpty());
}

TEST(FabricAuditTest, TwoToOneLeafIsReportedWithItsRatio) {
  v1::Fabric fabric = testing::NonBlockingTwoTier();
  fabric.mutable_layers(0)->set_uplink_ports(16);  // 16 up for 32 NICs down
  const auto findings = AuditOversubscription(fabric);
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_EQ(findings[0].kind, FindingKind::kOversubscribed);
  EXPECT_EQ(findings[0].layer_index, 0);
  EXPECT_EQ(findings[0].layer_name, "leaf");
  EXPECT_DOUBLE_EQ(findings[0].demand, 819200);
  EXPECT_DOUBLE_EQ(findings[0].capacity, 409600);
  EXPECT_DOUBLE_EQ(findings[0].ratio, 2.0);
  EXPECT_EQ(findings[0].message,
            "layers[0] leaf: 2.00:1 oversubscribed per plane (uplinks 409.6 Tb/s for 819.2 Tb/s "
            "from NICs)");
}

TEST(FabricAuditTest, OversubscribedSpineIsMeasuredAgainstTheLeafUplinks) {
  const auto findings = AuditOversubscription(testing::ThreeTierSpineOversubscribed());
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_EQ(findings[0].kind, FindingKind::kOversubscribed);
  EXPECT_EQ(findings[0].layer_index, 1);
  EXPECT_DOUBLE_EQ(findings[0].ratio, 1.5);
  EXPECT_EQ(findings[0].message,
            "layers[1] spine: 1.50:1 oversubscribed per plane (uplinks 25.6 Tb/s for 38.4 Tb/s "
            "from leaf)");
}

TEST(FabricAuditTest, HigherLayerIsLoadedByWhatTheLayerBelowSendsNotByItsSpareDownlinks) {
  // Spine downlinks could take 76.8 Tb/s, but the 2:1 leaves send only 19.2 Tb/s
  // into 25.6 Tb/s of spine uplinks: only the leaf is oversubscribed.
  v1::Fabric fabric = testing::ThreeTierSpineOversubscribed();
  fabric.mutable_layers(0)->set_uplink_ports(16);
  fabric.mutable_layers(1)->set_downlink_ports(48);
  const auto findings = AuditOversubscription(fabric);
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_EQ(findings[0].layer_name, "leaf");
  EXPECT_DOUBLE_EQ(findings[0].ratio, 2.0);
}

TEST(FabricAuditTest, LeafWithTooFewPortsForTheNics) {
  v1::Fabric fabric = testing::NonBlockingTwoTier();
  fabric.set_gpus(4096);  // 4,096 NICs per plane, 64 x 32 leaf ports
  fabric.set_backbone_uplink_gbps(12800);
  const auto findings = AuditOversubscription(fabric);
  ASSERT_THAT(findings, SizeIs(2));
  EXPECT_EQ(findings[0].kind, FindingKind::kPortShortfall);
  EXPECT_EQ(findings[0].message, "layers[0] leaf: 4096 NICs per plane but only 2048 downlink ports");
  EXPECT_DOUBLE_EQ(findings[0].ratio, 2.0);
  // The NICs also offer twice the leaf uplinks.
  EXPECT_EQ(findings[1].kind, FindingKind::kOversubscribed);
  EXPECT_DOUBLE_EQ(findings[1].ratio, 2.0);
}

TEST(FabricAuditTest, SpineWithTooFewPortsForTheLeafUplinks) {
  v1::Fabric fabric = testing::NonBlockingTwoTier();
  fabric.mutable_layers(1)->set_switch_count(16);  // 1,024 ports for 2,048 uplinks
  const auto findings = AuditOversubscription(fabric);
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_EQ(findings[0].kind, FindingKind::kPortShortfall);
  EXPECT_EQ(findings[0].layer_index, 1);
  EXPECT_EQ(findings[0].message,
            "layers[1] spine: leaf has 2048 uplink ports per plane but spine only 1024 downlink "
            "ports");
}

TEST(FabricAuditTest, BackboneUplinkBeyondTheFabricIsStranded) {
  v1::Fabric fabric = testing::NonBlockingTwoTier();
  fabric.set_backbone_uplink_gbps(8e6);  // the fabric carries 6.5536 Pb/s
  const auto findings = AuditOversubscription(fabric);
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_EQ(findings[0].kind, FindingKind::kBackboneExceedsFabric);
  EXPECT_EQ(findings[0].layer_index, -1);
  EXPECT_THAT(findings[0].message, HasSubstr("backbone uplink 8 Pb/s exceeds the fabric's 6.55 Pb/s"));
  EXPECT_THAT(findings[0].message, HasSubstr("8 planes x 819.2 Tb/s"));

  // Exactly the fabric capacity is fine.
  fabric.set_backbone_uplink_gbps(6553600);
  EXPECT_THAT(AuditOversubscription(fabric), IsEmpty());
}

TEST(FabricAuditTest, BackboneIsComparedWithTheBottleneckNotTheNics) {
  v1::Fabric fabric = testing::ThreeTierSpineOversubscribed();  // 2 planes x 25.6 Tb/s
  fabric.set_backbone_uplink_gbps(60000);                        // < 2 x 38.4 Tb/s of NICs
  const auto findings = AuditOversubscription(fabric);
  ASSERT_THAT(findings, SizeIs(2));
  EXPECT_EQ(findings[1].kind, FindingKind::kBackboneExceedsFabric);
  EXPECT_DOUBLE_EQ(findings[1].capacity, 51200);
}

TEST(FabricAuditTest, MissingBackboneUplinkIsReported) {
  v1::Fabric fabric = testing::NonBlockingTwoTier();
  fabric.set_backbone_uplink_gbps(0);
  const auto findings = AuditOversubscription(fabric);
  ASSERT_THAT(findings, SizeIs(1));
  EXPECT_EQ(findings[0].kind, FindingKind::kNoBackboneUplink);
}

}  // namespace
}  // namespace geodesic::fabric
