// The Topology Zoo GraphML importer (topology/graphml.h).
#include "topology/graphml.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "tests/topology/topology_testing.h"

namespace geodesic::topology {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::TempDir;
using testing::TestdataDir;

TEST(GraphmlTest, ZooStyleFixtureImports) {
  auto topology = LoadGraphml(TestdataDir() + "/four_sites.graphml");
  ASSERT_TRUE(topology.ok()) << topology.status();
  ASSERT_EQ(topology->facilities.size(), 4u);
  std::vector<std::string> ids;
  for (const auto& facility : topology->facilities) ids.push_back(facility.id());
  EXPECT_THAT(ids, ElementsAre("london", "amsterdam", "frankfurt-am-main", "peering"));
  const v1::Facility& frankfurt = topology->facilities[2];
  EXPECT_EQ(frankfurt.display_name(), "Frankfurt am Main");
  EXPECT_EQ(frankfurt.region(), "");
  EXPECT_DOUBLE_EQ(frankfurt.position().latitude_deg(), 50.11552);
  EXPECT_DOUBLE_EQ(frankfurt.position().longitude_deg(), 8.68417);
  EXPECT_THAT(frankfurt.prefixes(), ElementsAre("10.0.2.0/24"));
  // The external node has no position: it is stored at 0,0.
  EXPECT_DOUBLE_EQ(topology->facilities[3].position().latitude_deg(), 0);
  ASSERT_EQ(topology->nodes.size(), 4u);
  EXPECT_EQ(topology->nodes[2].id(), "frankfurt-am-main-r");
  EXPECT_EQ(topology->nodes[2].role(), v1::NODE_ROLE_BACKBONE_ROUTER);

  // Five undirected edges, one of them parallel: ten directed links.
  std::map<std::string, v1::Link> links;
  for (const auto& link : topology->links) links[link.id()] = link;
  ASSERT_EQ(topology->links.size(), 10u);
  ASSERT_EQ(links.size(), 10u);
  std::vector<std::string> link_ids;
  for (const auto& link : topology->links) link_ids.push_back(link.id());
  EXPECT_THAT(link_ids, ElementsAre("london-amsterdam", "amsterdam-london", "london-amsterdam-2",
                                    "amsterdam-london-2", "london-frankfurt-am-main",
                                    "frankfurt-am-main-london", "amsterdam-frankfurt-am-main",
                                    "frankfurt-am-main-amsterdam", "frankfurt-am-main-peering",
                                    "peering-frankfurt-am-main"));
  const v1::Link& london_amsterdam = links["london-amsterdam"];
  EXPECT_EQ(london_amsterdam.src_node_id(), "london-r");
  EXPECT_EQ(london_amsterdam.dst_node_id(), "amsterdam-r");
  EXPECT_EQ(london_amsterdam.src_facility_id(), "london");
  EXPECT_EQ(london_amsterdam.dst_facility_id(), "amsterdam");
  // Capacity from LinkSpeedRaw (bit/s), else the default; metric = 10 x largest / capacity.
  EXPECT_DOUBLE_EQ(london_amsterdam.capacity_gbps(), 10);
  EXPECT_EQ(london_amsterdam.igp_metric(), 10u);
  EXPECT_DOUBLE_EQ(links["frankfurt-am-main-london"].capacity_gbps(), 2.5);
  EXPECT_EQ(links["frankfurt-am-main-london"].igp_metric(), 40u);
  EXPECT_DOUBLE_EQ(links["amsterdam-frankfurt-am-main"].capacity_gbps(),
                   kGraphmlDefaultCapacityGbps);
  EXPECT_EQ(links["amsterdam-frankfurt-am-main"].igp_metric(), 100u);
  // London-Amsterdam is ~360 km of great circle: ~2.2 ms of fiber.
  EXPECT_EQ(london_amsterdam.latency_us(),
            FiberLatencyUs(GreatCircleKm(topology->facilities[0].position(),
                                         topology->facilities[1].position())));
  EXPECT_NEAR(static_cast<double>(london_amsterdam.latency_us()), 2240, 60);
  // The links of the unplaced node take the mean latency of the other eight.
  double placed_sum = 0;
  for (const auto& link : topology->links) {
    if (link.src_facility_id() != "peering" && link.dst_facility_id() != "peering") {
      placed_sum += static_cast<double>(link.latency_us());
    }
  }
  const auto mean = static_cast<uint64_t>(std::llround(placed_sum / 8));
  EXPECT_EQ(links["peering-frankfurt-am-main"].latency_us(), mean);
  EXPECT_EQ(links["frankfurt-am-main-peering"].latency_us(), mean);
  EXPECT_TRUE(topology->workloads.empty());
}

TEST(GraphmlTest, MalformedXmlIsRejectedWithItsLine) {
  // <node id="0"> is never closed: expat notices at </graph> on line 11.
  const std::string path = TestdataDir() + "/bad_unclosed.graphml";
  auto topology = LoadGraphml(path);
  ASSERT_FALSE(topology.ok());
  EXPECT_EQ(topology.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(topology.status().message()),
              HasSubstr(path + ":11: not well-formed XML: mismatched tag"));
}

TEST(GraphmlTest, EdgeToUnknownNodeIsRejectedWithItsLine) {
  const std::string path = TestdataDir() + "/bad_unknown_node.graphml";
  auto topology = LoadGraphml(path);
  ASSERT_FALSE(topology.ok());
  EXPECT_THAT(std::string(topology.status().message()),
              HasSubstr(path + ":12: edge target \"9\" is not a node of the graph"));
}

// A minimal Zoo-like file around the given nodes and edges (which start on line 7).
std::string Graphml(const std::string& body) {
  return "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n"                         // 1
         "<graphml xmlns=\"http://graphml.graphdrawing.org/xmlns\">\n"          // 2
         "  <key attr.name=\"Latitude\" for=\"node\" id=\"d1\" />\n"            // 3
         "  <key attr.name=\"Longitude\" for=\"node\" id=\"d2\" />\n"           // 4
         "  <key attr.name=\"LinkSpeedRaw\" for=\"edge\" id=\"d3\" />\n"        // 5
         "  <graph edgedefault=\"undirected\">\n" +                             // 6
         body + "  </graph>\n</graphml>\n";
}

class GraphmlBadInputTest : public ::testing::Test {
 protected:
  std::string Error(const std::string& content) {
    path_ = dir_.Write("net.graphml", content);
    auto topology = LoadGraphml(path_);
    EXPECT_FALSE(topology.ok());
    EXPECT_EQ(topology.status().code(), absl::StatusCode::kInvalidArgument);
    return std::string(topology.status().message());
  }
  std::string At(int line) { return path_ + ":" + std::to_string(line) + ": "; }

  TempDir dir_{"topology"};
  std::string path_;
};

TEST_F(GraphmlBadInputTest, TheValidBaseImports) {
  auto topology = LoadGraphml(dir_.Write("ok.graphml", Graphml("    <node id=\"a\" />\n"
                                                               "    <node id=\"b\" />\n"
                                                               "    <edge source=\"a\" target=\"b\" />\n")));
  ASSERT_TRUE(topology.ok()) << topology.status();
  EXPECT_EQ(topology->facilities[0].id(), "a");  // no label: the XML id
  EXPECT_EQ(topology->links.size(), 2u);
  // Both ends unplaced and nothing else to average: the fallback latency.
  EXPECT_EQ(topology->links[0].latency_us(), 1000u);
}

TEST_F(GraphmlBadInputTest, SelfLoopDuplicateNodeAndBadCoordinates) {
  const std::string message =
      Error(Graphml("    <node id=\"a\"><data key=\"d1\">north</data><data key=\"d2\">1</data></node>\n"  // 7
                    "    <node id=\"b\"><data key=\"d1\">91</data><data key=\"d2\">1</data></node>\n"     // 8
                    "    <node id=\"a\" />\n"                                                            // 9
                    "    <node id=\"c\">\n      <data key=\"d1\">10</data>\n    </node>\n"              // 10-12
                    "    <edge source=\"b\" target=\"b\" />\n"                                          // 13
                    "    <edge source=\"a\" target=\"b\">\n"                                            // 14
                    "      <data key=\"d3\">-10</data>\n"                                               // 15
                    "    </edge>\n"));
  EXPECT_THAT(message, HasSubstr(At(7) + "Latitude: expected a number, got \"north\""));
  EXPECT_THAT(message, HasSubstr(At(8) + "Latitude: 91 is out of range [-90, 90]"));
  EXPECT_THAT(message, HasSubstr(At(9) + "duplicate node id \"a\" (first at line 7)"));
  EXPECT_THAT(message, HasSubstr(At(10) + "node \"c\" has Latitude but no Longitude"));
  EXPECT_THAT(message, HasSubstr(At(13) + "self-loop: edge from node \"b\" to itself"));
  EXPECT_THAT(message, HasSubstr(At(15) + "LinkSpeedRaw: expected a positive number"));
}

TEST_F(GraphmlBadInputTest, StructureTheImporterCannotMap) {
  EXPECT_THAT(Error("<?xml version=\"1.0\"?>\n<graph>\n</graph>\n"),
              HasSubstr(At(2) + "the root element is <graph>, not <graphml>"));
  EXPECT_THAT(Error(Graphml("    <node id=\"a\" />\n    <hyperedge />\n")),
              HasSubstr(At(8) + "hyperedges are not supported"));
  EXPECT_THAT(Error(Graphml("    <node id=\"a\" />\n")), HasSubstr(At(6) + "the graph has no edge"));
  EXPECT_THAT(Error(Graphml("    <node />\n")), HasSubstr(At(7) + "<node> without an id"));
  EXPECT_THAT(Error("<graphml>\n  <graph></graph>\n  <graph></graph>\n</graphml>\n"),
              HasSubstr(At(3) + "more than one <graph> in the file"));
  EXPECT_THAT(Error(""), HasSubstr(At(1) + "not well-formed XML: no element found"));
}

TEST(GraphmlTest, MissingFileIsNotFound) {
  EXPECT_EQ(LoadGraphml("/nonexistent/net.graphml").status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace geodesic::topology
