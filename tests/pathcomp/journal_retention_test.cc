// The journal's retention: by age and by size, the later cut wins, never
// the newest entry, and the entities keep what the dropped entries did.
#include "pathcomp/model/journal_retention.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "state/change_set.h"
#include "state/memory_store.h"
#include "tests/support/forwarding_store.h"

namespace geodesic::pathcomp {
namespace {


constexpr int64_t kHourMs = 3'600'000;

// A MemoryStore whose entries were committed an hour apart: entry n at n
// hours (its own clock says now for all of them).
class HourlyStore final : public testing::ForwardingStore {
 public:
  HourlyStore() : ForwardingStore(state::NewMemoryStore()) {}
  absl::StatusOr<std::vector<state::JournalEntry>> ReadJournal(uint64_t from_seq, size_t limit) const override {
    auto entries = ForwardingStore::ReadJournal(from_seq, limit);
    if (entries.ok()) {
      for (state::JournalEntry& entry : *entries) entry.at_unix_ms = static_cast<int64_t>(entry.seq) * kHourMs;
    }
    return entries;
  }
};

// 100 commits of one link each, about 1 KB of journal apiece.
void CommitHundred(state::Store& store) {
  for (int i = 1; i <= 100; ++i) {
    state::ChangeSet changes(absl::StrCat("commit ", i));
    changes.PutRaw(state::Kind::kLink, absl::StrCat("link-", i), std::string(1'000, 'x'));
    ASSERT_EQ(store.Commit(changes).value(), static_cast<uint64_t>(i));
  }
}

TEST(JournalRetentionTest, KeepsWhatIsYoungerThanMaxAge) {
  HourlyStore store;
  CommitHundred(store);
  const JournalRetention retention{.max_age = std::chrono::hours(24), .max_bytes = uint64_t{1} << 30};
  // At 100 h, entries from 76 h on are younger than a day.
  EXPECT_EQ(JournalRetentionCut(store, retention, 100 * kHourMs).value(), 76u);
  EXPECT_EQ(JournalRetentionCut(store, retention, 10 * kHourMs).value(), 1u) << "all young: nothing goes";
  EXPECT_EQ(JournalRetentionCut(store, retention, 1'000 * kHourMs).value(), 100u) << "never the newest";

  EXPECT_EQ(ApplyJournalRetention(store, retention, 100 * kHourMs).value(), 75u);
  EXPECT_EQ(store.FirstJournalSeq(), 76u);
  EXPECT_EQ(store.ListRaw(state::Kind::kLink).value().size(), 100u) << "the entities keep every change";
  EXPECT_EQ(ApplyJournalRetention(store, retention, 100 * kHourMs).value(), 0u) << "already within it";
  EXPECT_EQ(ApplyJournalRetention(store, retention, 1'000 * kHourMs).value(), 24u);
  EXPECT_EQ(store.FirstJournalSeq(), 100u);
  EXPECT_EQ(store.LastJournalSeq(), 100u);
}

TEST(JournalRetentionTest, KeepsTheNewestWithinMaxBytes) {
  HourlyStore store;
  CommitHundred(store);
  const uint64_t one = store.JournalBytes(100, 100);
  ASSERT_GT(one, 1'000u);
  const JournalRetention by_size{.max_age = std::chrono::hours(10'000), .max_bytes = 10 * one};
  EXPECT_EQ(JournalRetentionCut(store, by_size, 100 * kHourMs).value(), 91u);  // the newest ten fit
  EXPECT_EQ(JournalRetentionCut(store, {.max_bytes = one / 2}, 100 * kHourMs).value(), 100u) << "never the newest";
  // Both bounds: the later cut wins.
  const JournalRetention both{.max_age = std::chrono::hours(5), .max_bytes = 10 * one};
  EXPECT_EQ(JournalRetentionCut(store, both, 100 * kHourMs).value(), 95u);
  const JournalRetention both_size{.max_age = std::chrono::hours(50), .max_bytes = 10 * one};
  EXPECT_EQ(JournalRetentionCut(store, both_size, 100 * kHourMs).value(), 91u);
  EXPECT_EQ(ApplyJournalRetention(store, by_size, 100 * kHourMs).value(), 90u);
  EXPECT_LE(store.JournalBytes(store.FirstJournalSeq(), store.LastJournalSeq()), 10 * one);
}

TEST(JournalRetentionTest, AnEmptyOrOneEntryJournalHasNothingToDrop) {
  HourlyStore store;
  EXPECT_EQ(JournalRetentionCut(store, {}, 0).value(), 1u);
  EXPECT_EQ(ApplyJournalRetention(store, {.max_bytes = 0}, 1'000 * kHourMs).value(), 0u);
  state::ChangeSet one("the only commit");
  one.PutRaw(state::Kind::kLink, "l", "x");
  ASSERT_EQ(store.Commit(one).value(), 1u);
  EXPECT_EQ(ApplyJournalRetention(store, {.max_bytes = 0}, 1'000 * kHourMs).value(), 0u);
  EXPECT_EQ(store.ReadJournal(1, 10).value().size(), 1u);
}

}  // namespace
}  // namespace geodesic::pathcomp
