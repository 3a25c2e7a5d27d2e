#include "site_agent/service_report_intake.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "entity/service_report_rules.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"

namespace geodesic::site_agent {
namespace {

// One JSON value (an object) as a report: strict (unknown fields refused).
absl::StatusOr<v1::ServiceLatencyReport> ReportOf(const google::protobuf::Value& value, size_t index) {
  const std::string where = absl::StrCat("report ", index, ": ");
  if (value.kind_case() != google::protobuf::Value::kStructValue) {
    return absl::InvalidArgumentError(absl::StrCat(where, "expected a JSON object"));
  }
  std::string json;
  if (!google::protobuf::util::MessageToJsonString(value, &json).ok()) {
    return absl::InvalidArgumentError(absl::StrCat(where, "cannot be read"));
  }
  v1::ServiceLatencyReport report;
  if (auto parsed = google::protobuf::util::JsonStringToMessage(json, &report); !parsed.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(where, parsed.message().as_string()));
  }
  if (report.received_at_unix_ms() != 0) {
    return absl::InvalidArgumentError(absl::StrCat(where, "received_at_unix_ms is set by the agent, not the service"));
  }
  if (auto valid = entity::ValidateServiceReportFields(report); !valid.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(where, valid.message()));
  }
  return report;
}

}  // namespace

absl::StatusOr<std::vector<v1::ServiceLatencyReport>> ParseServiceReports(std::string_view body, int64_t now_unix_ms) {
  if (body.size() > kMaxServiceReportRequestBytes) {
    return absl::InvalidArgumentError(absl::StrCat("a request of ", body.size(), " bytes exceeds ",
                                                   kMaxServiceReportRequestBytes));
  }
  google::protobuf::Value root;
  if (auto parsed = google::protobuf::util::JsonStringToMessage(std::string(body), &root); !parsed.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("the body is not JSON: ", parsed.message().as_string()));
  }
  const google::protobuf::ListValue* list = nullptr;
  if (root.has_list_value()) {
    list = &root.list_value();
  } else if (root.has_struct_value() && root.struct_value().fields().count("reports") > 0) {
    const google::protobuf::Value& reports = root.struct_value().fields().at("reports");
    if (!reports.has_list_value() || root.struct_value().fields_size() != 1) {
      return absl::InvalidArgumentError("expected {\"reports\": [...]} with nothing else beside it");
    }
    list = &reports.list_value();
  } else if (!root.has_struct_value()) {
    return absl::InvalidArgumentError("expected a report object, an array of them or {\"reports\": [...]}");
  }
  std::vector<const google::protobuf::Value*> values;
  if (list == nullptr) {
    values.push_back(&root);
  } else {
    for (const auto& value : list->values()) values.push_back(&value);
  }
  if (values.empty()) return absl::InvalidArgumentError("no reports");
  if (values.size() > kMaxReportsPerRequest) {
    return absl::InvalidArgumentError(
        absl::StrCat(values.size(), " reports in one request; at most ", kMaxReportsPerRequest));
  }
  std::vector<v1::ServiceLatencyReport> reports;
  reports.reserve(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    auto report = ReportOf(*values[i], i);
    if (!report.ok()) return report.status();
    report->set_received_at_unix_ms(now_unix_ms);
    reports.push_back(*std::move(report));
  }
  return reports;
}

void ServiceReportBuffer::Add(const std::vector<v1::ServiceLatencyReport>& reports) {
  std::lock_guard lock(mu_);
  for (const v1::ServiceLatencyReport& report : reports) {
    Key key{report.workload_id(), report.hop()};
    auto it = latest_.find(key);
    if (it == latest_.end() && latest_.size() >= max_reports_) {
      auto oldest = std::min_element(latest_.begin(), latest_.end(), [](const auto& a, const auto& b) {
        return a.second.received_at_unix_ms() < b.second.received_at_unix_ms();
      });
      pending_.erase(oldest->first);
      latest_.erase(oldest);
    }
    latest_[key] = report;
    pending_.insert(key);
  }
}

std::vector<v1::ServiceLatencyReport> ServiceReportBuffer::TakePending() {
  std::lock_guard lock(mu_);
  std::vector<v1::ServiceLatencyReport> reports;
  reports.reserve(pending_.size());
  for (const Key& key : pending_) reports.push_back(latest_.at(key));
  pending_.clear();
  return reports;
}

std::vector<v1::ServiceLatencyReport> ServiceReportBuffer::Latest(int64_t now_unix_ms) const {
  std::lock_guard lock(mu_);
  std::vector<v1::ServiceLatencyReport> reports;
  for (const auto& [key, report] : latest_) {
    if (now_unix_ms - report.received_at_unix_ms() <= kKeepMs) reports.push_back(report);
  }
  return reports;
}

size_t ServiceReportBuffer::size() const {
  std::lock_guard lock(mu_);
  return latest_.size();
}

daemon::HttpResponse AcceptServiceReports(const daemon::HttpRequest& request, int64_t now_unix_ms,
                                          ServiceReportBuffer& buffer, const std::function<void()>& queued) {
  auto reports = ParseServiceReports(request.body, now_unix_ms);
  if (!reports.ok()) return {.status = 400, .body = std::string(reports.status().message()) + "\n"};
  buffer.Add(*reports);
  queued();
  return {.status = 202,
          .content_type = "application/json",
          .body = absl::StrCat("{\"queued\": ", reports->size(), "}\n")};
}

}  // namespace geodesic::site_agent
