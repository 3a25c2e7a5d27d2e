// The inventory and the audit log as replicated pathcomp keeps them in etcd,
// on a real one-member etcd: releases of an ASN2k-sized inventory in chunks,
// fenced by the election key; refused releases retried; one audit history.
#include "pathcomp/replication/inventory_replica.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <mutex>

#include "absl/strings/str_cat.h"
#include "pathcomp/replication/etcd_audit_log.h"
#include "sim/etcd_cluster.h"
#include "sim/wait_until.h"
#include "tests/support/test_dirs.h"

namespace geodesic::pathcomp {
namespace {

using namespace std::chrono_literals;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// The size of ASN2k (the CAIDA AS graph of the REPETITA collection): 1,739
// nodes and 8,558 links, each facility with two prefixes and each link in an SRLG.
v1::Inventory Asn2kSized() {
  constexpr int kNodes = 1739;
  constexpr int kLinks = 8558;
  v1::Inventory inventory;
  for (int n = 0; n < kNodes; ++n) {
    const std::string id = absl::StrCat("as", 1000 + n);
    v1::Facility* facility = inventory.add_facilities();
    facility->set_id(id);
    facility->set_display_name(absl::StrCat("Autonomous system ", 1000 + n));
    facility->set_region(absl::StrCat("region-", n % 17));
    facility->mutable_position()->set_latitude_deg(-60 + (n % 120));
    facility->mutable_position()->set_longitude_deg(-170 + (n % 340));
    facility->add_prefixes(absl::StrCat("10.", n / 256, ".", n % 256, ".0/24"));
    facility->add_prefixes(absl::StrCat("fd00:", n, "::/48"));
    v1::Node* node = inventory.add_nodes();
    node->set_id(id + "-r1");
    node->set_facility_id(id);
    node->set_role(v1::NODE_ROLE_BACKBONE_ROUTER);
  }
  for (int l = 0; l < kLinks; ++l) {
    const int src = l % kNodes;
    const int dst = (src + 1 + (l / kNodes) * 7 + l % 5) % kNodes;
    v1::Link* link = inventory.add_links();
    link->set_id(absl::StrCat("as", 1000 + src, "-as", 1000 + dst, "-", l));
    link->set_src_node_id(absl::StrCat("as", 1000 + src, "-r1"));
    link->set_dst_node_id(absl::StrCat("as", 1000 + dst, "-r1"));
    link->set_src_facility_id(absl::StrCat("as", 1000 + src));
    link->set_dst_facility_id(absl::StrCat("as", 1000 + dst));
    link->set_capacity_gbps(100 * (1 + l % 8));
    link->set_igp_metric(10 + l % 90);
    link->set_latency_us(500 + l % 20'000);
    link->add_srlgs(absl::StrCat("conduit-", l / 3));
    link->set_admin_state(v1::ADMIN_STATE_UP);
  }
  return inventory;
}

v1::Inventory Small(const std::string& facility) {
  v1::Inventory inventory;
  inventory.add_facilities()->set_id(facility);
  return inventory;
}

// A replica's model as the tests see it: the releases applied, in order.
class AppliedReleases {
 public:
  InventoryReplica::Apply Apply() {
    return [this](const InventoryReleaseContent& release) {
      std::lock_guard lock(mu_);
      if (!refusal_.ok()) return refusal_;
      versions_.push_back(release.header.version());
      last_ = release.inventory;
      return absl::OkStatus();
    };
  }
  void Refuse(absl::Status why) {
    std::lock_guard lock(mu_);
    refusal_ = std::move(why);
  }
  std::vector<uint64_t> versions() {
    std::lock_guard lock(mu_);
    return versions_;
  }
  v1::Inventory last() {
    std::lock_guard lock(mu_);
    return last_;
  }

 private:
  std::mutex mu_;
  absl::Status refusal_;
  std::vector<uint64_t> versions_;
  v1::Inventory last_;
};

class InventoryReplicaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto status = sim::EtcdAvailable(); !status.ok()) GTEST_SKIP() << status;
    auto cluster = sim::EtcdCluster::Start(dir_.path(), 1);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    etcd_ = *std::move(cluster);
    auto client = EtcdClient::Create({.endpoints = etcd_->endpoints(), .credentials = nullptr, .call_timeout = 5000ms});
    ASSERT_TRUE(client.ok()) << client.status();
    client_ = *std::move(client);
    leader_ = Elect("pc1");
  }
  void TearDown() override {
    client_.reset();
    etcd_.reset();
    if (HasFailure()) dir_.keep();
  }

  LeaderKey Elect(const std::string& candidate) {
    auto lease = client_->GrantLease(60s);
    EXPECT_TRUE(lease.ok()) << lease.status();
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + 10s);
    auto key = client_->Campaign(context, "test-election", lease.ok() ? *lease : 0, candidate);
    EXPECT_TRUE(key.ok()) << key.status();
    return key.ok() ? *key : LeaderKey{};
  }

  static absl::Status Nothing() { return absl::OkStatus(); }

  testing::TempDir dir_{"inventory-replica"};
  std::unique_ptr<sim::EtcdCluster> etcd_;
  std::unique_ptr<EtcdClient> client_;
  LeaderKey leader_;
};

// Once with the chunks pathcomp writes (1 MiB), once with smaller ones so
// that it is cut several times.
class InventoryChunksTest : public InventoryReplicaTest, public ::testing::WithParamInterface<size_t> {};

TEST_P(InventoryChunksTest, AnAsn2kSizedInventoryGoesThrough) {
  const v1::Inventory inventory = Asn2kSized();
  const size_t chunk_bytes = GetParam();
  AppliedReleases leader_model, follower_model;
  InventoryReplica leader(*client_, "test/inventory", "", leader_model.Apply(), chunk_bytes);
  InventoryReplica follower(*client_, "test/inventory", "", follower_model.Apply(), chunk_bytes);
  follower.Start();

  auto version = leader.Publish(leader_, inventory, "import of asn2k by admin", Nothing);
  ASSERT_TRUE(version.ok()) << version.status();
  EXPECT_EQ(*version, 1u);
  EXPECT_EQ(leader.applied_version(), 1u);
  EXPECT_THAT(leader_model.versions(), ::testing::IsEmpty()) << "the leader applies its own release itself";

  ASSERT_EQ(sim::WaitUntil("the follower to apply release 1", 30s, [&] { return follower.applied_version() == 1; }),
            absl::OkStatus());
  EXPECT_EQ(follower_model.last().SerializeAsString(), inventory.SerializeAsString());
  auto fetched = follower.Fetch();
  ASSERT_TRUE(fetched.ok()) << fetched.status();
  ASSERT_TRUE(fetched->has_value());
  EXPECT_EQ((*fetched)->header.chunks(), (inventory.ByteSizeLong() + chunk_bytes - 1) / chunk_bytes);
  EXPECT_EQ((*fetched)->header.cause(), "import of asn2k by admin");
  std::printf("ASN2k-sized inventory: %llu bytes in %u chunks\n",
              static_cast<unsigned long long>((*fetched)->header.bytes()), (*fetched)->header.chunks());
  follower.Stop();
}

INSTANTIATE_TEST_SUITE_P(ChunkSizes, InventoryChunksTest,
                         ::testing::Values(InventoryReplica::kChunkBytes, size_t{256} << 10));

TEST_F(InventoryReplicaTest, ANewerReleaseReplacesTheOlderAndItsChunksGo) {
  AppliedReleases follower_model;
  InventoryReplica leader(*client_, "test/inventory", "", nullptr);
  InventoryReplica follower(*client_, "test/inventory", "", follower_model.Apply());
  ASSERT_TRUE(leader.Publish(leader_, Small("iad"), "first", Nothing).ok());
  ASSERT_TRUE(leader.Publish(leader_, Small("ord"), "second", Nothing).ok());
  follower.Start();
  ASSERT_EQ(sim::WaitUntil("the follower to apply release 2", 10s, [&] { return follower.applied_version() == 2; }),
            absl::OkStatus());
  EXPECT_THAT(follower_model.versions(), ElementsAre(2u)) << "a follower that was away applies only the newest";
  EXPECT_EQ(follower_model.last().facilities(0).id(), "ord");
  auto chunks = client_->RangePrefix("test/inventory/chunks/");
  ASSERT_TRUE(chunks.ok()) << chunks.status();
  ASSERT_EQ(chunks->kvs.size(), 1u);
  EXPECT_THAT(chunks->kvs[0].key(), HasSubstr("/00000000000000000002/"));

  // Workloads never travel in a release: they replicate on their own.
  v1::Inventory with_workload = Small("sfo");
  with_workload.add_workloads()->set_id("train-1");
  ASSERT_TRUE(leader.Publish(leader_, with_workload, "third", Nothing).ok());
  ASSERT_EQ(sim::WaitUntil("the follower to apply release 3", 10s, [&] { return follower.applied_version() == 3; }),
            absl::OkStatus());
  EXPECT_EQ(follower_model.last().workloads_size(), 0);
  follower.Stop();
}

// A release comes with the workloads etcd held at its revision (once they
// were seeded there), so a replica never holds workloads its new inventory lacks.
TEST_F(InventoryReplicaTest, AReleaseComesWithEtcdsWorkloadsOnceSeeded) {
  InventoryReplica replica(*client_, "test/inventory", "test/workloads/", nullptr);
  ASSERT_TRUE(replica.Publish(leader_, Small("iad"), "first", Nothing).ok());
  v1::Workload workload;
  workload.set_id("train-1");
  workload.mutable_elephant()->set_src_facility_id("iad");
  ASSERT_TRUE(client_->PutIfLeader(leader_, "test/workloads/train-1", workload.SerializeAsString()).ok());
  auto unseeded = replica.Fetch();
  ASSERT_TRUE(unseeded.ok() && unseeded->has_value()) << unseeded.status();
  EXPECT_FALSE((*unseeded)->with_workloads) << "before the seed, etcd's workloads are not the truth";
  EXPECT_EQ((*unseeded)->inventory.workloads_size(), 0);

  ASSERT_TRUE(client_->PutIfLeader(leader_, "test/workloads.seeded", "1").ok());
  auto seeded = replica.Fetch();
  ASSERT_TRUE(seeded.ok() && seeded->has_value()) << seeded.status();
  EXPECT_TRUE((*seeded)->with_workloads);
  ASSERT_EQ((*seeded)->inventory.workloads_size(), 1);
  EXPECT_EQ((*seeded)->inventory.workloads(0).id(), "train-1");
}

TEST_F(InventoryReplicaTest, AReleaseTheModelRefusedIsRetried) {
  AppliedReleases follower_model;
  follower_model.Refuse(absl::FailedPreconditionError("workload train-1 would be invalid"));
  InventoryReplica leader(*client_, "test/inventory", "", nullptr);
  InventoryReplica follower(*client_, "test/inventory", "", follower_model.Apply());
  ASSERT_TRUE(leader.Publish(leader_, Small("iad"), "first", Nothing).ok());
  follower.Start();
  follower_model.Refuse(absl::OkStatus());  // e.g. the workload's removal reached the model
  follower.RetryPending();
  EXPECT_EQ(sim::WaitUntil("the refused release to be applied", 10s, [&] { return follower.applied_version() == 1; }),
            absl::OkStatus());
  follower.Stop();
}

TEST_F(InventoryReplicaTest, OnlyTheLeaderPublishesAndTheFirstSeedsOnce) {
  InventoryReplica replica(*client_, "test/inventory", "", nullptr);
  ASSERT_TRUE(replica.SeedIfFirst(leader_, Small("iad"), "seeded from pc1").ok());
  ASSERT_TRUE(replica.SeedIfFirst(leader_, Small("ord"), "seeded from pc2").ok());  // seeded already: no change
  auto current = replica.Fetch();
  ASSERT_TRUE(current.ok() && current->has_value());
  EXPECT_EQ((*current)->inventory.facilities(0).id(), "iad");

  LeaderKey deposed = leader_;
  ASSERT_TRUE(client_->Resign(leader_).ok());
  bool applied = false;
  auto refused = replica.Publish(deposed, Small("sfo"), "late write of a deposed leader", [&] {
    applied = true;
    return absl::OkStatus();
  });
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_FALSE(applied) << "nothing is applied when etcd refused the release";
  current = replica.Fetch();
  ASSERT_TRUE(current.ok() && current->has_value());
  EXPECT_EQ((*current)->header.version(), 1u);
  EXPECT_EQ((*current)->inventory.facilities(0).id(), "iad");
}

TEST_F(InventoryReplicaTest, TheAuditLogIsOneHistory) {
  EtcdAuditLog log(*client_, "test/audit/", 10'000);
  for (const char* action : {"add intent", "delete intent", "import topology"}) {
    v1::AuditRecord record;
    record.set_action(action);
    ASSERT_TRUE(log.Append(leader_, record).ok());
  }
  // Another replica's view of it: the same records, the same numbering.
  EtcdAuditLog elsewhere(*client_, "test/audit/", 10'000);
  auto newest = elsewhere.List({});
  ASSERT_TRUE(newest.ok()) << newest.status();
  EXPECT_EQ(newest->last_seq(), 3u);
  ASSERT_EQ(newest->records_size(), 3);
  EXPECT_EQ(newest->records(0).seq(), 1u);
  EXPECT_EQ(newest->records(2).action(), "import topology");
  v1::ListAuditLogRequest page;
  page.set_from_seq(2);
  page.set_limit(1);
  auto second = elsewhere.List(page);
  ASSERT_TRUE(second.ok());
  ASSERT_EQ(second->records_size(), 1);
  EXPECT_EQ(second->records(0).action(), "delete intent");
  v1::ListAuditLogRequest too_many;
  too_many.set_limit(10'001);
  EXPECT_EQ(elsewhere.List(too_many).status().code(), absl::StatusCode::kInvalidArgument);

  ASSERT_TRUE(client_->Resign(leader_).ok());
  EXPECT_EQ(log.Append(leader_, v1::AuditRecord()).status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(elsewhere.List({})->last_seq(), 3u);
}

}  // namespace
}  // namespace geodesic::pathcomp
