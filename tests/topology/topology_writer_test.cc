// The project-format writer (topology/topology_writer.h): what it writes
// reads back as the same topology.
#include "topology/topology_writer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/topology/topology_testing.h"
#include "topology/graphml.h"
#include "topology/project_reader.h"
#include "topology/repetita.h"

namespace geodesic::topology {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using testing::RepetitaDir;
using testing::SourceDir;
using testing::TestdataDir;
using testing::TopologyDifference;

// Writes `topology`, parses the text back and expects the same topology.
void ExpectRoundTrip(const Topology& topology) {
  const std::string yaml = WriteTopologyYaml(topology);
  auto reread = ParseTopology(yaml, "written.yaml");
  ASSERT_TRUE(reread.ok()) << reread.status() << "\n" << yaml.substr(0, 2000);
  EXPECT_EQ(TopologyDifference(topology, *reread), "");
  // Every directed link is its own entry with its latency.
  EXPECT_THAT(yaml, Not(HasSubstr("reverse")));
  size_t latencies = 0;
  for (size_t at = yaml.find("latency_us:"); at != std::string::npos;
       at = yaml.find("latency_us:", at + 1)) {
    ++latencies;
  }
  EXPECT_EQ(latencies, topology.links.size());
}

TEST(TopologyWriterTest, ExampleBackboneRoundTrips) {
  auto backbone = LoadTopologyFile(SourceDir() + "/deploy/examples/backbone.yaml");
  ASSERT_TRUE(backbone.ok()) << backbone.status();
  ASSERT_FALSE(backbone->fabrics.empty());
  ASSERT_FALSE(backbone->workloads.empty());
  ExpectRoundTrip(*backbone);
}

TEST(TopologyWriterTest, ImportedRepetitaRoundTrips) {
  // Esnet: unplaced nodes, three capacities, 4,556 demands.
  auto esnet = LoadRepetita(RepetitaDir() + "/Esnet.graph", RepetitaDir() + "/Esnet.0000.demands");
  ASSERT_TRUE(esnet.ok()) << esnet.status();
  ExpectRoundTrip(*esnet);
  auto abilene =
      LoadRepetita(RepetitaDir() + "/Abilene.graph", RepetitaDir() + "/Abilene.0000.demands");
  ASSERT_TRUE(abilene.ok()) << abilene.status();
  ExpectRoundTrip(*abilene);
}

TEST(TopologyWriterTest, ImportedGraphmlRoundTrips) {
  auto zoo = LoadGraphml(TestdataDir() + "/four_sites.graphml");
  ASSERT_TRUE(zoo.ok()) << zoo.status();
  ExpectRoundTrip(*zoo);
}

TEST(TopologyWriterTest, AwkwardTextAndNumbersRoundTrip) {
  Topology topology;
  const char* names[] = {"São Paulo, BR: \"Equinix\" #1", "- [x] {y}: 'z'"};
  for (int i = 0; i < 2; ++i) {
    v1::Facility facility;
    facility.set_id(i == 0 ? "gru" : "yes");  // "yes" must stay a string
    facility.set_display_name(names[i]);
    facility.set_region(i == 0 ? "sa-east" : "");
    facility.mutable_position()->set_latitude_deg(i == 0 ? -23.5505199 : 0.1 + 0.2);
    facility.mutable_position()->set_longitude_deg(i == 0 ? -46.6333094 : 1e-7);
    facility.add_prefixes(i == 0 ? "2001:db8:1::/48" : "10.0.0.0/8");
    topology.facilities.push_back(facility);
    v1::Node node;
    node.set_id(facility.id() + "-r");
    node.set_facility_id(facility.id());
    node.set_role(i == 0 ? v1::NODE_ROLE_BACKBONE_ROUTER : v1::NODE_ROLE_FABRIC_SWITCH);
    topology.nodes.push_back(node);
  }
  v1::Link link;
  link.set_id("gru-yes");
  link.set_src_node_id("gru-r");
  link.set_dst_node_id("yes-r");
  link.set_src_facility_id("gru");
  link.set_dst_facility_id("yes");
  link.set_capacity_gbps(123456.789012345);
  link.set_igp_metric(16777215);
  link.set_latency_us(1'000'000);
  link.add_srlgs("cable: south #2");
  link.set_admin_state(v1::ADMIN_STATE_UP);
  topology.links.push_back(link);
  v1::Workload flow;
  flow.set_id("w");
  flow.mutable_elephant()->set_src_facility_id("gru");
  flow.mutable_elephant()->set_dst_prefix("10.0.0.0/8");
  flow.mutable_elephant()->set_demand_gbps(0.000001);
  flow.mutable_elephant()->set_priority(7);
  topology.workloads.push_back(flow);
  v1::Workload tenants_flow = flow;  // a tenant's workload keeps its tenant
  tenants_flow.set_id("w2");
  tenants_flow.set_tenant("acme");
  topology.workloads.push_back(tenants_flow);
  ExpectRoundTrip(topology);
}

}  // namespace
}  // namespace geodesic::topology
