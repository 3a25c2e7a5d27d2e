// The elephant-flow allocation (pathcomp/solver McfSolver) against the exact
// edge-based LP solved by COIN-OR CLP, on the REPETITA networks of
// ../shared/data with their .0000.demands, measured in the same run:
//
//   mcf_full_solve_<net>      McfSolver::Solve from scratch; reference: a
//                             cold CLP solve of the edge LP (per-source
//                             aggregated, presolve + dual simplex).
//   mcf_mlu_<net>             the max link utilization McfSolver reaches;
//                             reference: the LP optimum (ratio - 1 = gap).
//   mcf_resolve_link_failure_<net>
//                             McfSolver::Resolve after one link fails,
//                             warm from the intact network's solve;
//                             reference: Solve of the same failed network
//                             by a fresh solver. Median over kFailures
//                             links spread over the loaded ones; each is
//                             timed from the intact state (the link comes
//                             back, untimed, before every repetition).
//
// No result is asserted: machines are shared and noisy. Prints one line per
// result:
//   BENCH <name>: ours=<value><unit> <reference>=<value><unit> ratio=<ours/reference>
// The networks to run (default: all eight): the arguments, or else a comma-
// separated list in GEODESIC_BENCH_NETWORKS (e.g. Deltacom,UsCarrier), which
// also works through `make bench`. GEODESIC_BENCH_VERBOSE=1 prints every
// failure's times to stderr.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "bench/bench_report.h"
#include "daemon/allocator.h"
#include "pathcomp/solver/edge_lp.h"
#include "pathcomp/solver/mcf_problem.h"
#include "pathcomp/solver/mcf_solver.h"
#include "pathcomp/solver/snapshot.h"
#include "topology/repetita.h"

namespace geodesic::bench {
namespace {

using pathcomp::McfAllocation;
using pathcomp::McfObjective;
using pathcomp::McfProblem;
using pathcomp::McfSolver;

constexpr int kFailures = 7;
// Small networks solve in microseconds to milliseconds: repeat them so the
// median means something (bounded by kRepetitionBudget per measurement).
constexpr int kMaxRepetitions = 9;
constexpr std::chrono::milliseconds kRepetitionBudget(2000);

const char* const kNetworks[] = {"Abilene", "Geant2009", "AttMpls",   "Esnet",
                                 "Deltacom", "GtsCe",    "UsCarrier", "Cogentco"};

// The network as the service sees it: model -> Snapshot -> problem, every
// link measured up.
McfProblem Load(const std::string& network) {
  const std::string base = RepetitaDir(".") + "/" + network;
  auto topology = topology::LoadRepetita(base + ".graph", base + ".0000.demands");
  if (!topology.ok()) {
    std::fprintf(stderr, "bench_solver: %s\n", topology.status().ToString().c_str());
    std::exit(1);
  }
  pathcomp::ModelView model;
  model.facilities = topology->facilities;
  model.nodes = topology->nodes;
  model.links = topology->links;
  model.workloads = topology->workloads;
  for (v1::Link& link : model.links) link.mutable_health()->set_state(v1::OPER_STATE_UP);
  return pathcomp::McfProblemFromSnapshot(pathcomp::Snapshot::Build(model));
}

template <typename T>
T Check(absl::StatusOr<T> result, const char* what) {
  if (!result.ok()) {
    std::fprintf(stderr, "bench_solver: %s: %s\n", what, result.status().ToString().c_str());
    std::exit(1);
  }
  return *std::move(result);
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

// Median wall time of `run` in ms, repeated while cheap.
template <typename Run>
double MedianMs(Run run) {
  std::vector<double> times;
  const auto start = std::chrono::steady_clock::now();
  while (times.size() < kMaxRepetitions &&
         (times.empty() || std::chrono::steady_clock::now() - start < kRepetitionBudget)) {
    const auto before = std::chrono::steady_clock::now();
    run();
    times.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - before).count());
  }
  return Median(times);
}

void Report(const std::string& name, double ours, const char* reference, double theirs, const char* unit) {
  std::printf("BENCH %s: ours=%.6g%s %s=%.6g%s ratio=%.4f\n", name.c_str(), ours, unit, reference, theirs, unit,
              theirs > 0 ? ours / theirs : 0.0);
  std::fflush(stdout);
}

// kFailures loaded arcs, spread evenly from the busiest to the least busy.
std::vector<int> FailureArcs(const McfAllocation& allocation) {
  std::vector<int> loaded;
  for (size_t a = 0; a < allocation.arc_load_gbps.size(); ++a) {
    if (allocation.arc_load_gbps[a] > 0) loaded.push_back(static_cast<int>(a));
  }
  std::sort(loaded.begin(), loaded.end(), [&](int x, int y) {
    return allocation.arc_load_gbps[x] > allocation.arc_load_gbps[y];
  });
  std::vector<int> chosen;
  for (int i = 0; i < kFailures && !loaded.empty(); ++i) {
    chosen.push_back(loaded[i * (loaded.size() - 1) / std::max(1, kFailures - 1)]);
  }
  return chosen;
}

void Run(const std::string& network) {
  const McfProblem problem = Load(network);
  const std::string suffix = absl::AsciiStrToLower(network);

  McfAllocation allocation;
  const double ours_ms = MedianMs([&] { allocation = Check(McfSolver().Solve(problem), "solve"); });
  pathcomp::EdgeLpResult exact;
  const double lp_ms = MedianMs([&] {
    exact = Check(pathcomp::SolveEdgeLp(problem, McfObjective::kMinMaxUtilization), "edge LP");
  });
  Report(absl::StrCat("mcf_full_solve_", suffix), ours_ms, "clp_edge_lp", lp_ms, "ms");
  Report(absl::StrCat("mcf_mlu_", suffix), allocation.max_utilization, "clp_edge_lp", exact.max_utilization, "");

  McfSolver solver;
  Check(solver.Solve(problem), "solve");
  std::vector<double> warm_ms, cold_ms;
  for (int arc : FailureArcs(allocation)) {
    McfProblem failed = problem;
    failed.arcs[arc].capacity_gbps = 0;
    // Each repetition starts from the intact network's state (restored,
    // untimed), so every timed Resolve does the same work.
    std::vector<double> times;
    McfAllocation warm;
    const auto start = std::chrono::steady_clock::now();
    while (times.size() < kMaxRepetitions &&
           (times.empty() || std::chrono::steady_clock::now() - start < kRepetitionBudget)) {
      const auto before = std::chrono::steady_clock::now();
      warm = Check(solver.Resolve(failed), "resolve");
      times.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - before).count());
      Check(solver.Resolve(problem), "restore");
    }
    warm_ms.push_back(Median(times));
    cold_ms.push_back(MedianMs([&] { Check(McfSolver().Solve(failed), "solve failed"); }));
    if (std::getenv("GEODESIC_BENCH_VERBOSE") != nullptr) {
      std::fprintf(stderr, "  %s arc %d (%.3g Gbps): warm %.3f ms (%s, %d LP solves) cold %.3f ms, MLU %.5f\n",
                   network.c_str(), arc, allocation.arc_load_gbps[arc], warm_ms.back(),
                   warm.stats.absorbed_phases > 0 ? "absorbed" : "column generation", warm.stats.lp_solves,
                   cold_ms.back(), warm.max_utilization);
    }
  }
  Report(absl::StrCat("mcf_resolve_link_failure_", suffix), Median(warm_ms), "cold_solve", Median(cold_ms), "ms");
}

}  // namespace
}  // namespace geodesic::bench

int main(int argc, char** argv) {
  geodesic::daemon::KeepFreedMemoryForReuse();  // as pathcomp's main does (the solver runs there)
  std::vector<std::string> networks(argv + 1, argv + argc);
  if (const char* subset = std::getenv("GEODESIC_BENCH_NETWORKS"); networks.empty() && subset != nullptr) {
    networks = absl::StrSplit(subset, ',', absl::SkipEmpty());
  }
  if (networks.empty()) networks.assign(std::begin(geodesic::bench::kNetworks), std::end(geodesic::bench::kNetworks));
  for (const std::string& network : networks) geodesic::bench::Run(network);
  return 0;
}
