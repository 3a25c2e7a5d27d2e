// Protected classes in the MCF solver (McfProblem::protection): loads that
// must hold after failures under a linear model of the routers' repair. The
// tests hold the solver to an LP over every simple path with the same
// post-failure loads, written here from the model's definition (not the
// solver's code), and run the lazy loop a planner runs on a shared network:
// solve, find every limit a single link failure breaks, add it, re-solve.
#include <ClpSimplex.hpp>

#include <cmath>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "pathcomp/solver/internal/failure_loads.h"
#include "pathcomp/solver/mcf_problem.h"
#include "pathcomp/solver/mcf_solver.h"
#include "tests/pathcomp/mcf_testing.h"

namespace geodesic::pathcomp {
namespace {

using testing::FlowProblem;
using testing::UnroutedDemand;

// What one unit of flow on `path` (arcs) toward `dst` loads on each arc after
// `failure`: the path until its first down arc, then from the arc's tail the
// reroute toward dst there, or without one the lowest-cost path around the
// failure (by hop-weighted cost).
std::map<int, double> LoadsAfter(const McfProblem& problem, const McfFailure& failure, const std::vector<int>& path,
                                 int dst) {
  std::map<int, double> loads;
  for (int arc : path) {
    const int node = problem.arcs[arc].src;
    if (std::find(failure.arcs.begin(), failure.arcs.end(), arc) != failure.arcs.end()) {
      for (const McfReroute& reroute : failure.reroutes) {
        if (reroute.node == node && reroute.dst == dst) {
          for (const auto& [to, load] : reroute.arc_load) loads[to] += load;
          return loads;
        }
      }
      // Bellman-Ford: the graphs here are small.
      const size_t n = problem.node_count;
      std::vector<double> cost(n, INFINITY);
      std::vector<int> via(n, -1);
      cost[node] = 0;
      for (size_t round = 0; round < n; ++round) {
        for (size_t a = 0; a < problem.arcs.size(); ++a) {
          const McfArc& candidate = problem.arcs[a];
          if (candidate.capacity_gbps <= 0 ||
              std::find(failure.arcs.begin(), failure.arcs.end(), static_cast<int>(a)) != failure.arcs.end()) {
            continue;
          }
          if (cost[candidate.src] + candidate.cost_us + 1e-3 < cost[candidate.dst]) {
            cost[candidate.dst] = cost[candidate.src] + candidate.cost_us + 1e-3;
            via[candidate.dst] = static_cast<int>(a);
          }
        }
      }
      for (int at = dst; via[at] >= 0 && at != node; at = problem.arcs[via[at]].src) loads[via[at]] += 1;
      return loads;
    }
    loads[arc] += 1;
  }
  return loads;
}

// Every simple path from src to dst over usable arcs.
void SimplePaths(const McfProblem& problem, int at, int dst, std::vector<char>& visited, std::vector<int>& path,
                 std::vector<std::vector<int>>& out) {
  if (at == dst) {
    out.push_back(path);
    return;
  }
  visited[at] = 1;
  for (size_t a = 0; a < problem.arcs.size(); ++a) {
    const McfArc& arc = problem.arcs[a];
    if (arc.src != at || arc.capacity_gbps <= 0 || visited[arc.dst]) continue;
    path.push_back(static_cast<int>(a));
    SimplePaths(problem, arc.dst, dst, visited, path, out);
    path.pop_back();
  }
  visited[at] = 0;
}

// The least MLU of a one-class problem with its failure limits held, over
// every simple path (CLP); INFINITY when no allocation holds them.
double ExactProtectedMlu(const McfProblem& problem) {
  struct Column {
    int commodity;
    std::vector<int> arcs;
  };
  std::vector<Column> columns;
  for (size_t c = 0; c < problem.commodities.size(); ++c) {
    std::vector<char> visited(problem.node_count, 0);
    std::vector<int> path;
    std::vector<std::vector<int>> paths;
    SimplePaths(problem, problem.commodities[c].src, problem.commodities[c].dst, visited, path, paths);
    for (auto& arcs : paths) columns.push_back({static_cast<int>(c), std::move(arcs)});
  }
  const std::vector<McfFailureLimit>& limits = problem.protection.limits.begin()->second;
  const int arcs = static_cast<int>(problem.arcs.size());
  const int commodities = static_cast<int>(problem.commodities.size());
  // Rows: arcs (load - cap U <= 0), commodities (= demand), limits (<= limit).
  const int rows = arcs + commodities + static_cast<int>(limits.size());
  std::vector<double> row_lower(rows, -COIN_DBL_MAX), row_upper(rows, 0);
  for (int c = 0; c < commodities; ++c) row_lower[arcs + c] = row_upper[arcs + c] = problem.commodities[c].demand_gbps;
  for (size_t l = 0; l < limits.size(); ++l) row_upper[arcs + commodities + l] = limits[l].limit_gbps;
  std::vector<int> starts{0}, index;
  std::vector<double> values, cost, column_lower, column_upper;
  // U first.
  for (int a = 0; a < arcs; ++a) {
    if (problem.arcs[a].capacity_gbps <= 0) continue;
    index.push_back(a);
    values.push_back(-problem.arcs[a].capacity_gbps);
  }
  starts.push_back(static_cast<int>(index.size()));
  cost.push_back(1);
  column_lower.push_back(0);
  column_upper.push_back(COIN_DBL_MAX);
  for (const Column& column : columns) {
    std::map<int, double> entries;
    for (int arc : column.arcs) entries[arc] += 1;
    entries[arcs + column.commodity] += 1;
    const int dst = problem.commodities[column.commodity].dst;
    for (size_t l = 0; l < limits.size(); ++l) {
      const auto after = LoadsAfter(problem, problem.protection.failures[limits[l].failure], column.arcs, dst);
      if (auto it = after.find(limits[l].arc); it != after.end()) entries[arcs + commodities + l] += it->second;
    }
    for (const auto& [row, value] : entries) {
      index.push_back(row);
      values.push_back(value);
    }
    starts.push_back(static_cast<int>(index.size()));
    cost.push_back(0);
    column_lower.push_back(0);
    column_upper.push_back(COIN_DBL_MAX);
  }
  ClpSimplex model;
  model.setLogLevel(0);
  model.loadProblem(static_cast<int>(cost.size()), rows, starts.data(), index.data(), values.data(),
                    column_lower.data(), column_upper.data(), cost.data(), row_lower.data(), row_upper.data());
  model.dual();
  if (model.isProvenPrimalInfeasible()) return INFINITY;
  EXPECT_TRUE(model.isProvenOptimal());
  return model.primalColumnSolution()[0];
}

// The highest load after `failure` on `arc` of what `allocation` routes.
double LoadAfter(const McfProblem& problem, const McfAllocation& allocation, int failure, int arc) {
  double load = 0;
  for (size_t c = 0; c < problem.commodities.size(); ++c) {
    for (const McfPathFlow& path : allocation.paths[c]) {
      const auto after = LoadsAfter(problem, problem.protection.failures[failure],
                                    std::vector<int>(path.arcs.begin(), path.arcs.end()), problem.commodities[c].dst);
      if (auto it = after.find(arc); it != after.end()) load += path.gbps * it->second;
    }
  }
  return load;
}

int ArcOf(const McfProblem& problem, int src, int dst) {
  for (size_t a = 0; a < problem.arcs.size(); ++a) {
    if (problem.arcs[a].src == src && problem.arcs[a].dst == dst) return static_cast<int>(a);
  }
  ADD_FAILURE() << "no arc " << src << "->" << dst;
  return -1;
}

// S=0 reaches T=4 through A=1 (a fat pair of links) and B=2 (a thin pair);
// C=3 is a detour the routers use when A-T or B-T breaks, with a 5 Gbps
// link into T. The MLU optimum sends 2/3 of 10 Gbps through A, which after
// A-T's failure the routers push through C-T at 6.67 Gbps: over its 5.
McfProblem Detour() {
  McfProblem problem;
  problem.node_count = 5;
  auto link = [&](int a, int b, double gbps, double us) {
    problem.arcs.push_back({.src = a, .dst = b, .capacity_gbps = gbps, .cost_us = us});
    problem.arcs.push_back({.src = b, .dst = a, .capacity_gbps = gbps, .cost_us = us});
  };
  link(0, 1, 20, 100);  // S-A
  link(1, 4, 20, 100);  // A-T
  link(0, 2, 10, 100);  // S-B
  link(2, 4, 10, 100);  // B-T
  link(1, 3, 10, 500);  // A-C
  link(2, 3, 10, 500);  // B-C
  link(3, 4, 5, 500);   // C-T
  problem.commodities.push_back({.src = 0, .dst = 4, .demand_gbps = 10, .priority = 0});
  const int s_a = ArcOf(problem, 0, 1), a_t = ArcOf(problem, 1, 4), b_t = ArcOf(problem, 2, 4);
  const int a_c = ArcOf(problem, 1, 3), b_c = ArcOf(problem, 2, 3), c_t = ArcOf(problem, 3, 4);
  // The routers' backups: A and B send everything for T through C.
  problem.protection.failures = {
      {.name = "link A-T", .arcs = {a_t}, .reroutes = {{.node = 1, .dst = 4, .arc_load = {{a_c, 1}, {c_t, 1}}}}},
      {.name = "link B-T", .arcs = {b_t}, .reroutes = {{.node = 2, .dst = 4, .arc_load = {{b_c, 1}, {c_t, 1}}}}},
      {.name = "link S-A", .arcs = {s_a}, .reroutes = {}},
  };
  problem.protection.limits[0] = {{.failure = 0, .arc = c_t, .limit_gbps = 5},
                                  {.failure = 0, .arc = a_c, .limit_gbps = 10},
                                  {.failure = 1, .arc = c_t, .limit_gbps = 5},
                                  {.failure = 2, .arc = b_t, .limit_gbps = 10}};
  return problem;
}

TEST(McfProtectionTest, HoldsTheLimitsAtTheExactProtectedOptimum) {
  McfProblem problem = Detour();
  McfProblem unprotected = problem;
  unprotected.protection = {};
  absl::StatusOr<McfAllocation> free_allocation = McfSolver().Solve(unprotected);
  ASSERT_TRUE(free_allocation.ok()) << free_allocation.status();
  const int c_t = ArcOf(problem, 3, 4);
  // Unprotected, A-T's failure overloads C-T (the test's premise).
  EXPECT_GT(LoadAfter(problem, *free_allocation, 0, c_t), 5 + 1e-6);

  absl::StatusOr<McfAllocation> allocation = McfSolver().Solve(problem);
  ASSERT_TRUE(allocation.ok()) << allocation.status();
  EXPECT_EQ(FlowProblem(problem, *allocation), "");
  EXPECT_EQ(UnroutedDemand(problem, *allocation), "");
  ASSERT_EQ(allocation->classes.size(), 1u);
  EXPECT_EQ(allocation->classes[0].failure_limits, 4);
  EXPECT_EQ(allocation->classes[0].failure_limit_excess_gbps, 0);
  for (const McfFailureLimit& limit : problem.protection.limits[0]) {
    EXPECT_LE(LoadAfter(problem, *allocation, limit.failure, limit.arc), limit.limit_gbps + 1e-6)
        << problem.protection.failures[limit.failure].name << ", arc " << limit.arc;
  }
  const double exact = ExactProtectedMlu(problem);
  EXPECT_NEAR(allocation->max_utilization, exact, 1e-6 * exact);
  EXPECT_GT(allocation->max_utilization, free_allocation->max_utilization + 1e-3)
      << "the limits cost nothing: the test does not test them";
}

TEST(McfProtectionTest, LatencyClassesHoldTheLimitsToo) {
  McfProblem problem = Detour();
  problem.policies.default_policy.objective = McfObjective::kMinLatency;
  absl::StatusOr<McfAllocation> allocation = McfSolver().Solve(problem);
  ASSERT_TRUE(allocation.ok()) << allocation.status();
  EXPECT_EQ(FlowProblem(problem, *allocation), "");
  EXPECT_EQ(UnroutedDemand(problem, *allocation), "");
  for (const McfFailureLimit& limit : problem.protection.limits[0]) {
    EXPECT_LE(LoadAfter(problem, *allocation, limit.failure, limit.arc), limit.limit_gbps + 1e-6)
        << problem.protection.failures[limit.failure].name << ", arc " << limit.arc;
  }
}

// What pricing charges a path on the rows (ProtectionIndex::PricedLoad,
// visiting only the failures with a priced row) is its coefficients times
// the prices, whichever rows are priced; the diverted arc weights add
// nothing for a failure whose rows are all unpriced.
TEST(McfProtectionTest, PricedLoadsAreTheCoefficientsAtThePrices) {
  const McfProblem problem = Detour();
  internal::Graph graph;
  graph.node_count = problem.node_count;
  for (const McfArc& arc : problem.arcs) {
    graph.arc_src.push_back(arc.src);
    graph.arc_dst.push_back(arc.dst);
    graph.arc_capacity.push_back(arc.capacity_gbps);
    graph.arc_cost_us.push_back(arc.cost_us);
  }
  graph.Index();
  std::vector<internal::FailureLoads> loads;
  for (const McfFailure& failure : problem.protection.failures) loads.emplace_back(graph, failure);
  internal::PhaseSpec spec;
  spec.failure_loads = &loads;
  for (const McfFailureLimit& limit : problem.protection.limits.at(0)) {
    spec.protection_rows.push_back({.failure = limit.failure, .arc = limit.arc, .upper = limit.limit_gbps});
  }
  const int arcs = static_cast<int>(problem.arcs.size());
  const internal::ProtectionIndex index(spec, arcs);
  const int s_a = ArcOf(problem, 0, 1), a_t = ArcOf(problem, 1, 4), s_b = ArcOf(problem, 0, 2);
  const int b_t = ArcOf(problem, 2, 4), a_c = ArcOf(problem, 1, 3), c_t = ArcOf(problem, 3, 4);
  const std::vector<internal::PathColumn> paths = {internal::PathColumn({s_a, a_t}), internal::PathColumn({s_b, b_t}),
                                                   internal::PathColumn({s_a, a_c, c_t})};
  std::mt19937_64 random(5);
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<double> price(index.rows());
    for (double& p : price) p = random() % 3 == 0 ? 0.0 : static_cast<double>(random() % 100) / 10;
    const std::vector<char> priced = index.PricedFailures(price);
    for (const internal::PathColumn& path : paths) {
      double expected = 0;
      for (const auto& [row, load] : index.Of(path, 4)) expected += price[row] * load;
      EXPECT_NEAR(index.PricedLoad(internal::PathColumn(path.arcs), 4, price, priced), expected, 1e-12)
          << "trial " << trial;
    }
    std::vector<double> with_unpriced(arcs, 0), without(arcs, 0);
    index.AddDivertedPrices(4, price, std::vector<char>(priced.size(), 1), with_unpriced);
    index.AddDivertedPrices(4, price, priced, without);
    for (int a = 0; a < arcs; ++a) EXPECT_NEAR(with_unpriced[a], without[a], 1e-12) << "arc " << a;
  }
}

// The caller's stop ends a protected allocation where it is: the flows
// still route every demand within the links, the stop is reported, and a
// stop that never says so changes nothing.
TEST(McfProtectionTest, TheCallersStopEndsTheAllocationWhereItIs) {
  McfProblem problem = Detour();
  absl::StatusOr<McfAllocation> whole = McfSolver().Solve(problem);
  ASSERT_TRUE(whole.ok()) << whole.status();
  int asked = 0;
  problem.protection.stop = [&asked] {
    ++asked;
    return false;
  };
  absl::StatusOr<McfAllocation> never = McfSolver().Solve(problem);
  ASSERT_TRUE(never.ok()) << never.status();
  EXPECT_GT(asked, 0) << "the stop is asked";
  EXPECT_FALSE(never->stats.stopped);
  EXPECT_DOUBLE_EQ(never->max_utilization, whole->max_utilization);

  problem.protection.stop = [] { return true; };
  absl::StatusOr<McfAllocation> stopped = McfSolver().Solve(problem);
  ASSERT_TRUE(stopped.ok()) << stopped.status();
  EXPECT_TRUE(stopped->stats.stopped);
  EXPECT_EQ(FlowProblem(problem, *stopped), "");
  EXPECT_EQ(UnroutedDemand(problem, *stopped), "");
}

TEST(McfProtectionTest, LimitsNoAllocationHoldsAreReportedNotHidden) {
  McfProblem problem = Detour();
  const int c_t = ArcOf(problem, 3, 4);
  // Whatever crosses A or B reaches C-T after one of the two failures: at
  // most 2 Gbps each way leaves 6 of the 10 with nowhere to go.
  problem.protection.limits[0] = {{.failure = 0, .arc = c_t, .limit_gbps = 2},
                                  {.failure = 1, .arc = c_t, .limit_gbps = 2}};
  EXPECT_EQ(ExactProtectedMlu(problem), INFINITY);
  absl::StatusOr<McfAllocation> allocation = McfSolver().Solve(problem);
  ASSERT_TRUE(allocation.ok()) << allocation.status();
  EXPECT_EQ(UnroutedDemand(problem, *allocation), "") << "a protected class still routes all its demand";
  const McfClassResult& result = allocation->classes[0];
  EXPECT_GT(result.failure_limit_excess_gbps, 1);
  EXPECT_TRUE(result.failure_limit_excess_failure == 0 || result.failure_limit_excess_failure == 1);
  EXPECT_EQ(result.failure_limit_excess_arc, c_t);
}

// Small random networks whose routers repair onto whatever path they
// happen to know (often through a thin link). Against the exact optimum over
// every simple path: the solver holds the limits exactly when some
// allocation can, never claims an MLU below the optimum, and reaches it on
// all but a few networks. Pricing a path a failure diverts is a search, not
// an exact oracle (mcf_solver.h): without the second search with the failed
// arcs priced, 3 of the first 30 seeds here miss the optimum; with it, 1 of
// the 87 protectable networks of 300 seeds does (6.7% above it).
TEST(McfProtectionTest, MatchesTheExactOptimumOnRandomNetworksWithArbitraryRepairs) {
  int protected_cases = 0, optimal = 0;
  for (uint32_t seed = 1; seed <= 300; ++seed) {
    std::mt19937 random(seed);
    auto uniform = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(random); };
    McfProblem problem;
    problem.node_count = 6;
    const double capacities[] = {2, 5, 10, 20};
    auto link = [&](int a, int b) {
      const double gbps = capacities[uniform(0, 3)];
      const double us = 100.0 * uniform(1, 9);
      problem.arcs.push_back({.src = a, .dst = b, .capacity_gbps = gbps, .cost_us = us});
      problem.arcs.push_back({.src = b, .dst = a, .capacity_gbps = gbps, .cost_us = us});
    };
    for (int v = 0; v < problem.node_count; ++v) link(v, (v + 1) % problem.node_count);  // a ring
    for (int chord = 0; chord < 3; ++chord) {
      const int a = uniform(0, 5), b = uniform(0, 5);
      if (a != b && (a + 1) % 6 != b && (b + 1) % 6 != a) link(a, b);
    }
    for (int c = 0; c < 3; ++c) {
      const int src = uniform(0, 5);
      const int dst = (src + uniform(1, 5)) % 6;
      problem.commodities.push_back({.src = src, .dst = dst, .demand_gbps = 1.0 * uniform(2, 8), .priority = 0});
    }
    // Two fiber cuts; at the cut arc's tail, toward each destination, the
    // routers send along a random simple path that avoids the fiber.
    for (int f = 0; f < 2; ++f) {
      const int arc = 2 * uniform(0, static_cast<int>(problem.arcs.size()) / 2 - 1);
      McfFailure failure{.name = absl::StrCat("fiber ", arc), .arcs = {arc, arc + 1}, .reroutes = {}};
      McfProblem without = problem;
      without.arcs[arc].capacity_gbps = without.arcs[arc + 1].capacity_gbps = 0;
      for (const int tail : {problem.arcs[arc].src, problem.arcs[arc + 1].src}) {
        std::set<int> dsts;
        for (const McfCommodity& commodity : problem.commodities) dsts.insert(commodity.dst);
        for (int dst : dsts) {
          if (dst == tail) continue;
          std::vector<std::vector<int>> paths;
          std::vector<char> visited(problem.node_count, 0);
          std::vector<int> path;
          SimplePaths(without, tail, dst, visited, path, paths);
          if (paths.empty()) continue;
          McfReroute reroute{.node = tail, .dst = dst, .arc_load = {}};
          for (int on : paths[uniform(0, static_cast<int>(paths.size()) - 1)]) reroute.arc_load.push_back({on, 1.0});
          failure.reroutes.push_back(std::move(reroute));
        }
      }
      problem.protection.failures.push_back(std::move(failure));
      for (size_t a = 0; a < problem.arcs.size(); ++a) {
        if (static_cast<int>(a) == arc || static_cast<int>(a) == arc + 1) continue;
        problem.protection.limits[0].push_back(
            {.failure = f, .arc = static_cast<int>(a), .limit_gbps = problem.arcs[a].capacity_gbps});
      }
    }
    const double exact = ExactProtectedMlu(problem);
    absl::StatusOr<McfAllocation> allocation = McfSolver().Solve(problem);
    ASSERT_TRUE(allocation.ok()) << allocation.status();
    const McfClassResult& result = allocation->classes[0];
    if (exact == INFINITY) {
      EXPECT_GT(result.failure_limit_excess_gbps, 0) << "seed " << seed << ": no allocation holds the limits";
      continue;
    }
    ++protected_cases;
    EXPECT_EQ(result.failure_limit_excess_gbps, 0) << "seed " << seed << ": the exact LP holds them at " << exact;
    EXPECT_GE(allocation->max_utilization, exact * (1 - 1e-6)) << "seed " << seed << ": below the optimum";
    optimal += std::abs(allocation->max_utilization - exact) <= 1e-6 * exact ? 1 : 0;
  }
  std::printf("protected optimum reached on %d of %d random networks\n", optimal, protected_cases);
  EXPECT_GE(protected_cases, 60) << "too few networks where protection is possible to test the optimum";
  EXPECT_GE(optimal, protected_cases * 99 / 100);
}

TEST(McfProtectionTest, RefusesBadProtection) {
  McfProblem problem = Detour();
  McfProblem bad = problem;
  bad.protection.limits[0].push_back({.failure = 7, .arc = 0, .limit_gbps = 1});
  EXPECT_EQ(McfSolver().Solve(bad).status().code(), absl::StatusCode::kInvalidArgument);
  bad = problem;
  bad.protection.failures[0].reroutes[0].arc_load.push_back({99, 1});
  EXPECT_EQ(McfSolver().Solve(bad).status().code(), absl::StatusCode::kInvalidArgument);
  bad = problem;
  bad.protection.limits[0][0].limit_gbps = -1;
  EXPECT_EQ(McfSolver().Solve(bad).status().code(), absl::StatusCode::kInvalidArgument);
  bad = problem;
  bad.policies.default_policy.objective = McfObjective::kMaxFairThroughput;
  const absl::Status refused = McfSolver().Solve(bad).status();
  EXPECT_EQ(refused.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(refused.message().find("total-flow"), std::string::npos) << refused;
}

// The planner's loop on Abilene at half its MLU optimum, latency class: every single link
// failure with the routers rerouting at the failed link's tail along the
// lowest-cost path around it; solve, add every (failure, link) limit broken
// (load after the failure above capacity), re-solve warm, until none is.
TEST(McfProtectionTest, LazyLimitsProtectAbileneAgainstEverySingleLinkFailure) {
  absl::StatusOr<McfProblem> loaded = testing::LoadRepetitaProblem("Abilene");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  McfProblem problem = *loaded;
  McfSolver solver;
  absl::StatusOr<McfAllocation> allocation = solver.Solve(problem);
  ASSERT_TRUE(allocation.ok()) << allocation.status();
  const double scale = 0.5 / allocation->max_utilization;
  for (McfCommodity& commodity : problem.commodities) commodity.demand_gbps *= scale;
  // Short paths while there is room: the latency objective fills the
  // direct links up to 0.8, which single failures then overload.
  problem.policies.default_policy.objective = McfObjective::kMinLatency;
  // One failure per link direction, no reroutes: each path is sent around
  // the failure from the down arc's tail (the model's default).
  for (size_t a = 0; a < problem.arcs.size(); ++a) {
    problem.protection.failures.push_back({.name = absl::StrCat("arc ", a), .arcs = {static_cast<int>(a)}, .reroutes = {}});
  }
  allocation = solver.Solve(problem);
  ASSERT_TRUE(allocation.ok()) << allocation.status();
  const double unprotected = allocation->max_utilization;
  auto broken = [&](const McfAllocation& solved) {
    std::vector<McfFailureLimit> found;
    for (size_t f = 0; f < problem.protection.failures.size(); ++f) {
      for (size_t a = 0; a < problem.arcs.size(); ++a) {
        if (static_cast<int>(a) == problem.protection.failures[f].arcs[0]) continue;
        const double capacity = problem.arcs[a].capacity_gbps;
        if (LoadAfter(problem, solved, static_cast<int>(f), static_cast<int>(a)) > capacity * (1 + 1e-6)) {
          found.push_back({.failure = static_cast<int>(f), .arc = static_cast<int>(a), .limit_gbps = capacity});
        }
      }
    }
    return found;
  };
  std::vector<McfFailureLimit> over = broken(*allocation);
  ASSERT_FALSE(over.empty()) << "no single failure overloads a link: the test does not test protection";
  int rounds = 0;
  for (; !over.empty() && rounds < 10; ++rounds) {
    std::vector<McfFailureLimit>& limits = problem.protection.limits[0];
    limits.insert(limits.end(), over.begin(), over.end());
    allocation = solver.Resolve(problem);
    ASSERT_TRUE(allocation.ok()) << allocation.status();
    ASSERT_EQ(FlowProblem(problem, *allocation), "");
    ASSERT_EQ(UnroutedDemand(problem, *allocation), "");
    EXPECT_EQ(allocation->classes[0].failure_limit_excess_gbps, 0);
    over = broken(*allocation);
  }
  EXPECT_TRUE(over.empty()) << over.size() << " limits still broken after " << rounds << " rounds";
  std::printf("Abilene, latency class at MLU %.3f: protected against every single link failure at MLU %.3f, %zu limits, %d rounds\n",
              unprotected, allocation->max_utilization, problem.protection.limits[0].size(), rounds);
}

}  // namespace
}  // namespace geodesic::pathcomp
