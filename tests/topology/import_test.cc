// The format dispatcher (topology/import.h).
#include "topology/import.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "tests/topology/topology_testing.h"

namespace geodesic::topology {
namespace {

using ::testing::HasSubstr;
using testing::RepetitaDir;
using testing::TempDir;
using testing::SourceDir;
using testing::TestdataDir;

TEST(ImportTest, ProjectFormatByExtension) {
  auto yaml = ImportTopology(SourceDir() + "/deploy/examples/backbone.yaml");
  ASSERT_TRUE(yaml.ok()) << yaml.status();
  EXPECT_EQ(yaml->facilities.size(), 8u);

  TempDir dir{"topology"};
  const std::string json = dir.Write(
      "net.JSON",
      R"({"facilities": [{"id": "a", "position": {"lat": 1, "lon": 2}},
                         {"id": "b", "position": {"lat": 3, "lon": 4}}],
          "nodes": [{"id": "a1", "facility": "a"}, {"id": "b1", "facility": "b"}],
          "links": [{"id": "ab", "from": "a1", "to": "b1", "capacity_gbps": 10}]})");
  auto from_json = ImportTopology(json);
  ASSERT_TRUE(from_json.ok()) << from_json.status();
  EXPECT_EQ(from_json->links.size(), 1u);
  EXPECT_TRUE(ImportTopology(dir.Write("net.yml", "facilities: []\n")).status().message().find(
                  "net.yml:1: facilities: must list at least one entry") != std::string::npos);
}

TEST(ImportTest, RepetitaGraphTakesTheDemandsBesideIt) {
  auto with_demands = ImportTopology(RepetitaDir() + "/Abilene.graph");
  ASSERT_TRUE(with_demands.ok()) << with_demands.status();
  EXPECT_EQ(with_demands->links.size(), 28u);
  EXPECT_EQ(with_demands->workloads.size(), 110u);

  TempDir dir{"topology"};
  const std::string alone = dir.path() + "/Abilene.graph";
  std::filesystem::copy_file(RepetitaDir() + "/Abilene.graph", alone);
  auto without_demands = ImportTopology(alone);
  ASSERT_TRUE(without_demands.ok()) << without_demands.status();
  EXPECT_EQ(without_demands->links.size(), 28u);
  EXPECT_TRUE(without_demands->workloads.empty());
}

TEST(ImportTest, GraphmlByExtension) {
  auto zoo = ImportTopology(TestdataDir() + "/four_sites.graphml");
  ASSERT_TRUE(zoo.ok()) << zoo.status();
  EXPECT_EQ(zoo->facilities.size(), 4u);
}

TEST(ImportTest, UnknownExtensionIsRejected) {
  auto topology = ImportTopology("/tmp/net.gml");
  ASSERT_FALSE(topology.ok());
  EXPECT_EQ(topology.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(topology.status().message()),
              HasSubstr("/tmp/net.gml: unknown topology format \".gml\""));
}

}  // namespace
}  // namespace geodesic::topology
