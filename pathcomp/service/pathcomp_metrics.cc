#include "pathcomp/service/pathcomp_metrics.h"

namespace geodesic::pathcomp {
namespace {

using metrics::Registry;

const std::vector<std::string> kLinkLabels = {"link", "src", "dst"};

PathcompScrapedFamilies DeclareScraped(Registry& registry) {
  return PathcompScrapedFamilies{
      .link_oper_state = registry.ScrapedGauge(
          "link_oper_state",
          "A link's measured state as a state set: one series per state (unknown, up, degraded, down), 1 for "
          "the state its site agent reported last and 0 for the others; unknown until a measurement arrives. "
          "Drains are not states: see link_drained",
          {"link", "src", "dst", "state"}),
      .link_drained = registry.ScrapedGauge(
          "link_drained", "1 when the link carries no planned traffic by an operator's drain (of the link, an end "
          "node or an end facility) or its admin state, else 0", kLinkLabels),
      .link_usable = registry.ScrapedGauge(
          "link_usable", "1 when the solver may route over the link (not drained, measured up or degraded), else 0",
          kLinkLabels),
      .link_rtt_seconds = registry.ScrapedGauge(
          "link_rtt_seconds", "Round-trip time the site agent measured on the link; no sample before a measurement",
          kLinkLabels),
      .link_jitter_seconds = registry.ScrapedGauge(
          "link_jitter_seconds", "RTT jitter the site agent measured on the link; no sample before a measurement",
          kLinkLabels),
      .link_loss_ratio = registry.ScrapedGauge(
          "link_loss_ratio", "Share of probes lost on the link (0-1); no sample before a measurement", kLinkLabels),
      .link_utilization_ratio = registry.ScrapedGauge(
          "link_utilization_ratio",
          "Measured traffic over the link's capacity (0-1, above 1 when overloaded); no sample before a measurement",
          kLinkLabels),
      .link_capacity_bytes_per_second = registry.ScrapedGauge(
          "link_capacity_bytes_per_second", "The link's capacity in the inventory", kLinkLabels),
      .link_planned_load_bytes_per_second = registry.ScrapedGauge(
          "link_planned_load_bytes_per_second",
          "Elephant-flow traffic the current plan puts on the link (links with no planned load have no sample)",
          kLinkLabels),

      .telemetry_messages_total = registry.ScrapedCounter(
          "telemetry_messages_total",
          "Site agent messages acknowledged, by result: applied (applied to the model; stored before the ack when "
          "it changes a state, within `measurement_flush_ms` when it only measures) or duplicate (applied before; "
          "acknowledged again, not re-applied)",
          {"result"}),
      .telemetry_refused_total = registry.ScrapedCounter(
          "telemetry_refused_total",
          "Site agent messages refused (each ends its stream; the agent resumes from its last ack), by reason: "
          "invalid (malformed, unknown link or plane), not_permitted (another facility's link, a wrong "
          "certificate), out_of_order (a sequence gap, no open session), oversized",
          {"reason"}),
      .service_reports_total = registry.ScrapedCounter(
          "service_reports_total",
          "Service latency reports site agents relayed (docs/stragglers.md), by result: kept (the latest of its "
          "chain, hop and replica facility, in memory) or dropped (about no chain hop of the model; the rest of "
          "its message applies)",
          {"result"}),
      .agent_sessions_connected = registry.ScrapedGauge(
          "agent_sessions_connected",
          "Open telemetry streams of the facility's site agents; every facility of the model has a sample (0: "
          "nothing is measured there)",
          {"facility"}),

      .plan_generation =
          registry.ScrapedGauge("plan_generation", "Generation of the current plan; no sample before the first"),
      .plan_model_revision = registry.ScrapedGauge(
          "plan_model_revision", "The model revision the last finished solve saw (see model_revision)"),
      .model_revision = registry.ScrapedGauge(
          "model_revision",
          "Changes that call for a re-plan (link and plane states, inventory, intents, workloads) counted so far; "
          "grows across restarts"),
      .journal_entries = registry.ScrapedGauge(
          "journal_entries",
          "Entries the store's journal keeps (every change and its cause), within journal.max_age_hours and "
          "journal.max_mb"),
      .journal_bytes = registry.ScrapedGauge(
          "journal_bytes", "The store's estimate of the bytes its journal takes (journal.max_mb bounds it)"),
      .replan_pending = registry.ScrapedGauge(
          "replan_pending",
          "1 while a re-plan is queued, running or owed (the model changed since the last solve saw it), else 0"),
      .elephant_max_utilization_ratio = registry.ScrapedGauge(
          "elephant_max_utilization_ratio",
          "Highest utilization of any link by the current plan's elephant flows (0-1, above 1 when overloaded)"),
      .elephant_demand_bytes_per_second = registry.ScrapedGauge(
          "elephant_demand_bytes_per_second", "Elephant-flow demand of the current plan's workloads"),
      .elephant_carried_bytes_per_second = registry.ScrapedGauge(
          "elephant_carried_bytes_per_second", "Elephant-flow demand the current plan carries"),
      .elephant_mean_latency_stretch_ratio = registry.ScrapedGauge(
          "elephant_mean_latency_stretch_ratio",
          "Mean of the current plan's elephant path latency over the shortest path's, weighted by Gbps (1 = all on "
          "shortest paths)"),
      .elephant_p95_latency_stretch_ratio = registry.ScrapedGauge(
          "elephant_p95_latency_stretch_ratio",
          "Latency stretch (path over shortest path) at or below which 95% of the current plan's elephant Gbps run"),
      .elephant_failure_safe = registry.ScrapedGauge(
          "elephant_failure_safe",
          "1 when every protected elephant class of the current plan stays within its limit after any single failure "
          "of its kind on the plan's backups (also with no protected class), 0 when one does not"),
      .elephant_max_utilization_after_failure_ratio = registry.ScrapedGauge(
          "elephant_max_utilization_after_failure_ratio",
          "Highest link utilization the current plan's protected elephant classes reach after a single failure of "
          "their kind, on the plan's backups (0 with no protected class)"),
      .unreachable_facility_pairs = registry.ScrapedGauge(
          "unreachable_facility_pairs", "Ordered facility pairs with no usable path in the current plan"),
      .single_facility_dependencies = registry.ScrapedGauge(
          "single_facility_dependencies",
          "Workloads the current plan finds depending on one facility (every feasible assignment needs it)"),

      .leader = registry.ScrapedGauge(
          "leader",
          "1 when this replica's plans go to routerd (it leads, or runs standalone), 0 when it follows"),
      .leader_epoch = registry.ScrapedGauge(
          "leader_epoch",
          "The epoch of this replica's plans: while it leads, its election key's revision; standalone, this "
          "start's epoch; 0 when it follows"),
      .etcd_reachable = registry.ScrapedGauge(
          "etcd_reachable",
          "Replicated only: 1 while etcd answered this replica's lease keep-alives within the lease TTL, else 0"),

      .site_installed_generation = registry.ScrapedGauge(
          "site_installed_generation",
          "The newest plan generation the facility's routerd acknowledged as installed (0: none yet); one "
          "sample per site of the current plan, only on the replica whose plans go to routerd",
          {"facility"}),
      .site_install_lag_generations = registry.ScrapedGauge(
          "site_install_lag_generations",
          "Plan generations the facility's routerd is behind the current plan (0: installed), on the replica "
          "whose plans go to routerd",
          {"facility"}),
      .site_install_lag_seconds = registry.ScrapedGauge(
          "site_install_lag_seconds",
          "How long the facility's routerd has been behind: since the first plan it has not installed was "
          "computed (at most as far back as the plan history keeps: the newest 100, within 256 MB; 0: the current plan is installed), on the replica whose "
          "plans go to routerd",
          {"facility"}),
      .site_install_failing = registry.ScrapedGauge(
          "site_install_failing",
          "1 when the facility's routerd's last acknowledgement said it could not install the plan, else 0",
          {"facility"}),

      .chains = registry.ScrapedGauge(
          "chains",
          "Agent chains in the current plan by budget class: label budget is the first of le_5ms, le_10ms, "
          "le_20ms, le_50ms, le_100ms, gt_100ms that holds the chain's end-to-end latency budget (classes, not "
          "chain ids: chains are workloads, far too many to label)",
          {"budget"}),
      .chains_unplaced = registry.ScrapedGauge(
          "chains_unplaced", "Agent chains of the budget class the current plan could not place at all (some call "
          "has no reachable replica)", {"budget"}),
      .chains_over_budget = registry.ScrapedGauge(
          "chains_over_budget",
          "Placed agent chains of the budget class whose planned end-to-end latency exceeds their budget",
          {"budget"}),
      .chain_planned_latency_sum_seconds = registry.ScrapedGauge(
          "chain_planned_latency_sum_seconds",
          "Sum of the planned end-to-end latencies (network round trips and service times) of the budget class's "
          "placed chains; over chains - chains_unplaced, the mean",
          {"budget"}),
      .chain_planned_latency_max_seconds = registry.ScrapedGauge(
          "chain_planned_latency_max_seconds",
          "Highest planned end-to-end latency of a placed chain of the budget class (0 when it has none)",
          {"budget"}),
      .chain_budget_used_max_ratio = registry.ScrapedGauge(
          "chain_budget_used_max_ratio",
          "Highest share of its own budget a placed chain of the class is planned to use (above 1: over budget)",
          {"budget"}),
  };
}

}  // namespace

std::string_view ChainBudgetClass(uint64_t budget_us) {
  constexpr std::array<uint64_t, kChainBudgetClasses.size() - 1> kBoundsUs = {5'000, 10'000, 20'000, 50'000,
                                                                              100'000};
  for (size_t i = 0; i < kBoundsUs.size(); ++i) {
    if (budget_us <= kBoundsUs[i]) return kChainBudgetClasses[i];
  }
  return kChainBudgetClasses.back();
}

SolveMetrics::SolveMetrics(Registry& registry)
    : failures_(registry
                    .Counter("solve_failures_total",
                             "Solves that ended in an error (the published plan stays); the error is logged")
                    .Add({})),
      duration_(registry
                    .Histogram("solve_duration_seconds",
                               "Time of one solve: the model's snapshot, every solver, the plan's commit when it "
                               "changed routing")
                    .Add()) {
  auto& solves = registry.Counter(
      "solves_total",
      "Solves by cause: startup, telemetry (a link's or fabric plane's state changed), intent, workload, "
      "inventory, leader (elected). Requests within the debounce window make one solve, counted once under "
      "each cause it served",
      {"cause"});
  for (SolveCause cause : kSolveCauses) {
    solves_[static_cast<size_t>(cause)] = &solves.Add({{"cause", std::string(SolveCauseName(cause))}});
  }
}

void SolveMetrics::RecordSolve(const SolveCauses& causes, std::chrono::nanoseconds duration, bool ok) {
  for (SolveCause cause : kSolveCauses) {
    if (causes.Has(cause)) solves_[static_cast<size_t>(cause)]->Increment();
  }
  if (!ok) failures_.Increment();
  duration_.Observe(std::chrono::duration<double>(duration).count());
}

TelemetryMetrics::TelemetryMetrics(Registry& registry)
    : commit_duration_(registry
                           .Histogram("telemetry_commit_duration_seconds",
                                      "From reading a site agent's message to acknowledging it: validated, "
                                      "applied to the model, stored and synced first when it changes a state (a "
                                      "measurement only is written later, coalesced) and acked")
                           .Add()),
      measurement_age_(registry
                           .Histogram("telemetry_measurement_age_seconds",
                                      "How old a delta's oldest link measurement is when the model receives it: "
                                      "from its measured_at on the agent's clock to its application on pathcomp's "
                                      "(as far as the two clocks agree; negative counts as 0)")
                           .Add()),
      session_resets_(registry.Counter(
          "agent_session_resets_total",
          "Agent sessions started over from a full snapshot: a new agent incarnation, or an import that added "
          "links of the facility",
          {"facility"})),
      link_state_changes_(registry
                              .Counter("link_state_changes_total",
                                       "Link state changes (up, degraded, down) applied from site agents' reports")
                              .Add({})) {}

void TelemetryMetrics::RecordCommit(std::chrono::nanoseconds duration) {
  commit_duration_.Observe(std::chrono::duration<double>(duration).count());
}

void TelemetryMetrics::RecordMeasurementAge(std::chrono::milliseconds age) {
  measurement_age_.Observe(std::max(0.0, std::chrono::duration<double>(age).count()));
}

void TelemetryMetrics::RecordSessionReset(const std::string& facility_id) {
  session_resets_.Add({{"facility", facility_id}}).Increment();
}

void TelemetryMetrics::RecordLinkStateChanges(size_t count) {
  link_state_changes_.Increment(static_cast<double>(count));
}

AutoDrainMetrics::AutoDrainMetrics(Registry& registry)
    : actions_(registry.Counter(
          "auto_drain_actions_total",
          "What the automatic drainer did: drained (a fiber's links, after the pre-check), undrained (healthy for "
          "the undrain hold), refused (the pre-check refused the drain: nothing changed), fail_open (too many "
          "links turned bad at once: nothing drained), held (a pause or a limit held a drain back)",
          {"action"})),
      verdicts_(registry.Gauge("link_verdicts",
                               "Links by gray-failure verdict (healthy, slow, lossy, flapping, unknown) against "
                               "their own RTT baselines and the loss and flap thresholds",
                               {"verdict"})),
      confirmed_bad_(registry
                         .Gauge("links_confirmed_bad",
                                "Links slow, lossy or flapping with evidence from both ends or from several paths")
                         .Add({})),
      active_(registry.Gauge("auto_drain_active", "Links drained automatically now (a fiber counts its two directions)").Add({})),
      failed_open_(registry
                       .Gauge("auto_drain_failed_open",
                              "1 while the automatic drainer holds off because too many links turned bad at once "
                              "(the measurement is suspected), else 0")
                       .Add({})),
      paused_(registry.Gauge("auto_drain_paused", "1 while an operator has paused the automatic drainer, else 0")
                  .Add({})) {
  for (std::string_view action : {"drained", "undrained", "refused", "fail_open", "held"}) {
    actions_.Add({{"action", std::string(action)}});
  }
}

void AutoDrainMetrics::RecordAction(std::string_view action) {
  actions_.Add({{"action", std::string(action)}}).Increment();
}

void AutoDrainMetrics::RecordState(const std::map<std::string, size_t>& verdicts, size_t confirmed_bad,
                                   size_t active, bool failed_open, bool paused) {
  for (const auto& [verdict, count] : verdicts) {
    verdicts_.Add({{"verdict", verdict}}).Set(static_cast<double>(count));
  }
  confirmed_bad_.Set(static_cast<double>(confirmed_bad));
  active_.Set(static_cast<double>(active));
  failed_open_.Set(failed_open ? 1 : 0);
  paused_.Set(paused ? 1 : 0);
}

PathcompMetrics::PathcompMetrics(Registry& registry)
    : solves_(registry), telemetry_(registry), auto_drain_(registry), scraped_(DeclareScraped(registry)) {}

}  // namespace geodesic::pathcomp
