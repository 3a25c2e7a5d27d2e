// Leader election of pathcomp replicas against a real three-member etcd
// cluster on loopback: one leader at a time, epochs that only grow, a leader
// that loses its lease stops leading by its own clock, fenced writes, and
// what losing one or two etcd members does.
#include "pathcomp/replication/leader_election.h"

#include <gtest/gtest.h>

#include <signal.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <sstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "sim/etcd_cluster.h"
#include "sim/make_pki.h"
#include "sim/wait_until.h"
#include "tests/support/test_dirs.h"
#include "tls/credentials.h"

namespace geodesic::pathcomp {
namespace {

using namespace std::chrono_literals;
using sim::WaitUntil;

class LeaderElectionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto status = sim::EtcdAvailable(); !status.ok()) GTEST_SKIP() << status;
    auto cluster = sim::EtcdCluster::Start(dir_.path(), 3);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    etcd_ = *std::move(cluster);
  }
  void TearDown() override {
    candidates_.clear();
    etcd_.reset();
    if (HasFailure()) dir_.keep();
  }

  struct Candidate {
    std::unique_ptr<EtcdClient> client;
    std::unique_ptr<LeaderElection> election;
    std::atomic<int> elected{0}, lost{0};
  };

  Candidate& AddCandidate(const std::string& name, std::chrono::seconds ttl = 2s) {
    auto candidate = std::make_unique<Candidate>();
    auto client = EtcdClient::Create({.endpoints = etcd_->endpoints(), .credentials = nullptr, .call_timeout = 1000ms});
    EXPECT_TRUE(client.ok()) << client.status();
    candidate->client = *std::move(client);
    Candidate* raw = candidate.get();
    candidate->election = std::make_unique<LeaderElection>(
        *candidate->client, ElectionOptions{.election = "test/leader", .candidate = name, .lease_ttl = ttl},
        [raw](std::optional<uint64_t> epoch) { ++(epoch ? raw->elected : raw->lost); });
    candidate->election->Start();
    candidates_.push_back(std::move(candidate));
    return *candidates_.back();
  }

  static bool Leads(const Candidate& candidate) { return candidate.election->LeadingEpoch().has_value(); }

  // Whether etcd holds a campaign key of `name` in the election: the
  // candidate has campaigned and waits in etcd's queue (or leads).
  bool Campaigning(const std::string& name) {
    auto range = candidates_.front()->client->RangePrefix("test/leader/");
    if (!range.ok()) return false;
    return std::any_of(range->kvs.begin(), range->kvs.end(), [&](const auto& kv) { return kv.value() == name; });
  }

  testing::TempDir dir_{"election"};
  std::unique_ptr<sim::EtcdCluster> etcd_;
  std::vector<std::unique_ptr<Candidate>> candidates_;
};

TEST_F(LeaderElectionTest, OneLeaderAtATimeAndEpochsGrow) {
  Candidate& a = AddCandidate("pc1 127.0.0.1:1001");
  ASSERT_EQ(WaitUntil("pc1 to lead", 10s, [&] { return Leads(a); }), absl::OkStatus());
  Candidate& b = AddCandidate("pc2 127.0.0.1:1002");
  // Once etcd queued b's campaign behind a's key, b cannot lead while a does.
  ASSERT_EQ(WaitUntil("pc2's campaign in etcd", 10s, [&] { return Campaigning("pc2 127.0.0.1:1002"); }),
            absl::OkStatus());
  EXPECT_FALSE(Leads(b));
  EXPECT_EQ(b.election->CurrentLeader(), "pc1 127.0.0.1:1001");
  const uint64_t first = *a.election->LeadingEpoch();

  // The leader resigns (orderly stop): the other takes over at once, with a higher epoch.
  a.election->Stop();
  EXPECT_EQ(a.lost.load(), 1);
  ASSERT_EQ(WaitUntil("pc2 to lead", 5s, [&] { return Leads(b); }), absl::OkStatus());
  EXPECT_GT(*b.election->LeadingEpoch(), first);
  EXPECT_EQ(b.election->CurrentLeader(), "pc2 127.0.0.1:1002");
}

TEST_F(LeaderElectionTest, ALeaderWhoseLeaseIsGoneStepsDownAndWritesAreFenced) {
  Candidate& a = AddCandidate("pc1");
  ASSERT_EQ(WaitUntil("pc1 to lead", 10s, [&] { return Leads(a); }), absl::OkStatus());
  Candidate& b = AddCandidate("pc2");
  const LeaderKey a_key = *a.election->leader_key();
  ASSERT_TRUE(a.client->PutIfLeader(a_key, "test/intents/x", "drain").ok());

  // The lease disappears behind the leader's back (as if etcd had expired it
  // while the leader was paused): it steps down, the other leads.
  ASSERT_TRUE(etcd_->Etcdctl({"lease", "revoke", absl::StrCat(absl::Hex(a_key.lease))}).ok());
  ASSERT_EQ(WaitUntil("pc2 to lead", 10s, [&] { return Leads(b); }), absl::OkStatus());
  EXPECT_EQ(WaitUntil("pc1 to step down", 5s, [&] { return !Leads(a) && a.lost.load() == 1; }), absl::OkStatus());
  // Its writes under the old epoch are refused; the new leader's go through.
  EXPECT_EQ(a.client->PutIfLeader(a_key, "test/intents/x", "stale").code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(b.client->PutIfLeader(*b.election->leader_key(), "test/intents/x", "undrain").ok());
  EXPECT_EQ(**b.client->Get("test/intents/x"), "undrain");
  // The old leader campaigns again (its revoked lease took its old key with
  // it), queued behind the new leader: a follower now.
  EXPECT_EQ(WaitUntil("pc1's new campaign in etcd", 10s, [&] { return Campaigning("pc1"); }), absl::OkStatus());
  EXPECT_FALSE(Leads(a));
  EXPECT_TRUE(Leads(b));
}

TEST_F(LeaderElectionTest, LosingOneEtcdMemberChangesNothingLosingTwoStopsTheLeader) {
  Candidate& a = AddCandidate("pc1", 2s);
  ASSERT_EQ(WaitUntil("pc1 to lead", 10s, [&] { return Leads(a); }), absl::OkStatus());
  const uint64_t epoch = *a.election->LeadingEpoch();
  etcd_->Kill(0, SIGKILL);
  std::this_thread::sleep_for(3s);  // the thing tested: still leading after longer than the 2 s lease
  EXPECT_EQ(a.election->LeadingEpoch(), epoch);
  EXPECT_EQ(a.lost.load(), 0);

  // No quorum: keep-alives fail, the leader stops leading within its TTL.
  etcd_->Kill(1, SIGKILL);
  EXPECT_EQ(WaitUntil("pc1 to stop leading within its lease", 4s, [&] { return !Leads(a); }), absl::OkStatus());
  // Quorum returns: someone leads again, with a higher epoch.
  ASSERT_TRUE(etcd_->Restart(0).ok());
  ASSERT_TRUE(etcd_->Restart(1).ok());
  ASSERT_EQ(WaitUntil("pc1 to lead again", 30s, [&] { return Leads(a); }), absl::OkStatus());
  EXPECT_GE(*a.election->LeadingEpoch(), epoch);
}

// etcd over mutual TLS with the project's PKI: a replica's certificate gets
// in, a client without one does not.
TEST(EtcdTlsTest, MembersRequireACertificateOfTheProjectCa) {
  if (auto status = sim::EtcdAvailable(); !status.ok()) GTEST_SKIP() << status;
  testing::TempDir dir("etcd-tls");
  const std::string pki = dir.Join("pki");
  const absl::Status made = sim::RunMakePki(pki, {"--etcd", "etcd1,etcd2,etcd3", "--replicas", "pc1"});
  ASSERT_TRUE(made.ok()) << made;
  auto cluster = sim::EtcdCluster::Start(dir.Join("etcd"), 3, pki);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  const tls::TlsFiles replica{.ca_path = pki + "/ca.crt", .cert_path = pki + "/pathcomp-pc1.crt",
                              .key_path = pki + "/pathcomp-pc1.key"};
  auto with_certificate = EtcdClient::Create(
      {.endpoints = (*cluster)->endpoints(),
       .credentials = tls::MakeChannelCredentials(replica, tls::Identity::Kind::kEtcd), .call_timeout = 2000ms});
  ASSERT_TRUE(with_certificate.ok());
  EXPECT_TRUE((*with_certificate)->GrantLease(5s).ok());
  // Members are checked by identity: expecting another kind fails.
  auto wrong_kind = EtcdClient::Create(
      {.endpoints = (*cluster)->endpoints(),
       .credentials = tls::MakeChannelCredentials(replica, tls::Identity::Kind::kPathcomp), .call_timeout = 2000ms});
  EXPECT_FALSE((*wrong_kind)->GrantLease(5s).ok());
  std::ifstream ca(pki + "/ca.crt");
  std::stringstream ca_text;
  ca_text << ca.rdbuf();
  grpc::SslCredentialsOptions anonymous;  // trusts the CA, shows no certificate
  anonymous.pem_root_certs = ca_text.str();
  auto without = EtcdClient::Create({.endpoints = (*cluster)->endpoints(), .credentials = grpc::SslCredentials(anonymous),
                                     .call_timeout = 2000ms});
  EXPECT_FALSE((*without)->GrantLease(5s).ok());
  auto plaintext = EtcdClient::Create({.endpoints = (*cluster)->endpoints(), .credentials = nullptr,
                                       .call_timeout = 2000ms});
  EXPECT_FALSE((*plaintext)->GrantLease(5s).ok());
  cluster->reset();
  if (::testing::Test::HasFailure()) dir.keep();
}

}  // namespace
}  // namespace geodesic::pathcomp
