#pragma once
// Replicated pathcomp's audit log: one history in etcd, so `tectl audit-log`
// shows the same records whatever replica answers and a new leader goes on
// where the last one stopped. Chosen over merging every replica's own log on
// read: a merge needs every replica up and reachable from the one that
// answers, and would still show two numberings; etcd already orders what the
// leaders write, fenced by their election keys.
//
//   <prefix>/<seq, 20 digits>   v1::AuditRecord
//
// The leader appends (a create-only write fenced by its election key: a
// replica that lost its lead cannot add to the history); every replica lists.
// A follower's own refusals ("send changes to the leader") are not decisions
// about the network: they go to its log only. The newest `depth` records are
// kept. Thread-safe.
#include <cstdint>
#include <mutex>
#include <string>

#include "absl/status/statusor.h"
#include "geodesic/v1/operator.pb.h"
#include "pathcomp/replication/etcd_client.h"

namespace geodesic::pathcomp {

class EtcdAuditLog {
 public:
  // `prefix` like "geodesic/audit/".
  EtcdAuditLog(EtcdClient& etcd, std::string prefix, uint64_t depth);

  // Stores `record` with the next seq; returns that seq. FailedPrecondition
  // when `leader` no longer leads.
  [[nodiscard]] absl::StatusOr<uint64_t> Append(const LeaderKey& leader, v1::AuditRecord record);
  // As AuditLog::List: from request.from_seq, or the newest `limit` (default
  // 100, at most 10,000) when from_seq is 0.
  [[nodiscard]] absl::StatusOr<v1::ListAuditLogResponse> List(const v1::ListAuditLogRequest& request);

 private:
  absl::StatusOr<uint64_t> LastSeq();
  std::string KeyOf(uint64_t seq) const;

  EtcdClient& etcd_;
  const std::string prefix_;
  const uint64_t depth_;
  std::mutex append_mu_;  // one append at a time from this replica
};

}  // namespace geodesic::pathcomp
