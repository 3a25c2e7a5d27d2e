// pathcomp's metrics: every family is declared without a controller (the
// README's reference is generated from them) and follows the naming rules;
// bound to a real model and planner (in-memory store, no gRPC), the scraped
// values move with what happens: links measured and failing, solves and
// their causes, sites installing, chains placed against their budgets.
#include "pathcomp/service/pathcomp_metrics.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <string>

#include "pathcomp/model/model.h"
#include "pathcomp/service/event_bus.h"
#include "pathcomp/service/pathcomp_metrics_binding.h"
#include "pathcomp/service/planner.h"
#include "pathcomp/service/telemetry_service.h"
#include "state/memory_store.h"
#include "sim/wait_until.h"
#include "tests/support/metrics_testing.h"
#include "topology/topology.h"

namespace geodesic::pathcomp {
namespace {

using metrics::Labels;
using ::testing::Contains;
using ::testing::DoubleNear;
using ::testing::Optional;

// The families an operator's dashboards and alerts are written against.
const std::set<std::string> kFamilies = {
    "geodesic_pathcomp_agent_session_resets_total",
    "geodesic_pathcomp_agent_sessions_connected",
    "geodesic_pathcomp_auto_drain_actions_total",
    "geodesic_pathcomp_auto_drain_active",
    "geodesic_pathcomp_auto_drain_failed_open",
    "geodesic_pathcomp_auto_drain_paused",
    "geodesic_pathcomp_chain_budget_used_max_ratio",
    "geodesic_pathcomp_chain_planned_latency_max_seconds",
    "geodesic_pathcomp_chain_planned_latency_sum_seconds",
    "geodesic_pathcomp_chains",
    "geodesic_pathcomp_chains_over_budget",
    "geodesic_pathcomp_chains_unplaced",
    "geodesic_pathcomp_elephant_carried_bytes_per_second",
    "geodesic_pathcomp_elephant_demand_bytes_per_second",
    "geodesic_pathcomp_elephant_failure_safe",
    "geodesic_pathcomp_elephant_max_utilization_after_failure_ratio",
    "geodesic_pathcomp_elephant_max_utilization_ratio",
    "geodesic_pathcomp_elephant_mean_latency_stretch_ratio",
    "geodesic_pathcomp_elephant_p95_latency_stretch_ratio",
    "geodesic_pathcomp_etcd_reachable",
    "geodesic_pathcomp_info",
    "geodesic_pathcomp_journal_bytes",
    "geodesic_pathcomp_journal_entries",
    "geodesic_pathcomp_leader",
    "geodesic_pathcomp_leader_epoch",
    "geodesic_pathcomp_link_capacity_bytes_per_second",
    "geodesic_pathcomp_link_drained",
    "geodesic_pathcomp_link_jitter_seconds",
    "geodesic_pathcomp_link_loss_ratio",
    "geodesic_pathcomp_link_oper_state",
    "geodesic_pathcomp_link_planned_load_bytes_per_second",
    "geodesic_pathcomp_link_rtt_seconds",
    "geodesic_pathcomp_link_state_changes_total",
    "geodesic_pathcomp_link_usable",
    "geodesic_pathcomp_link_utilization_ratio",
    "geodesic_pathcomp_link_verdicts",
    "geodesic_pathcomp_links_confirmed_bad",
    "geodesic_pathcomp_model_revision",
    "geodesic_pathcomp_plan_generation",
    "geodesic_pathcomp_plan_model_revision",
    "geodesic_pathcomp_replan_pending",
    "geodesic_pathcomp_service_reports_total",
    "geodesic_pathcomp_single_facility_dependencies",
    "geodesic_pathcomp_site_install_failing",
    "geodesic_pathcomp_site_install_lag_generations",
    "geodesic_pathcomp_site_install_lag_seconds",
    "geodesic_pathcomp_site_installed_generation",
    "geodesic_pathcomp_solve_duration_seconds",
    "geodesic_pathcomp_solve_failures_total",
    "geodesic_pathcomp_solves_total",
    "geodesic_pathcomp_telemetry_commit_duration_seconds",
    "geodesic_pathcomp_telemetry_measurement_age_seconds",
    "geodesic_pathcomp_telemetry_messages_total",
    "geodesic_pathcomp_telemetry_refused_total",
    "geodesic_pathcomp_unreachable_facility_pairs",
};

TEST(PathcompMetricsTest, DeclaresEveryFamilyWithoutAController) {
  metrics::Registry registry("pathcomp", {{"version", "test"}, {"replica", "pc1"}});
  PathcompMetrics metrics(registry);
  std::set<std::string> names;
  const std::regex base_units(".*_(seconds|ratio|bytes_per_second|total)$");
  for (const metrics::FamilyDoc& doc : registry.Families()) {
    SCOPED_TRACE(doc.name);
    names.insert(doc.name);
    EXPECT_TRUE(std::regex_match(doc.name, std::regex("geodesic_pathcomp_[a-z][a-z0-9_]*[a-z0-9]")));
    EXPECT_FALSE(doc.help.empty());
    // Durations are histograms in seconds; no milliseconds, no Gbps.
    EXPECT_EQ(doc.name.find("_ms"), std::string::npos);
    EXPECT_EQ(doc.name.find("gbps"), std::string::npos);
    if (doc.kind == metrics::Kind::kHistogram) {
      EXPECT_TRUE(std::regex_match(doc.name, base_units));
    }
    // Bounded cardinality: links, facilities and small fixed sets; never a workload.
    for (const std::string& label : doc.labels) {
      EXPECT_THAT((std::set<std::string>{"link", "src", "dst", "state", "facility", "cause", "result", "reason",
                                         "budget", "version", "replica", "action", "verdict"}),
                  Contains(label));
    }
  }
  EXPECT_EQ(names, kFamilies);
}

TEST(PathcompMetricsTest, SolvesByCauseStartAtZeroForEveryCause) {
  metrics::Registry registry("pathcomp", {});
  PathcompMetrics metrics(registry);
  const std::string text = registry.Scrape();
  for (SolveCause cause : kSolveCauses) {
    EXPECT_THAT(text, ::testing::HasSubstr("geodesic_pathcomp_solves_total{cause=\"" +
                                           std::string(SolveCauseName(cause)) + "\"} 0"));
  }
}

TEST(PathcompMetricsTest, ChainBudgetClassesHoldTheirUpperBound) {
  EXPECT_EQ(ChainBudgetClass(0), "le_5ms");
  EXPECT_EQ(ChainBudgetClass(5'000), "le_5ms");
  EXPECT_EQ(ChainBudgetClass(5'001), "le_10ms");
  EXPECT_EQ(ChainBudgetClass(10'000), "le_10ms");
  EXPECT_EQ(ChainBudgetClass(20'000), "le_20ms");
  EXPECT_EQ(ChainBudgetClass(50'000), "le_50ms");
  EXPECT_EQ(ChainBudgetClass(100'000), "le_100ms");
  EXPECT_EQ(ChainBudgetClass(100'001), "gt_100ms");
  EXPECT_EQ(ChainBudgetClass(10'000'000), "gt_100ms");
}

// Two facilities, one link each way; a chain that fits its budget, one that
// cannot, an elephant flow.
topology::Topology Inventory() {
  auto topology = topology::ParseTopology(R"(
facilities:
  - {id: iad, position: {lat: 39, lon: -77}, prefixes: [10.1.0.0/16]}
  - {id: chi, position: {lat: 41, lon: -87}, prefixes: [10.3.0.0/16]}
nodes:
  - {id: iad1, facility: iad}
  - {id: chi1, facility: chi}
links:
  - {id: iad-chi, reverse: chi-iad, from: iad1, to: chi1, capacity_gbps: 100}
services:
  - {id: retriever, replicas: [chi], service_time_us: 1000}
workloads:
  - {id: ckpt, kind: elephant, src: iad, dst_prefix: 10.3.0.0/16, demand_gbps: 10, priority: 1}
  - {id: rag, kind: chain, origin: iad, services: [retriever], latency_budget_us: 20000}
  - {id: tight, kind: chain, origin: iad, services: [retriever], latency_budget_us: 3000}
)",
                                          "inventory.yaml");
  EXPECT_TRUE(topology.ok()) << topology.status();
  return *topology;
}

// One value of a scrape: the sample of `name` with exactly `labels`.
std::optional<double> Value(const metrics::Registry& registry, const std::string& name, const Labels& labels = {}) {
  return testing::SeriesValue(registry.Scrape(), name, labels);
}

class BoundMetricsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto model = Model::Open(state::NewMemoryStore());
    ASSERT_TRUE(model.ok()) << model.status();
    model_ = *std::move(model);
    auto imported = model_->ApplyConfiguredInventory(Inventory(), "inventory.yaml");
    ASSERT_TRUE(imported.ok()) << imported.status();
    PlannerConfig config;
    config.replica_id = "pc1";
    config.epoch = 7;
    config.debounce = std::chrono::milliseconds(0);
    planner_ = std::make_unique<Planner>(*model_, events_, config, metrics_.solves());
    telemetry_ = std::make_unique<TelemetryService>(*model_, *planner_, events_, "pc1", metrics_.telemetry());
    binding_ = std::make_unique<PathcompMetricsBinding>(
        metrics_.scraped(),
        PathcompMetricSources{.model = *model_,
                              .planner = *planner_,
                              .telemetry = *telemetry_,
                              .delivering_epoch = [] { return std::optional<uint64_t>(7); },
                              .etcd_reachable = {}});  // standalone
  }

  void TearDown() override {
    binding_.reset();
    if (planner_) planner_->Stop();
  }

  // What the facility's agent reports of its one link (a snapshot first, then deltas).
  void Report(const std::string& facility, const std::string& link, v1::OperState state) {
    uint64_t& seq = seqs_[facility];
    if (seq == 0) {
      ASSERT_TRUE(model_->OpenSession(facility, "agent", 1).ok());
    }
    v1::AgentMessage message;
    v1::Update* update = seq == 0 ? message.mutable_snapshot() : message.mutable_delta();
    update->set_seq(++seq);
    v1::LinkReport* report = update->add_links();
    report->set_link_id(link);
    report->mutable_health()->set_state(state);
    report->mutable_health()->set_rtt_us(4000);
    report->mutable_health()->set_jitter_us(250);
    report->mutable_health()->set_loss_ratio(0.01);
    report->mutable_health()->set_utilization_ratio(0.25);
    report->mutable_health()->set_measured_at_unix_ms(1);
    ASSERT_TRUE(model_->ApplyReport(facility, "agent", 1, message, "test").ok());
    if (seq == 1) {
      v1::AgentMessage sync;
      sync.mutable_sync()->set_seq(++seq);
      ASSERT_TRUE(model_->ApplyReport(facility, "agent", 1, sync, "test").ok());
    }
  }

  // Polls the scrape until `done` holds (sim::WaitUntil: the one bounded poll).
  static absl::Status WaitFor(const std::string& what, const std::function<bool()>& done) {
    return sim::WaitUntil(what, std::chrono::seconds(10), done);
  }

  static Labels Link(const std::string& id, const std::string& src, const std::string& dst) {
    return {{"link", id}, {"src", src}, {"dst", dst}};
  }
  static Labels LinkIn(const std::string& state) {
    return {{"link", "iad-chi"}, {"src", "iad"}, {"dst", "chi"}, {"state", state}};
  }

  metrics::Registry registry_{"pathcomp", {{"replica", "pc1"}}};
  PathcompMetrics metrics_{registry_};
  std::unique_ptr<Model> model_;
  EventBus events_;
  std::unique_ptr<Planner> planner_;
  std::unique_ptr<TelemetryService> telemetry_;
  std::unique_ptr<PathcompMetricsBinding> binding_;
  std::map<std::string, uint64_t> seqs_;
};

TEST_F(BoundMetricsTest, LinksShowWhatTheAgentsMeasure) {
  const Labels iad_chi = Link("iad-chi", "iad", "chi");
  // Nothing measured yet: unknown, unusable, no measurement samples; capacity from the inventory.
  EXPECT_THAT(Value(registry_, "geodesic_pathcomp_link_oper_state", LinkIn("unknown")), Optional(1.0));
  EXPECT_THAT(Value(registry_, "geodesic_pathcomp_link_oper_state", LinkIn("up")), Optional(0.0));
  EXPECT_THAT(Value(registry_, "geodesic_pathcomp_link_usable", iad_chi), Optional(0.0));
  EXPECT_THAT(Value(registry_, "geodesic_pathcomp_link_drained", iad_chi), Optional(0.0));
  EXPECT_EQ(Value(registry_, "geodesic_pathcomp_link_rtt_seconds", iad_chi), std::nullopt);
  EXPECT_THAT(Value(registry_, "geodesic_pathcomp_link_capacity_bytes_per_second", iad_chi), Optional(100e9 / 8));
  EXPECT_THAT(Value(registry_, "geodesic_pathcomp_agent_sessions_connected", {{"facility", "chi"}}),
              Optional(0.0));

  Report("iad", "iad-chi", v1::OPER_STATE_UP);
  EXPECT_THAT(Value(registry_, "geodesic_pathcomp_link_oper_state", LinkIn("up")), Optional(1.0));
  EXPECT_THAT(Value(registry_, "geodesic_pathcomp_link_oper_state", LinkIn("unknown")), Optional(0.0));
  EXPECT_THAT(Value(registry_, "geodesic_pathcomp_link_usable", iad_chi), Optional(1.0));
  EXPECT_THAT(Value(registry_, "geodesic_pathcomp_link_rtt_seconds", iad_chi), Optional(DoubleNear(0.004, 1e-12)));
  EXPECT_THAT(Value(registry_, "geodesic_pathcomp_link_jitter_seconds", iad_chi),
              Optional(DoubleNear(0.00025, 1e-12)));
  EXPECT_THAT(Value(registry_, "geodesic_pathcomp_link_loss_ratio", iad_chi), Optional(0.01));
  EXPECT_THAT(Value(registry_, "geodesic_pathcomp_link_utilization_ratio", iad_chi), Optional(0.25));
  // The reverse direction is chi's to report.
  EXPECT_EQ(Value(registry_, "geodesic_pathcomp_link_rtt_seconds", Link("chi-iad", "chi", "iad")), std::nullopt);

  Report("iad", "iad-chi", v1::OPER_STATE_DOWN);
  EXPECT_THAT(Value(registry_, "geodesic_pathcomp_link_oper_state", LinkIn("down")), Optional(1.0));
  EXPECT_THAT(Value(registry_, "geodesic_pathcomp_link_oper_state", LinkIn("up")), Optional(0.0));
  EXPECT_THAT(Value(registry_, "geodesic_pathcomp_link_usable", iad_chi), Optional(0.0));

  // A drain is not a state: the link stays measured down and is drained too.
  Report("iad", "iad-chi", v1::OPER_STATE_UP);
  v1::Intent drain;
  drain.set_id("drain-iad-chi");
  drain.mutable_drain()->mutable_target()->set_link_id("iad-chi");
  ASSERT_TRUE(model_->AddIntent(drain, "operator", 1).ok());
  EXPECT_THAT(Value(registry_, "geodesic_pathcomp_link_drained", iad_chi), Optional(1.0));
  EXPECT_THAT(Value(registry_, "geodesic_pathcomp_link_oper_state", LinkIn("up")), Optional(1.0));
  EXPECT_THAT(Value(registry_, "geodesic_pathcomp_link_usable", iad_chi), Optional(0.0));
}

TEST_F(BoundMetricsTest, SolvesPlansAndSitesFollowThePlanner) {
  // Before the first plan: no plan figures; this standalone replica's plans go to routerd.
  EXPECT_EQ(Value(registry_, "geodesic_pathcomp_plan_generation"), std::nullopt);
  EXPECT_THAT(Value(registry_, "geodesic_pathcomp_leader"), Optional(1.0));
  EXPECT_THAT(Value(registry_, "geodesic_pathcomp_leader_epoch"), Optional(7.0));
  EXPECT_EQ(Value(registry_, "geodesic_pathcomp_etcd_reachable"), std::nullopt);  // standalone

  ASSERT_TRUE(planner_->SolveNow(SolveCause::kStartup, "test started").ok());
  EXPECT_THAT(Value(registry_, "geodesic_pathcomp_solves_total", {{"cause", "startup"}}), Optional(1.0));
  EXPECT_THAT(Value(registry_, "geodesic_pathcomp_solve_duration_seconds_count"), Optional(1.0));
  EXPECT_THAT(Value(registry_, "geodesic_pathcomp_plan_generation"), Optional(1.0));
  EXPECT_THAT(Value(registry_, "geodesic_pathcomp_replan_pending"), Optional(0.0));
  // Nothing trimmed: the journal keeps every commit, and they take room.
  EXPECT_THAT(Value(registry_, "geodesic_pathcomp_journal_entries"),
              Optional(static_cast<double>(model_->LastJournalSeq())));
  EXPECT_GT(Value(registry_, "geodesic_pathcomp_journal_bytes").value_or(0), 0);
  // No link is measured yet: nothing is reachable, no chain placed, no demand carried.
  EXPECT_THAT(Value(registry_, "geodesic_pathcomp_unreachable_facility_pairs"), Optional(2.0));
  EXPECT_THAT(Value(registry_, "geodesic_pathcomp_chains", {{"budget", "le_20ms"}}), Optional(1.0));
  EXPECT_THAT(Value(registry_, "geodesic_pathcomp_chains_unplaced", {{"budget", "le_20ms"}}), Optional(1.0));
  EXPECT_THAT(Value(registry_, "geodesic_pathcomp_chains", {{"budget", "gt_100ms"}}), Optional(0.0));
  EXPECT_THAT(Value(registry_, "geodesic_pathcomp_elephant_demand_bytes_per_second"), Optional(10e9 / 8));
  EXPECT_THAT(Value(registry_, "geodesic_pathcomp_elephant_carried_bytes_per_second"), Optional(0.0));

  // The links come up: the model is ahead of the plan until the planner re-solves.
  Report("iad", "iad-chi", v1::OPER_STATE_UP);
  Report("chi", "chi-iad", v1::OPER_STATE_UP);
  EXPECT_THAT(Value(registry_, "geodesic_pathcomp_replan_pending"), Optional(1.0));
  EXPECT_LT(*Value(registry_, "geodesic_pathcomp_plan_model_revision"),
            *Value(registry_, "geodesic_pathcomp_model_revision"));
  planner_->Start();
  planner_->RequestSolve(SolveCause::kTelemetry, "links up");
  const absl::Status solved = WaitFor("the telemetry solve counted and no re-plan pending", [&] {
    return Value(registry_, "geodesic_pathcomp_solves_total", {{"cause", "telemetry"}}) == 1.0 &&
           Value(registry_, "geodesic_pathcomp_replan_pending") == 0.0;
  });
  ASSERT_TRUE(solved.ok()) << solved;
  EXPECT_THAT(Value(registry_, "geodesic_pathcomp_solves_total", {{"cause", "startup"}}), Optional(1.0));
  EXPECT_THAT(Value(registry_, "geodesic_pathcomp_solves_total", {{"cause", "intent"}}), Optional(0.0));
  EXPECT_THAT(Value(registry_, "geodesic_pathcomp_solve_failures_total"), Optional(0.0));
  EXPECT_EQ(Value(registry_, "geodesic_pathcomp_plan_model_revision"),
            Value(registry_, "geodesic_pathcomp_model_revision"));
  const uint64_t generation = static_cast<uint64_t>(*Value(registry_, "geodesic_pathcomp_plan_generation"));
  EXPECT_EQ(generation, 2u);
  EXPECT_THAT(Value(registry_, "geodesic_pathcomp_unreachable_facility_pairs"), Optional(0.0));
  EXPECT_THAT(Value(registry_, "geodesic_pathcomp_elephant_carried_bytes_per_second"), Optional(10e9 / 8));
  // 10 Gbps of the 90 the chains' 10% headroom leaves to elephant flows.
  EXPECT_THAT(Value(registry_, "geodesic_pathcomp_elephant_max_utilization_ratio"),
              Optional(DoubleNear(10.0 / 90, 1e-9)));
  EXPECT_THAT(Value(registry_, "geodesic_pathcomp_link_planned_load_bytes_per_second", Link("iad-chi", "iad", "chi")),
              Optional(10e9 / 8));
  // Its one path is the shortest.
  EXPECT_THAT(Value(registry_, "geodesic_pathcomp_elephant_mean_latency_stretch_ratio"), Optional(DoubleNear(1, 1e-9)));
  EXPECT_THAT(Value(registry_, "geodesic_pathcomp_elephant_p95_latency_stretch_ratio"), Optional(DoubleNear(1, 1e-9)));

  // Chains by budget class: the 20 ms chain fits (4 ms there and back, 1 ms
  // of service), the 3 ms one is placed the same way but over its budget.
  EXPECT_THAT(Value(registry_, "geodesic_pathcomp_chains_unplaced", {{"budget", "le_20ms"}}), Optional(0.0));
  EXPECT_THAT(Value(registry_, "geodesic_pathcomp_chains_over_budget", {{"budget", "le_20ms"}}), Optional(0.0));
  EXPECT_THAT(Value(registry_, "geodesic_pathcomp_chains_over_budget", {{"budget", "le_5ms"}}), Optional(1.0));
  const double latency =
      *Value(registry_, "geodesic_pathcomp_chain_planned_latency_max_seconds", {{"budget", "le_5ms"}});
  EXPECT_GT(latency, 0.003);
  EXPECT_LT(latency, 0.020);
  EXPECT_THAT(Value(registry_, "geodesic_pathcomp_chain_planned_latency_sum_seconds", {{"budget", "le_20ms"}}),
              Optional(DoubleNear(latency, 1e-9)));
  EXPECT_THAT(Value(registry_, "geodesic_pathcomp_chain_budget_used_max_ratio", {{"budget", "le_5ms"}}),
              Optional(DoubleNear(latency / 0.003, 1e-9)));

  // Sites: behind until their routerd acknowledges the generation installed.
  EXPECT_THAT(Value(registry_, "geodesic_pathcomp_site_installed_generation", {{"facility", "iad"}}), Optional(0.0));
  EXPECT_THAT(Value(registry_, "geodesic_pathcomp_site_install_lag_generations", {{"facility", "iad"}}),
              Optional(static_cast<double>(generation)));
  v1::PlanAck ack;
  ack.set_facility_id("iad");
  ack.set_generation(generation);
  ack.set_epoch(7);
  ack.set_installed(true);
  planner_->RecordAck(ack, 1);
  EXPECT_THAT(Value(registry_, "geodesic_pathcomp_site_installed_generation", {{"facility", "iad"}}),
              Optional(static_cast<double>(generation)));
  EXPECT_THAT(Value(registry_, "geodesic_pathcomp_site_install_lag_generations", {{"facility", "iad"}}),
              Optional(0.0));
  EXPECT_THAT(Value(registry_, "geodesic_pathcomp_site_install_lag_seconds", {{"facility", "iad"}}), Optional(0.0));
  EXPECT_THAT(Value(registry_, "geodesic_pathcomp_site_install_failing", {{"facility", "iad"}}), Optional(0.0));
  // An ack that could not install: failing, and the installed generation stays.
  ack.set_generation(generation + 1);
  ack.set_installed(false);
  planner_->RecordAck(ack, 2);
  EXPECT_THAT(Value(registry_, "geodesic_pathcomp_site_install_failing", {{"facility", "iad"}}), Optional(1.0));
  EXPECT_THAT(Value(registry_, "geodesic_pathcomp_site_installed_generation", {{"facility", "iad"}}),
              Optional(static_cast<double>(generation)));

  // A link going down is a telemetry solve, and the chains lose their path.
  Report("iad", "iad-chi", v1::OPER_STATE_DOWN);
  planner_->RequestSolve(SolveCause::kTelemetry, "iad-chi down");
  const absl::Status resolved = WaitFor("the second telemetry solve counted and no re-plan pending", [&] {
    return Value(registry_, "geodesic_pathcomp_solves_total", {{"cause", "telemetry"}}) == 2.0 &&
           Value(registry_, "geodesic_pathcomp_replan_pending") == 0.0;
  });
  ASSERT_TRUE(resolved.ok()) << resolved;
  EXPECT_THAT(Value(registry_, "geodesic_pathcomp_chains_unplaced", {{"budget", "le_20ms"}}), Optional(1.0));
  EXPECT_THAT(Value(registry_, "geodesic_pathcomp_site_install_lag_generations", {{"facility", "iad"}}),
              Optional(1.0));
  // Behind since the plan after the installed one was computed.
  EXPECT_EQ(planner_->FirstComputedAfter(generation), planner_->CurrentPlan()->computed_at_unix_ms());
  EXPECT_EQ(planner_->FirstComputedAfter(generation + 1), std::nullopt);
  EXPECT_GE(Value(registry_, "geodesic_pathcomp_site_install_lag_seconds", {{"facility", "iad"}}).value_or(-1), 0.0);
}

TEST_F(BoundMetricsTest, TelemetryCountersAreExportedFromTheStart) {
  EXPECT_THAT(Value(registry_, "geodesic_pathcomp_telemetry_messages_total", {{"result", "applied"}}),
              Optional(0.0));
  EXPECT_THAT(Value(registry_, "geodesic_pathcomp_telemetry_refused_total", {{"reason", "out_of_order"}}),
              Optional(0.0));
  EXPECT_THAT(Value(registry_, "geodesic_pathcomp_agent_sessions_connected", {{"facility", "iad"}}),
              Optional(0.0));
  EXPECT_THAT(Value(registry_, "geodesic_pathcomp_service_reports_total", {{"result", "dropped"}}), Optional(0.0));
  metrics_.telemetry().RecordSessionReset("iad");
  metrics_.telemetry().RecordCommit(std::chrono::milliseconds(3));
  EXPECT_THAT(Value(registry_, "geodesic_pathcomp_agent_session_resets_total", {{"facility", "iad"}}),
              Optional(1.0));
  EXPECT_THAT(Value(registry_, "geodesic_pathcomp_telemetry_commit_duration_seconds_count"), Optional(1.0));
}

TEST_F(BoundMetricsTest, UnboundFamiliesHaveNoSamples) {
  ASSERT_TRUE(planner_->SolveNow(SolveCause::kStartup, "test started").ok());
  binding_.reset();
  EXPECT_EQ(Value(registry_, "geodesic_pathcomp_plan_generation"), std::nullopt);
  EXPECT_EQ(Value(registry_, "geodesic_pathcomp_link_oper_state", LinkIn("unknown")), std::nullopt);
  EXPECT_EQ(Value(registry_, "geodesic_pathcomp_leader"), std::nullopt);
  // Owned series stay: they count what happened.
  EXPECT_THAT(Value(registry_, "geodesic_pathcomp_solves_total", {{"cause", "startup"}}), Optional(1.0));
}

}  // namespace
}  // namespace geodesic::pathcomp
