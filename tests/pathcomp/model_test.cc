#include "pathcomp/model/model.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <memory>
#include <thread>

#include "state/memory_store.h"
#include "state/rocks_store.h"
#include "tests/support/forwarding_store.h"
#include "tests/support/test_dirs.h"

namespace geodesic::pathcomp {
namespace {

using ::testing::HasSubstr;

constexpr uint64_t kIncarnation = 99;

topology::Topology SmallInventory() {
  auto topology = topology::ParseTopology(R"(
facilities:
  - {id: iad, position: {lat: 39, lon: -77}, prefixes: [10.1.0.0/16]}
  - {id: chi, position: {lat: 41, lon: -87}, prefixes: [10.3.0.0/16]}
nodes:
  - {id: iad1, facility: iad}
  - {id: chi1, facility: chi}
links:
  - {id: iad-chi, reverse: chi-iad, from: iad1, to: chi1, capacity_gbps: 100}
fabrics:
  - facility: iad
    planes: 2
    rails: 8
    gpus: 1024
    nic_speed_gbps: 400
    backbone_uplink_gbps: 1000000  # above what the planes carry, so planes set the exchange
    layers:
      - {name: leaf,  switch_count: 32, downlink_ports: 32, uplink_ports: 32, port_speed_gbps: 400}
      - {name: spine, switch_count: 16, downlink_ports: 64, port_speed_gbps: 400}
services:
  - {id: retriever, replicas: [chi]}
)",
                                          "inventory.yaml");
  EXPECT_TRUE(topology.ok()) << topology.status();
  return *topology;
}

v1::AgentMessage Snapshot(uint64_t seq, const std::string& link, v1::OperState state) {
  v1::AgentMessage message;
  message.mutable_snapshot()->set_seq(seq);
  auto* report = message.mutable_snapshot()->add_links();
  report->set_link_id(link);
  report->mutable_health()->set_state(state);
  return message;
}

v1::AgentMessage Delta(uint64_t seq, const std::string& link, v1::OperState state) {
  const v1::Update update = Snapshot(seq, link, state).snapshot();
  v1::AgentMessage message;
  *message.mutable_delta() = update;
  return message;
}

v1::AgentMessage Sync(uint64_t seq) {
  v1::AgentMessage message;
  message.mutable_sync()->set_seq(seq);
  return message;
}

class ModelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto model = Model::Open(state::NewMemoryStore());
    ASSERT_TRUE(model.ok()) << model.status();
    model_ = *std::move(model);
    auto imported = model_->ApplyConfiguredInventory(SmallInventory(), "inventory.yaml");
    ASSERT_TRUE(imported.ok()) << imported.status();
    ASSERT_TRUE(imported->has_value());
    ASSERT_TRUE(model_->OpenSession("iad", "agent", kIncarnation).ok());
  }

  absl::StatusOr<ReportResult> Apply(const v1::AgentMessage& message) {
    return model_->ApplyReport("iad", "agent", kIncarnation, message, "test-agent");
  }

  v1::OperState StateOf(const std::string& link_id) {
    for (const auto& link : model_->Links()) {
      if (link.id() == link_id) return link.health().state();
    }
    return v1::OPER_STATE_UNKNOWN;
  }

  std::unique_ptr<Model> model_;
};

TEST_F(ModelTest, AppliesSnapshotSyncAndDeltasInOrder) {
  auto first = Apply(Snapshot(1, "iad-chi", v1::OPER_STATE_UP));
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->changes.size(), 1u);
  ASSERT_TRUE(Apply(Sync(2)).ok());
  EXPECT_EQ(StateOf("iad-chi"), v1::OPER_STATE_UP);
  auto down = Apply(Delta(3, "iad-chi", v1::OPER_STATE_DOWN));
  ASSERT_TRUE(down.ok());
  ASSERT_EQ(down->changes.size(), 1u);
  EXPECT_EQ(down->changes[0].previous, v1::OPER_STATE_UP);
  EXPECT_EQ(down->changes[0].current, v1::OPER_STATE_DOWN);
  EXPECT_EQ(StateOf("iad-chi"), v1::OPER_STATE_DOWN);
}

TEST_F(ModelTest, DuplicatesAreAcknowledgedButNotReapplied) {
  ASSERT_TRUE(Apply(Snapshot(1, "iad-chi", v1::OPER_STATE_UP)).ok());
  ASSERT_TRUE(Apply(Sync(2)).ok());
  ASSERT_TRUE(Apply(Delta(3, "iad-chi", v1::OPER_STATE_DOWN)).ok());
  // A resend of seq 1 (up) after a reconnect must not bring the link back up.
  auto resent = Apply(Snapshot(1, "iad-chi", v1::OPER_STATE_UP));
  ASSERT_TRUE(resent.ok());
  EXPECT_TRUE(resent->duplicate);
  EXPECT_EQ(StateOf("iad-chi"), v1::OPER_STATE_DOWN);
}

TEST_F(ModelTest, GapsAndOutOfOrderMessagesAreRefused) {
  auto gap = Apply(Snapshot(2, "iad-chi", v1::OPER_STATE_UP));
  EXPECT_EQ(gap.status().code(), absl::StatusCode::kFailedPrecondition);
  auto delta_first = Apply(Delta(1, "iad-chi", v1::OPER_STATE_UP));
  EXPECT_THAT(std::string(delta_first.status().message()), HasSubstr("start with a snapshot"));
  ASSERT_TRUE(Apply(Snapshot(1, "iad-chi", v1::OPER_STATE_UP)).ok());
  auto delta_in_snapshot = Apply(Delta(2, "iad-chi", v1::OPER_STATE_UP));
  EXPECT_EQ(delta_in_snapshot.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(StateOf("iad-chi"), v1::OPER_STATE_UP);
}

TEST_F(ModelTest, AgentMayNotReportAnotherFacilitysLinkAndNothingChanges) {
  ASSERT_TRUE(Apply(Snapshot(1, "iad-chi", v1::OPER_STATE_UP)).ok());
  ASSERT_TRUE(Apply(Sync(2)).ok());
  v1::AgentMessage message = Delta(3, "iad-chi", v1::OPER_STATE_DOWN);
  auto* foreign = message.mutable_delta()->add_links();
  foreign->set_link_id("chi-iad");
  foreign->mutable_health()->set_state(v1::OPER_STATE_DOWN);
  auto refused = Apply(message);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kPermissionDenied);
  // The whole message is refused: the legitimate part did not land either.
  EXPECT_EQ(StateOf("iad-chi"), v1::OPER_STATE_UP);
  EXPECT_EQ(StateOf("chi-iad"), v1::OPER_STATE_UNKNOWN);
  // And the sequence did not advance: seq 3 is still expected.
  EXPECT_TRUE(Apply(Delta(3, "iad-chi", v1::OPER_STATE_DOWN)).ok());
}

TEST_F(ModelTest, MalformedReportsAreRefused) {
  v1::AgentMessage message = Snapshot(1, "iad-chi", v1::OPER_STATE_UP);
  message.mutable_snapshot()->mutable_links(0)->mutable_health()->set_loss_ratio(1.5);
  EXPECT_EQ(Apply(message).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Apply(Snapshot(1, "no-such-link", v1::OPER_STATE_UP)).status().code(),
            absl::StatusCode::kInvalidArgument);
  message = Snapshot(1, "iad-chi", v1::OPER_STATE_UP);
  *message.mutable_snapshot()->add_links() = message.snapshot().links(0);
  EXPECT_THAT(std::string(Apply(message).status().message()), HasSubstr("reported twice"));
  EXPECT_EQ(StateOf("iad-chi"), v1::OPER_STATE_UNKNOWN);
}

v1::FabricPlaneHealth PlaneHealth(uint32_t plane, v1::OperState state, std::vector<uint32_t> failed_rails = {}) {
  v1::FabricPlaneHealth health;
  health.set_plane(plane);
  health.set_state(state);
  for (uint32_t rail : failed_rails) health.add_failed_rails(rail);
  return health;
}

TEST_F(ModelTest, FabricPlaneReportsReplaceThePlanesHealthAndShrinkTheExchange) {
  ASSERT_TRUE(Apply(Snapshot(1, "iad-chi", v1::OPER_STATE_UP)).ok());
  ASSERT_TRUE(Apply(Sync(2)).ok());
  const auto intact = model_->CurrentSnapshot();
  const double full = intact->facility_exchange_gbps(intact->FacilityIndex("iad"));

  v1::AgentMessage message = Delta(3, "iad-chi", v1::OPER_STATE_UP);
  *message.mutable_delta()->add_planes() = PlaneHealth(0, v1::OPER_STATE_UP);
  *message.mutable_delta()->add_planes() = PlaneHealth(1, v1::OPER_STATE_DOWN);
  auto result = Apply(message);
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->plane_changes.size(), 2u);  // from no report at all
  EXPECT_EQ(result->plane_changes[1].plane, 1u);
  EXPECT_EQ(result->plane_changes[1].current, v1::OPER_STATE_DOWN);
  const auto degraded = model_->CurrentSnapshot();
  const double one_plane = degraded->facility_exchange_gbps(degraded->FacilityIndex("iad"));
  EXPECT_NEAR(one_plane, full / 2, 1e-6 * full);

  // The same health again is no change; failed rails are.
  message = Delta(4, "iad-chi", v1::OPER_STATE_UP);
  *message.mutable_delta()->add_planes() = PlaneHealth(1, v1::OPER_STATE_DOWN);
  *message.mutable_delta()->add_planes() = PlaneHealth(0, v1::OPER_STATE_DEGRADED, {2, 5});
  result = Apply(message);
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_EQ(result->plane_changes.size(), 1u);
  EXPECT_EQ(result->plane_changes[0].failed_rails, 2);
  ASSERT_EQ(model_->Fabrics().size(), 1u);
  EXPECT_EQ(model_->Fabrics()[0].plane_health_size(), 2);
}

TEST_F(ModelTest, BadPlaneReportsAreRefusedAndChangeNothing) {
  ASSERT_TRUE(Apply(Snapshot(1, "iad-chi", v1::OPER_STATE_UP)).ok());
  ASSERT_TRUE(Apply(Sync(2)).ok());
  const std::string before = model_->Fabrics()[0].SerializeAsString();
  const std::vector<std::pair<std::vector<v1::FabricPlaneHealth>, std::string>> cases = {
      {{PlaneHealth(2, v1::OPER_STATE_DOWN)}, "out of range"},
      {{PlaneHealth(0, v1::OPER_STATE_DOWN, {8})}, "out of range"},
      {{PlaneHealth(0, v1::OPER_STATE_DOWN), PlaneHealth(0, v1::OPER_STATE_UP)}, "reported twice"},
  };
  for (const auto& [planes, expected] : cases) {
    v1::AgentMessage message = Delta(3, "iad-chi", v1::OPER_STATE_DOWN);
    for (const auto& plane : planes) *message.mutable_delta()->add_planes() = plane;
    auto result = Apply(message);
    ASSERT_FALSE(result.ok());
    EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(result.status().message(), HasSubstr(expected));
  }
  EXPECT_EQ(model_->Fabrics()[0].SerializeAsString(), before);
  EXPECT_EQ(StateOf("iad-chi"), v1::OPER_STATE_UP);  // the link in the refused message did not change either
  // A facility without a fabric has no planes to report.
  ASSERT_TRUE(model_->OpenSession("chi", "agent", kIncarnation).ok());
  v1::AgentMessage chi = Snapshot(1, "chi-iad", v1::OPER_STATE_UP);
  *chi.mutable_snapshot()->add_planes() = PlaneHealth(0, v1::OPER_STATE_UP);
  auto refused = model_->ApplyReport("chi", "agent", kIncarnation, chi, "test-agent");
  EXPECT_THAT(refused.status().message(), HasSubstr("has no fabric"));
}

TEST_F(ModelTest, SyncMarksLinksMissingFromTheSnapshotUnknown) {
  ASSERT_TRUE(Apply(Snapshot(1, "iad-chi", v1::OPER_STATE_UP)).ok());
  ASSERT_TRUE(Apply(Sync(2)).ok());
  // A new snapshot that no longer lists the link.
  v1::AgentMessage empty;
  empty.mutable_snapshot()->set_seq(3);
  ASSERT_TRUE(Apply(empty).ok());
  EXPECT_EQ(StateOf("iad-chi"), v1::OPER_STATE_UP);
  ASSERT_TRUE(Apply(Sync(4)).ok());
  EXPECT_EQ(StateOf("iad-chi"), v1::OPER_STATE_UNKNOWN);
}

TEST_F(ModelTest, SessionSurvivesReopenOnlyForTheSameIncarnation) {
  ASSERT_TRUE(Apply(Snapshot(1, "iad-chi", v1::OPER_STATE_UP)).ok());
  auto same = model_->OpenSession("iad", "agent", kIncarnation);
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(same->last_applied_seq(), 1u);
  auto fresh = model_->OpenSession("iad", "agent", kIncarnation + 1);
  ASSERT_TRUE(fresh.ok());
  EXPECT_EQ(fresh->last_applied_seq(), 0u);
  EXPECT_EQ(model_->OpenSession("nowhere", "agent", 1).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// The header promises every method may be called from any thread: two agents'
// streams apply at once while a reader lists the links. Run under TSan by
// `make test-sanitize` (label threads), which fails on any unordered access.
TEST_F(ModelTest, TwoAgentsAndAReaderAtOnce) {
  ASSERT_TRUE(model_->OpenSession("chi", "agent", kIncarnation).ok());
  constexpr uint64_t kDeltas = 200;
  auto agent = [this](const std::string& facility, const std::string& link) {
    auto apply = [&](const v1::AgentMessage& message) {
      return model_->ApplyReport(facility, "agent", kIncarnation, message, "test-agent").ok();
    };
    EXPECT_TRUE(apply(Snapshot(1, link, v1::OPER_STATE_UP)));
    EXPECT_TRUE(apply(Sync(2)));
    for (uint64_t seq = 3; seq < 3 + kDeltas; ++seq) {
      EXPECT_TRUE(apply(Delta(seq, link, seq % 2 == 0 ? v1::OPER_STATE_UP : v1::OPER_STATE_DOWN)));
    }
  };
  std::atomic<bool> done{false};
  std::thread reader([&] {
    while (!done) EXPECT_EQ(model_->Links().size(), 2u);
  });
  std::thread iad(agent, "iad", "iad-chi");
  std::thread chi(agent, "chi", "chi-iad");
  iad.join();
  chi.join();
  done = true;
  reader.join();
  // The last delta (seq 202) of each agent says up, and every one was applied once.
  EXPECT_EQ(StateOf("iad-chi"), v1::OPER_STATE_UP);
  EXPECT_EQ(StateOf("chi-iad"), v1::OPER_STATE_UP);
  EXPECT_EQ(model_->OpenSession("iad", "agent", kIncarnation)->last_applied_seq(), 2 + kDeltas);
  EXPECT_EQ(model_->OpenSession("chi", "agent", kIncarnation)->last_applied_seq(), 2 + kDeltas);
}

// A memory store that counts its syncs and can fail them, as a disk would.
class SyncWatchingStore final : public testing::ForwardingStore {
 public:
  explicit SyncWatchingStore(std::shared_ptr<std::atomic<int>> syncs, bool fail_syncs = false)
      : ForwardingStore(state::NewMemoryStore()), syncs_(std::move(syncs)), fail_syncs_(fail_syncs) {}
  absl::StatusOr<uint64_t> CommitUnsynced(const state::ChangeSet& changes) override {
    unsynced_ = true;
    return ForwardingStore::CommitUnsynced(changes);
  }
  absl::Status Sync() override {
    ++*syncs_;
    if (fail_syncs_ && unsynced_) return absl::DataLossError("fsync: input/output error");
    return ForwardingStore::Sync();
  }

 private:
  std::shared_ptr<std::atomic<int>> syncs_;
  const bool fail_syncs_;
  bool unsynced_ = false;
};

std::unique_ptr<Model> OpenWithSmallInventory(state::StorePtr store) {
  auto model = Model::Open(std::move(store));
  EXPECT_TRUE(model.ok()) << model.status();
  if (!model.ok()) return nullptr;
  EXPECT_TRUE((*model)->ApplyConfiguredInventory(SmallInventory(), "inventory.yaml").ok());
  EXPECT_TRUE((*model)->OpenSession("iad", "agent", kIncarnation).ok());
  return *std::move(model);
}

// Telemetry is written unsynced and synced while the next group is written:
// no report is answered before its sync, nor a duplicate of one, nor a
// reconnecting agent told what is applied.
TEST(ModelStoreTest, TelemetryIsAnsweredOnlyOnceSynced) {
  auto syncs = std::make_shared<std::atomic<int>>(0);
  std::unique_ptr<Model> model = OpenWithSmallInventory(std::make_unique<SyncWatchingStore>(syncs));
  ASSERT_NE(model, nullptr);
  const int before = *syncs;
  ASSERT_TRUE(model->ApplyReport("iad", "agent", kIncarnation, Snapshot(1, "iad-chi", v1::OPER_STATE_UP), "a").ok());
  EXPECT_EQ(*syncs, before + 1);
  auto duplicate = model->ApplyReport("iad", "agent", kIncarnation, Snapshot(1, "iad-chi", v1::OPER_STATE_UP), "a");
  ASSERT_TRUE(duplicate.ok());
  EXPECT_TRUE(duplicate->duplicate);
  EXPECT_EQ(*syncs, before + 2);
  ASSERT_TRUE(model->OpenSession("iad", "agent", kIncarnation).ok());
  EXPECT_EQ(*syncs, before + 3);
  // A refused report rests on nothing stored.
  EXPECT_FALSE(model->ApplyReport("iad", "agent", kIncarnation, Sync(9), "a").ok());
  EXPECT_EQ(*syncs, before + 3);
}

// A failed sync leaves the model ahead of the disk: pathcomp stops rather
// than let an agent drop reports the store may have lost.
TEST(ModelStoreDeathTest, AFailedTelemetrySyncStopsPathcomp) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        auto syncs = std::make_shared<std::atomic<int>>(0);
        std::unique_ptr<Model> model =
            OpenWithSmallInventory(std::make_unique<SyncWatchingStore>(syncs, /*fail_syncs=*/true));
        (void)model->ApplyReport("iad", "agent", kIncarnation, Snapshot(1, "iad-chi", v1::OPER_STATE_UP), "a");
      },
      "cannot make telemetry durable");
}

// Telemetry writes a link's health apart from its inventory record: it is
// there again after a restart, and it leaves with the link.
TEST(ModelStoreTest, MeasuredHealthSurvivesReopenAndLeavesWithItsLink) {
  const testing::TempDir temp("model-health");
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
    ASSERT_TRUE(model->ApplyConfiguredInventory(SmallInventory(), "inventory.yaml").ok());
    ASSERT_TRUE(model->OpenSession("iad", "agent", kIncarnation).ok());
    v1::AgentMessage snapshot = Snapshot(1, "iad-chi", v1::OPER_STATE_UP);
    snapshot.mutable_snapshot()->mutable_links(0)->mutable_health()->set_rtt_us(4242);
    ASSERT_TRUE(model->ApplyReport("iad", "agent", kIncarnation, snapshot, "test-agent").ok());
    ASSERT_TRUE(model->ApplyReport("iad", "agent", kIncarnation, Sync(2), "test-agent").ok());
  }
  auto health_of = [](const Model& model, const std::string& id) {
    for (const auto& link : model.Links()) {
      if (link.id() == id) return link.health();
    }
    return v1::LinkHealth();
  };
  auto model = open();
  EXPECT_EQ(health_of(*model, "iad-chi").rtt_us(), 4242u);
  EXPECT_EQ(health_of(*model, "iad-chi").state(), v1::OPER_STATE_UP);
  EXPECT_EQ(model->OpenSession("iad", "agent", kIncarnation)->last_applied_seq(), 2u);

  topology::Topology without_links = SmallInventory();
  without_links.links.clear();
  ASSERT_TRUE(model->ImportInventory(without_links, "test", {}).ok());
  ASSERT_TRUE(model->ImportInventory(SmallInventory(), "test", {}).ok());
  EXPECT_EQ(health_of(*model, "iad-chi").state(), v1::OPER_STATE_UNKNOWN);
  model.reset();
  EXPECT_EQ(health_of(*open(), "iad-chi").rtt_us(), 0u);  // gone from the store too
  std::filesystem::remove_all(dir);
}

TEST_F(ModelTest, IntentsAreValidatedAndUnique) {
  v1::Intent intent;
  intent.set_id("drain-1");
  intent.mutable_drain()->mutable_target()->set_link_id("iad-chi");
  ASSERT_TRUE(model_->AddIntent(intent, "alice", 1).ok());
  EXPECT_EQ(model_->Intents().at(0).created_by(), "alice");
  EXPECT_EQ(model_->AddIntent(intent, "alice", 1).code(), absl::StatusCode::kAlreadyExists);
  intent.set_id("drain-2");
  EXPECT_EQ(model_->AddIntent(intent, "alice", 1).code(), absl::StatusCode::kAlreadyExists);
  intent.mutable_drain()->mutable_target()->set_link_id("nope");
  EXPECT_EQ(model_->AddIntent(intent, "alice", 1).code(), absl::StatusCode::kNotFound);
  intent.set_id("Bad Id");
  EXPECT_EQ(model_->AddIntent(intent, "alice", 1).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(model_->Intents().size(), 1u);
  EXPECT_TRUE(model_->DeleteIntent("drain-1", "alice").ok());
  EXPECT_EQ(model_->DeleteIntent("drain-1", "alice").code(), absl::StatusCode::kNotFound);
}

TEST_F(ModelTest, WorkloadsAreValidated) {
  v1::Workload flow;
  flow.set_id("train-1");
  flow.mutable_elephant()->set_src_facility_id("iad");
  flow.mutable_elephant()->set_dst_prefix("10.3.0.0/16");
  flow.mutable_elephant()->set_demand_gbps(40);
  EXPECT_TRUE(model_->AddWorkload(flow, "alice").ok());
  flow.set_id("train-2");
  flow.mutable_elephant()->set_demand_gbps(-1);
  EXPECT_EQ(model_->AddWorkload(flow, "alice").code(), absl::StatusCode::kInvalidArgument);
  v1::Workload chain;
  chain.set_id("rag-1");
  chain.mutable_chain()->set_origin_facility_id("iad");
  chain.mutable_chain()->add_service_ids("retriever");
  chain.mutable_chain()->add_service_ids("llm");
  chain.mutable_chain()->set_latency_budget_us(100000);
  EXPECT_EQ(model_->AddWorkload(chain, "alice").code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(model_->Workloads().size(), 1u);
}

// What a follower's workloads mirror does with a batch from etcd: one commit
// for what holds, each refusal on its own.
TEST_F(ModelTest, MirroredWorkloadsCommitTogetherAndAreRefusedOneByOne) {
  auto flow = [](const std::string& id, const std::string& from, double gbps) {
    v1::Workload workload;
    workload.set_id(id);
    workload.mutable_elephant()->set_src_facility_id(from);
    workload.mutable_elephant()->set_dst_prefix("10.3.0.0/16");
    workload.mutable_elephant()->set_demand_gbps(gbps);
    return workload;
  };
  ASSERT_TRUE(model_->AddWorkload(flow("train-0", "iad", 10), "alice").ok());
  ASSERT_TRUE(model_->AddWorkload(flow("train-9", "iad", 10), "alice").ok());
  const uint64_t before = model_->LastJournalSeq();
  const auto refused = model_->MirrorWorkloads(
      {flow("train-0", "iad", 20), flow("train-1", "iad", 30), flow("train-2", "nowhere", 30)}, {"train-9", "train-x"},
      "3 workloads put and 2 removed (etcd)");
  ASSERT_EQ(refused.size(), 1u);
  EXPECT_EQ(refused[0].first, "train-2");
  EXPECT_EQ(refused[0].second.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(model_->LastJournalSeq(), before + 1) << "one commit for the whole batch";
  std::map<std::string, double> demands;
  for (const auto& workload : model_->Workloads()) demands[workload.id()] = workload.elephant().demand_gbps();
  EXPECT_EQ(demands, (std::map<std::string, double>{{"train-0", 20}, {"train-1", 30}}));
}

}  // namespace
}  // namespace geodesic::pathcomp
