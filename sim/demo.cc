// geodesic-demo: the whole data flow on one machine. Brings up pathcomp, and
// a site agent and a routerd for every facility of the example backbone, over
// mTLS on loopback; shows the plan arriving at every site; cuts a fiber; shows
// the reroute reach every site; repairs it; stops everything. Exit 0 on success.
// Every daemon serves /metrics (and pathcomp its console) on an admin listener;
// the demo prints where and writes them as Prometheus file_sd targets
// (<work-dir>/prometheus-targets.json, read by deploy/prometheus/prometheus.yml).
// With --stay it keeps everything running after the repair until Ctrl-C, so a
// person can open the console and point Prometheus at it.
//
// Usage: geodesic-demo --source-dir DIR --binary-dir DIR [--topology FILE] [--work-dir DIR]
//                      [--cut LINK,REVERSE] [--stay]
#include <csignal>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "files/atomic_file.h"
#include "sim/lab_client.h"
#include "sim/local_lab.h"
#include "sim/wait_until.h"
#include "site_plan/site_plan_reader.h"

namespace geodesic::sim {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using std::chrono::steady_clock;

struct DemoOptions {
  std::string source_dir = ".";
  std::string binary_dir = "build";
  std::string topology;
  std::string work_dir;
  std::string cut = "iad-chi,chi-iad";
  bool stay = false;
};

// Ctrl-C or SIGTERM while the demo stays up: a byte on this pipe.
int stop_pipe[2] = {-1, -1};
extern "C" void OnStopSignal(int) {
  const char byte = 1;
  [[maybe_unused]] const ssize_t ignored = write(stop_pipe[1], &byte, 1);
}

// Blocks until Ctrl-C or SIGTERM.
void WaitForStopSignal() {
  if (pipe(stop_pipe) != 0) return;
  struct sigaction action = {};
  action.sa_handler = OnStopSignal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  char byte = 0;
  while (read(stop_pipe[0], &byte, 1) < 0 && errno == EINTR) {
  }
}

// Every daemon's admin listener, for a person (printed) and for Prometheus
// (file_sd targets with the daemon and facility as labels).
absl::Status ShowAdminListeners(LocalLab& lab) {
  auto console = lab.AdminUrl("pathcomp");
  if (!console.ok()) return console.status();
  std::printf("    console  %s/   (the backbone map; JSON under /api/v1/)\n", console->c_str());
  std::printf("    metrics  %s/metrics\n", console->c_str());
  std::string targets = "[\n";
  const auto add_target = [&](const std::string& url, const std::string& daemon, const std::string& facility) {
    const std::string address = url.substr(url.find("//") + 2);
    absl::StrAppend(&targets, targets.size() > 2 ? ",\n" : "", R"(  {"targets": [")", address,
                    R"("], "labels": {"daemon": ")", daemon, "\"",
                    facility.empty() ? "" : absl::StrCat(R"(, "facility": ")", facility, "\""), "}}");
  };
  add_target(*console, "pathcomp", "");
  for (const auto& facility : lab.topology().facilities) {
    for (const std::string daemon : {"agent", "routerd"}) {
      auto url = lab.AdminUrl(daemon + "/" + facility.id());
      if (!url.ok()) return url.status();
      add_target(*url, daemon == "agent" ? "site_agent" : "routerd", facility.id());
      if (facility.id() == lab.topology().facilities.front().id()) {
        std::printf("    metrics  %s/metrics   (%s/%s; every daemon has one)\n", url->c_str(), daemon.c_str(),
                    facility.id().c_str());
      }
    }
  }
  targets += "\n]\n";
  const std::string targets_file = lab.work_dir() + "/prometheus-targets.json";
  if (absl::Status written = files::AtomicWriteFile(targets_file, targets); !written.ok()) return written;
  std::printf("    Prometheus targets of every daemon: %s (deploy/prometheus/prometheus.yml reads it)\n",
              targets_file.c_str());
  return absl::OkStatus();
}

void Say(const std::string& text) { std::cout << "\n==> " << text << "\n" << std::flush; }

int64_t UnixNowMs() {
  return std::chrono::duration_cast<milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// The route of `site_id` toward `destination` as its routers get it.
std::optional<v1::ForwardingRoute> FindRoute(const v1::Plan& plan, const std::string& site_id,
                                             const std::string& destination) {
  for (const auto& site : plan.sites()) {
    if (site.facility_id() != site_id) continue;
    if (const v1::Route* route = site_plan::FindRouteTo(site, destination)) return site_plan::Primary(site, *route);
  }
  return std::nullopt;
}

std::string DescribeRoute(const v1::ForwardingRoute& route) {
  // Several next hops: each with its share of the traffic (the WCMP weights).
  uint64_t total_weight = 0;
  for (const auto& hop : route.next_hops()) total_weight += hop.weight();
  std::vector<std::string> via;
  for (const auto& hop : route.next_hops()) {
    via.push_back(route.next_hops_size() > 1 && total_weight > 0
                      ? absl::StrCat(hop.link_id(), " ", (100 * hop.weight() + total_weight / 2) / total_weight, "%")
                      : hop.link_id());
  }
  return absl::StrCat(absl::StrJoin(route.path_facility_ids(), " > "), "  via ",
                      absl::StrJoin(via, ","), "  ", route.path_latency_us() / 1000.0, " ms");
}

void PrintSitePlan(const v1::Plan& plan, const std::string& site_id) {
  for (const auto& site : plan.sites()) {
    if (site.facility_id() != site_id) continue;
    std::set<std::string> shown;
    for (const auto& route : site.routes()) {
      // One line per destination (its IPv4 and IPv6 prefixes route alike).
      const std::string& destination = site_plan::DestinationId(site, route);
      if (!shown.insert(destination).second) continue;
      std::printf("    %-4s -> %-4s  %s  (%d backups)\n", site_id.c_str(), destination.c_str(),
                  DescribeRoute(site_plan::Primary(site, route)).c_str(), site_plan::BackupCount(route));
    }
  }
}

// What pathcomp says about every site: the generation its routerd installed
// and whether the site's routers have it.
void PrintSites(const v1::GetPlanResponse& response) {
  std::printf("    plan generation %llu (epoch %llu), computed from model revision %llu; re-plan pending: %s\n",
              static_cast<unsigned long long>(response.plan().generation()),
              static_cast<unsigned long long>(response.plan().epoch()),
              static_cast<unsigned long long>(response.plan_model_revision()),
              response.replan_pending() ? "yes" : "no");
  for (const auto& site : response.sites()) {
    std::printf("    %-4s installed generation %llu  at its routers: %s%s\n", site.facility_id().c_str(),
                static_cast<unsigned long long>(site.generation()), site.sent_to_routers() ? "yes" : "no",
                site.installed() ? "" : absl::StrCat("  (refused: ", site.error(), ")").c_str());
  }
}

// The install pathcomp recorded for `facility_id` (its routerd's acknowledgement).
const v1::SiteInstallStatus* SiteStatus(const v1::GetPlanResponse& response, const std::string& facility_id) {
  for (const auto& site : response.sites()) {
    if (site.facility_id() == facility_id) return &site;
  }
  return nullptr;
}

// What the facility's FRR router holds, one line per prefix: next hops with
// their link-bandwidth weights, as routerd announced them over BGP.
void PrintFrrTable(LocalLab& lab, const std::string& facility_id) {
  FrrRouter* frr = lab.frr(facility_id);
  if (frr == nullptr) return;
  for (bool ipv6 : {false, true}) {
    auto routes = frr->Routes(ipv6);
    if (!routes.ok()) {
      std::cout << "    (FRR: " << routes.status().message() << ")\n";
      return;
    }
    for (const auto& [prefix, paths] : *routes) {
      std::string hops;
      for (const FrrPath& path : paths) {
        if (!path.valid) continue;
        // The lab announces 1 Mb/s of link bandwidth per unit of plan weight.
        absl::StrAppend(&hops, hops.empty() ? "" : ", ", path.next_hop, "(w",
                        std::llround(path.bandwidth_bytes * 8 / 1e6), ")");
      }
      std::printf("    %-18s via %s\n", prefix.c_str(), hops.c_str());
    }
  }
}

// The valid next hops FRR of `facility_id` holds, per prefix (IPv4 and IPv6).
std::map<std::string, std::set<std::string>> FrrNextHops(LocalLab& lab, const std::string& facility_id) {
  std::map<std::string, std::set<std::string>> table;
  for (bool ipv6 : {false, true}) {
    auto routes = lab.frr(facility_id)->Routes(ipv6);
    if (!routes.ok()) return {};
    for (const auto& [prefix, paths] : *routes) {
      for (const FrrPath& path : paths) {
        if (path.valid) table[prefix].insert(path.next_hop);
      }
    }
  }
  return table;
}

// FRR of `facility_id` holds exactly the prefixes and next hops of the plan
// routerd installed there (routerd's state file), once BGP delivered it.
bool FrrHoldsInstalledPlan(LocalLab& lab, const std::string& facility_id) {
  const auto installed = lab.InstalledPlan(facility_id);
  if (!installed) return false;
  std::map<std::string, size_t> link_index;
  for (size_t i = 0; i < lab.topology().links.size(); ++i) link_index[lab.topology().links[i].id()] = i;
  std::map<std::string, std::set<std::string>> expected;
  for (const auto& route : installed->routes()) {
    const bool v6 = route.prefix().find(':') != std::string::npos;
    for (const auto& hop : site_plan::NextHops(*installed, site_plan::PrimaryGroup(*installed, route))) {
      const size_t index = link_index.at(hop.link_id());
      expected[route.prefix()].insert(v6 ? LocalLab::BgpNextHopV6(index) : LocalLab::BgpNextHopV4(index));
    }
  }
  return FrrNextHops(lab, facility_id) == expected;
}

int Fail(LocalLab* lab, const std::string& message) {
  std::cerr << "\ndemo FAILED: " << message << "\n";
  if (lab) std::cerr << "logs: " << lab->work_dir() << "/logs/\n";
  return 1;
}

// Fails the demo with `message` unless `status` is OK.
#define DEMO_CHECK(lab, status)                                           \
  do {                                                                    \
    if (const absl::Status checked = (status); !checked.ok()) {           \
      return Fail(lab, std::string(checked.message()));                   \
    }                                                                     \
  } while (false)

int RunDemo(const DemoOptions& options) {
  LabOptions lab_options;
  lab_options.source_dir = options.source_dir;
  lab_options.binary_dir = options.binary_dir;
  lab_options.topology_path = options.topology.empty()
                                  ? options.source_dir + "/deploy/examples/backbone.yaml"
                                  : options.topology;
  lab_options.work_dir =
      options.work_dir.empty() ? options.source_dir + "/.demo" : options.work_dir;
  // The agents really probe each other's links, at the README's 100 ms (down
  // after three lost probes): the drills' 10 ms flap links on a busy laptop,
  // and the demo would then show re-plans nobody asked for.
  lab_options.probe_interval_ms = 100;
  // New configs route elephant flows on the shortest paths that have room
  // (deploy/examples/pathcomp.yaml): iad -> dfw takes the direct link.
  lab_options.pathcomp_extra_config = "elephant_default: {objective: latency}\n";
  std::error_code ignored;
  std::filesystem::remove_all(lab_options.work_dir, ignored);  // every demo starts clean
  // iad's routerd speaks BGP to a real FRR bgpd (Debian's frr) when it is installed.
  const bool with_frr = FrrAvailable().ok();
  if (with_frr) lab_options.bgp_facilities = {"iad"};

  Say("Making a private CA and mTLS certificates (deploy/pki/make-pki.sh)");
  auto created = LocalLab::Create(lab_options);
  if (!created.ok()) return Fail(nullptr, std::string(created.status().message()));
  LocalLab& lab = **created;
  const auto& topology = lab.topology();
  std::printf("    %zu facilities, %zu directed links, state and logs in %s\n",
              topology.facilities.size(), topology.links.size(), lab_options.work_dir.c_str());

  Say("Starting pathcomp, and a site agent and a routerd per facility");
  DEMO_CHECK(&lab, lab.StartAll());
  std::printf("    pathcomp listening on %s (mTLS); %zu agents, %zu routerds\n",
              lab.pathcomp_address().c_str(), topology.facilities.size(), topology.facilities.size());
  DEMO_CHECK(&lab, ShowAdminListeners(lab));

  // Every wait below asks pathcomp (through the lab client) whether the
  // system converged: no re-plan pending, and the plan at every site's routers.
  const LabClient client(lab);
  const auto start = steady_clock::now();
  DEMO_CHECK(&lab, client.WaitLinksIn(v1::OPER_STATE_UP, seconds(60)));
  auto seen = client.Plan();
  DEMO_CHECK(&lab, seen.status());
  auto plan = client.WaitConverged({.timeout = seconds(60), .min_model_revision = seen->model_revision()});
  DEMO_CHECK(&lab, plan.status());
  if (!plan->plan().unreachable().empty()) return Fail(&lab, "the plan leaves some prefixes unreachable");
  Say(absl::StrCat("Every link measured up; plan generation ", plan->plan().generation(), " at the routers of all ",
                   topology.facilities.size(), " sites ",
                   std::chrono::duration_cast<milliseconds>(steady_clock::now() - start).count(),
                   " ms after start. pathcomp says:"));
  PrintSites(*plan);
  const v1::ElephantAllocation& elephants = plan->plan().elephants();
  // The bound: proven for mlu classes; a latency class proves U* only as far
  // as its cap needs (0 when the cap is the target from the first LP on).
  std::printf("\n    elephant flows: %.0f of %.0f Gbps carried, max link utilization %.3f%s, "
              "latency stretch mean %.3f p95 %.3f\n",
              elephants.carried_gbps(), elephants.demand_gbps(), elephants.max_utilization(),
              elephants.max_utilization_lower_bound() > 0
                  ? absl::StrFormat(" (optimum at least %.3f)", elephants.max_utilization_lower_bound()).c_str()
                  : "",
              elephants.mean_stretch(), elephants.p95_stretch());
  for (const auto& cls : elephants.classes()) {
    std::printf("      class %u: objective %s, utilization %.3f%s\n", cls.priority(), cls.objective().c_str(),
                cls.max_utilization(),
                cls.objective() == "latency"
                    ? absl::StrCat(" (cap ", absl::StrFormat("%.2f", cls.utilization_cap()),
                                   ": shortest paths while they have room)").c_str()
                    : "");
  }
  std::cout << "\n    routes of iad:\n";
  PrintSitePlan(plan->plan(), "iad");
  if (with_frr) {
    // routerd wrote the UPDATEs; FRR's own table follows as bgpd reads them.
    DEMO_CHECK(&lab, WaitUntil("FRR of iad to hold the installed plan", seconds(20),
                               [&] { return FrrHoldsInstalledPlan(lab, "iad"); }));
    std::cout << "\n    FRR bgpd of iad, as routerd announced it over BGP (next hop, weight from link bandwidth):\n";
    PrintFrrTable(lab, "iad");
  } else {
    const auto installed = lab.InstalledPlan("iad");
    std::printf("\n    routerd/iad holds generation %llu with %d routes (FRR is not installed: its routes go to its log)\n",
                static_cast<unsigned long long>(installed ? installed->generation() : 0),
                installed ? installed->routes_size() : 0);
  }

  const std::vector<std::string> cut = absl::StrSplit(options.cut, ',');
  const v1::Link* cut_link = nullptr;
  for (const auto& link : topology.links) {
    if (link.id() == cut[0]) cut_link = &link;
  }
  if (cut_link == nullptr) return Fail(&lab, "unknown link to cut: " + cut[0]);
  const std::string from = cut_link->src_facility_id(), to = cut_link->dst_facility_id();
  const std::optional<v1::ForwardingRoute> before = FindRoute(plan->plan(), from, to);
  const std::string before_text = before ? DescribeRoute(*before) : "none";

  Say(absl::StrCat("Cutting the fiber ", options.cut, " (the agents at ", from, " and ", to,
                   " report it down)"));
  const auto cut_at = steady_clock::now();
  const int64_t cut_at_unix_ms = UnixNowMs();
  for (const auto& link : cut) DEMO_CHECK(&lab, lab.SetLinkState(link, "down"));
  auto down_revision = client.WaitLinkStates(cut, v1::OPER_STATE_DOWN, seconds(30));
  DEMO_CHECK(&lab, down_revision.status());
  plan = client.WaitConverged({.timeout = seconds(30), .min_model_revision = *down_revision});
  DEMO_CHECK(&lab, plan.status());
  const auto reroute_ms = std::chrono::duration_cast<milliseconds>(steady_clock::now() - cut_at).count();
  const std::optional<v1::ForwardingRoute> after = FindRoute(plan->plan(), from, to);
  if (!after) return Fail(&lab, absl::StrCat("no route from ", from, " to ", to, " after the cut"));
  for (const auto& hop : after->next_hops()) {
    if (hop.link_id() == cut[0]) return Fail(&lab, "the converged plan still routes over the cut fiber");
  }
  Say(absl::StrCat("Rerouted: plan generation ", plan->plan().generation(), " at the routers of all sites within ",
                   reroute_ms, " ms of the cut. pathcomp says:"));
  PrintSites(*plan);
  std::printf("\n    %s -> %s before: %s\n", from.c_str(), to.c_str(), before_text.c_str());
  std::printf("    %s -> %s after:  %s\n", from.c_str(), to.c_str(), DescribeRoute(*after).c_str());
  // routerd's own record of its local repair, against pathcomp's record of
  // the new plan's install: the site did not wait for the controller.
  if (const auto repairs = lab.LocalRepairs(from)) {
    for (const auto& repair : repairs->repairs()) {
      if (repair.at_unix_ms() < cut_at_unix_ms) continue;
      std::printf("    routerd/%s repaired locally %lld ms after the cut: %u routes onto their surviving next hops "
                  "or backups (down: %s)\n",
                  from.c_str(), static_cast<long long>(repair.at_unix_ms() - cut_at_unix_ms), repair.routes_changed(),
                  absl::StrJoin(repair.down_links(), ",").c_str());
      break;
    }
  }
  if (const v1::SiteInstallStatus* site = SiteStatus(*plan, from)) {
    std::printf("    routerd/%s installed the new plan %lld ms after the cut\n", from.c_str(),
                static_cast<long long>(site->at_unix_ms() - cut_at_unix_ms));
  }
  if (with_frr && from == "iad") {
    DEMO_CHECK(&lab, WaitUntil("FRR of iad to hold the new plan", seconds(20),
                               [&] { return FrrHoldsInstalledPlan(lab, "iad"); }));
    size_t cut_index = 0;
    while (topology.links[cut_index].id() != cut[0]) ++cut_index;
    std::cout << "\n    FRR bgpd of iad now (nothing via " << LocalLab::BgpNextHopV4(cut_index)
              << ", the far end of " << cut[0] << "):\n";
    PrintFrrTable(lab, "iad");
  }

  Say("Repairing the fiber");
  for (const auto& link : cut) DEMO_CHECK(&lab, lab.SetLinkState(link, "up"));
  auto up_revision = client.WaitLinkStates(cut, v1::OPER_STATE_UP, seconds(30));
  DEMO_CHECK(&lab, up_revision.status());
  plan = client.WaitConverged({.timeout = seconds(30), .min_model_revision = *up_revision});
  DEMO_CHECK(&lab, plan.status());
  const std::optional<v1::ForwardingRoute> again = FindRoute(plan->plan(), from, to);
  if (!again || DescribeRoute(*again) != before_text) {
    return Fail(&lab, absl::StrCat("the original path did not come back: ", from, " -> ", to, " is ",
                                   again ? DescribeRoute(*again) : "unrouted"));
  }
  std::printf("    %s -> %s again: %s (generation %llu, at the routers of all sites)\n", from.c_str(), to.c_str(),
              before_text.c_str(), static_cast<unsigned long long>(plan->plan().generation()));

  if (options.stay) {
    auto console = lab.AdminUrl("pathcomp");
    DEMO_CHECK(&lab, console.status());
    Say(absl::StrCat("Staying up: open ", *console, "/ in a browser; Ctrl-C stops everything"));
    WaitForStopSignal();
  }
  Say("Stopping everything");
  lab.StopAll();
  std::cout << "\ndemo OK\n";
  return 0;
}

#undef DEMO_CHECK

}  // namespace
}  // namespace geodesic::sim

int main(int argc, char** argv) {
  geodesic::sim::DemoOptions options;
  const std::map<std::string, std::string*> flags = {{"--source-dir", &options.source_dir},
                                                     {"--binary-dir", &options.binary_dir},
                                                     {"--topology", &options.topology},
                                                     {"--work-dir", &options.work_dir},
                                                     {"--cut", &options.cut}};
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--stay") {
      options.stay = true;
      continue;
    }
    auto it = flags.find(argv[i]);
    if (it == flags.end() || i + 1 >= argc) {
      std::fprintf(stderr,
                   "usage: geodesic-demo --source-dir DIR --binary-dir DIR [--topology FILE] "
                   "[--work-dir DIR] [--cut LINK,REVERSE] [--stay]\n");
      return 2;
    }
    *it->second = argv[++i];
  }
  return geodesic::sim::RunDemo(options);
}
