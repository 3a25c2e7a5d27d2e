// What only the RocksDB store does: persistence, schema versions and
// migrations, the directory lock, and corruption on disk.
#include "state/rocks_store.h"

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "geodesic/v1/model.pb.h"
#include "rocksdb/db.h"
#include "rocksdb/options.h"
#include "rocksdb/write_batch.h"
#include "state/change_set.h"
#include "state/internal/journal_codec.h"
#include "state/memory_store.h"
#include "state/replay.h"
#include "state/typed_access.h"
#include "tests/support/test_dirs.h"

namespace geodesic::state {
namespace {

using ::testing::HasSubstr;
using ::geodesic::testing::TempDir;

// The DB under a store, opened directly to play an older (or newer) build or
// a broken disk. Only while no store has the directory open.
class RawDb {
 public:
  explicit RawDb(const std::string& dir) {
    rocksdb::Options options;
    std::vector<std::string> names;
    EXPECT_TRUE(rocksdb::DB::ListColumnFamilies(options, dir, &names).ok());
    std::vector<rocksdb::ColumnFamilyDescriptor> descriptors;
    for (const std::string& name : names) descriptors.emplace_back(name, rocksdb::ColumnFamilyOptions());
    rocksdb::DB* db = nullptr;
    rocksdb::Status s = rocksdb::DB::Open(options, dir, descriptors, &handles_, &db);
    EXPECT_TRUE(s.ok()) << s.ToString();
    db_.reset(db);
  }
  ~RawDb() {
    for (rocksdb::ColumnFamilyHandle* handle : handles_) db_->DestroyColumnFamilyHandle(handle).PermitUncheckedError();
  }

  void Put(const std::string& cf, const std::string& key, const std::string& value) {
    EXPECT_TRUE(db_->Put(rocksdb::WriteOptions(), Cf(cf), key, value).ok());
  }
  void Delete(const std::string& cf, const std::string& key) {
    EXPECT_TRUE(db_->Delete(rocksdb::WriteOptions(), Cf(cf), key).ok());
  }
  std::string Get(const std::string& cf, const std::string& key) {
    std::string value;
    rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), Cf(cf), key, &value);
    return s.ok() ? value : absl::StrCat("<", s.ToString(), ">");
  }

 private:
  rocksdb::ColumnFamilyHandle* Cf(const std::string& name) {
    for (rocksdb::ColumnFamilyHandle* handle : handles_) {
      if (handle->GetName() == name) return handle;
    }
    ADD_FAILURE() << "no column family " << name;
    return db_->DefaultColumnFamily();
  }

  std::unique_ptr<rocksdb::DB> db_;
  std::vector<rocksdb::ColumnFamilyHandle*> handles_;
};

v1::Link MakeLink(const std::string& id, double capacity_gbps) {
  v1::Link link;
  link.set_id(id);
  link.set_src_facility_id("iad");
  link.set_dst_facility_id("ord");
  link.set_capacity_gbps(capacity_gbps);
  return link;
}

StorePtr MustOpen(const std::string& dir, RocksStoreOptions opts = {}) {
  absl::StatusOr<StorePtr> store = OpenRocksStore(dir, std::move(opts));
  EXPECT_TRUE(store.ok()) << store.status();
  return store.ok() ? *std::move(store) : nullptr;
}

uint64_t MustCommitLink(Store& store, const std::string& cause, const std::string& id, double capacity_gbps) {
  ChangeSet changes(cause);
  changes.Put(Kind::kLink, id, MakeLink(id, capacity_gbps));
  absl::StatusOr<uint64_t> seq = store.Commit(changes);
  EXPECT_TRUE(seq.ok()) << seq.status();
  return seq.value_or(0);
}

class RocksStoreTest : public ::testing::Test {
 protected:
  TempDir temp_;
  const std::string dir_ = temp_.Join("state");
};

TEST_F(RocksStoreTest, ReopenKeepsDataAndTheJournalSeqContinues) {
  {
    StorePtr store = MustOpen(dir_);
    ASSERT_NE(store, nullptr);
    EXPECT_EQ(MustCommitLink(*store, "first", "l1", 100), 1u);
    EXPECT_EQ(MustCommitLink(*store, "second", "l2", 200), 2u);
  }
  RocksStoreOptions opts;
  opts.sync_writes = true;
  StorePtr store = MustOpen(dir_, opts);
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->LastJournalSeq(), 2u);
  EXPECT_EQ(Get<v1::Link>(*store, Kind::kLink, "l2").value().capacity_gbps(), 200);
  EXPECT_EQ(MustCommitLink(*store, "third", "l1", 300), 3u);

  std::vector<JournalEntry> journal = store->ReadJournal(1, 10).value();
  ASSERT_EQ(journal.size(), 3u);
  EXPECT_EQ(journal[0].cause, "first");
  EXPECT_EQ(journal[1].cause, "second");
  EXPECT_EQ(journal[2].cause, "third");
  EXPECT_EQ(journal[2].seq, 3u);
}

TEST_F(RocksStoreTest, UnsyncedCommitsSurviveAReopenOnceSynced) {
  RocksStoreOptions opts;
  opts.sync_writes = true;
  {
    StorePtr store = MustOpen(dir_, opts);
    ASSERT_NE(store, nullptr);
    for (int i = 1; i <= 3; ++i) {
      ChangeSet changes(absl::StrCat("telemetry seq ", i));
      changes.Put(Kind::kLink, "l1", MakeLink("l1", 100 * i));
      ASSERT_EQ(store->CommitUnsynced(changes).value(), static_cast<uint64_t>(i));
    }
    ASSERT_TRUE(store->Sync().ok());
  }
  StorePtr store = MustOpen(dir_, opts);
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->LastJournalSeq(), 3u);
  EXPECT_EQ(Get<v1::Link>(*store, Kind::kLink, "l1").value().capacity_gbps(), 300);
}

TEST_F(RocksStoreTest, LayoutFollowsTheDesign) {
  {
    StorePtr store = MustOpen(dir_);
    ASSERT_NE(store, nullptr);
    MustCommitLink(*store, "first", "iad-ord-1", 100);
  }
  RawDb raw(dir_);
  EXPECT_EQ(raw.Get("default", "schema_version"), absl::StrCat(kSchemaVersion));
  EXPECT_EQ(raw.Get("link", "link/iad-ord-1"), MakeLink("iad-ord-1", 100).SerializeAsString());
  absl::StatusOr<JournalEntry> entry =
      internal::DecodeJournalValue(1, raw.Get("journal", internal::EncodeJournalKey(1)));
  ASSERT_TRUE(entry.ok()) << entry.status();
  EXPECT_EQ(entry->cause, "first");
}

TEST_F(RocksStoreTest, SecondOpenOfAnOpenDirFailsClearly) {
  StorePtr first = MustOpen(dir_);
  ASSERT_NE(first, nullptr);
  absl::StatusOr<StorePtr> second = OpenRocksStore(dir_);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kFailedPrecondition) << second.status();
  EXPECT_THAT(second.status().message(), HasSubstr(dir_));
  EXPECT_THAT(second.status().message(), HasSubstr("already open"));

  first.reset();
  EXPECT_TRUE(OpenRocksStore(dir_).ok());
}

// Another process (a second pathcomp) holding the DB's LOCK, as RocksDB takes
// it: an fcntl write lock. The child only locks and waits, so it needs none of
// this process's threads.
TEST_F(RocksStoreTest, OpenWhileAnotherProcessHoldsTheLockFailsClearly) {
  { ASSERT_NE(MustOpen(dir_), nullptr); }
  int locked[2], release[2];
  ASSERT_EQ(pipe(locked), 0);
  ASSERT_EQ(pipe(release), 0);
  const std::string lock_file = dir_ + "/LOCK";
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(locked[0]);
    close(release[1]);
    const int fd = open(lock_file.c_str(), O_RDWR);
    struct flock lock = {};
    lock.l_type = F_WRLCK;
    lock.l_whence = SEEK_SET;
    const char ok = (fd >= 0 && fcntl(fd, F_SETLK, &lock) == 0) ? '1' : '0';
    if (write(locked[1], &ok, 1) != 1) _exit(1);
    char byte;
    (void)!read(release[0], &byte, 1);  // returns when the parent closes its end
    _exit(0);
  }
  close(locked[1]);
  close(release[0]);
  char ok = '0';
  ASSERT_EQ(read(locked[0], &ok, 1), 1);
  ASSERT_EQ(ok, '1') << "the child could not lock " << lock_file;

  absl::StatusOr<StorePtr> store = OpenRocksStore(dir_);
  close(release[1]);
  close(locked[0]);
  int child_status = 0;
  waitpid(child, &child_status, 0);

  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), absl::StatusCode::kFailedPrecondition) << store.status();
  EXPECT_THAT(store.status().message(), HasSubstr(dir_));
  EXPECT_THAT(store.status().message(), HasSubstr("already open"));
  EXPECT_TRUE(OpenRocksStore(dir_).ok());
}

TEST_F(RocksStoreTest, UnusableDirFailsNamingIt) {
  const std::string file = temp_.Join("a-file");
  std::ofstream(file) << "not a directory";
  const std::string dir = file + "/state";
  absl::StatusOr<StorePtr> store = OpenRocksStore(dir);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), absl::StatusCode::kFailedPrecondition) << store.status();
  EXPECT_THAT(store.status().message(), HasSubstr(dir));
  EXPECT_THAT(store.status().message(), HasSubstr("Not a directory"));
}

TEST_F(RocksStoreTest, NewerSchemaIsRefused) {
  { ASSERT_NE(MustOpen(dir_), nullptr); }
  { RawDb(dir_).Put("default", "schema_version", absl::StrCat(kSchemaVersion + 1)); }
  absl::StatusOr<StorePtr> store = OpenRocksStore(dir_);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), absl::StatusCode::kFailedPrecondition) << store.status();
  EXPECT_THAT(store.status().message(), HasSubstr(dir_));
  EXPECT_THAT(store.status().message(), HasSubstr(absl::StrCat("schema version ", kSchemaVersion + 1, " is newer")));
}

TEST_F(RocksStoreTest, MissingOrUnreadableSchemaVersionIsDataLoss) {
  {
    StorePtr store = MustOpen(dir_);
    ASSERT_NE(store, nullptr);
    MustCommitLink(*store, "first", "l1", 100);
  }
  { RawDb(dir_).Put("default", "schema_version", "one"); }
  EXPECT_EQ(OpenRocksStore(dir_).status().code(), absl::StatusCode::kDataLoss);
  { RawDb(dir_).Delete("default", "schema_version"); }
  absl::StatusOr<StorePtr> store = OpenRocksStore(dir_);
  EXPECT_EQ(store.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(store.status().message(), HasSubstr("no schema_version"));
}

// Schema 0, as this test pretends it was: links as "links:<id>" in the default
// column family. Migration 0 -> 1 moves them into the link column family.
class MigrationTest : public RocksStoreTest {
 protected:
  void SetUp() override {
    { ASSERT_NE(MustOpen(dir_), nullptr); }
    RawDb raw(dir_);
    raw.Put("default", "schema_version", "0");
    raw.Put("default", "links:old-1", MakeLink("old-1", 10).SerializeAsString());
    raw.Put("default", "links:old-2", MakeLink("old-2", 20).SerializeAsString());
  }

  RocksStoreOptions WithMigration() {
    static_assert(kSchemaVersion == 2, "add the migrations from 2 when kSchemaVersion changes");
    RocksStoreOptions opts;
    opts.migrations = StoreMigrations();  // from 1 on, this build's own
    opts.migrations.push_back(Migration{
        .from_version = 0, .apply = [this](const MigrationContext& ctx, rocksdb::WriteBatch& batch) -> absl::Status {
          ++runs_;
          if (fail_) return absl::AbortedError("disk full, pretend");
          rocksdb::ColumnFamilyHandle* old_cf = ctx.column_families.at("default");
          rocksdb::ColumnFamilyHandle* link_cf = ctx.column_families.at("link");
          std::unique_ptr<rocksdb::Iterator> it(ctx.db->NewIterator(rocksdb::ReadOptions(), old_cf));
          for (it->Seek("links:"); it->Valid() && it->key().starts_with("links:"); it->Next()) {
            const std::string id = it->key().ToString().substr(6);
            if (!batch.Put(link_cf, "link/" + id, it->value()).ok()) return absl::InternalError("put");
            if (!batch.Delete(old_cf, it->key()).ok()) return absl::InternalError("delete");
          }
          return absl::OkStatus();
        }});
    return opts;
  }

  int runs_ = 0;
  bool fail_ = false;
};

TEST_F(MigrationTest, RunsOnceAndMovesTheData) {
  {
    StorePtr store = MustOpen(dir_, WithMigration());
    ASSERT_NE(store, nullptr);
    EXPECT_EQ(runs_, 1);
    EXPECT_EQ(Get<v1::Link>(*store, Kind::kLink, "old-2").value().capacity_gbps(), 20);
    EXPECT_EQ(store->ListRaw(Kind::kLink).value().size(), 2u);
  }
  {
    StorePtr store = MustOpen(dir_, WithMigration());
    ASSERT_NE(store, nullptr);
    EXPECT_EQ(runs_, 1);
  }
  RawDb raw(dir_);
  EXPECT_EQ(raw.Get("default", "schema_version"), absl::StrCat(kSchemaVersion));
  EXPECT_THAT(raw.Get("default", "links:old-1"), HasSubstr("NotFound"));
}

TEST_F(MigrationTest, MissingMigrationIsRefused) {
  absl::StatusOr<StorePtr> store = OpenRocksStore(dir_);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(store.status().message(), HasSubstr("no migration from 0"));
  EXPECT_THAT(store.status().message(), HasSubstr(dir_));
}

TEST_F(MigrationTest, FailedMigrationChangesNothingAndCanBeRetried) {
  fail_ = true;
  absl::StatusOr<StorePtr> store = OpenRocksStore(dir_, WithMigration());
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), absl::StatusCode::kAborted);
  EXPECT_THAT(store.status().message(), HasSubstr("migration from schema 0 failed: disk full, pretend"));
  {
    RawDb raw(dir_);
    EXPECT_EQ(raw.Get("default", "schema_version"), "0");
    EXPECT_EQ(raw.Get("default", "links:old-1"), MakeLink("old-1", 10).SerializeAsString());
  }
  fail_ = false;
  StorePtr retried = MustOpen(dir_, WithMigration());
  ASSERT_NE(retried, nullptr);
  EXPECT_EQ(runs_, 2);
  EXPECT_TRUE(Get<v1::Link>(*retried, Kind::kLink, "old-1").ok());
}

TEST_F(MigrationTest, DuplicateMigrationIsRejected) {
  RocksStoreOptions opts = WithMigration();
  opts.migrations.push_back(opts.migrations.front());
  EXPECT_EQ(OpenRocksStore(dir_, opts).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(runs_, 0);
}

TEST_F(RocksStoreTest, CorruptJournalEntryIsDataLoss) {
  {
    StorePtr store = MustOpen(dir_);
    ASSERT_NE(store, nullptr);
    MustCommitLink(*store, "first", "l1", 100);
    MustCommitLink(*store, "second", "l2", 100);
    MustCommitLink(*store, "third", "l3", 100);
  }
  {
    RawDb raw(dir_);
    std::string value = raw.Get("journal", internal::EncodeJournalKey(2));
    value.resize(value.size() - 3);
    raw.Put("journal", internal::EncodeJournalKey(2), value);
  }
  StorePtr store = MustOpen(dir_);
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->ReadJournal(1, 1).value().size(), 1u);
  absl::StatusOr<std::vector<JournalEntry>> journal = store->ReadJournal(1, 10);
  EXPECT_EQ(journal.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(journal.status().message(), HasSubstr("journal entry 2"));
  EXPECT_THAT(journal.status().message(), HasSubstr(dir_));

  StorePtr into = NewMemoryStore();
  EXPECT_TRUE(ReplayJournal(*store, 1, *into).ok());
  StorePtr into2 = NewMemoryStore();
  EXPECT_EQ(ReplayJournal(*store, 3, *into2).code(), absl::StatusCode::kDataLoss);
}

// A journal entry as schema 1 wrote it: every put with its value (op 1).
std::string Schema1JournalValue(const std::string& cause, const std::vector<Change>& changes) {
  std::string out(1, '\x01');
  auto fixed = [&](uint64_t value, int bytes) {
    for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
  };
  auto bytes = [&](std::string_view b) {
    fixed(b.size(), 4);
    out.append(b);
  };
  fixed(1'700'000'000'000, 8);
  bytes(cause);
  fixed(changes.size(), 4);
  for (const Change& change : changes) {
    bytes(KindName(change.kind));
    bytes(change.id);
    out.push_back(change.value ? 1 : 0);
    if (change.value) bytes(*change.value);
  }
  return out;
}

// Schema 1 copied every plan into the journal; opening such a store rewrites
// those entries with the plans' digests, once, and changes nothing else.
TEST_F(RocksStoreTest, MigrationFromSchema1JournalsPlansByDigest) {
  const std::string plan(200'000, 'p');
  const std::vector<Change> plan_commit = {{Kind::kPlan, "current-generation", std::string("7")},
                                           {Kind::kPlanHistory, "00000000000000000007", plan}};
  {
    StorePtr store = MustOpen(dir_);
    ASSERT_NE(store, nullptr);
    MustCommitLink(*store, "first", "l1", 100);
    ChangeSet changes("plan generation 7");
    for (const Change& change : plan_commit) changes.PutRaw(change.kind, change.id, *change.value);
    ASSERT_EQ(store->Commit(changes).value(), 2u);
  }
  std::string link_entry;
  {
    RawDb raw(dir_);
    raw.Put("default", "schema_version", "1");
    raw.Put("journal", internal::EncodeJournalKey(2), Schema1JournalValue("plan generation 7", plan_commit));
    link_entry = raw.Get("journal", internal::EncodeJournalKey(1));
    ASSERT_GT(raw.Get("journal", internal::EncodeJournalKey(2)).size(), plan.size());
  }
  {
    StorePtr store = MustOpen(dir_);
    ASSERT_NE(store, nullptr);
    const std::vector<JournalEntry> journal = store->ReadJournal(1, 10).value();
    ASSERT_EQ(journal.size(), 2u);
    EXPECT_EQ(journal[1].cause, "plan generation 7");
    ASSERT_EQ(journal[1].changes.size(), 2u);
    EXPECT_EQ(journal[1].changes[0], plan_commit[0]);
    EXPECT_EQ(journal[1].changes[1], internal::JournaledChange(plan_commit[1]));
    EXPECT_EQ(journal[1].changes[1].value, std::nullopt);
    EXPECT_EQ(store->GetRaw(Kind::kPlanHistory, "00000000000000000007").value(), plan);
    EXPECT_EQ(store->LastJournalSeq(), 2u);
  }
  RawDb raw(dir_);
  EXPECT_EQ(raw.Get("default", "schema_version"), "2");
  EXPECT_LT(raw.Get("journal", internal::EncodeJournalKey(2)).size(), 200u);
  EXPECT_EQ(raw.Get("journal", internal::EncodeJournalKey(1)), link_entry) << "an entry without a plan is kept as is";
}

// A trimmed journal stays trimmed across a restart, and the seqs go on.
TEST_F(RocksStoreTest, ATrimmedJournalReopensWhereItWas) {
  {
    StorePtr store = MustOpen(dir_);
    ASSERT_NE(store, nullptr);
    for (int i = 1; i <= 4; ++i) MustCommitLink(*store, absl::StrCat("commit ", i), absl::StrCat("l", i), i);
    ASSERT_EQ(store->TrimJournal(3).value(), 2u);
  }
  {
    absl::StatusOr<StorePtr> reader = OpenRocksStore(dir_, {.read_only = true});
    ASSERT_TRUE(reader.ok()) << reader.status();
    EXPECT_EQ((*reader)->FirstJournalSeq(), 3u);
    EXPECT_EQ((*reader)->TrimJournal(4).status().code(), absl::StatusCode::kFailedPrecondition);
  }
  StorePtr store = MustOpen(dir_);
  ASSERT_NE(store, nullptr);
  EXPECT_EQ(store->FirstJournalSeq(), 3u);
  EXPECT_EQ(store->LastJournalSeq(), 4u);
  EXPECT_EQ(store->ReadJournal(1, 10).value().front().seq, 3u);
  EXPECT_EQ(MustCommitLink(*store, "commit 5", "l5", 5), 5u);
  EXPECT_EQ(store->ListRaw(Kind::kLink).value().size(), 5u);
}

TEST_F(RocksStoreTest, JournalGapIsDataLossOnReplay) {
  {
    StorePtr store = MustOpen(dir_);
    ASSERT_NE(store, nullptr);
    for (int i = 1; i <= 3; ++i) MustCommitLink(*store, absl::StrCat("commit ", i), "l1", i);
  }
  { RawDb(dir_).Delete("journal", internal::EncodeJournalKey(2)); }
  StorePtr store = MustOpen(dir_);
  ASSERT_NE(store, nullptr);
  StorePtr into = NewMemoryStore();
  absl::Status status = ReplayJournal(*store, 3, *into);
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(status.message(), HasSubstr("expected seq 2, found 3"));
}

}  // namespace
}  // namespace geodesic::state
