// routerd's BGP path into a real FRR bgpd on loopback, measured in one run:
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
//   bgp_inject_100k        routerd's BGP speaker holding 100,000 IPv4 routes:
//                          from its session to FRR reaching Established to FRR
//                          holding all of them; reference: GoBGP (gobgpd,
//                          Debian) holding the same 100,000 routes (injected
//                          from an MRT file beforehand), the same span, into a
//                          fresh FRR of its own.
//
// Both sides of each line talk to the same FRR build with the same config, and
// the polling (vtysh every few ms) is the same, so its granularity cancels out.
// Prints one line per result:
//   BENCH <name>: ours=<value><unit> <reference>=<value><unit> ratio=<ours/reference>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <cstdio>
#include <fstream>
#include <set>
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

namespace geodesic::bench {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;
using routerd::bgp::BgpSpeaker;
using routerd::bgp::IpAddress;

constexpr uint32_t kFrrAs = 65000, kRouterdAs = 65001, kGobgpAs = 65002;
constexpr char kRouterdAddress[] = "127.0.0.2";
constexpr char kGobgpAddress[] = "127.0.0.3";
constexpr int kRepairPrefixes = 10'000;
constexpr int kInjectPrefixes = 100'000;
constexpr int kRepairTrials = 5;
constexpr char kLonePrefix[] = "172.16.0.0/24";

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "bench_bgp: %s\n", what.c_str());
  std::exit(1);
}

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

routerd::bgp::SpeakerConfig SpeakerConfigFor(const sim::FrrRouter& frr) {
  routerd::bgp::SpeakerConfig config;
  config.session = {.local_as = kRouterdAs, .router_id = 0x7f000002, .graceful_restart_s = 120,
                    .restarting = false, .connect_retry_min = 50ms, .connect_retry_max = 500ms};
  config.peers = {{.address = *IpAddress::Parse("127.0.0.1"), .port = static_cast<uint16_t>(frr.port()),
                   .remote_as = kFrrAs, .local_address = IpAddress::Parse(kRouterdAddress), .password = "",
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
  auto speaker = BgpSpeaker::Start(SpeakerConfigFor(*frr));
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

// ---- 100k injection: routerd against GoBGP --------------------------------

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

// An MRT RIB dump of `prefixes` /24s, ORIGIN IGP, empty AS_PATH, one next hop.
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

// From the session reaching Established (as FRR sees it) to FRR holding every
// route: connection set-up and retry timers are each speaker's own business.
double TimeFromEstablishedToFull(const sim::FrrRouter& frr, const std::string& neighbor) {
  WaitForFrr(frr, neighbor, Clock::now(), [](const auto& s) { return s.state == "Established"; });
  const auto established = Clock::now();
  return WaitForFrr(frr, neighbor, established,
                    [](const auto& s) { return s.prefixes_received >= static_cast<uint64_t>(kInjectPrefixes); });
}

double InjectWithGobgp(const std::string& dir) {
  auto frr = StartFrr(dir + "/frr-gobgp", kGobgpAddress, kGobgpAs);
  const int api_port = Check(sim::FreePort(SOCK_STREAM), "a free port for gobgpd's API");
  const std::string config = dir + "/gobgpd.toml";
  std::ofstream(config) << "[global.config]\n  as = " << kGobgpAs << "\n  router-id = \"" << kGobgpAddress
                        << "\"\n  port = -1\n"
                        << "[[neighbors]]\n  [neighbors.config]\n    neighbor-address = \"127.0.0.1\"\n    peer-as = "
                        << kFrrAs << "\n    admin-down = true\n"
                        << "  [neighbors.transport.config]\n    local-address = \"" << kGobgpAddress
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
  Gobgp(api_port, {"neighbor", "127.0.0.1", "enable"});
  const double ms = TimeFromEstablishedToFull(*frr, kGobgpAddress);
  gobgpd->Stop(2000);
  return ms;
}

double InjectWithRouterd(const std::string& dir) {
  auto frr = StartFrr(dir + "/frr-routerd", kRouterdAddress, kRouterdAs);
  routerd::RibDiff diff;
  diff.added.reserve(kInjectPrefixes);
  for (int i = 0; i < kInjectPrefixes; ++i) {
    v1::Route& route = diff.added.emplace_back();
    route.set_prefix(Prefix24(i));
    v1::NextHop* hop = route.add_next_hops();
    hop->set_link_id("primary-a");
    hop->set_weight(1);
  }
  auto speaker = BgpSpeaker::Start(SpeakerConfigFor(*frr));
  if (auto status = speaker->Apply(diff); !status.ok()) Die("apply: " + status.ToString());
  return TimeFromEstablishedToFull(*frr, kRouterdAddress);
}

}  // namespace
}  // namespace geodesic::bench

int main() {
  using namespace geodesic;
  if (auto status = sim::FrrAvailable(); !status.ok()) {
    std::fprintf(stderr, "bench_bgp: %s\n", std::string(status.message()).c_str());
    return 1;
  }
  bench::ScratchDir dir("bench_bgp");
  if (getenv("BENCH_BGP_VERBOSE")) std::fprintf(stderr, "work dir %s\n", dir.path().c_str());
  bench::BenchLocalRepair(dir.path());
  const double gobgp_ms = bench::InjectWithGobgp(dir.path());
  const double routerd_ms = bench::InjectWithRouterd(dir.path());
  bench::PrintResult("bgp_inject_100k", routerd_ms, "gobgp", gobgp_ms, "ms", 0);
  return 0;
}
