#pragma once
// How much of its store's journal pathcomp keeps. Every commit is journaled,
// link measurements at every flush (telemetry.measurement_flush_ms) among
// them: a backbone of thousands of links adds gigabytes a day, so a journal
// kept whole fills the disk. Entries older than max_age go, and the oldest
// while the rest take more than max_bytes; never the newest
// (Store::TrimJournal). The entities keep what the dropped entries did; the
// audit log (audit_log.h) and the plan history are kept by their own bounds.
// Part of the Model (model.h), which applies it. Pure over the store.
#include <chrono>
#include <cstdint>

#include "absl/status/statusor.h"
#include "state/store.h"

namespace geodesic::pathcomp {

struct JournalRetention {
  std::chrono::hours max_age{24 * 7};
  uint64_t max_bytes = uint64_t{4} << 30;  // as the store estimates them (Store::JournalBytes)
  std::chrono::seconds check_interval{60};  // how often pathcomp applies it
};

// The seq `store`'s journal is trimmed to under `retention` at `now_unix_ms`
// (entries before it go; FirstJournalSeq() when none need to): the later of
// the first entry committed at or after now - max_age and the first from
// which the rest take at most max_bytes, and at most LastJournalSeq(). Both
// found by bisection (a few entries read, a few size estimates): entries'
// times are their commits' wall clock, taken as ascending.
[[nodiscard]] absl::StatusOr<uint64_t> JournalRetentionCut(const state::Store& store,
                                                           const JournalRetention& retention, int64_t now_unix_ms);

// Trims `store`'s journal to JournalRetentionCut; returns how many entries went.
[[nodiscard]] absl::StatusOr<uint64_t> ApplyJournalRetention(state::Store& store, const JournalRetention& retention,
                                                             int64_t now_unix_ms);

}  // namespace geodesic::pathcomp
