// Reading a pathcomp store offline: read-only beside the writer that owns it,
// with the Operator API's answers.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include "cli/model_source.h"
#include "pathcomp/model/model.h"
#include "state/rocks_store.h"
#include "tests/support/test_dirs.h"
#include "topology/topology.h"

namespace geodesic::cli {
namespace {

using ::geodesic::testing::TempDir;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

topology::Topology Inventory() {
  auto topology = topology::ParseTopology(R"(
facilities:
  - {id: iad, position: {lat: 39, lon: -77}, prefixes: [10.1.0.0/16]}
  - {id: chi, position: {lat: 41, lon: -87}, prefixes: [10.3.0.0/16]}
  - {id: nyc, position: {lat: 40.7, lon: -74}, prefixes: [10.2.0.0/16]}
nodes:
  - {id: iad1, facility: iad}
  - {id: chi1, facility: chi}
  - {id: nyc1, facility: nyc}
links:
  - {id: iad-chi, reverse: chi-iad, from: iad1, to: chi1, capacity_gbps: 100}
  - {id: iad-nyc, reverse: nyc-iad, from: iad1, to: nyc1, capacity_gbps: 100}
)",
                                          "inventory.yaml");
  EXPECT_TRUE(topology.ok()) << topology.status();
  return *topology;
}

// A store as a running pathcomp leaves it: an inventory, a drain, a plan.
class StoreModelSourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = temp_.Join("state");
    state::RocksStoreOptions options;
    options.sync_writes = true;
    auto store = state::OpenRocksStore(dir_, options);
    ASSERT_TRUE(store.ok()) << store.status();
    auto model = pathcomp::Model::Open(*std::move(store));
    ASSERT_TRUE(model.ok()) << model.status();
    writer_ = *std::move(model);
    ASSERT_TRUE(writer_->ImportInventory(Inventory(), "import of inventory.yaml").ok());
    v1::Intent drain;
    drain.set_id("drain-link-iad-chi");
    drain.mutable_drain()->mutable_target()->set_link_id("iad-chi");
    ASSERT_TRUE(writer_->AddIntent(drain, "alice", 1).ok());
    v1::Plan plan;
    plan.set_generation(3);
    plan.add_sites()->set_facility_id("iad");
    plan.add_sites()->set_facility_id("chi");
    ASSERT_TRUE(writer_->CommitPlan(std::make_shared<const v1::Plan>(plan)).ok());
  }

  TempDir temp_;
  std::string dir_;
  std::unique_ptr<pathcomp::Model> writer_;  // holds the store's lock, as pathcomp does
};

TEST_F(StoreModelSourceTest, ReadsBesideTheWriterAsTheOperatorApiWould) {
  auto source = OpenStoreModelSource(dir_);
  ASSERT_TRUE(source.ok()) << source.status();
  EXPECT_THAT((*source)->where(), HasSubstr(dir_));

  auto facilities = (*source)->ListFacilities();
  ASSERT_TRUE(facilities.ok()) << facilities.status();
  EXPECT_EQ(facilities->facilities_size(), 3);

  v1::ListLinksRequest from_iad;
  from_iad.set_facility_id("iad");
  auto links = (*source)->ListLinks(from_iad);
  ASSERT_TRUE(links.ok()) << links.status();
  ASSERT_EQ(links->links_size(), 2);
  for (const auto& link : links->links()) {
    EXPECT_EQ(link.src_facility_id(), "iad");
    // The drain intent shows on the link, as ListLinks shows it.
    EXPECT_EQ(link.admin_state() == v1::ADMIN_STATE_DRAINED, link.id() == "iad-chi") << link.id();
  }
  v1::ListNodesRequest chi_nodes;
  chi_nodes.set_facility_id("chi");
  auto nodes = (*source)->ListNodes(chi_nodes);
  ASSERT_TRUE(nodes.ok());
  ASSERT_EQ(nodes->nodes_size(), 1);
  EXPECT_EQ(nodes->nodes(0).id(), "chi1");

  auto intents = (*source)->ListIntents();
  ASSERT_TRUE(intents.ok());
  ASSERT_EQ(intents->intents_size(), 1);
  EXPECT_EQ(intents->intents(0).created_by(), "alice");

  v1::GetPlanRequest chi_plan;
  chi_plan.set_facility_id("chi");
  auto plan = (*source)->GetPlan(chi_plan);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->plan().generation(), 3u);
  ASSERT_EQ(plan->plan().sites_size(), 1);
  EXPECT_TRUE(plan->sites().empty());  // install status lives in pathcomp's memory only
  v1::GetPlanRequest unknown_site;
  unknown_site.set_facility_id("sjc");
  EXPECT_EQ((*source)->GetPlan(unknown_site).status().code(), absl::StatusCode::kNotFound);
}

TEST_F(StoreModelSourceTest, JournalWindows) {
  auto source = OpenStoreModelSource(dir_);
  ASSERT_TRUE(source.ok()) << source.status();
  v1::ListJournalRequest request;  // the newest 100
  auto journal = (*source)->ListJournal(request);
  ASSERT_TRUE(journal.ok()) << journal.status();
  ASSERT_EQ(journal->entries_size(), 3);  // import, intent, plan
  EXPECT_EQ(journal->last_seq(), 3u);
  EXPECT_EQ(journal->first_seq(), 1u);  // nothing dropped
  EXPECT_EQ(journal->entries(0).cause(), "import of inventory.yaml");
  EXPECT_EQ(journal->entries(0).changes(0).kind(), "facility");
  request.set_limit(1);
  journal = (*source)->ListJournal(request);
  ASSERT_TRUE(journal.ok());
  ASSERT_EQ(journal->entries_size(), 1);
  EXPECT_EQ(journal->entries(0).seq(), 3u);
  request.set_from_seq(2);
  journal = (*source)->ListJournal(request);
  ASSERT_TRUE(journal.ok());
  ASSERT_EQ(journal->entries_size(), 1);
  EXPECT_EQ(journal->entries(0).seq(), 2u);
  request.set_limit(10'001);
  EXPECT_EQ((*source)->ListJournal(request).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(StoreModelSourceTest, SeesTheStoreAsOfTheOpen) {
  auto before = OpenStoreModelSource(dir_);
  ASSERT_TRUE(before.ok()) << before.status();
  ASSERT_TRUE(writer_->DeleteIntent("drain-link-iad-chi", "alice").ok());
  auto after = OpenStoreModelSource(dir_);
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_EQ((*before)->ListIntents()->intents_size(), 1);
  EXPECT_EQ((*after)->ListIntents()->intents_size(), 0);
}

TEST_F(StoreModelSourceTest, ReadOnlyStoreRefusesCommitsAndTakesNoLock) {
  state::RocksStoreOptions read_only;
  read_only.read_only = true;
  auto store = state::OpenRocksStore(dir_, read_only);
  ASSERT_TRUE(store.ok()) << store.status();
  EXPECT_EQ((*store)->LastJournalSeq(), 3u);
  state::ChangeSet changes("sneaky");
  changes.Delete(state::Kind::kLink, "iad-chi");
  auto committed = (*store)->Commit(changes);
  EXPECT_EQ(committed.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(committed.status().message(), HasSubstr("read-only"));

  // The writer still holds the lock: a second writer is refused, and says why.
  auto second_writer = state::OpenRocksStore(dir_);
  ASSERT_FALSE(second_writer.ok());
  EXPECT_TRUE(state::IsStoreInUseError(second_writer.status())) << second_writer.status();
  EXPECT_FALSE(state::IsStoreInUseError(absl::FailedPreconditionError("schema too new")));
}

TEST_F(StoreModelSourceTest, ReadingWritesNothingIntoTheStore) {
  writer_.reset();  // pathcomp stopped
  auto files = [&] {
    std::set<std::string> names;
    for (const auto& entry : fs::directory_iterator(dir_)) names.insert(entry.path().filename().string());
    return names;
  };
  const std::set<std::string> before = files();
  {
    auto source = OpenStoreModelSource(dir_);
    ASSERT_TRUE(source.ok()) << source.status();
    EXPECT_EQ((*source)->ListLinks({})->links_size(), 4);
  }
  EXPECT_EQ(files(), before);
}

TEST(StoreModelSourceOpenTest, MissingStoreIsNotFoundAndNotCreated) {
  TempDir temp;
  const std::string dir = temp.Join("nothing-here");
  auto source = OpenStoreModelSource(dir);
  ASSERT_FALSE(source.ok());
  EXPECT_EQ(source.status().code(), absl::StatusCode::kNotFound) << source.status();
  EXPECT_THAT(source.status().message(), HasSubstr(dir));
  EXPECT_FALSE(fs::exists(dir));
}

}  // namespace
}  // namespace geodesic::cli
