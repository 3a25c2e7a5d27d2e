#include "pathcomp/model/service_report_book.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace geodesic::pathcomp {

void ServiceReportBook::Put(const std::string& facility_id, const v1::ServiceLatencyReport& report) {
  Key key{report.workload_id(), report.hop(), facility_id};
  auto it = reports_.find(key);
  if (it != reports_.end()) {
    if (it->second.received_at_unix_ms() <= report.received_at_unix_ms()) it->second = report;
    return;
  }
  if (reports_.size() >= kMaxReports) {
    auto oldest = std::min_element(reports_.begin(), reports_.end(), [](const auto& a, const auto& b) {
      return a.second.received_at_unix_ms() < b.second.received_at_unix_ms();
    });
    if (oldest->second.received_at_unix_ms() > report.received_at_unix_ms()) return;  // older than all kept
    reports_.erase(oldest);
  }
  reports_.emplace(std::move(key), report);
}

std::vector<HopReport> ServiceReportBook::ForChain(const std::string& workload_id) const {
  std::vector<HopReport> found;
  for (auto it = reports_.lower_bound(Key{workload_id, 0, ""});
       it != reports_.end() && std::get<0>(it->first) == workload_id; ++it) {
    found.push_back({.replica_facility_id = std::get<2>(it->first), .report = it->second});
  }
  return found;
}

std::vector<HopReport> ServiceReportBook::All() const {
  std::vector<HopReport> all;
  all.reserve(reports_.size());
  for (const auto& [key, report] : reports_) all.push_back({.replica_facility_id = std::get<2>(key), .report = report});
  return all;
}

absl::Status CheckServiceReportTarget(const Entities& entities, const std::string& facility_id,
                                      const v1::ServiceLatencyReport& report) {
  const std::string what = absl::StrCat("service report for workload ", report.workload_id(), " hop ", report.hop(),
                                        " from ", facility_id);
  auto workload = entities.workloads.find(report.workload_id());
  if (workload == entities.workloads.end()) return absl::NotFoundError(absl::StrCat(what, ": no such workload"));
  if (!workload->second.has_chain()) {
    return absl::FailedPreconditionError(absl::StrCat(what, ": the workload is not an agent chain"));
  }
  const v1::AgentChain& chain = workload->second.chain();
  if (report.hop() >= static_cast<uint32_t>(chain.service_ids_size())) {
    return absl::FailedPreconditionError(
        absl::StrCat(what, ": the chain makes ", chain.service_ids_size(), " calls (hops 0..",
                     chain.service_ids_size() - 1, ")"));
  }
  const std::string& called = chain.service_ids(static_cast<int>(report.hop()));
  if (report.service_id() != called) {
    return absl::FailedPreconditionError(
        absl::StrCat(what, ": the chain calls service ", called, " at this hop, not ", report.service_id()));
  }
  auto service = entities.services.find(called);
  const bool hosted = service != entities.services.end() &&
                      std::find(service->second.replica_facility_ids().begin(),
                                service->second.replica_facility_ids().end(),
                                facility_id) != service->second.replica_facility_ids().end();
  if (!hosted) {
    return absl::FailedPreconditionError(
        absl::StrCat(what, ": facility ", facility_id, " hosts no replica of service ", called));
  }
  return absl::OkStatus();
}

}  // namespace geodesic::pathcomp
