// The plans pathcomp keeps: the current one, the newest PlanHistory::kDepth
// generations, and what survives a restart (the store is the truth).
#include "pathcomp/model/plan_history.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "pathcomp/model/entity_key.h"
#include "state/memory_store.h"

namespace geodesic::pathcomp {
namespace {

using ::testing::HasSubstr;

std::shared_ptr<const v1::Plan> Plan(uint64_t generation) {
  auto plan = std::make_shared<v1::Plan>();
  plan->set_generation(generation);
  plan->set_epoch(1);
  plan->set_reason("reason " + std::to_string(generation));
  plan->add_sites()->add_routes()->set_prefix("10.0.0.0/8");
  return plan;
}

TEST(PlanHistoryTest, EmptyBeforeTheFirstPlan) {
  state::StorePtr store = state::NewMemoryStore();
  PlanHistory plans(*store);
  ASSERT_TRUE(plans.Load().ok());
  EXPECT_EQ(plans.Current(), nullptr);
  EXPECT_TRUE(plans.Summaries(0).empty());
  EXPECT_EQ(plans.At(1).status().code(), absl::StatusCode::kNotFound);
}

TEST(PlanHistoryTest, KeepsEveryCommittedPlanNewestFirst) {
  state::StorePtr store = state::NewMemoryStore();
  PlanHistory plans(*store);
  ASSERT_TRUE(plans.Load().ok());
  for (uint64_t generation = 1; generation <= 3; ++generation) ASSERT_TRUE(plans.Commit(Plan(generation)).ok());
  EXPECT_EQ(plans.Current()->generation(), 3u);
  const auto summaries = plans.Summaries(2);
  ASSERT_EQ(summaries.size(), 2u);
  EXPECT_EQ(summaries[0].generation(), 3u);
  EXPECT_EQ(summaries[1].generation(), 2u);
  EXPECT_EQ(summaries[0].routes(), 1u);
  EXPECT_EQ(summaries[0].reason(), "reason 3");
  auto second = plans.At(2);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(second->reason(), "reason 2");
}

// A summary counts the protected elephant classes and those the plan keeps
// failure-safe (tectl plan history's FAILURE_SAFE).
TEST(PlanHistoryTest, SummariesCountTheProtectedClassesAndTheFailureSafeOnes) {
  state::StorePtr store = state::NewMemoryStore();
  PlanHistory plans(*store);
  ASSERT_TRUE(plans.Load().ok());
  auto plan = std::make_shared<v1::Plan>(*Plan(1));
  for (const auto& [protection, safe] : {std::pair{"links", true}, {"srlgs", false}, {"none", false}, {"", false}}) {
    v1::ElephantClass& cls = *plan->mutable_elephants()->add_classes();
    cls.set_protection(protection);
    cls.set_failure_safe(safe);
  }
  ASSERT_TRUE(plans.Commit(plan).ok());
  const auto summaries = plans.Summaries(1);
  ASSERT_EQ(summaries.size(), 1u);
  EXPECT_EQ(summaries[0].protected_classes(), 2u);
  EXPECT_EQ(summaries[0].failure_safe_classes(), 1u);
  ASSERT_TRUE(plans.Commit(Plan(2)).ok());
  EXPECT_EQ(plans.Summaries(1)[0].protected_classes(), 0u);
}

TEST(PlanHistoryTest, DropsTheOldestBeyondItsDepthAndSaysWhatItKeeps) {
  state::StorePtr store = state::NewMemoryStore();
  PlanHistory plans(*store);
  ASSERT_TRUE(plans.Load().ok());
  const uint64_t last = PlanHistory::kDepth + 5;
  for (uint64_t generation = 1; generation <= last; ++generation) ASSERT_TRUE(plans.Commit(Plan(generation)).ok());
  EXPECT_EQ(plans.Summaries(0).size(), PlanHistory::kDepth);
  const auto dropped = plans.At(5);
  EXPECT_EQ(dropped.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(dropped.status().message(), HasSubstr("6..105"));
  EXPECT_TRUE(plans.At(6).ok());
}

// A large backbone's plans are megabytes each: the history keeps what fits
// its byte budget (always the newest), in the store and after a restart.
TEST(PlanHistoryTest, KeepsNoMoreBytesThanItsBudget) {
  state::StorePtr store = state::NewMemoryStore();
  const auto big = [](uint64_t generation) {
    auto plan = std::const_pointer_cast<v1::Plan>(Plan(generation));
    plan->set_reason(std::string(1000, 'x'));  // about 1 KB serialized
    return std::shared_ptr<const v1::Plan>(plan);
  };
  const size_t budget = 3500;  // three such plans, not four
  {
    PlanHistory plans(*store, budget);
    ASSERT_TRUE(plans.Load().ok());
    for (uint64_t generation = 1; generation <= 10; ++generation) ASSERT_TRUE(plans.Commit(big(generation)).ok());
    const auto kept = plans.Summaries(0);
    ASSERT_EQ(kept.size(), 3u);
    EXPECT_EQ(kept[0].generation(), 10u);
    EXPECT_EQ(kept[2].generation(), 8u);
    const auto dropped = plans.At(7);
    EXPECT_EQ(dropped.status().code(), absl::StatusCode::kNotFound);
    EXPECT_THAT(dropped.status().message(), HasSubstr("8..10"));
    EXPECT_TRUE(plans.At(8).ok());
  }
  auto stored = store->ListRaw(state::Kind::kPlanHistory);
  ASSERT_TRUE(stored.ok());
  EXPECT_EQ(stored->size(), 3u) << "dropped plans leave the store too";
  // One plan larger than the whole budget is still kept, alone.
  PlanHistory reopened(*store, budget);
  ASSERT_TRUE(reopened.Load().ok());
  EXPECT_EQ(reopened.Summaries(0).size(), 3u);
  auto huge = std::make_shared<v1::Plan>(*big(11));
  huge->set_reason(std::string(5000, 'y'));
  ASSERT_TRUE(reopened.Commit(huge).ok());
  ASSERT_EQ(reopened.Summaries(0).size(), 1u);
  EXPECT_EQ(reopened.Summaries(0)[0].generation(), 11u);
  EXPECT_TRUE(reopened.At(11).ok());
}

TEST(PlanHistoryTest, ARestartFindsTheSamePlans) {
  state::StorePtr store = state::NewMemoryStore();
  {
    PlanHistory plans(*store);
    ASSERT_TRUE(plans.Load().ok());
    ASSERT_TRUE(plans.Commit(Plan(7)).ok());
    ASSERT_TRUE(plans.Commit(Plan(8)).ok());
  }
  PlanHistory reopened(*store);
  ASSERT_TRUE(reopened.Load().ok());
  ASSERT_NE(reopened.Current(), nullptr);
  EXPECT_EQ(reopened.Current()->generation(), 8u);
  EXPECT_EQ(reopened.Summaries(0).size(), 2u);
}

// A plan is written once per commit: the current one is its history entry,
// named by generation (a large backbone's plan is hundreds of megabytes).
TEST(PlanHistoryTest, TheCurrentPlanIsStoredOnce) {
  state::StorePtr store = state::NewMemoryStore();
  PlanHistory plans(*store);
  ASSERT_TRUE(plans.Load().ok());
  ASSERT_TRUE(plans.Commit(Plan(7)).ok());
  auto current = store->ListRaw(state::Kind::kPlan);
  ASSERT_TRUE(current.ok()) << current.status();
  ASSERT_EQ(current->size(), 1u);
  EXPECT_EQ((*current)[0].first, "current-generation");
  EXPECT_EQ((*current)[0].second, "7");
  auto journal = store->ReadJournal(1, 10);
  ASSERT_TRUE(journal.ok()) << journal.status();
  ASSERT_EQ(journal->size(), 1u);
  // The journal names the plan by its digest: the plan's bytes are the history entry's alone.
  size_t journaled_bytes = 0;
  bool plan_by_digest = false;
  for (const state::Change& change : (*journal)[0].changes) {
    journaled_bytes += change.value ? change.value->size() : 0;
    if (change.kind == state::Kind::kPlanHistory && change.digest) {
      plan_by_digest = change.digest->size == Plan(7)->ByteSizeLong();
    }
  }
  EXPECT_TRUE(plan_by_digest);
  EXPECT_LT(journaled_bytes, Plan(7)->ByteSizeLong()) << "the journal holds no copy of the plan";
  size_t stored_plans = 0;
  for (const state::Kind kind : state::kAllKinds) {
    const auto entities = store->ListRaw(kind);
    ASSERT_TRUE(entities.ok()) << entities.status();
    for (const auto& [id, bytes] : *entities) stored_plans += bytes.size() >= Plan(7)->ByteSizeLong();
  }
  EXPECT_EQ(stored_plans, 1u) << "the commit holds the plan once";
}

// A store written before kept the current plan whole (plan/current): it
// loads, and the next commit drops it.
TEST(PlanHistoryTest, TheCurrentPlanStoredWholeStillLoads) {
  state::StorePtr store = state::NewMemoryStore();
  {
    state::ChangeSet before("plan generation 5: as written before");
    before.PutRaw(state::Kind::kPlan, "current", Plan(5)->SerializeAsString());
    before.PutRaw(state::Kind::kPlanHistory, PaddedId(5), Plan(5)->SerializeAsString());
    ASSERT_TRUE(store->Commit(before).ok());
  }
  PlanHistory plans(*store);
  ASSERT_TRUE(plans.Load().ok());
  ASSERT_NE(plans.Current(), nullptr);
  EXPECT_EQ(plans.Current()->generation(), 5u);
  ASSERT_TRUE(plans.Commit(Plan(6)).ok());
  EXPECT_EQ(store->GetRaw(state::Kind::kPlan, "current").status().code(), absl::StatusCode::kNotFound);
  PlanHistory reopened(*store);
  ASSERT_TRUE(reopened.Load().ok());
  ASSERT_NE(reopened.Current(), nullptr);
  EXPECT_EQ(reopened.Current()->generation(), 6u);
}

// A name of the current plan that the history does not hold is data loss, said so.
TEST(PlanHistoryTest, ACurrentGenerationTheHistoryLacksIsRefused) {
  state::StorePtr store = state::NewMemoryStore();
  state::ChangeSet broken("a torn store");
  broken.PutRaw(state::Kind::kPlan, "current-generation", "9");
  ASSERT_TRUE(store->Commit(broken).ok());
  PlanHistory plans(*store);
  const absl::Status loaded = plans.Load();
  EXPECT_EQ(loaded.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(loaded.message()), HasSubstr("generation 9, which plan_history does not have"));
}

}  // namespace
}  // namespace geodesic::pathcomp
