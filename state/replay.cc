#include "state/replay.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "state/internal/journal_codec.h"

namespace geodesic::state {
namespace {

// Entries read from `from` per ReadJournal call.
constexpr size_t kReplayPageSize = 256;

}  // namespace

absl::Status ReplayJournal(const Store& from, uint64_t up_to_seq, Store& into) {
  if (into.LastJournalSeq() != 0) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot replay into a store that is not empty (its journal is at seq ", into.LastJournalSeq(), ")"));
  }
  if (up_to_seq > from.LastJournalSeq()) {
    return absl::OutOfRangeError(
        absl::StrCat("cannot replay up to seq ", up_to_seq, ": the journal ends at seq ", from.LastJournalSeq()));
  }
  if (up_to_seq > 0 && from.FirstJournalSeq() > 1) {
    return absl::FailedPreconditionError(absl::StrCat("cannot replay up to seq ", up_to_seq, ": the journal starts at seq ",
                                                      from.FirstJournalSeq(), " (older entries were trimmed)"));
  }
  uint64_t next_seq = 1;
  while (next_seq <= up_to_seq) {
    // Never read past up_to_seq: entries after it may be corrupt without harm.
    const size_t limit = static_cast<size_t>(std::min<uint64_t>(kReplayPageSize, up_to_seq - next_seq + 1));
    absl::StatusOr<std::vector<JournalEntry>> page = from.ReadJournal(next_seq, limit);
    if (!page.ok()) return page.status();
    if (page->empty()) {
      return absl::DataLossError(
          absl::StrCat("journal ends before seq ", next_seq, " though it reported seq ", up_to_seq));
    }
    for (const JournalEntry& entry : *page) {
      if (entry.seq > up_to_seq) return absl::OkStatus();
      if (entry.seq != next_seq) {
        return absl::DataLossError(absl::StrCat("journal has a gap: expected seq ", next_seq, ", found ", entry.seq));
      }
      ChangeSet changes(entry.cause);
      for (const Change& change : entry.changes) {
        if (change.value.has_value()) {
          changes.PutRaw(change.kind, change.id, *change.value);
        } else if (change.digest.has_value()) {
          absl::StatusOr<std::string> held = from.GetRaw(change.kind, change.id);
          if (absl::IsNotFound(held.status())) continue;  // dropped since: left out
          if (!held.ok()) return held.status();
          if (internal::DigestOf(*held) != *change.digest) continue;  // put again since: that put replays it
          changes.PutRaw(change.kind, change.id, *std::move(held));
        } else {
          changes.Delete(change.kind, change.id);
        }
      }
      if (changes.empty()) {
        return absl::FailedPreconditionError(
            absl::StrCat("cannot replay journal seq ", entry.seq, " (\"", entry.cause,
                         "\"): every value it put is journaled by digest and no longer held"));
      }
      absl::StatusOr<uint64_t> seq = into.Commit(changes);
      if (!seq.ok()) {
        return absl::Status(seq.status().code(),
                            absl::StrCat("replay of journal seq ", entry.seq, ": ", seq.status().message()));
      }
      if (*seq != entry.seq) {
        return absl::InternalError(absl::StrCat("replay of journal seq ", entry.seq, " was committed as seq ", *seq,
                                                "; was the target store written to meanwhile?"));
      }
      ++next_seq;
    }
  }
  return absl::OkStatus();
}

}  // namespace geodesic::state
