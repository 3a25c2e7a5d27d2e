#pragma once
// Test-only: a Store that hands every call to another, for tests that watch
// or bend a few calls (count syncs, fail them, age the journal) and leave
// the rest as the real store does them.
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "state/store.h"

namespace geodesic::testing {

class ForwardingStore : public state::Store {
 public:
  explicit ForwardingStore(std::shared_ptr<state::Store> inner) : inner_(std::move(inner)) {}

  absl::StatusOr<uint64_t> Commit(const state::ChangeSet& changes) override { return inner_->Commit(changes); }
  absl::StatusOr<uint64_t> CommitUnsynced(const state::ChangeSet& changes) override {
    return inner_->CommitUnsynced(changes);
  }
  absl::Status Sync() override { return inner_->Sync(); }
  absl::StatusOr<std::string> GetRaw(state::Kind kind, std::string_view id) const override {
    return inner_->GetRaw(kind, id);
  }
  absl::StatusOr<std::vector<std::pair<std::string, std::string>>> ListRaw(state::Kind kind) const override {
    return inner_->ListRaw(kind);
  }
  absl::StatusOr<std::vector<state::JournalEntry>> ReadJournal(uint64_t from_seq, size_t limit) const override {
    return inner_->ReadJournal(from_seq, limit);
  }
  uint64_t LastJournalSeq() const override { return inner_->LastJournalSeq(); }
  uint64_t FirstJournalSeq() const override { return inner_->FirstJournalSeq(); }
  absl::StatusOr<uint64_t> TrimJournal(uint64_t before_seq) override { return inner_->TrimJournal(before_seq); }
  uint64_t JournalBytes(uint64_t from_seq, uint64_t to_seq) const override {
    return inner_->JournalBytes(from_seq, to_seq);
  }

 private:
  const std::shared_ptr<state::Store> inner_;
};

}  // namespace geodesic::testing
