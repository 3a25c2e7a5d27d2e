// Crash safety of RocksStore: a writer process commits a stream of batches as
// fast as it can and is SIGKILLed mid-stream, round after round, each round a
// new writer continuing the stream. After every kill the store on disk must
// hold whole commits only (every entity agrees on one batch), every commit the
// writer saw acknowledged, a gapless journal ending at that batch, and a journal
// whose replay rebuilds the store byte for byte.
//
// The writer is this binary re-executed with --crash-writer (see main() at the
// bottom): a fresh process rather than a bare fork, because a fork of a process
// that has opened a RocksDB inherits RocksDB's background thread pool without
// its threads, and would never flush.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "geodesic/v1/model.pb.h"
#include "state/change_set.h"
#include "state/memory_store.h"
#include "state/replay.h"
#include "state/rocks_store.h"
#include "state/store.h"
#include "tests/support/test_dirs.h"

namespace geodesic::state {
namespace {

using ::geodesic::testing::TempDir;

constexpr char kWriterFlag[] = "--crash-writer";

// What one batch writes, all in one ChangeSet: kLinksPerBatch links whose
// health carries the batch number, a marker node for the batch (and the delete
// of the previous batch's marker), and the meta entry naming the batch.
constexpr int kLinksPerBatch = 24;
constexpr char kStreamMetaId[] = "crash-stream";

std::string LinkId(int index) { return absl::StrCat("iad-ord-", index); }
std::string MarkerId(uint64_t batch) { return absl::StrCat("marker-", batch); }
std::string Cause(uint64_t batch) { return absl::StrCat("batch ", batch); }

// A realistic link; its health was measured "at" the batch number, so every
// link names the batch that wrote it.
v1::Link BatchLink(int index, uint64_t batch) {
  v1::Link link;
  link.set_id(LinkId(index));
  link.set_src_node_id(absl::StrCat("iad-br", index % 4));
  link.set_dst_node_id(absl::StrCat("ord-br", index % 4));
  link.set_src_facility_id("iad");
  link.set_dst_facility_id("ord");
  link.set_capacity_gbps(400);
  link.set_igp_metric(10 + index);
  link.set_latency_us(8500);
  link.add_srlgs(absl::StrCat("conduit-iad-ord-", index % 3));
  link.add_srlgs("conduit-iad-metro");
  link.set_admin_state(v1::ADMIN_STATE_UP);
  v1::LinkHealth& health = *link.mutable_health();
  health.set_state(batch % 7 == 0 ? v1::OPER_STATE_DEGRADED : v1::OPER_STATE_UP);
  health.set_rtt_us(17000 + (batch * 31 + index) % 500);
  health.set_jitter_us(40 + batch % 13);
  health.set_loss_ratio(static_cast<double>(batch % 5) / 1000);
  health.set_utilization_ratio(static_cast<double>((batch + index) % 100) / 100);
  health.set_measured_at_unix_ms(static_cast<int64_t>(batch));
  return link;
}

v1::Node MarkerNode(uint64_t batch) {
  v1::Node node;
  node.set_id(MarkerId(batch));
  node.set_facility_id("iad");
  node.set_role(v1::NODE_ROLE_BACKBONE_ROUTER);
  return node;
}

ChangeSet BatchChanges(uint64_t batch) {
  ChangeSet changes(Cause(batch));
  for (int i = 0; i < kLinksPerBatch; ++i) changes.Put(Kind::kLink, LinkId(i), BatchLink(i, batch));
  changes.Put(Kind::kNode, MarkerId(batch), MarkerNode(batch));
  if (batch > 1) changes.Delete(Kind::kNode, MarkerId(batch - 1));
  changes.PutRaw(Kind::kMeta, kStreamMetaId, absl::StrCat(batch));
  return changes;
}

// The batch the meta entry names; 0 when there is none yet.
absl::StatusOr<uint64_t> StoredBatch(const Store& store) {
  absl::StatusOr<std::string> meta = store.GetRaw(Kind::kMeta, kStreamMetaId);
  if (absl::IsNotFound(meta.status())) return 0;
  if (!meta.ok()) return meta.status();
  uint64_t batch = 0;
  if (!absl::SimpleAtoi(*meta, &batch)) return absl::DataLossError(absl::StrCat("meta entry \"", *meta, "\""));
  return batch;
}

// The writer process: continues the stream from the batch the store holds and
// commits batches until killed, writing each committed batch number (a native
// uint64_t, atomically: less than PIPE_BUF) to `progress_fd` once Commit
// returned. Returns (exits) only on an error, which it prints.
int RunWriter(const std::string& dir, bool sync_writes, int progress_fd) {
  RocksStoreOptions opts;
  opts.sync_writes = sync_writes;
  absl::StatusOr<StorePtr> store = OpenRocksStore(dir, opts);
  if (!store.ok()) {
    fprintf(stderr, "crash writer: %s\n", store.status().ToString().c_str());
    return 2;
  }
  absl::StatusOr<uint64_t> last = StoredBatch(**store);
  if (!last.ok() || *last != (*store)->LastJournalSeq()) {
    fprintf(stderr, "crash writer: store holds batch %s but its journal ends at seq %llu\n",
            last.ok() ? absl::StrCat(*last).c_str() : last.status().ToString().c_str(),
            static_cast<unsigned long long>((*store)->LastJournalSeq()));
    return 3;
  }
  for (uint64_t batch = *last + 1;; ++batch) {
    // Every other batch as telemetry commits it: written unsynced, then
    // synced before it is acknowledged.
    const bool deferred = batch % 2 == 0;
    absl::StatusOr<uint64_t> seq =
        deferred ? (*store)->CommitUnsynced(BatchChanges(batch)) : (*store)->Commit(BatchChanges(batch));
    if (seq.ok() && deferred) {
      if (absl::Status synced = (*store)->Sync(); !synced.ok()) seq = synced;
    }
    if (!seq.ok() || *seq != batch) {
      fprintf(stderr, "crash writer: commit of batch %llu: %s\n", static_cast<unsigned long long>(batch),
              seq.ok() ? absl::StrCat("got seq ", *seq).c_str() : seq.status().ToString().c_str());
      return 4;
    }
    ssize_t written;
    do {
      written = write(progress_fd, &batch, sizeof(batch));
    } while (written < 0 && errno == EINTR);
    if (written != static_cast<ssize_t>(sizeof(batch))) {
      fprintf(stderr, "crash writer: progress pipe: %s\n", strerror(errno));
      return 5;
    }
  }
}

// The parent's handle on one writer process. Killed (SIGKILL) when destroyed,
// and by the kernel when the test process dies (PR_SET_PDEATHSIG).
class WriterProcess {
 public:
  WriterProcess(const std::string& dir, bool sync_writes) {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) {
      ADD_FAILURE() << "pipe2: " << strerror(errno);
      return;
    }
    progress_fd_ = fds[0];
    // Everything the child needs is built before fork: after it, only
    // async-signal-safe calls until exec.
    const std::string fd_arg = absl::StrCat(fds[1]);
    const std::string sync_arg = sync_writes ? "1" : "0";
    char exe[] = "/proc/self/exe";
    std::vector<char*> argv = {exe, const_cast<char*>(kWriterFlag), const_cast<char*>(dir.c_str()),
                               const_cast<char*>(sync_arg.c_str()), const_cast<char*>(fd_arg.c_str()), nullptr};
    pid_ = fork();
    if (pid_ == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      fcntl(fds[1], F_SETFD, 0);  // the write end survives exec
      execv(argv[0], argv.data());
      _exit(127);
    }
    close(fds[1]);
    if (pid_ < 0) ADD_FAILURE() << "fork: " << strerror(errno);
  }

  ~WriterProcess() {
    if (pid_ > 0) KillAndReap();
    if (progress_fd_ >= 0) close(progress_fd_);
  }

  WriterProcess(const WriterProcess&) = delete;
  WriterProcess& operator=(const WriterProcess&) = delete;

  // Reads progress until the writer reported `count` commits or `timeout` passed.
  // False on timeout or when the writer exited.
  bool WaitForCommits(uint64_t count, std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (commits_ < count) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0 || !ReadProgress(static_cast<int>(left.count()))) return false;
    }
    return true;
  }

  // SIGKILLs the writer, waits for it, and reads the progress it wrote before
  // dying. Returns its wait status.
  int KillAndReap() {
    int status = 0;
    if (pid_ <= 0) return status;  // never kill(-1, ...): that is every process we may signal
    kill(pid_, SIGKILL);
    while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
    while (ReadProgress(-1)) {
    }
    return status;
  }

  // The last batch the writer reported committed; 0 when none.
  uint64_t last_acked_batch() const { return last_acked_batch_; }
  uint64_t commits() const { return commits_; }

 private:
  // Waits up to `timeout_ms` (-1: forever) for progress and reads what is there.
  // False at end of file (the writer is gone) or on an error.
  bool ReadProgress(int timeout_ms) {
    pollfd pfd = {progress_fd_, POLLIN, 0};
    const int ready = poll(&pfd, 1, timeout_ms);
    if (ready < 0) return errno == EINTR;
    if (ready == 0) return true;
    char buffer[4096];
    const ssize_t n = read(progress_fd_, buffer, sizeof(buffer));
    if (n < 0) return errno == EINTR;
    if (n == 0) return false;
    pending_.append(buffer, static_cast<size_t>(n));
    size_t offset = 0;
    for (; pending_.size() - offset >= sizeof(uint64_t); offset += sizeof(uint64_t)) {
      memcpy(&last_acked_batch_, pending_.data() + offset, sizeof(uint64_t));
      ++commits_;
    }
    pending_.erase(0, offset);
    return true;
  }

  pid_t pid_ = -1;
  int progress_fd_ = -1;
  std::string pending_;  // a partial record, if a read split one
  uint64_t last_acked_batch_ = 0;
  uint64_t commits_ = 0;
};

using Entities = std::vector<std::pair<std::string, std::string>>;

// Where two listings first differ, for a readable failure.
std::string FirstDifference(const Entities& expected, const Entities& actual) {
  for (size_t i = 0; i < std::max(expected.size(), actual.size()); ++i) {
    if (i >= expected.size()) return absl::StrCat("unexpected extra id \"", actual[i].first, "\"");
    if (i >= actual.size()) return absl::StrCat("missing id \"", expected[i].first, "\"");
    if (expected[i].first != actual[i].first) {
      return absl::StrCat("expected id \"", expected[i].first, "\", found \"", actual[i].first, "\"");
    }
    if (expected[i].second != actual[i].second) return absl::StrCat("bytes of \"", expected[i].first, "\" differ");
  }
  return "none";
}

// Opens the store a writer was killed on and checks it holds whole batches
// only, up to the batch it names (returned in `batch_out`), which must be the
// writer's last acknowledged batch or the one it was committing.
void CheckStoreAfterKill(const std::string& dir, uint64_t last_acked_batch, uint64_t* batch_out) {
  absl::StatusOr<StorePtr> opened = OpenRocksStore(dir);
  ASSERT_TRUE(opened.ok()) << opened.status();
  const Store& store = **opened;

  absl::StatusOr<uint64_t> stored = StoredBatch(store);
  ASSERT_TRUE(stored.ok()) << stored.status();
  const uint64_t batch = *stored;
  *batch_out = batch;
  EXPECT_GE(batch, last_acked_batch) << "a commit acknowledged before the kill was lost";
  EXPECT_LE(batch, last_acked_batch + 1) << "the store holds batches the writer never committed";

  // Every link carries the meta entry's batch: none older (a batch applied in
  // part), none newer (entities ahead of the meta entry).
  absl::StatusOr<Entities> links = store.ListRaw(Kind::kLink);
  ASSERT_TRUE(links.ok()) << links.status();
  for (const auto& [id, bytes] : *links) {
    v1::Link link;
    ASSERT_TRUE(link.ParseFromString(bytes)) << id;
    EXPECT_EQ(static_cast<uint64_t>(link.health().measured_at_unix_ms()), batch)
        << "link " << id << " is from another batch than the meta entry";
  }
  Entities expected_links;
  for (int i = 0; i < kLinksPerBatch; ++i) {
    expected_links.emplace_back(LinkId(i), BatchLink(i, batch).SerializeAsString());
  }
  std::sort(expected_links.begin(), expected_links.end());
  EXPECT_TRUE(*links == expected_links) << FirstDifference(expected_links, *links);

  // Exactly the batch's marker: its put and the previous marker's delete landed together.
  absl::StatusOr<Entities> nodes = store.ListRaw(Kind::kNode);
  ASSERT_TRUE(nodes.ok()) << nodes.status();
  const Entities expected_nodes = {{MarkerId(batch), MarkerNode(batch).SerializeAsString()}};
  EXPECT_TRUE(*nodes == expected_nodes) << FirstDifference(expected_nodes, *nodes);

  // The journal: one entry per batch, seq = batch, gapless from 1, each with the
  // batch's cause and changes, the last one the batch the entities show.
  EXPECT_EQ(store.LastJournalSeq(), batch);
  absl::StatusOr<std::vector<JournalEntry>> journal = store.ReadJournal(1, static_cast<size_t>(batch) + 1);
  ASSERT_TRUE(journal.ok()) << journal.status();
  ASSERT_EQ(journal->size(), batch) << "journal entries up to batch " << batch;
  for (uint64_t seq = 1; seq <= batch; ++seq) {
    const JournalEntry& entry = (*journal)[seq - 1];
    if (entry.seq != seq || entry.cause != Cause(seq) || entry.changes != BatchChanges(seq).changes()) {
      ADD_FAILURE() << "journal entry " << seq << " is seq " << entry.seq << " \"" << entry.cause
                    << "\" with " << entry.changes.size() << " changes, not batch " << seq;
      break;
    }
  }

  // Replaying the journal rebuilds the store: every kind, every id, every byte.
  StorePtr replayed = NewMemoryStore();
  absl::Status replay = ReplayJournal(store, store.LastJournalSeq(), *replayed);
  ASSERT_TRUE(replay.ok()) << replay;
  EXPECT_EQ(replayed->LastJournalSeq(), store.LastJournalSeq());
  for (Kind kind : kAllKinds) {
    absl::StatusOr<Entities> on_disk = store.ListRaw(kind);
    absl::StatusOr<Entities> from_journal = replayed->ListRaw(kind);
    ASSERT_TRUE(on_disk.ok()) << on_disk.status();
    ASSERT_TRUE(from_journal.ok()) << from_journal.status();
    EXPECT_TRUE(*on_disk == *from_journal)
        << KindName(kind) << ": replay differs from the store: " << FirstDifference(*from_journal, *on_disk);
  }
}

// When to kill, per round: once the writer reported `min_commits` commits in
// that round, `then_ms` later plus a random jitter of up to kJitterUs. The
// parent wakes from a timer, not from the writer's progress, so the kill lands
// at any point of a commit: while the writer builds a batch, inside RocksDB's
// write, or between the write and the ack. Meanwhile the writer's progress
// waits in the pipe (64 KiB: thousands of commits), so it never blocks.
struct KillPoint {
  uint64_t min_commits;
  int then_ms;
};
constexpr KillPoint kKillPoints[] = {{1, 0},  {5, 0},  {1, 2},  {20, 0}, {10, 5},
                                     {3, 11}, {50, 1}, {5, 29}, {1, 60}, {30, 90}};
constexpr int kJitterUs = 1000;

class CrashSafetyTest : public ::testing::TestWithParam<bool> {
 protected:
  bool sync_writes() const { return GetParam(); }
  TempDir temp_;
  const std::string dir_ = temp_.Join("state");
};

TEST_P(CrashSafetyTest, KilledWriterLeavesWholeBatchesAndAReplayableJournal) {
  std::minstd_rand random(std::random_device{}());
  std::uniform_int_distribution<int> jitter_us(0, kJitterUs);
  uint64_t previous_batch = 0;
  for (size_t round = 0; round < std::size(kKillPoints); ++round) {
    SCOPED_TRACE(absl::StrCat("round ", round + 1, " (sync_writes=", sync_writes(), ")"));
    const KillPoint& kill_point = kKillPoints[round];
    uint64_t last_acked_batch = 0;
    {
      WriterProcess writer(dir_, sync_writes());
      ASSERT_TRUE(writer.WaitForCommits(kill_point.min_commits, std::chrono::seconds(60)))
          << "the writer reported " << writer.commits() << " commits (see its error above, if any)";
      // The thing tested: the kill lands at a chosen (jittered) point in the middle of the writes.
      std::this_thread::sleep_for(std::chrono::milliseconds(kill_point.then_ms) +
                                  std::chrono::microseconds(jitter_us(random)));
      const int status = writer.KillAndReap();
      ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
          << "the writer did not die of our SIGKILL: wait status " << status << " (see its error above)";
      last_acked_batch = writer.last_acked_batch();
      EXPECT_GE(writer.commits(), kill_point.min_commits);
      EXPECT_EQ(last_acked_batch, previous_batch + writer.commits()) << "the writer did not continue the stream";
    }
    uint64_t batch = 0;
    ASSERT_NO_FATAL_FAILURE(CheckStoreAfterKill(dir_, last_acked_batch, &batch));
    previous_batch = batch;
  }
}

INSTANTIATE_TEST_SUITE_P(Writes, CrashSafetyTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? std::string("Synced") : std::string("Unsynced");
                         });

}  // namespace
}  // namespace geodesic::state

// The test binary, or with `--crash-writer <dir> <sync 0|1> <progress fd>` the
// writer process the test kills (a main of our own, so gtest_main's is unused).
int main(int argc, char** argv) {
  if (argc == 5 && std::string_view(argv[1]) == geodesic::state::kWriterFlag) {
    int progress_fd = -1;
    if (!absl::SimpleAtoi(argv[4], &progress_fd)) return 1;
    return geodesic::state::RunWriter(argv[2], std::string_view(argv[3]) == "1", progress_fd);
  }
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
