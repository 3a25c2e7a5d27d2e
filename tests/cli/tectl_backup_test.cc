// tectl backup against a real pathcomp on loopback (mTLS, the lab's PKI),
// then tectl restore offline: back up, change, stop pathcomp, restore, and
// the store holds what the backup held; pathcomp starts again on it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "geodesic/v1/backup.pb.h"
#include "geodesic/v1/operator.pb.h"
#include "state/backup/backup_dir.h"
#include "tests/cli/tectl_testing.h"
#include "tests/support/lab_testing.h"

namespace geodesic::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;
using namespace ::geodesic::cli::tectl_testing;  // NOLINT: test helpers
namespace fs = std::filesystem;

class TectlBackupTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto lab = sim::LocalLab::Create(testing::LabOptionsFor(work_.path()));
    ASSERT_TRUE(lab.ok()) << lab.status();
    lab_ = *std::move(lab);
    ASSERT_TRUE(lab_->StartPathcomp().ok());  // no agents: nothing changes but what the test does
  }
  void TearDown() override {
    lab_.reset();
    if (HasFailure()) work_.keep();  // with pathcomp's log
  }

  TectlRun Online(std::vector<std::string> args, const std::string& operator_name = "admin") {
    const tls::TlsFiles tls = lab_->operator_tls(operator_name);
    std::vector<std::string> argv = {"--server", lab_->pathcomp_address(), "--ca", tls.ca_path,
                                     "--cert",   tls.cert_path,            "--key", tls.key_path};
    argv.insert(argv.end(), args.begin(), args.end());
    return Tectl(argv);
  }
  // What `tectl get KIND -o json` prints, online or from a store.
  std::string Get(const std::string& kind, const std::string& store = "") {
    TectlRun run = store.empty() ? Online({"get", kind, "-o", "json"}) : Tectl({"--store", store, "get", kind, "-o", "json"});
    EXPECT_EQ(run.exit_code, 0) << run;
    return run.out;
  }
  std::string StateDir() const { return lab_->work_dir() + "/state/pathcomp"; }

  TempDir work_{"tectl-backup"};
  std::unique_ptr<sim::LocalLab> lab_;
};

TEST_F(TectlBackupTest, BacksUpOnlineAndRestoresOffline) {
  TectlRun run = Online({"workload", "add", "sync-chi-sjc", "--src", "chi", "--to", "10.6.0.0/16", "--gbps", "50"});
  ASSERT_EQ(run.exit_code, 0) << run;
  run = Online({"override", "iad-nyc", "--metric", "40"});
  ASSERT_EQ(run.exit_code, 0) << run;
  const std::vector<std::string> kinds = {"facilities", "links", "workloads", "intents", "services"};
  std::vector<std::string> backed_up;
  for (const std::string& kind : kinds) backed_up.push_back(Get(kind));

  // A checkpoint left by a pathcomp that died mid-backup goes with the next backup.
  const std::string checkpoints = StateDir() + "/checkpoints";
  fs::create_directories(checkpoints + "/checkpoint-1");
  std::ofstream(checkpoints + "/checkpoint-1/000001.sst") << "stale";

  const std::string backup = work_.Join("backup");
  run = Online({"backup", backup});
  ASSERT_EQ(run.exit_code, 0) << run;
  EXPECT_THAT(run.out, StartsWith("backed up pathcomp pc1 at journal seq "));
  auto manifest = state::backup::VerifyBackup(backup);
  ASSERT_TRUE(manifest.ok()) << manifest.status();
  EXPECT_EQ(manifest->pathcomp_replica(), "pc1");
  EXPECT_EQ(manifest->requested_by(), "spiffe://geodesic/operator/admin");
  EXPECT_GT(manifest->last_journal_seq(), 0u);
  EXPECT_TRUE(fs::is_empty(checkpoints)) << "a checkpoint outlived the backup";

  // Only an admin; never into a directory that holds anything.
  for (const std::string name : {"viewer", "ops"}) {  // roles viewer and operator
    run = Online({"backup", work_.Join("by-" + name)}, name);
    EXPECT_EQ(run.exit_code, 1) << run;
    EXPECT_THAT(run.err, HasSubstr("PERMISSION_DENIED"));
    EXPECT_THAT(run.err, HasSubstr("a backup needs admin"));
    EXPECT_FALSE(fs::exists(work_.Join("by-" + name)));
  }
  run = Online({"backup", backup});
  EXPECT_EQ(run.exit_code, 1) << run;
  EXPECT_THAT(run.err, HasSubstr("not empty"));
  EXPECT_TRUE(state::backup::VerifyBackup(backup).ok());
  run = Online({"audit-log", "-o", "json"});
  ASSERT_EQ(run.exit_code, 0) << run;
  EXPECT_THAT(run.out, HasSubstr("\"action\": \"backup\""));
  EXPECT_THAT(run.out, HasSubstr("a backup needs admin"));  // the refusals too

  // The model moves on after the backup.
  run = Online({"workload", "add", "later", "--src", "iad", "--to", "10.7.0.0/16", "--gbps", "10"});
  ASSERT_EQ(run.exit_code, 0) << run;
  ASSERT_NE(Get("workloads"), backed_up[2]);

  // Not while pathcomp has the store open; not over a store without --force.
  run = Tectl({"--store", StateDir(), "restore", "--from", backup, "--force"});
  EXPECT_EQ(run.exit_code, 1) << run;
  EXPECT_THAT(run.err, HasSubstr("is open"));
  lab_->Kill("pathcomp", SIGTERM);
  run = Tectl({"--store", StateDir(), "restore", "--from", backup});
  EXPECT_EQ(run.exit_code, 1) << run;
  EXPECT_THAT(run.err, HasSubstr("--force"));
  EXPECT_NE(Get("workloads", StateDir()), backed_up[2]);  // unchanged by the refusal

  run = Tectl({"--store", StateDir(), "restore", "--from", backup, "--force"});
  ASSERT_EQ(run.exit_code, 0) << run;
  EXPECT_THAT(run.out, HasSubstr("(replaced)"));
  for (size_t i = 0; i < kinds.size(); ++i) EXPECT_EQ(Get(kinds[i], StateDir()), backed_up[i]) << kinds[i];
  run = Tectl({"--store", StateDir(), "journal", "-o", "json"});
  ASSERT_EQ(run.exit_code, 0) << run;
  EXPECT_EQ(ParseJson<v1::ListJournalResponse>(run.out).last_seq(), manifest->last_journal_seq());

  // pathcomp opens the restored store the normal way and serves what it holds.
  ASSERT_TRUE(lab_->Restart("pathcomp").ok());
  EXPECT_EQ(Get("workloads"), backed_up[2]);
  EXPECT_EQ(Get("intents"), backed_up[3]);
}

TEST_F(TectlBackupTest, RefusesBadUsageAndTamperedBackups) {
  // A missing parent, an existing file.
  TectlRun run = Online({"backup", work_.Join("no/such/dir")});
  EXPECT_EQ(run.exit_code, 1) << run;
  EXPECT_THAT(run.err, HasSubstr("not a directory"));
  const std::string file = work_.Write("a-file", "x");
  run = Online({"backup", file});
  EXPECT_EQ(run.exit_code, 1) << run;
  run = Tectl({"restore", "--from", work_.path()});
  EXPECT_EQ(run.exit_code, 2) << run;  // --store is required

  const std::string backup = work_.Join("backup");
  run = Online({"backup", backup});
  ASSERT_EQ(run.exit_code, 0) << run;
  auto manifest = state::backup::VerifyBackup(backup);
  ASSERT_TRUE(manifest.ok()) << manifest.status();
  {
    std::ofstream(backup + "/store/" + manifest->files(0).path(), std::ios::app) << "tampered";
  }
  const std::string store = work_.Join("restored");
  run = Tectl({"--store", store, "restore", "--from", backup});
  EXPECT_EQ(run.exit_code, 1) << run;
  EXPECT_THAT(run.err, HasSubstr("the manifest says"));
  EXPECT_FALSE(fs::exists(store));
  run = Tectl({"--store", store, "restore", "--from", work_.path()});  // not a backup
  EXPECT_EQ(run.exit_code, 1) << run;
  EXPECT_THAT(run.err, HasSubstr("geodesic-backup.json"));
  EXPECT_FALSE(fs::exists(store));
}

}  // namespace
}  // namespace geodesic::cli
