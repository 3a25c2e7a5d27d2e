#include "pathcomp/model/audit_log.h"

#include "absl/strings/str_cat.h"
#include "pathcomp/model/entity_key.h"
#include "state/change_set.h"
#include "state/typed_access.h"

namespace geodesic::pathcomp {

using state::Kind;

absl::Status AuditLog::Load() {
  std::lock_guard lock(mu_);
  auto audit = state::List<v1::AuditRecord>(store_, Kind::kAudit);
  if (!audit.ok()) return audit.status();
  for (v1::AuditRecord& record : *audit) {
    last_seq_ = std::max(last_seq_, record.seq());
    records_[record.seq()] = std::move(record);
  }
  return absl::OkStatus();
}

absl::StatusOr<uint64_t> AuditLog::Append(v1::AuditRecord record) {
  std::lock_guard lock(mu_);
  record.set_seq(last_seq_ + 1);
  state::ChangeSet changes(absl::StrCat("audit ", record.seq(), ": ", record.action(), " by ", record.identity(),
                                        ": ", record.ok() ? "ok" : "refused"));
  changes.Put(Kind::kAudit, PaddedId(record.seq()), record);
  if (records_.size() >= kDepth) changes.Delete(Kind::kAudit, PaddedId(records_.begin()->first));
  if (auto committed = store_.Commit(changes); !committed.ok()) return committed.status();
  if (records_.size() >= kDepth) records_.erase(records_.begin());
  last_seq_ = record.seq();
  records_[record.seq()] = std::move(record);
  return last_seq_;
}

absl::StatusOr<v1::ListAuditLogResponse> AuditLog::List(const v1::ListAuditLogRequest& request) const {
  constexpr uint32_t kDefaultLimit = 100;
  constexpr uint32_t kMaxLimit = 10'000;
  const uint32_t limit = request.limit() == 0 ? kDefaultLimit : request.limit();
  if (limit > kMaxLimit) return absl::InvalidArgumentError(absl::StrCat("limit must be at most ", kMaxLimit));
  std::lock_guard lock(mu_);
  v1::ListAuditLogResponse response;
  response.set_last_seq(last_seq_);
  const uint64_t from = request.from_seq() != 0 ? request.from_seq()
                                                : (last_seq_ > limit ? last_seq_ - limit + 1 : 1);
  for (auto it = records_.lower_bound(from); it != records_.end() && response.records_size() < static_cast<int>(limit);
       ++it) {
    *response.add_records() = it->second;
  }
  return response;
}

}  // namespace geodesic::pathcomp
