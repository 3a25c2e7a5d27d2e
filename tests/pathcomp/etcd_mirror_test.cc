// The etcd mirror against a real one-member etcd on loopback: the model holds
// what etcd holds, and a model changed behind etcd's back (a rollback that
// failed after etcd refused a write) is brought back by Resync.
#include "pathcomp/replication/etcd_mirror.h"

#include <gtest/gtest.h>

#include <map>
#include <mutex>

#include "sim/etcd_cluster.h"
#include "sim/wait_until.h"
#include "tests/support/test_dirs.h"

namespace geodesic::pathcomp {
namespace {

using namespace std::chrono_literals;

// The model side: entries are their own id ("" does not parse).
class FakeModel {
 public:
  EtcdMirror::Model Access() {
    return {.list = [this] {
              std::lock_guard lock(mu_);
              return entries_;
            },
            .get = [this](const std::string& id) -> std::optional<std::string> {
              std::lock_guard lock(mu_);
              auto it = entries_.find(id);
              return it == entries_.end() ? std::nullopt : std::optional<std::string>(it->second);
            },
            .apply = [this](const std::vector<std::string>& put, const std::vector<std::string>& remove) {
              std::lock_guard lock(mu_);
              for (const std::string& id : remove) entries_.erase(id);
              for (const std::string& bytes : put) entries_[bytes] = bytes;
              return EntryRefusals();
            },
            .id_of = [](const std::string& bytes) { return bytes; }};
  }
  // What a rollback that failed leaves: the model changed, etcd not.
  void DivergeBehindEtcdsBack(const std::string& add, const std::string& remove) {
    std::lock_guard lock(mu_);
    entries_[add] = add;
    entries_.erase(remove);
  }
  std::map<std::string, std::string> entries() {
    std::lock_guard lock(mu_);
    return entries_;
  }

 private:
  std::mutex mu_;
  std::map<std::string, std::string> entries_;
};

class EtcdMirrorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto status = sim::EtcdAvailable(); !status.ok()) GTEST_SKIP() << status;
    auto cluster = sim::EtcdCluster::Start(dir_.path(), 1);
    ASSERT_TRUE(cluster.ok()) << cluster.status();
    etcd_ = *std::move(cluster);
    auto client = EtcdClient::Create({.endpoints = etcd_->endpoints(), .credentials = nullptr, .call_timeout = 1000ms});
    ASSERT_TRUE(client.ok()) << client.status();
    client_ = *std::move(client);
  }
  void TearDown() override {
    client_.reset();
    etcd_.reset();
    if (HasFailure()) dir_.keep();
  }

  void Put(const std::string& key, const std::string& value) {
    auto put = etcd_->Etcdctl({"put", key, value});
    ASSERT_TRUE(put.ok()) << put.status();
  }

  testing::TempDir dir_{"mirror"};
  std::unique_ptr<sim::EtcdCluster> etcd_;
  std::unique_ptr<EtcdClient> client_;
};

TEST_F(EtcdMirrorTest, ResyncUndoesAModelChangedBehindEtcdsBack) {
  Put("test/intents/drain-a", "drain-a");
  Put("test/intents.seeded", "1");
  FakeModel model;
  EtcdMirror mirror(*client_, "test/intents/", model.Access(), nullptr);
  mirror.Start();
  const std::map<std::string, std::string> in_etcd = {{"drain-a", "drain-a"}};
  ASSERT_EQ(sim::WaitUntil("the mirror to hold etcd's entries", 10s, [&] { return model.entries() == in_etcd; }),
            absl::OkStatus());

  model.DivergeBehindEtcdsBack(/*add=*/"pin-b", /*remove=*/"drain-a");
  mirror.Resync();
  EXPECT_EQ(sim::WaitUntil("Resync to drop pin-b and bring back drain-a", 10s,
                           [&] { return model.entries() == in_etcd; }),
            absl::OkStatus());

  // The watch runs again afterwards: a change in etcd still reaches the model.
  Put("test/intents/drain-c", "drain-c");
  EXPECT_EQ(sim::WaitUntil("drain-c to reach the model", 10s, [&] { return model.entries().contains("drain-c"); }),
            absl::OkStatus());
  mirror.Stop();
}

}  // namespace
}  // namespace geodesic::pathcomp
