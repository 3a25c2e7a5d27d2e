// The synthetic WAN generator (topology/synthetic_wan.h): seeded and
// deterministic, connected, WAN-like (degree, capacities, latencies from
// geography, SRLGs), a gravity matrix of distinct pairs, chains over
// replicated services, valid in the project's own format, options checked.
#include "topology/synthetic_wan.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "tests/topology/topology_testing.h"
#include "topology/project_reader.h"
#include "topology/topology_writer.h"

namespace geodesic::topology {
namespace {

using ::testing::HasSubstr;
using testing::TopologyDifference;

SyntheticWanOptions Backbone(uint32_t facilities, uint64_t seed) {
  SyntheticWanOptions options;
  options.seed = seed;
  options.facilities = facilities;
  options.elephant_flows = facilities * 10;
  options.services = 12;
  options.replicas = 3;
  options.chains = 100;
  return options;
}

Topology Generate(const SyntheticWanOptions& options) {
  auto topology = GenerateSyntheticWan(options);
  EXPECT_TRUE(topology.ok()) << topology.status();
  return topology.ok() ? *std::move(topology) : Topology{};
}

// Facilities reachable from the first one over the links.
size_t Reachable(const Topology& topology) {
  std::map<std::string, std::vector<std::string>> out;
  for (const auto& link : topology.links) out[link.src_facility_id()].push_back(link.dst_facility_id());
  std::set<std::string> seen{topology.facilities.front().id()};
  std::vector<std::string> stack{topology.facilities.front().id()};
  while (!stack.empty()) {
    const std::string at = stack.back();
    stack.pop_back();
    for (const auto& next : out[at]) {
      if (seen.insert(next).second) stack.push_back(next);
    }
  }
  return seen.size();
}

TEST(SyntheticWanTest, SameSeedSameNetworkOtherSeedAnother) {
  const Topology a = Generate(Backbone(120, 7));
  const Topology b = Generate(Backbone(120, 7));
  const Topology c = Generate(Backbone(120, 8));
  EXPECT_EQ(TopologyDifference(a, b), "");
  EXPECT_NE(TopologyDifference(a, c), "");
}

TEST(SyntheticWanTest, LargeBackboneIsConnectedAndWanLike) {
  SyntheticWanOptions options = Backbone(754, 1);
  options.elephant_flows = 56'736;
  const Topology wan = Generate(options);
  ASSERT_EQ(wan.facilities.size(), 754u);
  ASSERT_EQ(wan.nodes.size(), 754u);
  EXPECT_EQ(Reachable(wan), 754u);

  // Mean degree ~3.5 undirected links per facility (parallel circuits on top).
  const double degree = static_cast<double>(wan.links.size()) / 754.0;  // directed / n = 2 x undirected / n
  EXPECT_GE(degree, 3.3);
  EXPECT_LE(degree, 4.2);

  std::map<std::string, const v1::Facility*> facilities;
  for (const auto& facility : wan.facilities) facilities[facility.id()] = &facility;
  std::map<std::string, int> srlg_links;
  std::set<std::string> regions;
  size_t intercontinental = 0;
  for (const auto& link : wan.links) {
    EXPECT_GE(link.capacity_gbps(), 100) << link.id();
    EXPECT_LE(link.capacity_gbps(), 800) << link.id();
    EXPECT_EQ(std::fmod(link.capacity_gbps(), 100), 0) << link.id();
    const v1::Facility& src = *facilities.at(link.src_facility_id());
    const v1::Facility& dst = *facilities.at(link.dst_facility_id());
    EXPECT_EQ(link.latency_us(), FiberLatencyUs(GreatCircleKm(src.position(), dst.position()))) << link.id();
    EXPECT_GE(link.igp_metric(), 1u);
    if (src.region() != dst.region()) ++intercontinental;
    for (const auto& srlg : link.srlgs()) ++srlg_links[srlg];
  }
  for (const auto& facility : wan.facilities) regions.insert(facility.region());
  EXPECT_EQ(regions.size(), 6u);
  EXPECT_GE(intercontinental, 2u * 9);  // every cable route, both directions
  EXPECT_GE(srlg_links.size(), 50u);
  for (const auto& [srlg, links] : srlg_links) {
    EXPECT_GE(links, 4) << srlg << " is on one undirected link only";  // 2 directions x 2 links
  }

  // The gravity matrix: distinct ordered pairs, the demand shared out.
  std::set<std::pair<std::string, std::string>> pairs;
  size_t elephants = 0;
  double total_gbps = 0;
  for (const auto& workload : wan.workloads) {
    if (!workload.has_elephant()) continue;
    ++elephants;
    total_gbps += workload.elephant().demand_gbps();
    EXPECT_GT(workload.elephant().demand_gbps(), 0);
    EXPECT_TRUE(pairs.insert({workload.elephant().src_facility_id(), workload.elephant().dst_prefix()}).second)
        << workload.id() << " repeats a pair";
  }
  EXPECT_EQ(elephants, 56'736u);
  double capacity = 0;
  for (const auto& link : wan.links) capacity += link.capacity_gbps();
  EXPECT_NEAR(total_gbps, 0.0025 * capacity, 1e-6 * capacity);
}

TEST(SyntheticWanTest, ChainsCallReplicatedServices) {
  const Topology wan = Generate(Backbone(60, 3));
  ASSERT_EQ(wan.services.size(), 12u);
  for (const auto& service : wan.services) {
    const std::set<std::string> replicas(service.replica_facility_ids().begin(),
                                         service.replica_facility_ids().end());
    EXPECT_EQ(replicas.size(), 3u) << service.id();
  }
  size_t chains = 0;
  for (const auto& workload : wan.workloads) {
    if (!workload.has_chain()) continue;
    ++chains;
    EXPECT_GE(workload.chain().service_ids_size(), 3);
    EXPECT_LE(workload.chain().service_ids_size(), 6);
    EXPECT_EQ(workload.chain().latency_budget_us(), 300'000u);
  }
  EXPECT_EQ(chains, 100u);
}

TEST(SyntheticWanTest, ValidInTheProjectFormat) {
  const Topology wan = Generate(Backbone(80, 11));
  auto reread = ParseTopology(WriteTopologyYaml(wan), "synthetic.yaml");
  ASSERT_TRUE(reread.ok()) << reread.status();
  EXPECT_EQ(TopologyDifference(wan, *reread), "");
}

TEST(SyntheticWanTest, RejectsOptionsOutOfRange) {
  SyntheticWanOptions options;
  options.facilities = 3;
  options.mean_degree = 12;
  options.parallel_fraction = -1;
  options.chains = 5;
  options.min_hops = 4;
  options.max_hops = 2;
  auto wan = GenerateSyntheticWan(options);
  ASSERT_FALSE(wan.ok());
  EXPECT_EQ(wan.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(wan.status().message(), HasSubstr("facilities: 3 is outside [8, 4096]"));
  EXPECT_THAT(wan.status().message(), HasSubstr("mean_degree: 12"));
  EXPECT_THAT(wan.status().message(), HasSubstr("parallel_fraction: -1"));
  EXPECT_THAT(wan.status().message(), HasSubstr("chains: need services > 0"));
  EXPECT_THAT(wan.status().message(), HasSubstr("min_hops, max_hops: 4, 2"));

  SyntheticWanOptions too_many_flows;
  too_many_flows.facilities = 10;
  too_many_flows.elephant_flows = 46;  // 90 ordered pairs: at most 45
  EXPECT_THAT(GenerateSyntheticWan(too_many_flows).status().message(), HasSubstr("elephant_flows: 46"));
}

}  // namespace
}  // namespace geodesic::topology
