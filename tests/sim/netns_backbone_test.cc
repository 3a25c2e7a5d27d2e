// The example backbone in network namespaces: the namespaces and veths are
// there with their addresses and shaping, packets cross one link and (with
// static routes) several, a weighted multipath route reaches the kernel, a
// fiber cut and loss stop packets, and nothing is left behind, even by a
// killed run. Skipped only where namespaces cannot be made (not root).
#include "sim/netns/netns_backbone.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <string>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/struct.pb.h"
#include "sim/wait_until.h"
#include "tests/support/netns_testing.h"
#include "tests/support/test_dirs.h"
#include "topology/project_reader.h"

namespace geodesic::sim {
namespace {

using testing::Json;
using testing::Readable;
using testing::Socket;
using testing::ToSockaddr;

using ::testing::HasSubstr;
using ::testing::Not;
using namespace std::chrono_literals;

// What ping would say, over UDP (this machine has no ping): a datagram from
// `from` (bound to `source` unless empty, else the kernel picks) to `target`
// in `to`, echoed back by the test; true when the echo arrives within
// `timeout` each way.
bool UdpPing(const NetnsBackbone& backbone, const std::string& from, const std::string& source, const std::string& to,
             const std::string& target, std::chrono::milliseconds timeout = 1000ms) {
  const int family = target.find(':') == std::string::npos ? AF_INET : AF_INET6;
  Socket sender{backbone.OpenSocket(from, family, SOCK_DGRAM).value_or(-1)};
  Socket receiver{backbone.OpenSocket(to, family, SOCK_DGRAM).value_or(-1)};
  if (sender.fd < 0 || receiver.fd < 0) return false;
  sockaddr_storage address;
  socklen_t length;
  if (!source.empty() && (!ToSockaddr(source, 0, &address, &length) ||
                          bind(sender.fd, reinterpret_cast<sockaddr*>(&address), length) != 0)) {
    return false;
  }
  if (!ToSockaddr(target, 0, &address, &length) ||
      bind(receiver.fd, reinterpret_cast<sockaddr*>(&address), length) != 0 ||
      getsockname(receiver.fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    return false;
  }
  const char request[] = "geodesic ping";
  if (sendto(sender.fd, request, sizeof request, 0, reinterpret_cast<sockaddr*>(&address), length) < 0) return false;
  if (!Readable(receiver.fd, timeout)) return false;
  char buffer[64];
  sockaddr_storage peer;
  socklen_t peer_length = sizeof peer;
  const ssize_t n = recvfrom(receiver.fd, buffer, sizeof buffer, 0, reinterpret_cast<sockaddr*>(&peer), &peer_length);
  if (n <= 0 || sendto(receiver.fd, buffer, n, 0, reinterpret_cast<sockaddr*>(&peer), peer_length) < 0) return false;
  return Readable(sender.fd, timeout) && recv(sender.fd, buffer, sizeof buffer, 0) == n;
}

// UdpPing retried until `deadline` (as ping -c N would): for what must work.
// A first datagram over a fresh link was once lost on a loaded machine.
bool Pings(const NetnsBackbone& backbone, const std::string& from, const std::string& source, const std::string& to,
           const std::string& target, std::chrono::milliseconds deadline = 5000ms) {
  return WaitUntil(absl::StrCat("a UDP echo from ", from, " to ", target, " in ", to), deadline,
                   [&] { return UdpPing(backbone, from, source, to, target, 250ms); })
      .ok();
}

// How many of `count` datagrams sent from `from` reach `target` in `to`.
int UdpDelivered(const NetnsBackbone& backbone, const std::string& from, const std::string& to,
                 const std::string& target, int count) {
  Socket sender{backbone.OpenSocket(from, AF_INET, SOCK_DGRAM).value_or(-1)};
  Socket receiver{backbone.OpenSocket(to, AF_INET, SOCK_DGRAM).value_or(-1)};
  sockaddr_storage address;
  socklen_t length;
  if (sender.fd < 0 || receiver.fd < 0 || !ToSockaddr(target, 0, &address, &length) ||
      bind(receiver.fd, reinterpret_cast<sockaddr*>(&address), length) != 0 ||
      getsockname(receiver.fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
    return -1;
  }
  // Room for every datagram at once: what is missing was dropped on the link, not by the receiver.
  const int buffer_bytes = 8 << 20;
  setsockopt(receiver.fd, SOL_SOCKET, SO_RCVBUFFORCE, &buffer_bytes, sizeof buffer_bytes);
  for (int i = 0; i < count; ++i) {
    sendto(sender.fd, &i, sizeof i, 0, reinterpret_cast<sockaddr*>(&address), length);
  }
  // Every datagram that survives the loss is queued at once (the link is idle):
  // the count is final once nothing more arrives for a while.
  int delivered = 0;
  int value;
  while (Readable(receiver.fd, 300ms) && recv(receiver.fd, &value, sizeof value, 0) == sizeof value) ++delivered;
  return delivered;
}

const google::protobuf::Value& Field(const google::protobuf::Value& value, const std::string& key) {
  static const google::protobuf::Value kNull;
  const auto& fields = value.struct_value().fields();
  auto it = fields.find(key);
  return it == fields.end() ? kNull : it->second;
}

std::string ExecOk(const NetnsBackbone& backbone, const std::string& facility, const std::vector<std::string>& argv) {
  absl::StatusOr<RunResult> result = backbone.Exec(facility, argv);
  EXPECT_TRUE(result.ok()) << result.status();
  if (!result.ok()) return "";
  EXPECT_EQ(result->exit_code, 0) << result->output;
  return result->output;
}

std::string NetnsList() {
  absl::StatusOr<RunResult> list = RunCommand({"/usr/sbin/ip", "netns", "list"});
  return list.ok() ? list->output : "";
}

class NetnsBackboneTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (absl::Status available = NetnsBackbone::Available(); !available.ok()) {
      unavailable_ = new std::string(available.message());
      return;
    }
    topology_ = new topology::Topology(topology::LoadTopologyFile(testing::Backbone()).value());
    const auto start = std::chrono::steady_clock::now();
    absl::StatusOr<NetnsBackbonePtr> made = NetnsBackbone::Create(*topology_);
    ASSERT_TRUE(made.ok()) << made.status();
    std::printf("example backbone in namespaces built in %.0f ms (%zu namespaces, %zu veth pairs, netem %s)\n",
                std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count(),
                (*made)->facilities().size(), (*made)->links().size(), (*made)->latency_emulated() ? "on" : "absent");
    backbone_ = made->release();
  }
  static void TearDownTestSuite() {
    delete backbone_;
    delete topology_;
    backbone_ = nullptr;
  }
  void SetUp() override {
    if (unavailable_ != nullptr) GTEST_SKIP() << "network namespaces unavailable: " << *unavailable_;
    ASSERT_NE(backbone_, nullptr);
  }

  static const NetnsBackbone& backbone() { return *backbone_; }
  static NetnsBackbone& mutable_backbone() { return *backbone_; }

  static inline std::string* unavailable_ = nullptr;
  static inline topology::Topology* topology_ = nullptr;
  static inline NetnsBackbone* backbone_ = nullptr;
};

TEST_F(NetnsBackboneTest, EveryFacilityHasANamespaceAndEveryLinkAVethPairUpWithItsAddresses) {
  const std::string namespaces = NetnsList();
  ASSERT_EQ(backbone().facilities().size(), topology_->facilities.size());
  for (const NetnsFacility& facility : backbone().facilities()) {
    EXPECT_EQ(facility.namespace_name, absl::StrCat("geo-", backbone().run(), "-", facility.id));
    EXPECT_THAT(namespaces, HasSubstr(facility.namespace_name));
    EXPECT_THAT(ExecOk(backbone(), facility.id, {"ip", "-br", "addr", "show", "dev", "lo"}),
                HasSubstr(facility.host_v4 + "/32"));
    EXPECT_EQ(ExecOk(backbone(), facility.id, {"sysctl", "-n", "net.ipv4.ip_forward"}), "1\n");
  }
  EXPECT_EQ(backbone().Facility("iad")->host_v4, "10.1.0.1");
  EXPECT_EQ(backbone().Facility("iad")->host_v6, "2001:db8:1::1");
  // The example's 24 directed links are 12 pairs.
  ASSERT_EQ(backbone().links().size(), topology_->links.size() / 2);
  for (const NetnsLink& link : backbone().links()) {
    EXPECT_FALSE(link.reverse_id.empty()) << link.forward_id;
    for (const NetnsLinkEnd& end : {link.a, link.b}) {
      const google::protobuf::Value shown =
          Json(ExecOk(backbone(), end.facility, {"ip", "-j", "addr", "show", "dev", end.interface}));
      ASSERT_EQ(shown.list_value().values_size(), 1) << end.interface;
      const google::protobuf::Value& interface = shown.list_value().values(0);
      EXPECT_EQ(Field(interface, "operstate").string_value(), "UP") << end.interface;
      std::string addresses;
      for (const auto& info : Field(interface, "addr_info").list_value().values()) {
        absl::StrAppend(&addresses, Field(info, "local").string_value(), "/",
                        Field(info, "prefixlen").number_value(), " ");
      }
      EXPECT_THAT(addresses, HasSubstr(end.address_v4 + "/31 ")) << end.interface;
      EXPECT_THAT(addresses, HasSubstr(end.address_v6 + "/127 ")) << end.interface;
    }
  }
  EXPECT_EQ(backbone().End("chi-iad", "iad")->interface, backbone().End("iad-chi", "iad")->interface);
  EXPECT_FALSE(backbone().End("iad-chi", "den").ok());
}

TEST_F(NetnsBackboneTest, PacketsCrossOneLinkInBothFamilies) {
  const NetnsLinkEnd iad = backbone().End("iad-nyc", "iad").value();
  const NetnsLinkEnd nyc = backbone().End("iad-nyc", "nyc").value();
  EXPECT_TRUE(Pings(backbone(), "iad", iad.address_v4, "nyc", nyc.address_v4));
  EXPECT_TRUE(Pings(backbone(), "nyc", nyc.address_v6, "iad", iad.address_v6));
}

TEST_F(NetnsBackboneTest, StaticRoutesCarryPacketsOverSeveralHops) {
  NetnsBackbone& lab = mutable_backbone();
  const std::string iad_host = lab.Facility("iad")->host_v4, den_host = lab.Facility("den")->host_v4;
  ASSERT_OK(lab.AddRoute("iad", "10.5.0.0/16", {{"iad-chi"}}));
  ASSERT_OK(lab.AddRoute("chi", "10.5.0.0/16", {{"chi-den"}}));
  ASSERT_OK(lab.AddRoute("den", "10.1.0.0/16", {{"den-chi"}}));
  ASSERT_OK(lab.AddRoute("chi", "10.1.0.0/16", {{"iad-chi"}}));
  EXPECT_TRUE(Pings(lab, "iad", iad_host, "den", den_host));
  ASSERT_OK(lab.AddRoute("iad", "2001:db8:5::/48", {{"iad-chi"}}));
  ASSERT_OK(lab.AddRoute("chi", "2001:db8:5::/48", {{"chi-den"}}));
  ASSERT_OK(lab.AddRoute("den", "2001:db8:1::/48", {{"den-chi"}}));
  ASSERT_OK(lab.AddRoute("chi", "2001:db8:1::/48", {{"iad-chi"}}));
  EXPECT_TRUE(Pings(lab, "iad", lab.Facility("iad")->host_v6, "den", lab.Facility("den")->host_v6));
  // Without chi's route to den the packets stop there.
  ASSERT_OK(lab.DeleteRoute("chi", "10.5.0.0/16"));
  EXPECT_FALSE(UdpPing(lab, "iad", iad_host, "den", den_host, 200ms));
  EXPECT_EQ(lab.DeleteRoute("chi", "10.5.0.0/16").code(), absl::StatusCode::kNotFound);
}

TEST_F(NetnsBackboneTest, WeightedMultipathReachesTheKernelWithItsWeights) {
  NetnsBackbone& lab = mutable_backbone();
  ASSERT_OK(lab.AddRoute("iad", "10.4.0.0/16", {{"iad-dfw", 3}, {"iad-chi", 1}}));
  const google::protobuf::Value routes =
      Json(ExecOk(lab, "iad", {"ip", "-j", "route", "show", "10.4.0.0/16"}));
  ASSERT_EQ(routes.list_value().values_size(), 1);
  std::map<std::string, double> weight_by_gateway;
  for (const auto& hop : Field(routes.list_value().values(0), "nexthops").list_value().values()) {
    weight_by_gateway[Field(hop, "gateway").string_value()] = Field(hop, "weight").number_value();
  }
  EXPECT_EQ(weight_by_gateway, (std::map<std::string, double>{{lab.End("iad-dfw", "dfw")->address_v4, 3},
                                                              {lab.End("iad-chi", "chi")->address_v4, 1}}));
  EXPECT_EQ(lab.AddRoute("iad", "10.4.0.0/16", {{"iad-dfw", 0}}).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(lab.AddRoute("iad", "10.4.0.0/16", {{"chi-den", 1}}).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(lab.AddRoute("iad", "10.4.0.0/16", {{"iad-dfw"}, {"dfw-iad"}}).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(NetnsBackboneTest, AFiberCutStopsPacketsAndTheRepairBringsThemBack) {
  NetnsBackbone& lab = mutable_backbone();
  const std::string far = lab.End("nyc-lon", "lon")->address_v4;
  ASSERT_TRUE(Pings(lab, "nyc", "", "lon", far)) << "before the cut";
  ASSERT_OK(lab.SetLinkUp("nyc-lon", false));
  EXPECT_FALSE(UdpPing(lab, "nyc", "", "lon", far, 200ms)) << "across a cut fiber";
  ASSERT_OK(lab.SetLinkUp("lon-nyc", true));
  EXPECT_TRUE(Pings(lab, "nyc", "", "lon", far)) << "across the repaired fiber";
}

TEST_F(NetnsBackboneTest, LossDropsItsShareOfPackets) {
  NetnsBackbone& lab = mutable_backbone();
  const std::string far = lab.End("lon-ams", "ams")->address_v4;
  ASSERT_OK(lab.SetLoss("lon-ams", 100));
  EXPECT_FALSE(UdpPing(lab, "lon", "", "ams", far, 200ms));
  ASSERT_OK(lab.SetLoss("lon-ams", 50));
  // 400 datagrams at 50%: fewer than 140 or more than 260 arrive with probability < 1e-9.
  const int delivered = UdpDelivered(lab, "lon", "ams", far, 400);
  std::printf("50%% loss on lon-ams: %d of 400 datagrams delivered\n", delivered);
  EXPECT_GT(delivered, 140);
  EXPECT_LT(delivered, 260);
  ASSERT_OK(lab.SetLoss("lon-ams", 0));
  EXPECT_TRUE(Pings(lab, "lon", "", "ams", far));
  EXPECT_EQ(UdpDelivered(lab, "lon", "ams", far, 100), 100);
  EXPECT_EQ(lab.SetLoss("lon-ams", 101).code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(NetnsBackboneTest, EachEndIsShapedToItsDirectionsCapacityAtTheStatedScale) {
  for (const std::string link_id : {"iad-chi", "chi-dfw", "iad-nyc"}) {
    const NetnsLink link = backbone().Link(link_id).value();
    const double capacity_gbps =
        std::find_if(topology_->links.begin(), topology_->links.end(), [&](const v1::Link& l) {
          return l.id() == link_id;
        })->capacity_gbps();
    for (const NetnsLinkEnd& end : {link.a, link.b}) {
      const google::protobuf::Value qdiscs =
          Json(ExecOk(backbone(), end.facility, {"tc", "-j", "qdisc", "show", "dev", end.interface}));
      double rate_bytes = 0;
      for (const auto& qdisc : qdiscs.list_value().values()) {
        if (Field(qdisc, "kind").string_value() == "tbf") rate_bytes = Field(Field(qdisc, "options"), "rate").number_value();
      }
      // 1 Gbps of the model is 1 Mbit/s: 800 Gbps is 800 Mbit/s, 10^8 bytes/s.
      EXPECT_EQ(rate_bytes, capacity_gbps * 1e6 / 8) << link_id << " at " << end.facility;
      EXPECT_EQ(end.egress_mbit, capacity_gbps);
    }
  }
}

// A backbone of two facilities, for what needs its own.
topology::Topology Pair(double capacity_gbps = 100) {
  return topology::ParseTopology(absl::StrCat(R"(
facilities:
  - {id: aaa, name: A, region: r, position: {lat: 0, lon: 0}, prefixes: [10.1.0.0/16]}
  - {id: bbb, name: B, region: r, position: {lat: 0, lon: 1}, prefixes: [10.2.0.0/16]}
nodes:
  - {id: aaa-br1, facility: aaa}
  - {id: bbb-br1, facility: bbb}
links:
  - {id: aaa-bbb, reverse: bbb-aaa, from: aaa-br1, to: bbb-br1, capacity_gbps: )",
                                              capacity_gbps, R"(, metric: 10}
)"),
                                 "pair.yaml")
      .value();
}

// For the tests that build a backbone of their own.
class OwnNetnsBackboneTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (absl::Status available = NetnsBackbone::Available(); !available.ok()) {
      GTEST_SKIP() << "network namespaces unavailable: " << available.message();
    }
  }
};
using NetnsCleanupTest = OwnNetnsBackboneTest;
using NetnsShapingTest = OwnNetnsBackboneTest;

TEST_F(NetnsShapingTest, AFloodIsCarriedAtTheLinksScaledCapacity) {
  // 10 Gbps at 1 Mbit/s per Gbps: 10 Mbit/s. The sender offers four times that for 0.6 s.
  NetnsBackbonePtr backbone = NetnsBackbone::Create(Pair(10)).value();
  const std::string target = backbone->End("aaa-bbb", "bbb")->address_v4;
  Socket sender{backbone->OpenSocket("aaa", AF_INET, SOCK_DGRAM).value()};
  Socket receiver{backbone->OpenSocket("bbb", AF_INET, SOCK_DGRAM).value()};
  sockaddr_storage address;
  socklen_t length;
  ASSERT_TRUE(ToSockaddr(target, 0, &address, &length));
  ASSERT_EQ(bind(receiver.fd, reinterpret_cast<sockaddr*>(&address), length), 0);
  ASSERT_EQ(getsockname(receiver.fd, reinterpret_cast<sockaddr*>(&address), &length), 0);
  ASSERT_TRUE(Pings(*backbone, "aaa", "", "bbb", target)) << "neighbours resolved before the flood";

  constexpr int kPayloadBytes = 1400;
  std::atomic<bool> sending = true;
  int64_t received_bytes = 0;
  std::chrono::steady_clock::time_point first, last;
  std::thread receiving([&] {
    char buffer[kPayloadBytes];
    while (Readable(receiver.fd, 300ms) || sending) {
      const ssize_t n = recv(receiver.fd, buffer, sizeof buffer, MSG_DONTWAIT);
      if (n <= 0) continue;
      last = std::chrono::steady_clock::now();
      if (received_bytes == 0) first = last;
      received_bytes += n;
    }
  });
  // 40 Mbit/s offered, paced in 10 ms ticks (a tight loop would starve a loaded machine's softirqs).
  const char payload[kPayloadBytes] = {};
  constexpr int kTicks = 60, kDatagramsPerTick = 36;
  const auto start = std::chrono::steady_clock::now();
  int64_t offered_bytes = 0;
  for (int tick = 0; tick < kTicks; ++tick) {
    for (int i = 0; i < kDatagramsPerTick; ++i) {
      if (sendto(sender.fd, payload, sizeof payload, 0, reinterpret_cast<sockaddr*>(&address), length) > 0) {
        offered_bytes += kPayloadBytes;
      }
    }
    std::this_thread::sleep_until(start + (tick + 1) * 10ms);
  }
  sending = false;
  receiving.join();
  const double seconds = std::chrono::duration<double>(last - first).count();
  ASSERT_GT(seconds, 0.3);
  const double received_mbit_s = received_bytes * 8 / seconds / 1e6;
  std::printf("10 Mbit/s link: %.2f Mbit/s of UDP payload received, %.0f Mbit/s offered\n", received_mbit_s,
              offered_bytes * 8 / (kTicks * 0.01) / 1e6);
  // tbf counts frames: 1400 bytes of payload are 1442 on the wire, 97%.
  EXPECT_GT(received_mbit_s, 8.0);
  EXPECT_LT(received_mbit_s, 10.5);
  EXPECT_GT(offered_bytes, 2 * received_bytes) << "the sender did not offer more than the link carries";
}

TEST_F(NetnsCleanupTest, DestructionRemovesEveryNamespace) {
  std::vector<std::string> names;
  {
    NetnsBackbonePtr backbone = NetnsBackbone::Create(Pair()).value();
    for (const NetnsFacility& facility : backbone->facilities()) names.push_back(facility.namespace_name);
    ASSERT_EQ(names.size(), 2u);
    EXPECT_THAT(NetnsList(), HasSubstr(names[0]));
  }
  const std::string after = NetnsList();
  for (const std::string& name : names) EXPECT_THAT(after, Not(HasSubstr(name)));
}

TEST_F(NetnsCleanupTest, SpawnRunsInTheNamespaceAndAProcessLeftThereDiesWithTheBackbone) {
  NetnsBackbonePtr backbone = NetnsBackbone::Create(Pair()).value();
  const std::string aaa = backbone->Facility("aaa")->namespace_name;
  testing::TempDir dir("netns_spawn");
  absl::StatusOr<ChildProcessPtr> spawned = backbone->Spawn("aaa", {"/usr/bin/sleep", "600"}, dir.Join("sleep.log"));
  ASSERT_TRUE(spawned.ok()) << spawned.status();
  // `ip netns exec` enters aaa and execs the program: the child's pid becomes sleep's, in aaa. Spawn returns
  // once forked, so the child may not have entered aaa yet.
  const std::string identify_pid = absl::StrCat((*spawned)->pid());
  EXPECT_TRUE(WaitUntil(absl::StrCat("the spawned child to be in ", aaa), 5000ms, [&] {
                return ExecOk(*backbone, "aaa", {"ip", "netns", "identify", identify_pid}) == aaa + "\n";
              }).ok());
  spawned->reset();
  // One that no handle stops (a daemon that forked away from its starter).
  const std::string orphan = ExecOk(*backbone, "aaa", {"/bin/sh", "-c", "sleep 600 >/dev/null 2>&1 & echo $!"});
  pid_t pid = 0;
  ASSERT_TRUE(absl::SimpleAtoi(absl::StripAsciiWhitespace(orphan), &pid)) << orphan;
  ASSERT_EQ(kill(pid, 0), 0);
  backbone.reset();
  EXPECT_TRUE(WaitUntil("the process left in aaa to be gone", 5000ms, [&] { return kill(pid, 0) != 0; }).ok());
  EXPECT_THAT(NetnsList(), Not(HasSubstr(aaa)));
}

TEST_F(NetnsCleanupTest, AFailedCreateLeavesNothing) {
  topology::Topology broken = Pair();
  broken.links[1].set_capacity_gbps(0);  // fails at the second end of the only link
  // A prefix of its own: other runs may come and go meanwhile.
  absl::StatusOr<NetnsBackbonePtr> made = NetnsBackbone::Create(broken, {.name_prefix = "geofailed"});
  ASSERT_FALSE(made.ok());
  EXPECT_THAT(made.status().message(), HasSubstr("bbb-aaa has no capacity"));
  EXPECT_THAT(NetnsList(), Not(HasSubstr(absl::StrCat("geofailed-", getpid(), "x"))));
}

TEST_F(NetnsCleanupTest, TheNextCreateRemovesTheNamespacesOfADeadRunButNotOfALiveOne) {
  const pid_t dead = fork();
  if (dead == 0) _exit(0);
  ASSERT_EQ(waitpid(dead, nullptr, 0), dead);
  const std::string leftover = absl::StrCat("geo-", dead, "x0bad-iad");
  const std::string live = absl::StrCat("geo-", getpid(), "x0bad-iad");
  ASSERT_TRUE(RunCommand({"/usr/sbin/ip", "netns", "add", leftover}).ok());
  ASSERT_TRUE(RunCommand({"/usr/sbin/ip", "netns", "add", live}).ok());
  ASSERT_THAT(NetnsList(), HasSubstr(leftover));
  {
    NetnsBackbonePtr backbone = NetnsBackbone::Create(Pair()).value();
    EXPECT_THAT(NetnsList(), Not(HasSubstr(leftover)));
    EXPECT_THAT(NetnsList(), HasSubstr(live));
  }
  EXPECT_TRUE(RunCommand({"/usr/sbin/ip", "netns", "del", live}).ok());
}

// The management network: each facility reaches the root namespace's end of
// its own management veth, routes nothing over it beyond the connected /31
// (so it reaches no other facility's), and the veth goes with the backbone.
TEST_F(NetnsCleanupTest, TheManagementNetworkReachesTheHostAndNothingElse) {
  // A pool of its own: outside the 169.254.100-199 range that labs on the default take theirs from.
  NetnsBackbonePtr backbone =
      NetnsBackbone::Create(Pair(), {.management_network = true, .management_pool_v4 = "169.254.250.0/24"}).value();
  const NetnsFacility aaa = backbone->Facility("aaa").value();
  const NetnsFacility bbb = backbone->Facility("bbb").value();
  EXPECT_EQ(aaa.management_host_address, "169.254.250.0");
  EXPECT_EQ(aaa.management_address, "169.254.250.1");
  EXPECT_EQ(bbb.management_host_address, "169.254.250.2");

  // A datagram from aaa's namespace to a socket of this (the root) namespace.
  Socket host{socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)};
  sockaddr_storage address;
  socklen_t length;
  ASSERT_TRUE(ToSockaddr(aaa.management_host_address, 0, &address, &length));
  ASSERT_EQ(bind(host.fd, reinterpret_cast<sockaddr*>(&address), length), 0);
  ASSERT_EQ(getsockname(host.fd, reinterpret_cast<sockaddr*>(&address), &length), 0);
  Socket sender{backbone->OpenSocket("aaa", AF_INET, SOCK_DGRAM).value_or(-1)};
  ASSERT_GE(sender.fd, 0);
  const absl::Status arrived = WaitUntil("a datagram from aaa at the host's management address", 5000ms, [&] {
    const char hello[] = "hello";
    sendto(sender.fd, hello, sizeof hello, 0, reinterpret_cast<sockaddr*>(&address), length);
    char buffer[16];
    return Readable(host.fd, 100ms) && recv(host.fd, buffer, sizeof buffer, 0) == sizeof hello;
  });
  EXPECT_TRUE(arrived.ok()) << arrived;

  // Only the connected /31 over mgmt; bbb's management addresses unroutable from aaa.
  const google::protobuf::Value routes = Json(ExecOk(*backbone, "aaa", {"ip", "-j", "route", "show", "dev", "mgmt"}));
  ASSERT_EQ(routes.list_value().values_size(), 1);
  EXPECT_EQ(Field(routes.list_value().values(0), "dst").string_value(), "169.254.250.0/31");
  for (const std::string& other : {bbb.management_address, bbb.management_host_address}) {
    absl::StatusOr<RunResult> route = backbone->Exec("aaa", {"ip", "route", "get", other});
    ASSERT_TRUE(route.ok()) << route.status();
    EXPECT_NE(route->exit_code, 0) << other << " is routed from aaa: " << route->output;
  }

  backbone.reset();
  absl::StatusOr<RunResult> addresses = RunCommand({"/usr/sbin/ip", "-o", "addr", "show", "to", "169.254.250.0/30"});
  ASSERT_TRUE(addresses.ok()) << addresses.status();
  EXPECT_EQ(absl::StripAsciiWhitespace(addresses->output), "") << "the root end outlived the backbone";
}

TEST(NetnsOptionsTest, AManagementPoolOverlappingTheLinkPoolIsRefused) {
  absl::StatusOr<NetnsBackbonePtr> made =
      NetnsBackbone::Create(Pair(), {.management_network = true, .management_pool_v4 = "10.255.1.0/24"});
  ASSERT_FALSE(made.ok());
  EXPECT_EQ(made.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(made.status().message(), HasSubstr("overlaps the link pool"));
}

TEST(NetnsOptionsTest, ALinkPoolOverlappingAFacilityPrefixIsRefused) {
  absl::StatusOr<NetnsBackbonePtr> made = NetnsBackbone::Create(Pair(), {.link_pool_v4 = "10.1.128.0/24"});
  ASSERT_FALSE(made.ok());
  EXPECT_EQ(made.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(made.status().message(), HasSubstr("overlaps aaa's prefix 10.1.0.0/16"));
}

}  // namespace
}  // namespace geodesic::sim
