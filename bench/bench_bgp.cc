// routerd's BGP path into a real FRR bgpd on loopback, measured in one run:
//
//   bgp_local_repair_10k   from a local link-down event (PlanInstaller::
//                          ApplyLinkEvents) to FRR having received every UPDATE
//                          that moves 10,000 prefixes to their backup next hop
//                          (its neighbor counters, polled through vtysh);
//                          reference: the same 10,000 prefixes pushed to FRR as
//                          a fresh plan on an established session. The issue's
//                          target is well under 50 ms. Median of kRepairTrials
//                          down events (each followed by an up event).
//   bgp_inject_100k        from the start of routerd's BGP speaker, holding
//                          100,000 IPv4 routes, to FRR holding all of them;
//                          reference: GoBGP (gobgpd, Debian) holding the same
//                          100,000 routes (injected from an MRT file beforehand),
//                          from enabling its neighbor to the same FRR state, on
//                          a fresh FRR of its own.
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
  config.paths.next_hops = {{"primary-a", {.ipv4 = IpAddress::Parse("10.255.0.1"), .ipv6 = std::nullopt}},
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
  return plan;
}

v1::LocalLinkEvents LinkEvent(bool down) {
  v1::LocalLinkEvents events;
  events.set_facility_id("bench");
  v1::LinkReport* report = events.add_links();
  report->set_link_id("primary-a");
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
  // Done when FRR has read every UPDATE routerd sent for the change and a
  // sample of prefixes (spread over the table, the last one included) shows
  // exactly the expected next hops as its valid best/multipath paths.
  std::vector<std::string> sample;
  for (int i = 0; i < kRepairPrefixes; i += kRepairPrefixes / 20) sample.push_back(Prefix24(i));
  sample.push_back(Prefix24(kRepairPrefixes - 1));
  auto shows = [&](const std::set<std::string>& next_hops) {
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
  auto frr_shows = [&](uint64_t frr_updates_before, uint64_t sent_before, Clock::time_point start,
                       const std::set<std::string>& next_hops) {
    const uint64_t target = frr_updates_before + (updates_sent() - sent_before);
    return WaitForFrr(*frr, kRouterdAddress, start,
                      [&](const auto& s) { return s.updates_received >= target && shows(next_hops); });
  };
  const std::set<std::string> primaries = {"10.255.0.1", "10.255.0.2"}, backup = {"10.255.0.3"};

  // Reference: the whole plan pushed to an established session.
  const uint64_t frr_before = Check(frr->Neighbor(kRouterdAddress), "FRR neighbor").updates_received;
  const uint64_t sent_before = updates_sent();
  const auto install_start = Clock::now();
  if (Check(installer->Offer(RepairPlan(kRepairPrefixes)), "install the plan") != routerd::PlanVerdict::kInstalled) {
    Die("the plan was not installed");
  }
  const double install_ms = frr_shows(frr_before, sent_before, install_start, primaries);

  std::vector<double> repairs;
  for (int trial = 0; trial < kRepairTrials; ++trial) {
    for (bool down : {true, false}) {
      const uint64_t frr_updates = Check(frr->Neighbor(kRouterdAddress), "FRR neighbor").updates_received;
      const uint64_t sent = updates_sent();
      const auto start = Clock::now();
      if (Check(installer->ApplyLinkEvents(LinkEvent(down)), "local repair") != static_cast<size_t>(kRepairPrefixes)) {
        Die("local repair did not move every prefix");
      }
      const double routerd_ms = MillisecondsSince(start);
      const double ms = frr_shows(frr_updates, sent, start, down ? backup : primaries);
      if (getenv("BENCH_BGP_VERBOSE")) {
        std::fprintf(stderr, "link %s: routerd done after %.1f ms, FRR shows it after %.1f ms\n",
                     down ? "down" : "up", routerd_ms, ms);
      }
      if (down) repairs.push_back(ms);
    }
  }
  // Not timed: after one more repair, every prefix of FRR's table is on the backup only.
  const uint64_t frr_updates = Check(frr->Neighbor(kRouterdAddress), "FRR neighbor").updates_received;
  const uint64_t sent = updates_sent();
  Check(installer->ApplyLinkEvents(LinkEvent(true)), "local repair");
  frr_shows(frr_updates, sent, Clock::now(), backup);
  std::this_thread::sleep_for(200ms);
  const auto routes = Check(frr->Routes(false), "FRR routes");
  size_t on_backup = 0;
  for (const auto& [prefix, paths] : routes) {
    on_backup += paths.size() == 1 && paths[0].next_hop == "10.255.0.3" && paths[0].valid;
  }
  if (on_backup != static_cast<size_t>(kRepairPrefixes)) {
    Die(absl::StrCat("after local repair FRR has ", on_backup, " of ", kRepairPrefixes, " prefixes on the backup"));
  }
  PrintResult("bgp_local_repair_10k", Median(repairs), "full_plan_install", install_ms, "ms", 1);
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
  for (int i = 0; i < prefixes; ++i) {
    std::string rib;
    PutU32(rib, static_cast<uint32_t>(i));
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

int FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in sin{};
  sin.sin_family = AF_INET;
  sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof sin;
  bind(fd, reinterpret_cast<sockaddr*>(&sin), sizeof sin);
  getsockname(fd, reinterpret_cast<sockaddr*>(&sin), &length);
  close(fd);
  return ntohs(sin.sin_port);
}

std::string Gobgp(int api_port, std::vector<std::string> args) {
  std::vector<std::string> argv = {"/usr/bin/gobgp", "-u", "127.0.0.1", "-p", std::to_string(api_port)};
  argv.insert(argv.end(), args.begin(), args.end());
  auto result = Check(sim::RunCommand(argv), "gobgp");
  if (result.exit_code != 0) Die("gobgp " + absl::StrJoin(args, " ") + ": " + result.output);
  return result.output;
}

double InjectWithGobgp(const std::string& dir) {
  auto frr = StartFrr(dir + "/frr-gobgp", kGobgpAddress, kGobgpAs);
  const int api_port = FreePort();
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
  const std::string loaded = absl::StrCat("Destination: ", kInjectPrefixes);
  for (std::string summary;;) {
    summary = Gobgp(api_port, {"global", "rib", "summary", "-a", "ipv4"});
    if (summary.find(loaded) != std::string::npos) break;
    if (Clock::now() > ready_deadline + 60s) Die("gobgpd did not load the MRT file: " + summary);
    std::this_thread::sleep_for(100ms);
  }
  const auto start = Clock::now();
  Gobgp(api_port, {"neighbor", "127.0.0.1", "enable"});
  const double ms = WaitForFrr(*frr, kGobgpAddress, start,
                               [](const auto& s) { return s.prefixes_received >= kInjectPrefixes; });
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
  const auto start = Clock::now();
  auto speaker = BgpSpeaker::Start(SpeakerConfigFor(*frr));
  if (auto status = speaker->Apply(diff); !status.ok()) Die("apply: " + status.ToString());
  return WaitForFrr(*frr, kRouterdAddress, start,
                    [](const auto& s) { return s.prefixes_received >= kInjectPrefixes; });
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
  bench::BenchLocalRepair(dir.path());
  const double gobgp_ms = bench::InjectWithGobgp(dir.path());
  const double routerd_ms = bench::InjectWithRouterd(dir.path());
  bench::PrintResult("bgp_inject_100k", routerd_ms, "gobgp", gobgp_ms, "ms", 0);
  return 0;
}
