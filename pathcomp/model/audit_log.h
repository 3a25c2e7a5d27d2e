#pragma once
// The operators' audit log: who asked for which change, when, and the result,
// numbered by seq and kept in the store (kind audit), the newest kDepth
// records. Part of the Model (model.h), which forwards to it.
// Thread-safe: every method may be called from any thread.
#include <cstdint>
#include <map>
#include <mutex>

#include "absl/status/statusor.h"
#include "geodesic/v1/operator.pb.h"
#include "state/store.h"

namespace geodesic::pathcomp {

class AuditLog {
 public:
  static constexpr size_t kDepth = 10'000;

  // `store` must outlive this; nothing is read until Load.
  explicit AuditLog(state::Store& store) : store_(store) {}

  // Reads the kept records from the store.
  [[nodiscard]] absl::Status Load();

  // Stores `record` with the next seq (dropping the oldest beyond kDepth);
  // returns that seq. On a store error nothing changes.
  [[nodiscard]] absl::StatusOr<uint64_t> Append(v1::AuditRecord record);
  // Records from request.from_seq, or the newest `limit` (default 100, at most
  // 10,000: InvalidArgument above) when from_seq is 0.
  [[nodiscard]] absl::StatusOr<v1::ListAuditLogResponse> List(const v1::ListAuditLogRequest& request) const;

 private:
  state::Store& store_;
  mutable std::mutex mu_;
  std::map<uint64_t, v1::AuditRecord> records_;  // by seq
  uint64_t last_seq_ = 0;
};

}  // namespace geodesic::pathcomp
