// The plans pathcomp keeps: the current one, the newest PlanHistory::kDepth
// generations, and what survives a restart (the store is the truth).
#include "pathcomp/model/plan_history.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace geodesic::pathcomp
