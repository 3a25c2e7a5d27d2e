// routerd's acknowledgements: a plan acknowledged before its routers had it
// is acknowledged again once they catch up (a BGP session that establishes
// late), never after a newer plan's acknowledgement, and never for a plan
// that is no longer the installed one.
#include "routerd/plan_acknowledger.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <vector>

#include "sim/wait_until.h"
#include "site_plan/site_plan_writer.h"
#include "tests/support/test_dirs.h"

namespace geodesic::routerd {
namespace {

using namespace std::chrono_literals;

// Routers that have every route once told so (a BGP session establishing).
class Routers {
 public:
  void CatchUp() {
    {
      std::lock_guard lock(mu_);
      caught_up_ = true;
    }
    cv_.notify_all();
  }
  bool WaitCaughtUp(std::chrono::steady_clock::time_point deadline) {
    std::unique_lock lock(mu_);
    ++asked_;
    return cv_.wait_until(lock, deadline, [this] { return caught_up_; });
  }
  int asked() {
    std::lock_guard lock(mu_);
    return asked_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool caught_up_ = false;
  int asked_ = 0;
};

class LateRouterInstaller final : public RouteInstaller {
 public:
  explicit LateRouterInstaller(Routers& routers) : routers_(routers) {}
  absl::Status Apply(const RibDiff&) override { return absl::OkStatus(); }
  bool WaitSentToRouters(std::chrono::steady_clock::time_point deadline) override {
    return routers_.WaitCaughtUp(deadline);
  }

 private:
  Routers& routers_;
};

v1::SitePlan MakePlan(uint64_t epoch, uint64_t generation) {
  v1::SitePlan plan;
  plan.set_facility_id("iad");
  plan.set_epoch(epoch);
  plan.set_generation(generation);
  v1::NextHop hop;
  hop.set_link_id("iad-nyc");
  hop.set_weight(1);
  site_plan::SitePlanWriter(&plan).AddRoute("10.3.0.0/16", "dfw", {hop}, {}, 0);
  return plan;
}

// What PlanSubscriber acknowledges for a plan installed before its routers had it.
v1::PlanAck NotYetAtRouters(const v1::SitePlan& plan) {
  v1::PlanAck ack;
  ack.set_facility_id(plan.facility_id());
  ack.set_generation(plan.generation());
  ack.set_epoch(plan.epoch());
  ack.set_installed(true);
  ack.set_error("not yet sent to every router");
  return ack;
}

class PlanAcknowledgerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto installer = PlanInstaller::Open("iad", dir_.path(), std::make_unique<LateRouterInstaller>(routers_));
    ASSERT_TRUE(installer.ok()) << installer.status();
    installer_ = *std::move(installer);
  }

  // The replica: records every acknowledgement; refuses the first `refuse` ones.
  bool Receive(const v1::PlanAck& ack) {
    std::lock_guard lock(mu_);
    if (refuse_ > 0) {
      --refuse_;
      return false;
    }
    received_.push_back(ack);
    return true;
  }
  std::vector<v1::PlanAck> Received() {
    std::lock_guard lock(mu_);
    return received_;
  }
  void Refuse(int count) {
    std::lock_guard lock(mu_);
    refuse_ = count;
  }
  std::unique_ptr<PlanAcknowledger> Acknowledger() {
    return std::make_unique<PlanAcknowledger>(*installer_, [this](const v1::PlanAck& ack) { return Receive(ack); },
                                              10ms);
  }

  testing::TempDir dir_{"plan-acknowledger"};
  Routers routers_;
  std::unique_ptr<PlanInstaller> installer_;
  std::mutex mu_;
  std::vector<v1::PlanAck> received_;
  int refuse_ = 0;
};

TEST_F(PlanAcknowledgerTest, APlanIsAcknowledgedAgainWhenItsRoutersCatchUp) {
  auto acks = Acknowledger();
  const v1::SitePlan plan = MakePlan(1, 7);
  ASSERT_EQ(*installer_->Offer(plan), PlanVerdict::kInstalled);
  acks->Acknowledge(NotYetAtRouters(plan));
  ASSERT_EQ(Received().size(), 1u);
  EXPECT_FALSE(Received()[0].sent_to_routers());
  EXPECT_TRUE(acks->catching_up());

  // Long after the subscriber's own wait gave up, the session establishes.
  routers_.CatchUp();
  ASSERT_EQ(sim::WaitUntil("a second acknowledgement", 10s, [&] { return Received().size() == 2; }), absl::OkStatus());
  const v1::PlanAck again = Received()[1];
  EXPECT_EQ(again.generation(), 7u);
  EXPECT_EQ(again.epoch(), 1u);
  EXPECT_TRUE(again.installed());
  EXPECT_TRUE(again.sent_to_routers());
  EXPECT_EQ(again.error(), "");
  EXPECT_FALSE(acks->catching_up());
}

TEST_F(PlanAcknowledgerTest, AnAcknowledgementAtTheRoutersNeedsNoCatchUp) {
  auto acks = Acknowledger();
  const v1::SitePlan plan = MakePlan(1, 7);
  ASSERT_EQ(*installer_->Offer(plan), PlanVerdict::kInstalled);
  v1::PlanAck ack = NotYetAtRouters(plan);
  ack.set_sent_to_routers(true);
  ack.clear_error();
  acks->Acknowledge(ack);
  EXPECT_FALSE(acks->catching_up());
  v1::PlanAck refused = NotYetAtRouters(MakePlan(1, 8));
  refused.set_installed(false);
  refused.set_error("route 10.3.0.0/16: next hop without link or weight");
  acks->Acknowledge(refused);
  EXPECT_FALSE(acks->catching_up());
  EXPECT_EQ(Received().size(), 2u);
}

TEST_F(PlanAcknowledgerTest, ANewerPlanSupersedesTheCatchUpOfAnOlderOne) {
  auto acks = Acknowledger();
  const v1::SitePlan older = MakePlan(1, 7), newer = MakePlan(1, 8);
  ASSERT_EQ(*installer_->Offer(older), PlanVerdict::kInstalled);
  acks->Acknowledge(NotYetAtRouters(older));
  ASSERT_EQ(*installer_->Offer(newer), PlanVerdict::kInstalled);
  acks->Acknowledge(NotYetAtRouters(newer));
  routers_.CatchUp();
  ASSERT_EQ(sim::WaitUntil("the newer plan acknowledged at the routers", 10s, [&] { return Received().size() == 3; }),
            absl::OkStatus());
  const auto received = Received();
  EXPECT_EQ(received[0].generation(), 7u);
  EXPECT_EQ(received[1].generation(), 8u);
  EXPECT_EQ(received[2].generation(), 8u);
  EXPECT_TRUE(received[2].sent_to_routers());
  EXPECT_FALSE(acks->catching_up());
}

TEST_F(PlanAcknowledgerTest, APlanNoLongerInstalledIsNotAcknowledgedAgain) {
  auto acks = Acknowledger();
  const v1::SitePlan older = MakePlan(1, 7);
  ASSERT_EQ(*installer_->Offer(older), PlanVerdict::kInstalled);
  acks->Acknowledge(NotYetAtRouters(older));
  // A newer plan is installed but its watch ended before it was acknowledged:
  // generation 7 is not what the routers get, so it is not claimed there.
  ASSERT_EQ(*installer_->Offer(MakePlan(1, 8)), PlanVerdict::kInstalled);
  routers_.CatchUp();
  ASSERT_EQ(sim::WaitUntil("the catch-up to drop generation 7", 10s, [&] { return !acks->catching_up(); }),
            absl::OkStatus());
  ASSERT_EQ(Received().size(), 1u);
  EXPECT_FALSE(Received()[0].sent_to_routers());
}

TEST_F(PlanAcknowledgerTest, AnUndeliveredCatchUpIsTriedAgain) {
  auto acks = Acknowledger();
  const v1::SitePlan plan = MakePlan(1, 7);
  ASSERT_EQ(*installer_->Offer(plan), PlanVerdict::kInstalled);
  acks->Acknowledge(NotYetAtRouters(plan));
  Refuse(2);  // the replica is unreachable for a while
  routers_.CatchUp();
  ASSERT_EQ(sim::WaitUntil("the catch-up delivered", 10s, [&] { return Received().size() == 2; }), absl::OkStatus());
  EXPECT_TRUE(Received()[1].sent_to_routers());
  EXPECT_FALSE(acks->catching_up());
}

TEST_F(PlanAcknowledgerTest, StopDropsAPendingCatchUp) {
  auto acks = Acknowledger();
  const v1::SitePlan plan = MakePlan(1, 7);
  ASSERT_EQ(*installer_->Offer(plan), PlanVerdict::kInstalled);
  acks->Acknowledge(NotYetAtRouters(plan));
  // The catch-up is waiting on the routers before it is stopped.
  ASSERT_EQ(sim::WaitUntil("the catch-up to ask the routers", 10s, [&] { return routers_.asked() > 0; }),
            absl::OkStatus());
  acks->Stop();
  EXPECT_FALSE(acks->catching_up());
  routers_.CatchUp();
  acks.reset();  // joined: nothing more can be sent
  EXPECT_EQ(Received().size(), 1u);
}

}  // namespace
}  // namespace geodesic::routerd
