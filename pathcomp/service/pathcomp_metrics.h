#pragma once
// pathcomp's Prometheus metrics (geodesic_pathcomp_*): the constructor
// declares every family the controller exports, so a tool can list them all
// (metrics::Registry::Families()) without a running controller.
//
// Two kinds, as metrics/metrics_registry.h has them:
//   - owned series the code updates as things happen: SolveMetrics (the
//     planner) and TelemetryMetrics (the agents' streams);
//   - scraped families (PathcompScrapedFamilies), read from the model, the
//     planner and the election when /metrics is read; the server binds them
//     (pathcomp_metrics_binding.h). Unbound, they have no samples.
//
// Labels stay bounded: links (`link`, `src`, `dst` facility), facilities,
// a solve's cause, a telemetry result or refusal reason, a chain's budget
// class. Never a workload id: an operator may add millions of workloads.
//
// Declares its families once: one PathcompMetrics per registry (a second
// aborts, as any repeated family does). Thread-safe.
#include <array>
#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "metrics/metrics_registry.h"
#include "pathcomp/service/solve_cause.h"

namespace geodesic::pathcomp {

// The budget classes of agent chains (label `budget`): a chain is in the
// first class whose bound is at least its end-to-end latency budget. Chains
// are workloads, too many to label one by one; chains with similar budgets
// have similar needs, so a class's planned latency and its chains over
// budget say which kind of chain suffers.
inline constexpr std::array<std::string_view, 6> kChainBudgetClasses = {"le_5ms",  "le_10ms",  "le_20ms",
                                                                        "le_50ms", "le_100ms", "gt_100ms"};
std::string_view ChainBudgetClass(uint64_t budget_us);

// What the planner records of its solves. Thread-safe.
class SolveMetrics {
 public:
  explicit SolveMetrics(metrics::Registry& registry);

  // One solve finished (ok or not) after `duration`: counted once under each
  // cause it served (a debounced solve may serve several).
  void RecordSolve(const SolveCauses& causes, std::chrono::nanoseconds duration, bool ok);

 private:
  std::array<prometheus::Counter*, kSolveCauses.size()> solves_{};  // by SolveCause
  prometheus::Counter& failures_;
  prometheus::Histogram& duration_;
};

// What the telemetry service records of the agents' streams. Thread-safe.
class TelemetryMetrics {
 public:
  explicit TelemetryMetrics(metrics::Registry& registry);

  // One agent message stored and acknowledged: from reading it off the stream
  // to writing its ack (a synced store commit for a state change).
  void RecordCommit(std::chrono::nanoseconds duration);
  // An agent of `facility_id` opened a fresh session and must send a full
  // snapshot: a new agent incarnation, or its facility was reset by an import.
  void RecordSessionReset(const std::string& facility_id);
  // Links whose state (up, degraded, down) an applied message changed.
  void RecordLinkStateChanges(size_t count);
  // An applied delta's oldest link measurement: from its measured_at (the
  // agent's clock) to its application to the model (pathcomp's); negative
  // (clocks apart) counts as 0.
  void RecordMeasurementAge(std::chrono::milliseconds age);

 private:
  prometheus::Histogram& commit_duration_;
  prometheus::Histogram& measurement_age_;
  prometheus::Family<prometheus::Counter>& session_resets_;
  prometheus::Counter& link_state_changes_;
};

// What the gray-failure judge and the automatic drainer record (auto_drainer.h). Thread-safe.
class AutoDrainMetrics {
 public:
  explicit AutoDrainMetrics(metrics::Registry& registry);

  // One automatic action or refusal: drained, undrained, refused, fail_open, held.
  void RecordAction(std::string_view action);
  // The state after a decision: links per verdict (healthy, slow, lossy,
  // flapping, unknown) and confirmed bad, fibers drained automatically,
  // whether it failed open or is paused.
  void RecordState(const std::map<std::string, size_t>& verdicts, size_t confirmed_bad, size_t active, bool failed_open,
                   bool paused);

 private:
  prometheus::Family<prometheus::Counter>& actions_;
  prometheus::Family<prometheus::Gauge>& verdicts_;
  prometheus::Gauge& confirmed_bad_;
  prometheus::Gauge& active_;
  prometheus::Gauge& failed_open_;
  prometheus::Gauge& paused_;
};

// The families read at scrape time. Label values and units are in each
// family's help (pathcomp_metrics.cc).
struct PathcompScrapedFamilies {
  // Per link: labels link, src, dst.
  metrics::ScrapedFamily& link_oper_state;  // + state
  metrics::ScrapedFamily& link_drained;
  metrics::ScrapedFamily& link_usable;
  metrics::ScrapedFamily& link_rtt_seconds;
  metrics::ScrapedFamily& link_jitter_seconds;
  metrics::ScrapedFamily& link_loss_ratio;
  metrics::ScrapedFamily& link_utilization_ratio;
  metrics::ScrapedFamily& link_capacity_bytes_per_second;
  metrics::ScrapedFamily& link_planned_load_bytes_per_second;
  // Telemetry.
  metrics::ScrapedFamily& telemetry_messages_total;  // result
  metrics::ScrapedFamily& telemetry_refused_total;   // reason
  metrics::ScrapedFamily& service_reports_total;     // result
  metrics::ScrapedFamily& agent_sessions_connected;  // facility
  // The plan and the model.
  metrics::ScrapedFamily& plan_generation;
  metrics::ScrapedFamily& plan_model_revision;
  metrics::ScrapedFamily& model_revision;
  metrics::ScrapedFamily& journal_entries;
  metrics::ScrapedFamily& journal_bytes;
  metrics::ScrapedFamily& replan_pending;
  metrics::ScrapedFamily& elephant_max_utilization_ratio;
  metrics::ScrapedFamily& elephant_demand_bytes_per_second;
  metrics::ScrapedFamily& elephant_carried_bytes_per_second;
  metrics::ScrapedFamily& elephant_mean_latency_stretch_ratio;
  metrics::ScrapedFamily& elephant_p95_latency_stretch_ratio;
  metrics::ScrapedFamily& elephant_failure_safe;
  metrics::ScrapedFamily& elephant_max_utilization_after_failure_ratio;
  metrics::ScrapedFamily& unreachable_facility_pairs;
  metrics::ScrapedFamily& single_facility_dependencies;
  // Leadership.
  metrics::ScrapedFamily& leader;
  metrics::ScrapedFamily& leader_epoch;
  metrics::ScrapedFamily& etcd_reachable;
  // Per site: label facility.
  metrics::ScrapedFamily& site_installed_generation;
  metrics::ScrapedFamily& site_install_lag_generations;
  metrics::ScrapedFamily& site_install_lag_seconds;
  metrics::ScrapedFamily& site_install_failing;
  // Agent chains per budget class: label budget.
  metrics::ScrapedFamily& chains;
  metrics::ScrapedFamily& chains_unplaced;
  metrics::ScrapedFamily& chains_over_budget;
  metrics::ScrapedFamily& chain_planned_latency_sum_seconds;
  metrics::ScrapedFamily& chain_planned_latency_max_seconds;
  metrics::ScrapedFamily& chain_budget_used_max_ratio;
};

class PathcompMetrics {
 public:
  explicit PathcompMetrics(metrics::Registry& registry);
  PathcompMetrics(const PathcompMetrics&) = delete;
  PathcompMetrics& operator=(const PathcompMetrics&) = delete;

  SolveMetrics& solves() { return solves_; }
  TelemetryMetrics& telemetry() { return telemetry_; }
  AutoDrainMetrics& auto_drain() { return auto_drain_; }
  const PathcompScrapedFamilies& scraped() const { return scraped_; }

 private:
  SolveMetrics solves_;
  TelemetryMetrics telemetry_;
  AutoDrainMetrics auto_drain_;
  const PathcompScrapedFamilies scraped_;
};

}  // namespace geodesic::pathcomp
