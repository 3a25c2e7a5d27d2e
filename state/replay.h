#pragma once
// Rebuilding past states of the model from the journal, for history ("what did
// pathcomp know when it computed plan 41?") and for copying a store.
#include <cstdint>

#include "absl/status/status.h"
#include "state/store.h"

namespace geodesic::state {

// Commits the journal entries 1..up_to_seq of `from` into `into`, in order and
// with their causes, so that `into` then holds the state `from` had right after
// commit `up_to_seq` and its journal repeats those entries with the same seqs
// (but new timestamps). up_to_seq = 0 replays nothing.
//
// The journal keeps a put of a kind journaled by digest (JournaledByDigest:
// plan_history) as its value's size and SHA-256, so such a put replays with
// the value `from` holds now under that id when that is the value put (same
// digest), and is left out when `from` no longer holds it (the history keeps
// only the newest plans: a past state lacks the plans dropped since). Every
// other change replays exactly; replaying up to LastJournalSeq() copies the
// whole store.
//
// Errors: FailedPrecondition when `into` is not empty (LastJournalSeq() != 0)
// or `from`'s journal was trimmed (FirstJournalSeq() > 1: the state before
// its first entry is not in it);
// OutOfRange when up_to_seq > from.LastJournalSeq(); DataLoss when `from`'s
// journal is corrupt or has a gap; FailedPrecondition, naming it, for an entry
// whose every change is a value left out (none that pathcomp commits: a plan
// goes with the name of the current one); any error of reading `from` or committing
// into `into` (which is then left with the entries before the failing one).
// `from` may be written to meanwhile; nothing else may write to `into`.
[[nodiscard]] absl::Status ReplayJournal(const Store& from, uint64_t up_to_seq, Store& into);

}  // namespace geodesic::state
