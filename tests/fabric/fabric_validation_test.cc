#include "fabric/fabric_validation.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <limits>
#include <string>

#include "tests/fabric/fabric_examples.h"

namespace geodesic::fabric {
namespace {

using ::testing::HasSubstr;

v1::FabricPlaneHealth* AddHealth(v1::Fabric& fabric, uint32_t plane, v1::OperState state) {
  v1::FabricPlaneHealth* health = fabric.add_plane_health();
  health->set_plane(plane);
  health->set_state(state);
  return health;
}

TEST(FabricValidationTest, AcceptsWellFormedFabrics) {
  EXPECT_TRUE(ValidateFabric(testing::NonBlockingTwoTier()).ok());
  EXPECT_TRUE(ValidateFabric(testing::ThreeTierSpineOversubscribed()).ok());
  v1::Fabric with_health = testing::NonBlockingTwoTier();
  AddHealth(with_health, 0, v1::OPER_STATE_UP);
  AddHealth(with_health, 7, v1::OPER_STATE_DEGRADED)->add_failed_rails(7);
  with_health.set_backbone_uplink_gbps(0);  // legal; the audit reports it
  EXPECT_TRUE(ValidateFabric(with_health).ok()) << ValidateFabric(with_health);
}

struct BadFabricCase {
  std::string name;
  std::function<void(v1::Fabric&)> break_it;
  std::string message;  // exact
};

class BadFabricTest : public ::testing::TestWithParam<BadFabricCase> {};

TEST_P(BadFabricTest, IsInvalidArgumentNamingTheField) {
  v1::Fabric fabric = testing::NonBlockingTwoTier();
  GetParam().break_it(fabric);
  const absl::Status status = ValidateFabric(fabric);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(), GetParam().message);
}

INSTANTIATE_TEST_SUITE_P(
    Fields, BadFabricTest,
    ::testing::Values(
        BadFabricCase{"NoFacility", [](v1::Fabric& f) { f.clear_facility_id(); },
                      "facility_id: must not be empty"},
        BadFabricCase{"NoPlanes", [](v1::Fabric& f) { f.set_planes(0); }, "planes: must be positive"},
        BadFabricCase{"TooManyPlanes", [](v1::Fabric& f) { f.set_planes(1025); },
                      "planes: 1025 exceeds the maximum of 1024"},
        BadFabricCase{"NoRails", [](v1::Fabric& f) { f.set_rails(0); }, "rails: must be positive"},
        BadFabricCase{"NoGpus", [](v1::Fabric& f) { f.set_gpus(0); }, "gpus: must be positive"},
        BadFabricCase{"PartialServer", [](v1::Fabric& f) { f.set_gpus(2044); },
                      "gpus: 2044 is not a whole number of servers of 8 GPUs (rails)"},
        BadFabricCase{"NicSpeed", [](v1::Fabric& f) { f.set_nic_speed_gbps(-400); },
                      "nic_speed_gbps: must be positive"},
        BadFabricCase{"NicSpeedNaN",
                      [](v1::Fabric& f) { f.set_nic_speed_gbps(std::numeric_limits<double>::quiet_NaN()); },
                      "nic_speed_gbps: must be positive"},
        BadFabricCase{"NoLayers", [](v1::Fabric& f) { f.clear_layers(); },
                      "layers: at least one layer (the leaf) is required"},
        BadFabricCase{"UnnamedLayer", [](v1::Fabric& f) { f.mutable_layers(1)->clear_name(); },
                      "layers[1].name: must not be empty"},
        BadFabricCase{"DuplicateLayerName", [](v1::Fabric& f) { f.mutable_layers(1)->set_name("leaf"); },
                      "layers[1].name: duplicate name \"leaf\" (also layers[0])"},
        BadFabricCase{"NoSwitches", [](v1::Fabric& f) { f.mutable_layers(0)->set_switch_count(0); },
                      "layers[0].switch_count: must be positive"},
        BadFabricCase{"NoDownlinks", [](v1::Fabric& f) { f.mutable_layers(1)->set_downlink_ports(0); },
                      "layers[1].downlink_ports: must be positive"},
        BadFabricCase{"PortSpeed", [](v1::Fabric& f) { f.mutable_layers(1)->set_port_speed_gbps(0); },
                      "layers[1].port_speed_gbps: must be positive"},
        BadFabricCase{"TopWithUplinks", [](v1::Fabric& f) { f.mutable_layers(1)->set_uplink_ports(4); },
                      "layers[1].uplink_ports: must be 0 at the top layer, got 4"},
        BadFabricCase{"LeafWithoutUplinks", [](v1::Fabric& f) { f.mutable_layers(0)->set_uplink_ports(0); },
                      "layers[0].uplink_ports: must be positive below the top layer"},
        BadFabricCase{"NegativeBackbone", [](v1::Fabric& f) { f.set_backbone_uplink_gbps(-1); },
                      "backbone_uplink_gbps: must be finite and not negative"},
        BadFabricCase{"InfiniteBackbone",
                      [](v1::Fabric& f) { f.set_backbone_uplink_gbps(std::numeric_limits<double>::infinity()); },
                      "backbone_uplink_gbps: must be finite and not negative"},
        BadFabricCase{"HealthPlaneOutOfRange",
                      [](v1::Fabric& f) { AddHealth(f, 8, v1::OPER_STATE_UP); },
                      "plane_health[0].plane: 8 is out of range (planes: 8)"},
        BadFabricCase{"HealthPlaneTwice",
                      [](v1::Fabric& f) {
                        AddHealth(f, 2, v1::OPER_STATE_UP);
                        AddHealth(f, 3, v1::OPER_STATE_UP);
                        AddHealth(f, 2, v1::OPER_STATE_DOWN);
                      },
                      "plane_health[2].plane: duplicate plane 2 (also plane_health[0])"},
        BadFabricCase{"HealthUnknownStateValue",
                      [](v1::Fabric& f) { AddHealth(f, 0, static_cast<v1::OperState>(7)); },
                      "plane_health[0].state: unknown value 7"},
        BadFabricCase{"RailOutOfRange",
                      [](v1::Fabric& f) { AddHealth(f, 1, v1::OPER_STATE_DEGRADED)->add_failed_rails(8); },
                      "plane_health[0].failed_rails[0]: 8 is out of range (rails: 8)"},
        BadFabricCase{"RailTwice",
                      [](v1::Fabric& f) {
                        v1::FabricPlaneHealth* health = AddHealth(f, 1, v1::OPER_STATE_DEGRADED);
                        health->add_failed_rails(3);
                        health->add_failed_rails(5);
                        health->add_failed_rails(3);
                      },
                      "plane_health[0].failed_rails[2]: duplicate rail 3"}),
    [](const ::testing::TestParamInfo<BadFabricCase>& info) { return info.param.name; });

}  // namespace
}  // namespace geodesic::fabric
