// Backups of a RocksStore (state/backup): back up while it is written to,
// change it, restore, and the store is the backup again; a backup that was
// tampered with, or made by a newer schema, is refused and changes nothing.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "google/protobuf/util/json_util.h"
#include "state/backup/backup_dir.h"
#include "state/backup/restore.h"
#include "state/change_set.h"
#include "state/kind.h"
#include "state/memory_store.h"
#include "state/replay.h"
#include "state/rocks_migration.h"
#include "state/rocks_store.h"
#include "tests/support/test_dirs.h"

namespace geodesic::state::backup {
namespace {

namespace fs = std::filesystem;
using ::geodesic::testing::TempDir;
using ::testing::HasSubstr;

// Everything a store holds: every kind's entities, and the journal.
struct Contents {
  std::map<std::string, std::vector<std::pair<std::string, std::string>>> entities;  // by kind name
  std::vector<JournalEntry> journal;
  uint64_t last_seq = 0;
  friend bool operator==(const Contents&, const Contents&) = default;
};

Contents Read(const Store& store) {
  Contents contents;
  for (Kind kind : kAllKinds) {
    auto listed = store.ListRaw(kind);
    EXPECT_TRUE(listed.ok()) << listed.status();
    if (listed.ok()) contents.entities[std::string(KindName(kind))] = *std::move(listed);
  }
  auto journal = store.ReadJournal(1, 1'000'000);
  EXPECT_TRUE(journal.ok()) << journal.status();
  if (journal.ok()) contents.journal = *std::move(journal);
  contents.last_seq = store.LastJournalSeq();
  return contents;
}

Contents ReadDir(const std::string& dir) {
  auto store = OpenRocksStore(dir);
  EXPECT_TRUE(store.ok()) << store.status();
  return store.ok() ? Read(**store) : Contents{};
}

// One entity of every kind, and a second commit that changes and deletes some.
void Fill(Store& store) {
  ChangeSet first("fill: every kind");
  for (Kind kind : kAllKinds) {
    first.PutRaw(kind, "a", std::string(KindName(kind)) + " a v1");
    first.PutRaw(kind, "b", std::string(KindName(kind)) + " b v1");
  }
  ASSERT_TRUE(store.Commit(first).ok());
  ChangeSet second("fill: change some");
  second.PutRaw(Kind::kLink, "a", "link a v2");
  second.Delete(Kind::kWorkload, "b");
  ASSERT_TRUE(store.Commit(second).ok());
}

void Change(Store& store, const std::string& cause) {
  ChangeSet change(cause);
  change.PutRaw(Kind::kIntent, "new", "intent new");
  change.Delete(Kind::kFacility, "a");
  change.PutRaw(Kind::kPlan, "current", "plan 2");
  ASSERT_TRUE(store.Commit(change).ok());
}

v1::BackupManifest Origin() {
  v1::BackupManifest origin;
  origin.set_pathcomp_replica("test");
  origin.set_requested_by("store_backup_test");
  return origin;
}

void WriteManifest(const std::string& backup_dir, const v1::BackupManifest& manifest) {
  std::string json;
  ASSERT_TRUE(google::protobuf::util::MessageToJsonString(manifest, &json).ok());
  std::ofstream(backup_dir + "/" + kManifestName, std::ios::trunc) << json;
}

class StoreBackupTest : public ::testing::Test {
 protected:
  // A store with data, backed up into backup_; the store is closed again.
  void SetUp() override {
    auto store = OpenRocksStore(store_dir_);
    ASSERT_TRUE(store.ok()) << store.status();
    Fill(**store);
    auto manifest = BackupLocalStore(**store, backup_, Origin());
    ASSERT_TRUE(manifest.ok()) << manifest.status();
    manifest_ = *std::move(manifest);
    backed_up_ = Read(**store);
    // After the backup the store moves on.
    Change(**store, "after the backup");
  }

  TempDir dir_{"store-backup"};
  const std::string store_dir_ = dir_.Join("store");
  const std::string backup_ = dir_.Join("backup");
  v1::BackupManifest manifest_;
  Contents backed_up_;
};

TEST_F(StoreBackupTest, ManifestRecordsThePositionAndEveryFile) {
  EXPECT_EQ(manifest_.format(), kManifestFormat);
  EXPECT_EQ(manifest_.schema_version(), static_cast<uint32_t>(kSchemaVersion));
  EXPECT_EQ(manifest_.last_journal_seq(), 2u);
  EXPECT_EQ(manifest_.pathcomp_replica(), "test");
  EXPECT_GT(manifest_.created_at_unix_ms(), 0);
  size_t files = 0;
  for (const auto& entry : fs::directory_iterator(backup_ + "/" + kStoreDirName)) {
    ++files;
    EXPECT_TRUE(entry.is_regular_file()) << entry.path();
  }
  EXPECT_EQ(static_cast<size_t>(manifest_.files_size()), files);
  auto verified = VerifyBackup(backup_);
  ASSERT_TRUE(verified.ok()) << verified.status();
  EXPECT_EQ(verified->SerializeAsString(), manifest_.SerializeAsString());
}

TEST_F(StoreBackupTest, RestoreMakesTheStoreTheBackupAgain) {
  const Contents changed = ReadDir(store_dir_);
  ASSERT_NE(changed, backed_up_);
  ASSERT_EQ(changed.last_seq, 3u);

  // A store that holds data is replaced only with force.
  auto refused = RestoreStore(backup_, store_dir_);
  ASSERT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition) << refused.status();
  EXPECT_THAT(refused.status().message(), HasSubstr("--force"));
  EXPECT_EQ(ReadDir(store_dir_), changed);

  auto restored = RestoreStore(backup_, store_dir_, {.force = true});
  ASSERT_TRUE(restored.ok()) << restored.status();
  EXPECT_TRUE(restored->replaced);
  EXPECT_EQ(restored->manifest.last_journal_seq(), 2u);
  const Contents after = ReadDir(store_dir_);
  EXPECT_EQ(after, backed_up_);  // every kind, the journal and its last seq
  EXPECT_EQ(after.last_seq, manifest_.last_journal_seq());
  // Nothing is left beside it.
  for (const auto& entry : fs::directory_iterator(dir_.path())) {
    EXPECT_THAT(entry.path().filename().string(), ::testing::AnyOf("store", "backup")) << entry.path();
  }

  // The restored store goes on from the backup's position.
  auto store = OpenRocksStore(store_dir_);
  ASSERT_TRUE(store.ok()) << store.status();
  ChangeSet next("after the restore");
  next.PutRaw(Kind::kMeta, "x", "y");
  auto seq = (*store)->Commit(next);
  ASSERT_TRUE(seq.ok()) << seq.status();
  EXPECT_EQ(*seq, 3u);
}

TEST_F(StoreBackupTest, RestoresIntoAMissingOrEmptyDirectory) {
  const std::string fresh = dir_.Join("fresh");
  auto restored = RestoreStore(backup_, fresh);
  ASSERT_TRUE(restored.ok()) << restored.status();
  EXPECT_FALSE(restored->replaced);
  EXPECT_EQ(ReadDir(fresh), backed_up_);

  const std::string empty = dir_.Join("empty");
  fs::create_directory(empty);
  restored = RestoreStore(backup_, empty + "/");
  ASSERT_TRUE(restored.ok()) << restored.status();
  EXPECT_EQ(ReadDir(empty), backed_up_);
}

TEST_F(StoreBackupTest, RefusesAStoreThatOverlapsTheBackup) {
  for (const std::string& store : {backup_, backup_ + "/store", dir_.path()}) {
    auto restored = RestoreStore(backup_, store, {.force = true});
    EXPECT_EQ(restored.status().code(), absl::StatusCode::kInvalidArgument) << store << ": " << restored.status();
  }
  EXPECT_TRUE(VerifyBackup(backup_).ok());
}

TEST_F(StoreBackupTest, TamperedFileIsRefusedAndChangesNothing) {
  const Contents before = ReadDir(store_dir_);
  const std::string victim = absl::StrCat(backup_, "/", kStoreDirName, "/", manifest_.files(0).path());
  {
    std::fstream file(victim, std::ios::in | std::ios::out | std::ios::binary);
    char byte = 0;
    file.seekg(0);
    file.read(&byte, 1);
    byte = static_cast<char>(byte ^ 0x5a);
    file.seekp(0);
    file.write(&byte, 1);
  }
  auto verified = VerifyBackup(backup_);
  EXPECT_EQ(verified.status().code(), absl::StatusCode::kDataLoss) << verified.status();
  EXPECT_THAT(verified.status().message(), HasSubstr(manifest_.files(0).path()));
  auto restored = RestoreStore(backup_, store_dir_, {.force = true});
  EXPECT_EQ(restored.status().code(), absl::StatusCode::kDataLoss) << restored.status();
  EXPECT_EQ(ReadDir(store_dir_), before);
  EXPECT_FALSE(fs::exists(dir_.Join("missing")));
  auto into_missing = RestoreStore(backup_, dir_.Join("missing"));
  EXPECT_FALSE(into_missing.ok());
  EXPECT_FALSE(fs::exists(dir_.Join("missing")));
}

TEST_F(StoreBackupTest, ExtraOrMissingFilesAreRefused) {
  std::ofstream(absl::StrCat(backup_, "/", kStoreDirName, "/extra")) << "x";
  auto verified = VerifyBackup(backup_);
  EXPECT_EQ(verified.status().code(), absl::StatusCode::kDataLoss) << verified.status();
  EXPECT_THAT(verified.status().message(), HasSubstr("not in the manifest"));
  fs::remove(absl::StrCat(backup_, "/", kStoreDirName, "/extra"));
  fs::remove(absl::StrCat(backup_, "/", kStoreDirName, "/", manifest_.files(0).path()));
  verified = VerifyBackup(backup_);
  EXPECT_EQ(verified.status().code(), absl::StatusCode::kDataLoss) << verified.status();
  EXPECT_THAT(verified.status().message(), HasSubstr("missing"));
}

TEST_F(StoreBackupTest, NewerSchemaIsRefusedAndChangesNothing) {
  const Contents before = ReadDir(store_dir_);
  v1::BackupManifest newer = manifest_;
  newer.set_schema_version(kSchemaVersion + 1);
  WriteManifest(backup_, newer);
  auto restored = RestoreStore(backup_, store_dir_, {.force = true});
  EXPECT_EQ(restored.status().code(), absl::StatusCode::kFailedPrecondition) << restored.status();
  EXPECT_THAT(restored.status().message(), HasSubstr("newer"));
  EXPECT_EQ(ReadDir(store_dir_), before);
}

TEST_F(StoreBackupTest, BadManifestsAreRefused) {
  const Contents before = ReadDir(store_dir_);
  struct Case {
    std::string what;
    std::function<void(v1::BackupManifest&)> edit;
  };
  const std::vector<Case> cases = {
      {"format", [](v1::BackupManifest& m) { m.set_format(2); }},
      {"schema_version", [](v1::BackupManifest& m) { m.set_schema_version(0); }},
      {"plain file name", [](v1::BackupManifest& m) { m.mutable_files(0)->set_path("../escape"); }},
      {"twice", [](v1::BackupManifest& m) { *m.add_files() = m.files(0); }},
      {"hex", [](v1::BackupManifest& m) { m.mutable_files(0)->set_sha256("xyz"); }},
      {"journal entries up to", [](v1::BackupManifest& m) { m.set_last_journal_seq(m.last_journal_seq() + 1); }},
  };
  for (const Case& c : cases) {
    v1::BackupManifest edited = manifest_;
    c.edit(edited);
    WriteManifest(backup_, edited);
    auto restored = RestoreStore(backup_, store_dir_, {.force = true});
    EXPECT_FALSE(restored.ok()) << c.what;
    EXPECT_THAT(restored.status().message(), HasSubstr(c.what));
  }
  std::ofstream(backup_ + "/" + kManifestName, std::ios::trunc) << "{not json";
  EXPECT_EQ(RestoreStore(backup_, store_dir_, {.force = true}).status().code(), absl::StatusCode::kDataLoss);
  fs::remove(backup_ + "/" + kManifestName);
  EXPECT_EQ(RestoreStore(backup_, store_dir_, {.force = true}).status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(ReadDir(store_dir_), before);
}

TEST(StoreBackup, RefusesANonEmptyBackupDirectory) {
  TempDir dir{"store-backup"};
  auto store = OpenRocksStore(dir.Join("store"));
  ASSERT_TRUE(store.ok()) << store.status();
  Fill(**store);
  fs::create_directory(dir.Join("full"));
  dir.Write("full/something", "");
  auto refused = BackupLocalStore(**store, dir.Join("full"), Origin());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition) << refused.status();
  EXPECT_THAT(refused.status().message(), HasSubstr("not empty"));
  EXPECT_TRUE(fs::exists(dir.Join("full/something")));
  dir.Write("file", "");
  EXPECT_FALSE(BackupLocalStore(**store, dir.Join("file"), Origin()).ok());
  EXPECT_EQ(BackupLocalStore(**store, dir.Join("no/parent"), Origin()).status().code(), absl::StatusCode::kNotFound);
  // A memory store has no files to back up; nothing is left behind.
  auto memory = NewMemoryStore();
  EXPECT_EQ(BackupLocalStore(*memory, dir.Join("memory"), Origin()).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_FALSE(fs::exists(dir.Join("memory")));
}

// A backup taken while a writer commits is the store at one commit: its
// entities are exactly its own journal replayed.
TEST(StoreBackup, IsConsistentWhileCommitsGoOn) {
  TempDir dir{"store-backup"};
  auto store = OpenRocksStore(dir.Join("store"));
  ASSERT_TRUE(store.ok()) << store.status();
  std::atomic<bool> stop = false;
  std::thread writer([&] {
    for (int i = 0; !stop; ++i) {
      ChangeSet change(absl::StrCat("write ", i));
      change.PutRaw(Kind::kLink, absl::StrCat("l", i % 50), absl::StrCat(i));
      change.PutRaw(Kind::kLinkHealth, absl::StrCat("l", i % 50), absl::StrCat(i));
      if (i % 7 == 0) change.Delete(Kind::kLink, absl::StrCat("l", (i + 13) % 50));
      if (!(*store)->Commit(change).ok()) return;
    }
  });
  // Let some commits happen first: wait for them, not for time.
  while ((*store)->LastJournalSeq() < 200) std::this_thread::yield();
  auto manifest = BackupLocalStore(**store, dir.Join("backup"), Origin());
  stop = true;
  writer.join();
  ASSERT_TRUE(manifest.ok()) << manifest.status();
  ASSERT_TRUE(RestoreStore(dir.Join("backup"), dir.Join("restored")).ok());
  auto restored = OpenRocksStore(dir.Join("restored"));
  ASSERT_TRUE(restored.ok()) << restored.status();
  EXPECT_EQ((*restored)->LastJournalSeq(), manifest->last_journal_seq());
  EXPECT_GE(manifest->last_journal_seq(), 200u);
  auto replayed = NewMemoryStore();
  ASSERT_TRUE(ReplayJournal(**restored, (*restored)->LastJournalSeq(), *replayed).ok());
  for (Kind kind : kAllKinds) {
    EXPECT_EQ((*restored)->ListRaw(kind).value(), replayed->ListRaw(kind).value()) << KindName(kind);
  }
}

// The receiving half refuses a broken stream, and removes what it wrote.
TEST(BackupReceiver, RefusesBrokenStreams) {
  TempDir dir{"store-backup"};
  auto chunk = [](std::string path, uint64_t offset, std::string data) {
    v1::BackupChunk c;
    c.set_path(std::move(path));
    c.set_offset(offset);
    c.set_data(std::move(data));
    return c;
  };
  {
    bool created = false;
    ASSERT_TRUE(PrepareBackupDir(dir.Join("b1"), created).ok());
    BackupReceiver receiver(dir.Join("b1"), created);
    EXPECT_EQ(receiver.Add(chunk("../evil", 0, "x")).code(), absl::StatusCode::kInvalidArgument);
  }
  EXPECT_FALSE(fs::exists(dir.Join("b1")));
  {
    bool created = false;
    ASSERT_TRUE(PrepareBackupDir(dir.Join("b2"), created).ok());
    BackupReceiver receiver(dir.Join("b2"), created);
    ASSERT_TRUE(receiver.Add(chunk("f", 0, "abc")).ok());
    EXPECT_EQ(receiver.Add(chunk("f", 5, "d")).code(), absl::StatusCode::kDataLoss);
  }
  EXPECT_FALSE(fs::exists(dir.Join("b2")));
  {
    fs::create_directory(dir.Join("b3"));  // there before: left empty, not removed
    bool created = true;
    ASSERT_TRUE(PrepareBackupDir(dir.Join("b3"), created).ok());
    EXPECT_FALSE(created);
    BackupReceiver receiver(dir.Join("b3"), created);
    ASSERT_TRUE(receiver.Add(chunk("f", 0, "abc")).ok());
    v1::BackupChunk last;
    last.mutable_manifest()->set_format(kManifestFormat);
    last.mutable_manifest()->set_schema_version(kSchemaVersion);
    v1::BackupFile* file = last.mutable_manifest()->add_files();
    file->set_path("f");
    file->set_size_bytes(3);
    file->set_sha256(std::string(64, '0'));  // not abc's
    ASSERT_TRUE(receiver.Add(last).ok());
    auto finished = receiver.Finish();
    EXPECT_EQ(finished.status().code(), absl::StatusCode::kDataLoss) << finished.status();
  }
  EXPECT_TRUE(fs::is_directory(dir.Join("b3")));
  EXPECT_TRUE(fs::is_empty(dir.Join("b3")));
  {
    bool created = false;
    ASSERT_TRUE(PrepareBackupDir(dir.Join("b4"), created).ok());
    BackupReceiver receiver(dir.Join("b4"), created);
    ASSERT_TRUE(receiver.Add(chunk("f", 0, "abc")).ok());
    EXPECT_EQ(receiver.Finish().status().code(), absl::StatusCode::kDataLoss);  // no manifest
  }
  EXPECT_FALSE(fs::exists(dir.Join("b4")));
}

}  // namespace
}  // namespace geodesic::state::backup
