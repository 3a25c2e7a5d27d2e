// geodesic-traffic streams across a backbone in network namespaces: the
// elephant workloads' streams arrive whole over a static path and the link's
// counters carry their bytes; a fiber cut on the path, repaired by moving the
// route to another link, shows as exactly one outage per stream over it,
// spanning the cut and no longer than the time until the route moved.
// Skipped only where namespaces cannot be made (not root).
#include "sim/netns/netns_traffic.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "sim/netns/link_counters.h"
#include "sim/netns/netns_backbone.h"
#include "sim/wait_until.h"
#include "tests/support/netns_testing.h"
#include "tests/support/test_dirs.h"
#include "topology/project_reader.h"

namespace geodesic::sim {
namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;

// aaa, bbb and ccc in a triangle of 10 Gbps links (10 Mbit/s at the default
// scale); elephants aaa -> bbb in both families and ccc -> bbb, 3 Mbit/s in all.
constexpr char kTriangle[] = R"(
facilities:
  - {id: aaa, name: A, region: r, position: {lat: 0, lon: 0}, prefixes: [10.1.0.0/16, "2001:db8:1::/48"]}
  - {id: bbb, name: B, region: r, position: {lat: 0, lon: 1}, prefixes: [10.2.0.0/16, "2001:db8:2::/48"]}
  - {id: ccc, name: C, region: r, position: {lat: 1, lon: 0}, prefixes: [10.3.0.0/16, "2001:db8:3::/48"]}
nodes:
  - {id: aaa-br1, facility: aaa}
  - {id: bbb-br1, facility: bbb}
  - {id: ccc-br1, facility: ccc}
links:
  - {id: aaa-bbb, reverse: bbb-aaa, from: aaa-br1, to: bbb-br1, capacity_gbps: 10, metric: 10}
  - {id: aaa-ccc, reverse: ccc-aaa, from: aaa-br1, to: ccc-br1, capacity_gbps: 10, metric: 10}
  - {id: ccc-bbb, reverse: bbb-ccc, from: ccc-br1, to: bbb-br1, capacity_gbps: 10, metric: 10}
workloads:
  - {id: ckpt-v4, kind: elephant, src: aaa, dst_prefix: 10.2.0.0/16, demand_gbps: 1.5, priority: 1}
  - {id: ckpt-v6, kind: elephant, src: aaa, dst_prefix: "2001:db8:2::/48", demand_gbps: 1, priority: 1}
  - {id: sync-v4, kind: elephant, src: ccc, dst_prefix: 10.2.0.0/16, demand_gbps: 0.5, priority: 3}
)";
constexpr uint32_t kCkptV4 = 1, kCkptV6 = 2, kSyncV4 = 3;

// Ethernet + IP + UDP headers of a frame on the veth, per family.
constexpr uint64_t kV4HeaderBytes = 14 + 20 + 8;
constexpr uint64_t kV6HeaderBytes = 14 + 40 + 8;

int64_t NowUnixNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

class NetnsTrafficTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (absl::Status available = NetnsBackbone::Available(); !available.ok()) {
      GTEST_SKIP() << "network namespaces unavailable: " << available.message();
    }
    topology_ = topology::ParseTopology(kTriangle, "triangle.yaml").value();
    absl::StatusOr<NetnsBackbonePtr> made = NetnsBackbone::Create(topology_, {.name_prefix = "geotr"});
    ASSERT_TRUE(made.ok()) << made.status();
    backbone_ = *std::move(made);
    // aaa reaches bbb directly; ccc too. ccc's route is also aaa's way round a cut of aaa-bbb.
    for (const std::string prefix : {"10.2.0.0/16", "2001:db8:2::/48"}) {
      ASSERT_OK(backbone_->AddRoute("aaa", prefix, {{"aaa-bbb"}}));
      ASSERT_OK(backbone_->AddRoute("ccc", prefix, {{"ccc-bbb"}}));
    }
    for (const std::string link : {"aaa-bbb", "aaa-ccc", "ccc-bbb"}) ASSERT_OK(ResolveNeighbours(link));
    absl::StatusOr<std::vector<TrafficStream>> streams = ElephantStreams(topology_, 1.0);
    ASSERT_TRUE(streams.ok()) << streams.status();
    streams_ = *streams;
    ASSERT_EQ(streams_.size(), 3u);
  }

  void TearDown() override {
    if (HasFailure()) dir_.keep();
    traffic_.reset();  // before the backbone: its processes are in the namespaces
    backbone_.reset();
  }

  void StartTraffic(const std::string& run) {
    absl::StatusOr<NetnsTrafficPtr> started = NetnsTraffic::Start(
        *backbone_, {.binary_dir = testing::BinaryDir() + "/bin", .work_dir = dir_.Join(run)}, streams_);
    ASSERT_TRUE(started.ok()) << started.status();
    traffic_ = *std::move(started);
  }

  TrafficResults StopTraffic() {
    absl::StatusOr<TrafficResults> results = traffic_->Stop();
    EXPECT_TRUE(results.ok()) << results.status();
    return results.ok() ? *results : TrafficResults{};
  }

  // The counters of `link_id`'s end in `facility`.
  LinkEndCounters EndCounters(const std::string& link_id, const std::string& facility) {
    absl::StatusOr<LinkCounters> counters = ReadLinkCounters(*backbone_, link_id);
    EXPECT_TRUE(counters.ok()) << counters.status();
    if (!counters.ok()) return {};
    return counters->a.facility == facility ? counters->a : counters->b;
  }

  // Waits until both ends of `link_id` know each other's link-layer address
  // in both families (a datagram to the far end's address makes the kernel
  // ask), as a backbone's BGP sessions keep them known. Without it the first
  // IPv6 neighbour solicitation on a fresh veth was lost about every other
  // run, and a detour's first packets waited for the kernel's retry, 1 s.
  absl::Status ResolveNeighbours(const std::string& link_id) {
    const NetnsLink link = backbone_->Link(link_id).value();
    for (const auto& [near, far] : {std::pair{link.a, link.b}, std::pair{link.b, link.a}}) {
      for (const bool v6 : {false, true}) {
        const std::string far_address = v6 ? far.address_v6 : far.address_v4;
        absl::Status resolved = WaitUntil(
            absl::StrCat(near.facility, " to know ", far_address, " on ", near.interface), 5s,
            [&] {
              Nudge(near.facility, v6, far_address);
              absl::StatusOr<RunResult> shown =
                  backbone_->Exec(near.facility, {"ip", "neigh", "show", far_address, "dev", near.interface});
              return shown.ok() && shown->output.find("lladdr") != std::string::npos;
            },
            100ms);
        if (!resolved.ok()) return resolved;
      }
    }
    return absl::OkStatus();
  }

  // One UDP datagram from `facility` to `address` (the discard port).
  void Nudge(const std::string& facility, bool v6, const std::string& address) {
    absl::StatusOr<int> fd = backbone_->OpenSocket(facility, v6 ? AF_INET6 : AF_INET, SOCK_DGRAM);
    if (!fd.ok()) return;
    sockaddr_storage storage = {};
    socklen_t length = 0;
    if (v6) {
      auto* sin6 = reinterpret_cast<sockaddr_in6*>(&storage);
      sin6->sin6_family = AF_INET6;
      sin6->sin6_port = htons(9);
      inet_pton(AF_INET6, address.c_str(), &sin6->sin6_addr);
      length = sizeof(sockaddr_in6);
    } else {
      auto* sin = reinterpret_cast<sockaddr_in*>(&storage);
      sin->sin_family = AF_INET;
      sin->sin_port = htons(9);
      inet_pton(AF_INET, address.c_str(), &sin->sin_addr);
      length = sizeof(sockaddr_in);
    }
    const char byte = 0;
    sendto(*fd, &byte, 1, 0, reinterpret_cast<sockaddr*>(&storage), length);
    close(*fd);
  }

  // Waits until `facility` has received `packets` more over `link_id` than `before`.
  absl::Status WaitForPackets(const std::string& link_id, const std::string& facility, uint64_t before,
                              uint64_t packets) {
    return WaitUntil(absl::StrCat(packets, " packets to reach ", facility, " over ", link_id), 20s,
                     [&] { return EndCounters(link_id, facility).rx_packets >= before + packets; });
  }

  topology::Topology topology_;
  NetnsBackbonePtr backbone_;
  std::vector<TrafficStream> streams_;
  NetnsTrafficPtr traffic_;
  testing::TempDir dir_{"netns_traffic"};
};

TEST_F(NetnsTrafficTest, ElephantStreamsArriveWholeAndTheLinkCountsTheirBytes) {
  const LinkEndCounters before = EndCounters("aaa-bbb", "aaa");
  const uint64_t direct_before = EndCounters("aaa-bbb", "bbb").rx_packets;
  const uint64_t sync_before = EndCounters("ccc-bbb", "bbb").rx_packets;
  ASSERT_NO_FATAL_FAILURE(StartTraffic("whole"));
  // Both of aaa's streams make 2000 packets a second; ccc's 1000 (64 bytes at 0.5 Mbit/s: every 1.024 ms).
  ASSERT_OK(WaitForPackets("aaa-bbb", "bbb", direct_before, 1000));
  // The link's load while both streams run, from its counters over 2000 more
  // packets. The streams send at a fixed packet rate, so the packets the
  // link counted are the interval's clock: bytes and packets come from the
  // same reads, and a test thread the machine preempts between reading the
  // counters and a clock cannot skew the rate (it once read 1.6 x).
  const TrafficStream& ckpt_v4 = streams_[kCkptV4 - 1];
  const TrafficStream& ckpt_v6 = streams_[kCkptV6 - 1];
  const double packets_per_second = ckpt_v4.rate_mbps * 1e6 / (8.0 * ckpt_v4.size_bytes) +
                                    ckpt_v6.rate_mbps * 1e6 / (8.0 * ckpt_v6.size_bytes);
  const LinkEndCounters load_start = EndCounters("aaa-bbb", "aaa");
  ASSERT_OK(WaitForPackets("aaa-bbb", "bbb", direct_before, 3000));
  const LinkEndCounters load_end = EndCounters("aaa-bbb", "aaa");
  const double load_seconds = static_cast<double>(load_end.tx_packets - load_start.tx_packets) / packets_per_second;
  ASSERT_OK(WaitForPackets("ccc-bbb", "bbb", sync_before, 500));
  const TrafficResults results = StopTraffic();
  const LinkEndCounters after = EndCounters("aaa-bbb", "aaa");

  // 2.5 Gbps of demand on a 10 Gbps link, measured as frames: the payload
  // rates grown by their headers.
  absl::StatusOr<LinkRate> load =
      RateOverInterval(load_end.tx_bytes - load_start.tx_bytes, load_seconds, 1.0, /*capacity_gbps=*/10);
  ASSERT_TRUE(load.ok()) << load.status();
  const double expected_gbps =
      ckpt_v4.rate_mbps * (ckpt_v4.size_bytes + kV4HeaderBytes) / ckpt_v4.size_bytes +
      ckpt_v6.rate_mbps * (ckpt_v6.size_bytes + kV6HeaderBytes) / ckpt_v6.size_bytes;
  std::printf("aaa-bbb carried %.3f Gbps of the model (%.1f%% of 10 Gbps); the streams' frames make %.3f\n",
              load->model_gbps, load->utilization * 100, expected_gbps);
  EXPECT_NEAR(load->model_gbps, expected_gbps, expected_gbps * 0.1);
  EXPECT_NEAR(load->utilization, expected_gbps / 10, expected_gbps / 100);

  ASSERT_EQ(results.streams.size(), 3u);
  for (const StreamResult& stream : results.streams) {
    SCOPED_TRACE(stream.stream.workload_id);
    EXPECT_GT(stream.sent, 400u);
    EXPECT_EQ(stream.received, stream.sent);
    EXPECT_EQ(stream.lost, 0u);
    EXPECT_EQ(stream.send_errors, 0u);
    EXPECT_TRUE(stream.outages.empty());
    EXPECT_LE(stream.interval_ns, 1'100'000) << "about one packet a millisecond";
  }
  EXPECT_EQ(results.delivered_ratio, 1.0);
  const StreamResult& v4 = *results.Stream(kCkptV4);
  const StreamResult& v6 = *results.Stream(kCkptV6);
  EXPECT_NEAR(v4.rate_mbps, 1.5, 0.15);
  EXPECT_FALSE(results.OutageSpanning(kCkptV4, NowUnixNs()).has_value());

  // aaa's end sent both of aaa's streams' frames, and little else (neighbour discovery).
  const uint64_t stream_packets = v4.sent + v6.sent;
  const uint64_t stream_bytes =
      v4.sent * (v4.stream.size_bytes + kV4HeaderBytes) + v6.sent * (v6.stream.size_bytes + kV6HeaderBytes);
  EXPECT_GE(after.tx_packets - before.tx_packets, stream_packets);
  EXPECT_LE(after.tx_packets - before.tx_packets, stream_packets + 30);
  EXPECT_GE(after.tx_bytes - before.tx_bytes, stream_bytes);
  EXPECT_LE(after.tx_bytes - before.tx_bytes, stream_bytes * 102 / 100);
  EXPECT_EQ(after.qdisc_drops, before.qdisc_drops) << "2.5 Mbit/s fit a 10 Mbit/s link";
}

TEST_F(NetnsTrafficTest, AFiberCutIsOneOutageSpanningTheCutAndEndingWithTheRouteChange) {
  const uint64_t direct_before = EndCounters("aaa-bbb", "bbb").rx_packets;
  ASSERT_NO_FATAL_FAILURE(StartTraffic("cut"));
  ASSERT_OK(WaitForPackets("aaa-bbb", "bbb", direct_before, 1000));

  const int64_t cut_ns = NowUnixNs();
  ASSERT_OK(backbone_->SetLinkUp("aaa-bbb", false));
  const int64_t cut_done_ns = NowUnixNs();
  // The repair: aaa's routes go round by ccc, whose route to bbb was there all along.
  const uint64_t detour_before = EndCounters("aaa-ccc", "ccc").rx_packets;
  const int64_t reroute_ns = NowUnixNs();
  for (const std::string prefix : {"10.2.0.0/16", "2001:db8:2::/48"}) {
    ASSERT_OK(backbone_->AddRoute("aaa", prefix, {{"aaa-ccc"}}));
  }
  const int64_t rerouted_ns = NowUnixNs();
  ASSERT_OK(WaitForPackets("aaa-ccc", "ccc", detour_before, 1000));
  const TrafficResults results = StopTraffic();

  const double cut_to_reroute_ms = (rerouted_ns - cut_ns) / 1e6;
  const double down_without_route_ms = (reroute_ns - cut_done_ns) / 1e6;
  std::printf("cut to reroute %.1f ms (%.1f ms with the link down and no route)\n", cut_to_reroute_ms,
              down_without_route_ms);
  for (uint32_t id : {kCkptV4, kCkptV6}) {
    const StreamResult& stream = *results.Stream(id);
    SCOPED_TRACE(stream.stream.workload_id);
    ASSERT_EQ(stream.outages.size(), 1u) << "the cut, and nothing else";
    const TrafficOutage& outage = stream.outages[0];
    std::printf("%s: outage of %lu packets, %.1f ms; first packet after it %.1f ms after the cut\n",
                stream.stream.workload_id.c_str(), outage.packets, outage.ms,
                (outage.first_after.receive_ns - cut_ns) / 1e6);
    // The link went down somewhere between cut_ns and cut_done_ns (`ip` takes
    // a while to start); by cut_done_ns it was down for certain.
    const std::optional<TrafficOutage> spanning = results.OutageSpanning(id, cut_done_ns);
    ASSERT_TRUE(spanning.has_value()) << "the outage spans the cut";
    EXPECT_EQ(spanning->first_missing, outage.first_missing);
    const double interval_ms = stream.interval_ns / 1e6;
    // Lost: what was sent while the link was down and aaa had no route, and
    // no more than from the cut to the new route (and a packet either side).
    EXPECT_GE(outage.ms, down_without_route_ms - interval_ms);
    EXPECT_LE(outage.ms, cut_to_reroute_ms + 2 * interval_ms);
    EXPECT_GE(outage.first_after.send_ns, cut_done_ns);
    EXPECT_GE(outage.last_before.send_ns, cut_ns - 5'000'000) << "delivering until the cut";
    EXPECT_LE(outage.first_after.send_ns, rerouted_ns + 5'000'000);
    const std::optional<TrafficDelivery> first = results.FirstDeliveryAfter(id, cut_done_ns);
    ASSERT_TRUE(first.has_value());
    EXPECT_GT(first->receive_ns, cut_done_ns);
    EXPECT_FALSE(results.OutageSpanning(id, rerouted_ns + 5'000'000).has_value()) << "delivering again";
    EXPECT_EQ(stream.lost, outage.packets) << "nothing lost but the outage";
    EXPECT_EQ(stream.lost_at_end, 0u);
  }
  const StreamResult& sync = *results.Stream(kSyncV4);
  EXPECT_TRUE(sync.outages.empty()) << "ccc's stream never crossed the cut link";
  EXPECT_EQ(sync.lost, 0u);
  EXPECT_LT(results.delivered_ratio, 1.0);
  EXPECT_GT(results.delivered_ratio, 0.5);
}

TEST_F(NetnsTrafficTest, StartRefusesStreamsItCannotRunAndLeavesNothingRunning) {
  const NetnsTrafficOptions options{.binary_dir = testing::BinaryDir() + "/bin", .work_dir = dir_.Join("bad")};
  std::vector<TrafficStream> unknown = streams_;
  unknown[0].to_facility = "zzz";
  absl::Status status = NetnsTraffic::Start(*backbone_, options, unknown).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("zzz"));
  std::vector<TrafficStream> repeated = streams_;
  repeated[1].id = repeated[0].id;
  EXPECT_THAT(NetnsTraffic::Start(*backbone_, options, repeated).status().message(), HasSubstr("repeated id"));
  EXPECT_EQ(NetnsTraffic::Start(*backbone_, options, {}).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(NetnsTraffic::Start(*backbone_, {.binary_dir = dir_.path(), .work_dir = dir_.Join("bad")}, streams_)
                .status()
                .code(),
            absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace geodesic::sim
