#pragma once
// The store of pathcomp's model: entities by (kind, id), values serialized
// protobuf, and a journal of every commit with its cause, for history and replay.
// pathcomp is the only writer; its own threads are the readers.
//
// Implementations: OpenRocksStore (rocks_store.h) and NewMemoryStore
// (memory_store.h). Typed access: state/typed_access.h.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "state/change_set.h"
#include "state/journal_entry.h"
#include "state/kind.h"

namespace geodesic::state {

// Thread-safe: all methods may be called concurrently. Commits are serialized;
// a reader sees a commit entirely or not at all. Separate calls are not one
// snapshot: two reads may straddle a commit.
class Store {
 public:
  virtual ~Store() = default;

  // Applies every change of `changes` or none, together with its journal entry,
  // and returns the entry's seq (LastJournalSeq() + 1). InvalidArgument when
  // changes.Validate() fails; the store is then unchanged and no seq is used.
  // Other errors (I/O) also leave the store unchanged.
  [[nodiscard]] virtual absl::StatusOr<uint64_t> Commit(const ChangeSet& changes) = 0;

  // As Commit, but durable only once a Sync() called after it returns OK:
  // readers see it at once, and a crash before that may lose it. For a
  // writer that overlaps one commit's sync with its next commit and answers
  // nobody about a commit before its Sync().
  [[nodiscard]] virtual absl::StatusOr<uint64_t> CommitUnsynced(const ChangeSet& changes) = 0;
  // Makes every commit returned before this call durable (OK at once for a
  // store that does not sync its writes). Concurrent commits may go on.
  [[nodiscard]] virtual absl::Status Sync() = 0;

  // The bytes of one entity; NotFound when absent.
  [[nodiscard]] virtual absl::StatusOr<std::string> GetRaw(Kind kind, std::string_view id) const = 0;

  // All (id, bytes) of a kind, ordered by id (bytewise), from one snapshot.
  [[nodiscard]] virtual absl::StatusOr<std::vector<std::pair<std::string, std::string>>> ListRaw(Kind kind) const = 0;

  // Journal entries with seq >= from_seq, at most `limit`, ascending by seq.
  // Empty when from_seq > LastJournalSeq(). DataLoss when an entry is corrupt.
  // A put of a kind journaled by digest (JournaledByDigest) comes with its
  // value's digest, not the value (Change::digest).
  [[nodiscard]] virtual absl::StatusOr<std::vector<JournalEntry>> ReadJournal(uint64_t from_seq,
                                                                              size_t limit) const = 0;

  // The seq of the latest commit; 0 for a store that was never written.
  virtual uint64_t LastJournalSeq() const = 0;

  // The seq of the oldest journal entry kept: 1 until TrimJournal dropped
  // some (and for a store that was never written).
  virtual uint64_t FirstJournalSeq() const = 0;
  // Drops the journal entries with seq < `before_seq`, but never the newest
  // (the seqs of a reopened store go on from it): `before_seq` is capped at
  // LastJournalSeq(). The entities keep every change the entries made; only
  // their history goes. Returns how many entries were dropped (0: none
  // older). Durable when it returns, as a Commit.
  [[nodiscard]] virtual absl::StatusOr<uint64_t> TrimJournal(uint64_t before_seq) = 0;
  // About how many bytes the journal entries from_seq..to_seq (inclusive)
  // take: what a retention by size weighs. An estimate (RocksDB's of its
  // files and memtables; the encoded size in a MemoryStore).
  virtual uint64_t JournalBytes(uint64_t from_seq, uint64_t to_seq) const = 0;
};

using StorePtr = std::unique_ptr<Store>;

}  // namespace geodesic::state
