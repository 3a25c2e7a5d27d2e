// tectl drill run FILE: a failure drill on the simulator (sim/drill), its
// events and expectations as a table (or the whole report as JSON/YAML), the
// report and SVG charts written where asked.
#include <filesystem>
#include <fstream>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "cli/commands.h"
#include "cli/output.h"
#include "cli/table.h"
#include "sim/drill/drill_charts.h"
#include "sim/drill/simulator.h"

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

}  // namespace

int RunDrill(const Options& options) {
  auto spec = sim::LoadDrill(options.file);
  if (!spec.ok()) return PrintError(spec.status());
  const v1::DrillReport report = sim::RunDrill(*spec);
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
    std::cout << "drill " << report.name() << ": " << report.facilities() << " facilities, " << report.links()
              << " links, " << report.elephant_flows() << " elephant flows, " << report.chains() << " chains, "
              << report.duration_ms() / 1000 << " s simulated, " << report.plans() << " plans\n\n";
    Table events({"AT_MS", "EVENT", "AFFECTED", "REPAIRED_MS", "REPLANNED_MS", "MAX_OUTAGE_MS", "CARRIED", "MLU",
                  "P99_MS", "CUT", "ROUTES"});
    for (const auto& event : report.events()) {
      events.Add({absl::StrCat(event.at_ms()), event.event(), absl::StrCat(event.affected_workload_ids_size()),
                  Ms(event.repaired_at_ms()), Ms(event.replanned_at_ms()), absl::StrCat(event.max_chain_outage_ms()),
                  absl::StrFormat("%.3f", event.carried_ratio_after()), absl::StrFormat("%.3f", event.mlu_after()),
                  absl::StrFormat("%.1f", event.chain_latency_p99_us() / 1000.0),
                  absl::StrCat(event.cut_workload_ids_size()), absl::StrCat(event.routes_changed())});
    }
    std::cout << events.Render() << "\n";
    Table expectations({"EXPECTATION", "RESULT", "DETAIL"});
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

}  // namespace geodesic::cli
