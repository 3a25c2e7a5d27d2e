// One inventory across replicas: three pathcomp replicas on a real
// three-member etcd. A follower is down while an operator imports Cogentco
// at another follower (tectl takes it to the leader); the import reaches
// every replica through etcd, the one that was down catches up when it comes
// back, the leader is SIGKILLed and the new leader plans on Cogentco, and the
// audit log shows the import once, the same at every replica.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <signal.h>

#include <fstream>
#include <set>

#include "absl/strings/str_cat.h"
#include "tests/support/lab_testing.h"
#include "topology/import.h"
#include "topology/topology_writer.h"

namespace geodesic {
namespace {

using sim::LabClient;
using sim::LocalLab;
using sim::WaitUntil;
using std::chrono::seconds;

// Cogentco's 197 facilities and links with the first kWorkloads of its
// demands, as a project inventory file: the import is about the inventory,
// and a few demands show that workloads go with it.
constexpr int kWorkloads = 50;

class InventoryReplicationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto status = sim::EtcdAvailable(); !status.ok()) GTEST_SKIP() << status;
    sim::LabOptions options = testing::LabOptionsFor(work_.path());
    options.replicas = 3;
    options.lease_ttl_s = 2;
    auto lab = LocalLab::Create(options);
    ASSERT_TRUE(lab.ok()) << lab.status();
    lab_ = *std::move(lab);
    // The controllers alone: the backbone's agents and routerds have no part
    // in Cogentco.
    ASSERT_TRUE(lab_->StartPathcomp().ok());

    auto cogentco = topology::ImportTopology(testing::SourceDir() + "/../shared/data/repetita/Cogentco.graph");
    ASSERT_TRUE(cogentco.ok()) << cogentco.status();
    cogentco->workloads.resize(kWorkloads);
    for (const auto& facility : cogentco->facilities) cogentco_facilities_.insert(facility.id());
    cogentco_links_ = cogentco->links.size();
    cogentco_path_ = work_.Join("cogentco.yaml");
    std::ofstream(cogentco_path_) << topology::WriteTopologyYaml(*cogentco);
  }

  void TearDown() override {
    lab_.reset();
    if (HasFailure()) work_.keep();
  }

  std::set<std::string> FacilitiesAt(int replica) {
    auto stub = lab_->OperatorClient("viewer", replica);
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + seconds(5));
    v1::ListFacilitiesResponse response;
    std::set<std::string> ids;
    if (stub->ListFacilities(&context, {}, &response).ok()) {
      for (const auto& facility : response.facilities()) ids.insert(facility.id());
    }
    return ids;
  }

  size_t WorkloadsAt(int replica) {
    auto stub = lab_->OperatorClient("viewer", replica);
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + seconds(5));
    v1::ListWorkloadsResponse response;
    return stub->ListWorkloads(&context, {}, &response).ok() ? response.workloads_size() : 0;
  }

  // The audit log as `replica` answers it: "action ok seq" per record.
  std::vector<std::string> AuditAt(int replica) {
    auto stub = lab_->OperatorClient("viewer", replica);
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + seconds(5));
    v1::ListAuditLogResponse response;
    std::vector<std::string> records;
    const grpc::Status status = stub->ListAuditLog(&context, {}, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    for (const auto& record : response.records()) {
      records.push_back(absl::StrCat(record.seq(), " ", record.action(), " ", record.ok() ? "ok" : "refused"));
    }
    return records;
  }

  absl::Status WaitForCogentcoAt(int replica) {
    return WaitUntil(absl::StrCat(lab_->ReplicaId(replica), " to hold Cogentco's facilities and ", kWorkloads,
                                  " workloads"),
                     seconds(60), [&] { return FacilitiesAt(replica) == cogentco_facilities_ && WorkloadsAt(replica) == kWorkloads; });
  }

  testing::TempDir work_{"inventory-replication"};
  std::unique_ptr<LocalLab> lab_;
  std::string cogentco_path_;
  std::set<std::string> cogentco_facilities_;
  size_t cogentco_links_ = 0;
};

TEST_F(InventoryReplicationTest, AnImportAtAFollowerReachesEveryReplicaAndOutlivesTheLeader) {
  uint64_t epoch = 0;
  int leader = -1;
  ASSERT_EQ(WaitUntil("a leader", seconds(30), [&] { return (leader = lab_->LeaderReplica(&epoch)) >= 0; }),
            absl::OkStatus());
  const int away = (leader + 1) % 3;  // down during the import
  const int asked = (leader + 2) % 3;  // the follower the operator asks
  const std::set<std::string> backbone = FacilitiesAt(leader);
  ASSERT_FALSE(backbone.empty());
  for (int replica : {away, asked}) {
    EXPECT_EQ(FacilitiesAt(replica), backbone) << "the replicas start on the same inventory";
  }
  lab_->Kill(lab_->ReplicaName(away), SIGKILL);

  const tls::TlsFiles admin = lab_->operator_tls("admin");
  auto imported = sim::RunCommand({testing::BinaryDir() + "/bin/tectl", "import", cogentco_path_, "--replace-workloads",
                                   "--server", lab_->replica_address(asked), "--ca", admin.ca_path, "--cert",
                                   admin.cert_path, "--key", admin.key_path});
  ASSERT_TRUE(imported.ok()) << imported.status();
  ASSERT_EQ(imported->exit_code, 0) << imported->output;
  EXPECT_THAT(imported->output, ::testing::HasSubstr("sending to the leader"));

  for (int replica : {leader, asked}) EXPECT_EQ(WaitForCogentcoAt(replica), absl::OkStatus());
  // The replica that was down catches up from etcd when it comes back, its
  // own store and configured file notwithstanding.
  ASSERT_TRUE(lab_->StartReplica(away).ok());
  EXPECT_EQ(WaitForCogentcoAt(away), absl::OkStatus());

  // The leader dies: the new one plans on Cogentco.
  lab_->Kill(lab_->ReplicaName(leader), SIGKILL);
  uint64_t new_epoch = 0;
  int new_leader = -1;
  ASSERT_EQ(WaitUntil("a new leader", seconds(30), [&] {
              new_leader = lab_->LeaderReplica(&new_epoch);
              return new_leader >= 0 && new_epoch > epoch;
            }),
            absl::OkStatus());
  auto converged = LabClient(*lab_, new_leader).WaitConverged({.timeout = seconds(60), .min_model_revision = 0, .facilities = {}, .at_routers = false});
  ASSERT_TRUE(converged.ok()) << converged.status();
  EXPECT_EQ(converged->plan().epoch(), new_epoch);
  std::set<std::string> planned;
  for (const auto& site : converged->plan().sites()) planned.insert(site.facility_id());
  EXPECT_EQ(planned, cogentco_facilities_) << "the new leader's plan is for Cogentco's facilities";
  auto links = LabClient(*lab_, new_leader).Links();
  ASSERT_TRUE(links.ok()) << links.status();
  EXPECT_EQ(links->size(), cogentco_links_);

  // One history, whatever replica answers: the import appears once.
  const int other = 3 - leader - new_leader;
  const std::vector<std::string> history = AuditAt(new_leader);
  EXPECT_EQ(AuditAt(other), history);
  EXPECT_EQ(std::count_if(history.begin(), history.end(),
                          [](const std::string& record) { return record.find(" import topology ok") != std::string::npos; }),
            1)
      << ::testing::PrintToString(history);
}

}  // namespace
}  // namespace geodesic
