#pragma once
// Schema migrations of a RocksStore: how a DB written by an older version of
// the store is brought to the current schema (kSchemaVersion) when opened.
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace rocksdb {
class ColumnFamilyHandle;
class DB;
class WriteBatch;
}  // namespace rocksdb

namespace geodesic::state {

// The schema this build writes. Bump it, and register a Migration from the old
// number in StoreMigrations(), whenever the layout of keys or values changes
// incompatibly.
//
// Upgrade test data: tests/data/store-v<N>/ is a backup of a store written at
// schema N (made by tests/state/make_store_fixture, see
// tests/data/README.md), and store_upgrade_test opens it with this build.
// When you bump kSchemaVersion, keep the old fixture (the new build must
// migrate it: the test will fail until a migration is registered) and write
// the new version's fixture with make_store_fixture.
//
// Schema 2: the journal keeps puts of kinds journaled by digest
// (JournaledByDigest, state/kind.h) as their digest, no longer their value.
inline constexpr int kSchemaVersion = 2;

// What a migration may read and write.
struct MigrationContext {
  // The open DB, for reads (Get, iterators). Do not write to it directly:
  // put every write into `batch`.
  rocksdb::DB* db = nullptr;
  // Every column family of the DB by name: "default", "journal", one per Kind
  // (KindName), and any other the DB already had on disk.
  std::map<std::string, rocksdb::ColumnFamilyHandle*, std::less<>> column_families;
};

// Upgrades a DB from schema `from_version` to `from_version + 1`. `apply` reads
// through `ctx.db` and adds its writes to `batch`; the store then writes the
// batch together with the new schema version in one synced WriteBatch, so a
// migration is applied entirely or not at all and never twice. A non-OK status
// aborts the open and leaves the DB at `from_version`.
struct Migration {
  int from_version = 0;
  std::function<absl::Status(const MigrationContext& ctx, rocksdb::WriteBatch& batch)> apply;
};

// This build's migrations, from every older schema it can open (1 -> 2:
// journal entries of schema 1 that copied a value now journaled by digest
// are rewritten with its digest, so the plans they held leave the disk at
// RocksDB's next compaction of them). The default of
// RocksStoreOptions::migrations.
std::vector<Migration> StoreMigrations();

}  // namespace geodesic::state
