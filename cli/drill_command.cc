// tectl drill run FILE: a failure drill on the simulator (sim/drill), on
// real daemons (--live) or in network namespaces with real packets (--netns),
// its events and expectations as a table (or the whole report as JSON/YAML),
// the report and SVG charts written where asked. tectl drill clean removes
// what a killed netns drill left.
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "cli/command_spec.h"
#include "cli/commands.h"
#include "cli/output.h"
#include "cli/option_values.h"
#include "pathcomp/health/link_judge.h"
#include "sim/drill/drill_charts.h"
#include "sim/drill/live_drill.h"
#include "sim/drill/netns_drill.h"
#include "sim/drill/simulator.h"
#include "sim/netns/netns_backbone.h"
#include "text/table.h"

namespace geodesic::cli {
namespace {

absl::Status WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
  out.close();
  if (!out) return absl::UnavailableError(absl::StrCat(path, ": cannot write"));
  return absl::OkStatus();
}

std::string Ms(uint64_t ms) { return ms == 0 ? "-" : absl::StrCat(ms); }

std::string AutoDrainActionName(v1::AutoDrainEvent::Action action) {
  switch (action) {
    case v1::AutoDrainEvent::ACTION_DRAINED: return "drained";
    case v1::AutoDrainEvent::ACTION_UNDRAINED: return "undrained";
    case v1::AutoDrainEvent::ACTION_REFUSED: return "REFUSED";
    case v1::AutoDrainEvent::ACTION_FAIL_OPEN: return "FAIL OPEN";
    case v1::AutoDrainEvent::ACTION_FAIL_OPEN_CLEARED: return "fail open cleared";
    case v1::AutoDrainEvent::ACTION_HELD: return "held";
    default: return v1::AutoDrainEvent::Action_Name(action);
  }
}

// The simulated automatic drainer's actions, after the event each followed.
void PrintAutoDrain(const v1::DrillAutoDrain& auto_drain) {
  if (!auto_drain.enabled()) {
    std::cout << "automatic drains: disabled in this drill (auto_drain.enabled: false)\n\n";
    return;
  }
  std::cout << "automatic drains: " << auto_drain.drains() << " drained, " << auto_drain.undrains() << " undrained, "
            << auto_drain.refusals() << " refused, " << auto_drain.held() << " held, "
            << (auto_drain.failed_open() ? "failed open" : "never failed open");
  if (auto_drain.gray_drained_plans() > 0) {
    std::cout << absl::StrFormat("; load on degraded links once drained: %.1f Gbps%s (%u plans)",
                                 auto_drain.max_gray_link_load_gbps(),
                                 auto_drain.max_gray_link().empty() ? "" : absl::StrCat(" on ", auto_drain.max_gray_link()),
                                 auto_drain.gray_drained_plans());
  }
  std::cout << "\n";
  if (auto_drain.actions().empty()) {
    std::cout << "\n";
    return;
  }
  text::Table actions({"AT_MS", "AFTER_EVENT", "ACTION", "LINKS", "VERDICT", "REPLANNED_MS", "DETAIL"});
  for (const auto& action : auto_drain.actions()) {
    const std::string detail = action.refusals().empty() ? action.reason() : absl::StrJoin(action.refusals(), "; ");
    actions.Add({absl::StrCat(action.at_ms()), action.after_event().empty() ? "-" : action.after_event(),
                 AutoDrainActionName(action.action()), absl::StrJoin(action.link_ids(), ","),
                 action.verdict() == v1::LINK_VERDICT_UNKNOWN ? "-" : pathcomp::health::VerdictName(action.verdict()),
                 Ms(action.replanned_at_ms()), detail});
  }
  std::cout << actions.Render() << "\n";
}

// The link loads as forwarded (the simulator only): every elephant flow's
// demand through the sites' routes, on local repair and through the plans.
void PrintForwarding(const v1::DrillReport& report) {
  const v1::DrillForwarding& forwarding = report.forwarding();
  std::cout << "link loads as forwarded (elephant demands hop by hop through the sites' routes): ";
  if (forwarding.repairs() == 0) {
    std::cout << "no local repair";
  } else {
    std::cout << absl::StrFormat("highest utilization on local repair %.3f on %s at %s", forwarding.max_utilization_after_repair(),
                                 forwarding.max_utilization_after_repair_link().empty() ? "-" : forwarding.max_utilization_after_repair_link(),
                                 forwarding.max_utilization_after_repair_event());
  }
  std::cout << absl::StrFormat("; through the plans %.3f on %s", forwarding.max_utilization_of_plans(),
                               forwarding.max_utilization_of_plans_link().empty() ? "-" : forwarding.max_utilization_of_plans_link());
  if (forwarding.max_dropped_gbps() > 0 || forwarding.max_looped_gbps() > 0) {
    std::cout << absl::StrFormat("; at worst %.1f Gbps without a route, %.1f Gbps looping", forwarding.max_dropped_gbps(),
                                 forwarding.max_looped_gbps());
  }
  std::cout << "\n";
  if (forwarding.repairs() == 0) {
    std::cout << "\n";
    return;
  }
  text::Table repairs({"AT_MS", "EVENT", "REPAIRED_MS", "UTIL_ON_REPAIR", "LINK", "DROPPED_GBPS", "LOOPED_GBPS", "UTIL_REPLANNED"});
  for (const auto& event : report.events()) {
    if (event.repaired_at_ms() == 0) continue;
    repairs.Add({absl::StrCat(event.at_ms()), event.event(), Ms(event.repaired_at_ms()),
                 absl::StrFormat("%.3f", event.max_utilization_after_repair()),
                 event.max_utilization_after_repair_link().empty() ? "-" : event.max_utilization_after_repair_link(),
                 absl::StrFormat("%.1f", event.dropped_after_repair_gbps()),
                 absl::StrFormat("%.1f", event.looped_after_repair_gbps()),
                 event.replanned_at_ms() > 0 ? absl::StrFormat("%.3f", event.forwarded_utilization_after()) : "-"});
  }
  std::cout << repairs.Render() << "\n";
}

// Where a live or netns drill finds its daemons and writes: this tectl's
// build tree (tectl is in its bin/), the checkout for the PKI script
// ($GEODESIC_SOURCE_DIR, else the one tectl was built from), and --work-dir
// or a fresh temporary directory.
struct DrillDirs {
  std::string binary_dir, source_dir, work_dir;
};

absl::StatusOr<DrillDirs> FindDrillDirs(const sim::DrillSpec& spec, const Options& options) {
  DrillDirs dirs;
  std::error_code error;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error) return absl::UnavailableError(absl::StrCat("cannot find tectl's build tree: ", error.message()));
  dirs.binary_dir = self.parent_path().parent_path().string();
  const char* source = std::getenv("GEODESIC_SOURCE_DIR");
  dirs.source_dir = source != nullptr && *source != '\0' ? source : GEODESIC_DEFAULT_SOURCE_DIR;
  dirs.work_dir = options.work_dir.empty()
                      ? (std::filesystem::temp_directory_path() / absl::StrCat("geodesic-drill-", spec.name, "-", ::getpid()))
                            .string()
                      : options.work_dir;
  return dirs;
}

absl::StatusOr<v1::DrillReport> RunLive(const sim::DrillSpec& spec, const Options& options) {
  absl::StatusOr<DrillDirs> dirs = FindDrillDirs(spec, options);
  if (!dirs.ok()) return dirs.status();
  std::cerr << "tectl: live drill " << spec.name << " in " << dirs->work_dir << " (daemon logs in lab/logs)\n";
  return sim::RunLiveDrill(spec, {.source_dir = dirs->source_dir, .binary_dir = dirs->binary_dir, .work_dir = dirs->work_dir});
}

// --keep: how to look around the lab, then wait for Ctrl-C (or SIGTERM).
void KeepUntilInterrupted(sim::NetnsLab& lab, const std::string& work_dir) {
  std::cerr << "\ntectl: the netns lab stays up until Ctrl-C (or kill -TERM " << ::getpid() << "); then it is torn down.\n"
            << "  pathcomp (on the host): " << lab.lab().pathcomp_address() << ", configs and logs in " << work_dir
            << "/lab\n";
  for (const sim::NetnsFacility& facility : lab.backbone().facilities()) {
    std::cerr << "  " << facility.id << ": ip netns exec " << facility.namespace_name << " ip route   # the kernel's routes\n"
              << std::string(facility.id.size() + 4, ' ') << "ip netns exec " << facility.namespace_name
              << " vtysh --vty_socket " << work_dir << "/lab/frr-" << facility.id << "   # its FRR\n";
  }
  std::cerr << "  If tectl is killed instead, `tectl drill clean` removes what it left.\n";
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  int received = 0;
  sigwait(&signals, &received);
  std::cerr << "tectl: tearing the netns lab down\n";
}

absl::StatusOr<v1::DrillReport> RunNetns(const sim::DrillSpec& spec, const Options& options) {
  absl::StatusOr<DrillDirs> dirs = FindDrillDirs(spec, options);
  if (!dirs.ok()) return dirs.status();
  std::cerr << "tectl: netns drill " << spec.name << " in " << dirs->work_dir
            << " (daemon logs in lab/logs, traffic reports in traffic/)\n";
  sim::NetnsDrillOptions netns;
  netns.source_dir = dirs->source_dir;
  netns.binary_dir = dirs->binary_dir;
  netns.work_dir = dirs->work_dir;
  netns.local_repair = !options.no_local_repair;
  if (options.keep) {
    const std::string work_dir = dirs->work_dir;
    netns.before_teardown = [work_dir](sim::NetnsLab& lab) { KeepUntilInterrupted(lab, work_dir); };
  }
  return sim::RunNetnsDrill(spec, netns);
}

// tectl drill clean: the namespaces (and processes in them) of netns drills
// and labs whose process is gone.
int CleanNetns() {
  absl::StatusOr<std::vector<std::string>> removed = sim::NetnsBackbone::RemoveLeftovers("geo");
  if (!removed.ok()) return PrintError(removed.status());
  for (const std::string& name : *removed) std::cout << "removed namespace " << name << "\n";
  if (removed->empty()) std::cout << "nothing left by a netns drill\n";
  return 0;
}

}  // namespace

int RunDrill(const Options& options) {
  if (options.subcommand == "clean") return CleanNetns();
  auto spec = sim::LoadDrill(options.file);
  if (!spec.ok()) return PrintError(spec.status());
  absl::StatusOr<v1::DrillReport> ran = options.netns ? RunNetns(*spec, options)
                                        : options.live ? RunLive(*spec, options)
                                                       : sim::RunDrill(*spec);
  if (!ran.ok()) return PrintError(ran.status());
  const v1::DrillReport& report = *ran;
  if (!options.report_file.empty()) {
    if (auto status = WriteFile(options.report_file, ToJson(report)); !status.ok()) return PrintError(status);
  }
  if (!options.charts_dir.empty()) {
    std::error_code error;
    std::filesystem::create_directories(options.charts_dir, error);
    if (error) return PrintError(absl::UnavailableError(absl::StrCat(options.charts_dir, ": ", error.message())));
    for (const auto& [name, svg] : {std::pair{"timeline", sim::TimelineChart(report)},
                                    std::pair{"chain-latency", sim::ChainLatencyChart(report)}}) {
      const std::string path = absl::StrCat(options.charts_dir, "/", report.name(), "-", name, ".svg");
      if (auto status = WriteFile(path, svg); !status.ok()) return PrintError(status);
    }
  }
  if (options.output != OutputFormat::kTable) {
    PrintStructured(report, options.output);
  } else {
    const bool real = options.live || options.netns;
    std::cout << (options.netns ? "netns drill " : options.live ? "live drill " : "drill ") << report.name() << ": "
              << report.facilities() << " facilities, " << report.links() << " links, " << report.elephant_flows()
              << " elephant flows, " << report.chains() << " chains, "
              << (real ? absl::StrCat(report.duration_ms(), " ms of wall time, ")
                       : absl::StrCat(report.duration_ms() / 1000, " s simulated, "))
              << report.plans() << " plans\n\n";
    text::Table events({"AT_MS", "EVENT", "AFFECTED", "REPAIRED_MS", "REPLANNED_MS", "MAX_OUTAGE_MS", "CARRIED", "MLU",
                  "P99_MS", "CUT", "ROUTES"});
    for (const auto& event : report.events()) {
      events.Add({absl::StrCat(event.at_ms()), event.event(), absl::StrCat(event.affected_workload_ids_size()),
                  Ms(event.repaired_at_ms()), Ms(event.replanned_at_ms()), absl::StrCat(event.max_chain_outage_ms()),
                  absl::StrFormat("%.3f", event.carried_ratio_after()), absl::StrFormat("%.3f", event.mlu_after()),
                  absl::StrFormat("%.1f", event.chain_latency_p99_us() / 1000.0),
                  absl::StrCat(event.cut_workload_ids_size()), absl::StrCat(event.routes_changed())});
    }
    std::cout << events.Render() << "\n";
    if (report.has_packets() && report.packets().streams() > 0) {
      const v1::DrillPackets& packets = report.packets();
      std::cout << "packets: " << packets.streams() << " streams (1 Gbps = " << packets.mbit_per_gbps()
                << " Mbit/s on the veths, losses to " << absl::StrFormat("%.0f", packets.resolution_ms()) << " ms), "
                << packets.received() << " of " << packets.sent()
                << absl::StrFormat(" delivered (%.4f)\n\n", packets.delivered_ratio());
      text::Table traffic({"AT_MS", "EVENT", "STREAMS_HIT", "LOST", "MAX_LOSS_MS", "WORST", "RECOVERED_MS",
                           "FIB_FIRST_MS", "FIB_LAST_MS", "KERNELS_MS", "LOAD_ERROR_GBPS"});
      for (const auto& event : report.events()) {
        const v1::EventPackets& seen = event.packets();
        traffic.Add({absl::StrCat(event.at_ms()), event.event(), absl::StrCat(seen.streams_hit(), "/", seen.streams()),
                     absl::StrCat(seen.packets_lost()), absl::StrFormat("%.1f", seen.max_loss_ms()),
                     seen.worst_stream().empty() ? "-" : seen.worst_stream(), Ms(seen.last_recovered_ms()),
                     seen.fib_changes() > 0 ? absl::StrCat(seen.fib_first_change_ms()) : "-",
                     seen.fib_changes() > 0 ? absl::StrCat(seen.fib_last_change_ms()) : "-",
                     seen.kernel_routes_differing_size() > 0 ? "differ" : absl::StrCat(seen.kernels_follow_ms()),
                     absl::StrFormat("%.1f", seen.max_link_load_error_gbps())});
      }
      std::cout << traffic.Render() << "\n";
    }
    if (report.has_forwarding()) PrintForwarding(report);
    if (report.has_auto_drain()) PrintAutoDrain(report.auto_drain());
    text::Table expectations({"EXPECTATION", "RESULT", "DETAIL"});
    for (const auto& expectation : report.expectations()) {
      expectations.Add({expectation.name(), expectation.ok() ? "ok" : "FAILED", expectation.detail()});
    }
    std::cout << expectations.Render();
  }
  if (!report.passed()) {
    std::vector<std::string> failed;
    for (const auto& expectation : report.expectations()) {
      if (!expectation.ok()) failed.push_back(absl::StrCat(expectation.name(), " (", expectation.detail(), ")"));
    }
    std::cerr << "tectl: drill " << report.name() << " failed: " << absl::StrJoin(failed, "; ") << "\n";
    return kExitDrillFailed;
  }
  return 0;
}

namespace {

absl::Status ParseDrill(const CommandArgs& args, Options& options) {
  if (args.operands.size() == 1 && args.operands[0] == "clean") {
    for (const char* flag : {"--report", "--charts", "--work-dir", "--live", "--netns", "--keep", "--no-local-repair"}) {
      if (args.flag(flag) != nullptr) return Usage(absl::StrCat("drill clean takes no ", flag));
    }
    options.subcommand = "clean";
    return absl::OkStatus();
  }
  if (args.operands.size() != 2 || args.operands[0] != "run") return Usage("drill takes: run FILE, or clean");
  options.subcommand = "run";
  options.file = args.operands[1];
  const std::string* report = args.flag("--report");
  const std::string* charts = args.flag("--charts");
  for (const std::string* path : {static_cast<const std::string*>(&options.file), report, charts}) {
    if (path != nullptr && !IsOneLine(*path)) return Usage("file names must be one line");
  }
  if (report) options.report_file = *report;
  if (charts) options.charts_dir = *charts;
  options.live = args.flag("--live") != nullptr;
  options.netns = args.flag("--netns") != nullptr;
  options.keep = args.flag("--keep") != nullptr;
  options.no_local_repair = args.flag("--no-local-repair") != nullptr;
  if (options.live && options.netns) return Usage("--live and --netns are two different labs: give one");
  if (options.keep && !options.netns) return Usage("--keep is for --netns");
  if (options.no_local_repair && !options.netns) return Usage("--no-local-repair is for --netns");
  if (const std::string* work_dir = args.flag("--work-dir")) {
    if (!options.live && !options.netns) return Usage("--work-dir is for --live and --netns");
    if (!IsOneLine(*work_dir)) return Usage("file names must be one line");
    options.work_dir = *work_dir;
  }
  return absl::OkStatus();
}

}  // namespace

const CommandSpec& DrillCommandSpec() {
  static const auto* spec = new CommandSpec{
      .name = "drill",
      .command = Command::kDrill,
      .flags = {"--report", "--charts", "--work-dir"},
      .switches = {"--live", "--netns", "--keep", "--no-local-repair"},
      .outputs = {OutputFormat::kTable, OutputFormat::kJson, OutputFormat::kYaml},
      .usage = "drill run FILE [--live | --netns [--keep] [--no-local-repair]] [--work-dir DIR]\n"
               "          [--report FILE.json] [--charts DIR] [-o table|json|yaml]\n"
               "drill clean\n"
               "    runs a failure drill (sim/drills/*.yaml) on the simulator with pathcomp's\n"
               "    planning, --live on real daemons started on loopback (pathcomp, agents,\n"
               "    routerds, FRR), or --netns (as root) in network namespaces: a namespace per\n"
               "    facility with FRR zebra+bgpd and routerd, veths shaped like the links, the\n"
               "    agents probing them, UDP streams for the elephant flows (packet loss per\n"
               "    event; max_packet_loss_ms and min_delivered_ratio are judged); --keep leaves\n"
               "    it up until Ctrl-C, --no-local-repair re-plans only; exits 4 when an\n"
               "    expectation fails, saying which and why. clean removes the namespaces of\n"
               "    netns drills whose tectl was killed\n",
      .parse = ParseDrill,
      .access = LocalFiles,
  };
  return *spec;
}

}  // namespace geodesic::cli
