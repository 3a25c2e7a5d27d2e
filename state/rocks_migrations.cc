// This build's schema migrations (rocks_migration.h).
#include <memory>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "rocksdb/db.h"
#include "rocksdb/iterator.h"
#include "rocksdb/write_batch.h"
#include "state/internal/journal_codec.h"
#include "state/rocks_migration.h"

namespace geodesic::state {
namespace {

// 1 -> 2: every journal entry that holds the value of a kind now journaled by
// digest is written again, each such value as its digest.
absl::Status JournalValuesByDigest(const MigrationContext& ctx, rocksdb::WriteBatch& batch) {
  auto journal = ctx.column_families.find("journal");
  if (journal == ctx.column_families.end()) return absl::OkStatus();  // never had one: nothing journaled
  rocksdb::ReadOptions options;
  options.fill_cache = false;  // read once, to be rewritten
  std::unique_ptr<rocksdb::Iterator> it(ctx.db->NewIterator(options, journal->second));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    const std::string_view key(it->key().data(), it->key().size());
    const std::optional<uint64_t> seq = internal::DecodeJournalKey(key);
    if (!seq.has_value()) {
      return absl::DataLossError(absl::StrCat("malformed journal key \"", absl::CHexEscape(absl::string_view(key.data(), key.size())), "\""));
    }
    absl::StatusOr<JournalEntry> entry =
        internal::DecodeJournalValue(*seq, std::string_view(it->value().data(), it->value().size()));
    if (!entry.ok()) return entry.status();
    bool holds_value = false;
    for (const Change& change : entry->changes) holds_value |= change.value.has_value() && JournaledByDigest(change.kind);
    if (!holds_value) continue;
    rocksdb::Status s = batch.Put(journal->second, it->key(), internal::EncodeJournalValue(*entry));
    if (!s.ok()) return absl::InternalError(absl::StrCat("rewrite journal entry ", *seq, ": ", s.ToString()));
  }
  if (!it->status().ok()) return absl::InternalError(absl::StrCat("read journal: ", it->status().ToString()));
  return absl::OkStatus();
}

}  // namespace

std::vector<Migration> StoreMigrations() { return {Migration{.from_version = 1, .apply = JournalValuesByDigest}}; }

}  // namespace geodesic::state
