// A real pathcomp keeps its journal within its retention (journal.max_mb):
// imports of Cogentco are megabytes of journal; with a 1 MB bound checked
// every second, the entries up to the first are dropped, and the model
// keeps everything they did.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "geodesic/v1/operator.grpc.pb.h"
#include "sim/lab_client.h"
#include "sim/local_lab.h"
#include "sim/wait_until.h"
#include "tests/support/lab_testing.h"
#include "tests/support/test_dirs.h"
#include "sim/process.h"

namespace geodesic {
namespace {

using std::chrono::seconds;

class JournalRetentionTest : public ::testing::Test {
 protected:
  void TearDown() override {
    lab_.reset();
    if (HasFailure()) work_.keep();
  }

  // The oldest seq the journal keeps (as the response says, and as its
  // first entry from seq 1 is) and the newest, over gRPC.
  struct Ends {
    uint64_t first = 0, first_listed = 0, last = 0;
  };
  absl::StatusOr<Ends> JournalEnds() {
    auto stub = lab_->OperatorClient("viewer");
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + seconds(5));
    v1::ListJournalRequest request;
    request.set_from_seq(1);
    request.set_limit(1);
    v1::ListJournalResponse response;
    const grpc::Status status = stub->ListJournal(&context, request, &response);
    if (!status.ok()) return absl::UnavailableError(status.error_message());
    if (response.entries_size() == 0) return absl::NotFoundError("no journal entries");
    return Ends{.first = response.first_seq(), .first_listed = response.entries(0).seq(), .last = response.last_seq()};
  }

  testing::TempDir work_{"journal-retention"};
  std::unique_ptr<sim::LocalLab> lab_;
};

TEST_F(JournalRetentionTest, PathcompDropsTheEntriesBeyondItsBound) {
  sim::LabOptions options = testing::LabOptionsFor(work_.path());
  options.pathcomp_extra_config = "journal: {max_age_hours: 168, max_mb: 1, check_interval_s: 1}\n";
  auto lab = sim::LocalLab::Create(options);
  ASSERT_TRUE(lab.ok()) << lab.status();
  lab_ = *std::move(lab);
  ASSERT_TRUE(lab_->StartPathcomp().ok());  // the controller alone: the backbone's journal is kilobytes
  absl::StatusOr<Ends> before = JournalEnds();
  ASSERT_TRUE(before.ok()) << before.status();
  EXPECT_EQ(before->first, 1u) << "nothing to drop yet";
  EXPECT_EQ(before->first_listed, 1u);

  // Cogentco with its 37,805 demands, the backbone again (every one of them
  // deleted), Cogentco again: megabytes of journal even as RocksDB
  // compresses it (one such entry alone is about 1 MB in its files).
  const tls::TlsFiles admin = lab_->operator_tls("admin");
  auto import = [&](const std::string& path) -> uint64_t {
    auto imported = sim::RunCommand({testing::BinaryDir() + "/bin/tectl", "import", path, "--replace-workloads",
                                     "--server", lab_->pathcomp_address(), "--ca", admin.ca_path, "--cert",
                                     admin.cert_path, "--key", admin.key_path});
    EXPECT_TRUE(imported.ok()) << imported.status();
    if (!imported.ok()) return 0;
    EXPECT_EQ(imported->exit_code, 0) << imported->output;
    const size_t at = imported->output.find("journal seq ");
    EXPECT_NE(at, std::string::npos) << imported->output;
    return at == std::string::npos ? 0 : std::stoull(imported->output.substr(at + 12));
  };
  const std::string cogentco = testing::SourceDir() + "/../shared/data/repetita/Cogentco.graph";
  const uint64_t import_seq = import(cogentco);
  ASSERT_GT(import_seq, 0u);
  ASSERT_GT(import(testing::Backbone()), import_seq);
  ASSERT_GT(import(cogentco), import_seq);

  Ends ends;
  const absl::Status trimmed = sim::WaitUntil("pathcomp to drop the first import's journal entry", seconds(30), [&] {
    absl::StatusOr<Ends> now = JournalEnds();
    if (!now.ok()) return false;
    ends = *now;
    return ends.first > import_seq;
  });
  ASSERT_TRUE(trimmed.ok()) << trimmed << " (journal seqs " << ends.first << ".." << ends.last << ", import "
                            << import_seq << ")";
  EXPECT_LE(ends.first, ends.last) << "the newest entry stays";
  EXPECT_EQ(ends.first_listed, ends.first) << "entries from seq 1 start at the oldest kept";
  // What the dropped entries did stays: Cogentco's inventory and a plan on it.
  sim::LabClient client(*lab_);
  auto links = client.Links();
  ASSERT_TRUE(links.ok()) << links.status();
  EXPECT_EQ(links->size(), 490u);
  const absl::Status planned = sim::WaitUntil("a plan of Cogentco's 197 sites", seconds(30), [&] {
    auto plan = client.Plan();
    return plan.ok() && plan->plan().sites_size() == 197;
  });
  EXPECT_TRUE(planned.ok()) << planned;
}

}  // namespace
}  // namespace geodesic
