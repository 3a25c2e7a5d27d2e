#include "topology/topology.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>

namespace geodesic::topology {
namespace {

using ::testing::HasSubstr;

std::string SourceDir() {
  const char* dir = std::getenv("GEODESIC_SOURCE_DIR");
  return dir ? dir : ".";
}

TEST(TopologyTest, ExampleBackboneLoadsWithRealisticLatencies) {
  auto topology = LoadTopologyFile(SourceDir() + "/deploy/examples/backbone.yaml");
  ASSERT_TRUE(topology.ok()) << topology.status();
  EXPECT_EQ(topology->facilities.size(), 8u);
  EXPECT_EQ(topology->links.size(), 24u);  // 12 fibers, both directions
  EXPECT_EQ(topology->services.size(), 3u);
  for (const auto& link : topology->links) {
    if (link.id() == "iad-nyc" || link.id() == "nyc-iad") {
      // Ashburn-New York is ~330 km great circle: ~2 ms one way over fiber.
      EXPECT_GT(link.latency_us(), 1500u);
      EXPECT_LT(link.latency_us(), 2600u);
    }
    if (link.id() == "nyc-iad") {
      EXPECT_EQ(link.src_facility_id(), "nyc");
      EXPECT_EQ(link.dst_facility_id(), "iad");
      EXPECT_THAT(link.srlgs(), ::testing::ElementsAre("conduit-iad-north"));
    }
    if (link.id() == "nyc-lon") EXPECT_EQ(link.latency_us(), 34000u);
  }
}

TEST(TopologyTest, GreatCircleDistanceMatchesKnownCities) {
  v1::GeoPosition new_york, london;
  new_york.set_latitude_deg(40.7128);
  new_york.set_longitude_deg(-74.0060);
  london.set_latitude_deg(51.5074);
  london.set_longitude_deg(-0.1278);
  EXPECT_NEAR(GreatCircleKm(new_york, london), 5570, 30);
}

TEST(TopologyTest, ReportsEveryBadReferenceWithKey) {
  const std::string text = R"(
facilities:
  - {id: a, position: {lat: 1, lon: 2}, prefixes: [10.0.0.0/8]}
  - {id: b, position: {lat: 100, lon: 2}, prefixes: [10.0.0.0/8, 10.1.2.3/16]}
  - {id: a, position: {lat: 1, lon: 2}}
nodes:
  - {id: a1, facility: a}
  - {id: x1, facility: x}
links:
  - {id: l1, from: a1, to: nowhere, capacity_gbps: 10}
  - {id: l2, from: a1, to: a1, capacity_gbps: 10}
  - {id: l3, from: a1, to: a1, capacity_gbps: -1, colour: red}
services:
  - {id: s, replicas: [zz]}
)";
  auto topology = ParseTopology(text, "bad.yaml");
  ASSERT_FALSE(topology.ok());
  const std::string message(topology.status().message());
  EXPECT_THAT(message, HasSubstr("bad.yaml: facilities[1].position.lat: 100 is out of range"));
  EXPECT_THAT(message, HasSubstr("10.0.0.0/8 is already announced by a"));
  EXPECT_THAT(message, HasSubstr("\"10.1.2.3/16\" is not a CIDR prefix"));
  EXPECT_THAT(message, HasSubstr("facilities[2].id: duplicate facility id a"));
  EXPECT_THAT(message, HasSubstr("nodes[1].facility: unknown facility x"));
  EXPECT_THAT(message, HasSubstr("links[0].to: unknown node nowhere"));
  EXPECT_THAT(message, HasSubstr("links[1].to: a backbone link must join two facilities"));
  EXPECT_THAT(message, HasSubstr("links[2].capacity_gbps: -1 is out of range"));
  EXPECT_THAT(message, HasSubstr("links[2].colour: unknown key"));
  EXPECT_THAT(message, HasSubstr("services[0].replicas: unknown facility zz"));
}

TEST(TopologyTest, ValidatesPrefixes) {
  EXPECT_TRUE(IsValidPrefix("10.1.0.0/16"));
  EXPECT_TRUE(IsValidPrefix("0.0.0.0/0"));
  EXPECT_TRUE(IsValidPrefix("2001:db8:1::/48"));
  EXPECT_FALSE(IsValidPrefix("10.1.0.1/16"));
  EXPECT_FALSE(IsValidPrefix("10.1.0.0/33"));
  EXPECT_FALSE(IsValidPrefix("10.1.0.0"));
  EXPECT_FALSE(IsValidPrefix("10.1.0.0/"));
  EXPECT_FALSE(IsValidPrefix("banana/8"));
  EXPECT_FALSE(IsValidPrefix("2001:db8::1/64"));
}

}  // namespace
}  // namespace geodesic::topology
