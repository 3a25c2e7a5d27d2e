#pragma once
// What a settled plan means for a drill report, computed in one place for the
// simulator (sim/drill/simulator.cc) and the live runner (live_drill.cc):
// percentiles, dependency keys, routes changed, the carried ratio a plan
// claims, and the report's running totals (plans, routes changed, worst MLU,
// worst budget violations, lowest settled carried ratio, new single-facility
// dependencies) with each event's outcome fields.
// Pure: no I/O, no clock. Thread-compatible.
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "geodesic/v1/drill.pb.h"
#include "geodesic/v1/plan.pb.h"
#include "pathcomp/solver/forwarded_loads.h"

namespace geodesic::sim {

// The p-quantile (nearest rank) of `values`; 0 when empty.
uint64_t Percentile(std::vector<uint64_t> values, double p);

// The plan's single-facility dependencies as "workload@facility".
std::set<std::string> DependencyKeys(const v1::Plan& plan);

// Routes that differ between the two plans, summed over the sites of `after`
// (a site `before` lacks counts all its routes).
uint32_t RoutesChanged(const v1::Plan& before, const v1::Plan& after);

// What RoutesChanged compares of a plan, without the plan's routes: per site,
// per prefix, a hash of the route's next hops (link and weight, in order).
// A few dozen bytes a route where the route itself, with its backups, takes
// kilobytes, so a runner need not keep a whole plan to compare the next one.
using RouteSignatures = std::map<std::string, std::map<std::string, uint64_t>>;
RouteSignatures SignaturesOf(const v1::Plan& plan);
// RoutesChanged of the plans these signatures were taken from.
uint32_t RoutesChanged(const RouteSignatures& before, const RouteSignatures& after);

// The share of elephant demand the plan carries within capacity:
// carried / demand / max(1, MLU), at most 1; 1 without demand.
double PlanCarriedRatio(const v1::Plan& plan);

// Workloads the plan leaves without a path: unroutable elephant flows, then
// unplaced chains.
std::vector<std::string> CutWorkloads(const v1::Plan& plan);

// A plan that took effect, and what the runner saw of it. The simulator
// knows more than the plan (what still crosses a failure, facilities lost),
// so latencies, violations, cut and carried ratio are given, not derived.
struct SettledPlan {
  const v1::Plan* before = nullptr;  // the plan it replaced; null for the first (the baseline)
  const v1::Plan* after = nullptr;   // not null
  std::vector<uint64_t> chain_latency_us = {};  // of the chains up on it
  uint32_t budget_violations = 0;          // chains up but over their latency budget
  std::vector<std::string> cut_workload_ids = {};
  double carried_ratio = 1.0;
  // When set, the routes that changed (the runner kept no routes of the
  // plans to compare; see RouteSignatures), else RoutesChanged(*before, *after).
  std::optional<uint32_t> routes_changed = std::nullopt;
};

// A local repair's link loads — the elephants forwarded hop by hop through
// the plan the routers had, each site on its repaired routes (the simulator's
// as it simulates them, the live runner's as each routerd recorded its
// repair) — onto the event's outcome and the report's forwarding totals.
void RecordRepairLoads(const pathcomp::ForwardedLoads& loads, const std::map<std::string, double>& capacity_gbps,
                       const std::string& event, v1::DrillEventOutcome& outcome, v1::DrillReport& report);

// What the live runner sees: everything read from the plans themselves.
SettledPlan SettledFromPlans(const v1::Plan* before, const v1::Plan& after);

// Keeps a report's totals as plans settle. The report must outlive it.
class DrillOutcomes {
 public:
  explicit DrillOutcomes(v1::DrillReport& report) : report_(report) {}

  // The measures of one settled plan, for the events it answered.
  struct Measures {
    uint32_t routes_changed = 0;
    double carried_ratio = 1.0;
    double mlu = 0;
    uint64_t chain_latency_p50_us = 0, chain_latency_p99_us = 0;
    uint32_t budget_violations = 0;
    std::vector<std::string> cut_workload_ids;
    std::vector<std::string> new_dependencies;  // not in the baseline plan
  };

  // Adds `settled` to the report's totals; the first plan settled is the
  // baseline whose dependencies are not new. A plan counts once per generation.
  Measures Settle(const SettledPlan& settled);
  // Writes `measures` into an event's outcome (replanned_at_ms and the
  // outage fields are the runner's).
  static void FillOutcome(const Measures& measures, v1::DrillEventOutcome& outcome);

  // Every dependency that was new after some plan, for the report.
  const std::set<std::string>& all_new_dependencies() const { return all_new_dependencies_; }

 private:
  v1::DrillReport& report_;
  bool baseline_seen_ = false;
  std::set<std::string> baseline_dependencies_;
  std::set<std::string> all_new_dependencies_;
};

}  // namespace geodesic::sim
