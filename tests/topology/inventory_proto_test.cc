// The wire form of an inventory (topology/inventory_proto.h): what tectl sends
// comes back equal, and what a client could send is validated like a file.
#include "topology/inventory_proto.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/topology/topology_testing.h"
#include "topology/import.h"

namespace geodesic::topology {
namespace {

using ::testing::HasSubstr;
using testing::RepetitaDir;
using testing::SourceDir;
using testing::TopologyDifference;

TEST(InventoryProtoTest, ImportedTopologiesSurviveTheWire) {
  for (const std::string& path : {SourceDir() + "/deploy/examples/backbone.yaml",
                                 RepetitaDir() + "/Cogentco.graph"}) {
    SCOPED_TRACE(path);
    auto topology = ImportTopology(path);
    ASSERT_TRUE(topology.ok()) << topology.status();
    const v1::Inventory wire = ToInventoryProto(*topology);
    EXPECT_EQ(wire.links_size(), static_cast<int>(topology->links.size()));
    auto back = TopologyFromInventoryProto(wire, "request");
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(TopologyDifference(*topology, *back), "");
  }
}

TEST(InventoryProtoTest, RuntimeStateIsNotImported) {
  auto topology = ImportTopology(SourceDir() + "/deploy/examples/backbone.yaml");
  ASSERT_TRUE(topology.ok()) << topology.status();
  v1::Inventory wire = ToInventoryProto(*topology);
  wire.mutable_links(0)->mutable_health()->set_state(v1::OPER_STATE_DOWN);
  auto back = TopologyFromInventoryProto(wire, "request");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->links[0].health().state(), v1::OPER_STATE_UNKNOWN);
}

class BadInventoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto topology = ImportTopology(SourceDir() + "/deploy/examples/backbone.yaml");
    ASSERT_TRUE(topology.ok()) << topology.status();
    wire_ = ToInventoryProto(*topology);
  }
  std::string Error() {
    auto back = TopologyFromInventoryProto(wire_, "request");
    return back.ok() ? "accepted" : std::string(back.status().message());
  }
  v1::Inventory wire_;
};

TEST_F(BadInventoryTest, DuplicateIdIsRejectedWithItsPlace) {
  *wire_.add_facilities() = wire_.facilities(0);
  EXPECT_THAT(Error(), HasSubstr("request:"));
  EXPECT_THAT(Error(), HasSubstr(wire_.facilities(0).id()));
}

TEST_F(BadInventoryTest, LinkToUnknownNodeIsRejected) {
  wire_.mutable_links(0)->set_dst_node_id("nowhere-r1");
  EXPECT_THAT(Error(), HasSubstr("nowhere-r1"));
}

TEST_F(BadInventoryTest, NegativeCapacityIsRejected) {
  wire_.mutable_links(0)->set_capacity_gbps(-100);
  EXPECT_THAT(Error(), HasSubstr("capacity_gbps"));
}

TEST_F(BadInventoryTest, NotANumberIsRejected) {
  wire_.mutable_links(0)->set_capacity_gbps(std::numeric_limits<double>::quiet_NaN());
  EXPECT_NE(Error(), "accepted");
}

TEST_F(BadInventoryTest, SelfLoopIsRejected) {
  auto* link = wire_.mutable_links(0);
  link->set_dst_node_id(link->src_node_id());
  link->set_dst_facility_id(link->src_facility_id());
  EXPECT_NE(Error(), "accepted");
}

TEST_F(BadInventoryTest, StringsCannotSmuggleStructure) {
  wire_.mutable_facilities(0)->set_id("x\nlinks: []");
  EXPECT_NE(Error(), "accepted");
  SetUp();
  wire_.mutable_facilities(0)->set_display_name("quote \" and: colon\n# not a comment");
  auto back = TopologyFromInventoryProto(wire_, "request");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->facilities[0].display_name(), "quote \" and: colon\n# not a comment");
}

TEST_F(BadInventoryTest, EmptyInventoryIsRejected) {
  wire_.Clear();
  EXPECT_NE(Error(), "accepted");
}

}  // namespace
}  // namespace geodesic::topology
