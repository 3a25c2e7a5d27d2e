#include "state/rocks_store.h"

#include <stdlib.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "rocksdb/db.h"
#include "rocksdb/iterator.h"
#include "rocksdb/options.h"
#include "rocksdb/slice_transform.h"
#include "rocksdb/utilities/checkpoint.h"
#include "rocksdb/write_batch.h"
#include "state/internal/journal_codec.h"

namespace geodesic::state {
namespace {

constexpr std::string_view kJournalColumnFamily = "journal";
// Memtable size of the entity column families (see OpenColumnFamilies).
constexpr size_t kEntityMemtableBytes = size_t{8} << 20;
constexpr char kSchemaVersionKey[] = "schema_version";
// What OpenError says about a DB whose lock is held; IsStoreInUseError looks for it.
constexpr char kInUse[] = "it is already open (its LOCK is held";

std::string EntityKeyPrefix(Kind kind) { return EntityKey(kind, ""); }

// Maps a RocksDB error while opening `dir` to a status that names the dir and
// says what to do about it.
absl::Status OpenError(const std::string& dir, const rocksdb::Status& s) {
  const std::string detail = s.ToString();
  const std::string prefix = absl::StrCat("cannot open state store in ", dir, ": ");
  // RocksDB reports its LOCK file, held by another process ("While lock file:
  // <dir>/LOCK: Resource temporarily unavailable") or by another DB object in
  // this one ("lock hold by current process ... <dir>/LOCK").
  if (absl::StrContains(detail, "/LOCK")) {
    return absl::FailedPreconditionError(
        absl::StrCat(prefix, kInUse,
                     " by another process or by another store in this process; "
                     "is another pathcomp running on the same directory?): ",
                     detail));
  }
  if (absl::StrContains(detail, "Permission denied")) {
    return absl::PermissionDeniedError(absl::StrCat(prefix, "not writable: ", detail));
  }
  if (s.IsCorruption()) return absl::DataLossError(absl::StrCat(prefix, "corrupt: ", detail));
  // Missing parents, a file in the way, a full disk: the directory is unusable.
  if (s.IsIOError()) return absl::FailedPreconditionError(absl::StrCat(prefix, detail));
  return absl::InternalError(absl::StrCat(prefix, detail));
}

absl::Status RocksError(const std::string& what, const std::string& dir, const rocksdb::Status& s) {
  const std::string message = absl::StrCat(what, " (state store in ", dir, "): ", s.ToString());
  if (s.IsCorruption()) return absl::DataLossError(message);
  if (s.IsBusy() || s.IsTimedOut() || s.IsTryAgain()) return absl::UnavailableError(message);
  return absl::InternalError(message);
}

struct ColumnFamilyHandleDeleter {
  rocksdb::DB* db;
  void operator()(rocksdb::ColumnFamilyHandle* handle) const {
    db->DestroyColumnFamilyHandle(handle).PermitUncheckedError();
  }
};

// An open RocksDB with every column family; closes them in the right order.
struct OpenDb {
  std::unique_ptr<rocksdb::DB> db;
  std::map<std::string, std::unique_ptr<rocksdb::ColumnFamilyHandle, ColumnFamilyHandleDeleter>, std::less<>> cfs;
  // A read-only store's own directory (RocksDB's info log); removed after closing.
  std::string secondary_dir;

  OpenDb() = default;
  OpenDb(OpenDb&& other) noexcept
      : db(std::move(other.db)), cfs(std::move(other.cfs)), secondary_dir(std::exchange(other.secondary_dir, {})) {}
  OpenDb& operator=(OpenDb&&) = delete;
  ~OpenDb() {
    cfs.clear();  // handles before the DB
    if (db != nullptr) db->Close().PermitUncheckedError();
    if (!secondary_dir.empty()) {
      std::error_code ignored;
      std::filesystem::remove_all(secondary_dir, ignored);
    }
  }

  rocksdb::ColumnFamilyHandle* cf(std::string_view name) const {
    auto it = cfs.find(name);
    return it == cfs.end() ? nullptr : it->second.get();
  }
};

class RocksStore final : public Store {
 public:
  RocksStore(std::string dir, OpenDb db, bool sync_writes, bool read_only, uint64_t first_seq, uint64_t last_seq)
      : dir_(std::move(dir)),
        db_(std::move(db)),
        sync_writes_(sync_writes),
        read_only_(read_only),
        first_seq_(first_seq),
        last_seq_(last_seq) {
    for (Kind kind : kAllKinds) kind_cfs_[static_cast<size_t>(kind)] = db_.cf(KindName(kind));
    journal_cf_ = db_.cf(kJournalColumnFamily);
  }

  absl::StatusOr<uint64_t> Commit(const ChangeSet& changes) override { return Write(changes, sync_writes_); }
  absl::StatusOr<uint64_t> CommitUnsynced(const ChangeSet& changes) override { return Write(changes, false); }

  absl::Status Sync() override {
    if (!sync_writes_) return absl::OkStatus();
    // Syncs the write-ahead log up to at least every write made before the call.
    rocksdb::Status s = db_.db->SyncWAL();
    if (!s.ok()) return RocksError("sync the write-ahead log", dir_, s);
    return absl::OkStatus();
  }

  absl::StatusOr<std::string> GetRaw(Kind kind, std::string_view id) const override {
    if (!IsKnown(kind)) return absl::InvalidArgumentError(absl::StrCat("unknown kind ", static_cast<int>(kind)));
    rocksdb::ColumnFamilyHandle* cf = KindCf(kind);
    // Only a read-only store of an older DB may lack a kind's column family: no entities.
    if (cf == nullptr) return absl::NotFoundError(absl::StrCat(EntityKey(kind, id), " not found"));
    std::string value;
    rocksdb::Status s = db_.db->Get(rocksdb::ReadOptions(), cf, EntityKey(kind, id), &value);
    if (s.IsNotFound()) return absl::NotFoundError(absl::StrCat(EntityKey(kind, id), " not found"));
    if (!s.ok()) return RocksError(absl::StrCat("get ", EntityKey(kind, id)), dir_, s);
    return value;
  }

  absl::StatusOr<std::vector<std::pair<std::string, std::string>>> ListRaw(Kind kind) const override {
    if (!IsKnown(kind)) return absl::InvalidArgumentError(absl::StrCat("unknown kind ", static_cast<int>(kind)));
    rocksdb::ColumnFamilyHandle* cf = KindCf(kind);
    const std::string prefix = EntityKeyPrefix(kind);
    std::vector<std::pair<std::string, std::string>> out;
    if (cf == nullptr) return out;  // a read-only store of a DB without this kind's column family
    std::unique_ptr<rocksdb::Iterator> it(db_.db->NewIterator(rocksdb::ReadOptions(), cf));
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      std::string key = it->key().ToString();
      if (!absl::StartsWith(key, prefix)) {
        return absl::DataLossError(absl::StrCat("state store in ", dir_, ": key \"",
                                                absl::CHexEscape(it->key().ToString()), "\" in column family ",
                                                std::string(KindName(kind)), " lacks the prefix ", prefix));
      }
      key.erase(0, prefix.size());
      out.emplace_back(std::move(key), it->value().ToString());
    }
    if (!it->status().ok()) return RocksError(absl::StrCat("list ", std::string(KindName(kind))), dir_, it->status());
    return out;
  }

  absl::StatusOr<std::vector<JournalEntry>> ReadJournal(uint64_t from_seq, size_t limit) const override {
    std::vector<JournalEntry> out;
    if (limit == 0 || journal_cf_ == nullptr) return out;
    std::unique_ptr<rocksdb::Iterator> it(db_.db->NewIterator(rocksdb::ReadOptions(), journal_cf_));
    for (it->Seek(internal::EncodeJournalKey(std::max<uint64_t>(from_seq, 1))); it->Valid() && out.size() < limit;
         it->Next()) {
      const std::string_view key(it->key().data(), it->key().size());
      std::optional<uint64_t> seq = internal::DecodeJournalKey(key);
      if (!seq.has_value()) {
        return absl::DataLossError(absl::StrCat("state store in ", dir_, ": malformed journal key \"",
                                                absl::CHexEscape(it->key().ToString()), "\""));
      }
      absl::StatusOr<JournalEntry> entry =
          internal::DecodeJournalValue(*seq, std::string_view(it->value().data(), it->value().size()));
      if (!entry.ok()) {
        return absl::DataLossError(absl::StrCat("state store in ", dir_, ": ", entry.status().message()));
      }
      out.push_back(*std::move(entry));
    }
    if (!it->status().ok()) return RocksError("read journal", dir_, it->status());
    return out;
  }

  uint64_t LastJournalSeq() const override { return last_seq_.load(); }
  uint64_t FirstJournalSeq() const override { return first_seq_.load(); }

  absl::StatusOr<uint64_t> TrimJournal(uint64_t before_seq) override {
    if (read_only_) {
      return absl::FailedPreconditionError(
          absl::StrCat("trim the journal: the state store in ", dir_, " is open read-only"));
    }
    uint64_t first = 0, end = 0;
    std::string begin_key, end_key;
    {
      std::lock_guard lock(commit_mu_);
      first = first_seq_.load();
      end = std::min(before_seq, last_seq_.load());
      if (end <= first) return 0;
      begin_key = internal::EncodeJournalKey(first);
      end_key = internal::EncodeJournalKey(end);
      rocksdb::WriteBatch batch;
      rocksdb::Status s = batch.DeleteRange(journal_cf_, begin_key, end_key);
      if (s.ok()) {
        rocksdb::WriteOptions options;
        options.sync = sync_writes_;
        s = db_.db->Write(options, &batch);
      }
      if (!s.ok()) return RocksError(absl::StrCat("trim the journal before seq ", end), dir_, s);
      first_seq_.store(end);
    }
    // The dropped entries' files go now rather than whenever a compaction
    // happens to reach them: the journal is written in order, so nothing
    // else would rewrite its oldest files. Outside the commit lock (commits
    // go on meanwhile); only space is at stake: a failure here leaves the
    // range deleted all the same.
    const rocksdb::Slice begin(begin_key), stop(end_key);
    db_.db->CompactRange(rocksdb::CompactRangeOptions(), journal_cf_, &begin, &stop).PermitUncheckedError();
    return end - first;
  }

  uint64_t JournalBytes(uint64_t from_seq, uint64_t to_seq) const override {
    if (journal_cf_ == nullptr || from_seq > to_seq) return 0;
    const std::string begin = internal::EncodeJournalKey(from_seq);
    const std::string end = internal::EncodeJournalKey(to_seq == ~uint64_t{0} ? to_seq : to_seq + 1);
    const rocksdb::Range range(begin, end);
    uint64_t bytes = 0;
    rocksdb::SizeApproximationOptions options;
    options.include_memtables = true;
    options.include_files = true;
    db_.db->GetApproximateSizes(options, journal_cf_, &range, 1, &bytes).PermitUncheckedError();
    return bytes;
  }

  // CheckpointRocksStore's RocksDB part: the checkpoint itself.
  absl::Status WriteCheckpoint(const std::string& dir) const {
    if (read_only_) {
      return absl::InvalidArgumentError(
          absl::StrCat("cannot checkpoint the state store in ", dir_, ": it is open read-only"));
    }
    rocksdb::Checkpoint* raw = nullptr;
    rocksdb::Status s = rocksdb::Checkpoint::Create(db_.db.get(), &raw);
    std::unique_ptr<rocksdb::Checkpoint> checkpoint(raw);
    // log_size_for_flush 0: flush every column family first, so the copy is
    // mostly table files (its live WAL is copied too: nothing is missed).
    if (s.ok()) s = checkpoint->CreateCheckpoint(dir, /*log_size_for_flush=*/0);
    if (!s.ok()) return RocksError(absl::StrCat("checkpoint into ", dir), dir_, s);
    return absl::OkStatus();
  }

 private:
  // One commit; `sync`: durable before it returns.
  absl::StatusOr<uint64_t> Write(const ChangeSet& changes, bool sync) {
    if (read_only_) {
      return absl::FailedPreconditionError(
          absl::StrCat("commit \"", changes.cause(), "\": the state store in ", dir_, " is open read-only"));
    }
    if (absl::Status valid = changes.Validate(); !valid.ok()) return valid;
    rocksdb::WriteBatch batch;
    for (const Change& change : changes.changes()) {
      rocksdb::ColumnFamilyHandle* cf = KindCf(change.kind);
      if (cf == nullptr) {  // a nullptr would mean the default column family
        return absl::InvalidArgumentError(absl::StrCat("unknown kind ", static_cast<int>(change.kind)));
      }
      const std::string key = EntityKey(change.kind, change.id);
      rocksdb::Status s = change.value.has_value() ? batch.Put(cf, key, *change.value) : batch.Delete(cf, key);
      if (!s.ok()) return RocksError(absl::StrCat("commit \"", changes.cause(), "\""), dir_, s);
    }

    // Encoded before the lock: a plan's digest takes ~0.1 s on a large
    // backbone, and telemetry commits wait for the lock.
    const std::string journal_value =
        internal::EncodeJournalValue(absl::ToUnixMillis(absl::Now()), changes.cause(), changes.changes());
    std::lock_guard lock(commit_mu_);
    const uint64_t seq = last_seq_.load() + 1;
    rocksdb::Status s = batch.Put(journal_cf_, internal::EncodeJournalKey(seq), journal_value);
    if (s.ok()) {
      rocksdb::WriteOptions options;
      options.sync = sync;
      s = db_.db->Write(options, &batch);
    }
    if (!s.ok()) return RocksError(absl::StrCat("commit \"", changes.cause(), "\""), dir_, s);
    last_seq_.store(seq);
    return seq;
  }

  static bool IsKnown(Kind kind) { return static_cast<size_t>(kind) < kAllKinds.size(); }
  rocksdb::ColumnFamilyHandle* KindCf(Kind kind) const {
    return IsKnown(kind) ? kind_cfs_[static_cast<size_t>(kind)] : nullptr;
  }

  const std::string dir_;
  const OpenDb db_;
  const bool sync_writes_;
  const bool read_only_;
  std::array<rocksdb::ColumnFamilyHandle*, kAllKinds.size()> kind_cfs_{};
  rocksdb::ColumnFamilyHandle* journal_cf_ = nullptr;  // null only in a read-only store of a DB without one
  // Serializes commits so seqs are assigned and written in order. (It also
  // keeps RocksDB on its single-writer memtable path, which uses the insert
  // hints set in OpenColumnFamilies.) std::mutex, not absl::Mutex, so
  // ThreadSanitizer sees it (Debian's Abseil is not TSan-instrumented).
  std::mutex commit_mu_;
  // Written only under commit_mu_, after the commit's (or trim's) write succeeded.
  std::atomic<uint64_t> first_seq_;
  std::atomic<uint64_t> last_seq_;
};

// Opens the DB with every column family it has plus every one the store needs.
absl::StatusOr<OpenDb> OpenColumnFamilies(const std::string& dir) {
  rocksdb::Options options;
  options.create_if_missing = true;
  options.create_missing_column_families = true;

  std::set<std::string> names = {rocksdb::kDefaultColumnFamilyName, std::string(kJournalColumnFamily)};
  for (Kind kind : kAllKinds) names.insert(std::string(KindName(kind)));
  std::error_code ec;
  if (std::filesystem::exists(std::filesystem::path(dir) / "CURRENT", ec)) {
    std::vector<std::string> existing;
    rocksdb::Status s = rocksdb::DB::ListColumnFamilies(options, dir, &existing);
    if (!s.ok()) return OpenError(dir, s);
    names.insert(existing.begin(), existing.end());
  }

  std::vector<rocksdb::ColumnFamilyDescriptor> descriptors;
  for (const std::string& name : names) {
    rocksdb::ColumnFamilyOptions cf_options(options);
    // Entities are overwritten again and again (link health on every report).
    // With the whole key as the hint "prefix", the memtable remembers where each
    // key's latest version went and inserts the next one there instead of
    // searching its skiplist from the top: about a third fewer instructions per
    // update. Costs ~250 bytes of memtable arena per distinct key in a memtable.
    // Not for the journal: its keys are written once, in order.
    //
    // Their memtables are kept small as well: a few thousand keys rewritten on
    // every report pile up as versions, and a 64 MiB skiplist of them no
    // longer fits the caches, so every insert walked it through cache misses
    // (2-3 us per link update, on the one thread that commits telemetry).
    // At 8 MiB inserts stay in cache and the flush, on RocksDB's own thread,
    // writes only the latest version of each key. bench_ingest on this 2-core
    // VM: 178-184k updates/s with the default, 229-264k with 8 MiB.
    if (KindFromName(name).has_value()) {
      cf_options.memtable_insert_with_hint_prefix_extractor.reset(rocksdb::NewNoopTransform());
      cf_options.write_buffer_size = kEntityMemtableBytes;
    }
    descriptors.emplace_back(name, std::move(cf_options));
  }
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* raw_db = nullptr;
  rocksdb::Status s = rocksdb::DB::Open(options, dir, descriptors, &handles, &raw_db);
  if (!s.ok()) return OpenError(dir, s);

  OpenDb db;
  db.db.reset(raw_db);
  for (rocksdb::ColumnFamilyHandle* handle : handles) {
    db.cfs.emplace(handle->GetName(), std::unique_ptr<rocksdb::ColumnFamilyHandle, ColumnFamilyHandleDeleter>(
                                          handle, ColumnFamilyHandleDeleter{raw_db}));
  }
  return db;
}

// Opens the existing DB in `dir` as a secondary instance with the column
// families it has: no lock, no writes to `dir`.
absl::StatusOr<OpenDb> OpenColumnFamiliesReadOnly(const std::string& dir) {
  std::error_code ec;
  if (!std::filesystem::exists(std::filesystem::path(dir) / "CURRENT", ec)) {
    return absl::NotFoundError(absl::StrCat("cannot open state store in ", dir, ": there is no store there",
                                            ec ? absl::StrCat(" (", ec.message(), ")") : ""));
  }
  rocksdb::Options options;
  options.create_if_missing = false;
  options.max_open_files = -1;  // required of a secondary instance
  std::vector<std::string> names;
  rocksdb::Status s = rocksdb::DB::ListColumnFamilies(options, dir, &names);
  if (!s.ok()) return OpenError(dir, s);
  std::vector<rocksdb::ColumnFamilyDescriptor> descriptors;
  for (const std::string& name : names) descriptors.emplace_back(name, rocksdb::ColumnFamilyOptions(options));

  std::string secondary = (std::filesystem::temp_directory_path(ec) / "geodesic-store-reader-XXXXXX").string();
  if (ec || mkdtemp(secondary.data()) == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot open state store in ", dir, ": cannot make a temporary directory ", secondary));
  }
  OpenDb db;
  db.secondary_dir = secondary;  // removed by ~OpenDb, also on failure
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* raw_db = nullptr;
  s = rocksdb::DB::OpenAsSecondary(options, dir, secondary, descriptors, &handles, &raw_db);
  if (!s.ok()) return OpenError(dir, s);
  db.db.reset(raw_db);
  for (rocksdb::ColumnFamilyHandle* handle : handles) {
    db.cfs.emplace(handle->GetName(), std::unique_ptr<rocksdb::ColumnFamilyHandle, ColumnFamilyHandleDeleter>(
                                          handle, ColumnFamilyHandleDeleter{raw_db}));
  }
  return db;
}

absl::StatusOr<bool> IsEmpty(const std::string& dir, const OpenDb& db) {
  for (const auto& [name, cf] : db.cfs) {
    std::unique_ptr<rocksdb::Iterator> it(db.db->NewIterator(rocksdb::ReadOptions(), cf.get()));
    it->SeekToFirst();
    if (it->Valid()) return false;
    if (!it->status().ok()) return RocksError(absl::StrCat("scan ", name), dir, it->status());
  }
  return true;
}

absl::Status WriteSchemaVersion(const std::string& dir, const OpenDb& db, int version, rocksdb::WriteBatch& batch) {
  rocksdb::Status s = batch.Put(db.cf(rocksdb::kDefaultColumnFamilyName), kSchemaVersionKey, absl::StrCat(version));
  if (s.ok()) {
    rocksdb::WriteOptions options;
    options.sync = true;
    s = db.db->Write(options, &batch);
  }
  if (!s.ok()) return RocksError(absl::StrCat("write schema version ", version), dir, s);
  return absl::OkStatus();
}

// Brings the DB to kSchemaVersion: stamps a new DB, refuses a newer one, runs
// the migrations of an older one.
absl::Status PrepareSchema(const std::string& dir, const OpenDb& db, const std::vector<Migration>& migrations) {
  std::map<int, const Migration*> by_version;
  for (const Migration& migration : migrations) {
    if (!migration.apply || !by_version.emplace(migration.from_version, &migration).second) {
      return absl::InvalidArgumentError(absl::StrCat("cannot open state store in ", dir, ": migration from schema ",
                                                     migration.from_version, " is empty or registered twice"));
    }
  }

  std::string stored;
  rocksdb::Status s =
      db.db->Get(rocksdb::ReadOptions(), db.cf(rocksdb::kDefaultColumnFamilyName), kSchemaVersionKey, &stored);
  if (s.IsNotFound()) {
    absl::StatusOr<bool> empty = IsEmpty(dir, db);
    if (!empty.ok()) return empty.status();
    if (!*empty) {
      return absl::DataLossError(
          absl::StrCat("cannot open state store in ", dir, ": it holds data but no ", kSchemaVersionKey, " key"));
    }
    rocksdb::WriteBatch batch;
    return WriteSchemaVersion(dir, db, kSchemaVersion, batch);
  }
  if (!s.ok()) return RocksError("read schema version", dir, s);

  int version = 0;
  if (!absl::SimpleAtoi(stored, &version) || version < 0) {
    return absl::DataLossError(absl::StrCat("cannot open state store in ", dir, ": unreadable ", kSchemaVersionKey,
                                            " \"", absl::CHexEscape(stored), "\""));
  }
  if (version > kSchemaVersion) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot open state store in ", dir, ": its schema version ", version, " is newer than this build's ",
        kSchemaVersion, "; it was written by a newer pathcomp (downgrades are not supported)"));
  }

  MigrationContext ctx;
  ctx.db = db.db.get();
  for (const auto& [name, cf] : db.cfs) ctx.column_families.emplace(name, cf.get());
  for (; version < kSchemaVersion; ++version) {
    auto it = by_version.find(version);
    if (it == by_version.end()) {
      return absl::FailedPreconditionError(absl::StrCat("cannot open state store in ", dir, ": its schema version ",
                                                        version, " is older than this build's ", kSchemaVersion,
                                                        " and no migration from ", version, " is registered"));
    }
    rocksdb::WriteBatch batch;
    if (absl::Status migrated = it->second->apply(ctx, batch); !migrated.ok()) {
      return absl::Status(migrated.code(), absl::StrCat("cannot open state store in ", dir, ": migration from schema ",
                                                        version, " failed: ", migrated.message()));
    }
    if (absl::Status written = WriteSchemaVersion(dir, db, version + 1, batch); !written.ok()) return written;
  }
  return absl::OkStatus();
}

// A read-only store reads only this build's schema: it can neither stamp nor migrate.
absl::Status CheckSchemaReadOnly(const std::string& dir, const OpenDb& db) {
  rocksdb::ColumnFamilyHandle* cf = db.cf(rocksdb::kDefaultColumnFamilyName);
  std::string stored;
  rocksdb::Status s = db.db->Get(rocksdb::ReadOptions(), cf, kSchemaVersionKey, &stored);
  if (s.IsNotFound()) {
    absl::StatusOr<bool> empty = IsEmpty(dir, db);
    if (!empty.ok()) return empty.status();
    if (*empty) return absl::OkStatus();  // created, never written: nothing to misread
    return absl::DataLossError(
        absl::StrCat("cannot open state store in ", dir, ": it holds data but no ", kSchemaVersionKey, " key"));
  }
  if (!s.ok()) return RocksError("read schema version", dir, s);
  int version = 0;
  if (!absl::SimpleAtoi(stored, &version) || version < 0) {
    return absl::DataLossError(absl::StrCat("cannot open state store in ", dir, ": unreadable ", kSchemaVersionKey,
                                            " \"", absl::CHexEscape(stored), "\""));
  }
  if (version > kSchemaVersion) {
    return absl::FailedPreconditionError(absl::StrCat("cannot open state store in ", dir, ": its schema version ",
                                                      version, " is newer than this build's ", kSchemaVersion,
                                                      "; read it with a newer build"));
  }
  if (version < kSchemaVersion) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot open state store in ", dir, ": its schema version ", version, " is older than this build's ",
                     kSchemaVersion, "; start pathcomp on it once to migrate it"));
  }
  return absl::OkStatus();
}

enum class JournalEnd { kFirst, kLast };

// The seq of the oldest journal entry (kFirst; 1 when there is none) or of
// the newest (kLast; 0 when there is none).
absl::StatusOr<uint64_t> ReadJournalSeq(const std::string& dir, const OpenDb& db, JournalEnd end) {
  const bool first = end == JournalEnd::kFirst;
  rocksdb::ColumnFamilyHandle* journal = db.cf(kJournalColumnFamily);
  if (journal == nullptr) return first ? 1 : 0;  // a read-only store of a DB that never had a journal
  std::unique_ptr<rocksdb::Iterator> it(db.db->NewIterator(rocksdb::ReadOptions(), journal));
  if (first) {
    it->SeekToFirst();
  } else {
    it->SeekToLast();
  }
  if (!it->status().ok()) return RocksError("read journal", dir, it->status());
  if (!it->Valid()) return first ? 1 : 0;
  const std::string_view key(it->key().data(), it->key().size());
  std::optional<uint64_t> seq = internal::DecodeJournalKey(key);
  if (!seq.has_value()) {
    return absl::DataLossError(absl::StrCat("cannot open state store in ", dir, ": malformed journal key \"",
                                            absl::CHexEscape(it->key().ToString()), "\""));
  }
  return *seq;
}

}  // namespace

absl::StatusOr<StorePtr> OpenRocksStore(const std::string& dir, RocksStoreOptions opts) {
  absl::StatusOr<OpenDb> db = opts.read_only ? OpenColumnFamiliesReadOnly(dir) : OpenColumnFamilies(dir);
  if (!db.ok()) return db.status();
  absl::Status schema = opts.read_only ? CheckSchemaReadOnly(dir, *db) : PrepareSchema(dir, *db, opts.migrations);
  if (!schema.ok()) return schema;
  absl::StatusOr<uint64_t> last_seq = ReadJournalSeq(dir, *db, JournalEnd::kLast);
  if (!last_seq.ok()) return last_seq.status();
  absl::StatusOr<uint64_t> first_seq = ReadJournalSeq(dir, *db, JournalEnd::kFirst);
  if (!first_seq.ok()) return first_seq.status();
  return std::make_unique<RocksStore>(dir, *std::move(db), opts.sync_writes && !opts.read_only, opts.read_only,
                                      *first_seq, *last_seq);
}

absl::StatusOr<CheckpointInfo> CheckpointRocksStore(const Store& store, const std::string& dir) {
  const auto* rocks = dynamic_cast<const RocksStore*>(&store);
  if (rocks == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("cannot checkpoint into ", dir, ": the store is not a RocksDB store"));
  }
  std::error_code ec;
  const std::filesystem::path path(dir);
  if (std::filesystem::symlink_status(path, ec).type() != std::filesystem::file_type::not_found) {
    return absl::AlreadyExistsError(absl::StrCat("cannot checkpoint into ", dir, ": it exists"));
  }
  const std::filesystem::path parent = path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  if (!std::filesystem::is_directory(parent, ec)) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot checkpoint into ", dir, ": its parent ", parent.string(), " is not a directory"));
  }
  // The copy's own position is read from the copy: commits went on while it was taken.
  absl::Status result = rocks->WriteCheckpoint(dir);
  CheckpointInfo info{.last_journal_seq = 0, .schema_version = kSchemaVersion};
  if (result.ok()) {
    absl::StatusOr<OpenDb> copy = OpenColumnFamiliesReadOnly(dir);
    result = copy.status();
    if (result.ok()) result = CheckSchemaReadOnly(dir, *copy);
    if (result.ok()) {
      absl::StatusOr<uint64_t> last_seq = ReadJournalSeq(dir, *copy, JournalEnd::kLast);
      result = last_seq.status();
      if (last_seq.ok()) info.last_journal_seq = *last_seq;
    }
  }
  if (!result.ok()) {
    std::filesystem::remove_all(path, ec);
    return result;
  }
  return info;
}

bool IsStoreInUseError(const absl::Status& status) {
  return status.code() == absl::StatusCode::kFailedPrecondition && absl::StrContains(status.message(), kInUse);
}

}  // namespace geodesic::state
