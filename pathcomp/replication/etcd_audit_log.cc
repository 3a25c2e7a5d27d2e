#include "pathcomp/replication/etcd_audit_log.h"

#include <algorithm>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "daemon/log.h"

namespace geodesic::pathcomp {
namespace {

constexpr uint32_t kDefaultLimit = 100;
constexpr uint32_t kMaxLimit = 10'000;
// Another writer took the seq (a leader that has just lost its lead and not
// yet noticed): read the newest again and retry, a few times at most.
constexpr int kAppendAttempts = 5;

}  // namespace

EtcdAuditLog::EtcdAuditLog(EtcdClient& etcd, std::string prefix, uint64_t depth)
    : etcd_(etcd), prefix_(std::move(prefix)), depth_(depth) {}

std::string EtcdAuditLog::KeyOf(uint64_t seq) const { return prefix_ + absl::StrFormat("%020d", seq); }

absl::StatusOr<uint64_t> EtcdAuditLog::LastSeq() {
  auto newest = etcd_.RangePrefix(prefix_, {.from_key = "", .limit = 1, .newest_first = true, .revision = 0});
  if (!newest.ok()) return newest.status();
  if (newest->kvs.empty()) return 0;
  uint64_t seq = 0;
  if (!absl::SimpleAtoi(newest->kvs[0].key().substr(prefix_.size()), &seq)) {
    return absl::DataLossError(absl::StrCat("etcd key ", newest->kvs[0].key(), " is not an audit record's"));
  }
  return seq;
}

absl::StatusOr<uint64_t> EtcdAuditLog::Append(const LeaderKey& leader, v1::AuditRecord record) {
  std::lock_guard lock(append_mu_);
  absl::Status last_error;
  for (int attempt = 0; attempt < kAppendAttempts; ++attempt) {
    auto last = LastSeq();
    if (!last.ok()) return last.status();
    const uint64_t seq = *last + 1;
    record.set_seq(seq);
    last_error = etcd_.PutAllIfLeaderAndAbsent(leader, KeyOf(seq), {{KeyOf(seq), record.SerializeAsString()}});
    if (last_error.ok()) {
      if (seq > depth_ && seq % 100 == 0) {  // now and then, drop what is past the depth
        if (auto trimmed = etcd_.DeleteRangeIfLeader(leader, prefix_, KeyOf(seq - depth_ + 1)); !trimmed.ok()) {
          daemon::LogWarn("old audit records not trimmed from etcd", {{"error", trimmed.ToString()}});
        }
      }
      return seq;
    }
    if (!absl::IsFailedPrecondition(last_error)) return last_error;
  }
  return last_error;
}

absl::StatusOr<v1::ListAuditLogResponse> EtcdAuditLog::List(const v1::ListAuditLogRequest& request) {
  const uint32_t limit = request.limit() == 0 ? kDefaultLimit : request.limit();
  if (limit > kMaxLimit) return absl::InvalidArgumentError(absl::StrCat("limit must be at most ", kMaxLimit));
  auto last = LastSeq();
  if (!last.ok()) return last.status();
  auto range = request.from_seq() != 0
                   ? etcd_.RangePrefix(prefix_, {.from_key = KeyOf(request.from_seq()), .limit = limit, .newest_first = false, .revision = 0})
                   : etcd_.RangePrefix(prefix_, {.from_key = "", .limit = limit, .newest_first = true, .revision = 0});
  if (!range.ok()) return range.status();
  if (request.from_seq() == 0) std::reverse(range->kvs.begin(), range->kvs.end());
  v1::ListAuditLogResponse response;
  response.set_last_seq(*last);
  for (const auto& kv : range->kvs) {
    if (!response.add_records()->ParseFromString(kv.value())) {
      return absl::DataLossError(absl::StrCat("etcd key ", kv.key(), " is not an audit record"));
    }
  }
  return response;
}

}  // namespace geodesic::pathcomp
