// geodesic-demo: the whole data flow on one machine. Brings up pathcomp, and
// a site agent and a routerd for every facility of the example backbone, over
// mTLS on loopback; shows the plan arriving at every site; cuts a fiber; shows
// the reroute reach every site; repairs it; stops everything. Exit 0 on success.
//
// Usage: geodesic-demo --source-dir DIR --binary-dir DIR [--topology FILE] [--work-dir DIR]
//                      [--cut LINK,REVERSE]
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "sim/local_lab.h"

namespace geodesic::sim {
namespace {

using std::chrono::milliseconds;
using std::chrono::steady_clock;

struct DemoOptions {
  std::string source_dir = ".";
  std::string binary_dir = "build";
  std::string topology;
  std::string work_dir;
  std::string cut = "iad-chi,chi-iad";
};

void Say(const std::string& text) { std::cout << "\n==> " << text << "\n" << std::flush; }

std::optional<v1::GetPlanResponse> GetPlan(v1::Operator::Stub& stub) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  v1::GetPlanResponse response;
  if (!stub.GetPlan(&context, {}, &response).ok()) return std::nullopt;
  return response;
}

// True when every facility's routerd acknowledged installing `generation`.
bool AllSitesInstalled(const v1::GetPlanResponse& response, size_t facilities) {
  size_t installed = 0;
  for (const auto& site : response.sites()) {
    if (site.installed() && site.generation() == response.plan().generation()) ++installed;
  }
  return installed == facilities;
}

const v1::Route* FindRoute(const v1::Plan& plan, const std::string& site_id,
                           const std::string& destination) {
  for (const auto& site : plan.sites()) {
    if (site.facility_id() != site_id) continue;
    for (const auto& route : site.routes()) {
      if (route.destination_facility_id() == destination) return &route;
    }
  }
  return nullptr;
}

std::string DescribeRoute(const v1::Route& route) {
  std::vector<std::string> via;
  for (const auto& hop : route.next_hops()) via.push_back(hop.link_id());
  return absl::StrCat(absl::StrJoin(route.path_facility_ids(), " > "), "  via ",
                      absl::StrJoin(via, ","), "  ", route.path_latency_us() / 1000.0, " ms");
}

void PrintSitePlan(const v1::Plan& plan, const std::string& site_id) {
  for (const auto& site : plan.sites()) {
    if (site.facility_id() != site_id) continue;
    std::set<std::string> shown;
    for (const auto& route : site.routes()) {
      // One line per destination (its IPv4 and IPv6 prefixes route alike).
      if (!shown.insert(route.destination_facility_id()).second) continue;
      std::printf("    %-4s -> %-4s  %s  (%d backups)\n", site_id.c_str(),
                  route.destination_facility_id().c_str(), DescribeRoute(route).c_str(),
                  route.backups_size());
    }
  }
}

// Lines of the log at `path` from byte `from` on that contain `needle`.
void PrintLogLines(const std::string& path, const std::string& needle, size_t max_lines,
                   std::streamoff from = 0) {
  std::ifstream in(path);
  in.seekg(from);
  std::string line;
  size_t shown = 0;
  while (std::getline(in, line) && shown < max_lines) {
    if (line.find(needle) == std::string::npos) continue;
    std::cout << "    " << line << "\n";
    ++shown;
  }
}

// What the facility's FRR router holds, one line per prefix: next hops with
// their link-bandwidth weights, as routerd announced them over BGP.
void PrintFrrTable(LocalLab& lab, const std::string& facility_id, const std::string& only_prefix = "") {
  FrrRouter* frr = lab.frr(facility_id);
  if (frr == nullptr) return;
  for (bool ipv6 : {false, true}) {
    auto routes = frr->Routes(ipv6);
    if (!routes.ok()) {
      std::cout << "    (FRR: " << routes.status().message() << ")\n";
      return;
    }
    for (const auto& [prefix, paths] : *routes) {
      if (!only_prefix.empty() && prefix != only_prefix) continue;
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

int Fail(LocalLab* lab, const std::string& message) {
  std::cerr << "\ndemo FAILED: " << message << "\n";
  if (lab) std::cerr << "logs: " << lab->work_dir() << "/logs/\n";
  return 1;
}

int RunDemo(const DemoOptions& options) {
  LabOptions lab_options;
  lab_options.source_dir = options.source_dir;
  lab_options.binary_dir = options.binary_dir;
  lab_options.topology_path = options.topology.empty()
                                  ? options.source_dir + "/deploy/examples/backbone.yaml"
                                  : options.topology;
  lab_options.work_dir =
      options.work_dir.empty() ? options.source_dir + "/.demo" : options.work_dir;
  std::error_code ignored;
  std::filesystem::remove_all(lab_options.work_dir, ignored);  // every demo starts clean
  // iad's routerd speaks BGP to a real FRR bgpd (Debian's frr) when it is installed.
  const bool with_frr = FrrAvailable().ok();
  if (with_frr) lab_options.bgp_facilities = {"iad"};

  Say("Making a private CA and mTLS certificates (deploy/pki/make-pki.sh)");
  auto lab = LocalLab::Create(lab_options);
  if (!lab.ok()) return Fail(nullptr, std::string(lab.status().message()));
  const auto& topology = (*lab)->topology();
  std::printf("    %zu facilities, %zu directed links, state and logs in %s\n",
              topology.facilities.size(), topology.links.size(), lab_options.work_dir.c_str());

  Say("Starting pathcomp, and a site agent and a routerd per facility");
  if (auto status = (*lab)->StartAll(); !status.ok()) {
    return Fail(lab->get(), std::string(status.message()));
  }
  std::printf("    pathcomp listening on %s (mTLS); %zu agents, %zu routerds\n",
              (*lab)->pathcomp_address().c_str(), topology.facilities.size(),
              topology.facilities.size());

  auto stub = (*lab)->OperatorClient("admin");
  const size_t facilities = topology.facilities.size();
  std::optional<v1::GetPlanResponse> plan;
  const auto start = steady_clock::now();
  // Every link reported up by its agent, and the plan computed from that installed everywhere.
  const bool converged = LocalLab::WaitFor(
      [&] {
        plan = GetPlan(*stub);
        return plan && plan->plan().unreachable().empty() && plan->plan().sites_size() > 0 &&
               plan->plan().sites(0).routes_size() > 0 && AllSitesInstalled(*plan, facilities);
      },
      std::chrono::seconds(60));
  if (!converged) return Fail(lab->get(), "the plan did not reach every site within 60 s");
  Say(absl::StrCat("Plan generation ", plan->plan().generation(), " installed at all ", facilities,
                   " sites ", std::chrono::duration_cast<milliseconds>(steady_clock::now() - start).count(),
                   " ms after start; routes of iad:"));
  PrintSitePlan(plan->plan(), "iad");
  if (with_frr) {
    const bool frr_has_it = LocalLab::WaitFor(
        [&] {
          auto routes = (*lab)->frr("iad")->Routes(false);
          return routes.ok() && routes->size() + 1 >= static_cast<size_t>(facilities);
        },
        std::chrono::seconds(20));
    if (!frr_has_it) return Fail(lab->get(), "FRR of iad did not learn the plan's routes over BGP");
    std::cout << "\n    FRR bgpd of iad, as routerd announced it over BGP (next hop, weight from link bandwidth):\n";
    PrintFrrTable(**lab, "iad");
  } else {
    std::cout << "\n    routerd/iad log (FRR is not installed: routes are only logged):\n";
    PrintLogLines((*lab)->process("routerd/iad")->log_path(), "would announce", 4);
  }

  const std::vector<std::string> cut = absl::StrSplit(options.cut, ',');
  const v1::Link* cut_link = nullptr;
  for (const auto& link : topology.links) {
    if (link.id() == cut[0]) cut_link = &link;
  }
  if (cut_link == nullptr) return Fail(lab->get(), "unknown link to cut: " + cut[0]);
  const std::string from = cut_link->src_facility_id(), to = cut_link->dst_facility_id();
  const v1::Route* before = FindRoute(plan->plan(), from, to);
  const std::string before_text = before ? DescribeRoute(*before) : "none";

  Say(absl::StrCat("Cutting the fiber ", options.cut, " (the agents at ", from, " and ", to,
                   " report it down)"));
  const std::string from_log = (*lab)->process("routerd/" + from)->log_path();
  const std::streamoff log_offset = static_cast<std::streamoff>(std::filesystem::file_size(from_log));
  const auto cut_at = steady_clock::now();
  for (const auto& link : cut) {
    if (auto status = (*lab)->SetLinkState(link, "down"); !status.ok()) {
      return Fail(lab->get(), std::string(status.message()));
    }
  }
  const uint64_t old_generation = plan->plan().generation();
  const bool rerouted = LocalLab::WaitFor(
      [&] {
        plan = GetPlan(*stub);
        if (!plan || plan->plan().generation() == old_generation) return false;
        const v1::Route* route = FindRoute(plan->plan(), from, to);
        if (route == nullptr) return false;
        for (const auto& hop : route->next_hops()) {
          if (hop.link_id() == cut[0]) return false;
        }
        return AllSitesInstalled(*plan, facilities);
      },
      std::chrono::seconds(30));
  if (!rerouted) return Fail(lab->get(), "no reroute around the cut within 30 s");
  const auto reroute_ms =
      std::chrono::duration_cast<milliseconds>(steady_clock::now() - cut_at).count();
  const v1::Route* after = FindRoute(plan->plan(), from, to);
  Say(absl::StrCat("Rerouted: plan generation ", plan->plan().generation(),
                   " installed at all sites ", reroute_ms, " ms after the cut"));
  std::printf("    %s -> %s before: %s\n", from.c_str(), to.c_str(), before_text.c_str());
  std::printf("    %s -> %s after:  %s\n", from.c_str(), to.c_str(), DescribeRoute(*after).c_str());
  if (with_frr && from == "iad") {
    size_t cut_index = 0;
    while (topology.links[cut_index].id() != cut[0]) ++cut_index;
    const std::string cut_next_hop = LocalLab::BgpNextHopV4(cut_index);
    LocalLab::WaitFor(
        [&] {
          auto routes = (*lab)->frr("iad")->Routes(false);
          if (!routes.ok()) return false;
          for (const auto& [prefix, paths] : *routes) {
            for (const FrrPath& path : paths) {
              if (path.valid && path.next_hop == cut_next_hop) return false;
            }
          }
          return true;
        },
        std::chrono::seconds(10));
    std::cout << "\n    FRR bgpd of iad now (nothing via " << cut_next_hop << ", the far end of " << cut[0] << "):\n";
    PrintFrrTable(**lab, "iad");
    std::cout << "\n    routerd/iad log (local repair came before the new plan):\n";
    PrintLogLines(from_log, "local repair", 2, log_offset);
  } else {
    std::cout << "\n    routerd/" << from << " log:\n";
    PrintLogLines(from_log, "would re-announce", 4, log_offset);
  }

  Say("Repairing the fiber");
  for (const auto& link : cut) {
    if (auto status = (*lab)->SetLinkState(link, "up"); !status.ok()) {
      return Fail(lab->get(), std::string(status.message()));
    }
  }
  const bool restored = LocalLab::WaitFor(
      [&] {
        plan = GetPlan(*stub);
        if (!plan) return false;
        const v1::Route* route = FindRoute(plan->plan(), from, to);
        return route && DescribeRoute(*route) == before_text && AllSitesInstalled(*plan, facilities);
      },
      std::chrono::seconds(30));
  if (!restored) return Fail(lab->get(), "the original path did not come back within 30 s");
  std::printf("    %s -> %s again: %s (generation %llu)\n", from.c_str(), to.c_str(),
              before_text.c_str(), static_cast<unsigned long long>(plan->plan().generation()));

  Say("Stopping everything");
  (*lab)->StopAll();
  std::cout << "\ndemo OK\n";
  return 0;
}

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
    auto it = flags.find(argv[i]);
    if (it == flags.end() || i + 1 >= argc) {
      std::fprintf(stderr,
                   "usage: geodesic-demo --source-dir DIR --binary-dir DIR [--topology FILE] "
                   "[--work-dir DIR] [--cut LINK,REVERSE]\n");
      return 2;
    }
    *it->second = argv[++i];
  }
  return geodesic::sim::RunDemo(options);
}
