// PlanSubscriber against an in-process fake PlanService replica on a loopback
// port (insecure credentials): it installs what the replica sends, answers
// with the right acks, tells ControllerContact while a watch is open, and
// resumes from the installed generation after the stream ends.
#include "routerd/plan_subscriber.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <filesystem>
#include <mutex>
#include <vector>

#include "geodesic/v1/plan.grpc.pb.h"
#include "site_plan/site_plan_writer.h"

namespace geodesic::routerd {
namespace {

using namespace std::chrono_literals;

// Sends the plans a test queues; a queued nullopt ends the stream.
class FakePlanReplica final : public v1::PlanService::Service {
 public:
  grpc::Status Watch(grpc::ServerContext* context, const v1::WatchPlanRequest* request,
                     grpc::ServerWriter<v1::SitePlan>* writer) override {
    context->AddInitialMetadata("geodesic-plan-watch", "1");
    writer->SendInitialMetadata();
    std::unique_lock lock(mu_);
    watches_.push_back(*request);
    cv_.notify_all();
    while (true) {
      // Rechecks cancellation now and then: a sync handler is not woken by it.
      cv_.wait_for(lock, 20ms, [&] { return !queue_.empty() || stopping_; });
      if (stopping_ || context->IsCancelled()) return grpc::Status::OK;
      if (queue_.empty()) continue;
      std::optional<v1::SitePlan> next = std::move(queue_.front());
      queue_.pop_front();
      if (!next) return grpc::Status::OK;
      lock.unlock();
      const bool written = writer->Write(*next);
      lock.lock();
      if (!written) return grpc::Status::OK;
    }
  }

  grpc::Status Ack(grpc::ServerContext*, const v1::PlanAck* ack, v1::PlanAckResponse*) override {
    std::lock_guard lock(mu_);
    acks_.push_back(*ack);
    cv_.notify_all();
    return grpc::Status::OK;
  }

  void Send(std::optional<v1::SitePlan> plan) {
    std::lock_guard lock(mu_);
    queue_.push_back(std::move(plan));
    cv_.notify_all();
  }
  void Stop() {
    std::lock_guard lock(mu_);
    stopping_ = true;
    cv_.notify_all();
  }

  // Waits (at most 10 s) for the n-th ack / watch; nullopt on timeout.
  std::optional<v1::PlanAck> WaitAck(size_t n) {
    std::unique_lock lock(mu_);
    if (!cv_.wait_for(lock, 10s, [&] { return acks_.size() >= n; })) return std::nullopt;
    return acks_[n - 1];
  }
  std::optional<v1::WatchPlanRequest> WaitWatch(size_t n) {
    std::unique_lock lock(mu_);
    if (!cv_.wait_for(lock, 10s, [&] { return watches_.size() >= n; })) return std::nullopt;
    return watches_[n - 1];
  }
  size_t ack_count() {
    std::lock_guard lock(mu_);
    return acks_.size();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::optional<v1::SitePlan>> queue_;
  std::vector<v1::PlanAck> acks_;
  std::vector<v1::WatchPlanRequest> watches_;
  bool stopping_ = false;
};

class NullRouteInstaller final : public RouteInstaller {
 public:
  absl::Status Apply(const RibDiff&) override { return absl::OkStatus(); }
};

v1::SitePlan Plan(uint64_t epoch, uint64_t generation) {
  v1::SitePlan plan;
  plan.set_facility_id("iad");
  plan.set_epoch(epoch);
  plan.set_generation(generation);
  v1::NextHop hop;
  hop.set_link_id("iad-ord");
  hop.set_weight(1);
  site_plan::SitePlanWriter(&plan).AddRoute("10.3.0.0/16", "dfw", {hop}, {}, 0);
  return plan;
}

class PlanSubscriberTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("plan-subscriber-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    auto installer = PlanInstaller::Open("iad", dir_.string(), std::make_unique<NullRouteInstaller>());
    ASSERT_TRUE(installer.ok()) << installer.status();
    installer_ = *std::move(installer);
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(&replica_);
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    address_ = "127.0.0.1:" + std::to_string(port);
    subscriber_ = std::make_unique<PlanSubscriber>("iad", address_, grpc::InsecureChannelCredentials(),
                                                   *installer_, &contact_);
  }
  void TearDown() override {
    replica_.Stop();
    if (subscriber_) subscriber_->Stop();
    if (server_) server_->Shutdown(std::chrono::system_clock::now() + 1s);
    std::filesystem::remove_all(dir_);
  }

  std::filesystem::path dir_;
  std::unique_ptr<PlanInstaller> installer_;
  ControllerContact contact_{600s, ControllerContact::Clock::now()};
  FakePlanReplica replica_;
  std::unique_ptr<grpc::Server> server_;
  std::string address_;
  std::unique_ptr<PlanSubscriber> subscriber_;
};

TEST_F(PlanSubscriberTest, InstallsWhatTheReplicaSendsAndAcknowledgesIt) {
  subscriber_->Start();
  auto watch = replica_.WaitWatch(1);
  ASSERT_TRUE(watch.has_value()) << "no watch within 10 s";
  EXPECT_EQ(watch->facility_id(), "iad");
  EXPECT_EQ(watch->known_generation(), 0u);
  replica_.Send(Plan(1, 5));
  auto ack = replica_.WaitAck(1);
  ASSERT_TRUE(ack.has_value()) << "no ack within 10 s";
  EXPECT_TRUE(ack->installed());
  EXPECT_EQ(ack->generation(), 5u);
  EXPECT_EQ(ack->epoch(), 1u);
  EXPECT_EQ(installer_->installed().generation(), 5u);
}

TEST_F(PlanSubscriberTest, AcknowledgesAFencedOffPlanAsRefusedAndAStaleOneNotAtAll) {
  subscriber_->Start();
  ASSERT_TRUE(replica_.WaitWatch(1).has_value());
  replica_.Send(Plan(2, 5));
  ASSERT_TRUE(replica_.WaitAck(1).has_value());
  replica_.Send(Plan(2, 5));   // stale: the same generation again
  replica_.Send(Plan(1, 9));   // an old leader's plan
  auto fenced = replica_.WaitAck(2);
  ASSERT_TRUE(fenced.has_value()) << "no second ack within 10 s";
  EXPECT_FALSE(fenced->installed());
  EXPECT_EQ(fenced->generation(), 9u);
  EXPECT_THAT(fenced->error(), ::testing::HasSubstr("fenced off"));
  // The stale plan was offered before the fenced one and got no ack.
  EXPECT_EQ(replica_.ack_count(), 2u);
  EXPECT_EQ(installer_->installed().generation(), 5u);
  EXPECT_EQ(installer_->installed().epoch(), 2u);
}

TEST_F(PlanSubscriberTest, AnOpenWatchCountsAsControllerContact) {
  using Action = ControllerContact::Verdict::Action;
  subscriber_->Start();
  ASSERT_TRUE(replica_.WaitWatch(1).has_value());
  // A plan acknowledged means the answered watch was counted as contact first.
  replica_.Send(Plan(1, 5));
  ASSERT_TRUE(replica_.WaitAck(1).has_value());
  // However long the open watch stays quiet, the routes stay fresh (without
  // the contact, this first check would expire them: stale_after is 600 s).
  EXPECT_EQ(contact_.Check(ControllerContact::Clock::now() + 100000s).action, Action::kNone);
}

TEST_F(PlanSubscriberTest, ResumesFromTheInstalledGenerationAfterTheStreamEnds) {
  subscriber_->Start();
  ASSERT_TRUE(replica_.WaitWatch(1).has_value());
  replica_.Send(Plan(1, 7));
  ASSERT_TRUE(replica_.WaitAck(1).has_value());
  replica_.Send(std::nullopt);  // the replica ends the stream
  auto again = replica_.WaitWatch(2);
  ASSERT_TRUE(again.has_value()) << "no new watch within 10 s";
  EXPECT_EQ(again->known_generation(), 7u);
  replica_.Send(Plan(1, 8));
  auto ack = replica_.WaitAck(2);
  ASSERT_TRUE(ack.has_value());
  EXPECT_EQ(ack->generation(), 8u);
  EXPECT_TRUE(ack->installed());
}

}  // namespace
}  // namespace geodesic::routerd
