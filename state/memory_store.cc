#include "state/memory_store.h"

#include <algorithm>
#include <cstddef>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "state/internal/journal_codec.h"

namespace geodesic::state {
namespace {

class MemoryStore final : public Store {
 public:
  absl::StatusOr<uint64_t> Commit(const ChangeSet& changes) override {
    if (absl::Status valid = changes.Validate(); !valid.ok()) return valid;
    std::lock_guard lock(mu_);
    for (const Change& change : changes.changes()) {
      auto& entities = entities_[change.kind];
      if (change.value.has_value()) {
        entities.insert_or_assign(change.id, *change.value);
      } else if (auto it = entities.find(change.id); it != entities.end()) {
        entities.erase(it);
      }
    }
    JournalEntry& entry = journal_.emplace_back();
    entry.seq = last_seq_ + 1;
    entry.at_unix_ms = absl::ToUnixMillis(absl::Now());
    entry.cause = changes.cause();
    entry.changes.reserve(changes.changes().size());
    for (const Change& change : changes.changes()) entry.changes.push_back(internal::JournaledChange(change));
    entry_bytes_.push_back(internal::JournalValueSize(entry.cause, entry.changes));
    last_seq_ = entry.seq;
    return entry.seq;
  }
  absl::StatusOr<uint64_t> CommitUnsynced(const ChangeSet& changes) override { return Commit(changes); }
  absl::Status Sync() override { return absl::OkStatus(); }

  absl::StatusOr<std::string> GetRaw(Kind kind, std::string_view id) const override {
    std::lock_guard lock(mu_);
    auto kind_it = entities_.find(kind);
    if (kind_it != entities_.end()) {
      auto it = kind_it->second.find(id);
      if (it != kind_it->second.end()) return it->second;
    }
    return absl::NotFoundError(absl::StrCat(EntityKey(kind, id), " not found"));
  }

  absl::StatusOr<std::vector<std::pair<std::string, std::string>>> ListRaw(Kind kind) const override {
    std::lock_guard lock(mu_);
    std::vector<std::pair<std::string, std::string>> out;
    auto kind_it = entities_.find(kind);
    if (kind_it == entities_.end()) return out;
    out.reserve(kind_it->second.size());
    for (const auto& [id, bytes] : kind_it->second) out.emplace_back(id, bytes);
    return out;
  }

  absl::StatusOr<std::vector<JournalEntry>> ReadJournal(uint64_t from_seq, size_t limit) const override {
    std::lock_guard lock(mu_);
    std::vector<JournalEntry> out;
    for (uint64_t seq = std::max(from_seq, first_seq_); seq <= last_seq_ && out.size() < limit; ++seq) {
      out.push_back(journal_[seq - first_seq_]);
    }
    return out;
  }

  uint64_t LastJournalSeq() const override {
    std::lock_guard lock(mu_);
    return last_seq_;
  }

  uint64_t FirstJournalSeq() const override {
    std::lock_guard lock(mu_);
    return first_seq_;
  }

  absl::StatusOr<uint64_t> TrimJournal(uint64_t before_seq) override {
    std::lock_guard lock(mu_);
    const uint64_t end = std::min(before_seq, last_seq_);
    if (end <= first_seq_) return 0;
    const uint64_t dropped = end - first_seq_;
    journal_.erase(journal_.begin(), journal_.begin() + static_cast<std::ptrdiff_t>(dropped));
    entry_bytes_.erase(entry_bytes_.begin(), entry_bytes_.begin() + static_cast<std::ptrdiff_t>(dropped));
    first_seq_ = end;
    return dropped;
  }

  uint64_t JournalBytes(uint64_t from_seq, uint64_t to_seq) const override {
    std::lock_guard lock(mu_);
    uint64_t bytes = 0;
    for (uint64_t seq = std::max(from_seq, first_seq_); seq <= std::min(to_seq, last_seq_); ++seq) {
      bytes += entry_bytes_[seq - first_seq_];
    }
    return bytes;
  }

 private:
  // Guards entities_ and journal_. A std::mutex rather than absl::Mutex so
  // ThreadSanitizer sees it: Debian's Abseil is not built with -fsanitize=thread,
  // and TSan reports every access under an absl::Mutex it cannot see as a race.
  mutable std::mutex mu_;
  // Per kind, id -> bytes; std::less<> so lookups take a string_view.
  std::map<Kind, std::map<std::string, std::string, std::less<>>> entities_;  // guarded by mu_
  // The entries kept, seqs first_seq_..last_seq_, and each one's encoded size.
  std::deque<JournalEntry> journal_;  // guarded by mu_
  std::deque<uint64_t> entry_bytes_;  // guarded by mu_
  uint64_t first_seq_ = 1;            // guarded by mu_
  uint64_t last_seq_ = 0;             // guarded by mu_
};

}  // namespace

StorePtr NewMemoryStore() { return std::make_unique<MemoryStore>(); }

}  // namespace geodesic::state
