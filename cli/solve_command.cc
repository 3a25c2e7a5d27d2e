// tectl solve: pathcomp's elephant-flow allocation on a topology file, with no
// daemon, so anyone can check the solver on public data:
//   tectl solve --graph Cogentco.graph --objective mlu -o json
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <numeric>
#include <tuple>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "cli/command_spec.h"
#include "cli/commands.h"
#include "cli/output.h"
#include "cli/option_values.h"
#include "pathcomp/solver/latency_stretch.h"
#include "pathcomp/solver/mcf_solver.h"
#include "pathcomp/solver/snapshot.h"
#include "text/table.h"
#include "topology/import.h"
#include "topology/repetita.h"

namespace geodesic::cli {
namespace {

// Links listed by the table form (the busiest); -o wide lists every link.
constexpr size_t kTableLinks = 20;

// What the reader skipped goes to `warnings`, one line each.
absl::StatusOr<topology::Topology> LoadInput(const Options& options, std::vector<std::string>* warnings) {
  const bool repetita = absl::EndsWithIgnoreCase(options.graph, ".graph");
  if (!repetita) {
    if (!options.demands.empty()) {
      return absl::InvalidArgumentError(
          "--demands goes with a REPETITA .graph; other formats carry their workloads");
    }
    return topology::ImportTopology(options.graph, warnings);
  }
  std::string demands = options.demands;
  if (demands.empty()) {
    const std::string beside = absl::StrCat(
        options.graph.substr(0, options.graph.size() - std::string(".graph").size()), ".0000.demands");
    if (std::filesystem::exists(beside)) demands = beside;
  }
  return topology::LoadRepetita(options.graph, demands, warnings);
}

}  // namespace

int RunSolve(const Options& options) {
  std::vector<std::string> skipped;
  auto input = LoadInput(options, &skipped);
  for (const std::string& line : skipped) std::fprintf(stderr, "tectl: warning: %s\n", line.c_str());
  if (!input.ok()) return PrintError(input.status());

  // Offline, nothing is measured: every link counts as up.
  pathcomp::ModelView view;
  view.facilities = std::move(input->facilities);
  view.nodes = std::move(input->nodes);
  view.links = std::move(input->links);
  view.workloads = std::move(input->workloads);
  for (auto& link : view.links) link.mutable_health()->set_state(v1::OPER_STATE_UP);
  for (auto& workload : view.workloads) {
    if (workload.has_elephant()) {
      auto& flow = *workload.mutable_elephant();
      flow.set_demand_gbps(flow.demand_gbps() * options.scale);
    }
  }
  const pathcomp::Snapshot snapshot = pathcomp::Snapshot::Build(view);
  if (snapshot.demands().empty()) {
    return PrintError(absl::InvalidArgumentError(
        absl::StrCat(options.graph, ": no demands to route (no elephant flows",
                     absl::EndsWithIgnoreCase(options.graph, ".graph") ? ", and no .demands file" : "",
                     ")")));
  }
  pathcomp::McfProblem problem = pathcomp::McfProblemFromSnapshot(snapshot);
  pathcomp::McfClassPolicy& policy = problem.policies.default_policy;
  policy.objective = options.objective == SolveObjective::kMlu       ? pathcomp::McfObjective::kMinMaxUtilization
                     : options.objective == SolveObjective::kLatency ? pathcomp::McfObjective::kMinLatency
                                                                     : pathcomp::McfObjective::kMaxFairThroughput;
  policy.utilization_target = options.utilization_target;
  policy.mlu_slack = options.mlu_slack;
  pathcomp::McfSolver solver;
  const auto start = std::chrono::steady_clock::now();
  auto allocation = solver.Solve(problem);
  const double solve_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (!allocation.ok()) return PrintError(allocation.status());

  double total_demand = 0;
  for (const auto& commodity : problem.commodities) total_demand += commodity.demand_gbps;
  const double routed =
      std::accumulate(allocation->carried_gbps.begin(), allocation->carried_gbps.end(), 0.0);
  const std::string objective = options.objective == SolveObjective::kMlu       ? "mlu"
                                : options.objective == SolveObjective::kLatency ? "latency"
                                                                                : "total-flow";
  const pathcomp::LatencyStretch stretch = pathcomp::MeasureLatencyStretch(problem, *allocation).all;
  const double cap = allocation->classes.empty() ? 0 : allocation->classes.front().utilization_cap;

  if (options.output == OutputFormat::kJson || options.output == OutputFormat::kYaml) {
    YAML::Node document(YAML::NodeType::Map);
    document["objective"] = StringNode(objective);
    document["mlu"] = NumberNode(allocation->max_utilization);
    document["total_demand"] = NumberNode(total_demand);
    document["routed"] = NumberNode(routed);
    document["solve_ms"] = NumberNode(solve_ms);
    document["scale"] = NumberNode(options.scale);
    document["unit"] = StringNode("Gbps");
    if (!allocation->classes.empty() && options.objective != SolveObjective::kTotalFlow) {
      document["mlu_lower_bound"] = NumberNode(allocation->classes.front().utilization_lower_bound);
    }
    if (options.objective == SolveObjective::kLatency) document["utilization_cap"] = NumberNode(cap);
    document["mean_stretch"] = NumberNode(stretch.mean);
    document["p95_stretch"] = NumberNode(stretch.p95);
    document["mean_latency_us"] = NumberNode(stretch.mean_latency_us);
    document["facilities"] = NumberNode(snapshot.facility_count());
    document["demands"] = NumberNode(static_cast<double>(problem.commodities.size()));
    document["unroutable_demands"] = NumberNode(static_cast<double>(allocation->unroutable.size()));
    YAML::Node links(YAML::NodeType::Sequence);
    for (int link = 0; link < snapshot.link_count(); ++link) {
      YAML::Node entry(YAML::NodeType::Map);
      entry["id"] = StringNode(snapshot.link_id(link));
      entry["src"] = StringNode(snapshot.facility_id(snapshot.link_src(link)));
      entry["dst"] = StringNode(snapshot.facility_id(snapshot.link_dst(link)));
      entry["load"] = NumberNode(allocation->arc_load_gbps[link]);
      entry["capacity"] = NumberNode(snapshot.link_capacity_gbps(link));
      links.push_back(entry);
    }
    document["links"] = links;
    PrintDocument(document, options.output);
    return 0;
  }

  std::cout << "objective " << objective << "  MLU " << FormatNumber(allocation->max_utilization)
            << "  demand " << FormatNumber(total_demand) << " Gbps  routed " << FormatNumber(routed)
            << " Gbps  (" << snapshot.facility_count() << " facilities, " << snapshot.link_count()
            << " links, " << problem.commodities.size() << " demands, solved in "
            << FormatNumber(solve_ms) << " ms)\n";
  std::cout << "latency stretch: mean " << FormatNumber(stretch.mean) << "  p95 " << FormatNumber(stretch.p95)
            << "  (mean path latency " << FormatNumber(stretch.mean_latency_us / 1000) << " ms)";
  if (options.objective == SolveObjective::kLatency) {
    std::cout << "  links within " << FormatNumber(cap) << " utilization";
  }
  std::cout << "\n";
  if (!allocation->unroutable.empty()) {
    std::cout << allocation->unroutable.size() << " demands have no path\n";
  }
  std::vector<int> order(snapshot.link_count());
  std::iota(order.begin(), order.end(), 0);
  auto utilization = [&](int link) {
    const double capacity = snapshot.link_capacity_gbps(link);
    return capacity > 0 ? allocation->arc_load_gbps[link] / capacity : 0.0;
  };
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return utilization(a) > utilization(b); });
  if (options.output == OutputFormat::kTable && order.size() > kTableLinks) {
    std::cout << "busiest " << kTableLinks << " links (-o wide for all):\n";
    order.resize(kTableLinks);
  }
  text::Table table({"LINK", "FROM", "TO", "LOAD_GBPS", "CAPACITY_GBPS", "UTILIZATION"});
  for (int link : order) {
    table.Add({snapshot.link_id(link), snapshot.facility_id(snapshot.link_src(link)),
               snapshot.facility_id(snapshot.link_dst(link)),
               FormatNumber(allocation->arc_load_gbps[link]),
               FormatNumber(snapshot.link_capacity_gbps(link)), FormatNumber(utilization(link))});
  }
  std::cout << table.Render();
  return 0;
}

namespace {

absl::Status ParseSolve(const CommandArgs& args, Options& options) {
  if (!args.operands.empty()) return Usage("solve takes no operands: give --graph FILE");
  const std::string* graph = args.flag("--graph");
  if (graph == nullptr) return Usage("solve needs --graph FILE");
  options.graph = *graph;
  if (const std::string* demands = args.flag("--demands")) options.demands = *demands;
  if (!IsOneLine(options.graph) || !IsOneLine(options.demands)) return Usage("file names must be one line");
  if (const std::string* objective = args.flag("--objective")) {
    if (*objective == "mlu") {
      options.objective = SolveObjective::kMlu;
    } else if (*objective == "latency") {
      options.objective = SolveObjective::kLatency;
    } else if (*objective == "total-flow") {
      options.objective = SolveObjective::kTotalFlow;
    } else {
      return Usage(absl::StrCat("--objective must be mlu, latency or total-flow, not ", Quoted(*objective)));
    }
  }
  // The latency objective's cap: max(target, (1 + slack) x the optimal MLU).
  for (const auto& [flag, value, low, high] :
       {std::tuple{"--utilization-target", &options.utilization_target, 0.01, 10.0},
        std::tuple{"--mlu-slack", &options.mlu_slack, 0.0, 10.0}}) {
    const std::string* text = args.flag(flag);
    if (text == nullptr) continue;
    if (options.objective != SolveObjective::kLatency) {
      return Usage(absl::StrCat(flag, " goes with --objective latency"));
    }
    double parsed = 0;
    if (!absl::SimpleAtod(*text, &parsed) || !std::isfinite(parsed) || parsed < low || parsed > high) {
      return Usage(absl::StrCat(flag, " must be a number in [", low, ", ", high, "], not ", Quoted(*text)));
    }
    *value = parsed;
  }
  if (const std::string* scale = args.flag("--scale")) {
    double value = 0;
    if (!absl::SimpleAtod(*scale, &value) || !std::isfinite(value) || value <= 0 || value > 1e6) {
      return Usage(absl::StrCat("--scale must be a number in (0, 1e6], not ", Quoted(*scale)));
    }
    options.scale = value;
  }
  return absl::OkStatus();
}

}  // namespace

const CommandSpec& SolveCommandSpec() {
  static const auto* spec = new CommandSpec{
      .name = "solve",
      .command = Command::kSolve,
      .flags = {"--graph", "--demands", "--objective", "--scale", "--utilization-target", "--mlu-slack"},
      .outputs = {OutputFormat::kTable, OutputFormat::kWide, OutputFormat::kJson, OutputFormat::kYaml},
      .usage = "solve --graph FILE [--demands FILE] [--objective mlu|latency|total-flow] [--scale S]\n"
               "      [--utilization-target T] [--mlu-slack X] [-o ...]\n"
               "    the elephant-flow allocation, offline (every link up; FILE in any import\n"
               "    format; S in (0, 1e6], default 1). latency: the shortest paths that keep\n"
               "    every link within max(T, (1 + X) x the optimal MLU); T in [0.01, 10],\n"
               "    default 0.8; X in [0, 10], default 0.01\n",
      .parse = ParseSolve,
      .access = LocalFiles,
  };
  return *spec;
}

}  // namespace geodesic::cli
