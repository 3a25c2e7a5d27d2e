#pragma once
// Internal to state/: the on-disk encoding of journal entries and their keys in
// RocksStore's "journal" column family.
//
// Key: the seq as 8 bytes big-endian, so keys sort in seq order.
//
// Value (all integers little-endian, fixed width):
//   entry   := u8 format (= 1)
//              i64 at_unix_ms
//              bytes cause
//              u32 change_count
//              change * change_count
//   change  := bytes kind_name         (KindName(), e.g. "link")
//              bytes id
//              u8 op                   (1 = put, 0 = delete, 2 = put by digest)
//              bytes value             (only when op = 1)
//              u64 size, 32 bytes sha256  (only when op = 2: the value's)
//   bytes   := u32 length, then `length` bytes
// A put of a kind journaled by digest (JournaledByDigest) is always written
// as op 2 (schema 2 on); op 1 of such a kind is what schema 1 wrote, and
// decodes as it was (the migration from 1 rewrites it).
// The seq is not repeated in the value; it is the key. Decoding checks every
// length against the bytes left, rejects unknown formats, kinds and ops, and
// trailing bytes. Pure functions; thread-safe.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "state/journal_entry.h"

namespace geodesic::state::internal {

inline constexpr uint8_t kJournalFormat = 1;

std::string EncodeJournalKey(uint64_t seq);

// The size and SHA-256 of `value`.
ValueDigest DigestOf(std::string_view value);
// What the journal keeps of `change`: the change, or for a put of a kind
// journaled by digest, the change with its value's digest in place of it.
Change JournaledChange(const Change& change);
// nullopt when `key` is not 8 bytes.
std::optional<uint64_t> DecodeJournalKey(std::string_view key);

// Encodes everything but entry.seq; a value of a kind journaled by digest
// as its digest (JournaledChange).
std::string EncodeJournalValue(const JournalEntry& entry);
// The same from the parts of an entry, so a commit needs no JournalEntry (which
// would copy every value of its ChangeSet).
std::string EncodeJournalValue(int64_t at_unix_ms, std::string_view cause, const std::vector<Change>& changes);
// The size EncodeJournalValue's result has for these parts, without
// encoding (or hashing) anything.
size_t JournalValueSize(std::string_view cause, const std::vector<Change>& changes);
// DataLoss, naming `seq` and what is wrong, when `value` is not a valid encoding.
[[nodiscard]] absl::StatusOr<JournalEntry> DecodeJournalValue(uint64_t seq, std::string_view value);

}  // namespace geodesic::state::internal
