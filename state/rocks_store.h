#pragma once
// The durable Store: a RocksDB database in one directory (DESIGN §3).
//
// Layout: one column family per Kind, named KindName(kind), with keys
// "<kind>/<id>" and serialized protobuf values; a "journal" column family with
// one entry per commit (encoding in state/internal/journal_codec.h); the
// schema version under "schema_version" in the default column family, as a
// decimal string.
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "state/rocks_migration.h"
#include "state/store.h"

namespace geodesic::state {

struct RocksStoreOptions {
  // Whether each Commit waits for its write to reach stable storage (fsync of
  // the WAL). Without it a commit survives a crash of the process (RocksDB's
  // WAL is in the OS page cache) but not a power loss or kernel crash, which
  // may lose the latest commits. Set it whenever a commit is acknowledged to
  // someone who will not resend it (exactly-once telemetry acks). Costs one
  // fsync per Commit.
  bool sync_writes = false;
  // Migrations to run on a DB whose schema is older than kSchemaVersion, at
  // most one per from_version; they run in order of from_version. By default
  // this build's own (StoreMigrations()), as pathcomp opens its store.
  std::vector<Migration> migrations = StoreMigrations();
  // Opens an existing store for reading only (tools such as `tectl --store`),
  // as a RocksDB secondary instance: it takes no lock, so it may run beside the
  // pathcomp that owns `dir` without disturbing it, and it writes nothing to
  // `dir` (RocksDB's info log goes to a temporary directory, removed when the
  // store is destroyed). Reads see `dir` as it was when opened. Commit returns
  // FailedPrecondition. Nothing is created, stamped or migrated: `sync_writes`
  // and `migrations` are ignored.
  bool read_only = false;
};

// Opens the store in `dir`, creating `dir` (not its parents) and an empty store
// (at kSchemaVersion) when there is none. The store holds RocksDB's lock on `dir`
// until destroyed. Errors name `dir` and the reason:
//   FailedPrecondition  another store has `dir` open (in this or another
//                       process); `dir` is unusable (its parent is missing, a
//                       file is in the way, I/O fails); the DB's schema is
//                       newer than this build's; an older schema lacks a
//                       registered migration.
//   PermissionDenied    `dir` or its files are not writable.
//   DataLoss            RocksDB reports corruption; the schema version is
//                       missing (in a DB that holds data) or unreadable; a
//                       journal key is malformed.
//   InvalidArgument     two migrations share a from_version, or one is empty.
//   Internal            other RocksDB errors.
//   A failing migration's own code, with its message prefixed.
// With `read_only`, also:
//   NotFound            `dir` holds no store.
//   FailedPrecondition  the DB's schema is not this build's kSchemaVersion
//                       (older ones are migrated by a read-write open only).
// The returned Store is thread-safe.
[[nodiscard]] absl::StatusOr<StorePtr> OpenRocksStore(const std::string& dir, RocksStoreOptions opts = {});

// What a checkpoint holds.
struct CheckpointInfo {
  uint64_t last_journal_seq = 0;  // the newest commit in the copy
  int schema_version = 0;         // always kSchemaVersion (an open store is migrated)
};

// Writes a consistent copy of `store` (a store OpenRocksStore returned, open
// read-write) into `dir`, which must not exist; its parent must. The copy is
// the store as of one commit: it holds every commit up to last_journal_seq
// and none after, while commits go on meanwhile. Files are hard-linked where
// `dir` is on the store's file system and copied otherwise, so a checkpoint
// costs little space until the store compacts. The copy is a store directory
// of its own, opened (read-only) once before this returns to read its
// position. Errors name `dir`: InvalidArgument when `store` is not a
// read-write RocksStore; AlreadyExists when `dir` exists; FailedPrecondition
// when its parent is missing; Internal for other RocksDB errors. On error
// nothing is left at `dir`. Thread-safe, like the store.
[[nodiscard]] absl::StatusOr<CheckpointInfo> CheckpointRocksStore(const Store& store, const std::string& dir);

// True when `status` is OpenRocksStore's error for a `dir` whose lock another
// store holds (in this or another process: typically a running pathcomp).
bool IsStoreInUseError(const absl::Status& status);

}  // namespace geodesic::state
