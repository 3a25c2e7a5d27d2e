// FRR zebra + bgpd inside a facility's namespace install routerd's plan into
// that namespace's kernel as weighted multipath: iad's namespace of the
// example backbone runs its router and a routerd that restores a plan from its
// state directory (fail-static: no controller), and the kernel's route to
// dfw's prefixes has the plan's next hops (the far ends of iad-dfw and
// iad-chi) with weights in the plan's proportion (in whole percent, as FRR
// rounds them); a new plan changes them, and
// UDP from iad's host reaches dfw's over both links. Skipped only where
// namespaces cannot be made (not root) or FRR is not installed.
#include "sim/netns/netns_router.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "geodesic/v1/plan.pb.h"
#include "google/protobuf/struct.pb.h"
#include "sim/make_pki.h"
#include "sim/netns/netns_backbone.h"
#include "sim/wait_until.h"
#include "site_plan/site_plan_writer.h"
#include "tests/support/netns_testing.h"
#include "tests/support/test_dirs.h"
#include "topology/project_reader.h"

namespace geodesic::sim {
namespace {

using testing::Json;
using testing::Socket;

using namespace std::chrono_literals;

constexpr uint32_t kRouterAs = 65000;
constexpr uint32_t kRouterdAs = 4200000000;
constexpr char kRouterAddress[] = "169.254.0.1";   // both on the namespace's lo
constexpr char kRouterdAddress[] = "169.254.0.2";
constexpr char kDfwV4[] = "10.4.0.0/16";
constexpr char kDfwV6[] = "2001:db8:4::/48";

// iad's part of a plan: dfw's prefixes over iad-dfw and iad-chi with these weights.
v1::SitePlan IadPlan(uint64_t generation, uint32_t dfw_weight, uint32_t chi_weight) {
  v1::SitePlan plan;
  plan.set_facility_id("iad");
  plan.set_generation(generation);
  plan.set_epoch(1);
  plan.set_replica_id("test");
  plan.set_reason("netns_router_test");
  std::vector<v1::NextHop> hops;
  for (const auto& [link, peer, weight] : {std::tuple{"iad-dfw", "dfw", dfw_weight},
                                           std::tuple{"iad-chi", "chi", chi_weight}}) {
    v1::NextHop& hop = hops.emplace_back();
    hop.set_link_id(link);
    hop.set_peer_facility_id(peer);
    hop.set_peer_node_id(absl::StrCat(peer, "-br1"));
    hop.set_weight(weight);
  }
  site_plan::SitePlanWriter writer(&plan);
  for (const char* prefix : {kDfwV4, kDfwV6}) writer.AddRoute(prefix, "dfw", hops, {"iad", "dfw"}, 0);
  return plan;
}

// Packets the interface has sent (`ip -s link`), -1 when it cannot be read.
int64_t TxPackets(const NetnsBackbone& backbone, const NetnsLinkEnd& end) {
  absl::StatusOr<RunResult> shown = backbone.Exec(end.facility, {"ip", "-j", "-s", "link", "show", "dev", end.interface});
  if (!shown.ok() || shown->exit_code != 0) return -1;
  const google::protobuf::Value links = Json(shown->output);
  if (links.list_value().values_size() != 1) return -1;
  const auto& fields = links.list_value().values(0).struct_value().fields();
  if (!fields.contains("stats64")) return -1;
  return static_cast<int64_t>(
      fields.at("stats64").struct_value().fields().at("tx").struct_value().fields().at("packets").number_value());
}

// Weight by gateway, for comparing whole routes in one message.
std::map<std::string, int> WeightByGateway(const KernelRoute& route) {
  std::map<std::string, int> weights;
  for (const KernelNextHop& hop : route.next_hops) weights[hop.gateway] = hop.weight;
  return weights;
}

std::string Describe(const std::optional<KernelRoute>& route) {
  if (!route) return "no route";
  std::vector<std::string> hops;
  for (const KernelNextHop& hop : route->next_hops) {
    hops.push_back(absl::StrCat(hop.gateway, " dev ", hop.device, " weight ", hop.weight));
  }
  return absl::StrCat(route->prefix, " proto ", route->protocol, ": ", absl::StrJoin(hops, ", "));
}

class NetnsRouterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (absl::Status available = NetnsBackbone::Available(); !available.ok()) {
      GTEST_SKIP() << "network namespaces unavailable: " << available.message();
    }
    if (absl::Status available = NetnsRouterAvailable(); !available.ok()) {
      GTEST_SKIP() << "FRR unavailable: " << available.message();
    }
    topology_ = topology::LoadTopologyFile(testing::Backbone()).value();
    absl::StatusOr<NetnsBackbonePtr> backbone = NetnsBackbone::Create(topology_);
    ASSERT_TRUE(backbone.ok()) << backbone.status();
    backbone_ = *std::move(backbone);
    ASSERT_OK(RunMakePki(dir_.Join("pki"), {"--facilities", "iad"}));
    absl::StatusOr<NetnsRouterPtr> router = NetnsRouter::Start(
        *backbone_, {.facility_id = "iad", .work_dir = dir_.Join("frr-iad"), .local_as = kRouterAs,
                     .listen_address = kRouterAddress, .peers = {{.address = kRouterdAddress, .remote_as = kRouterdAs}},
                     .stalepath_time_s = 360});
    ASSERT_TRUE(router.ok()) << router.status();
    router_ = *std::move(router);
  }

  void TearDown() override {
    if (HasFailure()) {
      dir_.keep();
      std::printf("logs kept in %s\n", dir_.path().c_str());
    }
    // routerd, then the router (bgpd, zebra), then the namespaces: nothing may
    // still run in a namespace when it goes.
    routerd_.reset();
    router_.reset();
    backbone_.reset();
  }

  // The far end's address of an iad link (what routerd announces as next hop).
  std::string FarEnd(const std::string& link_id, bool v6) const {
    const NetnsLink link = backbone_->Link(link_id).value();
    const NetnsLinkEnd& far = link.a.facility == "iad" ? link.b : link.a;
    return v6 ? far.address_v6 : far.address_v4;
  }

  // routerd's config: no controller answers (fail-static), BGP to the
  // namespace's bgpd, next hops the far ends of iad's links.
  std::string RouterdConfig() const {
    const std::string pki = dir_.Join("pki");
    std::string config = absl::StrCat(
        "facility: iad\npathcomp:\n  - address: 127.0.0.1:9\n",  // discard port: nobody answers
        "tls:\n  ca: ", pki, "/ca.crt\n  cert: ", pki, "/site-iad-routerd.crt\n  key: ", pki,
        "/site-iad-routerd.key\n", "state_dir: ", dir_.Join("state-iad"), "\n",
        "bgp:\n  local_as: ", kRouterdAs, "\n  router_id: ", kRouterdAddress,
        "\n  hold_time_s: 9\n  graceful_restart_s: 120\n  bandwidth_per_weight_mbps: 1000\n",
        "  peers:\n    - {address: ", kRouterAddress, ", port: ", NetnsRouter::kBgpPort, ", remote_as: ", kRouterAs,
        ", local_address: ", kRouterdAddress, "}\n  next_hops:\n");
    for (const v1::Link& link : topology_.links) {
      if (link.src_facility_id() != "iad") continue;
      absl::StrAppend(&config, "    - {link: ", link.id(), ", ipv4: ", FarEnd(link.id(), false), ", ipv6: \"",
                      FarEnd(link.id(), true), "\"}\n");
    }
    return config;
  }

  // Stores `plan` as routerd's installed plan and (re)starts routerd in iad's
  // namespace: it restores the plan and announces it to the router.
  void StartRouterdWith(const v1::SitePlan& plan) {
    routerd_.reset();
    std::filesystem::create_directories(dir_.Join("state-iad"));
    std::ofstream(dir_.Join("state-iad/installed-plan.pb"), std::ios::binary | std::ios::trunc)
        << plan.SerializeAsString();
    const std::string config = dir_.Write("routerd-iad.yaml", RouterdConfig());
    absl::StatusOr<ChildProcessPtr> routerd = backbone_->Spawn(
        "iad", {testing::BinaryDir() + "/bin/routerd", "--config", config}, dir_.Join("routerd-iad.log"));
    ASSERT_TRUE(routerd.ok()) << routerd.status();
    routerd_ = *std::move(routerd);
  }

  // Waits until iad's kernel routes `prefix` via exactly `gateways`; the route.
  std::optional<KernelRoute> AwaitKernelRoute(const std::string& prefix, const std::map<std::string, int>& expected) {
    std::optional<KernelRoute> last;
    const absl::Status arrived = WaitUntil(absl::StrCat("iad's kernel to route ", prefix, " as planned"), 30s, [&] {
      absl::StatusOr<std::optional<KernelRoute>> route = ReadKernelRoute(*backbone_, "iad", prefix);
      if (!route.ok()) return false;
      last = *route;
      return last && WeightByGateway(*last) == expected;
    }, 50ms);
    EXPECT_TRUE(arrived.ok()) << arrived << "; last seen: " << Describe(last) << "\nbgpd: "
                              << router_->Bgpd(absl::StrCat("show bgp ", prefix)).value_or("?")
                              << "\nzebra: " << router_->Zebra(absl::StrCat("show ip route ", prefix)).value_or("?");
    return last;
  }

  testing::TempDir dir_{"netns_router_test"};
  topology::Topology topology_;
  NetnsBackbonePtr backbone_;
  NetnsRouterPtr router_;
  ChildProcessPtr routerd_;
};

// FRR's kernel weight for a path: 100 x its link bandwidth / the sum over the
// route's multipath, truncated (bgpd's bgp_zebra_use_nhop_weighting); zebra
// installs it as is. routerd's bandwidths are proportional to the plan's
// weights, so this is the plan's share of each next hop in whole percent.
int FrrKernelWeight(uint32_t weight, uint32_t total) { return static_cast<int>(100ull * weight / total); }

TEST_F(NetnsRouterTest, ThePlansWeightedNextHopsReachTheNamespacesKernelAndFollowANewPlan) {
  StartRouterdWith(IadPlan(1, 3, 1));
  ASSERT_OK(WaitUntil("routerd's session with iad's bgpd", 30s, [&] {
    return router_->PeerState(kRouterdAddress).value_or("") == "Established";
  }, 50ms));
  for (const bool v6 : {false, true}) {
    const std::string prefix = v6 ? kDfwV6 : kDfwV4;
    std::optional<KernelRoute> route = AwaitKernelRoute(
        prefix, {{FarEnd("iad-dfw", v6), FrrKernelWeight(3, 4)}, {FarEnd("iad-chi", v6), FrrKernelWeight(1, 4)}});
    ASSERT_TRUE(route.has_value());
    std::printf("plan 3:1 -> kernel %s\n", Describe(route).c_str());
    EXPECT_EQ(route->protocol, "bgp");
    for (const KernelNextHop& hop : route->next_hops) {
      const std::string link = hop.gateway == FarEnd("iad-dfw", v6) ? "iad-dfw" : "iad-chi";
      EXPECT_EQ(hop.device, backbone_->End(link, "iad")->interface) << hop.gateway;
    }
  }
  std::printf("%s", backbone_->Exec("iad", {"ip", "route", "show", kDfwV4}).value_or(RunResult{}).output.c_str());

  // A new plan (routerd restarted with it, as after an upgrade) moves the
  // weights the other way; 1:2 is truncated to 33:66.
  StartRouterdWith(IadPlan(2, 1, 2));
  for (const bool v6 : {false, true}) {
    const std::string prefix = v6 ? kDfwV6 : kDfwV4;
    std::optional<KernelRoute> route = AwaitKernelRoute(
        prefix, {{FarEnd("iad-dfw", v6), FrrKernelWeight(1, 3)}, {FarEnd("iad-chi", v6), FrrKernelWeight(2, 3)}});
    std::printf("plan 1:2 -> kernel %s\n", Describe(route).c_str());
  }
}

TEST_F(NetnsRouterTest, UdpFromIadsHostReachesDfwsHostOverBothPlannedLinks) {
  StartRouterdWith(IadPlan(1, 3, 1));
  // chi carries its share on to dfw; dfw answers nothing (UDP one way), but
  // has the way back for anyone who would.
  ASSERT_OK(backbone_->AddRoute("chi", kDfwV4, {{"chi-dfw"}}));
  ASSERT_OK(backbone_->AddRoute("dfw", "10.1.0.0/16", {{"dfw-iad"}}));
  AwaitKernelRoute(kDfwV4, {{FarEnd("iad-dfw", false), FrrKernelWeight(3, 4)},
                            {FarEnd("iad-chi", false), FrrKernelWeight(1, 4)}});
  ASSERT_FALSE(HasFailure());

  const std::string source = backbone_->Facility("iad")->host_v4;
  const std::string target = backbone_->Facility("dfw")->host_v4;
  Socket receiver{backbone_->OpenSocket("dfw", AF_INET, SOCK_DGRAM).value_or(-1)};
  ASSERT_GE(receiver.fd, 0);
  sockaddr_in target_address{.sin_family = AF_INET, .sin_port = 0, .sin_addr = {}, .sin_zero = {}};
  ASSERT_EQ(inet_pton(AF_INET, target.c_str(), &target_address.sin_addr), 1);
  ASSERT_EQ(bind(receiver.fd, reinterpret_cast<sockaddr*>(&target_address), sizeof target_address), 0);
  socklen_t length = sizeof target_address;
  ASSERT_EQ(getsockname(receiver.fd, reinterpret_cast<sockaddr*>(&target_address), &length), 0);
  const int buffer_bytes = 8 << 20;
  setsockopt(receiver.fd, SOL_SOCKET, SO_RCVBUFFORCE, &buffer_bytes, sizeof buffer_bytes);

  const NetnsLinkEnd via_dfw = backbone_->End("iad-dfw", "iad").value();
  const NetnsLinkEnd via_chi = backbone_->End("iad-chi", "iad").value();
  const int64_t dfw_before = TxPackets(*backbone_, via_dfw), chi_before = TxPackets(*backbone_, via_chi);
  // 400 flows (one datagram from each of 400 source ports): the L4 hash spreads them by the weights.
  constexpr int kFlows = 400;
  int sent = 0;
  for (int flow = 0; flow < kFlows; ++flow) {
    Socket sender{backbone_->OpenSocket("iad", AF_INET, SOCK_DGRAM).value_or(-1)};
    ASSERT_GE(sender.fd, 0);
    sockaddr_in source_address{.sin_family = AF_INET, .sin_port = 0, .sin_addr = {}, .sin_zero = {}};
    ASSERT_EQ(inet_pton(AF_INET, source.c_str(), &source_address.sin_addr), 1);
    ASSERT_EQ(bind(sender.fd, reinterpret_cast<sockaddr*>(&source_address), sizeof source_address), 0);
    if (sendto(sender.fd, &flow, sizeof flow, 0, reinterpret_cast<sockaddr*>(&target_address), length) ==
        sizeof flow) {
      ++sent;
    }
  }
  ASSERT_EQ(sent, kFlows);
  int delivered = 0;
  const absl::Status all_arrived = WaitUntil("every datagram at dfw's host", 10s, [&] {
    pollfd entry{.fd = receiver.fd, .events = POLLIN, .revents = 0};
    int value;
    while (poll(&entry, 1, 0) == 1 && recv(receiver.fd, &value, sizeof value, 0) == sizeof value) ++delivered;
    return delivered >= kFlows;
  }, 20ms);
  EXPECT_TRUE(all_arrived.ok()) << delivered << " of " << kFlows << " datagrams arrived";
  const int64_t over_dfw = TxPackets(*backbone_, via_dfw) - dfw_before;
  const int64_t over_chi = TxPackets(*backbone_, via_chi) - chi_before;
  std::printf("%d of %d flows delivered; sent over iad-dfw %lld, over iad-chi %lld packets (plan 3:1)\n", delivered,
              kFlows, static_cast<long long>(over_dfw), static_cast<long long>(over_chi));
  // At 3:1, iad-chi's share of 400 flows is 100 +- 8.7 (one sigma): outside
  // 50..150 with probability < 1e-8. (The counters also hold the odd
  // neighbour-discovery packet.)
  EXPECT_GT(over_chi, 50);
  EXPECT_LT(over_chi, 150 + 10);
  EXPECT_GT(over_dfw, over_chi);
}

TEST_F(NetnsRouterTest, StoppingTheRouterTakesItsRoutesOutOfTheKernel) {
  StartRouterdWith(IadPlan(1, 3, 1));
  AwaitKernelRoute(kDfwV4, {{FarEnd("iad-dfw", false), FrrKernelWeight(3, 4)},
                            {FarEnd("iad-chi", false), FrrKernelWeight(1, 4)}});
  ASSERT_FALSE(HasFailure());
  routerd_.reset();  // routerd leaves its routes to the router (graceful restart)
  router_.reset();   // bgpd, then zebra, which withdraws what it installed
  absl::StatusOr<std::optional<KernelRoute>> route = ReadKernelRoute(*backbone_, "iad", kDfwV4);
  ASSERT_TRUE(route.ok()) << route.status();
  EXPECT_FALSE(route->has_value()) << Describe(*route);
}

TEST_F(NetnsRouterTest, AFacilityOutsideTheBackboneIsRefused) {
  absl::StatusOr<NetnsRouterPtr> router =
      NetnsRouter::Start(*backbone_, {.facility_id = "nowhere", .work_dir = dir_.Join("frr-nowhere")});
  EXPECT_EQ(router.status().code(), absl::StatusCode::kNotFound) << router.status();
}

}  // namespace
}  // namespace geodesic::sim
