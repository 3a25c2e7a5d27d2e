// The project's own topology format (topology/project_reader.h) and the
// inventory helpers (topology/inventory.h).
#include "topology/topology.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/topology/topology_testing.h"

namespace geodesic::topology {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::TempDir;
using testing::SourceDir;

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
      EXPECT_THAT(link.srlgs(), ElementsAre("conduit-iad-north"));
    }
    if (link.id() == "nyc-lon") {
      EXPECT_EQ(link.latency_us(), 34000u);
    }
  }
}

TEST(TopologyTest, ExampleBackboneCarriesFabricsAndWorkloads) {
  auto topology = LoadTopologyFile(SourceDir() + "/deploy/examples/backbone.yaml");
  ASSERT_TRUE(topology.ok()) << topology.status();
  ASSERT_EQ(topology->fabrics.size(), 2u);
  const v1::Fabric& sjc = topology->fabrics[1];
  EXPECT_EQ(sjc.facility_id(), "sjc");
  EXPECT_EQ(sjc.planes(), 4u);
  EXPECT_EQ(sjc.gpus(), 16384u);
  ASSERT_EQ(sjc.layers_size(), 3);
  EXPECT_EQ(sjc.layers(2).name(), "super-spine");
  EXPECT_EQ(sjc.layers(2).uplink_ports(), 0u);
  EXPECT_DOUBLE_EQ(sjc.layers(1).port_speed_gbps(), 800);
  ASSERT_EQ(topology->workloads.size(), 3u);
  EXPECT_EQ(topology->workloads[0].elephant().dst_prefix(), "10.4.0.0/16");
  EXPECT_THAT(topology->workloads[2].chain().service_ids(),
              ElementsAre("retriever", "reranker", "llm-70b"));
}

TEST(TopologyTest, GreatCircleDistanceMatchesKnownCities) {
  v1::GeoPosition new_york, london;
  new_york.set_latitude_deg(40.7128);
  new_york.set_longitude_deg(-74.0060);
  london.set_latitude_deg(51.5074);
  london.set_longitude_deg(-0.1278);
  EXPECT_NEAR(GreatCircleKm(new_york, london), 5570, 30);
  // 5,570 km of great circle is ~6,960 km of fiber: ~34.8 ms one way.
  EXPECT_NEAR(static_cast<double>(FiberLatencyUs(GreatCircleKm(new_york, london))), 34800, 200);
  EXPECT_EQ(FiberLatencyUs(0), kMinLinkLatencyUs);
  EXPECT_EQ(FiberLatencyUs(1e9), kMaxLinkLatencyUs);
}

TEST(TopologyTest, ReportsEveryBadReferenceWithLineAndKey) {
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
  - {id: l4, from: a1, to: a1, capacity_gbps: 0}
services:
  - {id: s, replicas: [zz]}
)";
  auto topology = ParseTopology(text, "bad.yaml");
  ASSERT_FALSE(topology.ok());
  const std::string message(topology.status().message());
  EXPECT_THAT(message, HasSubstr("bad.yaml:4: facilities[1].position.lat: 100 is out of range"));
  EXPECT_THAT(message, HasSubstr("bad.yaml:4: facilities[1].prefixes: 10.0.0.0/8 is already "
                                 "announced by a"));
  EXPECT_THAT(message, HasSubstr("\"10.1.2.3/16\" is not a CIDR prefix"));
  EXPECT_THAT(message, HasSubstr("bad.yaml:5: facilities[2].id: duplicate facility id a"));
  EXPECT_THAT(message, HasSubstr("bad.yaml:8: nodes[1].facility: unknown facility x"));
  EXPECT_THAT(message, HasSubstr("bad.yaml:10: links[0].to: unknown node nowhere"));
  EXPECT_THAT(message, HasSubstr("bad.yaml:11: links[1].to: a backbone link must join two facilities"));
  EXPECT_THAT(message, HasSubstr("bad.yaml:12: links[2].capacity_gbps: -1 is out of range"));
  EXPECT_THAT(message, HasSubstr("bad.yaml:12: links[2].colour: unknown key"));
  EXPECT_THAT(message, HasSubstr("bad.yaml:13: links[3].capacity_gbps: must be greater than 0"));
  EXPECT_THAT(message, HasSubstr("bad.yaml:15: services[0].replicas: unknown facility zz"));
}

// Two facilities with a link each way, the base of the fabric and workload tests.
constexpr char kTwoSites[] = R"(facilities:
  - {id: iad, position: {lat: 39, lon: -77}, prefixes: [10.1.0.0/16]}
  - {id: chi, position: {lat: 41.9, lon: -87.6}, prefixes: [10.3.0.0/16, 10.30.0.0/16]}
nodes:
  - {id: iad-br1, facility: iad}
  - {id: chi-br1, facility: chi}
links:
  - {id: iad-chi, reverse: chi-iad, from: iad-br1, to: chi-br1, capacity_gbps: 400}
services:
  - {id: retriever, replicas: [chi]}
  - {id: llm, replicas: [iad, chi]}
)";

TEST(TopologyTest, FabricsAndWorkloadsParse) {
  const std::string text = std::string(kTwoSites) + R"(fabrics:
  - facility: iad
    planes: 2
    rails: 8
    gpus: 1024
    nic_speed_gbps: 400
    backbone_uplink_gbps: 3200.5
    layers:
      - {name: leaf, switch_count: 32, downlink_ports: 32, uplink_ports: 32, port_speed_gbps: 400}
      - {name: spine, switch_count: 16, downlink_ports: 64, port_speed_gbps: 800}
workloads:
  - {id: w1, kind: elephant, src: iad, dst_prefix: 10.30.0.0/16, demand_gbps: 12.5, priority: 2}
  - {id: w2, kind: elephant, src: chi, dst_prefix: 10.1.0.0/16, demand_gbps: 1}
  - {id: c1, kind: chain, origin: iad, services: [retriever, llm], latency_budget_us: 90000,
     tenant: acme}
)";
  auto topology = ParseTopology(text, "fleet.yaml");
  ASSERT_TRUE(topology.ok()) << topology.status();
  ASSERT_EQ(topology->fabrics.size(), 1u);
  const v1::Fabric& fabric = topology->fabrics[0];
  EXPECT_EQ(fabric.facility_id(), "iad");
  EXPECT_EQ(fabric.planes(), 2u);
  EXPECT_EQ(fabric.rails(), 8u);
  EXPECT_EQ(fabric.gpus(), 1024u);
  EXPECT_DOUBLE_EQ(fabric.nic_speed_gbps(), 400);
  EXPECT_DOUBLE_EQ(fabric.backbone_uplink_gbps(), 3200.5);
  ASSERT_EQ(fabric.layers_size(), 2);
  EXPECT_EQ(fabric.layers(0).name(), "leaf");
  EXPECT_EQ(fabric.layers(0).switch_count(), 32u);
  EXPECT_EQ(fabric.layers(0).uplink_ports(), 32u);
  EXPECT_EQ(fabric.layers(1).downlink_ports(), 64u);
  EXPECT_EQ(fabric.layers(1).uplink_ports(), 0u);
  EXPECT_DOUBLE_EQ(fabric.layers(1).port_speed_gbps(), 800);

  ASSERT_EQ(topology->workloads.size(), 3u);
  const auto& w1 = topology->workloads[0];
  EXPECT_EQ(w1.id(), "w1");
  ASSERT_TRUE(w1.has_elephant());
  EXPECT_EQ(w1.elephant().src_facility_id(), "iad");
  EXPECT_EQ(w1.elephant().dst_prefix(), "10.30.0.0/16");
  EXPECT_DOUBLE_EQ(w1.elephant().demand_gbps(), 12.5);
  EXPECT_EQ(w1.elephant().priority(), 2u);
  EXPECT_EQ(topology->workloads[1].elephant().priority(), 0u);
  const auto& c1 = topology->workloads[2];
  ASSERT_TRUE(c1.has_chain());
  EXPECT_EQ(c1.chain().origin_facility_id(), "iad");
  EXPECT_THAT(c1.chain().service_ids(), ElementsAre("retriever", "llm"));
  EXPECT_EQ(c1.chain().latency_budget_us(), 90000u);
  EXPECT_EQ(c1.tenant(), "acme");
  EXPECT_EQ(w1.tenant(), "");  // the operators' own
}

TEST(TopologyTest, FabricErrorsNameLineAndReason) {
  const std::string text = std::string(kTwoSites) + R"(fabrics:
  - {facility: iad, planes: 0, rails: 8, gpus: 64, nic_speed_gbps: 400, backbone_uplink_gbps: 800,
     layers: [{name: leaf, switch_count: 4, downlink_ports: 16, uplink_ports: 16, port_speed_gbps: 400},
              {name: spine, switch_count: 2, downlink_ports: 32, port_speed_gbps: 400}]}
  - {facility: iad, planes: 1, rails: 8, gpus: 64, nic_speed_gbps: 400, backbone_uplink_gbps: 800,
     layers: [{name: leaf, switch_count: 4, downlink_ports: 16, port_speed_gbps: 400}]}
  - {facility: atlantis, planes: 1, rails: 1, gpus: 8, nic_speed_gbps: 0, backbone_uplink_gbps: 800,
     layers: [{name: leaf, switch_count: 0, downlink_ports: 16, uplink_ports: 4, port_speed_gbps: 400}]}
  - facility: chi
    planes: 1
    rails: 4
    gpus: 32
    nic_speed_gbps: 200
    backbone_uplink_gbps: 400
    layers:
      - {name: leaf, switch_count: 4, downlink_ports: 16, port_speed_gbps: 400}
      - {name: leaf, switch_count: 2, downlink_ports: 32, port_speed_gbps: 400}
  - facility: chi
    planes: 1
    rails: 4
    gpus: 32
    nic_speed_gbps: 200
    backbone_uplink_gbps: 400
)";
  auto topology = ParseTopology(text, "fabrics.yaml");
  ASSERT_FALSE(topology.ok());
  const std::string message(topology.status().message());
  EXPECT_THAT(message, HasSubstr("fabrics.yaml:13: fabrics[0].planes: 0 is out of range [1, 1024]"));
  EXPECT_THAT(message, HasSubstr("fabrics.yaml:16: fabrics[1].facility: facility iad already has "
                                 "a fabric"));
  EXPECT_THAT(message, HasSubstr("fabrics.yaml:18: fabrics[2].nic_speed_gbps: must be greater than 0"));
  EXPECT_THAT(message, HasSubstr("fabrics.yaml:18: fabrics[2].facility: unknown facility atlantis"));
  EXPECT_THAT(message, HasSubstr("fabrics.yaml:19: fabrics[2].layers[0].switch_count: 0 is out of "
                                 "range"));
  EXPECT_THAT(message, HasSubstr("fabrics.yaml:19: fabrics[2].layers[0].uplink_ports: the top "
                                 "layer has no layer above it"));
  EXPECT_THAT(message, HasSubstr("fabrics.yaml:27: fabrics[3].layers[0].uplink_ports: layer leaf is "
                                 "below another layer and needs uplinks"));
  EXPECT_THAT(message, HasSubstr("fabrics.yaml:28: fabrics[3].layers[1].name: duplicate layer name "
                                 "leaf"));
  EXPECT_THAT(message, HasSubstr("fabrics.yaml:29: fabrics[4].layers: required key is missing"));
}

TEST(TopologyTest, WorkloadErrorsNameLineAndReason) {
  const std::string text = std::string(kTwoSites) + R"(workloads:
  - {id: w1, kind: elephant, src: atlantis, dst_prefix: 10.3.0.0/16, demand_gbps: 1}
  - {id: w2, kind: elephant, src: iad, dst_prefix: 10.9.0.0/16, demand_gbps: 1}
  - {id: w3, kind: elephant, src: iad, dst_prefix: 10.3.0.0/16, demand_gbps: 0}
  - {id: w4, kind: elephant, src: iad, dst_prefix: 10.3.0.0/16, demand_gbps: -5, priority: 9}
  - {id: w5, kind: elephant, src: iad, dst_prefix: 10.1.0.0/16, demand_gbps: 1}
  - {id: w6, kind: elephant, src: iad, dst_prefix: 10.3.0.1/16, demand_gbps: 1}
  - {id: w1, kind: chain, origin: iad, services: [llm], latency_budget_us: 1000}
  - {id: c2, kind: chain, origin: iad, services: [llm, ghost], latency_budget_us: 0}
  - {id: c3, kind: chain, origin: iad, latency_budget_us: 1000, demand_gbps: 3}
  - {id: c4, kind: convoy}
  - {id: w7, kind: elephant, src: iad, dst_prefix: 10.3.0.0/16, demand_gbps: [1]}
  - {id: w8, kind: elephant, src: iad, dst_prefix: 10.3.0.0/16, demand_gbps: 1, tenant: Acme}
)";
  auto topology = ParseTopology(text, "workloads.yaml");
  ASSERT_FALSE(topology.ok());
  const std::string message(topology.status().message());
  EXPECT_THAT(message, HasSubstr("workloads.yaml:13: workloads[0].src: unknown facility atlantis"));
  EXPECT_THAT(message, HasSubstr("workloads.yaml:14: workloads[1].dst_prefix: 10.9.0.0/16 is not "
                                 "announced by any facility"));
  EXPECT_THAT(message, HasSubstr("workloads.yaml:15: workloads[2].demand_gbps: must be greater than 0"));
  EXPECT_THAT(message, HasSubstr("workloads.yaml:16: workloads[3].demand_gbps: -5 is out of range"));
  EXPECT_THAT(message, HasSubstr("workloads.yaml:16: workloads[3].priority: 9 is out of range [0, 7]"));
  EXPECT_THAT(message, HasSubstr("workloads.yaml:17: workloads[4].dst_prefix: 10.1.0.0/16 is "
                                 "announced by iad, the flow's own source"));
  EXPECT_THAT(message, HasSubstr("workloads.yaml:18: workloads[5].dst_prefix: \"10.3.0.1/16\" is "
                                 "not a CIDR prefix"));
  EXPECT_THAT(message, HasSubstr("workloads.yaml:19: workloads[6].id: duplicate workload id w1"));
  EXPECT_THAT(message, HasSubstr("workloads.yaml:20: workloads[7].services: unknown service ghost"));
  EXPECT_THAT(message, HasSubstr("workloads.yaml:20: workloads[7].latency_budget_us: 0 is out of "
                                 "range"));
  EXPECT_THAT(message, HasSubstr("workloads.yaml:21: workloads[8].services: a chain calls at least "
                                 "one service"));
  EXPECT_THAT(message, HasSubstr("workloads.yaml:21: workloads[8].demand_gbps: unknown key"));
  EXPECT_THAT(message, HasSubstr("workloads.yaml:22: workloads[9].kind: expected elephant or chain, "
                                 "got \"convoy\""));
  EXPECT_THAT(message, HasSubstr("workloads.yaml:23: workloads[10].demand_gbps: expected a number, "
                                 "got a list"));
  EXPECT_THAT(message, ::testing::Not(HasSubstr("workloads[10].demand_gbps: must be")));
  EXPECT_THAT(message, HasSubstr("workloads.yaml:24: workloads[11].tenant: \"Acme\" is not a valid id"));
}

// The same inventory as JSON: what kTwoSites says, plus a fabric and workloads.
constexpr char kTwoSitesJson[] = R"({
  "facilities": [
    {"id": "iad", "name": "Ashburn, VA", "position": {"lat": 39, "lon": -77},
     "prefixes": ["10.1.0.0/16"]},
    {"id": "chi", "position": {"lat": 41.9, "lon": -87.6}, "prefixes": ["10.3.0.0/16"]}
  ],
  "nodes": [{"id": "iad-br1", "facility": "iad"}, {"id": "chi-br1", "facility": "chi"}],
  "links": [
    {"id": "iad-chi", "reverse": "chi-iad", "from": "iad-br1", "to": "chi-br1",
     "capacity_gbps": 400, "metric": 20, "srlgs": ["conduit-1"]}
  ],
  "fabrics": [
    {"facility": "chi", "planes": 1, "rails": 4, "gpus": 64, "nic_speed_gbps": 200,
     "backbone_uplink_gbps": 800,
     "layers": [{"name": "leaf", "switch_count": 4, "downlink_ports": 16, "port_speed_gbps": 200}]}
  ],
  "services": [{"id": "llm", "replicas": ["chi"], "service_time_us": 40000}],
  "workloads": [
    {"id": "w1", "kind": "elephant", "src": "iad", "dst_prefix": "10.3.0.0/16",
     "demand_gbps": 2.5e1},
    {"id": "c1", "kind": "chain", "origin": "iad", "services": ["llm"],
     "latency_budget_us": 100000}
  ]
}
)";

TEST(TopologyTest, JsonFileLoads) {
  TempDir dir{"topology"};
  auto topology = LoadTopologyFile(dir.Write("fleet.json", kTwoSitesJson));
  ASSERT_TRUE(topology.ok()) << topology.status();
  EXPECT_EQ(topology->facilities.size(), 2u);
  EXPECT_EQ(topology->facilities[0].display_name(), "Ashburn, VA");
  ASSERT_EQ(topology->links.size(), 2u);
  EXPECT_EQ(topology->links[1].id(), "chi-iad");
  EXPECT_EQ(topology->links[1].igp_metric(), 20u);
  EXPECT_THAT(topology->links[1].srlgs(), ElementsAre("conduit-1"));
  ASSERT_EQ(topology->fabrics.size(), 1u);
  EXPECT_EQ(topology->fabrics[0].layers(0).uplink_ports(), 0u);
  ASSERT_EQ(topology->workloads.size(), 2u);
  EXPECT_DOUBLE_EQ(topology->workloads[0].elephant().demand_gbps(), 25);
  EXPECT_EQ(topology->services[0].service_time_us(), 40000u);
}

TEST(TopologyTest, JsonErrorsNameTheLine) {
  std::string json = kTwoSitesJson;
  json.replace(json.find("\"demand_gbps\": 2.5e1"), 20, "\"demand_gbps\": \"lots\"");
  TempDir dir{"topology"};
  const std::string path = dir.Write("bad.json", json);
  auto topology = LoadTopologyFile(path);
  ASSERT_FALSE(topology.ok());
  EXPECT_THAT(std::string(topology.status().message()),
              HasSubstr(path + ":20: workloads[0].demand_gbps: expected a number, got \"lots\""));

  // A flow map left open on line 3; the parser notices at the "]" on line 4.
  auto broken = ParseTopology("{\n  \"facilities\": [\n    {\"id\": \"a\"\n  ]\n}\n", "x.json");
  ASSERT_FALSE(broken.ok());
  EXPECT_THAT(std::string(broken.status().message()), HasSubstr("x.json:4: not valid YAML"));
}

TEST(TopologyTest, MissingFileIsNotFound) {
  auto topology = LoadTopologyFile("/nonexistent/topology.yaml");
  ASSERT_FALSE(topology.ok());
  EXPECT_EQ(topology.status().code(), absl::StatusCode::kNotFound);
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
