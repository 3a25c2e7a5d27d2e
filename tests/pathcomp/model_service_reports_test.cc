// The model's part of service latency reports (telemetry.proto Update field
// 4): malformed ones refuse the whole message, reports about no hop of the
// model are left out, the rest are kept, the latest per (chain, hop, replica).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>

#include "pathcomp/model/model.h"
#include "state/memory_store.h"

namespace geodesic::pathcomp {
namespace {

using ::testing::HasSubstr;

constexpr uint64_t kIncarnation = 7;

topology::Topology ChainInventory() {
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
  - {id: retriever, replicas: [chi]}
  - {id: model, replicas: [chi, iad]}
workloads:
  - {id: rag, kind: chain, origin: iad, services: [retriever, model], latency_budget_us: 50000}
  - {id: bulk, kind: elephant, src: iad, dst_prefix: 10.3.0.0/16, demand_gbps: 1}
)",
                                          "inventory.yaml");
  EXPECT_TRUE(topology.ok()) << topology.status();
  return *topology;
}

v1::ServiceLatencyReport Report(const std::string& workload, uint32_t hop, const std::string& service,
                                uint64_t latency_us, int64_t at_unix_ms = 1'000) {
  v1::ServiceLatencyReport report;
  report.set_workload_id(workload);
  report.set_hop(hop);
  report.set_service_id(service);
  report.set_service_latency_us(latency_us);
  report.set_calls(5);
  report.set_window_ms(10'000);
  report.set_received_at_unix_ms(at_unix_ms);
  return report;
}

class ModelServiceReportsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto model = Model::Open(state::NewMemoryStore());
    ASSERT_TRUE(model.ok()) << model.status();
    model_ = *std::move(model);
    auto imported = model_->ApplyConfiguredInventory(ChainInventory(), "inventory.yaml");
    ASSERT_TRUE(imported.ok()) << imported.status();
    ASSERT_TRUE(model_->OpenSession("chi", "agent", kIncarnation).ok());
    v1::AgentMessage snapshot;
    snapshot.mutable_snapshot()->set_seq(1);
    v1::LinkReport& link = *snapshot.mutable_snapshot()->add_links();
    link.set_link_id("chi-iad");
    link.mutable_health()->set_state(v1::OPER_STATE_UP);
    ASSERT_TRUE(Apply(snapshot).ok());
    v1::AgentMessage sync;
    sync.mutable_sync()->set_seq(2);
    ASSERT_TRUE(Apply(sync).ok());
  }

  absl::StatusOr<ReportResult> Apply(const v1::AgentMessage& message) {
    return model_->ApplyReport("chi", "agent", kIncarnation, message, "test-agent");
  }

  // A delta with the next seq carrying `reports` (and a link measurement, to
  // see that a refusal applies nothing).
  absl::StatusOr<ReportResult> Deliver(const std::vector<v1::ServiceLatencyReport>& reports) {
    v1::AgentMessage message;
    v1::Update& delta = *message.mutable_delta();
    delta.set_seq(next_seq_);
    v1::LinkReport& link = *delta.add_links();
    link.set_link_id("chi-iad");
    link.mutable_health()->set_state(v1::OPER_STATE_UP);
    link.mutable_health()->set_rtt_us(1000 + next_seq_);
    for (const auto& report : reports) *delta.add_service_reports() = report;
    auto result = Apply(message);
    if (result.ok()) ++next_seq_;
    return result;
  }

  uint64_t LinkRtt() const {
    for (const auto& link : model_->Links()) {
      if (link.id() == "chi-iad") return link.health().rtt_us();
    }
    return 0;
  }

  std::unique_ptr<Model> model_;
  uint64_t next_seq_ = 3;
};

TEST_F(ModelServiceReportsTest, KeepsTheLatestReportPerChainHopAndReplica) {
  auto applied = Deliver({Report("rag", 0, "retriever", 4'000), Report("rag", 1, "model", 9'000)});
  ASSERT_TRUE(applied.ok()) << applied.status();
  EXPECT_EQ(applied->service_reports_kept, 2u);
  EXPECT_TRUE(applied->service_reports_dropped.empty());
  ASSERT_TRUE(Deliver({Report("rag", 1, "model", 12'000, 2'000)}).ok());
  ASSERT_TRUE(Deliver({Report("rag", 1, "model", 99'000, 1'500)}).ok());  // older than what is kept: ignored

  const std::vector<HopReport> kept = model_->ServiceReports("rag");
  ASSERT_EQ(kept.size(), 2u);
  EXPECT_EQ(kept[0].report.hop(), 0u);
  EXPECT_EQ(kept[0].replica_facility_id, "chi");
  EXPECT_EQ(kept[1].report.service_latency_us(), 12'000u);
  EXPECT_EQ(model_->ServiceReports().size(), 2u);
  EXPECT_TRUE(model_->ServiceReports("bulk").empty());
}

TEST_F(ModelServiceReportsTest, MalformedReportsRefuseTheWholeMessageAndChangeNothing) {
  ASSERT_TRUE(Deliver({}).ok());
  const uint64_t rtt_before = LinkRtt();
  struct Case {
    std::string name;
    v1::ServiceLatencyReport report;
    std::string message;
  };
  std::vector<Case> cases;
  cases.push_back({"bad workload id", Report("Rag!", 0, "retriever", 1), "workload_id must match"});
  cases.push_back({"bad service id", Report("rag", 0, "", 1), "service_id must match"});
  cases.push_back({"latency over 10 s", Report("rag", 0, "retriever", 10'000'001), "service_latency_us"});
  auto rtt = Report("rag", 0, "retriever", 1);
  rtt.set_network_rtt_us(20'000'000);
  cases.push_back({"rtt over 10 s", rtt, "network_rtt_us"});
  auto no_calls = Report("rag", 0, "retriever", 1);
  no_calls.set_calls(0);
  cases.push_back({"no calls", no_calls, "calls must be within"});
  auto no_window = Report("rag", 0, "retriever", 1);
  no_window.set_window_ms(0);
  cases.push_back({"no window", no_window, "window_ms"});
  cases.push_back({"no time", Report("rag", 0, "retriever", 1, 0), "received_at_unix_ms"});
  cases.push_back({"hop absurd", Report("rag", 5000, "retriever", 1), "hop must be at most"});
  for (const Case& c : cases) {
    auto refused = Deliver({Report("rag", 1, "model", 9'000), c.report});
    ASSERT_FALSE(refused.ok()) << c.name;
    EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument) << c.name;
    EXPECT_THAT(std::string(refused.status().message()), HasSubstr(c.message)) << c.name;
  }
  EXPECT_TRUE(model_->ServiceReports().empty());
  EXPECT_EQ(LinkRtt(), rtt_before);  // the link report of the refused messages was not applied either
  EXPECT_EQ(model_->OpenSession("chi", "agent", kIncarnation)->last_applied_seq(), next_seq_ - 1);
}

TEST_F(ModelServiceReportsTest, ReportsAboutNoHopOfTheModelAreLeftOutAndTheRestApplies) {
  auto applied = Deliver({
      Report("nope", 0, "retriever", 1),    // unknown workload
      Report("bulk", 0, "retriever", 1),    // not a chain
      Report("rag", 2, "model", 1),         // the chain makes 2 calls
      Report("rag", 0, "model", 1),         // hop 0 calls retriever
      Report("rag", 1, "model", 7'000),     // kept
  });
  ASSERT_TRUE(applied.ok()) << applied.status();
  EXPECT_EQ(applied->service_reports_kept, 1u);
  ASSERT_EQ(applied->service_reports_dropped.size(), 4u);
  EXPECT_THAT(applied->service_reports_dropped[0], HasSubstr("no such workload"));
  EXPECT_THAT(applied->service_reports_dropped[1], HasSubstr("not an agent chain"));
  EXPECT_THAT(applied->service_reports_dropped[2], HasSubstr("makes 2 calls"));
  EXPECT_THAT(applied->service_reports_dropped[3], HasSubstr("calls service retriever at this hop"));
  ASSERT_EQ(model_->ServiceReports("rag").size(), 1u);
  EXPECT_EQ(LinkRtt(), 1000 + next_seq_ - 1);  // the message applied
}

TEST_F(ModelServiceReportsTest, OnlyAnAgentOfAReplicaFacilityReportsItsHop) {
  ASSERT_TRUE(model_->OpenSession("iad", "agent", kIncarnation).ok());
  v1::AgentMessage snapshot;
  snapshot.mutable_snapshot()->set_seq(1);
  *snapshot.mutable_snapshot()->add_service_reports() = Report("rag", 0, "retriever", 1);  // no retriever at iad
  *snapshot.mutable_snapshot()->add_service_reports() = Report("rag", 1, "model", 3'000);  // a model replica at iad
  auto applied = model_->ApplyReport("iad", "agent", kIncarnation, snapshot, "test-agent");
  ASSERT_TRUE(applied.ok()) << applied.status();
  ASSERT_EQ(applied->service_reports_dropped.size(), 1u);
  EXPECT_THAT(applied->service_reports_dropped[0], HasSubstr("facility iad hosts no replica of service retriever"));
  const auto kept = model_->ServiceReports("rag");
  ASSERT_EQ(kept.size(), 1u);
  EXPECT_EQ(kept[0].replica_facility_id, "iad");
}

TEST_F(ModelServiceReportsTest, ReportsArePerishableAndNotInTheStore) {
  ASSERT_TRUE(Deliver({Report("rag", 1, "model", 7'000)}).ok());
  EXPECT_EQ(model_->ServiceReports().size(), 1u);
  // The message only measures: written with the next flush of measurements.
  ASSERT_TRUE(model_->FlushMeasurements().ok());
  // What the message stored is the link's health and the agent's session, nothing of the report.
  auto journal = model_->Journal(v1::ListJournalRequest());
  ASSERT_TRUE(journal.ok());
  ASSERT_FALSE(journal->entries().empty());
  const v1::JournalRecord& last = *journal->entries().rbegin();
  std::vector<std::string> kinds;
  for (const auto& change : last.changes()) kinds.push_back(change.kind());
  EXPECT_THAT(kinds, ::testing::UnorderedElementsAre("link_health", "agent_session")) << last.ShortDebugString();
}

}  // namespace
}  // namespace geodesic::pathcomp
