#pragma once
// The service latency reports pathcomp has received (telemetry.proto,
// ServiceLatencyReport): the latest per (chain, hop, replica facility).
// Perishable: kept in memory only, so a restarted pathcomp knows none until
// the services report again (within their window); the straggler analysis
// (pathcomp/solver/chain_stragglers.h) ignores reports older than its limit.
// Thread-compatible (the model guards it with its lock).
#include <cstddef>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "absl/status/status.h"
#include "geodesic/v1/telemetry.pb.h"
#include "pathcomp/model/entities.h"
#include "pathcomp/solver/chain_stragglers.h"

namespace geodesic::pathcomp {

class ServiceReportBook {
 public:
  // At most this many reports are kept; past it the oldest (by received_at)
  // make room. Valid reports name an existing (chain, hop, replica), so the
  // bound only matters as workloads come and go.
  static constexpr size_t kMaxReports = 100'000;

  // Keeps `report` from the agent of `facility_id` unless the book holds a
  // newer one (received later) for the same (chain, hop, facility).
  void Put(const std::string& facility_id, const v1::ServiceLatencyReport& report);

  // The reports of one chain (every hop and replica).
  std::vector<HopReport> ForChain(const std::string& workload_id) const;
  // Every report held, by chain, hop, facility.
  std::vector<HopReport> All() const;
  size_t size() const { return reports_.size(); }

 private:
  using Key = std::tuple<std::string, uint32_t, std::string>;  // workload, hop, facility
  std::map<Key, v1::ServiceLatencyReport> reports_;
};

// Whether `report`, relayed by the agent of `facility_id`, is about a hop the
// model has: the workload exists and is a chain, the hop is one of its calls,
// the service is the one that call makes, and `facility_id` hosts a replica
// of it. OK, or NotFound / FailedPrecondition saying which does not hold.
// (The report's values are checked by entity/service_report_rules.h.)
[[nodiscard]] absl::Status CheckServiceReportTarget(const Entities& entities, const std::string& facility_id,
                                                    const v1::ServiceLatencyReport& report);

}  // namespace geodesic::pathcomp
