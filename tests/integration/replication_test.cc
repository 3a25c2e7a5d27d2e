// Three pathcomp replicas electing a leader through a real three-member etcd
// cluster, with agents, routerds and iad's real FRR, all on loopback: the
// leader is SIGKILLed, then another is SIGSTOPped past its lease; a new leader
// publishes each time, routerd follows the higher epoch, FRR never loses a
// route, and a follower refuses mutations and names the leader.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <signal.h>

#include <algorithm>
#include <atomic>
#include <thread>

#include "absl/strings/str_cat.h"
#include "geodesic/v1/plan.pb.h"
#include "tests/support/lab_testing.h"

namespace geodesic {
namespace {

using sim::LabClient;
using sim::LocalLab;
using sim::WaitUntil;
using std::chrono::seconds;

constexpr char kFacility[] = "iad";

class ReplicationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto status = sim::EtcdAvailable(); !status.ok()) GTEST_SKIP() << status;
    if (auto status = sim::FrrAvailable(); !status.ok()) GTEST_SKIP() << status;
    // Link health is configured, not probed: on 2 busy cores, 10 ms probes
    // flap, and this test is about leader changes alone.
    sim::LabOptions options = testing::LabOptionsFor(work_.path());
    options.replicas = 3;
    options.lease_ttl_s = 2;
    options.bgp_facilities = {kFacility};
    auto lab = LocalLab::Create(options);
    ASSERT_TRUE(lab.ok()) << lab.status();
    lab_ = *std::move(lab);
    ASSERT_TRUE(lab_->StartAll().ok());
  }

  void TearDown() override {
    lab_.reset();
    if (HasFailure()) work_.keep();
  }

  // The epoch of the plan iad's routerd has installed (0: none yet).
  uint64_t InstalledEpoch() {
    auto plan = lab_->InstalledPlan(kFacility);
    return plan ? plan->epoch() : 0;
  }

  int Leader(uint64_t* epoch = nullptr) { return lab_->LeaderReplica(epoch); }

  // Waits until a leader other than the ones of `older_than` and before
  // leads with a higher epoch, and its plan is at every site's routers
  // (as that leader says); returns the leader, its epoch in `epoch`.
  int WaitForNewLeaderConverged(uint64_t older_than, uint64_t* epoch) {
    int leader = -1;
    const absl::Status elected = WaitUntil(absl::StrCat("a leader with an epoch above ", older_than), seconds(30), [&] {
      leader = Leader(epoch);
      return leader >= 0 && *epoch > older_than;
    });
    EXPECT_EQ(elected, absl::OkStatus());
    if (!elected.ok()) return -1;
    auto converged = LabClient(*lab_, leader).WaitConverged({.timeout = seconds(60)});
    EXPECT_TRUE(converged.ok()) << converged.status();
    if (!converged.ok()) return -1;
    EXPECT_EQ(converged->plan().epoch(), *epoch);
    return leader;
  }

  // What `replica` answers to a change: OK when it leads, FAILED_PRECONDITION
  // naming the leader when it follows.
  grpc::Status AnswerToAChange(int replica) {
    auto stub = lab_->OperatorClient("admin", replica);
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + seconds(5));
    v1::DeleteIntentRequest request;
    request.set_id("no-such-intent");
    v1::DeleteIntentResponse response;
    return stub->DeleteIntent(&context, request, &response);
  }

  size_t FrrPrefixes() {
    size_t count = 0;
    for (bool v6 : {false, true}) {
      auto routes = lab_->frr(kFacility)->Routes(v6);
      if (!routes.ok()) return 0;
      for (const auto& [prefix, paths] : *routes) {
        for (const auto& path : paths) {
          if (path.valid) {
            ++count;
            break;
          }
        }
      }
    }
    return count;
  }

  testing::TempDir work_{"replication"};
  std::unique_ptr<LocalLab> lab_;
};

TEST_F(ReplicationTest, LeaderLossAndPauseNeverCostARoute) {
  size_t reachable = 0;
  for (const auto& facility : lab_->topology().facilities) {
    if (facility.id() != kFacility) reachable += facility.prefixes_size();
  }
  uint64_t epoch = 0;
  const int first = WaitForNewLeaderConverged(0, &epoch);
  ASSERT_GE(first, 0);
  EXPECT_EQ(InstalledEpoch(), epoch);
  // At the routers means the UPDATEs were written; FRR's table follows as bgpd reads them.
  ASSERT_EQ(WaitUntil("the leader's plan in iad's FRR", seconds(30), [&] { return FrrPrefixes() == reachable; }),
            absl::OkStatus());

  // A follower refuses changes and says where the leader is.
  const int follower = (first + 1) % lab_->replica_count();
  {
    auto stub = lab_->OperatorClient("admin", follower);
    grpc::ClientContext context;
    v1::AddIntentRequest request;
    request.mutable_intent()->set_id("drain-iad-chi");
    request.mutable_intent()->mutable_drain()->mutable_target()->set_link_id("iad-chi");
    v1::AddIntentResponse response;
    const grpc::Status status = stub->AddIntent(&context, request, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
    EXPECT_THAT(status.error_message(), ::testing::HasSubstr(lab_->ReplicaId(first)));
  }

  // An operator's drain sent to a follower with tectl goes to the leader and
  // reaches every replica through etcd, once.
  {
    const tls::TlsFiles admin = lab_->operator_tls("admin");
    auto drained = sim::RunCommand({testing::BinaryDir() + "/bin/tectl", "drain", "link",
                                    "den-sjc", "--reason", "fiber work", "--server", lab_->replica_address(follower),
                                    "--ca", admin.ca_path, "--cert", admin.cert_path, "--key", admin.key_path});
    ASSERT_TRUE(drained.ok());
    EXPECT_EQ(drained->exit_code, 0) << drained->output;
    EXPECT_THAT(drained->output, ::testing::HasSubstr("sending to the leader"));
  }
  auto intents_at = [&](int replica) {
    auto stub = lab_->OperatorClient("admin", replica);
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + seconds(1));
    v1::ListIntentsResponse response;
    std::vector<std::string> ids;
    if (stub->ListIntents(&context, {}, &response).ok()) {
      for (const auto& intent : response.intents()) ids.push_back(intent.id());
    }
    return ids;
  };
  for (int replica = 0; replica < lab_->replica_count(); ++replica) {
    EXPECT_EQ(WaitUntil(absl::StrCat(lab_->ReplicaId(replica), " to hold the drain"), seconds(10),
                        [&] { return intents_at(replica) == std::vector<std::string>{"drain-link-den-sjc"}; }),
              absl::OkStatus());
  }

  // Every replica holds the same workloads (the first leader seeded etcd
  // with the inventory's), and one removed at the leader leaves them all.
  auto workloads_at = [&](int replica) {
    auto stub = lab_->OperatorClient("admin", replica);
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + seconds(2));
    v1::ListWorkloadsResponse response;
    std::vector<std::string> ids;
    if (stub->ListWorkloads(&context, {}, &response).ok()) {
      for (const auto& workload : response.workloads()) ids.push_back(workload.id());
    }
    std::sort(ids.begin(), ids.end());
    return ids;
  };
  std::vector<std::string> workloads = workloads_at(first);
  ASSERT_FALSE(workloads.empty());
  {
    auto stub = lab_->OperatorClient("admin", first);
    grpc::ClientContext context;
    v1::DeleteWorkloadRequest request;
    request.set_id(workloads.front());
    v1::DeleteWorkloadResponse response;
    ASSERT_TRUE(stub->DeleteWorkload(&context, request, &response).ok());
    workloads.erase(workloads.begin());
  }
  for (int replica = 0; replica < lab_->replica_count(); ++replica) {
    EXPECT_EQ(WaitUntil(absl::StrCat(lab_->ReplicaId(replica), " to hold the leader's workloads"), seconds(10),
                        [&] { return workloads_at(replica) == workloads; }),
              absl::OkStatus());
  }

  std::atomic<bool> watching = true;
  std::atomic<size_t> fewest = reachable;
  std::thread watcher([&] {
    while (watching) {
      fewest = std::min(fewest.load(), FrrPrefixes());
      // Samples FRR's table every 20 ms for as long as the test runs (joined below).
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });
  // Joined however the test ends (an ASSERT returns early).
  struct Join {
    std::atomic<bool>& flag;
    std::thread& thread;
    ~Join() {
      flag = false;
      if (thread.joinable()) thread.join();
    }
  } join{watching, watcher};

  // SIGKILL the leader: another replica leads and iad installs its plan.
  const auto killed_at = std::chrono::steady_clock::now();
  lab_->Kill(lab_->ReplicaName(first), SIGKILL);
  uint64_t second_epoch = 0;
  const int second = WaitForNewLeaderConverged(epoch, &second_epoch);
  ASSERT_GE(second, 0);
  EXPECT_EQ(InstalledEpoch(), second_epoch);
  // The new leader has the drain the old one accepted, and plans with it.
  EXPECT_EQ(intents_at(second), std::vector<std::string>{"drain-link-den-sjc"});
  EXPECT_EQ(workloads_at(second), workloads);
  std::printf("new leader %s's plan installed at iad %lld ms after the old leader was killed (lease TTL 2 s)\n",
              lab_->ReplicaId(second).c_str(),
              static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                         std::chrono::steady_clock::now() - killed_at).count()));

  // SIGSTOP the new leader past its lease: the third takes over; when the
  // paused one wakes it has stepped down and iad stays on the newest epoch.
  lab_->Kill(lab_->ReplicaName(second), SIGSTOP);
  uint64_t third_epoch = 0;
  const int third = WaitForNewLeaderConverged(second_epoch, &third_epoch);
  ASSERT_GE(third, 0);
  lab_->process(lab_->ReplicaName(second))->Signal(SIGCONT);
  // The woken replica knows it no longer leads: it refuses a change and names
  // the new leader.
  grpc::Status woken;
  EXPECT_EQ(WaitUntil(absl::StrCat(lab_->ReplicaId(second), ", woken, to answer as a follower"), seconds(10), [&] {
              woken = AnswerToAChange(second);
              return woken.error_code() == grpc::StatusCode::FAILED_PRECONDITION;
            }),
            absl::OkStatus())
      << woken.error_message();
  EXPECT_THAT(woken.error_message(), ::testing::HasSubstr(lab_->ReplicaId(third)));
  EXPECT_EQ(Leader(), third);
  // iad stays on the newest epoch: whatever the woken replica published
  // before it stepped down carried its old epoch, which routerd fences off.
  EXPECT_EQ(InstalledEpoch(), third_epoch);

  // Two etcd members lost: no quorum. The leader stops leading, routerd and
  // FRR keep the last plan, changes are refused with a clear error; when
  // quorum returns a leader publishes again.
  // One etcd member lost: nothing changes (longer than the lease).
  const int before_quorum_loss = Leader();
  lab_->etcd()->Kill(0, SIGKILL);
  std::this_thread::sleep_for(seconds(3));  // the thing tested: leading through more than a 2 s lease on two members
  uint64_t still = 0;
  EXPECT_EQ(Leader(&still), before_quorum_loss);
  EXPECT_EQ(still, third_epoch);
  EXPECT_EQ(InstalledEpoch(), third_epoch);
  // A second one: no quorum.
  lab_->etcd()->Kill(1, SIGKILL);
  // Within its lease the leader stops accepting changes, and says why.
  grpc::Status refused;
  EXPECT_EQ(WaitUntil("the leader to refuse changes without etcd quorum", seconds(15), [&] {
              refused = AnswerToAChange(before_quorum_loss);
              return refused.error_code() == grpc::StatusCode::FAILED_PRECONDITION;
            }),
            absl::OkStatus())
      << refused.error_message();
  EXPECT_THAT(refused.error_message(), ::testing::HasSubstr("etcd"));
  EXPECT_EQ(InstalledEpoch(), third_epoch);
  ASSERT_TRUE(lab_->etcd()->Restart(0).ok());
  ASSERT_TRUE(lab_->etcd()->Restart(1).ok());
  uint64_t fourth_epoch = 0;
  int fourth = -1;
  EXPECT_EQ(WaitUntil("a leader again, its plan installed at iad", seconds(30), [&] {
              fourth = Leader(&fourth_epoch);
              return fourth >= 0 && InstalledEpoch() == fourth_epoch;
            }),
            absl::OkStatus());
  EXPECT_GE(fourth_epoch, third_epoch);
  if (fourth >= 0) {
    auto converged = LabClient(*lab_, fourth).WaitConverged({.timeout = seconds(60)});
    EXPECT_TRUE(converged.ok()) << converged.status();
  }

  watching = false;
  watcher.join();
  EXPECT_EQ(fewest.load(), reachable) << "FRR lost routes during a leader change or without etcd";
}

}  // namespace
}  // namespace geodesic
