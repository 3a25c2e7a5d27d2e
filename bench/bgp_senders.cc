#include "bench/bgp_senders.h"

#include <sys/socket.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "sim/frr_vty.h"
#include "sim/process.h"
#include "sim/wait_until.h"
#include "topology/inventory.h"

namespace geodesic::bench {

using namespace std::chrono_literals;

void Die(const std::string& what) { throw BenchFailure(what); }

std::string Prefix24(int i) {
  return absl::StrCat(10 + i / 65536, ".", (i / 256) % 256, ".", i % 256, ".0/24");
}

double MillisecondsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

double WaitForFrr(const sim::FrrRouter& frr, const std::string& neighbor, Clock::time_point start,
                  const std::function<bool(const sim::FrrNeighborState&)>& done) {
  while (MillisecondsSince(start) < 120'000) {
    auto state = frr.Neighbor(neighbor);
    if (state.ok() && done(*state)) return MillisecondsSince(start);
    std::this_thread::sleep_for(1ms);
  }
  Die("FRR did not get there in 120 s; see its log under " + neighbor);
}

// The receiving FRR's port: chosen before it starts, so a sender can be told it first.
int ReceiverPort(const InjectionPath& path) {
  if (!path.network_namespace.empty()) return 179;
  return Check(sim::FreePort(SOCK_STREAM, path.receiver_address), "a free port for the receiving FRR");
}

std::unique_ptr<sim::FrrRouter> StartReceiver(const std::string& dir, const InjectionPath& path, uint32_t sender_as,
                                              int port) {
  return Check(sim::FrrRouter::Start({.work_dir = dir, .local_as = kFrrAs, .address = path.receiver_address,
                                      .neighbors = {{.address = path.sender_address, .remote_as = sender_as, .password = ""}},
                                      .stalepath_time_s = 360, .network_namespace = path.network_namespace,
                                      .port = port == 0 ? ReceiverPort(path) : port}),
               "start the receiving FRR");
}

// From the session reaching Established (as FRR sees it) to FRR holding every
// route: connection set-up and retry timers are each speaker's own business.
double TimeFromEstablishedToFull(const sim::FrrRouter& frr, const std::string& neighbor) {
  WaitForFrr(frr, neighbor, Clock::now(), [](const auto& s) { return s.state == "Established"; });
  const auto established = Clock::now();
  return WaitForFrr(frr, neighbor, established,
                    [](const auto& s) { return s.prefixes_received >= static_cast<uint64_t>(kInjectPrefixes); });
}

// Milliseconds from `start` until every injected prefix's path uses `next_hop`
// (FRR's next-hop cache, polled like WaitForFrr).
double TimeUntilAllVia(const sim::FrrRouter& frr, const std::string& next_hop, Clock::time_point start) {
  while (MillisecondsSince(start) < 120'000) {
    auto paths = frr.NextHopPaths();
    if (paths.ok()) {
      auto it = paths->find(next_hop);
      if (it != paths->end() && it->second >= static_cast<uint64_t>(kInjectPrefixes)) return MillisecondsSince(start);
    }
    std::this_thread::sleep_for(1ms);
  }
  Die("FRR did not move every prefix to " + next_hop + " in 120 s");
}

double TimeUntilNone(const sim::FrrRouter& frr, const std::string& neighbor, Clock::time_point start) {
  return WaitForFrr(frr, neighbor, start, [](const auto& s) { return s.prefixes_received == 0; });
}

// ---- GoBGP

namespace {

void PutU16(std::string& out, uint16_t v) {
  out.push_back(static_cast<char>(v >> 8));
  out.push_back(static_cast<char>(v));
}
void PutU32(std::string& out, uint32_t v) {
  PutU16(out, static_cast<uint16_t>(v >> 16));
  PutU16(out, static_cast<uint16_t>(v));
}
void PutMrt(std::ofstream& out, uint16_t subtype, const std::string& body) {
  std::string header;
  PutU32(header, 1700000000);
  PutU16(header, 13);  // TABLE_DUMP_V2 (RFC 6396)
  PutU16(header, subtype);
  PutU32(header, static_cast<uint32_t>(body.size()));
  out << header << body;
}

// An MRT RIB dump of `prefixes` /24s, ORIGIN IGP, empty AS_PATH, next hop kFirstNextHop.
void WriteMrt(const std::string& path, int prefixes) {
  std::ofstream out(path, std::ios::binary);
  std::string peers;
  PutU32(peers, 0x7f000003);  // collector id
  PutU16(peers, 0);           // no view name
  PutU16(peers, 1);
  peers.push_back(2);  // IPv4 peer, 4-octet AS
  PutU32(peers, 0x7f000003);
  PutU32(peers, 0x7f000003);
  PutU32(peers, kGobgpAs);
  PutMrt(out, 1, peers);  // PEER_INDEX_TABLE
  const std::string attributes = std::string("\x40\x01\x01\x00", 4) +          // ORIGIN IGP
                                 std::string("\x40\x02\x00", 3) +              // AS_PATH empty
                                 std::string("\x40\x03\x04\x0a\xff\x00\x01", 7);  // NEXT_HOP 10.255.0.1
  // gobgp 3.10's "mrt inject" loses its last partial batch of paths, so the
  // dump ends with repeats of its first routes (the RIB holds each prefix once).
  constexpr int kTailPadding = 5000;
  for (int n = 0; n < prefixes + kTailPadding; ++n) {
    const int i = n % prefixes;
    std::string rib;
    PutU32(rib, static_cast<uint32_t>(n));
    rib.push_back(24);
    rib.push_back(static_cast<char>(10 + i / 65536));
    rib.push_back(static_cast<char>((i / 256) % 256));
    rib.push_back(static_cast<char>(i % 256));
    PutU16(rib, 1);
    PutU16(rib, 0);  // peer index
    PutU32(rib, 1700000000);
    PutU16(rib, static_cast<uint16_t>(attributes.size()));
    rib += attributes;
    PutMrt(out, 2, rib);  // RIB_IPV4_UNICAST
  }
}

std::string Gobgp(int api_port, std::vector<std::string> args) {
  std::vector<std::string> argv = {"/usr/bin/gobgp", "-u", "127.0.0.1", "-p", std::to_string(api_port)};
  argv.insert(argv.end(), args.begin(), args.end());
  auto result = Check(sim::RunCommand(argv), "gobgp");
  if (result.exit_code != 0) Die("gobgp " + absl::StrJoin(args, " ") + ": " + result.output);
  return result.output;
}

}  // namespace

SenderSpans RunGobgp(const std::string& dir, const InjectionPath& path) {
  auto frr = StartReceiver(dir + "/frr", path, kGobgpAs);
  const int api_port = Check(sim::FreePort(SOCK_STREAM), "a free port for gobgpd's API");
  const std::string config = dir + "/gobgpd.toml";
  std::ofstream(config) << "[global.config]\n  as = " << kGobgpAs << "\n  router-id = \"" << path.sender_address
                        << "\"\n  port = -1\n"
                        << "[[neighbors]]\n  [neighbors.config]\n    neighbor-address = \"" << path.receiver_address
                        << "\"\n    peer-as = " << kFrrAs << "\n    admin-down = true\n"
                        << "  [neighbors.transport.config]\n    local-address = \"" << path.sender_address
                        << "\"\n    remote-port = " << frr->port() << "\n"
                        << "  [[neighbors.afi-safis]]\n    [neighbors.afi-safis.config]\n"
                        << "      afi-safi-name = \"ipv4-unicast\"\n";
  auto gobgpd = Check(sim::ChildProcess::Spawn({"/usr/bin/gobgpd", "-f", config, "--api-hosts",
                                                absl::StrCat("127.0.0.1:", api_port), "--pprof-disable", "-p"},
                                               dir + "/gobgpd.log"),
                      "start gobgpd");
  const std::string mrt = dir + "/rib.mrt";
  WriteMrt(mrt, kInjectPrefixes);
  const auto ready_deadline = Clock::now() + 20s;
  while (true) {
    auto result = sim::RunCommand({"/usr/bin/gobgp", "-u", "127.0.0.1", "-p", std::to_string(api_port), "global"});
    if (result.ok() && result->exit_code == 0) break;
    if (Clock::now() > ready_deadline) Die("gobgpd did not answer; see " + dir + "/gobgpd.log");
    std::this_thread::sleep_for(50ms);
  }
  Gobgp(api_port, {"mrt", "inject", "global", mrt});
  const std::string summary = Gobgp(api_port, {"global", "rib", "summary", "-a", "ipv4"});
  if (summary.find(absl::StrCat("Destination: ", kInjectPrefixes, ",")) == std::string::npos) {
    Die("gobgpd did not load all of the MRT file: " + summary);
  }
  Gobgp(api_port, {"neighbor", path.receiver_address, "enable"});
  SenderSpans spans;
  spans.inject_ms = TimeFromEstablishedToFull(*frr, path.sender_address);
  gobgpd->Stop(2000);
  return spans;
}

// ---- BIRD 2

namespace {

constexpr char kBirdc[] = "/usr/sbin/birdc";

// BIRD's config: the 100,000 prefixes as static routes (in BIRD's RIB before
// the session exists), exported to the receiver with `next_hop` set by the
// export filter (a static route's gateway must be on a connected network).
std::string BirdConfig(const std::string& dir, const InjectionPath& path, int local_port, int receiver_port,
                       const std::string& next_hop, bool session_disabled) {
  std::string config = absl::StrCat("router id ", path.sender_address, ";\n",
                                    "log \"", dir, "/bird.log\" { warning, error, fatal };\n",
                                    "protocol device { scan time 60; }\n",  // BIRD's view of the interfaces
                                    "filter to_receiver { bgp_next_hop = ", next_hop, "; accept; }\n",
                                    "protocol static plan {\n  ipv4;\n");
  for (int i = 0; i < kInjectPrefixes; ++i) absl::StrAppend(&config, "  route ", Prefix24(i), " blackhole;\n");
  absl::StrAppend(&config, "}\nprotocol bgp receiver {\n", session_disabled ? "  disabled;\n" : "",
                  "  local ", path.sender_address, " port ", local_port, " as ", kBirdAs, ";\n",
                  "  neighbor ", path.receiver_address, " port ", receiver_port, " as ", kFrrAs, ";\n",
                  "  ipv4 { import none; export filter to_receiver; };\n}\n");
  return config;
}

std::string Birdc(const std::string& socket, const std::string& command) {
  auto result = Check(sim::RunCommand({kBirdc, "-s", socket, command}), "birdc");
  if (result.exit_code != 0) Die("birdc " + command + ": " + result.output);
  return result.output;
}

}  // namespace

// Injects, then moves every prefix to kChangedNextHop (`birdc configure` with
// the export filter's next hop changed: BIRD re-reads its config and sends
// every route again) and withdraws them all (`birdc disable plan`).
SenderSpans RunBird(const std::string& dir, const InjectionPath& path) {
  std::filesystem::create_directories(dir);
  auto frr = StartReceiver(dir + "/frr", path, kBirdAs);
  const int local_port = Check(sim::FreePort(SOCK_STREAM, path.sender_address), "a free port for BIRD");
  const std::string config = dir + "/bird.conf", changed_config = dir + "/bird-changed.conf";
  const std::string socket = dir + "/bird.ctl";
  std::ofstream(config) << BirdConfig(dir, path, local_port, frr->port(), kFirstNextHop, true);
  std::ofstream(changed_config) << BirdConfig(dir, path, local_port, frr->port(), kChangedNextHop, false);
  auto bird = Check(sim::ChildProcess::Spawn({kBird, "-f", "-c", config, "-s", socket, "-P", dir + "/bird.pid"},
                                             dir + "/bird.out"),
                    "start BIRD");
  const std::string loaded = absl::StrCat(kInjectPrefixes, " of ", kInjectPrefixes, " routes");
  if (auto status = sim::WaitUntil("BIRD to hold the static routes", 60s, [&] {
        if (!bird->running()) return true;
        auto result = sim::RunCommand({kBirdc, "-s", socket, "show route count"});
        return result.ok() && result->exit_code == 0 && result->output.find(loaded) != std::string::npos;
      }, 20ms);
      !status.ok() || !bird->running()) {
    Die("BIRD did not load its routes; see " + dir + "/bird.out and bird.log");
  }
  Birdc(socket, "enable receiver");
  SenderSpans spans;
  spans.inject_ms = TimeFromEstablishedToFull(*frr, path.sender_address);
  auto start = Clock::now();
  Birdc(socket, "configure \"" + changed_config + "\"");
  spans.change_ms = TimeUntilAllVia(*frr, kChangedNextHop, start);
  start = Clock::now();
  Birdc(socket, "disable plan");
  spans.withdraw_ms = TimeUntilNone(*frr, path.sender_address, start);
  bird->Stop(2000);
  return spans;
}

// ---- FRR bgpd as the sender

// A second bgpd (no zebra) with the 100,000 prefixes as `network` statements
// (in its RIB before the session: the neighbor starts shut down), next hop
// set by an outbound route-map, `frr defaults datacenter` like the receiver;
// the change and the withdrawal are edits of that route-map.
SenderSpans RunFrrSender(const std::string& dir, const InjectionPath& path) {
  std::filesystem::create_directories(dir);
  auto frr = StartReceiver(dir + "/frr", path, kFrrSenderAs);
  // Route-map edits re-run no policy on their own (`delay-timer 0`: the
  // default re-runs it 5 s later); the bench's `clear ... soft out` does,
  // once, right after each edit.
  std::string config = absl::StrCat("frr defaults datacenter\nhostname sender\nlog stdout critical\n",
                                    "bgp route-map delay-timer 0\n",
                                    "route-map NEXT_HOP permit 10\n set ip next-hop ", kFirstNextHop, "\nexit\n",
                                    "router bgp ", kFrrSenderAs, "\n bgp router-id ", path.sender_address, "\n",
                                    " no bgp ebgp-requires-policy\n no bgp network import-check\n");
  const std::string& peer = path.receiver_address;
  absl::StrAppend(&config, " neighbor ", peer, " remote-as ", kFrrAs, "\n neighbor ", peer, " port ", frr->port(),
                  "\n neighbor ", peer, " update-source ", path.sender_address, "\n neighbor ", peer, " shutdown\n",
                  " address-family ipv4 unicast\n");
  for (int i = 0; i < kInjectPrefixes; ++i) absl::StrAppend(&config, "  network ", Prefix24(i), "\n");
  absl::StrAppend(&config, "  neighbor ", peer, " route-map NEXT_HOP out\n exit-address-family\n");
  std::ofstream(dir + "/bgpd.conf") << config;
  const int port = Check(sim::FreePort(SOCK_STREAM, path.sender_address), "a free port for the sending bgpd");
  auto bgpd = Check(sim::ChildProcess::Spawn({"/usr/lib/frr/bgpd", "-f", dir + "/bgpd.conf", "-i", dir + "/bgpd.pid",
                                              "-p", std::to_string(port), "-l", path.sender_address, "-Z", "-S", "-P",
                                              "0", "--vty_socket", dir},
                                             dir + "/bgpd.log"),
                    "start the sending bgpd");
  sim::FrrVty vty(dir + "/bgpd.vty");
  // Every network statement has been through best-path selection once the
  // table version counts them all.
  if (auto status = sim::WaitUntil("the sending bgpd to hold its networks", 60s, [&] {
        if (!bgpd->running()) return true;
        auto summary = vty.Command("show bgp ipv4 unicast summary json");
        if (!summary.ok()) return false;
        const size_t at = summary->find("\"tableVersion\":");
        return at != std::string::npos && std::strtoll(summary->c_str() + at + 15, nullptr, 10) >= kInjectPrefixes;
      }, 20ms);
      !status.ok() || !bgpd->running()) {
    Die("the sending bgpd did not load its networks; see " + dir + "/bgpd.log");
  }
  for (const std::string& command : {std::string("configure terminal"), absl::StrCat("router bgp ", kFrrSenderAs),
                                     absl::StrCat("no neighbor ", peer, " shutdown")}) {
    Check(vty.Command(command), "sending bgpd: " + command);
  }
  SenderSpans spans;
  spans.inject_ms = TimeFromEstablishedToFull(*frr, path.sender_address);
  // Change: the outbound route-map's next hop, then a soft reset out: bgpd
  // re-runs its outbound policy over every prefix and announces them again.
  auto start = Clock::now();
  // (The vty is still in `router bgp`: `end` leaves it.)
  for (const std::string& command : {std::string("end"), std::string("configure terminal"),
                                     std::string("route-map NEXT_HOP permit 10"),
                                     absl::StrCat("set ip next-hop ", kChangedNextHop), std::string("end"),
                                     absl::StrCat("clear bgp ipv4 unicast ", peer, " soft out")}) {
    Check(vty.Command(command), "sending bgpd: " + command);
  }
  spans.change_ms = TimeUntilAllVia(*frr, kChangedNextHop, start);
  // Withdraw: the outbound route-map denies everything (the session stays
  // up): bgpd withdraws every prefix it announced.
  start = Clock::now();
  for (const std::string& command : {std::string("end"), std::string("configure terminal"),
                                     std::string("no route-map NEXT_HOP permit 10"),
                                     std::string("route-map NEXT_HOP deny 10"), std::string("end"),
                                     absl::StrCat("clear bgp ipv4 unicast ", peer, " soft out")}) {
    Check(vty.Command(command), "sending bgpd: " + command);
  }
  spans.withdraw_ms = TimeUntilNone(*frr, path.sender_address, start);
  bgpd->Stop(2000);
  return spans;
}

// ---- the network

// One namespace ("gbgp-<run>-receiver") for the receiving FRR, joined to this
// one by a veth pair (NetnsBackbone's management link, 192.0.2.0/31: the
// senders' end 192.0.2.0, the receiver 192.0.2.1); removed with the returned
// object. Null, with `why`, when this process cannot make namespaces.
std::unique_ptr<sim::NetnsBackbone> MakeNetwork(std::string& why) {
  if (auto available = sim::NetnsBackbone::Available(); !available.ok()) {
    why = std::string(available.message());
    return nullptr;
  }
  topology::Topology topology;
  topology.facilities.emplace_back().set_id("receiver");
  auto network = sim::NetnsBackbone::Create(topology, {.name_prefix = "gbgp", .latency = sim::LinkLatency::kNone,
                                                       .management_network = true,
                                                       .management_pool_v4 = "192.0.2.0/24"});
  if (!network.ok()) {
    why = std::string(network.status().message());
    return nullptr;
  }
  return *std::move(network);
}

}  // namespace geodesic::bench
