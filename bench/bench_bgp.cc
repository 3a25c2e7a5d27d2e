// routerd's BGP path into a real FRR bgpd, measured in one run:
//
//   bgp_local_repair_10k   from a local link-down event (PlanInstaller::
//                          ApplyLinkEvents) to FRR showing the backup next hop
//                          as the only valid path of 10,000 prefixes (a sample
//                          spread over the table, after FRR has read every
//                          UPDATE routerd sent); reference: the same 10,000
//                          prefixes installed as a fresh plan, the same way.
//   bgp_local_repair_10k_vs_target
//                          the same against the target of 50 ms.
//   bgp_local_repair_10k_sent
//                          from the event to routerd having written the last
//                          UPDATE of the repair; reference: the same for a
//                          link that carries a single prefix.
//                          Medians of kRepairTrials down events (each followed
//                          by an up event). FRR runs without zebra, its log at
//                          "critical" (see sim/frr_router.cc).
//   bgp_inject_100k        routerd's BGP speaker holding 100,000 IPv4 routes
//                          (applied before the receiver starts, so they are in
//                          its RIB before the session can come up): from its
//                          session to FRR reaching Established to FRR
//                          holding all of them; reference: GoBGP (gobgpd,
//                          Debian) holding the same 100,000 routes (injected
//                          from an MRT file beforehand), the same span, into a
//                          fresh FRR of its own.
//   bgp_inject_100k_vs_bird
//                          the same against BIRD 2 (bird2, Debian): the
//                          prefixes are static routes of its config, in its RIB
//                          before its BGP protocol is enabled.
//   bgp_inject_100k_vs_frr the same against a second FRR bgpd as the sender:
//                          the prefixes are `network` statements of its config
//                          (no zebra, `no bgp network import-check`), in its
//                          RIB before its neighbor is taken out of shutdown.
//   bgp_change_all_100k_vs_bird
//                          every prefix's next hop changes (10.255.0.1 ->
//                          10.255.0.2): from the bench telling the sender to
//                          the receiving FRR's next-hop cache counting all
//                          100,000 paths on the new next hop. routerd: Apply
//                          of the RibDiff (100,000 changed routes, built from
//                          the plan's protobufs). BIRD: `birdc configure` with
//                          its export filter's next hop changed (BIRD re-reads
//                          its 100,000-route config and exports every route
//                          again; a static route's own gateway would have to be
//                          on a connected network).
//   bgp_withdraw_100k_vs_bird
//                          every prefix withdrawn: from the bench telling the
//                          sender (routerd: Apply of 100,000 removed routes;
//                          BIRD: `birdc disable plan`, its static protocol) to
//                          the receiving FRR holding none from it.
//                          Each inject/change/withdraw figure is the median of
//                          kInjectTrials runs, the senders interleaved.
//
// The path: BIRD will not peer over 127/8, so the bench makes a network
// namespace for the receiving FRR ("gbgp-<pid>x<hex>-receiver", a veth pair
// 192.0.2.0/31 to this namespace: NetnsBackbone's management link) and every
// sender, routerd included, reaches it from this namespace over that veth;
// the namespace and every daemon go when the bench ends, also on failure.
// Without root (or when namespaces cannot be made) it says why, measures
// routerd and GoBGP over loopback and prints no BIRD or FRR-sender line.
// What still differs between senders: routerd announces with ADD-PATH
// (the receiver offers to receive it: 4 more bytes per prefix) and a
// link-bandwidth extended community; the others send plain paths, next hop
// 10.255.0.1, one attribute set for all. All of them pack many prefixes per
// UPDATE. The FRR sender runs `frr defaults datacenter`, like the receiver.
//
// Every line talks to the same FRR build with the same config (a fresh one per
// sender and trial), and the polling (its vty every millisecond, the same
// query for both sides of a line) is the same, so its granularity cancels out.
// Prints one line per result:
//   BENCH <name>: ours=<value><unit> <reference>=<value><unit> ratio=<ours/reference>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "bench/bench_report.h"
#include "bench/scratch_dir.h"
#include "routerd/bgp/message.h"
#include "routerd/bgp/speaker.h"
#include "routerd/plan_installer.h"
#include "sim/frr_router.h"
#include "sim/frr_vty.h"
#include "sim/netns/netns_backbone.h"
#include "sim/wait_until.h"
#include "topology/inventory.h"

namespace geodesic::bench {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;
using routerd::bgp::BgpSpeaker;
using routerd::bgp::IpAddress;

constexpr uint32_t kFrrAs = 65000, kRouterdAs = 65001, kGobgpAs = 65002;
constexpr char kRouterdAddress[] = "127.0.0.2";
constexpr int kRepairPrefixes = 10'000;
constexpr int kInjectPrefixes = 100'000;
constexpr int kRepairTrials = 5;
constexpr char kLonePrefix[] = "172.16.0.0/24";

// Thrown by Die and caught in main, so that unwinding stops every daemon and
// removes the network namespace and the scratch directory.
struct BenchFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

[[noreturn]] void Die(const std::string& what) { throw BenchFailure(what); }

template <typename T>
T Check(absl::StatusOr<T> value, const std::string& what) {
  if (!value.ok()) Die(what + ": " + value.status().ToString());
  return *std::move(value);
}

std::string Prefix24(int i) {
  return absl::StrCat(10 + i / 65536, ".", (i / 256) % 256, ".", i % 256, ".0/24");
}

double MillisecondsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// Polls FRR until `done(neighbor state)` or 120 s; the milliseconds since `start`.
double WaitForFrr(const sim::FrrRouter& frr, const std::string& neighbor, Clock::time_point start,
                  const std::function<bool(const sim::FrrNeighborState&)>& done) {
  while (MillisecondsSince(start) < 120'000) {
    auto state = frr.Neighbor(neighbor);
    if (state.ok() && done(*state)) return MillisecondsSince(start);
    std::this_thread::sleep_for(1ms);
  }
  Die("FRR did not get there in 120 s; see its log under " + neighbor);
}

std::unique_ptr<sim::FrrRouter> StartFrr(const std::string& dir, const std::string& neighbor, uint32_t as) {
  return Check(sim::FrrRouter::Start({.work_dir = dir, .local_as = kFrrAs, .address = "127.0.0.1",
                                      .neighbors = {{.address = neighbor, .remote_as = as, .password = ""}},
                                      .stalepath_time_s = 360}),
               "start FRR");
}

routerd::bgp::SpeakerConfig SpeakerConfigFor(const std::string& address, int port, const std::string& local_address) {
  routerd::bgp::SpeakerConfig config;
  config.session = {.local_as = kRouterdAs, .router_id = 0x7f000002, .graceful_restart_s = 120,
                    .restarting = false, .connect_retry_min = 50ms, .connect_retry_max = 500ms};
  config.peers = {{.address = *IpAddress::Parse(address), .port = static_cast<uint16_t>(port),
                   .remote_as = kFrrAs, .local_address = IpAddress::Parse(local_address), .password = "",
                   .max_prefixes = 1000, .hold_time_s = 90, .ttl_security = false}};
  config.paths.local_as = kRouterdAs;
  config.paths.bandwidth_per_weight_mbps = 1000;
  config.paths.next_hops = {{"lone", {.ipv4 = IpAddress::Parse("10.255.0.4"), .ipv6 = std::nullopt}},
                            {"primary-a", {.ipv4 = IpAddress::Parse("10.255.0.1"), .ipv6 = std::nullopt}},
                            {"primary-b", {.ipv4 = IpAddress::Parse("10.255.0.2"), .ipv6 = std::nullopt}},
                            {"backup", {.ipv4 = IpAddress::Parse("10.255.0.3"), .ipv6 = std::nullopt}}};
  return config;
}

// ---- local repair ---------------------------------------------------------

// Forwards to the speaker; lets the bench keep a pointer to it.
class SpeakerInstaller final : public routerd::RouteInstaller {
 public:
  explicit SpeakerInstaller(BgpSpeaker* speaker) : speaker_(speaker) {}
  absl::Status Apply(const routerd::RibDiff& diff) override { return speaker_->Apply(diff); }

 private:
  BgpSpeaker* speaker_;
};

v1::SitePlan RepairPlan(int prefixes) {
  v1::SitePlan plan;
  plan.set_facility_id("bench");
  plan.set_epoch(1);
  plan.set_generation(1);
  for (int i = 0; i < prefixes; ++i) {
    v1::Route* route = plan.add_routes();
    route->set_prefix(Prefix24(i));
    for (const char* link : {"primary-a", "primary-b"}) {
      v1::NextHop* hop = route->add_next_hops();
      hop->set_link_id(link);
      hop->set_weight(1);
    }
    v1::Backup* backup = route->add_backups();
    backup->mutable_protects()->set_kind(v1::FAILURE_KIND_LINK);
    backup->mutable_protects()->set_id("primary-a");
    v1::NextHop* hop = backup->add_next_hops();
    hop->set_link_id("backup");
    hop->set_weight(1);
  }
  // The reference: one prefix alone on its link.
  v1::Route* lone = plan.add_routes();
  lone->set_prefix(kLonePrefix);
  v1::NextHop* hop = lone->add_next_hops();
  hop->set_link_id("lone");
  hop->set_weight(1);
  v1::Backup* backup = lone->add_backups();
  backup->mutable_protects()->set_kind(v1::FAILURE_KIND_LINK);
  backup->mutable_protects()->set_id("lone");
  v1::NextHop* backup_hop = backup->add_next_hops();
  backup_hop->set_link_id("backup");
  backup_hop->set_weight(1);
  return plan;
}

v1::LocalLinkEvents LinkEvent(const std::string& link, bool down) {
  v1::LocalLinkEvents events;
  events.set_facility_id("bench");
  v1::LinkReport* report = events.add_links();
  report->set_link_id(link);
  report->mutable_health()->set_state(down ? v1::OPER_STATE_DOWN : v1::OPER_STATE_UP);
  return events;
}

void BenchLocalRepair(const std::string& dir) {
  auto frr = StartFrr(dir + "/frr-repair", kRouterdAddress, kRouterdAs);
  auto speaker = BgpSpeaker::Start(SpeakerConfigFor(frr->address(), frr->port(), kRouterdAddress));
  auto installer = Check(routerd::PlanInstaller::Open("bench", dir + "/routerd-state",
                                                      std::make_unique<SpeakerInstaller>(speaker.get())),
                         "open the plan installer");
  WaitForFrr(*frr, kRouterdAddress, Clock::now(), [](const auto& s) { return s.state == "Established"; });
  auto updates_sent = [&] { return speaker->Status().at(0).updates_sent; };
  // True when each prefix of `sample` has exactly `next_hops` as its valid
  // best/multipath paths.
  auto shows = [&](const std::vector<std::string>& sample, const std::set<std::string>& next_hops) {
    for (const std::string& prefix : sample) {
      auto paths = frr->Prefix(prefix);
      if (!paths.ok()) return false;
      std::set<std::string> seen;
      for (const sim::FrrPath& path : *paths) {
        if (path.valid && (path.best || path.multipath)) seen.insert(path.next_hop);
      }
      if (seen != next_hops) return false;
    }
    return true;
  };
  struct Timing {
    double sent_ms;   // routerd wrote the last UPDATE
    double shown_ms;  // FRR shows the result
  };
  // Applies `change` and waits until FRR has read every UPDATE it caused and
  // `sample` shows `next_hops`.
  auto timed = [&](const std::function<size_t()>& change, const std::vector<std::string>& sample,
                   const std::set<std::string>& next_hops, size_t expected_changes) {
    const uint64_t frr_before = Check(frr->Neighbor(kRouterdAddress), "FRR neighbor").updates_received;
    const uint64_t sent_before = updates_sent();
    const auto start = Clock::now();
    if (const size_t changed = change(); changed != expected_changes) {
      Die(absl::StrCat("the change moved ", changed, " prefixes, not ", expected_changes));
    }
    Timing timing{.sent_ms = MillisecondsSince(start), .shown_ms = 0};
    const uint64_t target = frr_before + (updates_sent() - sent_before);
    timing.shown_ms = WaitForFrr(*frr, kRouterdAddress, start, [&](const auto& s) {
      return s.updates_received >= target && shows(sample, next_hops);
    });
    return timing;
  };
  std::vector<std::string> sample;
  for (int i = 0; i < kRepairPrefixes; i += kRepairPrefixes / 20) sample.push_back(Prefix24(i));
  sample.push_back(Prefix24(kRepairPrefixes - 1));
  const std::set<std::string> primaries = {"10.255.0.1", "10.255.0.2"}, backup = {"10.255.0.3"};

  const Timing install = timed([&] { return Check(installer->Offer(RepairPlan(kRepairPrefixes)), "install the plan") ==
                             routerd::PlanVerdict::kInstalled
                         ? kRepairPrefixes + 1
                         : 0; },
        sample, primaries, kRepairPrefixes + 1);
  auto repair = [&](const std::string& link, bool down) {
    return [&, link, down] { return Check(installer->ApplyLinkEvents(LinkEvent(link, down)), "local repair"); };
  };
  std::vector<double> shown, sent, lone_sent;
  const bool verbose = getenv("BENCH_BGP_VERBOSE") != nullptr;
  for (int trial = 0; trial < kRepairTrials; ++trial) {
    const Timing lone_down = timed(repair("lone", true), {kLonePrefix}, backup, 1);
    timed(repair("lone", false), {kLonePrefix}, {"10.255.0.4"}, 1);
    const Timing down = timed(repair("primary-a", true), sample, backup, kRepairPrefixes);
    const Timing up = timed(repair("primary-a", false), sample, primaries, kRepairPrefixes);
    if (verbose) {
      std::fprintf(stderr, "1 prefix: FRR shows it after %.1f ms; 10k down: sent %.1f ms, shown %.1f ms; up: %.1f, %.1f ms\n",
                   lone_down.shown_ms, down.sent_ms, down.shown_ms, up.sent_ms, up.shown_ms);
    }
    lone_sent.push_back(lone_down.sent_ms);
    shown.push_back(down.shown_ms);
    sent.push_back(down.sent_ms);
  }
  // Not timed: after one more repair, every prefix of the link is on the backup only.
  timed(repair("primary-a", true), sample, backup, kRepairPrefixes);
  std::this_thread::sleep_for(200ms);
  const auto routes = Check(frr->Routes(false), "FRR routes");
  size_t on_backup = 0;
  for (const auto& [prefix, paths] : routes) {
    on_backup += prefix != kLonePrefix && paths.size() == 1 && paths[0].next_hop == "10.255.0.3" && paths[0].valid;
  }
  if (on_backup != static_cast<size_t>(kRepairPrefixes)) {
    Die(absl::StrCat("after local repair FRR has ", on_backup, " of ", kRepairPrefixes, " prefixes on the backup"));
  }
  PrintResult("bgp_local_repair_10k", Median(shown), "full_plan_install", install.shown_ms, "ms", 1);
  PrintResult("bgp_local_repair_10k_vs_target", Median(shown), "target", 50, "ms", 1);
  PrintResult("bgp_local_repair_10k_sent", Median(sent), "one_prefix", Median(lone_sent), "ms", 1);
}

// ---- 100k injection, change and withdrawal: routerd against GoBGP, BIRD, FRR

// Where the senders reach the receiving FRR: over a veth pair into a network
// namespace the bench makes (every sender in this namespace, the receiver
// alone in its own), or, where namespaces cannot be made, over loopback.
struct InjectionPath {
  std::string receiver_address;   // FRR listens here
  std::string sender_address;     // every sender's local address
  std::string network_namespace;  // the receiver's; empty: loopback
};

constexpr uint32_t kBirdAs = 65003, kFrrSenderAs = 65004;
constexpr char kFirstNextHop[] = "10.255.0.1", kChangedNextHop[] = "10.255.0.2";
constexpr int kInjectTrials = 3;

// What one sender took, each from its own start event to the receiver
// holding the result (negative: not measured).
struct SenderSpans {
  double inject_ms = -1;    // session Established -> all 100,000 accepted
  double change_ms = -1;    // the sender told to move every prefix -> all on the new next hop
  double withdraw_ms = -1;  // the sender told to withdraw every prefix -> none accepted
};

// The receiving FRR's port: chosen before it starts, so a sender can be told it first.
int ReceiverPort(const InjectionPath& path) {
  if (!path.network_namespace.empty()) return 179;
  return Check(sim::FreePort(SOCK_STREAM, path.receiver_address), "a free port for the receiving FRR");
}

std::unique_ptr<sim::FrrRouter> StartReceiver(const std::string& dir, const InjectionPath& path, uint32_t sender_as,
                                              int port = 0) {
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

// -- GoBGP

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

// -- routerd

routerd::RibDiff AddAll(const std::string& link) {
  routerd::RibDiff diff;
  diff.added.reserve(kInjectPrefixes);
  for (int i = 0; i < kInjectPrefixes; ++i) {
    v1::Route& route = diff.added.emplace_back();
    route.set_prefix(Prefix24(i));
    v1::NextHop* hop = route.add_next_hops();
    hop->set_link_id(link);
    hop->set_weight(1);
  }
  return diff;
}

// Injects the 100,000 routes; with `all`, then moves every one from
// primary-a (10.255.0.1) to primary-b (10.255.0.2) and withdraws them all,
// as routerd does when a plan says so (BgpSpeaker::Apply of the RibDiff).
SenderSpans RunRouterd(const std::string& dir, const InjectionPath& path, bool all) {
  routerd::RibDiff added = AddAll("primary-a");
  routerd::RibDiff changed, removed;
  changed.changed.reserve(kInjectPrefixes);
  for (const v1::Route& route : AddAll("primary-b").added) {
    changed.changed.push_back({.before = v1::Route(), .after = route});
  }
  removed.removed = AddAll("primary-b").added;
  // The routes are in the speaker before its session can come up: the
  // receiver starts after Apply (routerd retries its connection meanwhile).
  const int port = ReceiverPort(path);
  auto speaker = BgpSpeaker::Start(SpeakerConfigFor(path.receiver_address, port, path.sender_address));
  if (auto status = speaker->Apply(added); !status.ok()) Die("apply: " + status.ToString());
  auto frr = StartReceiver(dir + "/frr", path, kRouterdAs, port);
  SenderSpans spans;
  spans.inject_ms = TimeFromEstablishedToFull(*frr, path.sender_address);
  if (!all) return spans;
  auto start = Clock::now();
  if (auto status = speaker->Apply(changed); !status.ok()) Die("apply the change: " + status.ToString());
  spans.change_ms = TimeUntilAllVia(*frr, kChangedNextHop, start);
  start = Clock::now();
  if (auto status = speaker->Apply(removed); !status.ok()) Die("apply the withdrawal: " + status.ToString());
  spans.withdraw_ms = TimeUntilNone(*frr, path.sender_address, start);
  return spans;
}

// -- BIRD 2

constexpr char kBird[] = "/usr/sbin/bird";
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

// -- FRR bgpd as the sender

// A second bgpd (no zebra) with the 100,000 prefixes as `network` statements
// (in its RIB before the session: the neighbor starts shut down), next hop
// set by an outbound route-map, `frr defaults datacenter` like the receiver.
SenderSpans RunFrrSender(const std::string& dir, const InjectionPath& path) {
  std::filesystem::create_directories(dir);
  auto frr = StartReceiver(dir + "/frr", path, kFrrSenderAs);
  std::string config = absl::StrCat("frr defaults datacenter\nhostname sender\nlog stdout critical\n",
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
  bgpd->Stop(2000);
  return spans;
}

// -- the network

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

}  // namespace
}  // namespace geodesic::bench

int main() {
  using namespace geodesic;
  if (auto status = sim::FrrAvailable(); !status.ok()) {
    std::fprintf(stderr, "bench_bgp: %s\n", std::string(status.message()).c_str());
    return 1;
  }
  try {
    bench::ScratchDir dir("bench_bgp");
    if (getenv("BENCH_BGP_VERBOSE")) std::fprintf(stderr, "work dir %s\n", dir.path().c_str());
    bench::BenchLocalRepair(dir.path());
    std::string why;
    const auto network = bench::MakeNetwork(why);
    bench::InjectionPath path{.receiver_address = "127.0.0.1", .sender_address = bench::kRouterdAddress,
                              .network_namespace = ""};
    if (network) {
      const sim::NetnsFacility& receiver = network->facilities().front();
      path = {.receiver_address = receiver.management_address, .sender_address = receiver.management_host_address,
              .network_namespace = receiver.namespace_name};
    } else {
      std::fprintf(stderr, "bench_bgp: no network namespace (%s): routerd and GoBGP over loopback; "
                           "no BIRD or FRR-sender lines\n", why.c_str());
    }
    const bool bird = network && access(bench::kBird, X_OK) == 0;
    if (network && !bird) std::fprintf(stderr, "bench_bgp: %s is missing (Debian's bird2): no BIRD lines\n", bench::kBird);
    std::vector<bench::SenderSpans> routerd, gobgp, bird_spans, frr;
    for (int trial = 0; trial < bench::kInjectTrials; ++trial) {
      const std::string trial_dir = absl::StrCat(dir.path(), "/trial-", trial);
      gobgp.push_back(bench::RunGobgp(trial_dir + "/gobgp", path));
      routerd.push_back(bench::RunRouterd(trial_dir + "/routerd", path, bird));
      if (bird) bird_spans.push_back(bench::RunBird(trial_dir + "/bird", path));
      if (network) frr.push_back(bench::RunFrrSender(trial_dir + "/frr-sender", path));
    }
    auto median = [](const std::vector<bench::SenderSpans>& runs, double bench::SenderSpans::*span) {
      std::vector<double> values;
      for (const auto& run : runs) values.push_back(run.*span);
      return bench::Median(values);
    };
    using Spans = bench::SenderSpans;
    const double inject = median(routerd, &Spans::inject_ms);
    bench::PrintResult("bgp_inject_100k", inject, "gobgp", median(gobgp, &Spans::inject_ms), "ms", 0);
    if (bird) {
      bench::PrintResult("bgp_inject_100k_vs_bird", inject, "bird", median(bird_spans, &Spans::inject_ms), "ms", 0);
    }
    if (network) bench::PrintResult("bgp_inject_100k_vs_frr", inject, "frr", median(frr, &Spans::inject_ms), "ms", 0);
    if (bird) {
      bench::PrintResult("bgp_change_all_100k_vs_bird", median(routerd, &Spans::change_ms), "bird",
                         median(bird_spans, &Spans::change_ms), "ms", 0);
      bench::PrintResult("bgp_withdraw_100k_vs_bird", median(routerd, &Spans::withdraw_ms), "bird",
                         median(bird_spans, &Spans::withdraw_ms), "ms", 0);
    }
  } catch (const bench::BenchFailure& failure) {
    // Unwound: every daemon stopped, the namespace and the scratch directory removed.
    std::fprintf(stderr, "bench_bgp: %s\n", failure.what());
    return 1;
  }
  return 0;
}
