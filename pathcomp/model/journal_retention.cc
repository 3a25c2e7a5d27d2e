#include "pathcomp/model/journal_retention.h"

#include <algorithm>
#include <vector>

namespace geodesic::pathcomp {
namespace {

// The first seq in [first, last] for which `keep` holds, given that it holds
// for every later one once it holds for one; `last` when it holds for none.
template <typename Keep>
absl::StatusOr<uint64_t> FirstKept(uint64_t first, uint64_t last, const Keep& keep) {
  uint64_t low = first, high = last;  // the answer is in [low, high]
  while (low < high) {
    const uint64_t mid = low + (high - low) / 2;
    absl::StatusOr<bool> kept = keep(mid);
    if (!kept.ok()) return kept.status();
    if (*kept) {
      high = mid;
    } else {
      low = mid + 1;
    }
  }
  return low;
}

}  // namespace

absl::StatusOr<uint64_t> JournalRetentionCut(const state::Store& store, const JournalRetention& retention,
                                             int64_t now_unix_ms) {
  const uint64_t first = store.FirstJournalSeq(), last = store.LastJournalSeq();
  if (last <= first) return first;
  const int64_t oldest_kept_ms =
      now_unix_ms - std::chrono::duration_cast<std::chrono::milliseconds>(retention.max_age).count();
  absl::StatusOr<uint64_t> by_age = FirstKept(first, last, [&](uint64_t seq) -> absl::StatusOr<bool> {
    absl::StatusOr<std::vector<state::JournalEntry>> entry = store.ReadJournal(seq, 1);
    if (!entry.ok()) return entry.status();
    // A seq the journal lacks (trimmed meanwhile) counts as too old.
    return !entry->empty() && entry->front().seq == seq && entry->front().at_unix_ms >= oldest_kept_ms;
  });
  if (!by_age.ok()) return by_age.status();
  absl::StatusOr<uint64_t> by_size = FirstKept(first, last, [&](uint64_t seq) -> absl::StatusOr<bool> {
    return store.JournalBytes(seq, last) <= retention.max_bytes;
  });
  if (!by_size.ok()) return by_size.status();
  return std::max(*by_age, *by_size);
}

absl::StatusOr<uint64_t> ApplyJournalRetention(state::Store& store, const JournalRetention& retention,
                                               int64_t now_unix_ms) {
  absl::StatusOr<uint64_t> cut = JournalRetentionCut(store, retention, now_unix_ms);
  if (!cut.ok()) return cut.status();
  if (*cut <= store.FirstJournalSeq()) return 0;
  return store.TrimJournal(*cut);
}

}  // namespace geodesic::pathcomp
