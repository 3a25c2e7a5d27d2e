// Model::ImportInventory and ApplyConfiguredInventory on real RocksDB: what an
// import changes and keeps, what it refuses, the configured inventory applied
// once per content, and the incremental snapshot equal to a rebuild.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "pathcomp/solver/snapshot.h"
#include "tests/pathcomp/model_import_testing.h"

namespace geodesic::pathcomp {
namespace {

using ::testing::HasSubstr;
using namespace model_testing;  // NOLINT: the shared helpers of these tests

// --- Import semantics ---

using ImportSemanticsTest = StoredAbileneTest;

TEST_F(ImportSemanticsTest, ImportingTheSameInventoryAgainChangesNothing) {
  const uint64_t seq = model_->LastJournalSeq();
  const std::string before = EntitiesText(*model_);
  auto again = model_->ImportInventory(abilene_, "import of Abilene, again");
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_FALSE(again->changed());
  EXPECT_EQ(again->journal_seq, 0u);
  for (const ImportCount& count : again->counts) {
    EXPECT_EQ(count.added + count.changed + count.removed, 0u) << static_cast<int>(count.kind);
  }
  EXPECT_EQ(CountOf(*again, Kind::kLink).unchanged, 28u);
  EXPECT_EQ(CountOf(*again, Kind::kWorkload).unchanged, 110u);
  EXPECT_EQ(model_->LastJournalSeq(), seq);
  EXPECT_EQ(EntitiesText(*model_), before);
}

TEST_F(ImportSemanticsTest, AChangedCapacityIsAChangeAndKeepsTheMeasuredHealth) {
  ReportHealth("0_new_york", "edge_0", v1::OPER_STATE_UP, 7000);
  ASSERT_EQ(LinkOf(*model_, "edge_0").health().state(), v1::OPER_STATE_UP);
  const double capacity = abilene_.links[0].capacity_gbps();
  topology::Topology upgraded = abilene_;
  upgraded.links[0].set_capacity_gbps(capacity * 4);

  auto imported = model_->ImportInventory(upgraded, "capacity upgrade");
  ASSERT_TRUE(imported.ok()) << imported.status();
  EXPECT_TRUE(imported->changed());
  EXPECT_EQ(CountOf(*imported, Kind::kLink).changed, 1u);
  EXPECT_EQ(CountOf(*imported, Kind::kLink).unchanged, 27u);
  EXPECT_EQ(CountOf(*imported, Kind::kFacility).unchanged, 11u);
  for (int reopened = 0; reopened < 2; ++reopened) {
    SCOPED_TRACE(reopened ? "after reopening" : "in memory");
    const v1::Link link = LinkOf(*model_, "edge_0");
    EXPECT_DOUBLE_EQ(link.capacity_gbps(), capacity * 4);
    EXPECT_EQ(link.health().state(), v1::OPER_STATE_UP);
    EXPECT_EQ(link.health().rtt_us(), 7000u);
    const auto snapshot = model_->CurrentSnapshot();
    const int index = snapshot->LinkIndex("edge_0");
    ASSERT_GE(index, 0);
    EXPECT_DOUBLE_EQ(snapshot->link_capacity_gbps(index), capacity * 4);
    EXPECT_TRUE(snapshot->link_state(index).usable);
    EXPECT_EQ(snapshot->link_state(index).cost_us, 3500u);  // rtt / 2
    Reopen();
  }
}

TEST_F(ImportSemanticsTest, RemovingADrainedLinkIsRefusedAndChangesNothing) {
  v1::Intent drain;
  drain.set_id("drain-ny-chicago");
  drain.mutable_drain()->mutable_target()->set_link_id("edge_0");
  ASSERT_TRUE(model_->AddIntent(drain, "alice", 1).ok());
  topology::Topology without = abilene_;
  without.links.erase(without.links.begin());
  const uint64_t seq = model_->LastJournalSeq();
  const std::string before = EntitiesText(*model_);

  auto refused = model_->ImportInventory(without, "remove edge_0");
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition) << refused.status();
  EXPECT_THAT(std::string(refused.status().message()), HasSubstr("intent drain-ny-chicago"));
  EXPECT_EQ(model_->LastJournalSeq(), seq);
  EXPECT_EQ(EntitiesText(*model_), before);
  Reopen();
  EXPECT_EQ(EntitiesText(*model_), before);

  // Once the intent is gone, the same import goes through.
  ASSERT_TRUE(model_->DeleteIntent("drain-ny-chicago", "alice").ok());
  auto imported = model_->ImportInventory(without, "remove edge_0");
  ASSERT_TRUE(imported.ok()) << imported.status();
  EXPECT_EQ(CountOf(*imported, Kind::kLink).removed, 1u);
  EXPECT_EQ(model_->Links().size(), 27u);
}

TEST_F(ImportSemanticsTest, ADryRunCountsButChangesNothing) {
  topology::Topology edited = abilene_;
  edited.links[1].set_capacity_gbps(edited.links[1].capacity_gbps() * 2);
  edited.links.erase(edited.links.begin() + 2);
  const uint64_t seq = model_->LastJournalSeq();
  const std::string before = EntitiesText(*model_);

  auto dry = model_->ImportInventory(edited, "what if", {.dry_run = true});
  ASSERT_TRUE(dry.ok()) << dry.status();
  EXPECT_FALSE(dry->changed());
  EXPECT_EQ(CountOf(*dry, Kind::kLink).changed, 1u);
  EXPECT_EQ(CountOf(*dry, Kind::kLink).removed, 1u);
  EXPECT_EQ(CountOf(*dry, Kind::kLink).unchanged, 26u);
  EXPECT_EQ(model_->LastJournalSeq(), seq);
  EXPECT_EQ(EntitiesText(*model_), before);
  Reopen();
  EXPECT_EQ(EntitiesText(*model_), before);

  // The real run counts the same and changes what it counted.
  auto real = model_->ImportInventory(edited, "for real");
  ASSERT_TRUE(real.ok()) << real.status();
  EXPECT_TRUE(real->changed());
  EXPECT_EQ(CountOf(*real, Kind::kLink).changed, 1u);
  EXPECT_EQ(CountOf(*real, Kind::kLink).removed, 1u);
  EXPECT_EQ(model_->Links().size(), 27u);
}

TEST_F(ImportSemanticsTest, ReplaceWorkloadsRemovesTheWorkloadsTheFileDoesNotHave) {
  v1::Workload extra;
  extra.set_id("extra-flow");
  extra.mutable_elephant()->set_src_facility_id("0_new_york");
  extra.mutable_elephant()->set_dst_prefix(abilene_.facilities[1].prefixes(0));
  extra.mutable_elephant()->set_demand_gbps(5);
  ASSERT_TRUE(model_->AddWorkload(extra, "alice").ok());
  ASSERT_EQ(model_->Workloads().size(), 111u);

  // By default the file's workloads are added or replaced; others stay.
  auto kept = model_->ImportInventory(abilene_, "import, workloads merged");
  ASSERT_TRUE(kept.ok()) << kept.status();
  EXPECT_FALSE(kept->changed());
  EXPECT_EQ(CountOf(*kept, Kind::kWorkload).removed, 0u);
  EXPECT_EQ(model_->Workloads().size(), 111u);

  auto replaced =
      model_->ImportInventory(abilene_, "import, workloads replaced", {.replace_workloads = true});
  ASSERT_TRUE(replaced.ok()) << replaced.status();
  EXPECT_TRUE(replaced->changed());
  EXPECT_EQ(CountOf(*replaced, Kind::kWorkload).removed, 1u);
  EXPECT_EQ(CountOf(*replaced, Kind::kWorkload).unchanged, 110u);
  Reopen();
  const auto workloads = model_->Workloads();
  EXPECT_EQ(workloads.size(), 110u);
  EXPECT_TRUE(std::none_of(workloads.begin(), workloads.end(),
                           [](const v1::Workload& w) { return w.id() == "extra-flow"; }));
}

TEST_F(ImportSemanticsTest, TheConfiguredInventoryIsAppliedOncePerContent) {
  const std::string path = "/etc/geodesic/abilene.graph";
  // The store already holds it (imported in SetUp): applied, nothing changed, remembered.
  auto first = model_->ApplyConfiguredInventory(abilene_, path);
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_TRUE(first->has_value());
  EXPECT_FALSE((*first)->changed());
  auto second = model_->ApplyConfiguredInventory(abilene_, path);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_FALSE(second->has_value());

  // An operator's import since is not undone by a restart with the same file.
  topology::Topology operator_edit = abilene_;
  operator_edit.links[3].set_igp_metric(77);
  ASSERT_TRUE(model_->ImportInventory(operator_edit, "tectl import").ok());
  Reopen();
  const uint64_t seq = model_->LastJournalSeq();
  auto restart = model_->ApplyConfiguredInventory(abilene_, path);
  ASSERT_TRUE(restart.ok()) << restart.status();
  EXPECT_FALSE(restart->has_value());
  EXPECT_EQ(model_->LastJournalSeq(), seq);
  EXPECT_EQ(LinkOf(*model_, abilene_.links[3].id()).igp_metric(), 77u);

  // A changed file is applied.
  topology::Topology edited = abilene_;
  edited.links[5].set_capacity_gbps(edited.links[5].capacity_gbps() * 10);
  auto changed = model_->ApplyConfiguredInventory(edited, path);
  ASSERT_TRUE(changed.ok()) << changed.status();
  ASSERT_TRUE(changed->has_value());
  EXPECT_TRUE((*changed)->changed());
  EXPECT_EQ(CountOf(**changed, Kind::kLink).changed, 2u);  // the edit, and the operator's undone
  EXPECT_DOUBLE_EQ(LinkOf(*model_, edited.links[5].id()).capacity_gbps(),
                   edited.links[5].capacity_gbps());
  Reopen();
  auto again = model_->ApplyConfiguredInventory(edited, path);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_FALSE(again->has_value());
}

TEST(ConfiguredInventoryTest, AnEmptyStoreGetsTheWholeFileOnce) {
  TempDir dir;
  auto abilene = topology::LoadRepetita(GraphPath("Abilene"), DemandsPath("Abilene"));
  ASSERT_TRUE(abilene.ok()) << abilene.status();
  {
    auto model = OpenModel(dir.Join("db"));
    ASSERT_TRUE(model.ok()) << model.status();
    auto applied = (*model)->ApplyConfiguredInventory(*abilene, "abilene.graph");
    ASSERT_TRUE(applied.ok()) << applied.status();
    ASSERT_TRUE(applied->has_value());
    EXPECT_EQ(CountOf(**applied, Kind::kFacility).added, 11u);
    EXPECT_EQ(CountOf(**applied, Kind::kLink).added, 28u);
    EXPECT_EQ(CountOf(**applied, Kind::kWorkload).added, 110u);
  }
  auto model = OpenModel(dir.Join("db"));
  ASSERT_TRUE(model.ok()) << model.status();
  auto again = (*model)->ApplyConfiguredInventory(*abilene, "abilene.graph");
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_FALSE(again->has_value());
}

// --- The incremental snapshot ---

// Fails the test at the first difference between two snapshots.
void ExpectSameSnapshot(const Snapshot& incremental, const Snapshot& rebuilt) {
  ASSERT_EQ(incremental.facility_count(), rebuilt.facility_count());
  for (int f = 0; f < rebuilt.facility_count(); ++f) {
    ASSERT_EQ(incremental.facility_id(f), rebuilt.facility_id(f));
  }
  ASSERT_EQ(incremental.link_count(), rebuilt.link_count());
  for (int l = 0; l < rebuilt.link_count(); ++l) {
    SCOPED_TRACE(rebuilt.link_id(l));
    ASSERT_EQ(incremental.link_id(l), rebuilt.link_id(l));
    EXPECT_EQ(incremental.link_src(l), rebuilt.link_src(l));
    EXPECT_EQ(incremental.link_dst(l), rebuilt.link_dst(l));
    EXPECT_EQ(incremental.link_capacity_gbps(l), rebuilt.link_capacity_gbps(l));
    EXPECT_EQ(incremental.link_metric(l), rebuilt.link_metric(l));
    const LinkState& a = incremental.link_state(l);
    const LinkState& b = rebuilt.link_state(l);
    EXPECT_EQ(a.cost_us, b.cost_us);
    EXPECT_EQ(a.oper, b.oper);
    EXPECT_EQ(a.drained, b.drained);
    EXPECT_EQ(a.usable, b.usable);
  }
  EXPECT_EQ(incremental.usable_link_count(), rebuilt.usable_link_count());
  EXPECT_EQ(incremental.demands().size(), rebuilt.demands().size());
}

using IncrementalSnapshotTest = StoredAbileneTest;

TEST_F(IncrementalSnapshotTest, HealthReportsOnTopOfASnapshotEqualARebuild) {
  // Every link by the facility that reports it.
  std::map<std::string, std::vector<std::string>> links_of;
  for (const auto& link : model_->Links()) links_of[link.src_facility_id()].push_back(link.id());
  ASSERT_EQ(links_of.size(), 11u);
  const v1::OperState kStates[] = {v1::OPER_STATE_UP, v1::OPER_STATE_DOWN,
                                   v1::OPER_STATE_DEGRADED, v1::OPER_STATE_UP,
                                   v1::OPER_STATE_UNKNOWN};
  auto check = [&](const std::string& when) {
    SCOPED_TRACE(when);
    const auto incremental = model_->CurrentSnapshot();
    ExpectSameSnapshot(*incremental, Snapshot::Build(model_->View()));
  };

  model_->CurrentSnapshot();  // from here on, reports update it in place
  // Every agent reports all its links up (rtt 0 for some: the inventory latency applies).
  int n = 0;
  for (const auto& [facility, links] : links_of) {
    for (const auto& link : links) ReportHealth(facility, link, v1::OPER_STATE_UP, ++n % 3 ? 2000 + n : 0);
  }
  check("after the first reports");
  ASSERT_GT(model_->CurrentSnapshot()->usable_link_count(), 0u);

  // Deltas in several rounds, the snapshot taken between some of them only.
  for (int round = 0; round < 6; ++round) {
    for (const auto& [facility, links] : links_of) {
      for (size_t i = 0; i < links.size(); ++i) {
        if ((i + round) % 2) continue;
        ++n;
        ReportHealth(facility, links[i], kStates[n % 5], n % 4 ? 1000 + 37 * n : 0);
      }
    }
    if (round % 2) check(absl::StrCat("after round ", round));
    if (round == 2) {
      // A drain rebuilds the snapshot; later health lands on the rebuilt one.
      v1::Intent drain;
      drain.set_id("drain-chicago");
      drain.mutable_drain()->mutable_target()->set_facility_id("1_chicago");
      ASSERT_TRUE(model_->AddIntent(drain, "alice", 1).ok());
      check("after the drain");
    }
  }
  // A fresh snapshot that omits links: the sync marks them unknown.
  const auto& [facility, links] = *links_of.begin();
  ASSERT_GE(links.size(), 2u);
  ASSERT_TRUE(model_->OpenSession(facility, "agent", 2).ok());
  v1::AgentMessage snapshot;
  snapshot.mutable_snapshot()->set_seq(1);
  auto* report = snapshot.mutable_snapshot()->add_links();
  report->set_link_id(links[0]);
  report->mutable_health()->set_state(v1::OPER_STATE_UP);
  ASSERT_TRUE(model_->ApplyReport(facility, "agent", 2, snapshot, "test-agent").ok());
  v1::AgentMessage sync;
  sync.mutable_sync()->set_seq(2);
  ASSERT_TRUE(model_->ApplyReport(facility, "agent", 2, sync, "test-agent").ok());
  EXPECT_EQ(LinkOf(*model_, links[1]).health().state(), v1::OPER_STATE_UNKNOWN);
  check("after a partial snapshot and its sync");

  // The comparisons covered every kind of link state, not just one.
  const auto final_snapshot = model_->CurrentSnapshot();
  std::map<v1::OperState, int> opers;
  int drained = 0;
  for (int l = 0; l < final_snapshot->link_count(); ++l) {
    ++opers[final_snapshot->link_state(l).oper];
    drained += final_snapshot->link_state(l).drained;
  }
  EXPECT_EQ(opers.size(), 4u);  // up, down, degraded, unknown
  EXPECT_GT(drained, 0);
  EXPECT_GT(final_snapshot->usable_link_count(), 0u);
  EXPECT_LT(final_snapshot->usable_link_count(), static_cast<size_t>(final_snapshot->link_count()));
}

}  // namespace
}  // namespace geodesic::pathcomp
