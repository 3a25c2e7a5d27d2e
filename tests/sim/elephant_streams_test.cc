// The streams that stand for a topology's elephant workloads: one per
// workload between the right facilities, of the right family, at the scaled
// rate, with packets small enough for one a millisecond (pure: no namespace).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "sim/netns/netns_traffic.h"
#include "topology/project_reader.h"

namespace geodesic::sim {
namespace {

using ::testing::HasSubstr;

// Three facilities; ccc has no IPv6 prefix.
topology::Topology Triangle(const std::string& workloads) {
  return topology::ParseTopology(absl::StrCat(R"(
facilities:
  - {id: aaa, name: A, region: r, position: {lat: 0, lon: 0}, prefixes: [10.1.0.0/16, "2001:db8:1::/48"]}
  - {id: bbb, name: B, region: r, position: {lat: 0, lon: 1}, prefixes: [10.2.0.0/16, "2001:db8:2::/48"]}
  - {id: ccc, name: C, region: r, position: {lat: 1, lon: 0}, prefixes: [10.3.0.0/16]}
nodes:
  - {id: aaa-br1, facility: aaa}
  - {id: bbb-br1, facility: bbb}
  - {id: ccc-br1, facility: ccc}
links:
  - {id: aaa-bbb, reverse: bbb-aaa, from: aaa-br1, to: bbb-br1, capacity_gbps: 100, metric: 10}
  - {id: aaa-ccc, reverse: ccc-aaa, from: aaa-br1, to: ccc-br1, capacity_gbps: 100, metric: 10}
)",
                                              workloads),
                                 "triangle.yaml")
      .value();
}

TEST(ElephantStreamsTest, OneStreamPerElephantBetweenItsFacilitiesAtTheScaledDemand) {
  const topology::Topology topology = Triangle(R"(
services:
  - {id: svc, replicas: [aaa], service_time_us: 1000}
workloads:
  - {id: ckpt, kind: elephant, src: aaa, dst_prefix: 10.2.0.0/16, demand_gbps: 200, priority: 1}
  - {id: rag, kind: chain, origin: bbb, services: [svc], latency_budget_us: 150000}
  - {id: sync, kind: elephant, src: bbb, dst_prefix: "2001:db8:1::/48", demand_gbps: 4, priority: 3}
)");
  absl::StatusOr<std::vector<TrafficStream>> streams = ElephantStreams(topology, 0.5);
  ASSERT_TRUE(streams.ok()) << streams.status();
  ASSERT_EQ(streams->size(), 2u) << "the chain is no elephant";
  const TrafficStream& ckpt = (*streams)[0];
  EXPECT_EQ(ckpt.id, 1u);
  EXPECT_EQ(ckpt.workload_id, "ckpt");
  EXPECT_EQ(ckpt.from_facility, "aaa");
  EXPECT_EQ(ckpt.to_facility, "bbb");
  EXPECT_FALSE(ckpt.v6);
  EXPECT_DOUBLE_EQ(ckpt.rate_mbps, 100);  // 200 Gbps at 0.5 Mbit/s per Gbps
  EXPECT_EQ(ckpt.size_bytes, 1400u) << "above 1400 bytes the packet rate rises instead";
  const TrafficStream& sync = (*streams)[1];
  EXPECT_EQ(sync.id, 2u);
  EXPECT_EQ(sync.from_facility, "bbb");
  EXPECT_EQ(sync.to_facility, "aaa");
  EXPECT_TRUE(sync.v6);
  EXPECT_DOUBLE_EQ(sync.rate_mbps, 2);
  EXPECT_EQ(sync.size_bytes, 250u) << "2 Mbit/s in 1000 packets a second";
}

TEST(ElephantStreamsTest, PacketsAreSizedForOneAMillisecondWithinTheClamp) {
  EXPECT_EQ(StreamPacketBytes(1), 125u);
  EXPECT_EQ(StreamPacketBytes(11.2), 1400u);
  EXPECT_EQ(StreamPacketBytes(50), 1400u);
  EXPECT_EQ(StreamPacketBytes(0.1), 64u) << "the floor: such a slow stream sends every 5.12 ms";
  // At every size in the clamp the interval is at most 1 ms.
  for (double rate_mbps : {0.512, 0.9, 3.3, 7.77, 11.2, 400.0}) {
    const double interval_ms = StreamPacketBytes(rate_mbps) * 8 / (rate_mbps * 1e3);
    EXPECT_LE(interval_ms, 1.0) << rate_mbps << " Mbit/s";
  }
}

TEST(ElephantStreamsTest, NoElephantsMakeNoStreams) {
  absl::StatusOr<std::vector<TrafficStream>> streams = ElephantStreams(Triangle(""), 1);
  ASSERT_TRUE(streams.ok()) << streams.status();
  EXPECT_TRUE(streams->empty());
}

TEST(ElephantStreamsTest, RefusesWhatNoStreamCanStandFor) {
  topology::Topology topology = Triangle(R"(
workloads:
  - {id: ckpt, kind: elephant, src: aaa, dst_prefix: 10.2.0.0/16, demand_gbps: 200, priority: 1}
)");
  EXPECT_THAT(ElephantStreams(topology, 0).status().message(), HasSubstr("Mbit/s per Gbps"));

  topology::Topology unknown_source = topology;
  unknown_source.workloads[0].mutable_elephant()->set_src_facility_id("zzz");
  absl::Status status = ElephantStreams(unknown_source, 1).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("ckpt"));
  EXPECT_THAT(status.message(), HasSubstr("\"zzz\" is not in the topology"));

  topology::Topology unknown_destination = topology;
  unknown_destination.workloads[0].mutable_elephant()->set_dst_prefix("10.9.0.0/16");
  EXPECT_THAT(ElephantStreams(unknown_destination, 1).status().message(),
              HasSubstr("no facility announces its dst_prefix 10.9.0.0/16"));

  topology::Topology no_v6_source = topology;
  no_v6_source.workloads[0].mutable_elephant()->set_src_facility_id("ccc");
  no_v6_source.workloads[0].mutable_elephant()->set_dst_prefix("2001:db8:2::/48");
  EXPECT_THAT(ElephantStreams(no_v6_source, 1).status().message(), HasSubstr("ccc has no IPv6 prefix"));

  topology::Topology no_demand = topology;
  no_demand.workloads[0].mutable_elephant()->set_demand_gbps(0);
  EXPECT_THAT(ElephantStreams(no_demand, 1).status().message(), HasSubstr("demand of 0 Gbps"));
}

}  // namespace
}  // namespace geodesic::sim
