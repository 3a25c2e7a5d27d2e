// Stores written by every kept schema version (tests/data/store-v<N>, made by
// make_store_fixture) open with this build: restored from their backup, opened
// as pathcomp opens its store (with this build's migrations), and holding what
// the generator wrote. A schema change must migrate them (tests/data/README.md).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "pathcomp/model/model.h"
#include "state/backup/restore.h"
#include "state/rocks_migration.h"
#include "state/rocks_store.h"
#include "tests/support/test_dirs.h"

namespace geodesic::pathcomp {
namespace {

namespace fs = std::filesystem;
using ::geodesic::testing::TempDir;
using ::testing::ElementsAre;

constexpr char kOperator[] = "spiffe://geodesic/operator/fixture";

// Schema version -> fixture directory, for every tests/data/store-v<N>.
std::map<int, std::string> Fixtures() {
  std::map<int, std::string> fixtures;
  for (const auto& entry : fs::directory_iterator(::geodesic::testing::SourceDir() + "/tests/data")) {
    const std::string name = entry.path().filename().string();
    int version = 0;
    if (absl::StartsWith(name, "store-v") && absl::SimpleAtoi(name.substr(7), &version)) {
      fixtures[version] = entry.path().string();
    }
  }
  return fixtures;
}

TEST(StoreUpgradeTest, ThisSchemaVersionHasAFixture) {
  // A bumped kSchemaVersion needs its own fixture (make_store_fixture), so the
  // next change is tested against it.
  EXPECT_EQ(Fixtures().count(state::kSchemaVersion), 1u)
      << "no tests/data/store-v" << state::kSchemaVersion << ": see tests/data/README.md";
}

TEST(StoreUpgradeTest, EveryKeptVersionOpensWithItsContents) {
  const std::map<int, std::string> fixtures = Fixtures();
  ASSERT_FALSE(fixtures.empty());
  for (const auto& [version, fixture] : fixtures) {
    SCOPED_TRACE(fixture);
    TempDir dir{"store-upgrade"};
    const std::string store_dir = dir.Join("store");
    auto restored = state::backup::RestoreStore(fixture, store_dir);
    ASSERT_TRUE(restored.ok()) << restored.status();
    EXPECT_EQ(restored->manifest.schema_version(), static_cast<uint32_t>(version));

    auto store = state::OpenRocksStore(store_dir);  // this build's migrations, as pathcomp
    ASSERT_TRUE(store.ok()) << store.status();
    const uint64_t last_seq = (*store)->LastJournalSeq();
    EXPECT_EQ(last_seq, restored->manifest.last_journal_seq());
    auto journal = (*store)->ReadJournal(1, 10'000);
    ASSERT_TRUE(journal.ok()) << journal.status();
    ASSERT_EQ(journal->size(), last_seq);
    EXPECT_EQ(journal->front().cause, "fixture: import of the topology");
    // Plans are journaled by their digest (schema 2 on): no entry holds one.
    int plans_journaled = 0;
    for (const state::JournalEntry& entry : *journal) {
      for (const state::Change& change : entry.changes) {
        if (change.kind != state::Kind::kPlanHistory || change.deleted()) continue;
        EXPECT_EQ(change.value, std::nullopt) << "journal seq " << entry.seq << " holds a plan";
        EXPECT_TRUE(change.digest.has_value());
        ++plans_journaled;
      }
    }
    EXPECT_EQ(plans_journaled, 1);
    auto model = Model::Open(*std::move(store));
    ASSERT_TRUE(model.ok()) << model.status();
    Model& m = **model;

    // The inventory of deploy/examples/backbone.yaml.
    EXPECT_EQ(m.Facilities().size(), 8u);
    EXPECT_EQ(m.Nodes().size(), 8u);
    EXPECT_EQ(m.Links().size(), 24u);
    EXPECT_EQ(m.Fabrics().size(), 2u);
    EXPECT_EQ(m.Services().size(), 3u);
    // Every link reported up by its agent.
    for (const v1::Link& link : m.Links()) EXPECT_EQ(link.health().state(), v1::OPER_STATE_UP) << link.id();
    auto session = m.OpenSession("iad", "agent", 7);
    ASSERT_TRUE(session.ok()) << session.status();
    EXPECT_EQ(session->last_applied_seq(), 2u);

    std::vector<std::string> workloads;
    for (const v1::Workload& workload : m.Workloads()) {
      workloads.push_back(workload.id());
      if (workload.id() == "fixture-elephant") {
        EXPECT_EQ(workload.elephant().src_facility_id(), "chi");
        EXPECT_EQ(workload.elephant().dst_prefix(), "10.6.0.0/16");
        EXPECT_EQ(workload.elephant().demand_gbps(), 25);
        EXPECT_EQ(workload.elephant().priority(), 2u);
      }
    }
    EXPECT_EQ(workloads.size(), 4u);
    EXPECT_EQ(std::count(workloads.begin(), workloads.end(), "fixture-elephant"), 1);

    const std::vector<v1::Intent> intents = m.Intents();
    ASSERT_EQ(intents.size(), 2u);
    EXPECT_EQ(intents[0].id(), "fixture-drain");
    EXPECT_EQ(intents[0].drain().target().link_id(), "iad-chi");
    EXPECT_EQ(intents[0].created_by(), kOperator);
    EXPECT_EQ(intents[1].id(), "fixture-override");
    EXPECT_EQ(intents[1].metric_override().link_id(), "nyc-iad");
    EXPECT_EQ(intents[1].metric_override().igp_metric(), 40u);

    auto plan = m.CurrentPlan();
    ASSERT_NE(plan, nullptr);
    EXPECT_EQ(plan->generation(), 1u);
    EXPECT_EQ(plan->epoch(), 1u);
    EXPECT_EQ(plan->sites_size(), 8);
    EXPECT_TRUE(plan->unreachable().empty());
    EXPECT_EQ(m.PlanHistory().size(), 1u);
    ASSERT_TRUE(m.PlanAt(1).ok());

    auto audit = m.AuditLog({});
    ASSERT_TRUE(audit.ok()) << audit.status();
    std::vector<std::string> actions;
    for (const v1::AuditRecord& record : audit->records()) actions.push_back(record.action());
    EXPECT_THAT(actions, ElementsAre("fixture one", "fixture two"));

    // The stored epoch goes on from the fixture's, and the store takes new commits.
    auto epoch = m.NextEpoch();
    ASSERT_TRUE(epoch.ok()) << epoch.status();
    EXPECT_EQ(*epoch, 2u);
    EXPECT_EQ(m.LastJournalSeq(), last_seq + 1);
  }
}

}  // namespace
}  // namespace geodesic::pathcomp
