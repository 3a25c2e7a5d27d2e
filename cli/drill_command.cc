// tectl drill run FILE: a failure drill on the simulator (sim/drill), its
// events and expectations as a table (or the whole report as JSON/YAML), the
// report and SVG charts written where asked.
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
#include "sim/drill/drill_charts.h"
#include "sim/drill/live_drill.h"
#include "sim/drill/simulator.h"
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

// The daemons a live drill starts: this tectl's build tree (tectl is in its
// bin/), and the checkout for the PKI script ($GEODESIC_SOURCE_DIR, else the
// one tectl was built from).
absl::StatusOr<v1::DrillReport> RunLive(const sim::DrillSpec& spec, const Options& options) {
  sim::LiveDrillOptions live;
  std::error_code error;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (error) return absl::UnavailableError(absl::StrCat("cannot find tectl's build tree: ", error.message()));
  live.binary_dir = self.parent_path().parent_path().string();
  const char* source = std::getenv("GEODESIC_SOURCE_DIR");
  live.source_dir = source != nullptr && *source != '\0' ? source : GEODESIC_DEFAULT_SOURCE_DIR;
  live.work_dir = options.work_dir.empty()
                      ? (std::filesystem::temp_directory_path() / absl::StrCat("geodesic-drill-", spec.name, "-", ::getpid()))
                            .string()
                      : options.work_dir;
  std::cerr << "tectl: live drill " << spec.name << " in " << live.work_dir << " (daemon logs in lab/logs)\n";
  return sim::RunLiveDrill(spec, live);
}

}  // namespace

int RunDrill(const Options& options) {
  auto spec = sim::LoadDrill(options.file);
  if (!spec.ok()) return PrintError(spec.status());
  absl::StatusOr<v1::DrillReport> ran = options.live ? RunLive(*spec, options) : sim::RunDrill(*spec);
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
    std::cout << (options.live ? "live drill " : "drill ") << report.name() << ": " << report.facilities() << " facilities, " << report.links()
              << " links, " << report.elephant_flows() << " elephant flows, " << report.chains() << " chains, "
              << (options.live ? absl::StrCat(report.duration_ms(), " ms of wall time, ")
                               : absl::StrCat(report.duration_ms() / 1000, " s simulated, "))
              << report.plans()
              << " plans\n\n";
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
  if (args.operands.size() != 2 || args.operands[0] != "run") return Usage("drill takes: run FILE");
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
  if (const std::string* work_dir = args.flag("--work-dir")) {
    if (!options.live) return Usage("--work-dir is for --live");
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
      .switches = {"--live"},
      .outputs = {OutputFormat::kTable, OutputFormat::kJson, OutputFormat::kYaml},
      .usage = "drill run FILE [--live [--work-dir DIR]] [--report FILE.json] [--charts DIR] [-o table|json|yaml]\n"
               "    runs a failure drill (sim/drills/*.yaml) on the simulator with pathcomp's\n"
               "    planning, or --live on real daemons started on loopback (pathcomp, agents,\n"
               "    routerds, FRR); exits 4 when an expectation fails, saying which and why\n",
      .parse = ParseDrill,
      .access = LocalFiles,
  };
  return *spec;
}

}  // namespace geodesic::cli
