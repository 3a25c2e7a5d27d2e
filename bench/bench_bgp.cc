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
//   bgp_change_all_100k_vs_frr, bgp_withdraw_100k_vs_frr
//                          the same two against the FRR sender: its outbound
//                          route-map's next hop changed, then the route-map
//                          denying every prefix (vtysh edits, each followed
//                          by `clear bgp ... soft out`; the session stays up).
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
// The receiver and the other senders are in bgp_senders.h.
//
// Every line talks to the same FRR build with the same config (a fresh one per
// sender and trial), and the polling (its vty every millisecond, the same
// query for both sides of a line) is the same, so its granularity cancels out.
// Prints one line per result:
//   BENCH <name>: ours=<value><unit> <reference>=<value><unit> ratio=<ours/reference>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "bench/bench_report.h"
#include "bench/bgp_senders.h"
#include "bench/scratch_dir.h"
#include "routerd/bgp/message.h"
#include "routerd/bgp/speaker.h"
#include "routerd/plan_installer.h"
#include "sim/frr_router.h"
#include "sim/netns/netns_backbone.h"
#include "site_plan/site_plan_writer.h"

namespace geodesic::bench {
namespace {

using namespace std::chrono_literals;
using routerd::bgp::BgpSpeaker;
using routerd::bgp::IpAddress;

constexpr char kRouterdAddress[] = "127.0.0.2";
constexpr int kRepairPrefixes = 10'000;
constexpr int kRepairTrials = 5;
constexpr int kInjectTrials = 3;
constexpr char kLonePrefix[] = "172.16.0.0/24";

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
  site_plan::SitePlanWriter writer(&plan);
  auto hop = [](const char* link) {
    v1::NextHop next;
    next.set_link_id(link);
    next.set_weight(1);
    return next;
  };
  auto link_failure = [](const char* link) {
    v1::FailureScope failure;
    failure.set_kind(v1::FAILURE_KIND_LINK);
    failure.set_id(link);
    return failure;
  };
  // Each route wholly on primary-a: routerd keeps a route's surviving next
  // hops and takes the backup only when none survives, which is what this
  // measures.
  for (int i = 0; i < prefixes; ++i) {
    v1::Route& route = writer.AddRoute(Prefix24(i), "elsewhere", {hop("primary-a")}, {}, 0);
    writer.AddBackup(route, link_failure("primary-a"), {hop("backup")}, {}, 0);
  }
  // The reference: one prefix alone on its link.
  v1::Route& lone = writer.AddRoute(kLonePrefix, "elsewhere", {hop("lone")}, {}, 0);
  writer.AddBackup(lone, link_failure("lone"), {hop("backup")}, {}, 0);
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
  const std::set<std::string> primaries = {"10.255.0.1"}, backup = {"10.255.0.3"};

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
// ---- 100k injection, change and withdrawal: routerd (the others: bgp_senders.h)

routerd::RibDiff AddAll(const std::string& link) {
  routerd::RibDiff diff;
  diff.added.reserve(kInjectPrefixes);
  for (int i = 0; i < kInjectPrefixes; ++i) {
    v1::ForwardingRoute& route = diff.added.emplace_back();
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
  for (const v1::ForwardingRoute& route : AddAll("primary-b").added) {
    changed.changed.push_back({.before = v1::ForwardingRoute(), .after = route});
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
    if (network) {
      bench::PrintResult("bgp_change_all_100k_vs_frr", median(routerd, &Spans::change_ms), "frr",
                         median(frr, &Spans::change_ms), "ms", 0);
      bench::PrintResult("bgp_withdraw_100k_vs_frr", median(routerd, &Spans::withdraw_ms), "frr",
                         median(frr, &Spans::withdraw_ms), "ms", 0);
    }
  } catch (const bench::BenchFailure& failure) {
    // Unwound: every daemon stopped, the namespace and the scratch directory removed.
    std::fprintf(stderr, "bench_bgp: %s\n", failure.what());
    return 1;
  }
  return 0;
}
