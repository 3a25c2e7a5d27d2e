#include "routerd/plan_installer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace geodesic::routerd {
namespace {

// Records what it was asked to install.
class RecordingInstaller final : public RouteInstaller {
 public:
  explicit RecordingInstaller(std::vector<RibDiff>* log) : log_(log) {}
  absl::Status Apply(const RibDiff& diff) override {
    log_->push_back(diff);
    return absl::OkStatus();
  }

 private:
  std::vector<RibDiff>* log_;
};

v1::SitePlan MakePlan(uint64_t epoch, uint64_t generation, const std::string& link) {
  v1::SitePlan plan;
  plan.set_facility_id("iad");
  plan.set_epoch(epoch);
  plan.set_generation(generation);
  auto* route = plan.add_routes();
  route->set_prefix("10.3.0.0/16");
  auto* hop = route->add_next_hops();
  hop->set_link_id(link);
  hop->set_weight(1);
  return plan;
}

class PlanInstallerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("plan-installer-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::unique_ptr<PlanInstaller> Open() {
    auto installer =
        PlanInstaller::Open("iad", dir_.string(), std::make_unique<RecordingInstaller>(&log_));
    EXPECT_TRUE(installer.ok()) << installer.status();
    return installer.ok() ? *std::move(installer) : nullptr;
  }

  std::filesystem::path dir_;
  std::vector<RibDiff> log_;
};

TEST_F(PlanInstallerTest, InstallsNewerPlansAndIgnoresStaleOnes) {
  auto installer = Open();
  EXPECT_EQ(*installer->Offer(MakePlan(1, 5, "a")), PlanVerdict::kInstalled);
  EXPECT_EQ(*installer->Offer(MakePlan(1, 5, "b")), PlanVerdict::kStale);
  EXPECT_EQ(*installer->Offer(MakePlan(1, 4, "b")), PlanVerdict::kStale);
  EXPECT_EQ(*installer->Offer(MakePlan(1, 6, "b")), PlanVerdict::kInstalled);
  ASSERT_EQ(log_.size(), 2u);
  EXPECT_EQ(log_[1].changed.size(), 1u);
  EXPECT_EQ(installer->installed().generation(), 6u);
}

TEST_F(PlanInstallerTest, FencesOffPlansFromAnOlderEpoch) {
  auto installer = Open();
  EXPECT_EQ(*installer->Offer(MakePlan(2, 1, "a")), PlanVerdict::kInstalled);
  // The old leader still publishes, with higher generations: refused.
  EXPECT_EQ(*installer->Offer(MakePlan(1, 99, "b")), PlanVerdict::kFencedOff);
  EXPECT_EQ(installer->installed().routes(0).next_hops(0).link_id(), "a");
  // A newer epoch wins even with a lower generation.
  EXPECT_EQ(*installer->Offer(MakePlan(3, 1, "c")), PlanVerdict::kInstalled);
  EXPECT_EQ(installer->highest_epoch(), 3u);
}

TEST_F(PlanInstallerTest, RefusesPlansForAnotherFacilityOrMalformed) {
  auto installer = Open();
  v1::SitePlan other = MakePlan(1, 1, "a");
  other.set_facility_id("chi");
  EXPECT_EQ(installer->Offer(other).status().code(), absl::StatusCode::kInvalidArgument);
  v1::SitePlan repeated = MakePlan(1, 1, "a");
  *repeated.add_routes() = repeated.routes(0);
  EXPECT_EQ(installer->Offer(repeated).status().code(), absl::StatusCode::kInvalidArgument);
  v1::SitePlan zero_weight = MakePlan(1, 1, "a");
  zero_weight.mutable_routes(0)->mutable_next_hops(0)->set_weight(0);
  EXPECT_EQ(installer->Offer(zero_weight).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(log_.empty());
  EXPECT_EQ(installer->installed().generation(), 0u);
}

TEST_F(PlanInstallerTest, RestoresTheInstalledPlanAfterRestart) {
  {
    auto installer = Open();
    ASSERT_EQ(*installer->Offer(MakePlan(4, 9, "a")), PlanVerdict::kInstalled);
  }
  log_.clear();
  auto restarted = Open();
  EXPECT_EQ(restarted->installed().generation(), 9u);
  EXPECT_EQ(restarted->highest_epoch(), 4u);
  ASSERT_EQ(log_.size(), 1u);  // re-announced at start
  EXPECT_EQ(log_[0].added.size(), 1u);
  EXPECT_EQ(*restarted->Offer(MakePlan(3, 10, "b")), PlanVerdict::kFencedOff);
}

TEST_F(PlanInstallerTest, CorruptStoredPlanIsAClearError) {
  std::filesystem::create_directories(dir_);
  std::ofstream(dir_ / "installed-plan.pb") << "garbage";
  auto installer =
      PlanInstaller::Open("iad", dir_.string(), std::make_unique<RecordingInstaller>(&log_));
  ASSERT_FALSE(installer.ok());
  EXPECT_EQ(installer.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(std::string(installer.status().message()), ::testing::HasSubstr("installed-plan.pb"));
}

}  // namespace
}  // namespace geodesic::routerd
