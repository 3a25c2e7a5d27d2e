// Telemetry durability in the model (DESIGN §3): state changes are stored
// and synced before ApplyReport returns; measurements only are applied at
// once and written later, coalesced, by FlushMeasurements.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <memory>

#include "pathcomp/model/entity_key.h"
#include "pathcomp/model/model.h"
#include "state/memory_store.h"
#include "state/rocks_store.h"
#include "state/typed_access.h"
#include "tests/support/forwarding_store.h"
#include "tests/support/test_dirs.h"

namespace geodesic::pathcomp {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr uint64_t kIncarnation = 7;

topology::Topology Inventory() {
  auto topology = topology::ParseTopology(R"(
facilities:
  - {id: iad, position: {lat: 39, lon: -77}, prefixes: [10.1.0.0/16]}
  - {id: chi, position: {lat: 41, lon: -87}, prefixes: [10.3.0.0/16]}
nodes:
  - {id: iad1, facility: iad}
  - {id: chi1, facility: chi}
links:
  - {id: iad-chi-a, reverse: chi-iad-a, from: iad1, to: chi1, capacity_gbps: 100}
  - {id: iad-chi-b, reverse: chi-iad-b, from: iad1, to: chi1, capacity_gbps: 100}
fabrics:
  - facility: iad
    planes: 2
    rails: 8
    gpus: 1024
    nic_speed_gbps: 400
    backbone_uplink_gbps: 1000000
    layers:
      - {name: leaf,  switch_count: 32, downlink_ports: 32, uplink_ports: 32, port_speed_gbps: 400}
      - {name: spine, switch_count: 16, downlink_ports: 64, port_speed_gbps: 400}
)",
                                          "inventory.yaml");
  EXPECT_TRUE(topology.ok()) << topology.status();
  return *topology;
}

v1::LinkReport Link(const std::string& id, v1::OperState state, uint64_t rtt_us) {
  v1::LinkReport report;
  report.set_link_id(id);
  report.mutable_health()->set_state(state);
  report.mutable_health()->set_rtt_us(rtt_us);
  return report;
}

v1::AgentMessage Snapshot(uint64_t seq, std::vector<v1::LinkReport> links) {
  v1::AgentMessage message;
  message.mutable_snapshot()->set_seq(seq);
  for (auto& link : links) *message.mutable_snapshot()->add_links() = std::move(link);
  return message;
}

v1::AgentMessage Delta(uint64_t seq, std::vector<v1::LinkReport> links) {
  v1::AgentMessage message;
  message.mutable_delta()->set_seq(seq);
  for (auto& link : links) *message.mutable_delta()->add_links() = std::move(link);
  return message;
}

v1::AgentMessage Sync(uint64_t seq) {
  v1::AgentMessage message;
  message.mutable_sync()->set_seq(seq);
  return message;
}

class ModelMeasurementsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // The model owns a store the test reads as well.
    auto model = Model::Open(std::make_unique<testing::ForwardingStore>(store_));
    ASSERT_TRUE(model.ok()) << model.status();
    model_ = *std::move(model);
    ASSERT_TRUE(model_->ApplyConfiguredInventory(Inventory(), "inventory.yaml").ok());
    ASSERT_TRUE(model_->OpenSession("iad", "agent", kIncarnation).ok());
    // Both links up, rtt 1000 (seq 1, 2): stored, synced.
    ASSERT_TRUE(Apply(Snapshot(1, {Link("iad-chi-a", v1::OPER_STATE_UP, 1000),
                                   Link("iad-chi-b", v1::OPER_STATE_UP, 1000)}))
                    .ok());
    ASSERT_TRUE(Apply(Sync(2)).ok());
  }

  absl::StatusOr<ReportResult> Apply(const v1::AgentMessage& message) {
    return model_->ApplyReport("iad", "agent", kIncarnation, message, "spiffe://geodesic/site/iad/agent");
  }

  v1::LinkHealth StoredHealth(const std::string& link_id) const {
    auto bytes = store_->GetRaw(state::Kind::kLinkHealth, link_id);
    v1::LinkHealth health;
    EXPECT_TRUE(bytes.ok()) << bytes.status();
    if (bytes.ok()) {
      EXPECT_TRUE(health.ParseFromString(*bytes));
    }
    return health;
  }

  uint64_t StoredSessionSeq() const {
    auto bytes = store_->GetRaw(state::Kind::kAgentSession, SessionKey("iad", "agent"));
    v1::AgentSession session;
    EXPECT_TRUE(bytes.ok()) << bytes.status();
    if (bytes.ok()) {
      EXPECT_TRUE(session.ParseFromString(*bytes));
    }
    return session.last_applied_seq();
  }

  v1::LinkHealth ModelHealth(const std::string& link_id) const {
    for (const auto& link : model_->Links()) {
      if (link.id() == link_id) return link.health();
    }
    return {};
  }

  std::string LastCause() const {
    auto entries = store_->ReadJournal(store_->LastJournalSeq(), 1);
    EXPECT_TRUE(entries.ok() && entries->size() == 1);
    return entries.ok() && !entries->empty() ? entries->front().cause : "";
  }

  std::shared_ptr<state::Store> store_ = state::NewMemoryStore();
  std::unique_ptr<Model> model_;
};

TEST_F(ModelMeasurementsTest, OnlyADeltaThatChangesNoStateIsPerishable) {
  // RTT moves, the state stays: applied, not written.
  const uint64_t journal = store_->LastJournalSeq();
  auto measured = Apply(Delta(3, {Link("iad-chi-a", v1::OPER_STATE_UP, 2000)}));
  ASSERT_TRUE(measured.ok()) << measured.status();
  EXPECT_TRUE(measured->perishable);
  EXPECT_TRUE(measured->changes.empty());
  EXPECT_EQ(ModelHealth("iad-chi-a").rtt_us(), 2000u);
  EXPECT_EQ(StoredHealth("iad-chi-a").rtt_us(), 1000u);
  EXPECT_EQ(StoredSessionSeq(), 2u);
  EXPECT_EQ(store_->LastJournalSeq(), journal);

  // A link going down, even beside a measurement: stored before the answer.
  auto down = Apply(Delta(4, {Link("iad-chi-a", v1::OPER_STATE_UP, 2100), Link("iad-chi-b", v1::OPER_STATE_DOWN, 0)}));
  ASSERT_TRUE(down.ok()) << down.status();
  EXPECT_FALSE(down->perishable);
  ASSERT_EQ(down->changes.size(), 1u);
  EXPECT_EQ(StoredHealth("iad-chi-b").state(), v1::OPER_STATE_DOWN);
  EXPECT_EQ(StoredHealth("iad-chi-a").rtt_us(), 2100u);
  EXPECT_EQ(StoredSessionSeq(), 4u);

  // Degraded is a state too.
  auto degraded = Apply(Delta(5, {Link("iad-chi-a", v1::OPER_STATE_DEGRADED, 2100)}));
  ASSERT_TRUE(degraded.ok());
  EXPECT_FALSE(degraded->perishable);
  EXPECT_EQ(StoredHealth("iad-chi-a").state(), v1::OPER_STATE_DEGRADED);

  // A fabric plane report is never a measurement only, changed or not.
  v1::AgentMessage plane = Delta(6, {});
  auto* health = plane.mutable_delta()->add_planes();
  health->set_plane(0);
  health->set_state(v1::OPER_STATE_UP);
  auto planes = Apply(plane);
  ASSERT_TRUE(planes.ok()) << planes.status();
  EXPECT_FALSE(planes->perishable);
  EXPECT_EQ(StoredSessionSeq(), 6u);

  // Snapshot batches and sync markers are stored (the session's snapshot
  // bookkeeping, and a sync turns the links it did not report unknown).
  auto snapshot = Apply(Snapshot(7, {Link("iad-chi-a", v1::OPER_STATE_DEGRADED, 3000)}));
  ASSERT_TRUE(snapshot.ok());
  EXPECT_FALSE(snapshot->perishable);
  EXPECT_EQ(StoredHealth("iad-chi-a").rtt_us(), 3000u);
  auto sync = Apply(Sync(8));
  ASSERT_TRUE(sync.ok());
  EXPECT_FALSE(sync->perishable);
  EXPECT_EQ(StoredHealth("iad-chi-b").state(), v1::OPER_STATE_UNKNOWN);
  EXPECT_EQ(StoredSessionSeq(), 8u);
}

TEST_F(ModelMeasurementsTest, AMeasurementAloneDoesNotBumpTheRevision) {
  const uint64_t revision = model_->Revision();
  ASSERT_TRUE(Apply(Delta(3, {Link("iad-chi-a", v1::OPER_STATE_UP, 2000)})).ok());
  EXPECT_EQ(model_->Revision(), revision);
  // ... but the solver's view has it.
  auto snapshot = model_->CurrentSnapshot();
  ASSERT_TRUE(Apply(Delta(4, {Link("iad-chi-a", v1::OPER_STATE_UP, 2500)})).ok());
  EXPECT_EQ(model_->Revision(), revision);
  EXPECT_NE(model_->CurrentSnapshot(), snapshot) << "the measurement did not reach the solver's view";
  ASSERT_TRUE(Apply(Delta(5, {Link("iad-chi-a", v1::OPER_STATE_DOWN, 0)})).ok());
  EXPECT_GT(model_->Revision(), revision);
}

TEST_F(ModelMeasurementsTest, AFlushWritesTheLatestValuePerLinkWithItsSessionAndNamesEveryReport) {
  for (uint64_t seq = 3; seq <= 6; ++seq) {
    auto applied = Apply(Delta(seq, {Link("iad-chi-a", v1::OPER_STATE_UP, 1000 + seq)}));
    ASSERT_TRUE(applied.ok() && applied->perishable);
  }
  ASSERT_TRUE(Apply(Delta(7, {Link("iad-chi-b", v1::OPER_STATE_UP, 5000)})).ok());
  const uint64_t journal = store_->LastJournalSeq();
  auto written = model_->FlushMeasurements();
  ASSERT_TRUE(written.ok()) << written.status();
  EXPECT_EQ(*written, 2u) << "one write per link, however many reports";
  EXPECT_EQ(store_->LastJournalSeq(), journal + 1) << "one commit";
  EXPECT_EQ(StoredHealth("iad-chi-a").rtt_us(), 1006u);
  EXPECT_EQ(StoredHealth("iad-chi-b").rtt_us(), 5000u);
  EXPECT_EQ(StoredSessionSeq(), 7u);
  EXPECT_EQ(LastCause(),
            "telemetry from spiffe://geodesic/site/iad/agent seq 3, telemetry from spiffe://geodesic/site/iad/agent "
            "seq 4, telemetry from spiffe://geodesic/site/iad/agent seq 5, telemetry from "
            "spiffe://geodesic/site/iad/agent seq 6, telemetry from spiffe://geodesic/site/iad/agent seq 7");
  // Nothing left: the next flush writes nothing.
  auto again = model_->FlushMeasurements();
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, 0u);
  EXPECT_EQ(store_->LastJournalSeq(), journal + 1);
}

TEST_F(ModelMeasurementsTest, AStateChangeWritesTheMeasurementsBeforeItInTheSameCommit) {
  ASSERT_TRUE(Apply(Delta(3, {Link("iad-chi-a", v1::OPER_STATE_UP, 2000)})).ok());
  ASSERT_TRUE(Apply(Delta(4, {Link("iad-chi-b", v1::OPER_STATE_UP, 2200)})).ok());
  // b goes down: its own report wins over its earlier measurement.
  ASSERT_TRUE(Apply(Delta(5, {Link("iad-chi-b", v1::OPER_STATE_DOWN, 0)})).ok());
  EXPECT_EQ(StoredHealth("iad-chi-a").rtt_us(), 2000u);
  EXPECT_EQ(StoredHealth("iad-chi-b").state(), v1::OPER_STATE_DOWN);
  EXPECT_EQ(StoredSessionSeq(), 5u);
  EXPECT_EQ(LastCause(),
            "telemetry from spiffe://geodesic/site/iad/agent seq 3, telemetry from spiffe://geodesic/site/iad/agent "
            "seq 4, telemetry from spiffe://geodesic/site/iad/agent seq 5");
  auto written = model_->FlushMeasurements();
  ASSERT_TRUE(written.ok());
  EXPECT_EQ(*written, 0u) << "the state change wrote them already";
}

TEST_F(ModelMeasurementsTest, AResumedSessionIsWrittenBeforeItIsAnswered) {
  ASSERT_TRUE(Apply(Delta(3, {Link("iad-chi-a", v1::OPER_STATE_UP, 2000)})).ok());
  auto session = model_->OpenSession("iad", "agent", kIncarnation);
  ASSERT_TRUE(session.ok());
  EXPECT_EQ(session->last_applied_seq(), 3u);
  EXPECT_EQ(StoredSessionSeq(), 3u);
  EXPECT_EQ(StoredHealth("iad-chi-a").rtt_us(), 2000u);
}

TEST_F(ModelMeasurementsTest, DuplicatesAndRefusalsOfMeasurementsChangeNothing) {
  ASSERT_TRUE(Apply(Delta(3, {Link("iad-chi-a", v1::OPER_STATE_UP, 2000)})).ok());
  auto duplicate = Apply(Delta(3, {Link("iad-chi-a", v1::OPER_STATE_UP, 9999)}));
  ASSERT_TRUE(duplicate.ok());
  EXPECT_TRUE(duplicate->duplicate);
  EXPECT_EQ(ModelHealth("iad-chi-a").rtt_us(), 2000u);
  auto gap = Apply(Delta(5, {Link("iad-chi-a", v1::OPER_STATE_UP, 9999)}));
  EXPECT_EQ(gap.status().code(), absl::StatusCode::kFailedPrecondition);
  auto foreign = Apply(Delta(4, {Link("iad-chi-a", v1::OPER_STATE_UP, 9999), Link("nowhere", v1::OPER_STATE_UP, 1)}));
  EXPECT_EQ(foreign.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ModelHealth("iad-chi-a").rtt_us(), 2000u);
  ASSERT_TRUE(model_->FlushMeasurements().ok());
  EXPECT_EQ(StoredHealth("iad-chi-a").rtt_us(), 2000u);
  EXPECT_EQ(StoredSessionSeq(), 3u);
}

TEST_F(ModelMeasurementsTest, AnImportThatRemovesAMeasuredLinkDoesNotBringItsHealthBack) {
  ASSERT_TRUE(Apply(Delta(3, {Link("iad-chi-a", v1::OPER_STATE_UP, 2000), Link("iad-chi-b", v1::OPER_STATE_UP, 2000)})).ok());
  topology::Topology fewer = Inventory();
  std::erase_if(fewer.links, [](const v1::Link& link) { return link.id() == "iad-chi-b"; });
  ASSERT_TRUE(model_->ImportInventory(fewer, "test", {}).ok());
  ASSERT_TRUE(model_->FlushMeasurements().ok());
  EXPECT_EQ(StoredHealth("iad-chi-a").rtt_us(), 2000u);
  EXPECT_EQ(store_->GetRaw(state::Kind::kLinkHealth, "iad-chi-b").status().code(), absl::StatusCode::kNotFound);
}

// Closing the model (a clean shutdown) writes and syncs what is left.
TEST(ModelMeasurementsShutdownTest, ClosingTheModelWritesTheLastMeasurements) {
  const testing::TempDir temp("model-measurements");
  const std::string dir = temp.Join("state");
  auto open = [&] {
    auto store = state::OpenRocksStore(dir);
    EXPECT_TRUE(store.ok()) << store.status();
    auto model = Model::Open(*std::move(store));
    EXPECT_TRUE(model.ok()) << model.status();
    return *std::move(model);
  };
  {
    auto model = open();
    ASSERT_TRUE(model->ApplyConfiguredInventory(Inventory(), "inventory.yaml").ok());
    ASSERT_TRUE(model->OpenSession("iad", "agent", kIncarnation).ok());
    auto apply = [&](const v1::AgentMessage& message) {
      return model->ApplyReport("iad", "agent", kIncarnation, message, "a");
    };
    ASSERT_TRUE(apply(Snapshot(1, {Link("iad-chi-a", v1::OPER_STATE_UP, 1000)})).ok());
    ASSERT_TRUE(apply(Sync(2)).ok());
    auto measured = apply(Delta(3, {Link("iad-chi-a", v1::OPER_STATE_UP, 4242)}));
    ASSERT_TRUE(measured.ok() && measured->perishable);
  }
  auto model = open();
  for (const auto& link : model->Links()) {
    if (link.id() == "iad-chi-a") {
      EXPECT_EQ(link.health().rtt_us(), 4242u);
    }
  }
  auto session = model->OpenSession("iad", "agent", kIncarnation);
  ASSERT_TRUE(session.ok());
  EXPECT_EQ(session->last_applied_seq(), 3u);
  model.reset();
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace geodesic::pathcomp
