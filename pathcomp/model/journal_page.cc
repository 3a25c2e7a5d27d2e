#include "pathcomp/model/journal_page.h"

#include "absl/strings/str_cat.h"

namespace geodesic::pathcomp {

absl::StatusOr<v1::ListJournalResponse> JournalPage(const state::Store& store, const v1::ListJournalRequest& request) {
  constexpr uint32_t kDefaultLimit = 100;
  constexpr uint32_t kMaxLimit = 10'000;
  const uint32_t limit = request.limit() == 0 ? kDefaultLimit : request.limit();
  if (limit > kMaxLimit) {
    return absl::InvalidArgumentError(absl::StrCat("limit must be at most ", kMaxLimit));
  }
  const uint64_t last = store.LastJournalSeq();
  const uint64_t from = request.from_seq() != 0 ? request.from_seq() : (last > limit ? last - limit + 1 : 1);
  auto entries = store.ReadJournal(from, limit);
  if (!entries.ok()) return entries.status();
  v1::ListJournalResponse response;
  response.set_last_seq(last);
  response.set_first_seq(store.FirstJournalSeq());
  for (const auto& entry : *entries) {
    auto* record = response.add_entries();
    record->set_seq(entry.seq);
    record->set_at_unix_ms(entry.at_unix_ms);
    record->set_cause(entry.cause);
    for (const auto& change : entry.changes) {
      auto* out = record->add_changes();
      out->set_kind(std::string(state::KindName(change.kind)));
      out->set_id(change.id);
      out->set_deleted(change.deleted());
    }
  }
  return response;
}

}  // namespace geodesic::pathcomp
