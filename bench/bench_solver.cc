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
//   mcf_latency_stretch_<net>, mcf_latency_stretch_p95_<net>
//                             the mean / p95 latency stretch (path latency
//                             over shortest-path latency, weighted by Gbps)
//                             of the kMinLatency objective at the file's own
//                             load; reference: the kMinMaxUtilization
//                             objective's on the same demands.
//   mcf_latency_stretch_half_<net>, mcf_latency_stretch_p95_half_<net>
//                             the same with the demands scaled so the MLU
//                             optimum is 0.45 (the links have room).
//   mcf_latency_solve_<net>   the kMinLatency Solve (MLU, then the latency
//                             LP); reference: the edge LP's latency LP
//                             under the same cap, cold.
//   mcf_latency_objective_<net>
//                             sum(load x latency) the solver reaches;
//                             reference: the edge LP's (ratio - 1 = gap).
//                             A link over the cap fails the bench.
//   protected_links_plan_<net>
//                             BuildPlan with a latency class protected
//                             against every fiber cut (demands scaled to an
//                             MLU optimum of 0.5): the check of every single
//                             cut with the plan's own backups, and the rounds
//                             of failure limits until it passes, held to
//                             pathcomp's default protection budget (30 s);
//                             reference: the same build unprotected.
//   protected_links_mlu_<net> that plan's MLU; reference: the unprotected
//                             plan's (ratio - 1: what protection costs). The
//                             worst utilization after a cut is printed
//                             beside, and when no allocation protects the
//                             class, the failure that makes it impossible.
//
// Generated networks (topology::GenerateSyntheticWan, seed 1): wan500,
// wan1000 and wan2000, with 50,000 gravity demands (wan<N>_<flows> for
// another count), where the exact edge LP does not finish in the bench's
// time (it has sources x arcs columns: 1,000 x 7,000 = 7 M):
//   mcf_full_solve_<net>      Solve from scratch; reference: none to run, so
//                             the solve itself (ratio 1), printed for the time.
//   mcf_mlu_<net>             the MLU reached; reference: the lower bound the
//                             solver proves (Lagrangian; ratio - 1 bounds the gap).
//   mcf_resolve_link_failure_<net>
//                             the median warm Resolve over 20 single-link
//                             failures drawn (seeded) among the loaded links,
//                             each from the intact state; reference: the cold
//                             solve of the intact network (a cold solve of a
//                             failed one does the same work).
//   mcf_latency_*_<net>       as above but against the MLU objective only.
//   protected_links_*_<net>   as above, only with GEODESIC_BENCH_PROTECT_GENERATED=1
//                             (minutes each: on wan1000 the unprotected plan
//                             alone takes 140 s and the check of 1,840 cuts 70 s;
//                             wan500's rounds stop at the 30 s budget; wan2000's
//                             plan outgrew 24 GB).
//
// No result is asserted: machines are shared and noisy. Prints one line per
// result:
//   BENCH <name>: ours=<value><unit> <reference>=<value><unit> ratio=<ours/reference>
// The networks to run (default: the eight and the three generated): the arguments, or else a comma-
// separated list in GEODESIC_BENCH_NETWORKS (e.g. Deltacom,UsCarrier), which
// also works through `make bench`. GEODESIC_BENCH_VERBOSE=1 prints every
// failure's times to stderr.
#include <algorithm>
#include <chrono>
#include <random>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "bench/bench_report.h"
#include "daemon/allocator.h"
#include "daemon/clock.h"
#include "pathcomp/solver/edge_lp.h"
#include "pathcomp/solver/latency_stretch.h"
#include "pathcomp/solver/mcf_problem.h"
#include "pathcomp/solver/mcf_solver.h"
#include "pathcomp/solver/plan_builder.h"
#include "pathcomp/solver/protection.h"
#include "pathcomp/solver/snapshot.h"
#include "topology/repetita.h"
#include "topology/synthetic_wan.h"

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

const char* const kNetworks[] = {"Abilene", "Geant2009", "AttMpls",   "Esnet",    "Deltacom",
                                 "GtsCe",   "UsCarrier", "Cogentco", "wan500", "wan1000", "wan2000"};
constexpr int kGeneratedFailures = 20;
constexpr uint32_t kGeneratedFlows = 50'000;

pathcomp::Snapshot SnapshotOf(topology::Topology topology) {
  pathcomp::ModelView model;
  model.facilities = std::move(topology.facilities);
  model.nodes = std::move(topology.nodes);
  model.links = std::move(topology.links);
  model.workloads = std::move(topology.workloads);
  for (v1::Link& link : model.links) link.mutable_health()->set_state(v1::OPER_STATE_UP);
  return pathcomp::Snapshot::Build(model);
}

McfProblem ProblemOf(topology::Topology topology) {
  return pathcomp::McfProblemFromSnapshot(SnapshotOf(std::move(topology)));
}

// "wan<facilities>" or "wan<facilities>_<flows>": a generated network.
bool ParseGenerated(const std::string& name, uint32_t& facilities, uint32_t& flows) {
  if (!name.starts_with("wan")) return false;
  const std::vector<std::string> parts = absl::StrSplit(name.substr(3), '_');
  flows = kGeneratedFlows;
  return !parts.empty() && parts.size() <= 2 && absl::SimpleAtoi(parts[0], &facilities) &&
         (parts.size() == 1 || absl::SimpleAtoi(parts[1], &flows));
}

// The network's inventory and demands: generated, or from the shared files.
topology::Topology LoadTopology(const std::string& network) {
  absl::StatusOr<topology::Topology> topology;
  if (uint32_t facilities = 0, flows = 0; ParseGenerated(network, facilities, flows)) {
    topology::SyntheticWanOptions options;
    options.facilities = facilities;
    options.elephant_flows = flows;
    topology = topology::GenerateSyntheticWan(options);
  } else {
    const std::string base = RepetitaDir(".") + "/" + network;
    topology = topology::LoadRepetita(base + ".graph", base + ".0000.demands");
  }
  if (!topology.ok()) {
    std::fprintf(stderr, "bench_solver: %s: %s\n", network.c_str(), topology.status().ToString().c_str());
    std::exit(1);
  }
  return *std::move(topology);
}

// The network as the service sees it: model -> Snapshot -> problem, every
// link measured up.
McfProblem Load(const std::string& network) { return ProblemOf(LoadTopology(network)); }


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

double LatencyOf(const McfProblem& problem, const McfAllocation& allocation) {
  double total = 0;
  for (size_t a = 0; a < problem.arcs.size(); ++a) total += allocation.arc_load_gbps[a] * problem.arcs[a].cost_us;
  return total;
}

// The latency objective beside the MLU objective at the file's load and at
// half of it (MLU optimum 0.45).
void RunLatency(const std::string& suffix, const McfProblem& problem, double optimal_mlu, bool with_edge_lp = true) {
  for (const bool half : {false, true}) {
    McfProblem scaled = problem;
    if (half) {
      for (pathcomp::McfCommodity& commodity : scaled.commodities) commodity.demand_gbps *= 0.45 / optimal_mlu;
    }
    const std::string name = absl::StrCat(half ? "half_" : "", suffix);
    const McfAllocation mlu = Check(McfSolver().Solve(scaled), "mlu solve");
    scaled.policies.default_policy.objective = McfObjective::kMinLatency;
    McfAllocation latency;
    const double ours_ms = MedianMs([&] { latency = Check(McfSolver().Solve(scaled), "latency solve"); });
    const double cap = latency.classes.at(0).utilization_cap;
    for (size_t a = 0; a < scaled.arcs.size(); ++a) {
      const double capacity = scaled.arcs[a].capacity_gbps;
      if (capacity > 0 && latency.arc_load_gbps[a] > cap * capacity * (1 + 1e-6)) {
        std::fprintf(stderr, "bench_solver: %s: arc %zu at %.6f over the latency cap %.6f\n", name.c_str(), a,
                     latency.arc_load_gbps[a] / capacity, cap);
        std::exit(1);
      }
    }
    const pathcomp::LatencyStretch ours = pathcomp::MeasureLatencyStretch(scaled, latency).all;
    const pathcomp::LatencyStretch theirs = pathcomp::MeasureLatencyStretch(scaled, mlu).all;
    Report(absl::StrCat("mcf_latency_stretch_", name), ours.mean, "mlu_objective", theirs.mean, "");
    Report(absl::StrCat("mcf_latency_stretch_p95_", name), ours.p95, "mlu_objective", theirs.p95, "");
    if (half || !with_edge_lp) continue;
    pathcomp::EdgeLpResult exact;
    const double lp_ms =
        MedianMs([&] { exact = Check(pathcomp::SolveEdgeLpLatencyUnderCap(scaled, cap), "edge latency LP"); });
    Report(absl::StrCat("mcf_latency_solve_", name), ours_ms, "clp_edge_lp", lp_ms, "ms");
    Report(absl::StrCat("mcf_latency_objective_", name), LatencyOf(scaled, latency), "clp_edge_lp",
           exact.latency_gbps_us, "Gbps*us");
  }
}

void RunProtected(const std::string& network, const std::string& suffix, double optimal_mlu);

// A generated network: no edge LP (see the header), the proven bound instead;
// warm re-solves after kGeneratedFailures seeded random link failures.
void RunGenerated(const std::string& network, const McfProblem& problem) {
  const std::string suffix = absl::AsciiStrToLower(network);
  McfSolver solver;
  const auto start = std::chrono::steady_clock::now();
  const McfAllocation allocation = Check(solver.Solve(problem), "solve");
  const double cold_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  std::fprintf(stderr, "bench_solver: %s: %d facilities, %zu links, %zu demands, %d LP solves, %d columns\n",
               network.c_str(), problem.node_count, problem.arcs.size(), problem.commodities.size(),
               allocation.stats.lp_solves, allocation.stats.columns);
  Report(absl::StrCat("mcf_full_solve_", suffix), cold_ms, "itself", cold_ms, "ms");
  Report(absl::StrCat("mcf_mlu_", suffix), allocation.max_utilization, "proven_lower_bound",
         allocation.classes.at(0).utilization_lower_bound, "");
  std::vector<int> loaded;
  for (size_t a = 0; a < allocation.arc_load_gbps.size(); ++a) {
    if (allocation.arc_load_gbps[a] > 0) loaded.push_back(static_cast<int>(a));
  }
  std::mt19937_64 random(1);
  std::vector<double> warm_ms;
  for (int i = 0; i < kGeneratedFailures && !loaded.empty(); ++i) {
    const int arc = loaded[random() % loaded.size()];
    McfProblem failed = problem;
    failed.arcs[arc].capacity_gbps = 0;
    const auto before = std::chrono::steady_clock::now();
    const McfAllocation warm = Check(solver.Resolve(failed), "resolve");
    warm_ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - before).count());
    if (std::getenv("GEODESIC_BENCH_VERBOSE") != nullptr) {
      std::fprintf(stderr, "  %s arc %d: warm %.3f ms (%s, %d LP solves), MLU %.5f\n", network.c_str(), arc,
                   warm_ms.back(), warm.stats.absorbed_phases > 0 ? "absorbed" : "column generation",
                   warm.stats.lp_solves, warm.max_utilization);
    }
    Check(solver.Resolve(problem), "restore");
  }
  Report(absl::StrCat("mcf_resolve_link_failure_", suffix), Median(warm_ms), "cold_solve", cold_ms, "ms");
  RunLatency(suffix, problem, allocation.max_utilization, /*with_edge_lp=*/false);
  if (std::getenv("GEODESIC_BENCH_PROTECT_GENERATED") != nullptr) {
    RunProtected(network, suffix, allocation.max_utilization);
  }
}

// A latency class protected against every fiber cut, at half load, planned
// whole (BuildPlan: allocation, routes, the check, the rounds).
void RunProtected(const std::string& network, const std::string& suffix, double optimal_mlu) {
  topology::Topology topology = LoadTopology(network);
  for (v1::Workload& workload : topology.workloads) {
    if (workload.has_elephant()) {
      workload.mutable_elephant()->set_demand_gbps(workload.elephant().demand_gbps() * 0.5 / optimal_mlu);
    }
  }
  const pathcomp::Snapshot snapshot = SnapshotOf(std::move(topology));
  pathcomp::McfClassPolicies protected_policies;
  protected_policies.default_policy.objective = McfObjective::kMinLatency;
  protected_policies.default_policy.protection = pathcomp::ProtectionKind::kLinks;
  {
    // How close a facility comes to having no room for its own traffic after a cut.
    const pathcomp::ProtectionChecker checker(snapshot, protected_policies);
    for (const pathcomp::FacilityCut& cut : checker.TightestFacilityCuts()) {
      std::fprintf(stderr, "  %s tightest facility cut (%.3f of the room): %s\n", network.c_str(),
                   cut.room_gbps > 0 ? cut.gbps / cut.room_gbps : 0.0, cut.Describe(snapshot, checker.failures()).c_str());
    }
  }
  pathcomp::McfClassPolicies plain = protected_policies;
  plain.default_policy.protection = pathcomp::ProtectionKind::kNone;
  // As pathcomp plans: the rounds held to its default budget.
  auto build = [&](const pathcomp::McfClassPolicies& policies) {
    pathcomp::ElephantAllocator allocator(0, policies);
    return pathcomp::BuildPlan(snapshot, pathcomp::PlanStamp{}, allocator, nullptr, nullptr, {}, 1,
                               daemon::StopAfter(pathcomp::kDefaultProtectionBudget));
  };
  const auto start = std::chrono::steady_clock::now();
  const pathcomp::BuiltPlan ours = build(protected_policies);
  const double ours_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  const auto plain_start = std::chrono::steady_clock::now();
  const pathcomp::BuiltPlan theirs = build(plain);
  const double plain_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - plain_start).count();
  if (ours.plan.elephants().classes().empty()) {
    std::fprintf(stderr, "bench_solver: %s: the protected plan has no elephant class\n", network.c_str());
    std::exit(1);
  }
  const v1::ElephantClass& cls = ours.plan.elephants().classes(0);
  std::fprintf(stderr,
               "  %s protected (links): failure-safe %s over %u cuts, worst after a cut %.3f (%s, %s), %u limits; "
               "unprotected MLU %.3f%s%s\n",
               network.c_str(), cls.failure_safe() ? "yes" : "NO", cls.failures_checked(),
               cls.max_utilization_after_failure(), cls.worst_failure().c_str(), cls.worst_failure_link().c_str(),
               cls.failure_limits(), cls.unprotected_max_utilization(), cls.protection_problem().empty() ? "" : ", ",
               cls.protection_problem().c_str());
  Report(absl::StrCat("protected_links_plan_", suffix), ours_ms, "unprotected_plan", plain_ms, "ms");
  Report(absl::StrCat("protected_links_mlu_", suffix), ours.plan.elephants().max_utilization(), "unprotected",
         theirs.plan.elephants().max_utilization(), "");
  // Not failure-safe is a finding (printed above, with the failure no
  // allocation survives); claiming it while a cut overloads a link is a bug.
  if (cls.failure_safe() && cls.max_utilization_after_failure() > cls.protection_limit() * (1 + 1e-6)) {
    std::fprintf(stderr, "bench_solver: %s: the plan says failure-safe but a cut puts a link at %.3f\n",
                 network.c_str(), cls.max_utilization_after_failure());
    std::exit(1);
  }
}

void Run(const std::string& network) {
  const McfProblem problem = Load(network);
  if (uint32_t facilities = 0, flows = 0; ParseGenerated(network, facilities, flows)) {
    RunGenerated(network, problem);
    return;
  }
  const std::string suffix = absl::AsciiStrToLower(network);

  McfAllocation allocation;
  const double ours_ms = MedianMs([&] { allocation = Check(McfSolver().Solve(problem), "solve"); });
  pathcomp::EdgeLpResult exact;
  const double lp_ms = MedianMs([&] {
    exact = Check(pathcomp::SolveEdgeLp(problem, McfObjective::kMinMaxUtilization), "edge LP");
  });
  Report(absl::StrCat("mcf_full_solve_", suffix), ours_ms, "clp_edge_lp", lp_ms, "ms");
  Report(absl::StrCat("mcf_mlu_", suffix), allocation.max_utilization, "clp_edge_lp", exact.max_utilization, "");
  RunLatency(suffix, problem, exact.max_utilization);
  RunProtected(network, suffix, exact.max_utilization);

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
