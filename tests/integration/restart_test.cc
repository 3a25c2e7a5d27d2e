// Controller and routerd restarts with real processes: agents buffer while
// pathcomp is gone and resume after what it last applied; routerd keeps its
// routes while no controller answers (fail-static) and restores them after
// its own restart. Every wait asks the system (sim::LabClient), never a log.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <signal.h>

#include <algorithm>

#include "tests/support/lab_testing.h"
#include "site_plan/site_plan_reader.h"

namespace geodesic {
namespace {

using sim::LabClient;
using sim::LocalLab;
using std::chrono::seconds;

class RestartTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Link health from the agents' static source: this test is about
    // restarts, not probing (a starved prober would cut links under it).
    auto lab = LocalLab::Create(testing::LabOptionsFor(work_.path()));
    ASSERT_TRUE(lab.ok()) << lab.status();
    lab_ = *std::move(lab);
    client_ = std::make_unique<LabClient>(*lab_);
    ASSERT_TRUE(lab_->StartAll().ok());
    auto converged = client_->WaitConverged({.timeout = seconds(60)});
    ASSERT_TRUE(converged.ok()) << converged.status();
  }

  void TearDown() override {
    client_.reset();
    lab_.reset();
    if (HasFailure()) work_.keep();
  }

  std::string NextHopFromTo(const v1::Plan& plan, const std::string& site_id,
                            const std::string& prefix) {
    for (const auto& site : plan.sites()) {
      if (site.facility_id() != site_id) continue;
      const v1::Route* route = site_plan::FindRoute(site, prefix);
      if (route != nullptr && site_plan::PrimaryGroup(site, *route).ports_size() > 0) {
        return site_plan::LinkId(site, site_plan::PrimaryGroup(site, *route), 0);
      }
    }
    return "";
  }

  testing::TempDir work_{"restart"};
  std::unique_ptr<LocalLab> lab_;
  std::unique_ptr<LabClient> client_;
};

TEST_F(RestartTest, AgentsResumeAfterPathcompIsKilledAndNothingIsLost) {
  auto before = client_->Plan();
  ASSERT_TRUE(before.ok()) << before.status();
  const uint64_t epoch = before->plan().epoch();
  const auto installed_before = lab_->InstalledPlan("iad");
  ASSERT_TRUE(installed_before);
  const int64_t killed_at = std::chrono::duration_cast<std::chrono::milliseconds>(
                                std::chrono::system_clock::now().time_since_epoch()).count();
  lab_->Kill("pathcomp", SIGKILL);
  // The fiber is cut while no controller listens: the agents must hold the
  // reports, and iad's routerd repairs locally.
  ASSERT_TRUE(lab_->SetLinkState("iad-chi", "down").ok());
  ASSERT_TRUE(lab_->SetLinkState("chi-iad", "down").ok());
  const absl::Status repaired = sim::WaitUntil("iad's routerd to repair locally around iad-chi", seconds(10), [&] {
    const auto log = lab_->LocalRepairs("iad");
    if (!log) return false;
    return std::any_of(log->repairs().begin(), log->repairs().end(), [&](const v1::LocalRepair& repair) {
      return repair.at_unix_ms() >= killed_at && repair.routes_changed() > 0 &&
             std::count(repair.down_links().begin(), repair.down_links().end(), "iad-chi") > 0;
    });
  });
  ASSERT_TRUE(repaired.ok()) << repaired;
  // Without a controller, routerd keeps the plan it has (fail-static).
  const auto installed_alone = lab_->InstalledPlan("iad");
  ASSERT_TRUE(installed_alone);
  EXPECT_EQ(installed_alone->generation(), installed_before->generation());
  EXPECT_EQ(installed_alone->routes_size(), installed_before->routes_size());

  ASSERT_TRUE(lab_->Restart("pathcomp").ok());
  // What the agents held while pathcomp was gone arrives: both directions down.
  auto revision = client_->WaitLinkStates({"iad-chi", "chi-iad"}, v1::OPER_STATE_DOWN, seconds(30));
  ASSERT_TRUE(revision.ok()) << revision.status();
  auto converged = client_->WaitConverged({.timeout = seconds(30), .min_model_revision = *revision});
  ASSERT_TRUE(converged.ok()) << converged.status();
  EXPECT_GT(converged->plan().epoch(), epoch);
  EXPECT_TRUE(converged->plan().unreachable().empty());
  EXPECT_EQ(NextHopFromTo(converged->plan(), "iad", "10.3.0.0/16"), "iad-nyc");
  // (That the agents resumed their sessions rather than starting over is
  // telemetry_exactly_once_test's to show.)
}

TEST_F(RestartTest, RouterdRestoresItsInstalledPlanAfterSigkill) {
  auto before = client_->Plan();
  ASSERT_TRUE(before.ok()) << before.status();
  const uint64_t generation = before->plan().generation();
  lab_->Kill("routerd/iad", SIGKILL);
  ASSERT_TRUE(lab_->Restart("routerd/iad").ok());
  // The restarted routerd opened its stored plan (a corrupt one stops it).
  const auto installed = lab_->InstalledPlan("iad");
  ASSERT_TRUE(installed);
  EXPECT_EQ(installed->generation(), generation);
  // A new plan after the restart is installed by the restarted routerd.
  ASSERT_TRUE(lab_->SetLinkState("iad-nyc", "down").ok());
  auto revision = client_->WaitLinkStates({"iad-nyc"}, v1::OPER_STATE_DOWN, seconds(30));
  ASSERT_TRUE(revision.ok()) << revision.status();
  auto converged = client_->WaitConverged({.timeout = seconds(30), .min_model_revision = *revision});
  ASSERT_TRUE(converged.ok()) << converged.status();
  EXPECT_GT(converged->plan().generation(), generation);
  EXPECT_TRUE(lab_->process("routerd/iad")->running());
}

}  // namespace
}  // namespace geodesic
