#include "routerd/fail_static.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <set>
#include <string>

#include "routerd/plan_installer.h"
#include "site_plan/site_plan_writer.h"

namespace geodesic::routerd {
namespace {

using namespace std::chrono_literals;
using Action = ControllerContact::Verdict::Action;

TEST(ControllerContactTest, WarnsWhileAloneAndExpiresOnce) {
  const auto t0 = ControllerContact::Clock::time_point{} + 1000s;
  ControllerContact contact(3600s, t0);
  EXPECT_EQ(contact.Check(t0 + 5s).action, Action::kNone);
  const auto warn = contact.Check(t0 + 11s);
  EXPECT_EQ(warn.action, Action::kWarn);
  EXPECT_EQ(warn.expires_in, 3589s);
  EXPECT_EQ(contact.Check(t0 + 30s).action, Action::kNone);  // once a minute
  EXPECT_EQ(contact.Check(t0 + 72s).action, Action::kWarn);
  EXPECT_EQ(contact.Check(t0 + 3600s).action, Action::kExpire);
  EXPECT_EQ(contact.Check(t0 + 3700s).action, Action::kNone);  // already expired
}

TEST(ControllerContactTest, AnyConnectedReplicaKeepsRoutesFresh) {
  const auto t0 = ControllerContact::Clock::time_point{} + 1000s;
  ControllerContact contact(600s, t0);
  contact.Connected("a", t0 + 1s);
  contact.Connected("b", t0 + 1s);
  contact.Disconnected("a", t0 + 2s);
  EXPECT_EQ(contact.Check(t0 + 5000s).action, Action::kNone);
  contact.Disconnected("b", t0 + 5000s);
  EXPECT_EQ(contact.Check(t0 + 5500s).action, Action::kWarn);  // alone for 500 s
  EXPECT_EQ(contact.Check(t0 + 5600s).action, Action::kExpire);
  // A controller comes back: the clock starts over when it leaves again.
  contact.Connected("a", t0 + 6000s);
  contact.Disconnected("a", t0 + 6001s);
  EXPECT_EQ(contact.Check(t0 + 6500s).action, Action::kWarn);
  EXPECT_EQ(contact.Check(t0 + 6601s).action, Action::kExpire);
}

TEST(ControllerContactTest, FailStaticRemainingCountsDownOnlyWhileAlone) {
  const auto t0 = ControllerContact::Clock::time_point{} + 1000s;
  ControllerContact contact(600s, t0);
  EXPECT_EQ(contact.FailStaticRemaining(t0 + 100s), 500s);  // alone since start
  contact.Connected("a", t0 + 100s);
  EXPECT_EQ(contact.FailStaticRemaining(t0 + 5000s), 600s);
  EXPECT_EQ(contact.connected(), std::set<std::string>{"a"});
  contact.Disconnected("a", t0 + 5000s);
  EXPECT_EQ(contact.FailStaticRemaining(t0 + 5250s), 350s);
  EXPECT_EQ(contact.Check(t0 + 5600s).action, Action::kExpire);
  EXPECT_EQ(contact.FailStaticRemaining(t0 + 5601s), 0s);
}

// The routes withdrawn from the routers; any thread may add, a test may wait.
class Withdrawals {
 public:
  void Add(size_t routes) {
    std::lock_guard lock(mu_);
    count_ += routes;
    changed_.notify_all();
  }
  size_t Count() const {
    std::lock_guard lock(mu_);
    return count_;
  }
  // True once `routes` were withdrawn, false when `timeout` passed first.
  bool WaitFor(size_t routes, std::chrono::milliseconds timeout) {
    std::unique_lock lock(mu_);
    return changed_.wait_for(lock, timeout, [&] { return count_ >= routes; });
  }

 private:
  mutable std::mutex mu_;
  std::condition_variable changed_;
  size_t count_ = 0;
};

class WithdrawalCounter final : public RouteInstaller {
 public:
  explicit WithdrawalCounter(Withdrawals* withdrawals) : withdrawals_(withdrawals) {}
  absl::Status Apply(const RibDiff& diff) override {
    withdrawals_->Add(diff.removed.size());
    return absl::OkStatus();
  }

 private:
  Withdrawals* withdrawals_;
};

v1::SitePlan TwoRoutePlan() {
  v1::SitePlan plan;
  plan.set_facility_id("iad");
  plan.set_epoch(1);
  plan.set_generation(7);
  v1::NextHop hop;
  hop.set_link_id("iad-nyc");
  hop.set_weight(1);
  site_plan::SitePlanWriter writer(&plan);
  for (const char* prefix : {"10.1.0.0/16", "10.2.0.0/16"}) writer.AddRoute(prefix, "nyc", {hop}, {"iad", "nyc"}, 1000);
  return plan;
}

class FailStaticWatchdogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("fail-static-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    auto opened = PlanInstaller::Open("iad", dir_.string(), std::make_unique<WithdrawalCounter>(&withdrawals_));
    ASSERT_TRUE(opened.ok()) << opened.status();
    installer_ = *std::move(opened);
    ASSERT_EQ(*installer_->Offer(TwoRoutePlan()), PlanVerdict::kInstalled);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Checks far apart: the thread of the watchdog never runs during a test
  // that drives CheckAt itself.
  static FailStaticWatchdog::Options ManualOnly() { return {.check_every = std::chrono::hours(1)}; }

  std::filesystem::path dir_;
  Withdrawals withdrawals_;
  std::unique_ptr<PlanInstaller> installer_;
};

TEST_F(FailStaticWatchdogTest, KeepsRoutesWhileWarningAndWithdrawsThemOnceStale) {
  const auto t0 = ControllerContact::Clock::time_point{} + 1000s;
  ControllerContact contact(600s, t0);
  FailStaticWatchdog watchdog(contact, *installer_, ManualOnly());
  EXPECT_EQ(watchdog.CheckAt(t0 + 11s).action, Action::kWarn);
  EXPECT_EQ(installer_->installed().generation(), 7u);
  EXPECT_EQ(withdrawals_.Count(), 0u);
  EXPECT_EQ(watchdog.CheckAt(t0 + 600s).action, Action::kExpire);
  EXPECT_EQ(withdrawals_.Count(), 2u);
  EXPECT_EQ(installer_->installed().routes_size(), 0);
  // Forgotten on disk too: a restart does not bring the expired routes back.
  EXPECT_FALSE(PlanInstaller::HasStoredPlan(dir_.string(), "iad"));
  // The next plan installs normally.
  auto next = TwoRoutePlan();
  next.set_generation(8);
  EXPECT_EQ(*installer_->Offer(next), PlanVerdict::kInstalled);
}

TEST_F(FailStaticWatchdogTest, AConnectedControllerKeepsRoutesPastStaleAfter) {
  const auto t0 = ControllerContact::Clock::time_point{} + 1000s;
  ControllerContact contact(600s, t0);
  contact.Connected("a", t0 + 1s);
  FailStaticWatchdog watchdog(contact, *installer_, ManualOnly());
  EXPECT_EQ(watchdog.CheckAt(t0 + 10000s).action, Action::kNone);
  EXPECT_EQ(installer_->installed().routes_size(), 2);
  EXPECT_EQ(withdrawals_.Count(), 0u);
}

TEST_F(FailStaticWatchdogTest, ItsThreadChecksByItself) {
  const auto t0 = ControllerContact::Clock::time_point{} + 1000s;
  ControllerContact contact(600s, t0);
  std::atomic<int64_t> fake_now_s{1000};
  {
    FailStaticWatchdog watchdog(contact, *installer_,
                                {.check_every = std::chrono::milliseconds(5), .now = [&fake_now_s] {
                                   return ControllerContact::Clock::time_point{} +
                                          std::chrono::seconds(fake_now_s.load());
                                 }});
    fake_now_s = 1000 + 601;  // stale from now on
    EXPECT_TRUE(withdrawals_.WaitFor(2, 10s)) << "the watchdog's thread did not withdraw the stale routes within 10 s";
    EXPECT_EQ(withdrawals_.Count(), 2u);
  }
  EXPECT_EQ(installer_->installed().routes_size(), 0);
}

TEST_F(FailStaticWatchdogTest, StopsWithoutWaitingForItsNextCheck) {
  ControllerContact contact(600s, ControllerContact::Clock::now());
  const auto started = std::chrono::steady_clock::now();
  { FailStaticWatchdog watchdog(contact, *installer_, ManualOnly()); }
  EXPECT_LT(std::chrono::steady_clock::now() - started, 5s);
}

}  // namespace
}  // namespace geodesic::routerd
